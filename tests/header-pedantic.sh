#!/bin/sh
# The installed header on its own: C99, -pedantic, warnings as errors (libevdev's
# test-compile-pedantic). Reads client/skc.h from the source tree, writes only to a temp dir.
set -u
src=${SKELD_SRCDIR:-${srcdir:-.}}
header="$src/client/skc.h"
[ -f "$header" ] || { echo "header-pedantic: $header not found"; exit 99; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/skc-pedantic.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

status=0
# The header alone, then a translation unit that includes it twice (include guard) and uses it.
${CC:-cc} -std=c99 -pedantic -Werror -fsyntax-only -x c "$header" || status=1
cat >"$tmp/use.c" <<'EOC'
#include "skc.h"
#include "skc.h"
int main(void)
{
    skc_eval ev;
    skc_eval_init(&ev);
    return (int)skc_strerror(SKC_EIO)[0] == 0 && ev.anim_count == 0;
}
EOC
${CC:-cc} -std=c99 -pedantic -Werror -Wall -Wextra -fsyntax-only -I"$src/client" "$tmp/use.c" ||
    status=1
[ "$status" = 0 ] && echo "header-pedantic: client/skc.h is clean C99"
exit $status
