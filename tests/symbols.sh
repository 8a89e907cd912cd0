#!/bin/sh
# libskc.so exports only skc_ symbols (libevdev's static-symbol-leaks): everything else,
# proto/'s skp_ codec included, must stay hidden.
set -u
build=${SKELD_BUILDDIR:-.}
lib="$build/client/.libs/libskc.so"
if [ ! -f "$lib" ]; then
    echo "symbols: $lib not built (--disable-shared?): skipped"
    exit 77
fi
syms=$(${NM:-nm} -D --defined-only "$lib") || { echo "symbols: nm failed on $lib"; exit 99; }
# nm prints "ADDRESS TYPE NAME"; the name is the last field, the type the one before.
leaks=$(printf '%s\n' "$syms" | awk '
    NF >= 2 {
        name = $NF; type = $(NF - 1)
        if (name ~ /^skc_/) next
        if (name == "_init" || name == "_fini" || name == "__bss_start" || name == "_edata" ||
            name == "_end") next
        print type " " name
    }')
count=$(printf '%s\n' "$syms" | grep -c ' skc_')
if [ -n "$leaks" ]; then
    echo "symbols: $lib exports symbols outside skc_:"
    printf '  %s\n' "$leaks"
    exit 1
fi
[ "$count" -gt 0 ] || { echo "symbols: no skc_ symbols at all in $lib"; exit 1; }
echo "symbols: $count skc_ symbols, nothing else"
