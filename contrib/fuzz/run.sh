#!/bin/sh
# Builds a libFuzzer target with clang (ASan + UBSan) and runs it.
#
#   contrib/fuzz/run.sh load|json|request|reply|png|encode [SECONDS] [CORPUS-DIR]
#   contrib/fuzz/run.sh seeds          rewrites contrib/fuzz/corpus/request and reply (make-seeds.c)
#
# load: arbitrary bytes as a .skf file. json: arbitrary bytes as armature.json inside a
# valid .skf, with the key dictionary contrib/fuzz/skf.dict so mutations reach the 0.6/0.7
# arrays. request: a client's byte stream through the frame parser and dispatch to the
# workers' evaluation, rendering and PNG encoding, on the project's samples (fuzz-request.c).
# reply: a server's byte stream through libskc's receive path to four pending requests, each
# decoded reply walked and checked against skc.h's promises (fuzz-reply.c).
# png: arbitrary bytes through the atlas reader, CRCs mended (fuzz-png.c), seeded with the
# samples' atlases. encode: pictures made from arbitrary bytes through skeld's own PNG
# encoders, decoded again and compared (fuzz-encode.c).
#
# New inputs go to CORPUS-DIR (default /tmp/skeld-fuzz-TARGET); the seeds are read from the
# tree and never written: contrib/fuzz/corpus/TARGET, plus, for load and json, the built
# samples (copied into an empty CORPUS-DIR, as .skf or their armature.json). A crash, leak,
# sanitizer report or timeout exits nonzero and leaves its input as crash-*, leak-* or
# timeout-* in ARTIFACTS (default CORPUS-DIR/..). Reproduce with the binary, FILE as its
# argument: FUZZ_BIN (default /tmp/skeld-fuzz-TARGET.bin; FUZZ_TRACE=1 prints the request
# target's replies, and what became of each of the reply target's requests). FUZZ_JOBS
# compiles in parallel (default: nproc).
#
# Run from a configured and built source tree (request includes daemon/dispatch.c and reply
# client/skc.c, which need autoconfig.h; request loads samples/). Needs clang and its runtime libraries (Debian:
# clang libclang-rt-dev), plus the project's build dependencies.
set -eu
target=${1:?usage: run.sh load|json|request|reply|png|encode|seeds [SECONDS] [CORPUS-DIR]}
secs=${2:-60}
corpus=${3:-/tmp/skeld-fuzz-$target}
out=${FUZZ_BIN:-/tmp/skeld-fuzz-$target.bin}
pkgs="libzip jansson libpng zlib libdeflate"
cflags="-g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L -I. -Idaemon -Iproto -Itests/helpers"

if [ "$target" = seeds ]; then
    # shellcheck disable=SC2086
    ${CC:-cc} $cflags contrib/fuzz/make-seeds.c proto/skp_codec.c proto/skp_msg.c \
        -o /tmp/skeld-make-seeds
    for kind in request reply; do
        rm -f "contrib/fuzz/corpus/$kind"/*
        mkdir -p "contrib/fuzz/corpus/$kind"
        /tmp/skeld-make-seeds "$kind" "contrib/fuzz/corpus/$kind"
        ls -l "contrib/fuzz/corpus/$kind"
    done
    exit 0
fi

engine=$(ls daemon/engine/*.c)
case $target in
load) srcs="contrib/fuzz/fuzz-load.c $engine" ;;
png) srcs="contrib/fuzz/fuzz-png.c daemon/engine/png_read.c" ;;
encode) srcs="contrib/fuzz/fuzz-encode.c $engine" ;;
json) srcs="contrib/fuzz/fuzz-json.c contrib/fuzz/fuzz-load.c tests/helpers/testhelp.c $engine"
    cflags="$cflags -DFUZZ_NO_MAIN"
    pkgs="$pkgs check" ;;
request)
    [ -f autoconfig.h ] || { echo "run.sh: run ./configure first (autoconfig.h)" >&2; exit 2; }
    [ -f samples/robot.skf ] || { echo "run.sh: run make first (samples/)" >&2; exit 2; }
    srcs="contrib/fuzz/fuzz-request.c daemon/work.c daemon/pool.c daemon/cache.c daemon/log.c
          daemon/confine.c daemon/rcache.c
          daemon/config.c daemon/sha256.c $(ls proto/*.c) $engine"
    pkgs="$pkgs libuv libcrypto" ;;
reply)
    [ -f autoconfig.h ] || { echo "run.sh: run ./configure first (autoconfig.h)" >&2; exit 2; }
    srcs="contrib/fuzz/fuzz-reply.c $(ls client/skc*.c proto/*.c)"
    cflags="$cflags -Iclient"
    pkgs=libcrypto ;;
*) echo "run.sh: unknown target $target" >&2; exit 2 ;;
esac

# Each source compiled on its own (in parallel), then linked: the request target has ~30.
san="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
obj=$(mktemp -d /tmp/skeld-fuzz-obj.XXXXXX)
trap 'rm -rf "$obj"' EXIT
# shellcheck disable=SC2086
pkg_cflags=$(pkg-config --cflags $pkgs)
# shellcheck disable=SC2086
pkg_libs=$(pkg-config --libs $pkgs)
export cflags san pkg_cflags obj
# shellcheck disable=SC2016,SC2086
printf '%s\n' $srcs | xargs -P "${FUZZ_JOBS:-$(nproc)}" -I{} sh -c \
    'clang $cflags $san $pkg_cflags -c "$1" -o "$obj/$(echo "$1" | tr / _).o"' sh {}
# shellcheck disable=SC2086
clang $san "$obj"/*.o $pkg_libs -lm -lpthread -o "$out"

mkdir -p "$corpus"
if [ -z "$(ls -A "$corpus")" ] && [ -d samples ]; then
    case $target in
    load) cp samples/*.skf "$corpus/" ;;
    json) for f in samples/*.skf; do
        unzip -p "$f" armature.json >"$corpus/$(basename "$f" .skf).json"
    done ;;
    png) for f in samples/*.skf; do
        for a in $(unzip -Z1 "$f" 'atlas*.png'); do
            unzip -p "$f" "$a" >"$corpus/$(basename "$f" .skf)-$a"
        done
    done ;;
    esac
fi
seeds=
[ -d "contrib/fuzz/corpus/$target" ] && seeds=contrib/fuzz/corpus/$target
opts="-max_total_time=$secs -rss_limit_mb=4096 -print_final_stats=1"
case $target in
load | json | png) opts="$opts -max_len=262144" ;;
request) opts="$opts -max_len=16384 -timeout=25" ;;
reply) opts="$opts -max_len=32768" ;; # at most 65,537: the stream must fit the socket's buffer
encode) opts="$opts -max_len=16387" ;; # 64x64 pixels and the 3 bytes that choose
esac
[ "$target" = json ] && opts="$opts -dict=contrib/fuzz/skf.dict"
artifacts=${ARTIFACTS:-$(dirname "$corpus")}
# shellcheck disable=SC2086
"$out" $opts -artifact_prefix="$artifacts/" "$corpus" $seeds
