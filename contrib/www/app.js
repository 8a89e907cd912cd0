// skeld's preview page: a thin client. The browser runs no SkelForm code; every frame is a PNG
// that skeld renders (GET .../render.png?anim=A&frame=F&from=0&warmup=30&size=WxH&style=S),
// preloaded as an Image and drawn on a timer at the animation's fps.
//
// URL parameters open an armature and play it without a click:
//   /?id=<64 hex>&anim=Walk&size=128x128&style=Red   an armature in skeld's cache
//   /?file=robot.skf&anim=Walk                        a file under skeld's --root
// <body data-frames-played="N"> counts the frames the timer has shown (tests read it).
// Loaded as a module: strict, and its names stay out of the global scope.

const WARMUP = 30; // constructs at rest before frame 0, as SkelForm's web player runs
const MAX_IN_FLIGHT = 4; // frame requests at once: a long animation must not flood skeld
const MAX_RETRIES = 5; // per frame, while skeld answers 429 (busy) or 503
const RETRY_MS = 1000; // skeld's Retry-After

const $ = (id) => document.getElementById(id);
const ui = {
  form: $('controls'), armature: $('armature'), refresh: $('refresh'), upload: $('upload'),
  playback: $('playback'), anim: $('anim'), style: $('style'), size: $('size'),
  play: $('play'), frame: $('frame'), frameText: $('frame-text'), sheet: $('sheet'),
  view: $('view'), status: $('status'), tokenRow: $('token-row'), token: $('token'),
  useToken: $('use-token'),
};

// What is on show. Opening an armature or changing the animation, style or size starts a new
// generation; answers to an older generation's requests are ignored.
const player = {
  base: '', // '/v1/armatures/{id}' or '/v1/files/{path}'
  info: null, // that armature's `skeld info` JSON
  anim: null, // the chosen entry of info.animations (null: the rest pose)
  params: null, // the render parameters every frame of this generation shares
  frames: [], // per frame: undefined (not asked for yet) or {img, ready}
  inFlight: 0,
  current: 0, // the frame on show, or to show next
  shown: false, // whether `current` is drawn
  playing: false,
  held: false, // playing when a bad size stopped it: the next good size plays again
  summary: '', // what the status line says of this generation while all is well
  troubled: false, // the status line says a frame failed: the next to arrive says the summary
  // a frame gave up and stopped playing: the status keeps its error (frames still in flight
  // arrive, drawn, but say nothing) until the user plays again or makes a new choice
  halted: false,
  timer: 0,
  generation: 0,
  // counts the starts of playing (Play, or a restart that plays): a frame that gives up stops
  // only the playing it was asked for in, not one the user started since (Play again)
  playStarts: 0,
  played: 0, // frames the timer has drawn since the page loaded
};
// id -> what was uploaded from this page: {file, bones, animations}, the File and its entry of
// the list (a count of bones, the animations' names). Its name labels the list, it is listed
// where skeld's list lacks it, and its bytes go up again where skeld lost them (the node
// restarted, or a drain moved the id to another)
const uploads = new Map();
const resends = new Map(); // base -> the upload again under way, which the frames share

function say(text) {
  ui.status.textContent = text;
}

// "1 frame", "2 frames"
function count(n, noun) {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

// A query string; values percent-encoded (a space as %20, never '+'), empty ones left out.
function query(params) {
  return Object.entries(params)
    .filter(([, v]) => v !== '' && v !== null && v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join('&');
}

// fetch() and its JSON body. skeld's errors are {"error": .., "message": ..}. A 401 (skeld runs
// with --auth-token) shows the token field.
async function fetchJSON(url, options) {
  const res = await fetch(url, options);
  const body = await res.json().catch(() => null);
  if (res.status === 401) {
    ui.tokenRow.hidden = false;
    throw new Error('this skeld needs its --auth-token: enter it in the Token field');
  }
  if (!res.ok) {
    throw new Error(body && body.message ? body.message : `${res.status} ${res.statusText}`);
  }
  return body;
}

// A name from the file, isolated (U+2068 .. U+2069) so that a right-to-left one cannot reorder
// the text around it.
function iso(name) {
  return `\u2068${name}\u2069`;
}

// How to name an animation or style of `list` to skeld: by name, unless the name would not come
// back to this item (empty, with a comma, past the 1024 bytes a request holds, an earlier
// item's too, or of the "#N" form, which skeld reads as an index); then as "#N", its place in
// the list (not its id: a style's is the file's own), which skeld never reads as a name.
function nameFor(item, list) {
  const usable = item.name !== '' && !item.name.includes(',') && !/^#[0-9]+$/.test(item.name) &&
                 new TextEncoder().encode(item.name).length <= 1024 &&
                 list.find((i) => i.name === item.name) === item;
  return usable ? item.name : `#${list.indexOf(item)}`;
}

// The slider at frame f, with its text, which a screen reader reads as the slider's value.
function showFrameNumber(f) {
  const text = `${f} / ${frameCount() - 1}`;
  ui.frame.value = String(f);
  ui.frame.setAttribute('aria-valuetext', `frame ${text}`);
  ui.frameText.textContent = text;
}

function frameCount() {
  return player.anim ? Math.max(1, player.anim.frames) : 1;
}

// ---- the list of armatures and uploads ------------------------------------------------------

// Whether the armature at base ("/v1/armatures/{id}") is still cached: only a 404 says not.
async function stillCached(base) {
  try {
    // not from the browser's cache: the armature's answers are immutable, and a cached GET
    // would answer for it long after skeld dropped it
    return (await fetch(base, {method: 'HEAD', cache: 'no-store'})).status !== 404;
  } catch (e) {
    return true; // unreachable is not gone: the next request will say what is wrong
  }
}

// Refills the list with what skeld has cached (keeping a file: entry) and selects `choice`.
// `resent`: the armature on show was missing and has been sent again.
async function listArmatures(choice, quiet, resent = false) {
  let list;
  try {
    list = (await fetchJSON('/v1/armatures')).armatures;
  } catch (e) {
    say(`Cannot list the cached armatures: ${e.message}`);
    return;
  }
  for (const opt of [...ui.armature.options]) {
    if (opt.value.startsWith('id:')) opt.remove();
  }
  // This page's uploads that the list lacks are listed too: behind a cluster's HAProxy the list
  // is one node's cache, and an upload lives on the node its id hashes to (without them the
  // list offered neither the file on show nor one uploaded before it); one that skeld lost is
  // sent again when it is opened.
  const mine = [...uploads].filter(([id]) => !list.some((a) => a.id === id))
    .map(([id, up]) => ({id, bones: up.bones, animations: up.animations}));
  for (const a of [...list, ...mine]) {
    // The file it was loaded from (by path, or uploaded from this page), with the start of its
    // id: two versions of one file are two entries.
    const up = uploads.get(a.id);
    const file = up ? up.file.name : a.file;
    const id = `${a.id.slice(0, file ? 8 : 12)}\u2026`;
    const name = file ? `${file} (${id})` : id;
    const label = `${iso(name)}: ${count(a.bones, 'bone')}; ` +
                  `${a.animations.map(iso).join(', ') || 'no animations'}`;
    ui.armature.add(new Option(label, `id:${a.id}`));
  }
  if (choice) ui.armature.value = choice;
  // The armature on show was dropped from skeld's cache (DELETE, eviction): say so, not play on.
  // The list is one node's cache (behind a cluster's HAProxy, whichever node answered): an
  // armature missing from it is asked for by its id, which reaches the node that owns it.
  if (player.base.startsWith('/v1/armatures/') &&
      !list.some((a) => `/v1/armatures/${a.id}` === player.base) &&
      !(await stillCached(player.base))) {
    // uploaded from this page, which holds its bytes: the node lost it, not the user
    const up = uploadAt(player.base);
    let why = 'The armature on show is no longer cached: choose another, or upload it again.';
    if (up && !resent) {
      const name = iso(up.file.name);
      say(`skeld lost ${name}: sending it again\u2026`);
      let failure = null;
      try {
        await sendAgain(player.base);
      } catch (e) {
        failure = e;
      }
      if (!failure) {
        say(`skeld lost ${name}: sent it again.`);
        return listArmatures(choice, quiet, true);
      }
      why = `skeld lost ${name}, and sending it again failed: ${failure.message}`;
    }
    stop();
    player.generation++;
    player.base = '';
    ui.playback.disabled = true;
    ui.armature.value = '';
    blank('No armature chosen');
    say(why);
    return;
  }
  if (!quiet) {
    say(list.length || mine.length ? 'Choose an armature.' : 'Nothing is cached: upload a .skf.');
  }
}

// Clears the picture and says what it shows (for screen readers), and takes the spritesheet
// link away (a link is no form control: the disabled fieldset leaves it working).
function blank(label) {
  const ctx = ui.view.getContext('2d');
  ctx.clearRect(0, 0, ui.view.width, ui.view.height);
  ui.view.setAttribute('aria-label', label);
  ui.sheet.removeAttribute('href');
  ui.sheet.textContent = '';
}

// SHA-256 (FIPS 180-4) in plain JavaScript, for a page that is not a secure context: there the
// browser offers no crypto.subtle, and without the id the page could only POST, which a
// cluster's HAProxy refuses (it routes an upload by the id in its URL).
const SHA256_K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

// The SHA-256 of bytes (a Uint8Array), in hex.
function sha256Bytes(bytes) {
  const n = bytes.length;
  // the message, a 1 bit, zeros, and its length in bits (64 bits, big-endian): whole blocks
  const padded = new Uint8Array(Math.ceil((n + 9) / 64) * 64);
  padded.set(bytes);
  padded[n] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(n / 0x20000000)); // n * 8 / 2^32
  view.setUint32(padded.length - 4, (n * 8) >>> 0);
  const h = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                             0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const w = new Uint32Array(64); // a Uint32Array wraps its sums modulo 2^32
  const ror = (x, k) => (x >>> k) | (x << (32 - k));
  for (let at = 0; at < padded.length; at += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(at + 4 * i);
    for (let i = 16; i < 64; i++) {
      const s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    let [a, b, c, d, e, f, g, k] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) +
                  SHA256_K[i] + w[i]) | 0;
      const t2 = ((ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      k = g; g = f; f = e; e = (d + t1) | 0;
      d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += k;
  }
  return [...h].map((x) => x.toString(16).padStart(8, '0')).join('');
}

// The file's SHA-256 in hex: the browser's digest where it offers one (crypto.subtle exists only
// in secure contexts: https, or http on localhost), else the one above.
async function sha256Hex(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (!globalThis.crypto || !crypto.subtle) return sha256Bytes(bytes);
  const digest = await crypto.subtle.digest('SHA-256', bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

// Sends the file to skeld and returns its id. The body is the file's bytes, PUT by their
// SHA-256, which a cluster's HAProxy routes to the node that owns the id (it refuses a POST,
// which names no node); skeld answers 201 with the id.
async function send(file) {
  const id = await sha256Hex(file);
  const summary = await fetchJSON(`/v1/armatures/${id}`, {
    method: 'PUT', body: file, headers: {'Content-Type': 'application/octet-stream'},
  });
  uploads.set(summary.id, {file, bones: summary.bones.length,
                           animations: summary.animations.map((a) => a.name)});
  return summary.id;
}

async function upload() {
  const file = ui.upload.files[0];
  if (!file) return;
  say(`Uploading ${iso(file.name)}\u2026`);
  try {
    const id = await send(file);
    await listArmatures(`id:${id}`, true);
    await open(`id:${id}`, {});
  } catch (e) {
    say(`Upload of ${iso(file.name)} failed: ${e.message}`);
  }
  ui.upload.value = '';
}

// What was uploaded from this page ({file, ..}) that base ("/v1/armatures/{id}") names, if any.
function uploadAt(base) {
  return base.startsWith('/v1/armatures/') ? uploads.get(base.slice('/v1/armatures/'.length))
                                           : undefined;
}

// Sends again the file uploaded from this page that `base` names, which skeld lost (the node
// restarted, or a drain moved the id to another node); false if the page holds no such file.
async function sendAgain(base) {
  const up = uploadAt(base);
  if (!up) return false;
  if (!resends.has(base)) { // the frames that found it missing together: one upload
    resends.set(base, send(up.file).finally(() => resends.delete(base)));
  }
  await resends.get(base);
  return true;
}

// ---- opening an armature ------------------------------------------------------------------

// Fills a <select> with items ({id, name, ..}) and selects the one `wanted` names (by name or
// index). Returns false if `wanted` was given and matched nothing.
function fillSelect(select, items, label, wanted, first) {
  select.replaceChildren();
  if (first) select.add(new Option(first, ''));
  for (const it of items) select.add(new Option(label(it), String(it.id)));
  if (!wanted) return true;
  // as skeld reads a name: "#N" is the Nth item, else a name, else a decimal place in the list
  const place = (n) => (/^[0-9]+$/.test(n) ? items[Number(n)] : undefined);
  const hit = /^#[0-9]+$/.test(wanted) ? place(wanted.slice(1))
                                       : items.find((it) => it.name === wanted) || place(wanted);
  if (hit) select.value = String(hit.id);
  return Boolean(hit);
}

// Opens "id:HEX" or "file:PATH" and plays it; `wanted` holds the URL's anim and style.
async function open(choice, wanted) {
  stop();
  player.generation++;
  player.base = '';
  ui.playback.disabled = true;
  if (!choice) {
    blank('No armature chosen');
    say('Choose an armature.');
    return;
  }
  const colon = choice.indexOf(':');
  const kind = choice.slice(0, colon), what = choice.slice(colon + 1);
  const base = kind === 'id' ? `/v1/armatures/${encodeURIComponent(what)}`
                             : `/v1/files/${what.split('/').map(encodeURIComponent).join('/')}`;
  const generation = player.generation;
  // an upload of this page by its file's name, not its id
  const up = uploadAt(base), name = iso(up ? up.file.name : what);
  const notes = [];
  say(`Opening ${name}\u2026`);
  let info;
  try {
    info = await fetchJSON(base).catch(async (e) => {
      // an upload of this page that skeld lost (the list offers the page's uploads): sent
      // again, then opened; the browser's cache answered this only while it held the answer
      if (!up || (await stillCached(base))) throw e;
      if (generation === player.generation) say(`skeld lost ${name}: sending it again\u2026`);
      await sendAgain(base);
      notes.push(`skeld lost ${name}: sent it again`);
      return fetchJSON(base);
    });
  } catch (e) {
    if (generation === player.generation) {
      blank(`Cannot open ${name}`); // not the armature shown before, nor its spritesheet
      say(`Cannot open ${name}: ${e.message}`);
    }
    return;
  }
  if (generation !== player.generation) return; // another choice was made meanwhile
  player.base = base;
  player.info = info;
  const anims = info.animations || [], styles = info.styles || [];
  const animLabel = (a) => `${iso(a.name)} (${count(a.frames, 'frame')}, ${a.fps} fps)`;
  const names = (items) => items.map((it) => iso(it.name)).join(', ');
  if (!fillSelect(ui.anim, anims, animLabel, wanted.anim, anims.length ? '' : '(rest pose)')) {
    notes.push(`no animation "${iso(wanted.anim)}"; valid: ${names(anims)}`);
  }
  if (!fillSelect(ui.style, styles, (s) => iso(s.name), wanted.style, '(default)')) {
    notes.push(`no style "${iso(wanted.style)}"; valid: ${names(styles)}`);
  }
  ui.playback.disabled = false;
  restart(notes.length ? ` (${notes.join(', ')})` : '');
}

// ---- playing ------------------------------------------------------------------------------

function validSize() {
  return /^[1-9][0-9]*x[1-9][0-9]*$/.test(ui.size.value);
}

// Starts the chosen animation over from frame 0 with the current style and size; playing
// unless `resume` is false (a change made while paused stays paused, on frame 0).
function restart(note = '', resume = true) {
  stop();
  player.generation++;
  if (!validSize()) {
    // the next good size plays again if this one stopped playing: that change comes with
    // `resume` false (player.playing, which the stop() above cleared)
    player.held = player.held || resume;
    say('The size is width x height in pixels, such as 128x128.');
    // nothing of the old size plays, nor is offered as a sheet (the size stays editable)
    ui.play.disabled = ui.frame.disabled = true;
    ui.sheet.removeAttribute('href');
    ui.sheet.textContent = '';
    return;
  }
  ui.play.disabled = ui.frame.disabled = false;
  resume = resume || player.held;
  player.held = false;
  player.anim = (player.info.animations || []).find((a) => String(a.id) === ui.anim.value) ||
                null;
  const style = (player.info.styles || []).find((s) => String(s.id) === ui.style.value);
  player.params = {
    anim: player.anim ? nameFor(player.anim, player.info.animations) : '',
    size: ui.size.value,
    style: style ? nameFor(style, player.info.styles) : '',
  };
  dropFrames();
  player.inFlight = 0;
  player.current = 0;
  player.shown = false;
  const n = frameCount();
  ui.frame.max = String(n - 1);
  showFrameNumber(0);
  const what = player.anim ? iso(player.anim.name) : 'the rest pose';
  ui.view.setAttribute('aria-label', `${what}, rendered by skeld`);
  updateSheetLink();
  player.summary = player.anim
    ? `${what}: ${count(n, 'frame')} at ${player.anim.fps} fps, ${ui.size.value}${note}`
    : `The rest pose, ${ui.size.value}${note}`;
  player.troubled = player.halted = false;
  say(player.summary);
  ui.play.disabled = !player.anim || n < 2; // a rest pose or one frame: nothing to play
  if (resume) play(); // first: the frames are asked for under the playing it starts
  pump();
}

function frameURL(f) {
  const p = player.params;
  const q = p.anim ? {anim: p.anim, frame: f, from: 0, warmup: WARMUP, size: p.size, style: p.style}
                   : {warmup: WARMUP, size: p.size, style: p.style};
  return `${player.base}/render.png?${query(q)}`;
}

// The whole animation on one PNG, in a grid about as wide as it is tall. Where skeld would
// refuse it (no animation to range over, a side over its 16384 pixels) the link says why
// instead of saving skeld's error as a .png.
const MAX_SHEET_SIDE = 16384;
function updateSheetLink() {
  const n = frameCount(), p = player.params;
  const cols = Math.ceil(Math.sqrt(n)), rows = Math.ceil(n / cols);
  const [w, h] = p.size.split('x').map(Number);
  const tooBig = cols * w > MAX_SHEET_SIDE || rows * h > MAX_SHEET_SIDE;
  const why = !player.anim ? 'the rest pose has no frames to put on a sheet'
            : tooBig ? `${cols * w}x${rows * h} pixels: over skeld's ${MAX_SHEET_SIDE} a side; ` +
                       'choose a smaller size'
            : '';
  if (why) {
    ui.sheet.removeAttribute('href');
    ui.sheet.textContent = `No spritesheet: ${why}`;
    return;
  }
  const q = {anim: p.anim, frames: `0-${n - 1}`, warmup: WARMUP, sheet: `${cols}x${rows}`,
             size: p.size, style: p.style};
  ui.sheet.href = `${player.base}/render.png?${query(q)}`;
  ui.sheet.download = `${player.anim.name || 'animation'}-sheet.png`;
  ui.sheet.textContent = 'Download spritesheet';
}

// Forgets the frames asked for: those still loading are cancelled (an empty src ends the
// fetch), so a superseded size or animation does not hold the browser's connections.
function dropFrames() {
  for (const slot of player.frames) {
    if (slot && !slot.ready) {
      slot.img.onload = slot.img.onerror = null;
      slot.img.src = '';
    }
  }
  player.frames = [];
}

// Asks for frames not asked for yet, from the current one onwards (wrapping), a few at a time.
function pump() {
  const n = frameCount();
  for (let k = 0; k < n && player.inFlight < MAX_IN_FLIGHT; k++) {
    const f = (player.current + k) % n;
    if (!player.frames[f]) request(f, player.generation, player.playStarts, 0);
  }
}

// Asks for frame f of `generation`; `started` is the player.playStarts it was first asked
// for under, which its retries keep.
function request(f, generation, started, attempt) {
  const img = new Image();
  const slot = {img, ready: false};
  player.frames[f] = slot;
  player.inFlight++;
  img.onload = () => {
    if (generation !== player.generation) return;
    player.inFlight--;
    slot.ready = true;
    if (player.troubled && !player.halted) { // skeld answers again: what failed is over
      player.troubled = false;
      say(player.summary);
    }
    if (f === player.current && !player.shown) show(f); // the first frame, or a seek's
    pump();
  };
  img.onerror = () => {
    if (generation !== player.generation) return;
    player.inFlight--;
    failed(f, generation, started, attempt);
  };
  img.src = frameURL(f);
}

// A frame did not load. An Image cannot tell why, so fetch the same URL: while skeld is only
// busy, try again a little later; otherwise stop and show skeld's message.
async function failed(f, generation, started, attempt) {
  let res = null, body = null;
  try {
    res = await fetch(frameURL(f));
    if (!res.ok) body = await res.json().catch(() => null);
  } catch (e) {
    // unreachable: res stays null
  }
  if (generation !== player.generation) return;
  if (res && res.status === 404 && attempt < MAX_RETRIES && uploadAt(player.base)) {
    try {
      await sendLost(generation);
      if (generation === player.generation) request(f, generation, started, attempt + 1);
      return;
    } catch (e) {
      body = {message: `skeld lost the file, and sending it again failed: ${e.message}`};
    }
    if (generation !== player.generation) return;
  }
  const transient = !res || res.ok || res.status === 429 || res.status === 503;
  if (transient && attempt < MAX_RETRIES) {
    setTimeout(() => {
      if (generation === player.generation) request(f, generation, started, attempt + 1);
    }, RETRY_MS);
    return;
  }
  player.frames[f] = undefined; // asked for again when playing resumes
  if (started !== player.playStarts) {
    // asked for before the user pressed Play again (a sibling of a frame that gave up, its
    // retries still under way then): that playing is over, and this one asks for the frame
    // afresh, with retries of its own
    if (player.playing) pump();
    return;
  }
  stop();
  player.troubled = true;
  player.halted = true;
  if (res && res.status === 401) { // the token changed (SIGHUP) or was never given
    ui.tokenRow.hidden = false;
    say('This skeld needs its --auth-token (it may have changed): enter it in the Token field.');
    return;
  }
  let why = 'skeld is unreachable';
  if (body && body.message) why = body.message;
  else if (res) why = `${res.status} ${res.statusText}`;
  say(`Frame ${f} could not be rendered: ${why}`);
}

// A frame of the armature on show, uploaded from this page, was answered 404: skeld lost it
// (the node restarted, or a drain moved the id to another). Sends it again, unless it is
// cached: then the 404 came before another frame's upload went through (were it a name that
// skeld does not know, the frame's retries end).
async function sendLost(generation) {
  const base = player.base;
  if (!resends.has(base) && (await stillCached(base))) return;
  if (generation === player.generation && !player.halted) { // not over a frame's error
    say(`skeld lost ${iso(uploadAt(base).file.name)}: sending it again\u2026`);
    player.troubled = true;
  }
  await sendAgain(base);
}

// Draws frame f if it has arrived; returns whether it did.
function show(f) {
  const slot = player.frames[f];
  if (!slot || !slot.ready) return false;
  const img = slot.img, canvas = ui.view;
  if (canvas.width !== img.naturalWidth || canvas.height !== img.naturalHeight) {
    canvas.width = img.naturalWidth;
    canvas.height = img.naturalHeight;
  }
  const ctx = canvas.getContext('2d');
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(img, 0, 0);
  player.current = f;
  player.shown = true;
  showFrameNumber(f);
  return true;
}

// One tick of the timer: the next frame if it is here; if not, the same one stays up and the
// next tick tries again.
function tick() {
  const next = player.shown ? (player.current + 1) % frameCount() : player.current;
  if (show(next)) {
    player.played++;
    document.body.dataset.framesPlayed = String(player.played);
  }
}

function play() {
  if (player.playing || !player.anim || frameCount() < 2 || ui.play.disabled) return;
  player.playing = true;
  player.halted = false; // the next frame to arrive says the summary
  player.playStarts++;
  player.timer = setInterval(tick, 1000 / (player.anim.fps > 0 ? player.anim.fps : 24));
  ui.play.textContent = 'Pause';
  pump(); // frames that failed before are asked for again
}

function stop() {
  clearInterval(player.timer);
  player.playing = false;
  ui.play.textContent = 'Play';
}

function seek(f) {
  stop();
  player.current = f;
  player.shown = false;
  ui.frameText.textContent = `${f} / ${frameCount() - 1}`;
  if (!show(f)) pump(); // drawn when it arrives
}

// ---- wiring --------------------------------------------------------------------------------

// The token goes in a cookie, not a header: the frames are pictures and the spritesheet a link,
// which a browser loads without any header the page could add. SameSite=Strict: no other site
// can make the browser send it.
function useToken() {
  document.cookie = `skeld_token=${encodeURIComponent(ui.token.value)}; path=/; SameSite=Strict`;
  ui.token.value = '';
  ui.tokenRow.hidden = true;
  start();
}

ui.useToken.addEventListener('click', useToken);
ui.token.addEventListener('keydown', (e) => {
  if (e.key === 'Enter') {
    e.preventDefault(); // not the form's submit
    useToken();
  }
});
ui.armature.addEventListener('change', () => open(ui.armature.value, {}));
ui.refresh.addEventListener('click', () => listArmatures(ui.armature.value, Boolean(player.base)));
ui.upload.addEventListener('change', upload);
ui.anim.addEventListener('change', () => restart('', player.playing));
ui.style.addEventListener('change', () => restart('', player.playing));
ui.size.addEventListener('change', () => restart('', player.playing));
ui.form.addEventListener('submit', (e) => { // Enter in the size field
  e.preventDefault();
  if (player.base) restart('', player.playing);
});
ui.play.addEventListener('click', () => (player.playing ? stop() : play()));
ui.frame.addEventListener('input', () => seek(Number(ui.frame.value)));

// Starts from the URL's parameters: ?id= or ?file=, with anim, style and size.
async function start() {
  const url = new URLSearchParams(location.search);
  const id = url.get('id'), file = url.get('file');
  if (url.get('size')) ui.size.value = url.get('size');
  let choice = '';
  if (id && /^[0-9a-fA-F]{64}$/.test(id)) {
    choice = `id:${id.toLowerCase()}`;
  } else if (id) {
    say('The id parameter must be 64 hex digits.');
  } else if (file) {
    choice = `file:${file}`;
    if (![...ui.armature.options].some((o) => o.value === choice)) { // start() runs again
      ui.armature.add(new Option(`${iso(file)} (under skeld's root)`, choice)); // after a token
    }
  }
  await listArmatures(choice, Boolean(choice) || Boolean(id));
  if (choice) await open(choice, {anim: url.get('anim'), style: url.get('style')});
}

start();
