#!/bin/sh
# The dependency rules of STYLE.md, checked on the sources: the engine includes no libuv,
# protocol or server header; proto/ no libuv; worker code (work.c, job.h, work.h) nothing of
# the loop, the connections or dispatch; the connection layer nothing of dispatch; the client
# nothing of the daemon, and libskc nothing of libuv (its adapter skc_uv.h is header-only);
# the preload nothing of the server. Dependencies run one way: server -> preload -> dispatch ->
# conn, work -> engine.
set -u
src=${SKELD_SRCDIR:-.}
fail=0
# forbid FILES... -- PATTERN: no #include line in FILES matches PATTERN.
forbid() {
    pattern=$1
    shift
    for f in "$@"; do
        [ -f "$f" ] || continue
        if grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($pattern)[>\"]" "$f"; then
            echo "layers: $f includes what its layer may not ($pattern)"
            fail=1
        fi
    done
}
cd "$src" || exit 1
forbid 'uv\.h|skp[a-z_]*\.h|(\.\./)?(server|dispatch|conn|pool|job|work|log)\.h' daemon/engine/*.c daemon/engine/*.h
forbid 'uv\.h' proto/*.c proto/*.h
forbid 'uv\.h|server\.h|dispatch\.h|conn\.h|pool\.h' daemon/work.c daemon/work.h daemon/job.h
forbid 'dispatch\.h|server\.h|work\.h' daemon/conn.c daemon/conn.h
forbid 'server\.h' daemon/dispatch.c daemon/dispatch.h
forbid 'server\.h' daemon/preload.c daemon/preload.h
forbid '(\.\./)?daemon/.*|engine/.*' client/*.c client/*.h
# libskc links no libuv: only the header-only adapter skc_uv.h includes uv.h.
forbid 'uv\.h|skc_uv\.h' client/*.c client/skc.h client/skc_int.h
# and the checker can fail: a rule of its own on a file it knows holds the include
if ! grep -qE '^#include "conn.h"' daemon/dispatch.h; then
    echo "layers: dispatch.h no longer includes conn.h: update this script"
    fail=1
fi
[ $fail -eq 0 ] && echo "layers: every module includes only what its layer allows"
exit $fail
