#!/bin/bash
# Build the small proof guest kernel out of tree (fallback when testbed/build-kernel.sh is absent).
# Prints the bzImage path as the last line of stdout.
set -eu
CACHE=${PERFMON_CACHE:-/var/cache/perfmon-lite}
SRC=${KSRC:-$CACHE/src/linux-source-6.12}
O=${KOUT:-$CACHE/build/pmu-proof}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$O"
export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
{
  make -C "$SRC" O="$O" CC="ccache gcc" tinyconfig
  "$SRC/scripts/kconfig/merge_config.sh" -m -O "$O" "$O/.config" "$here/kernel.fragment"
  make -C "$SRC" O="$O" CC="ccache gcc" olddefconfig
  nice make -C "$SRC" O="$O" CC="ccache gcc" -j2 bzImage
} >"$O/build.log" 2>&1 || { tail -30 "$O/build.log" >&2; exit 1; }
echo "$O/arch/x86/boot/bzImage"
