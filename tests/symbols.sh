#!/bin/sh
# libskc.so exports only skc_ symbols (libevdev's static-symbol-leaks): everything else,
# proto/'s skp_ codec included, must stay hidden. And the exports are exactly the functions
# client/skc.h declares SKC_API: none missing (a declaration without a definition, or a
# definition that lost its visibility), none extra (an internal skc__ helper leaking out).
set -u
build=${SKELD_BUILDDIR:-.}
src=${SKELD_SRCDIR:-${srcdir:-.}}
lib="$build/client/.libs/libskc.so"
header="$src/client/skc.h"
if [ ! -f "$lib" ]; then
    echo "symbols: $lib not built (--disable-shared?): skipped"
    exit 77
fi
[ -f "$header" ] || { echo "symbols: $header not found"; exit 99; }
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

# Every declaration in skc.h begins its line with SKC_API; the name is the identifier right
# before the first "(" on that line.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/skc-symbols.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
grep -E '^SKC_API ' "$header" | sed -e 's/(.*//' -e 's/.*[ *]//' | sort -u >"$tmp/declared"
printf '%s\n' "$syms" | awk '$NF ~ /^skc_/ { print $NF }' | sort -u >"$tmp/exported"
declared=$(wc -l <"$tmp/declared")
if [ "$declared" -lt 50 ]; then
    echo "symbols: only $declared SKC_API declarations found in $header: update this script"
    exit 99
fi
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
extra=$(comm -13 "$tmp/declared" "$tmp/exported")
status=0
if [ -n "$missing" ]; then
    echo "symbols: declared SKC_API in skc.h but not exported by $lib:"
    printf '  %s\n' $missing
    status=1
fi
if [ -n "$extra" ]; then
    echo "symbols: exported by $lib but not declared in skc.h:"
    printf '  %s\n' $extra
    status=1
fi
[ $status -eq 0 ] &&
    echo "symbols: $count skc_ symbols, exactly the $declared functions skc.h declares"
exit $status
