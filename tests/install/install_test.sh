#!/usr/bin/env bash
# install_test.sh SOURCE_DIR MESON STATS_PROG_C — what a C user outside the tree does:
# `meson install` into a temporary prefix, then only the installed files: hoardlab.h and
# hoardlab.pc (pkg-config), libhoardlab.so under LD_PRELOAD, hlconfig, hlbench, the docs.
set -euo pipefail
src=$1 meson=$2 prog_c=$3
cc=${CC:-cc}
unset CC        # the build below uses meson's own compiler detection, as a user's would
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hoardlab-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

step() {        # step LOG CMD...: run quietly; on failure show the log and stop
    local log=$tmp/$1; shift
    if ! "$@" >"$log" 2>&1; then
        echo "FAILED: $*"; tail -40 "$log"; exit 1
    fi
}
step setup.log "$meson" setup "$tmp/build" "$src" --prefix="$prefix" -Dtests=false
step install.log "$meson" install -C "$tmp/build"

pc=$(find "$prefix" -name hoardlab.pc)
[[ -n $pc ]] || { echo "FAILED: no hoardlab.pc under $prefix"; find "$prefix"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(pkg-config --variable=libdir hoardlab)
echo "installed: $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')"
for f in include/hoardlab.h bin/hlbench bin/hlconfig share/doc/hoardlab/config.md; do
    [[ -e $prefix/$f ]] || { echo "FAILED: $f not installed"; exit 1; }
done
[[ $libdir == "$prefix"/* && -e $libdir/libhoardlab.so ]] ||
    { echo "FAILED: pkg-config libdir $libdir"; exit 1; }
[[ $(pkg-config --variable=preload hoardlab) == "$libdir/libhoardlab.so" ]] ||
    { echo "FAILED: pkg-config preload variable"; exit 1; }

# Built against the installed header and library; nothing of the source tree on the path.
# shellcheck disable=SC2046,SC2086
step cc.log $cc -std=c11 -Wall -Wextra -Werror -o "$tmp/stats_prog" "$prog_c" \
    $(pkg-config --cflags --libs hoardlab)
echo "built: $cc stats_prog.c $(pkg-config --cflags --libs hoardlab)"
while read -r v; do unset "$v"; done < <(compgen -e | grep '^HOARD_' || true)
LD_PRELOAD=$libdir/libhoardlab.so "$tmp/stats_prog" "$libdir" hoard
HOARD_STRATEGY=serial LD_PRELOAD=$libdir/libhoardlab.so "$tmp/stats_prog" "$libdir" serial

"$prefix/bin/hlconfig" --strategies | grep -q '^hoard' ||
    { echo "FAILED: installed hlconfig --strategies lists no hoard"; exit 1; }
out=$(LD_PRELOAD=$(pkg-config --variable=preload hoardlab) "$prefix/bin/hlbench" threadtest \
      --threads 2 --scale 0.01)
grep -q '"strategy": "hoard"' <<<"$out" ||
    { echo "FAILED: installed hlbench under the installed library: $out"; exit 1; }
echo "install-prefix: ok"
