#!/bin/sh
# Every speed figure of skeld in one run, each next to its baseline (issue 13):
#   engine   Animate+Construct µs/step of FILE (bench-engine) against the official runtimes
#   json     the HTTP POSE body of FILE in µs, and skp_fmt_g9 against printf's %.9g (bench-json)
#   render   raster and PNG encode ms per 512x512 frame, PNG bytes against zlib and libdeflate
#            level 1 on the same pixels (bench-render, which measures those baselines itself)
#   stages   the default encoder's time by stage (tokenizer, counting, codes, Huffman writing,
#            the rest) against the raster of the same frame (bench-stages)
#   fill     ns per pixel of fill on stress files of large layers and of tiny triangles, and
#            what a bone-step is worth in pixels: the drawing budget's weights (bench-fill)
#   process  `skeld render --frames 0-99` as a whole process (100 PNG files written, one
#            thread): frames/s, cold start of one frame, peak RSS; a 4096x4096 sheet's time
#            and peak RSS
#   daemon   POSE/s pipelined and p99 at half that rate, RENDER/s with 1 and 2 workers
#            (bench-daemon.sh)
# The headless browser running the official player is not part of this repository; its
# figures, measured on this machine class for issue 13 (2026-11, 512x512 PNG frames of the
# conformance skellington, animation 0, the player's camera), are the ratios' baseline:
# 33.3 PNG/s warm (30-43 over runs), 3.7 s cold start, 1.05 GiB RSS; the official Rust
# runtime (rusty_skelform 0.7) 18-23 µs/step on skellington-0.7.
#
#   contrib/bench/bench-all.sh [FILE.skf] [RUNS]
#
# Run from the build directory after `make`.
set -eu
skf=${1:-../shared/conformance/skellington.skf}
runs=${2:-5}
here=$(dirname "$0")
. "$here/common.sh"
[ -f "$skf" ] || { echo "bench-all: no $skf" >&2; exit 1; }
[ -x ./daemon/skeld ] || { echo "bench-all: run make first" >&2; exit 1; }
BROWSER_FPS=33.3 BROWSER_COLD_S=3.7 BROWSER_RSS_MIB=1075 RUST_US=20.5

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM # the EXIT trap cleans up; without an exit the script would go on

echo "== engine"
./contrib/bench/bench-engine "$skf" | tee "$dir/engine"
us=$(sed -n 's/.*animate+construct: median \([0-9.]*\) us.*/\1/p' "$dir/engine")
awk -v u="$us" -v r="$RUST_US" 'BEGIN {printf "  %.1fx the official Rust runtime (%.1f us/step, 18-23)\n", r / u, r}'

echo "== pose JSON, the HTTP POSE body (bench-json)"
./contrib/bench/bench-json "$skf"

echo "== render (one thread, medians)"
./contrib/bench/bench-render --renders 1000 "$skf" samples/robot.skf

echo "== the default encoder's stages against the raster (bench-stages)"
./contrib/bench/bench-stages --runs 300 "$skf" samples/robot.skf

echo "== fill: the drawing budget's weights (bench-fill)"
./contrib/gen-samples --stress "$dir/stress" >/dev/null
./contrib/bench/bench-fill "$dir/stress/layers.skf" "$dir/stress/specks.skf" "$skf" samples/robot.skf

echo "== skeld render --frames 0-99 as a process (512x512, 100 files), median of $runs"
# run CMD...: wall seconds and peak RSS (KiB) of one process, as "S KIB"
run() {
    python3 -c 'import resource, subprocess, sys, time
t = time.monotonic(); subprocess.run(sys.argv[1:], check=True)
print("%.4f %d" % (time.monotonic() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))' "$@"
}
n=0
while [ $n -lt "$runs" ]; do
    run ./daemon/skeld render "$skf" --anim 0 --frames 0-99 --warmup 30 -o "$dir/f_%03d.png" >>"$dir/proc"
    run ./daemon/skeld render "$skf" --anim 0 --frame 0 --warmup 30 -o "$dir/one.png" >>"$dir/cold"
    n=$((n + 1))
done
ls "$dir"/f_*.png | wc -l | awk '{ if ($1 != 100) { print "bench-all: expected 100 files"; exit 1 } }'
t=$(cut -d' ' -f1 "$dir/proc" | median)
cold=$(cut -d' ' -f1 "$dir/cold" | median)
rss=$(cut -d' ' -f2 "$dir/proc" | sort -g | tail -n 1)
awk -v t="$t" -v b="$BROWSER_FPS" 'BEGIN {printf "  %.2f s: %.0f frames/s = %.1fx the browser (%.1f PNG/s)\n", t, 100 / t, 100 / t / b, b}'
awk -v t="$cold" -v b="$BROWSER_COLD_S" 'BEGIN {printf "  cold start to one PNG: %.3f s (browser %.1f s: %.0fx)\n", t, b, b / t}'
awk -v k="$rss" -v b="$BROWSER_RSS_MIB" 'BEGIN {printf "  peak RSS %.0f MiB (browser %.0f MiB)\n", k / 1024, b}'

echo "== skeld render --sheet 4x4 --size 1024x1024 (one 4096x4096 PNG, 64 MiB of pixels), median of $runs"
# The largest picture --max-image-pixels allows by default: the sheet is drawn as PNG
# scanlines, which the encoder reads in place with the tokens of a 2 MiB block as scratch, so
# the peak is the picture, that scratch and the PNG.
n=0
while [ $n -lt "$runs" ]; do
    run ./daemon/skeld render "$skf" --anim 0 --frames 0-15 --warmup 30 --sheet 4x4 \
        --size 1024x1024 -o "$dir/sheet.png" >>"$dir/sheet"
    n=$((n + 1))
done
t=$(cut -d' ' -f1 "$dir/sheet" | median)
rss=$(cut -d' ' -f2 "$dir/sheet" | sort -g | tail -n 1)
awk -v t="$t" -v k="$rss" -v b="$(wc -c <"$dir/sheet.png")" \
    'BEGIN {printf "  %.2f s, peak RSS %.0f MiB (the picture alone: 64 MiB), %d PNG bytes\n", t, k / 1024, b}'

echo "== daemon (bench-daemon.sh, medians of $runs runs of 3 s)"
sh "$here/bench-daemon.sh" "$skf" "$runs" 3 | tee "$dir/daemon"
r2=$(sed -n 's/^RENDER 512x512, 2 workers: \([0-9.]*\) PNG\/s.*/\1/p' "$dir/daemon")
[ -n "$r2" ] && awk -v r="$r2" -v b="$BROWSER_FPS" 'BEGIN {printf "  RENDER with 2 workers = %.1fx the browser (%.1f PNG/s)\n", r / b, b}'
exit 0
