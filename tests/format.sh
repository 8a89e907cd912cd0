#!/bin/sh
# The house style holds: clang-format with contrib/clang-format would change no C source or
# header of the project (generated ones aside). Debian 12's clang-format 14 is the reference;
# another major version lays some lines out differently, so the check skips (77) without 14.
# To fix a failure: clang-format --style=file:contrib/clang-format -i FILE...
set -u
src=${SKELD_SRCDIR:-.}
command -v clang-format >/dev/null 2>&1 || { echo "format: no clang-format, skipped"; exit 77; }
case $(clang-format --version) in
*" version 14."*) ;;
*) echo "format: $(clang-format --version) is not version 14, skipped"; exit 77 ;;
esac
cd "$src" || exit 1
# daemon/www.c is generated (contrib/embed) when the build is in the source tree.
files=$(find daemon client proto tests contrib -name '*.[ch]' ! -path daemon/www.c | sort)
[ -n "$files" ] || { echo "format: no sources found under $src"; exit 1; }
# shellcheck disable=SC2086
if ! clang-format --style=file:contrib/clang-format --dry-run --Werror $files; then
    echo "format: the files above differ from contrib/clang-format's layout"
    exit 1
fi
echo "format: $(echo "$files" | wc -l) files laid out as contrib/clang-format says"
