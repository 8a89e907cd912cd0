/* gen-samples: writes skeld's own sample armatures into OUTDIR: robot.skf and critter.skf in
 * SkelForm format 0.5.0, robot-0.7.skf and lamp-0.7.skf in the 0.7.0 layout (SPEC.md section
 * 4), each a zip of armature.json and two atlases drawn here. The output is byte-identical on
 * every run: fixed member mtimes, ordered JSON, fixed real precision.
 *
 * Build: gcc -std=c11 -Wall -Wextra -O2 contrib/gen-samples.c -o gen-samples \
 *            $(pkg-config --cflags --libs libzip libpng jansson) -lm
 * Usage: gen-samples OUTDIR
 *        gen-samples --stress OUTDIR   (layers.skf and specks.skf, for bench-fill)
 *
 * What each file exercises (bone names in quotes):
 *
 * robot.skf (25 bones, y up, feet at 0, head at about 390)
 *   IK      FABRIK + CounterClockwise, 3-bone chain "L Upper Arm" (animated target);
 *           Arc + Clockwise, 4-bone chain "R Arm 0".."R Claw" (animated target);
 *           FABRIK + None, 3-bone chain "L Thigh" (animated target).
 *   mesh    "Torso": 4x5 grid, weighted bind to "Chest Flex" (row weights 1 .. 0.15);
 *           "R Arm": hose strip, 4 consecutive path binds along the Arc chain.
 *   physics "Bulb": pos damping + positive ratio, scale damping + ratio;
 *           "Antenna": rotation damping.
 *   anims   Idle (24 fps, 48 frames), Walk (30 fps, 40), Wave (60 fps, 90), Glitch (24 fps, 20);
 *           every element: PositionX/Y, Rotation, ScaleX/Y, Hidden ("Antenna", which has a
 *           child), TintR/G/B/A ("Visor"), Zindex, Texture ("visor" <-> "visor_blink"),
 *           IkConstraint and IkMode ("R Arm 0", "L Thigh"); linear, ease and snap handles.
 *   styles  Default (15 textures), Red (chest, head, upper_arm, forearm, thigh),
 *           Night (visor, bulb, hand, foot); Default on atlas0 and atlas1, overrides on atlas1.
 *
 * critter.skf (20 bones, y up, facing +x)
 *   IK      FABRIK + Clockwise, 2-bone chain "Front Leg" (animated target);
 *           FABRIK + CounterClockwise, 3-bone chain "Back Thigh" (animated target).
 *   mesh    "Body": 5x4 grid, weighted bind to "Body Flex" (row weights 1, 0.6, 0.25);
 *           "Tail": tapering strip, 4 consecutive path binds along "Tail 0".."Tail 3".
 *   physics "Antenna Tip": sway with rotation bounce; "Ear": pos damping + negative ratio;
 *           "Body Flex": scale damping + negative ratio; "Tail 1", "Tail 2": rotation damping.
 *   anims   Idle (30 fps, 60 frames), Hop (60 fps, 45), Sniff (24 fps, 32), Curl (30 fps, 75);
 *           every element but IkMode: Hidden ("Antenna", which has a child), TintR/G/B/A
 *           ("Body"), Zindex ("Ear"), Texture ("eye" <-> "eye_closed"), IkConstraint
 *           ("Front Leg"); linear, ease and snap handles.
 *   styles  Default (11 textures), Red (body, head, tail, ear), Night (eye, antenna_bulb,
 *           paw, stalk); spread over atlas0 and atlas1.
 *
 * robot-0.7.skf: robot.skf in the 0.7 layout, everything else equal: visuals[] (tint 0-1, the
 *   0.5 value / 255 written with every digit so the loader's * 255 gives it back exactly;
 *   identity pivots), inverse_kinematics[] (ik_family_id on every chain bone), physics[]
 *   (unused groups left out), visuals_id/physics_id on the bones and no copies there. It
 *   evaluates and draws exactly as robot.skf (tests/unit/check_conform.c); no two drawn robot
 *   bones share a zindex, since the layouts break zindex ties in opposite orders.
 *
 * lamp-0.7.skf (9 bones, y up, base at 0, facing +x): what 0.5 cannot express.
 *   pivots  quads: "Lower Arm", "Upper Arm" (pivot_pos), "Head" (the shade: pivot_pos,
 *           pivot_rot, pivot_scale); mesh: "Beam" (all three), 3x4 grid with a weighted bind
 *           to "Beam Flex" (row weights 0 .. 1).
 *   IK      FABRIK + Clockwise, 3-bone chain "Lower Arm".."Head" toward "Head Target";
 *           MimicTarget keys on "Head" (the chain's last bone) hand it the target's rotation;
 *           IkConstraint keys on "Upper Arm" (not the family's root) flip the elbow.
 *   tint    0-1 on "Bulb" and "Beam", with TintG/B/A keys in 0-1.
 *   physics "Beam Flex": scale damping with a negative ratio.
 *   order   both arm segments at zindex 3: the lower bone id draws first.
 *   anims   Look (30 fps, 72 frames), Stretch (60 fps, 120), Flicker (24 fps, 24); also
 *           Hidden ("Beam"), Rotation, PositionX/Y, ScaleX; linear, ease and snap handles.
 *   styles  Default (5 textures), Red (shade, base), Night (bulb, beam).
 *
 * Arc IK is laid out along +x at rest ("R Arm" sticks out sideways): the reference Arc solver
 * scales absolute x coordinates, so an Arc chain hanging down would fold onto its root.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <png.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zip.h>

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gen-samples: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* ---- small helpers ------------------------------------------------------------------ */

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        die("out of memory");
    return q;
}

static double clamp01(double v)
{
    return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
}

static double mix(double a, double b, double t)
{
    return a + (b - a) * t;
}

/* ---- textures ----------------------------------------------------------------------- */

enum shape {
    SH_RRECT,   /* rounded rectangle with a gloss highlight */
    SH_ELLIPSE, /* ellipse with a gloss highlight */
    SH_CAPSULE, /* fully rounded bar along the longer side */
    SH_STALK,   /* thin vertical capsule in a wider transparent box */
    SH_GLOW,    /* bright disc in a semi-transparent halo */
    SH_TUBE,    /* ribbed horizontal capsule (mesh along a chain) */
    SH_TAIL,    /* striped strip tapering from left to right (mesh along a chain) */
    SH_EYE,     /* white of the eye with a pupil and a glint */
    SH_SLIT,    /* closed eye: a short dark line */
    SH_SHADE,   /* lamp shade: a trapezoid, narrow at the top, open at the bottom */
    SH_BEAM     /* cone of light from a narrow top, fading toward its wide bottom */
};

/* Where the bone sits in the texture: at the centre, at the left end of a shape that runs
 * along the bone's +x (limb segments), or at the foot of a shape that runs up (stalks). */
enum pivot { PV_CENTRE, PV_END, PV_BASE };

enum style { ST_DEFAULT, ST_RED, ST_NIGHT, ST_COUNT };

static const char *const style_names[ST_COUNT] = {"Default", "Red", "Night"};

struct tex_def {
    const char *name;
    enum style style;
    int atlas;
    int w, h;
    enum shape shape;
    unsigned fill, edge; /* 0xRRGGBB */
    enum pivot pivot;
};

struct image {
    int w, h;
    unsigned char *px; /* straight RGBA8, rows top to bottom */
};

#define ATLAS_COUNT 2
#define ATLAS_W 256
#define PAD 2

static void unpack_rgb(unsigned c, double out[3])
{
    out[0] = ((c >> 16) & 0xff) / 255.0;
    out[1] = ((c >> 8) & 0xff) / 255.0;
    out[2] = (c & 0xff) / 255.0;
}

static double sd_rrect(double x, double y, double hw, double hh, double r)
{
    double qx = fabs(x) - (hw - r), qy = fabs(y) - (hh - r);
    double ox = fmax(qx, 0.0), oy = fmax(qy, 0.0);
    return sqrt(ox * ox + oy * oy) + fmin(fmax(qx, qy), 0.0) - r;
}

/* Approximate signed distance to an ellipse, good enough for one pixel of anti-aliasing. */
static double sd_ellipse(double x, double y, double rx, double ry)
{
    double k0 = sqrt((x / rx) * (x / rx) + (y / ry) * (y / ry));
    double k1 = sqrt((x / (rx * rx)) * (x / (rx * rx)) + (y / (ry * ry)) * (y / (ry * ry)));
    return k1 > 0.0 ? k0 * (k0 - 1.0) / k1 : -fmin(rx, ry);
}

/* The tail tapers to a third of its height; its right end is rounded. */
static double sd_tail(double x, double y, double hw, double hh)
{
    double u = clamp01((x + hw) / (2.0 * hw));
    double r = hh * (1.0 - 0.66 * u);
    double body = fmax(fabs(y) - r, -(x + hw));
    double tip_r = hh * 0.34, tip_x = hw - tip_r;
    if (x <= tip_x)
        return body;
    return sqrt((x - tip_x) * (x - tip_x) + y * y) - tip_r;
}

/* A trapezoid from half-width top_k * hw at y = -hh to hw at y = hh (y down). The side
 * distance is scaled by the cosine of the slope so the outline's anti-aliasing stays one
 * pixel wide. */
static double sd_trapezoid(double x, double y, double hw, double hh, double top_k)
{
    double top = hw * top_k, slope = (hw - top) / (2.0 * hh);
    double r = top + (hw - top) * clamp01((y + hh) / (2.0 * hh));
    double side = (fabs(x) - r) / sqrt(1.0 + slope * slope);
    return fmax(side, fabs(y) - hh);
}

/* Signed distance (pixels, negative inside) of the shape's outline; x, y from the centre. */
static double shape_sd(const struct tex_def *t, double x, double y)
{
    double hw = t->w / 2.0 - 1.0, hh = t->h / 2.0 - 1.0;
    switch (t->shape) {
    case SH_RRECT: return sd_rrect(x, y, hw, hh, fmin(hw, hh) * 0.35);
    case SH_CAPSULE:
    case SH_TUBE: return sd_rrect(x, y, hw, hh, fmin(hw, hh));
    case SH_STALK: return sd_rrect(x, y, hw * 0.3, hh, hw * 0.3);
    case SH_ELLIPSE:
    case SH_EYE: return sd_ellipse(x, y, hw, hh);
    case SH_GLOW: return sd_ellipse(x, y, hw * 0.55, hh * 0.55);
    case SH_TAIL: return sd_tail(x, y, hw, hh);
    case SH_SLIT: return sd_rrect(x, y - hh * 0.15, hw * 0.8, 2.5, 2.5);
    case SH_SHADE: return sd_trapezoid(x, y, hw, hh, 0.45);
    case SH_BEAM: return sd_trapezoid(x, y, hw, hh, 0.18);
    }
    return 1.0;
}

/* A triangle wave in [0, 1] with the given period. */
static double tri_wave(double x, double period)
{
    double f = fmod(x + 1000.0 * period, period) / period;
    return fabs(f - 0.5) * 2.0;
}

static void gloss(const struct tex_def *t, double x, double y, double c[3])
{
    double hw = t->w / 2.0, hh = t->h / 2.0;
    double d = sd_ellipse(x + hw * 0.3, y + hh * 0.45, hw * 0.45, hh * 0.2);
    double k = 0.35 * clamp01(0.5 - d);
    for (int i = 0; i < 3; i++)
        c[i] = mix(c[i], 1.0, k);
}

static void eye_detail(const struct tex_def *t, double x, double y, double c[3])
{
    double edge[3], r = fmin(t->w, t->h) * 0.24;
    unpack_rgb(t->edge, edge);
    double dp = sqrt((x - r * 0.5) * (x - r * 0.5) + y * y) - r;
    double k = clamp01(0.5 - dp);
    for (int i = 0; i < 3; i++)
        c[i] = mix(c[i], edge[i], k);
    double dg = sqrt((x - r * 0.1) * (x - r * 0.1) + (y + r * 0.4) * (y + r * 0.4)) - r * 0.3;
    k = 0.9 * clamp01(0.5 - dg);
    for (int i = 0; i < 3; i++)
        c[i] = mix(c[i], 1.0, k);
}

/* Shape-specific decoration of the gradient fill. */
static void decorate(const struct tex_def *t, double x, double y, double c[3])
{
    double edge[3];
    unpack_rgb(t->edge, edge);
    switch (t->shape) {
    case SH_TUBE:
        for (int i = 0; i < 3; i++)
            c[i] *= 0.72 + 0.28 * tri_wave(x, 12.0);
        break;
    case SH_TAIL:
        if (tri_wave(x, 24.0) < 0.3)
            for (int i = 0; i < 3; i++)
                c[i] = mix(c[i], edge[i], 0.45);
        break;
    case SH_EYE: eye_detail(t, x, y, c); break;
    case SH_SLIT:
        for (int i = 0; i < 3; i++)
            c[i] = edge[i];
        break;
    case SH_SHADE:
        /* the inside of the shade shows as a band along the opening */
        if (y > t->h / 2.0 - 9.0)
            for (int i = 0; i < 3; i++)
                c[i] = mix(c[i], edge[i], 0.55);
        gloss(t, x, y, c);
        break;
    case SH_RRECT:
    case SH_ELLIPSE:
    case SH_CAPSULE: gloss(t, x, y, c); break;
    default: break;
    }
}

/* The glow is a solid core plus a halo whose alpha falls off quadratically. */
static void shade_glow(const struct tex_def *t, double x, double y, double out[4])
{
    double fill[3], r = fmin(t->w, t->h) / 2.0 - 1.0;
    unpack_rgb(t->fill, fill);
    double d = sqrt(x * x + y * y), core = clamp01(0.5 - shape_sd(t, x, y));
    double halo = 0.7 * (1.0 - clamp01(d / r));
    double centre = clamp01(1.0 - d / (r * 0.45));
    for (int i = 0; i < 3; i++)
        out[i] = mix(fill[i], 1.0, 0.7 * centre);
    out[3] = core + (1.0 - core) * halo;
}

/* The beam is brightest along its axis and near its top, with soft sides. */
static void shade_beam(const struct tex_def *t, double x, double y, double out[4])
{
    double fill[3], hw = t->w / 2.0 - 1.0, hh = t->h / 2.0 - 1.0;
    unpack_rgb(t->fill, fill);
    double v = clamp01((y + hh) / (2.0 * hh));
    double r = hw * (0.18 + 0.82 * v);
    double axis = clamp01(1.0 - fabs(x) / r);
    for (int i = 0; i < 3; i++)
        out[i] = mix(fill[i], 1.0, 0.6 * axis * (1.0 - v));
    double soft = clamp01(-shape_sd(t, x, y) / 6.0);
    out[3] = soft * (0.9 - 0.75 * v) * (0.55 + 0.45 * axis);
}

static void shade_shape(const struct tex_def *t, double x, double y, double out[4])
{
    if (t->shape == SH_GLOW) {
        shade_glow(t, x, y, out);
        return;
    }
    if (t->shape == SH_BEAM) {
        shade_beam(t, x, y, out);
        return;
    }
    double fill[3], edge[3];
    unpack_rgb(t->fill, fill);
    unpack_rgb(t->edge, edge);
    double v = clamp01((y + t->h / 2.0) / t->h);
    for (int i = 0; i < 3; i++)
        out[i] = clamp01(fill[i] * (1.15 - 0.35 * v));
    decorate(t, x, y, out);
    double sd = shape_sd(t, x, y);
    double ew = (t->w < 48 || t->h < 48) ? 1.5 : 2.5;
    double e = clamp01(sd + ew + 0.5);
    for (int i = 0; i < 3; i++)
        out[i] = mix(out[i], edge[i], e);
    out[3] = clamp01(0.5 - sd);
}

/* RGBA in [0, 1] of the texture at x, y (pixels from its centre, y down). A pivoted shape
 * is drawn in the part of the box that the pivot leaves, on a box of that size. */
static void shade(const struct tex_def *t, double x, double y, double out[4])
{
    struct tex_def v = *t;
    if (t->pivot == PV_END) {
        x -= (t->w - t->h) / 4.0;
        v.w = (t->w + t->h) / 2;
    } else if (t->pivot == PV_BASE) {
        y += (t->h - t->w) / 4.0;
        v.h = (t->h + t->w) / 2;
    }
    shade_shape(&v, x, y, out);
}

static unsigned char to_byte(double v)
{
    return (unsigned char)lround(clamp01(v) * 255.0);
}

static void draw_texture(struct image *im, const struct tex_def *t, int ox, int oy)
{
    for (int py = 0; py < t->h; py++) {
        for (int px = 0; px < t->w; px++) {
            double c[4];
            shade(t, px + 0.5 - t->w / 2.0, py + 0.5 - t->h / 2.0, c);
            unsigned char *p = im->px + ((size_t)(oy + py) * (size_t)im->w + (size_t)(ox + px)) * 4;
            p[3] = to_byte(c[3]);
            for (int i = 0; i < 3; i++)
                p[i] = p[3] ? to_byte(c[i]) : 0;
        }
    }
}

/* ---- atlas layout ------------------------------------------------------------------- */

struct placed {
    int x, y;
};

/* Shelf packing in table order; the atlas height is rounded up to a multiple of 64. */
static void pack_atlas(const struct tex_def *texs, int n, int atlas, struct placed *pl,
                       struct image *im)
{
    int x = PAD, y = PAD, shelf = 0;
    for (int i = 0; i < n; i++) {
        const struct tex_def *t = &texs[i];
        if (t->atlas != atlas)
            continue;
        if (t->w + 2 * PAD > ATLAS_W)
            die("texture %s is wider than the atlas", t->name);
        if (x + t->w + PAD > ATLAS_W) {
            x = PAD;
            y += shelf + PAD;
            shelf = 0;
        }
        pl[i] = (struct placed){x, y};
        x += t->w + PAD;
        shelf = t->h > shelf ? t->h : shelf;
    }
    im->w = ATLAS_W;
    im->h = (y + shelf + PAD + 63) / 64 * 64;
    im->px = calloc((size_t)im->w * (size_t)im->h, 4);
    if (!im->px)
        die("out of memory");
}

static void draw_atlases(const struct tex_def *texs, int n, struct placed *pl, struct image *im)
{
    for (int a = 0; a < ATLAS_COUNT; a++)
        pack_atlas(texs, n, a, pl, &im[a]);
    for (int i = 0; i < n; i++)
        draw_texture(&im[texs[i].atlas], &texs[i], pl[i].x, pl[i].y);
}

/* ---- PNG and zip -------------------------------------------------------------------- */

static void encode_png(const struct image *im, void **out, size_t *len)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = (png_uint_32)im->w;
    img.height = (png_uint_32)im->h;
    img.format = PNG_FORMAT_RGBA;
    png_alloc_size_t size = 0;
    if (!png_image_write_to_memory(&img, NULL, &size, 0, im->px, 0, NULL))
        die("png: %s", img.message);
    void *buf = malloc(size);
    if (!buf)
        die("out of memory");
    if (!png_image_write_to_memory(&img, buf, &size, 0, im->px, 0, NULL))
        die("png: %s", img.message);
    *out = buf;
    *len = size;
}

/* 2026-01-01 00:00:00 UTC; main() sets TZ=UTC because libzip converts with localtime(). */
#define FIXED_MTIME ((time_t)1767225600)

/* Adds a member; data (from malloc) belongs to the archive from here on. */
static void archive_add(zip_t *za, const char *name, void *data, size_t len)
{
    zip_source_t *src = zip_source_buffer(za, data, len, 1);
    if (!src) {
        free(data);
        die("%s: %s", name, zip_strerror(za));
    }
    zip_int64_t idx = zip_file_add(za, name, src, ZIP_FL_OVERWRITE);
    if (idx < 0) {
        zip_source_free(src);
        die("%s: %s", name, zip_strerror(za));
    }
    zip_uint64_t i = (zip_uint64_t)idx;
    if (zip_set_file_compression(za, i, ZIP_CM_DEFLATE, 9) != 0 ||
        zip_file_set_mtime(za, i, FIXED_MTIME, 0) != 0 ||
        zip_file_set_external_attributes(za, i, 0, ZIP_OPSYS_UNIX, 0100644u << 16) != 0)
        die("%s: %s", name, zip_strerror(za));
}

static zip_t *archive_create(const char *path)
{
    int code;
    zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &code);
    if (!za) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, code);
        fprintf(stderr, "gen-samples: %s: %s\n", path, zip_error_strerror(&ze));
        zip_error_fini(&ze);
        exit(1);
    }
    return za;
}

static void archive_finish(zip_t *za, const char *path)
{
    if (zip_close(za) != 0) {
        fprintf(stderr, "gen-samples: %s: %s\n", path, zip_strerror(za));
        zip_discard(za);
        exit(1);
    }
}

/* ---- JSON building (every failure is fatal) ----------------------------------------- */

static json_t *must(json_t *v)
{
    if (!v)
        die("out of memory building JSON");
    return v;
}

static void put(json_t *obj, const char *key, json_t *v)
{
    if (!v || json_object_set_new(obj, key, v) != 0)
        die("cannot set JSON key \"%s\"", key);
}

static void push(json_t *arr, json_t *v)
{
    if (!v || json_array_append_new(arr, v) != 0)
        die("cannot append to a JSON array");
}

static json_t *jobj(void)
{
    return must(json_object());
}

static json_t *jarr(void)
{
    return must(json_array());
}

static json_t *jnum(double v)
{
    return must(json_real(v));
}

static json_t *jint(long v)
{
    return must(json_integer(v));
}

static json_t *jstr(const char *s)
{
    return must(json_string(s));
}

static json_t *jbool(int v)
{
    return must(json_boolean(v));
}

static json_t *jvec2(double x, double y)
{
    json_t *o = jobj();
    put(o, "x", jnum(x));
    put(o, "y", jnum(y));
    return o;
}

static json_t *jcolor(const double c[4])
{
    json_t *o = jobj();
    put(o, "r", jnum(c[0]));
    put(o, "g", jnum(c[1]));
    put(o, "b", jnum(c[2]));
    put(o, "a", jnum(c[3]));
    return o;
}

/* jansson prints every real with the one precision of JSON_FLAGS, which a 0.5 file and its
 * 0.7 twin share, so both load the very same doubles. A twin's tints are the 0.5 values / 255,
 * which the loader multiplies back by 255: they need every digit to come back exactly. Such a
 * real goes into the tree as a string carrying EXACT_MARK and splice_exact() puts it back as
 * its shortest round-trip decimal after the dump. */
#define EXACT_MARK "\001exact:"
#define EXACT_DUMPED "\"\\u0001exact:" /* how json_dumps writes the mark, quote included */

static json_t *jexact(double v)
{
    char buf[64];
    int n = snprintf(buf, sizeof buf, "%s", EXACT_MARK);
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf + n, sizeof buf - (size_t)n, "%.*g", prec, v);
        if (strtod(buf + n, NULL) == v)
            break;
    }
    if (!strpbrk(buf + n, ".eE")) /* a real, as jansson would print it */
        strncat(buf, ".0", sizeof buf - strlen(buf) - 1);
    return jstr(buf);
}

/* Replaces every dumped "\u0001exact:DIGITS" string with DIGITS, in place. */
static void splice_exact(char *text)
{
    size_t mark = strlen(EXACT_DUMPED);
    char *out = text;
    for (const char *in = text; *in;) {
        if (strncmp(in, EXACT_DUMPED, mark) != 0) {
            *out++ = *in++;
            continue;
        }
        for (in += mark; *in && *in != '"';)
            *out++ = *in++;
        if (*in != '"')
            die("unterminated exact real in the JSON text");
        in++;
    }
    *out = 0;
}

/* ---- armature model ------------------------------------------------------------------ */

#define PI 3.14159265358979323846

struct phys_def {
    double pos_damp, pos_ratio, scale_damp, scale_ratio, rot_damp, sway, bounce;
};

struct bone_def {
    const char *name;
    int parent;
    double x, y, rot;
    const char *tex; /* NULL: no texture */
    int z;
    int tinted; /* writes tint and init_tint */
    double tint[4];
    int hideable; /* writes hidden and init_hidden */
    struct phys_def phys;
};

#define MAX_CHAIN 6

struct ik_def {
    int bones[MAX_CHAIN]; /* root first */
    int count;
    int target;
    const char *mode, *constraint;
    int mimic; /* 0.7 only: mimic_target and init_mimic_target */
};

/* 0.7 only: a textured bone's visual pivots. pivot_pos is a fraction of the texture's size,
 * pivot_rot radians; bones not listed keep the identity, (0, 0), 0, (1, 1). */
struct pivot_def {
    int bone;
    double x, y, rot, sx, sy;
};

/* A grid of vertices in the mesh bone's space, rows top to bottom; row r is bound to
 * bind_bone with row_weight[r] (rows with weight 0 stay unbound). */
struct grid_mesh {
    int bone, bind_bone;
    int cols, rows;
    double w, h;
    double row_weight[8];
};

/* A strip along a chain: one path bind per chain bone, a vertex pair at each joint
 * (init_pos x across the chain, y back along it), plus a pair lead units behind the first
 * joint and a pair tail units past the last. */
struct path_mesh {
    int bone;
    int chain[MAX_CHAIN];
    int count;
    double half_w, lead, tail;
};

enum element {
    EL_POS_X,
    EL_POS_Y,
    EL_ROT,
    EL_SCALE_X,
    EL_SCALE_Y,
    EL_HIDDEN,
    EL_TINT_R,
    EL_TINT_G,
    EL_TINT_B,
    EL_TINT_A,
    EL_ZINDEX,
    EL_TEXTURE,
    EL_IK_CONSTRAINT,
    EL_IK_MODE,
    EL_MIMIC_TARGET /* 0.7 only */
};

static const char *const element_names[] = {"PositionX",    "PositionY", "Rotation",   "ScaleX",
                                            "ScaleY",       "Hidden",    "TintR",      "TintG",
                                            "TintB",        "TintA",     "Zindex",     "Texture",
                                            "IkConstraint", "IkMode",    "MimicTarget"};

enum handle { H_LINEAR, H_EASE, H_SNAP };

struct key {
    int frame, bone;
    enum element el;
    double value;
    const char *str; /* Texture, IkConstraint, IkMode */
    enum handle handle;
    int seq; /* insertion order, to keep the frame sort stable */
};

struct anim {
    const char *name;
    int fps;
    struct key *keys;
    int n, cap;
};

#define MAX_ANIMS 6

struct anim_set {
    struct anim a[MAX_ANIMS];
    int n;
};

/* The two ways armature.json can hold visuals, IK and physics (SPEC.md section 4): on the
 * bones (0.5.0), or in the visuals[], inverse_kinematics[] and physics[] arrays (0.7.0). */
enum layout { LAYOUT_05, LAYOUT_07 };

struct character {
    const char *file;
    enum layout layout;
    double tint_full; /* full intensity in the tables' tints and Tint keys: 255, or 1 */
    const struct pivot_def *pivots;
    int pivot_count;
    const struct bone_def *bones;
    int bone_count;
    const struct ik_def *iks;
    int ik_count;
    const struct grid_mesh *grids;
    int grid_count;
    const struct path_mesh *paths;
    int path_count;
    const struct tex_def *texs;
    int tex_count;
    void (*animate)(struct anim_set *);
};

/* World transform of every bone at rest, as Construct's inheritance computes it. */
struct xform {
    double x, y, rot, sx, sy;
};

static void rest_pose(const struct character *ch, struct xform *w)
{
    for (int i = 0; i < ch->bone_count; i++) {
        const struct bone_def *b = &ch->bones[i];
        if (b->parent < 0) {
            w[i] = (struct xform){b->x, b->y, b->rot, 1.0, 1.0};
            continue;
        }
        const struct xform *p = &w[b->parent];
        double x = b->x * p->sx, y = b->y * p->sy, c = cos(p->rot), s = sin(p->rot);
        w[i] = (struct xform){x * c - y * s + p->x, x * s + y * c + p->y, b->rot + p->rot, p->sx,
                              p->sy};
    }
}

/* ---- bones -------------------------------------------------------------------------- */

static int family_of(const struct character *ch, int bone, int *is_root)
{
    for (int f = 0; f < ch->ik_count; f++)
        for (int k = 0; k < ch->iks[f].count; k++)
            if (ch->iks[f].bones[k] == bone) {
                *is_root = k == 0;
                return f;
            }
    *is_root = 0;
    return -1;
}

static void put_ik(json_t *o, const struct ik_def *ik, int family)
{
    json_t *ids = jarr();
    for (int k = 0; k < ik->count; k++)
        push(ids, jint(ik->bones[k]));
    put(o, "ik_family_id", jint(family));
    put(o, "ik_mode", jstr(ik->mode));
    put(o, "ik_constraint", jstr(ik->constraint));
    put(o, "ik_target_id", jint(ik->target));
    put(o, "ik_bone_ids", ids);
}

/* Physics parameters, and the state fields at the bone's rest world values. */
static void put_phys(json_t *o, const struct phys_def *ph, const struct xform *w,
                     const struct xform *parent)
{
    double orbit = parent ? atan2(w->y - parent->y, w->x - parent->x) : 0.0;
    put(o, "has_physics", jbool(1));
    put(o, "phys_pos_damping", jnum(ph->pos_damp));
    put(o, "phys_pos_ratio", jnum(ph->pos_ratio));
    put(o, "phys_scale_damping", jnum(ph->scale_damp));
    put(o, "phys_scale_ratio", jnum(ph->scale_ratio));
    put(o, "phys_rot_damping", jnum(ph->rot_damp));
    put(o, "phys_sway", jnum(ph->sway));
    put(o, "phys_rot_bounce", jnum(ph->bounce));
    put(o, "phys_global_pos", jvec2(w->x, w->y));
    put(o, "phys_global_scale", jvec2(w->sx, w->sy));
    put(o, "phys_global_rot", jnum(w->rot));
    put(o, "phys_global_orbit", jnum(orbit));
    put(o, "phys_global_orbit_vel", jnum(0.0));
    put(o, "phys_global_orbit_diff", jnum(0.0));
}

static int has_phys(const struct phys_def *ph)
{
    return ph->pos_damp > 0 || ph->scale_damp > 0 || ph->rot_damp > 0 || ph->sway > 0;
}

static void put_init_fields(json_t *o, const struct bone_def *b, const struct ik_def *root_ik)
{
    put(o, "init_pos", jvec2(b->x, b->y));
    put(o, "init_scale", jvec2(1.0, 1.0));
    put(o, "init_rot", jnum(b->rot));
    if (b->tex) {
        put(o, "init_tex", jstr(b->tex));
        put(o, "init_zindex", jint(b->z));
    }
    if (b->tinted)
        put(o, "init_tint", jcolor(b->tint));
    if (b->hideable)
        put(o, "init_hidden", jbool(0));
    if (root_ik) {
        put(o, "init_ik_mode", jstr(root_ik->mode));
        put(o, "init_ik_constraint", jstr(root_ik->constraint));
    }
}

static json_t *bone_json(const struct character *ch, int i, const struct xform *world)
{
    const struct bone_def *b = &ch->bones[i];
    json_t *o = jobj();
    put(o, "id", jint(i));
    put(o, "name", jstr(b->name));
    put(o, "parent_id", jint(b->parent));
    if (b->tex) {
        put(o, "tex", jstr(b->tex));
        put(o, "zindex", jint(b->z));
    }
    put(o, "pos", jvec2(b->x, b->y));
    put(o, "scale", jvec2(1.0, 1.0));
    put(o, "rot", jnum(b->rot));
    if (b->tinted)
        put(o, "tint", jcolor(b->tint));
    if (b->hideable)
        put(o, "hidden", jbool(0));
    int is_root, fam = family_of(ch, i, &is_root);
    if (is_root)
        put_ik(o, &ch->iks[fam], fam);
    else
        put(o, "ik_family_id", jint(fam));
    if (has_phys(&b->phys))
        put_phys(o, &b->phys, &world[i], b->parent >= 0 ? &world[b->parent] : NULL);
    put_init_fields(o, b, is_root ? &ch->iks[fam] : NULL);
    return o;
}

/* ---- the 0.7 layout: bones point into visuals[], physics[] and inverse_kinematics[] ---- */

/* One tint channel as the file's layout stores it: 0-255 in 0.5, 0-1 in 0.7. A 0-255 value
 * written as 0-1 must come back exactly when the loader scales it up again. */
static json_t *jtint(const struct character *ch, double v)
{
    if (ch->layout == LAYOUT_05 || ch->tint_full == 1.0)
        return jnum(v);
    double d = v / ch->tint_full;
    if (d * ch->tint_full != v)
        die("%s: tint %g does not come back exactly from the 0-1 scale", ch->file, v);
    return jexact(d);
}

static json_t *jtint_color(const struct character *ch, const double c[4])
{
    static const char *const names[4] = {"r", "g", "b", "a"};
    json_t *o = jobj();
    for (int i = 0; i < 4; i++)
        put(o, names[i], jtint(ch, c[i]));
    return o;
}

static const struct pivot_def *pivot_of(const struct character *ch, int bone)
{
    for (int i = 0; i < ch->pivot_count; i++)
        if (ch->pivots[i].bone == bone)
            return &ch->pivots[i];
    return NULL;
}

/* A textured bone's visuals entry: texture, zindex, tint and pivots with their init_ values
 * (its mesh is added by add_meshes). */
static json_t *visual_json(const struct character *ch, int i)
{
    const struct bone_def *b = &ch->bones[i];
    const struct pivot_def *pv = pivot_of(ch, i);
    const struct pivot_def id = {i, 0.0, 0.0, 0.0, 1.0, 1.0};
    if (!pv)
        pv = &id;
    json_t *o = jobj();
    put(o, "tex", jstr(b->tex));
    put(o, "zindex", jint(b->z));
    if (b->tinted)
        put(o, "tint", jtint_color(ch, b->tint));
    put(o, "pivot_pos", jvec2(pv->x, pv->y));
    put(o, "pivot_rot", jnum(pv->rot));
    put(o, "pivot_scale", jvec2(pv->sx, pv->sy));
    put(o, "init_tex", jstr(b->tex));
    put(o, "init_zindex", jint(b->z));
    if (b->tinted)
        put(o, "init_tint", jtint_color(ch, b->tint));
    return o;
}

/* A physics entry as the editor groups it: the fields of an unused group are left out. Sway
 * also damps the position (physics.c), so it keeps the position group. */
static json_t *physics_json(const struct phys_def *ph, const struct xform *w,
                            const struct xform *parent)
{
    json_t *o = jobj();
    if (ph->pos_damp > 0 || ph->sway > 0) {
        put(o, "pos_damping", jnum(ph->pos_damp));
        put(o, "pos_ratio", jnum(ph->pos_ratio));
        put(o, "global_pos", jvec2(w->x, w->y));
    }
    if (ph->scale_damp > 0) {
        put(o, "scale_damping", jnum(ph->scale_damp));
        put(o, "scale_ratio", jnum(ph->scale_ratio));
        put(o, "global_scale", jvec2(w->sx, w->sy));
    }
    if (ph->rot_damp > 0 || ph->sway > 0) {
        put(o, "rot_damping", jnum(ph->rot_damp));
        put(o, "global_rot", jnum(w->rot));
    }
    if (ph->sway > 0) {
        put(o, "sway", jnum(ph->sway));
        put(o, "rot_bounce", jnum(ph->bounce));
        put(o, "global_orbit", jnum(parent ? atan2(w->y - parent->y, w->x - parent->x) : 0.0));
        put(o, "global_orbit_vel", jnum(0.0));
        put(o, "global_orbit_diff", jnum(0.0));
    }
    return o;
}

static json_t *family_json(const struct ik_def *ik, int family)
{
    json_t *o = jobj(), *ids = jarr();
    for (int k = 0; k < ik->count; k++)
        push(ids, jint(ik->bones[k]));
    put(o, "id", jint(family));
    put(o, "constraint", jstr(ik->constraint));
    put(o, "mode", jstr(ik->mode));
    put(o, "target_id", jint(ik->target));
    put(o, "bone_ids", ids);
    put(o, "mimic_target", jbool(ik->mimic));
    put(o, "init_constraint", jstr(ik->constraint));
    put(o, "init_mode", jstr(ik->mode));
    put(o, "init_mimic_target", jbool(ik->mimic));
    return o;
}

/* A 0.7 bone keeps its transform and visibility and points at the rest: every chain bone
 * names its family, and -1 means none, as the editor writes it. */
static json_t *bone_json_07(const struct character *ch, int i, int visual, int physics)
{
    const struct bone_def *b = &ch->bones[i];
    int is_root;
    json_t *o = jobj();
    put(o, "id", jint(i));
    put(o, "name", jstr(b->name));
    put(o, "parent_id", jint(b->parent));
    put(o, "pos", jvec2(b->x, b->y));
    put(o, "scale", jvec2(1.0, 1.0));
    put(o, "rot", jnum(b->rot));
    if (b->hideable)
        put(o, "hidden", jbool(0));
    put(o, "init_pos", jvec2(b->x, b->y));
    put(o, "init_scale", jvec2(1.0, 1.0));
    put(o, "init_rot", jnum(b->rot));
    if (b->hideable)
        put(o, "init_hidden", jbool(0));
    put(o, "ik_family_id", jint(family_of(ch, i, &is_root)));
    put(o, "physics_id", jint(physics));
    put(o, "visuals_id", jint(visual));
    return o;
}

/* ---- meshes ------------------------------------------------------------------------- */

static const struct tex_def *find_tex(const struct character *ch, const char *name)
{
    for (int i = 0; i < ch->tex_count; i++)
        if (ch->texs[i].style == ST_DEFAULT && !strcmp(ch->texs[i].name, name))
            return &ch->texs[i];
    die("%s: no Default texture named %s", ch->file, name);
    return NULL;
}

static json_t *vertex_json(int id, double x, double y, double u, double v)
{
    json_t *o = jobj();
    put(o, "id", jint(id));
    put(o, "pos", jvec2(x, y));
    put(o, "uv", jvec2(u, v));
    put(o, "init_pos", jvec2(x, y));
    return o;
}

static json_t *bind_vert_json(int id, double weight)
{
    json_t *o = jobj();
    put(o, "id", jint(id));
    put(o, "weight", jnum(weight));
    return o;
}

static json_t *bind_json(int bone, int is_path, json_t *verts)
{
    json_t *o = jobj();
    put(o, "bone_id", jint(bone));
    put(o, "is_path", jbool(is_path));
    put(o, "verts", verts);
    return o;
}

static void push_quad(json_t *idx, int a, int b, int c, int d)
{
    /* a-b on one edge, c-d on the next, same order */
    push(idx, jint(a));
    push(idx, jint(b));
    push(idx, jint(c));
    push(idx, jint(b));
    push(idx, jint(d));
    push(idx, jint(c));
}

static void grid_vertices(const struct grid_mesh *g, json_t *verts, json_t *idx)
{
    for (int r = 0; r < g->rows; r++) {
        for (int c = 0; c < g->cols; c++) {
            double u = (double)c / (g->cols - 1), v = (double)r / (g->rows - 1);
            double x = (u - 0.5) * g->w, y = (0.5 - v) * g->h;
            push(verts, vertex_json(r * g->cols + c, x, y, u, v));
            if (r + 1 < g->rows && c + 1 < g->cols) {
                int a = r * g->cols + c;
                push_quad(idx, a, a + g->cols, a + 1, a + 1 + g->cols);
            }
        }
    }
}

static void add_grid_mesh(const struct grid_mesh *g, json_t *bone)
{
    json_t *verts = jarr(), *idx = jarr(), *bverts = jarr(), *binds = jarr();
    grid_vertices(g, verts, idx);
    for (int r = 0; r < g->rows; r++)
        for (int c = 0; c < g->cols && g->row_weight[r] > 0.0; c++)
            push(bverts, bind_vert_json(r * g->cols + c, g->row_weight[r]));
    push(binds, bind_json(g->bind_bone, 0, bverts));
    put(bone, "vertices", verts);
    put(bone, "indices", idx);
    put(bone, "binds", binds);
}

/* Distance along the chain of each joint from the first one. */
static void chain_stations(const struct character *ch, const struct path_mesh *m, double *at)
{
    at[0] = 0.0;
    for (int k = 1; k < m->count; k++) {
        const struct bone_def *b = &ch->bones[m->chain[k]];
        at[k] = at[k - 1] + sqrt(b->x * b->x + b->y * b->y);
    }
}

/* One vertex pair: the top (v = 0) on the normal's side, the bottom across the chain. */
static void push_pair(json_t *verts, json_t *bverts, int id, double along, double half_w, double u)
{
    push(verts, vertex_json(id, half_w, along, u, 0.0));
    push(verts, vertex_json(id + 1, -half_w, along, u, 1.0));
    push(bverts, bind_vert_json(id, 1.0));
    push(bverts, bind_vert_json(id + 1, 1.0));
}

static void add_path_mesh(const struct character *ch, const struct path_mesh *m, json_t *bone)
{
    double at[MAX_CHAIN];
    chain_stations(ch, m, at);
    double start = -m->lead, len = at[m->count - 1] + m->tail - start;
    json_t *verts = jarr(), *idx = jarr(), *binds = jarr();
    int id = 0;
    for (int k = 0; k < m->count; k++) {
        json_t *bverts = jarr();
        if (k == 0)
            push_pair(verts, bverts, (id += 2) - 2, m->lead, m->half_w, 0.0);
        push_pair(verts, bverts, (id += 2) - 2, 0.0, m->half_w, (at[k] - start) / len);
        if (k == m->count - 1)
            push_pair(verts, bverts, (id += 2) - 2, -m->tail, m->half_w, 1.0);
        push(binds, bind_json(m->chain[k], 1, bverts));
    }
    for (int s = 0; s + 2 < id; s += 2)
        push_quad(idx, s, s + 1, s + 2, s + 3);
    put(bone, "vertices", verts);
    put(bone, "indices", idx);
    put(bone, "binds", binds);
}

/* holder[bone]: the object that keeps the bone's visuals, the bone itself (0.5) or its
 * visuals entry (0.7). */
static void add_meshes(const struct character *ch, json_t *const *holder)
{
    for (int i = 0; i < ch->grid_count; i++) {
        const struct grid_mesh *g = &ch->grids[i];
        const struct tex_def *t = find_tex(ch, ch->bones[g->bone].tex);
        if (t->w != (int)g->w || t->h != (int)g->h)
            die("%s: grid mesh of %s does not match its texture", ch->file, t->name);
        add_grid_mesh(g, holder[g->bone]);
    }
    for (int i = 0; i < ch->path_count; i++) {
        if (!holder[ch->paths[i].bone])
            die("%s: path mesh on untextured bone %d", ch->file, ch->paths[i].bone);
        add_path_mesh(ch, &ch->paths[i], holder[ch->paths[i].bone]);
    }
}

/* ---- animations --------------------------------------------------------------------- */

static struct anim *anim_new(struct anim_set *set, const char *name, int fps)
{
    if (set->n == MAX_ANIMS)
        die("too many animations");
    struct anim *a = &set->a[set->n++];
    *a = (struct anim){name, fps, NULL, 0, 0};
    return a;
}

static void add_key(struct anim *a, int frame, int bone, enum element el, double value,
                    const char *str, enum handle h)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 32;
        a->keys = xrealloc(a->keys, (size_t)a->cap * sizeof *a->keys);
    }
    a->keys[a->n] = (struct key){frame, bone, el, value, str, h, a->n};
    a->n++;
}

static void track(struct anim *a, int bone, enum element el, enum handle h, int nf,
                  const int *frames, int nv, const double *values)
{
    if (nf != nv)
        die("%s: track of bone %d has %d frames and %d values", a->name, bone, nf, nv);
    for (int i = 0; i < nf; i++)
        add_key(a, frames[i], bone, el, values[i], NULL, h);
}

static void track_str(struct anim *a, int bone, enum element el, int nf, const int *frames, int nv,
                      const char *const *values)
{
    if (nf != nv)
        die("%s: track of bone %d has %d frames and %d values", a->name, bone, nf, nv);
    for (int i = 0; i < nf; i++)
        add_key(a, frames[i], bone, el, 0.0, values[i], H_SNAP);
}

#define COUNT(arr) ((int)(sizeof(arr) / sizeof((arr)[0])))
#define FR(...) ((const int[]){__VA_ARGS__})
#define VA(...) ((const double[]){__VA_ARGS__})
#define SV(...) ((const char *const[]){__VA_ARGS__})
#define TRACK(a, bone, el, h, F, V) track(a, bone, el, h, COUNT(F), F, COUNT(V), V)
#define TRACK_STR(a, bone, el, F, V) track_str(a, bone, el, COUNT(F), F, COUNT(V), V)

static int cmp_key(const void *pa, const void *pb)
{
    const struct key *a = pa, *b = pb;
    if (a->frame != b->frame)
        return a->frame < b->frame ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

static int next_kf(const struct anim *a, int i)
{
    const struct key *k = &a->keys[i];
    for (int j = i + 1; j < a->n; j++) {
        const struct key *o = &a->keys[j];
        if (o->bone == k->bone && o->el == k->el && o->frame > k->frame)
            return j;
    }
    return -1;
}

static void put_handles(json_t *o, enum handle h)
{
    static const double hs[3][4] = {
        {0.0, 0.0, 0.0, 0.0}, {0.42, 0.0, 0.58, 1.0}, {1.0 / 3.0, 999.0, 2.0 / 3.0, 999.0}};
    put(o, "start_handle", jvec2(hs[h][0], hs[h][1]));
    put(o, "end_handle", jvec2(hs[h][2], hs[h][3]));
    /* Real 0.5.0 exports say "Linear" whatever the handles hold. */
    put(o, "handle_preset", jstr("Linear"));
}

static json_t *key_json(const struct character *ch, const struct anim *a, int i)
{
    const struct key *k = &a->keys[i];
    json_t *o = jobj();
    if (k->el == EL_MIMIC_TARGET && ch->layout == LAYOUT_05)
        die("%s: %s keys MimicTarget, which 0.5 does not have", ch->file, a->name);
    put(o, "frame", jint(k->frame));
    put(o, "bone_id", jint(k->bone));
    put(o, "element", jstr(element_names[k->el]));
    if (k->str)
        put(o, "value_str", jstr(k->str));
    else if (k->el >= EL_TINT_R && k->el <= EL_TINT_A)
        put(o, "value", jtint(ch, k->value));
    else
        put(o, "value", jnum(k->value));
    put(o, "next_kf", jint(next_kf(a, i)));
    put_handles(o, k->handle);
    return o;
}

static json_t *anim_json(const struct character *ch, struct anim *a, int id)
{
    qsort(a->keys, (size_t)a->n, sizeof *a->keys, cmp_key);
    json_t *o = jobj(), *keys = jarr();
    put(o, "id", jint(id));
    put(o, "name", jstr(a->name));
    put(o, "fps", jint(a->fps));
    for (int i = 0; i < a->n; i++)
        push(keys, key_json(ch, a, i));
    put(o, "keyframes", keys);
    return o;
}

static json_t *animations_json(const struct character *ch)
{
    struct anim_set set = {.n = 0};
    ch->animate(&set);
    json_t *arr = jarr();
    for (int i = 0; i < set.n; i++) {
        push(arr, anim_json(ch, &set.a[i], i));
        free(set.a[i].keys);
    }
    return arr;
}

/* ---- styles, atlases, armature ------------------------------------------------------ */

static json_t *texture_json(const struct tex_def *t, const struct placed *p)
{
    json_t *o = jobj();
    put(o, "name", jstr(t->name));
    put(o, "offset", jvec2(p->x, p->y));
    put(o, "size", jvec2(t->w, t->h));
    put(o, "atlas_idx", jint(t->atlas));
    return o;
}

static json_t *styles_json(const struct character *ch, const struct placed *pl)
{
    json_t *arr = jarr();
    for (int s = 0; s < ST_COUNT; s++) {
        json_t *o = jobj(), *texs = jarr();
        put(o, "id", jint(s));
        put(o, "name", jstr(style_names[s]));
        for (int i = 0; i < ch->tex_count; i++)
            if (ch->texs[i].style == (enum style)s)
                push(texs, texture_json(&ch->texs[i], &pl[i]));
        put(o, "textures", texs);
        push(arr, o);
    }
    return arr;
}

static json_t *atlases_json(const struct image *im)
{
    json_t *arr = jarr();
    for (int a = 0; a < ATLAS_COUNT; a++) {
        char name[32];
        snprintf(name, sizeof name, "atlas%d.png", a);
        json_t *o = jobj();
        put(o, "filename", jstr(name));
        put(o, "size", jvec2(im[a].w, im[a].h));
        push(arr, o);
    }
    return arr;
}

/* The bones, and in 0.7 the visuals[] and physics[] they point into, in bone order. */
static void bones_json(const struct character *ch, json_t *bones, json_t *visuals, json_t *physics)
{
    struct xform *world = xrealloc(NULL, (size_t)ch->bone_count * sizeof *world);
    json_t **holder = xrealloc(NULL, (size_t)ch->bone_count * sizeof *holder);
    rest_pose(ch, world);
    for (int i = 0; i < ch->bone_count; i++) {
        const struct bone_def *b = &ch->bones[i];
        if (b->parent >= i)
            die("%s: bone %d has parent %d", ch->file, i, b->parent);
        if (ch->layout == LAYOUT_05) {
            push(bones, holder[i] = bone_json(ch, i, world));
            continue;
        }
        int visual = -1, phys = -1;
        holder[i] = NULL;
        if (b->tex) {
            visual = (int)json_array_size(visuals);
            push(visuals, holder[i] = visual_json(ch, i));
        }
        if (has_phys(&b->phys)) {
            phys = (int)json_array_size(physics);
            push(physics,
                 physics_json(&b->phys, &world[i], b->parent >= 0 ? &world[b->parent] : NULL));
        }
        push(bones, bone_json_07(ch, i, visual, phys));
    }
    add_meshes(ch, holder);
    free(holder);
    free(world);
}

/* What 0.5 cannot hold must not reach a 0.5 file. */
static void check_layout(const struct character *ch)
{
    if (ch->layout == LAYOUT_07)
        return;
    if (ch->tint_full != 255.0 || ch->pivot_count)
        die("%s: 0.5 tints are 0-255 and 0.5 has no pivots", ch->file);
    for (int f = 0; f < ch->ik_count; f++)
        if (ch->iks[f].mimic)
            die("%s: 0.5 has no mimic_target", ch->file);
}

static json_t *armature_json(const struct character *ch, const struct placed *pl,
                             const struct image *im)
{
    json_t *root = jobj(), *bones = jarr();
    check_layout(ch);
    if (ch->layout == LAYOUT_05) {
        json_t *ik_roots = jarr();
        for (int f = 0; f < ch->ik_count; f++)
            push(ik_roots, jint(ch->iks[f].bones[0]));
        bones_json(ch, bones, NULL, NULL);
        put(root, "version", jstr("0.5.0"));
        put(root, "ik_root_ids", ik_roots);
        put(root, "baked_ik", jbool(0));
        put(root, "img_format", jstr("PNG"));
        put(root, "bones", bones);
        put(root, "animations", animations_json(ch));
        put(root, "atlases", atlases_json(im));
        put(root, "styles", styles_json(ch, pl));
        return root;
    }
    json_t *visuals = jarr(), *families = jarr(), *physics = jarr();
    bones_json(ch, bones, visuals, physics);
    for (int f = 0; f < ch->ik_count; f++)
        push(families, family_json(&ch->iks[f], f));
    put(root, "version", jstr("0.7.0"));
    put(root, "baked_ik", jbool(0));
    put(root, "img_format", jstr("PNG"));
    put(root, "bones", bones);
    put(root, "animations", animations_json(ch));
    put(root, "atlases", atlases_json(im));
    put(root, "styles", styles_json(ch, pl));
    put(root, "visuals", visuals);
    put(root, "inverse_kinematics", families);
    put(root, "physics", physics);
    return root;
}

#define JSON_FLAGS (JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9))

static void write_character(const struct character *ch, const char *dir)
{
    struct placed *pl = xrealloc(NULL, (size_t)ch->tex_count * sizeof *pl);
    struct image im[ATLAS_COUNT];
    draw_atlases(ch->texs, ch->tex_count, pl, im);
    json_t *root = armature_json(ch, pl, im);
    char *text = json_dumps(root, JSON_FLAGS);
    json_decref(root);
    if (!text)
        die("%s: cannot serialise armature.json", ch->file);
    splice_exact(text);
    size_t plen = strlen(dir) + strlen(ch->file) + 2;
    char *path = xrealloc(NULL, plen);
    snprintf(path, plen, "%s/%s", dir, ch->file);
    zip_t *za = archive_create(path);
    archive_add(za, "armature.json", text, strlen(text));
    for (int a = 0; a < ATLAS_COUNT; a++) {
        char name[32];
        void *png;
        size_t len;
        snprintf(name, sizeof name, "atlas%d.png", a);
        encode_png(&im[a], &png, &len);
        archive_add(za, name, png, len);
        free(im[a].px);
    }
    archive_finish(za, path);
    free(path);
    free(pl);
}

/* ---- robot ------------------------------------------------------------------------- */

enum robot_bone {
    R_ROOT,
    R_HIPS,
    R_TORSO,
    R_CHEST_FLEX,
    R_HEAD,
    R_VISOR,
    R_ANTENNA,
    R_BULB,
    R_L_UPPER,
    R_L_FORE,
    R_L_HAND,
    R_L_HAND_TARGET,
    R_R_ARM,
    R_R0,
    R_R1,
    R_R2,
    R_CLAW,
    R_CLAW_TARGET,
    R_L_THIGH,
    R_L_SHIN,
    R_L_FOOT,
    R_L_FOOT_TARGET,
    R_R_THIGH,
    R_R_SHIN,
    R_R_FOOT,
    R_COUNT
};

#define DOWN (-PI / 2.0)

/* No two drawn bones share a zindex at any frame (the Walk and Glitch keys included), so
 * the order needs no tie rule: robot-0.7.skf, whose layout breaks ties the other way round,
 * draws the same. Right side lowest, then the torso, head and left side. */
static const struct bone_def robot_bones[R_COUNT] = {
    [R_ROOT] = {"Root", -1, 0, 0, 0, NULL, 0},
    [R_HIPS] = {"Hips", R_ROOT, 0, 150, 0, "pelvis", 2},
    [R_TORSO] = {"Torso", R_HIPS, 0, 80, 0, "chest", 3},
    [R_CHEST_FLEX] = {"Chest Flex", R_TORSO, 0, 0, 0, NULL, 0},
    [R_HEAD] = {"Head", R_TORSO, 0, 112, 0, "head", 6},
    [R_VISOR] = {"Visor", R_HEAD, 0, 6, 0, "visor", 7, .tinted = 1, .tint = {220, 255, 255, 255}},
    [R_ANTENNA] = {"Antenna", R_HEAD, 30, 48, 0.15, "antenna", 4, .hideable = 1,
                   .phys = {.rot_damp = 4}},
    [R_BULB] = {"Bulb", R_ANTENNA, 0, 30, 0, "bulb", 8,
                .phys = {.pos_damp = 6, .pos_ratio = 0.5, .scale_damp = 10, .scale_ratio = 0.4}},
    [R_L_UPPER] = {"L Upper Arm", R_TORSO, -72, 50, DOWN - 0.15, "upper_arm", 9},
    [R_L_FORE] = {"L Forearm", R_L_UPPER, 58, 0, 0.1, "forearm", 10},
    [R_L_HAND] = {"L Hand", R_L_FORE, 54, 0, 0, "hand", 11},
    [R_L_HAND_TARGET] = {"L Hand Target", R_ROOT, -104, 176, 0, NULL, 0},
    [R_R_ARM] = {"R Arm", R_TORSO, 72, 50, 0, "arm_hose", 0},
    [R_R0] = {"R Arm 0", R_R_ARM, 0, 0, 0, NULL, 0},
    [R_R1] = {"R Arm 1", R_R0, 42, 0, 0, NULL, 0},
    [R_R2] = {"R Arm 2", R_R1, 42, 0, 0, NULL, 0},
    [R_CLAW] = {"R Claw", R_R2, 30, 0, 0, "claw", 1},
    [R_CLAW_TARGET] = {"R Claw Target", R_ROOT, 172, 258, 0, NULL, 0},
    [R_L_THIGH] = {"L Thigh", R_HIPS, -28, -14, DOWN, "thigh", 12},
    [R_L_SHIN] = {"L Shin", R_L_THIGH, 66, 0, 0.15, "shin", 13},
    [R_L_FOOT] = {"L Foot", R_L_SHIN, 60, 0, -0.15, "foot", 14},
    [R_L_FOOT_TARGET] = {"L Foot Target", R_ROOT, -34, 12, 0, NULL, 0},
    [R_R_THIGH] = {"R Thigh", R_HIPS, 28, -14, DOWN + 0.05, "thigh", -1},
    [R_R_SHIN] = {"R Shin", R_R_THIGH, 66, 0, -0.1, "shin", -3},
    [R_R_FOOT] = {"R Foot", R_R_SHIN, 60, 0, 0.05, "foot", -2},
};

static const struct ik_def robot_iks[] = {
    {{R_L_UPPER, R_L_FORE, R_L_HAND}, 3, R_L_HAND_TARGET, "FABRIK", "CounterClockwise", 0},
    {{R_R0, R_R1, R_R2, R_CLAW}, 4, R_CLAW_TARGET, "Arc", "Clockwise", 0},
    {{R_L_THIGH, R_L_SHIN, R_L_FOOT}, 3, R_L_FOOT_TARGET, "FABRIK", "None", 0},
};

static const struct grid_mesh robot_grids[] = {
    {R_TORSO, R_CHEST_FLEX, 4, 5, 124, 140, {1.0, 0.7, 0.4, 0.15, 0.0}},
};

static const struct path_mesh robot_paths[] = {
    {R_R_ARM, {R_R0, R_R1, R_R2, R_CLAW}, 4, 17, 8, 6},
};

#define STEEL_EDGE 0x2b313a

static const struct tex_def robot_texs[] = {
    {"pelvis", ST_DEFAULT, 0, 92, 44, SH_RRECT, 0x7f8c99, STEEL_EDGE, PV_CENTRE},
    {"chest", ST_DEFAULT, 0, 124, 140, SH_RRECT, 0x8fa7bf, STEEL_EDGE, PV_CENTRE},
    {"head", ST_DEFAULT, 0, 104, 88, SH_RRECT, 0xa3b5c7, STEEL_EDGE, PV_CENTRE},
    {"visor", ST_DEFAULT, 0, 76, 32, SH_CAPSULE, 0x4fe3ff, 0x12414d, PV_CENTRE},
    {"visor_blink", ST_DEFAULT, 0, 76, 32, SH_SLIT, 0x4fe3ff, 0x12414d, PV_CENTRE},
    {"antenna", ST_DEFAULT, 0, 32, 68, SH_STALK, 0x5d6a78, 0x22282f, PV_BASE},
    {"upper_arm", ST_DEFAULT, 0, 132, 32, SH_CAPSULE, 0x8094a8, STEEL_EDGE, PV_END},
    {"forearm", ST_DEFAULT, 0, 124, 32, SH_CAPSULE, 0x8a9db0, STEEL_EDGE, PV_END},
    {"thigh", ST_DEFAULT, 0, 150, 36, SH_CAPSULE, 0x74869a, STEEL_EDGE, PV_END},
    {"shin", ST_DEFAULT, 0, 136, 32, SH_CAPSULE, 0x8094a8, STEEL_EDGE, PV_END},
    {"bulb", ST_DEFAULT, 1, 40, 40, SH_GLOW, 0xffd23c, 0xa06a00, PV_CENTRE},
    {"hand", ST_DEFAULT, 1, 38, 38, SH_ELLIPSE, 0x5d6a78, 0x22282f, PV_CENTRE},
    {"arm_hose", ST_DEFAULT, 1, 160, 34, SH_TUBE, 0xe0892c, 0x5a2e08, PV_CENTRE},
    {"claw", ST_DEFAULT, 1, 44, 40, SH_RRECT, 0x4c5560, 0x1b1f24, PV_CENTRE},
    {"foot", ST_DEFAULT, 1, 32, 60, SH_RRECT, 0x3d4550, 0x15191e, PV_CENTRE},
    {"chest", ST_RED, 1, 124, 140, SH_RRECT, 0xc84a3c, 0x3a1410, PV_CENTRE},
    {"head", ST_RED, 1, 104, 88, SH_RRECT, 0xd65a48, 0x3a1410, PV_CENTRE},
    {"upper_arm", ST_RED, 1, 132, 32, SH_CAPSULE, 0xb8402f, 0x3a1410, PV_END},
    {"forearm", ST_RED, 1, 124, 32, SH_CAPSULE, 0xc04a36, 0x3a1410, PV_END},
    {"thigh", ST_RED, 1, 150, 36, SH_CAPSULE, 0xa8382a, 0x3a1410, PV_END},
    {"visor", ST_NIGHT, 1, 76, 32, SH_CAPSULE, 0xff4fd8, 0x4a0f3e, PV_CENTRE},
    {"bulb", ST_NIGHT, 1, 40, 40, SH_GLOW, 0x7f6bff, 0x2a1f80, PV_CENTRE},
    {"hand", ST_NIGHT, 1, 38, 38, SH_ELLIPSE, 0x2a3350, 0x0c0f1a, PV_CENTRE},
    {"foot", ST_NIGHT, 1, 32, 60, SH_RRECT, 0x1f2740, 0x0a0d16, PV_CENTRE},
};

/* Breathing, a look around, a blink and a wobbling claw. */
static void robot_idle(struct anim_set *set)
{
    struct anim *a = anim_new(set, "Idle", 24);
    TRACK(a, R_CHEST_FLEX, EL_SCALE_X, H_EASE, FR(0, 24, 48), VA(1, 1.05, 1));
    TRACK(a, R_CHEST_FLEX, EL_SCALE_Y, H_EASE, FR(0, 24, 48), VA(1, 1.03, 1));
    TRACK(a, R_HEAD, EL_ROT, H_EASE, FR(0, 12, 36, 48), VA(0, 0.06, -0.06, 0));
    TRACK(a, R_HIPS, EL_POS_Y, H_EASE, FR(0, 24, 48), VA(150, 146, 150));
    TRACK(a, R_L_HAND_TARGET, EL_POS_Y, H_LINEAR, FR(0, 24, 48), VA(176, 170, 176));
    TRACK(a, R_CLAW_TARGET, EL_POS_X, H_EASE, FR(0, 24, 48), VA(172, 162, 172));
    TRACK(a, R_CLAW_TARGET, EL_POS_Y, H_EASE, FR(0, 16, 32, 48), VA(258, 250, 266, 258));
    TRACK_STR(a, R_VISOR, EL_TEXTURE, FR(0, 30, 33), SV("visor", "visor_blink", "visor"));
    TRACK(a, R_VISOR, EL_TINT_A, H_LINEAR, FR(0, 24, 48), VA(255, 200, 255));
}

/* A walk cycle: the left foot follows its IK target, the right leg is keyed by hand. */
static void robot_walk(struct anim_set *set)
{
    struct anim *a = anim_new(set, "Walk", 30);
    TRACK(a, R_L_FOOT_TARGET, EL_POS_X, H_LINEAR, FR(0, 20, 40), VA(-70, 10, -70));
    TRACK(a, R_L_FOOT_TARGET, EL_POS_Y, H_EASE, FR(0, 10, 20, 40), VA(12, 44, 12, 12));
    TRACK(a, R_R_THIGH, EL_ROT, H_EASE, FR(0, 20, 40), VA(DOWN + 0.4, DOWN - 0.35, DOWN + 0.4));
    TRACK(a, R_R_SHIN, EL_ROT, H_EASE, FR(0, 10, 20, 30, 40), VA(-0.1, -0.1, -0.1, -0.7, -0.1));
    TRACK(a, R_HIPS, EL_POS_Y, H_EASE, FR(0, 10, 20, 30, 40), VA(150, 157, 150, 157, 150));
    TRACK(a, R_TORSO, EL_ROT, H_EASE, FR(0, 20, 40), VA(0.03, -0.03, 0.03));
    TRACK(a, R_L_HAND_TARGET, EL_POS_X, H_EASE, FR(0, 20, 40), VA(-70, -130, -70));
    TRACK(a, R_CLAW_TARGET, EL_POS_X, H_EASE, FR(0, 20, 40), VA(180, 140, 180));
    TRACK(a, R_CLAW_TARGET, EL_POS_Y, H_EASE, FR(0, 20, 40), VA(250, 230, 250));
    TRACK(a, R_R_THIGH, EL_ZINDEX, H_SNAP, FR(0, 20, 40), VA(-1, 15, -1));
    TRACK(a, R_R_SHIN, EL_ZINDEX, H_SNAP, FR(0, 20, 40), VA(-3, 16, -3));
}

/* Waves the claw overhead; the arm's bend flips, the left leg gains a constraint. */
static void robot_wave(struct anim_set *set)
{
    struct anim *a = anim_new(set, "Wave", 60);
    TRACK(a, R_CLAW_TARGET, EL_POS_X, H_EASE, FR(0, 15, 30, 45, 60, 75, 90),
          VA(172, 150, 175, 125, 175, 125, 172));
    TRACK(a, R_CLAW_TARGET, EL_POS_Y, H_EASE, FR(0, 15, 75, 90), VA(258, 370, 370, 258));
    TRACK_STR(a, R_R0, EL_IK_CONSTRAINT, FR(0, 45, 90),
              SV("Clockwise", "CounterClockwise", "Clockwise"));
    TRACK_STR(a, R_L_THIGH, EL_IK_CONSTRAINT, FR(0, 50, 90), SV("None", "Clockwise", "None"));
    TRACK(a, R_VISOR, EL_TINT_R, H_LINEAR, FR(0, 30, 60, 90), VA(220, 120, 120, 220));
    TRACK(a, R_VISOR, EL_TINT_G, H_LINEAR, FR(0, 30, 60, 90), VA(255, 255, 255, 255));
    TRACK(a, R_VISOR, EL_TINT_B, H_LINEAR, FR(0, 30, 60, 90), VA(255, 80, 80, 255));
    TRACK(a, R_BULB, EL_SCALE_X, H_LINEAR, FR(0, 20, 40, 90), VA(1, 1.4, 1, 1));
    TRACK(a, R_BULB, EL_SCALE_Y, H_LINEAR, FR(0, 20, 40, 90), VA(1, 1.4, 1, 1));
    TRACK(a, R_HEAD, EL_ROT, H_SNAP, FR(0, 30, 60, 90), VA(0, -0.12, 0.08, 0));
    TRACK(a, R_ANTENNA, EL_ROT, H_EASE, FR(0, 45, 90), VA(0.15, -0.25, 0.15));
}

/* A short malfunction: snapping jitter, a hidden antenna, flicker and solver switches. */
static void robot_glitch(struct anim_set *set)
{
    struct anim *a = anim_new(set, "Glitch", 24);
    TRACK(a, R_ANTENNA, EL_HIDDEN, H_SNAP, FR(0, 4, 9, 13, 15, 20), VA(0, 1, 0, 1, 0, 0));
    TRACK(a, R_HIPS, EL_POS_X, H_SNAP, FR(0, 3, 6, 10, 14, 20), VA(0, 6, -5, 3, -4, 0));
    TRACK_STR(a, R_VISOR, EL_TEXTURE, FR(0, 5, 8, 20),
              SV("visor", "visor_blink", "visor", "visor"));
    TRACK(a, R_VISOR, EL_ZINDEX, H_SNAP, FR(0, 6, 12, 20), VA(7, 5, 7, 7));
    TRACK(a, R_VISOR, EL_TINT_G, H_LINEAR, FR(0, 10, 20), VA(255, 60, 255));
    TRACK(a, R_VISOR, EL_TINT_A, H_SNAP, FR(0, 2, 4, 20), VA(255, 90, 255, 255));
    TRACK_STR(a, R_R0, EL_IK_MODE, FR(0, 8, 16, 20), SV("Arc", "FABRIK", "Arc", "Arc"));
    TRACK(a, R_TORSO, EL_SCALE_X, H_SNAP, FR(0, 7, 11, 20), VA(1, 1.08, 1, 1));
    TRACK(a, R_L_HAND_TARGET, EL_POS_Y, H_LINEAR, FR(0, 10, 20), VA(176, 210, 176));
}

static void robot_animate(struct anim_set *set)
{
    robot_idle(set);
    robot_walk(set);
    robot_wave(set);
    robot_glitch(set);
}

static const struct character robot = {.file = "robot.skf",
                                       .layout = LAYOUT_05,
                                       .tint_full = 255.0,
                                       .bones = robot_bones,
                                       .bone_count = R_COUNT,
                                       .iks = robot_iks,
                                       .ik_count = COUNT(robot_iks),
                                       .grids = robot_grids,
                                       .grid_count = COUNT(robot_grids),
                                       .paths = robot_paths,
                                       .path_count = COUNT(robot_paths),
                                       .texs = robot_texs,
                                       .tex_count = COUNT(robot_texs),
                                       .animate = robot_animate};

/* ---- critter ------------------------------------------------------------------------ */

enum critter_bone {
    C_ROOT,
    C_BODY,
    C_BODY_FLEX,
    C_HEAD,
    C_EYE,
    C_EAR,
    C_STALK,
    C_TIP,
    C_TAIL,
    C_T0,
    C_T1,
    C_T2,
    C_T3,
    C_FRONT_LEG,
    C_FRONT_PAW,
    C_FRONT_TARGET,
    C_BACK_THIGH,
    C_BACK_SHIN,
    C_BACK_FOOT,
    C_BACK_TARGET,
    C_COUNT
};

static const struct bone_def critter_bones[C_COUNT] = {
    [C_ROOT] = {"Root", -1, 0, 0, 0, NULL, 0},
    [C_BODY] = {"Body", C_ROOT, 0, 72, 0, "body", 3, .tinted = 1, .tint = {255, 255, 255, 255}},
    [C_BODY_FLEX] = {"Body Flex", C_BODY, 0, 0, 0, NULL, 0,
                     .phys = {.scale_damp = 8, .scale_ratio = -0.5}},
    [C_HEAD] = {"Head", C_BODY, 58, 30, 0, "head", 5},
    [C_EYE] = {"Eye", C_HEAD, 16, 8, 0, "eye", 7},
    [C_EAR] = {"Ear", C_HEAD, -20, 30, 0.4, "ear", 4, .phys = {.pos_damp = 5, .pos_ratio = -0.6}},
    [C_STALK] = {"Antenna", C_HEAD, 4, 34, 0.2, "stalk", 4, .hideable = 1},
    [C_TIP] = {"Antenna Tip", C_STALK, 0, 40, 0, "antenna_bulb", 6,
               .phys = {.sway = 1.0, .bounce = 0.75}},
    [C_TAIL] = {"Tail", C_BODY, -62, 10, 2.6, "tail", 2},
    [C_T0] = {"Tail 0", C_TAIL, 0, 0, 0, NULL, 0},
    [C_T1] = {"Tail 1", C_T0, 36, 0, -0.3, NULL, 0, .phys = {.rot_damp = 5}},
    [C_T2] = {"Tail 2", C_T1, 32, 0, -0.3, NULL, 0, .phys = {.rot_damp = 3}},
    [C_T3] = {"Tail 3", C_T2, 28, 0, -0.2, NULL, 0},
    [C_FRONT_LEG] = {"Front Leg", C_BODY, 34, -28, DOWN, "leg", 4},
    [C_FRONT_PAW] = {"Front Paw", C_FRONT_LEG, 40, 0, 0, "paw", 5},
    [C_FRONT_TARGET] = {"Front Target", C_ROOT, 40, 6, 0, NULL, 0},
    [C_BACK_THIGH] = {"Back Thigh", C_BODY, -36, -26, DOWN - 0.3, "thigh", 1},
    [C_BACK_SHIN] = {"Back Shin", C_BACK_THIGH, 26, 0, 0.7, "shin", 1},
    [C_BACK_FOOT] = {"Back Foot", C_BACK_SHIN, 26, 0, -0.2, "paw", 2},
    [C_BACK_TARGET] = {"Back Target", C_ROOT, -30, 4, 0, NULL, 0},
};

static const struct ik_def critter_iks[] = {
    {{C_FRONT_LEG, C_FRONT_PAW}, 2, C_FRONT_TARGET, "FABRIK", "Clockwise", 0},
    {{C_BACK_THIGH, C_BACK_SHIN, C_BACK_FOOT}, 3, C_BACK_TARGET, "FABRIK", "CounterClockwise", 0},
};

static const struct grid_mesh critter_grids[] = {
    {C_BODY, C_BODY_FLEX, 5, 4, 144, 100, {1.0, 0.6, 0.25, 0.0}},
};

static const struct path_mesh critter_paths[] = {
    {C_TAIL, {C_T0, C_T1, C_T2, C_T3}, 4, 20, 10, 22},
};

#define LEAF_EDGE 0x24502a

static const struct tex_def critter_texs[] = {
    {"body", ST_DEFAULT, 0, 144, 100, SH_ELLIPSE, 0x6cc46c, LEAF_EDGE, PV_CENTRE},
    {"head", ST_DEFAULT, 0, 88, 76, SH_ELLIPSE, 0x7fd47a, LEAF_EDGE, PV_CENTRE},
    {"eye", ST_DEFAULT, 0, 32, 32, SH_EYE, 0xffffff, 0x1a1a1a, PV_CENTRE},
    {"eye_closed", ST_DEFAULT, 0, 32, 32, SH_SLIT, 0x1a1a1a, 0x1a1a1a, PV_CENTRE},
    {"ear", ST_DEFAULT, 0, 32, 48, SH_ELLIPSE, 0xf29bb0, 0x6b2a3a, PV_CENTRE},
    {"leg", ST_DEFAULT, 0, 88, 32, SH_CAPSULE, 0x62b062, LEAF_EDGE, PV_END},
    {"paw", ST_DEFAULT, 0, 36, 32, SH_ELLIPSE, 0x3f7a3f, LEAF_EDGE, PV_CENTRE},
    {"thigh", ST_DEFAULT, 0, 70, 34, SH_CAPSULE, 0x5ea85e, LEAF_EDGE, PV_END},
    {"shin", ST_DEFAULT, 0, 68, 32, SH_CAPSULE, 0x62b062, LEAF_EDGE, PV_END},
    {"stalk", ST_DEFAULT, 1, 32, 88, SH_STALK, 0x5aa75a, LEAF_EDGE, PV_BASE},
    {"antenna_bulb", ST_DEFAULT, 1, 32, 32, SH_GLOW, 0xfff27a, 0x8a7a10, PV_CENTRE},
    {"tail", ST_DEFAULT, 1, 150, 40, SH_TAIL, 0x6cc46c, LEAF_EDGE, PV_CENTRE},
    {"body", ST_RED, 1, 144, 100, SH_ELLIPSE, 0xe07a5f, 0x5a2418, PV_CENTRE},
    {"head", ST_RED, 1, 88, 76, SH_ELLIPSE, 0xeb8a6e, 0x5a2418, PV_CENTRE},
    {"tail", ST_RED, 1, 150, 40, SH_TAIL, 0xe07a5f, 0x5a2418, PV_CENTRE},
    {"ear", ST_RED, 1, 32, 48, SH_ELLIPSE, 0xffc36b, 0x6b4a10, PV_CENTRE},
    {"eye", ST_NIGHT, 1, 32, 32, SH_EYE, 0xc8f0ff, 0x102040, PV_CENTRE},
    {"antenna_bulb", ST_NIGHT, 1, 32, 32, SH_GLOW, 0x7ff0ff, 0x106070, PV_CENTRE},
    {"paw", ST_NIGHT, 1, 36, 32, SH_ELLIPSE, 0x334466, 0x0f1522, PV_CENTRE},
    {"stalk", ST_NIGHT, 1, 32, 88, SH_STALK, 0x2f4f6f, 0x0f1a26, PV_BASE},
};

/* Breathing, a wagging tail, a blink and a drifting antenna. */
static void critter_idle(struct anim_set *set)
{
    struct anim *a = anim_new(set, "Idle", 30);
    TRACK(a, C_BODY_FLEX, EL_SCALE_Y, H_EASE, FR(0, 30, 60), VA(1, 1.06, 1));
    TRACK(a, C_BODY_FLEX, EL_SCALE_X, H_EASE, FR(0, 30, 60), VA(1, 0.97, 1));
    TRACK(a, C_HEAD, EL_ROT, H_EASE, FR(0, 30, 60), VA(0, 0.08, 0));
    TRACK(a, C_T0, EL_ROT, H_EASE, FR(0, 30, 60), VA(0, 0.25, 0));
    TRACK(a, C_T2, EL_ROT, H_EASE, FR(0, 30, 60), VA(-0.3, -0.6, -0.3));
    TRACK_STR(a, C_EYE, EL_TEXTURE, FR(0, 40, 44, 60), SV("eye", "eye_closed", "eye", "eye"));
    TRACK(a, C_STALK, EL_ROT, H_LINEAR, FR(0, 15, 45, 60), VA(0.2, 0.35, 0.05, 0.2));
}

/* A hop: squash and stretch, tucked legs, the front knee unconstrained in the air. */
static void critter_hop(struct anim_set *set)
{
    struct anim *a = anim_new(set, "Hop", 60);
    TRACK(a, C_ROOT, EL_POS_Y, H_EASE, FR(0, 10, 25, 40, 45), VA(0, 0, 60, 0, 0));
    TRACK(a, C_BODY_FLEX, EL_SCALE_Y, H_EASE, FR(0, 8, 14, 38, 45), VA(1, 0.85, 1.1, 0.88, 1));
    TRACK(a, C_BODY_FLEX, EL_SCALE_X, H_EASE, FR(0, 8, 14, 38, 45), VA(1, 1.1, 0.95, 1.1, 1));
    TRACK(a, C_FRONT_TARGET, EL_POS_X, H_EASE, FR(0, 25, 45), VA(40, 58, 40));
    TRACK(a, C_FRONT_TARGET, EL_POS_Y, H_EASE, FR(0, 25, 45), VA(6, 22, 6));
    TRACK(a, C_BACK_TARGET, EL_POS_X, H_EASE, FR(0, 25, 45), VA(-30, -50, -30));
    TRACK(a, C_BACK_TARGET, EL_POS_Y, H_EASE, FR(0, 25, 45), VA(4, 24, 4));
    TRACK_STR(a, C_FRONT_LEG, EL_IK_CONSTRAINT, FR(0, 20, 40, 45),
              SV("Clockwise", "None", "Clockwise", "Clockwise"));
    TRACK(a, C_T1, EL_ROT, H_EASE, FR(0, 25, 45), VA(-0.3, 0.1, -0.3));
}

/* Sniffing in snaps: head jerks, a blush, a flicking ear, a hidden antenna. */
static void critter_sniff(struct anim_set *set)
{
    struct anim *a = anim_new(set, "Sniff", 24);
    TRACK(a, C_HEAD, EL_POS_X, H_SNAP, FR(0, 4, 8, 12, 16, 32), VA(58, 64, 58, 64, 58, 58));
    TRACK(a, C_HEAD, EL_ROT, H_SNAP, FR(0, 4, 8, 12, 16, 32), VA(0, -0.1, 0, -0.1, 0, 0));
    TRACK(a, C_EAR, EL_ROT, H_LINEAR, FR(0, 8, 16, 32), VA(0.4, 0.8, 0.4, 0.4));
    TRACK(a, C_EAR, EL_ZINDEX, H_SNAP, FR(0, 8, 24, 32), VA(4, 8, 4, 4));
    TRACK(a, C_BODY, EL_TINT_R, H_LINEAR, FR(0, 16, 32), VA(255, 250, 255));
    TRACK(a, C_BODY, EL_TINT_G, H_LINEAR, FR(0, 16, 32), VA(255, 200, 255));
    TRACK(a, C_BODY, EL_TINT_B, H_LINEAR, FR(0, 16, 32), VA(255, 190, 255));
    TRACK(a, C_BODY, EL_TINT_A, H_LINEAR, FR(0, 16, 32), VA(255, 245, 255));
    TRACK(a, C_STALK, EL_HIDDEN, H_SNAP, FR(0, 10, 20, 32), VA(0, 1, 0, 0));
    TRACK_STR(a, C_EYE, EL_TEXTURE, FR(0, 10, 20, 32), SV("eye", "eye_closed", "eye", "eye"));
}

/* Curls the tail, pulses the antenna light and paws at the ground with the front leg. */
static void critter_curl(struct anim_set *set)
{
    struct anim *a = anim_new(set, "Curl", 30);
    TRACK(a, C_T0, EL_ROT, H_EASE, FR(0, 35, 75), VA(0, -0.2, 0));
    TRACK(a, C_T1, EL_ROT, H_EASE, FR(0, 35, 75), VA(-0.3, -0.45, -0.3));
    TRACK(a, C_T2, EL_ROT, H_EASE, FR(0, 35, 75), VA(-0.3, -0.5, -0.3));
    TRACK(a, C_T3, EL_ROT, H_EASE, FR(0, 35, 75), VA(-0.2, -0.5, -0.2));
    TRACK(a, C_TIP, EL_SCALE_X, H_LINEAR, FR(0, 20, 40, 75), VA(1, 1.3, 0.9, 1));
    TRACK(a, C_TIP, EL_SCALE_Y, H_LINEAR, FR(0, 20, 40, 75), VA(1, 1.3, 0.9, 1));
    TRACK(a, C_FRONT_TARGET, EL_POS_X, H_LINEAR, FR(0, 15, 30, 45, 60, 75),
          VA(40, 62, 40, 62, 40, 40));
    TRACK(a, C_FRONT_TARGET, EL_POS_Y, H_EASE, FR(0, 8, 15, 38, 45, 75), VA(6, 20, 6, 20, 6, 6));
}

static void critter_animate(struct anim_set *set)
{
    critter_idle(set);
    critter_hop(set);
    critter_sniff(set);
    critter_curl(set);
}

static const struct character critter = {.file = "critter.skf",
                                         .layout = LAYOUT_05,
                                         .tint_full = 255.0,
                                         .bones = critter_bones,
                                         .bone_count = C_COUNT,
                                         .iks = critter_iks,
                                         .ik_count = COUNT(critter_iks),
                                         .grids = critter_grids,
                                         .grid_count = COUNT(critter_grids),
                                         .paths = critter_paths,
                                         .path_count = COUNT(critter_paths),
                                         .texs = critter_texs,
                                         .tex_count = COUNT(critter_texs),
                                         .animate = critter_animate};

/* ---- lamp (0.7 only) ---------------------------------------------------------------- */

enum lamp_bone {
    L_ROOT,
    L_BASE,
    L_LOWER,
    L_UPPER,
    L_HEAD,
    L_BULB,
    L_BEAM,
    L_BEAM_FLEX,
    L_TARGET,
    L_COUNT
};

/* Rest pose: the lower arm leans back at 1.35 rad, the upper arm points at -0.2 and the head
 * at -0.8 (down and forward); "Head Target" sits where that puts the head, turned like it.
 * Both arm segments share zindex 3: the 0.7 rule draws the lower id first, so the upper arm
 * covers the elbow. */
static const struct bone_def lamp_bones[L_COUNT] = {
    [L_ROOT] = {"Root", -1, 0, 0, 0, NULL, 0},
    [L_BASE] = {"Base", L_ROOT, 0, 12, 0, "base", 1},
    [L_LOWER] = {"Lower Arm", L_BASE, 0, 8, 1.35, "arm", 3},
    [L_UPPER] = {"Upper Arm", L_LOWER, 96, 0, -1.55, "arm", 3},
    [L_HEAD] = {"Head", L_UPPER, 96, 0, -0.6, "shade", 5},
    [L_BULB] = {"Bulb", L_HEAD, 40, 0, 0, "bulb", 6, .tinted = 1, .tint = {1, 0.92, 0.62, 1}},
    [L_BEAM] = {"Beam", L_HEAD, 44, 0, 0, "beam", 2, .tinted = 1, .tint = {1, 0.96, 0.78, 0.8}},
    [L_BEAM_FLEX] = {"Beam Flex", L_BEAM, 0, 0, 0, NULL, 0,
                     .phys = {.scale_damp = 6, .scale_ratio = -0.3}},
    [L_TARGET] = {"Head Target", L_ROOT, 115.11, 94.6, -0.8, NULL, 0},
};

static const struct ik_def lamp_iks[] = {
    {{L_LOWER, L_UPPER, L_HEAD}, 3, L_TARGET, "FABRIK", "Clockwise", 0},
};

/* What 0.5 cannot say. The arm segments are plain capsules moved along the bone by pivot_pos
 * (0.5 needs the padded PV_END textures for that). The shade is drawn upright in its texture,
 * opening down: pivot_rot turns the opening toward the head's +x, pivot_pos moves it off the
 * hinge and pivot_scale widens it. The beam mesh is a vertical cone in its texture, turned the
 * same way, stretched by pivot_scale and pushed out by pivot_pos until its tip meets the
 * shade's opening (pivot_pos is along the bone's axes, in texture widths: 0.68 * 100 is half
 * the beam's length, 160 * 0.85 / 2). */
static const struct pivot_def lamp_pivots[] = {
    {L_LOWER, 0.4, 0, 0, 1, 1},
    {L_UPPER, 0.4, 0, 0, 1, 1},
    {L_HEAD, 0.2, 0.05, PI / 2.0, 1.1, 0.95},
    {L_BEAM, 0.68, 0, PI / 2.0, 1.25, 0.85},
};

/* The beam's far rows follow "Beam Flex", whose ScaleX spreads them (across the cone: scale
 * applies before pivot_rot); its scale physics lets the spread trail the keys. */
static const struct grid_mesh lamp_grids[] = {
    {L_BEAM, L_BEAM_FLEX, 3, 4, 100, 160, {0.0, 0.35, 0.7, 1.0}},
};

static const struct tex_def lamp_texs[] = {
    {"base", ST_DEFAULT, 0, 150, 24, SH_RRECT, 0x4a5a66, 0x161c21, PV_CENTRE},
    {"arm", ST_DEFAULT, 0, 120, 18, SH_CAPSULE, 0xb8c4cc, 0x3a444c, PV_CENTRE},
    {"shade", ST_DEFAULT, 0, 76, 60, SH_SHADE, 0x2e8b7a, 0x0f3029, PV_CENTRE},
    {"bulb", ST_DEFAULT, 0, 36, 36, SH_GLOW, 0xfff2b0, 0x8a7a10, PV_CENTRE},
    {"beam", ST_DEFAULT, 1, 100, 160, SH_BEAM, 0xfff3c4, 0xfff3c4, PV_CENTRE},
    {"shade", ST_RED, 1, 76, 60, SH_SHADE, 0xd2453c, 0x4a1410, PV_CENTRE},
    {"base", ST_RED, 1, 150, 24, SH_RRECT, 0x6a2a26, 0x200c0a, PV_CENTRE},
    {"bulb", ST_NIGHT, 1, 36, 36, SH_GLOW, 0xcfe8ff, 0x10406a, PV_CENTRE},
    {"beam", ST_NIGHT, 1, 100, 160, SH_BEAM, 0xd8ecff, 0xd8ecff, PV_CENTRE},
};

/* The head's world rotation with mimic_target off and the target held at (135, 150): what
 * the target turns to before mimic_target switches on and after it switches off, so neither
 * switch jumps. */
#define LAMP_LOOK_ROT (-0.065)

/* The lamp rises, mimic_target hands the head to the target's rotation, the head looks up and
 * tilts while the arm holds still, then gives the rotation back and settles. The keys sit on
 * "Head", the chain's last bone, not on the family's root. */
static void lamp_look(struct anim_set *set)
{
    struct anim *a = anim_new(set, "Look", 30);
    TRACK(a, L_TARGET, EL_POS_X, H_EASE, FR(0, 16, 56, 72), VA(115.11, 135, 135, 115.11));
    TRACK(a, L_TARGET, EL_POS_Y, H_EASE, FR(0, 16, 56, 72), VA(94.6, 150, 150, 94.6));
    TRACK(a, L_TARGET, EL_ROT, H_EASE, FR(0, 16, 20, 30, 36, 44, 52, 56, 72),
          VA(-0.8, LAMP_LOOK_ROT, LAMP_LOOK_ROT, 0.35, 0.15, 0.45, LAMP_LOOK_ROT, LAMP_LOOK_ROT,
             -0.8));
    TRACK(a, L_HEAD, EL_MIMIC_TARGET, H_SNAP, FR(0, 20, 54, 72), VA(0, 1, 0, 0));
    TRACK(a, L_BULB, EL_TINT_B, H_LINEAR, FR(0, 30, 54, 72), VA(0.62, 0.9, 0.9, 0.62));
    TRACK(a, L_BULB, EL_TINT_G, H_LINEAR, FR(0, 30, 54, 72), VA(0.92, 1, 1, 0.92));
    TRACK(a, L_BEAM, EL_TINT_A, H_LINEAR, FR(0, 30, 54, 72), VA(0.8, 0.95, 0.95, 0.8));
}

/* A stretch to full reach, where the arm is straight and the IkConstraint keys on "Upper
 * Arm" (a chain bone, not the root) flip the elbow without a jump; the lamp bows with its
 * elbow the other way, stretches again and flips back. The beam narrows and spreads. */
static void lamp_stretch(struct anim_set *set)
{
    struct anim *a = anim_new(set, "Stretch", 60);
    TRACK(a, L_TARGET, EL_POS_X, H_EASE, FR(0, 30, 60, 90, 120), VA(115.11, 60, 40, 60, 115.11));
    TRACK(a, L_TARGET, EL_POS_Y, H_EASE, FR(0, 30, 60, 90, 120), VA(94.6, 225, 140, 225, 94.6));
    TRACK_STR(a, L_UPPER, EL_IK_CONSTRAINT, FR(0, 30, 90, 120),
              SV("Clockwise", "CounterClockwise", "Clockwise", "Clockwise"));
    TRACK(a, L_BEAM_FLEX, EL_SCALE_X, H_EASE, FR(0, 30, 60, 90, 120), VA(1, 0.7, 1.3, 0.7, 1));
    TRACK(a, L_HEAD, EL_ROT, H_EASE, FR(0, 60, 120), VA(-0.6, -0.2, -0.6));
}

/* A failing bulb: the light dims and flickers in snaps and the beam drops out with it. */
static void lamp_flicker(struct anim_set *set)
{
    struct anim *a = anim_new(set, "Flicker", 24);
    TRACK(a, L_BULB, EL_TINT_A, H_SNAP, FR(0, 3, 5, 9, 11, 24), VA(1, 0.3, 1, 0.2, 1, 1));
    TRACK(a, L_BULB, EL_TINT_G, H_LINEAR, FR(0, 9, 14, 24), VA(0.92, 0.6, 0.92, 0.92));
    TRACK(a, L_BEAM, EL_HIDDEN, H_SNAP, FR(0, 3, 5, 9, 11, 24), VA(0, 1, 0, 1, 0, 0));
    TRACK(a, L_HEAD, EL_ROT, H_EASE, FR(0, 4, 12, 24), VA(-0.6, -0.68, -0.58, -0.6));
}

static void lamp_animate(struct anim_set *set)
{
    lamp_look(set);
    lamp_stretch(set);
    lamp_flicker(set);
}

static const struct character lamp = {.file = "lamp-0.7.skf",
                                      .layout = LAYOUT_07,
                                      .tint_full = 1.0,
                                      .pivots = lamp_pivots,
                                      .pivot_count = COUNT(lamp_pivots),
                                      .bones = lamp_bones,
                                      .bone_count = L_COUNT,
                                      .iks = lamp_iks,
                                      .ik_count = COUNT(lamp_iks),
                                      .grids = lamp_grids,
                                      .grid_count = COUNT(lamp_grids),
                                      .texs = lamp_texs,
                                      .tex_count = COUNT(lamp_texs),
                                      .animate = lamp_animate};

/* ---- stress files (--stress) -------------------------------------------------------- */

/* A 64x64 atlas of one texture: a soft diagonal gradient, opaque. */
static void stress_atlas(void **png, size_t *len)
{
    struct image im = {64, 64, xrealloc(NULL, 64 * 64 * 4)};
    for (int y = 0; y < 64; y++)
        for (int x = 0; x < 64; x++) {
            unsigned char *p = im.px + 4 * (y * 64 + x);
            p[0] = (unsigned char)(120 + x * 2);
            p[1] = (unsigned char)(60 + y * 2);
            p[2] = (unsigned char)(200 - x - y);
            p[3] = 255;
        }
    encode_png(&im, png, len);
    free(im.px);
}

/* Appends to a growing string; every failure is fatal. */
static void sappend(char **s, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        die("cannot format JSON");
    *s = xrealloc(*s, *len + (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(*s + *len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    *len += (size_t)n;
}

/* A 0.5 armature.json with the stress atlas's one texture "t" and no animation; the bones
 * follow. */
static void stress_begin(char **json, size_t *len)
{
    sappend(json, len,
            "{\"version\":\"0.5.0\",\"ik_root_ids\":[],\"animations\":[],"
            "\"atlases\":[{\"filename\":\"atlas0.png\",\"size\":{\"x\":64,\"y\":64}}],"
            "\"styles\":[{\"id\":0,\"name\":\"Default\",\"textures\":[{\"name\":\"t\","
            "\"offset\":{\"x\":0,\"y\":0},\"size\":{\"x\":64,\"y\":64},\"atlas_idx\":0}]}],"
            "\"bones\":[");
}

static void stress_write(const char *dir, const char *file, char *json)
{
    size_t plen = strlen(dir) + strlen(file) + 2;
    char *path = xrealloc(NULL, plen);
    snprintf(path, plen, "%s/%s", dir, file);
    zip_t *za = archive_create(path);
    archive_add(za, "armature.json", json, strlen(json));
    void *png;
    size_t len;
    stress_atlas(&png, &len);
    archive_add(za, "atlas0.png", png, len);
    archive_finish(za, path);
    free(path);
}

/* layers.skf: 64 translucent quads stacked on one another, each the whole drawing: drawn
 * framed, they cover the picture about 50 times over. What shading a pixel costs. */
static void write_layers(const char *dir)
{
    char *json = NULL;
    size_t len = 0;
    stress_begin(&json, &len);
    for (int i = 0; i < 64; i++)
        sappend(&json, &len,
                "%s{\"id\":%d,\"parent_id\":-1,\"name\":\"layer %d\",\"tex\":\"t\","
                "\"pos\":{\"x\":0,\"y\":0},\"rot\":0,\"scale\":{\"x\":8,\"y\":8},"
                "\"zindex\":%d,\"tint\":{\"r\":255,\"g\":255,\"b\":255,\"a\":40}}",
                i ? "," : "", i, i, i);
    sappend(&json, &len, "]}");
    stress_write(dir, "layers.skf", json);
}

/* specks.skf: one mesh of 8192 triangles of about a pixel each, spread over a 400x400
 * drawing (its four corner vertices frame it): what setting a triangle up costs. */
static void write_specks(const char *dir)
{
    char *json = NULL;
    size_t len = 0;
    stress_begin(&json, &len);
    sappend(&json, &len,
            "{\"id\":0,\"parent_id\":-1,\"name\":\"specks\",\"tex\":\"t\","
            "\"pos\":{\"x\":0,\"y\":0},\"rot\":0,\"scale\":{\"x\":1,\"y\":1},"
            "\"zindex\":0,\"vertices\":[");
    enum { SIDE = 64, CORNERS = 4 };
    static const int corner[CORNERS][2] = {{-200, 200}, {200, 200}, {200, -200}, {-200, -200}};
    int id = 0;
    for (int c = 0; c < CORNERS; c++, id++)
        sappend(&json, &len,
                "%s{\"id\":%d,\"pos\":{\"x\":%d,\"y\":%d},\"uv\":{\"x\":%d,"
                "\"y\":%d}}",
                id ? "," : "", id, corner[c][0], corner[c][1], c == 1 || c == 2, c >= 2);
    /* a speck's three vertices on a SIDE x SIDE grid, two specks a cell */
    for (int k = 0; k < SIDE * SIDE * 2; k++) {
        double x = -190 + (k / 2 % SIDE) * 6.0 + (k & 1) * 3, y = -190 + (k / 2 / SIDE) * 6.0;
        const double dx[3] = {0, 1.2, 0}, dy[3] = {0, 0, 1.2};
        for (int v = 0; v < 3; v++, id++)
            sappend(&json, &len,
                    ",{\"id\":%d,\"pos\":{\"x\":%.1f,\"y\":%.1f},\"uv\":{"
                    "\"x\":%.4f,\"y\":%.4f}}",
                    id, x + dx[v], y + dy[v], (x + 200) / 400, (200 - y) / 400);
    }
    sappend(&json, &len, "],\"indices\":[");
    for (int k = 0; k < SIDE * SIDE * 2; k++)
        sappend(&json, &len, "%s%d,%d,%d", k ? "," : "", CORNERS + 3 * k, CORNERS + 3 * k + 1,
                CORNERS + 3 * k + 2);
    sappend(&json, &len, "]}]}");
    stress_write(dir, "specks.skf", json);
}

int main(int argc, char **argv)
{
    bool stress = argc == 3 && !strcmp(argv[1], "--stress");
    if (argc != 2 && !stress) {
        fprintf(stderr, "usage: gen-samples [--stress] OUTDIR\n");
        return 2;
    }
    const char *dir = argv[argc - 1];
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        die("%s: %s", dir, strerror(errno));
    /* libzip turns the fixed mtime into DOS date and time with localtime() */
    if (setenv("TZ", "UTC0", 1) != 0)
        die("setenv: %s", strerror(errno));
    tzset();
    if (stress) {
        write_layers(dir);
        write_specks(dir);
        return 0;
    }
    write_character(&robot, argv[1]);
    write_character(&critter, argv[1]);
    /* The very same robot in the 0.7 layout: check_conform requires it to evaluate and draw
     * exactly as robot.skf does. */
    struct character robot07 = robot;
    robot07.file = "robot-0.7.skf";
    robot07.layout = LAYOUT_07;
    write_character(&robot07, argv[1]);
    write_character(&lamp, argv[1]);
    return 0;
}
