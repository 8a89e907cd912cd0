#!/bin/sh
# The installed headers on their own: C99, -pedantic, warnings as errors (libevdev's
# test-compile-pedantic). Reads client/skc.h and client/skc_uv.h from the source tree, writes
# only to a temp dir.
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

# The libuv adapter, header-only, likewise (uv.h itself needs POSIX names, so a program using
# it defines _POSIX_C_SOURCE), and once as C++, whose casts it must spell out.
uv_cflags=$(${PKG_CONFIG:-pkg-config} --cflags libuv 2>/dev/null) || {
    echo "header-pedantic: no libuv pkg-config: skc_uv.h not checked"
    exit $status
}
cat >"$tmp/uv.c" <<'EOC'
#include "skc_uv.h"
#include "skc_uv.h"
int main(void)
{
    uv_loop_t *loop = uv_default_loop();
    return skc_uv_attach(NULL, loop) == SKC_EINVAL ? 0 : 1;
}
EOC
uvstatus=0
# shellcheck disable=SC2086
${CC:-cc} -std=c99 -pedantic -Werror -Wall -Wextra -D_POSIX_C_SOURCE=200809L -I"$src/client" \
    $uv_cflags -fsyntax-only "$tmp/uv.c" || uvstatus=1
if command -v "${CXX:-c++}" >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    "${CXX:-c++}" -x c++ -std=c++11 -pedantic -Werror -Wall -Wextra -I"$src/client" $uv_cflags \
        -fsyntax-only "$tmp/uv.c" || uvstatus=1
fi
[ "$uvstatus" = 0 ] && echo "header-pedantic: client/skc_uv.h is clean C99 (and C++)"
[ "$uvstatus" = 0 ] || status=1
exit $status
