#!/bin/sh
# Builds a libFuzzer target with clang (ASan + UBSan) and runs it.
#
#   contrib/fuzz/run.sh load|json [SECONDS] [CORPUS-DIR]
#
# load: arbitrary bytes as a .skf file; json: arbitrary bytes as armature.json inside a
# valid .skf. The corpus directory (default /tmp/skeld-fuzz-TARGET) is seeded with the
# project's samples, both layouts (load), or their armature.json (json, which also uses the
# key dictionary contrib/fuzz/skf.dict so mutations reach the 0.6/0.7 arrays). Needs clang and libclang-rt
# (Debian: clang), plus the project's build dependencies. Run from the source directory.
set -eu
target=${1:?usage: run.sh load|json [SECONDS] [CORPUS-DIR]}
secs=${2:-60}
corpus=${3:-/tmp/skeld-fuzz-$target}
out=/tmp/skeld-fuzz-$target.bin
case $target in load | json) ;; *) echo "run.sh: unknown target $target" >&2; exit 2 ;; esac

pkgs="libzip jansson libpng zlib check"
flags="-g -O1 -std=c11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
engine=$(ls daemon/engine/*.c)
extra=
[ "$target" = json ] && extra="contrib/fuzz/fuzz-json.c tests/helpers/testhelp.c -DFUZZ_NO_MAIN"
# shellcheck disable=SC2086
clang $flags -I. -Idaemon -Itests/helpers $(pkg-config --cflags $pkgs) \
    contrib/fuzz/fuzz-load.c $extra $engine $(pkg-config --libs $pkgs) -lm -o "$out"

mkdir -p "$corpus"
if [ -z "$(ls -A "$corpus")" ] && [ -d samples ]; then
    for f in samples/*.skf; do
        if [ "$target" = load ]; then cp "$f" "$corpus/"; else
            unzip -p "$f" armature.json >"$corpus/$(basename "$f" .skf).json"
        fi
    done
fi
dict=
[ "$target" = json ] && dict=-dict=contrib/fuzz/skf.dict
# shellcheck disable=SC2086
"$out" -max_total_time="$secs" -max_len=262144 -rss_limit_mb=4096 $dict "$corpus"
