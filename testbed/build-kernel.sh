#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kernel.sh SRC O [extra-fragment...]
#
# Configure (tinyconfig + testbed/kernel.config + extra fragments) and build
# an x86_64 bzImage of the kernel tree SRC into the output directory O.
# KERNEL_FRAGMENT replaces testbed/kernel.config (empty: tinyconfig and the
# extra fragments only).
# SRC is never written to (out-of-tree build, make O=...).
#
# The configuration is only regenerated when the fragments, the tree's
# Kconfig files or this script changed (hash stamp O/.testbed-config.stamp),
# so incremental builds stay incremental.  Compiles go through ccache
# (CCACHE_DIR=$PERFMON_CACHE/ccache unless set).
#
# Output: O/arch/x86/boot/bzImage.  Full log: O/build.log.
#
# Environment:
#   PERFMON_CACHE  cache root (default /var/cache/perfmon-lite)
#   JOBS           make -j value (default: nproc)
#   NO_CCACHE=1    compile with plain gcc
#   KERNEL_FRAGMENT  the base fragment (default testbed/kernel.config)
#   BUILD_OBJECTS  objects (dir/file.o) to compile instead of bzImage, those
#                  of them the configuration builds (by the obj- lines of
#                  their Makefiles): make check's per-patch, i386 and
#                  no-perfmon compiles; none built is an error
#   SANITIZE_OBJECTS  with CONFIG_KASAN and CONFIG_UBSAN, instrument only
#                  these objects (dir/file.o) and not the rest of the
#                  kernel: make check's test kernel, whose boots run at the
#                  speed of an uninstrumented kernel (see check-build.sh).
#                  An object the kernel never instruments (its directory
#                  or its own Makefile line says KASAN_SANITIZE := n, or
#                  UBSAN_SANITIZE) stays uninstrumented.

set -euo pipefail

usage() {
	echo "usage: $0 SRC O [extra-fragment...]" >&2
	exit 2
}

[ $# -ge 2 ] || usage

TESTBED=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(readlink -f -- "$1")
mkdir -p -- "$2"
O=$(readlink -f -- "$2")
shift 2

FRAGMENTS=()
base=${KERNEL_FRAGMENT-$TESTBED/kernel.config}
[ -z "$base" ] || FRAGMENTS+=("$(readlink -f -- "$base")")
for f in "$@"; do
	[ -r "$f" ] || { echo "build-kernel: no such fragment: $f" >&2; exit 2; }
	FRAGMENTS+=("$(readlink -f -- "$f")")
done

[ -f "$SRC/Makefile" ] && [ -x "$SRC/scripts/kconfig/merge_config.sh" ] ||
	{ echo "build-kernel: $SRC is not a kernel tree" >&2; exit 2; }
if [ -e "$SRC/.config" ] || [ -e "$SRC/include/config" ]; then
	echo "build-kernel: $SRC has an in-tree configuration; out-of-tree (O=) builds need a clean source tree" >&2
	exit 2
fi

CACHE=${PERFMON_CACHE:-/var/cache/perfmon-lite}
JOBS=${JOBS:-$(nproc)}
if [ "${NO_CCACHE:-0}" = 1 ]; then
	CCOPT=(CC=gcc)
else
	export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
	mkdir -p "$CCACHE_DIR"
	# ~5G cap, written once into $CCACHE_DIR/ccache.conf.
	grep -qs '^max_size' "$CCACHE_DIR/ccache.conf" || ccache -M 5G >/dev/null
	# Let ccache hit across different O= directories and source copies
	# (bisect worktrees): hash relative paths, not absolute ones.
	export CCACHE_BASEDIR=${CCACHE_BASEDIR:-/}
	# Kbuild rewrites autoconf.h etc. on reconfigure; content hashing
	# (ccache's default "direct mode" is content based) is what we want.
	# Depend mode: a miss compiles at once and takes the headers from the
	# compiler's dependency output (kbuild's -MMD) instead of running the
	# preprocessor first to hash its output, which is a tenth of a cold
	# build's CPU time (4 objects from an empty cache: 16.7 CPU-s against
	# 14.9); hits are found by the headers' contents, as in direct mode.
	export CCACHE_DEPEND=${CCACHE_DEPEND:-1}
	CCOPT=(CC="ccache gcc")
fi

LOG=$O/build.log
STAMP=$O/.testbed-config.stamp
: > "$LOG"

fail() {
	echo "build-kernel: FAILED: $*" >&2
	echo "----- last 40 lines of $LOG -----" >&2
	tail -n 40 "$LOG" >&2
	exit 1
}

mk() {
	nice -n 10 make -C "$SRC" O="$O" "$@" >>"$LOG" 2>&1
}

t0=$(date +%s)

# --- configuration -----------------------------------------------------------
# What determines the configuration: the fragments (content and order), the
# Kconfig files of the tree, this script and the compiler.
config_hash() {
	{
		echo "script $(sha256sum < "${BASH_SOURCE[0]}")"
		for f in "${FRAGMENTS[@]}"; do
			echo "fragment $(sha256sum < "$f")"
		done
		(cd "$SRC" && find . -name 'Kconfig*' -type f -print0 | sort -z |
			xargs -0 cat) | sha256sum
		gcc --version | head -n1
	} | sha256sum | cut -d' ' -f1
}

HASH=$(config_hash)
reconfigured=no
if [ ! -f "$O/.config" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$HASH" ]; then
	reconfigured=yes
	rm -f "$STAMP"
	mk tinyconfig || fail "make tinyconfig"
	(cd "$O" && "$SRC/scripts/kconfig/merge_config.sh" -m -O "$O" \
		"$O/.config" "${FRAGMENTS[@]}") >>"$LOG" 2>&1 || fail "merge_config.sh"
	mk olddefconfig || fail "make olddefconfig"

	# Verify: the last fragment that mentions a symbol wins.  A symbol the
	# tree does not define only warns (CONFIG_PERFMON* before the series).
	declare -A want=()
	for f in "${FRAGMENTS[@]}"; do
		while IFS= read -r line; do
			if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
				want[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
			elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set ]]; then
				want[${BASH_REMATCH[1]}]=n
			fi
		done < "$f"
	done
	known=$(cd "$SRC" && find . -name 'Kconfig*' -type f -print0 |
		xargs -0 sed -n 's/^[[:space:]]*\(menu\)\{0,1\}config[[:space:]]\{1,\}\([A-Za-z0-9_]\{1,\}\).*/CONFIG_\2/p' |
		sort -u)
	bad=0
	for sym in $(printf '%s\n' "${!want[@]}" | sort); do
		val=${want[$sym]}
		have=$(sed -n "s/^$sym=\(.*\)/\1/p" "$O/.config")
		if ! grep -qx -- "$sym" <<<"$known"; then
			if [ "$val" != n ]; then
				echo "build-kernel: warning: $sym=$val: symbol unknown to this tree, ignored" >&2
				echo "warning: $sym unknown to this tree" >>"$LOG"
			fi
			continue
		fi
		if [ "$val" = n ]; then
			if [ -n "$have" ] && [ "$have" != n ]; then
				echo "build-kernel: error: $sym should be unset but is $sym=$have" >&2
				bad=1
			fi
		elif [ "$have" != "$val" ]; then
			echo "build-kernel: error: $sym=$val requested but .config has ${have:+$sym=}${have:-it unset} (unmet dependency?)" >&2
			bad=1
		fi
	done
	[ $bad = 0 ] || { echo "build-kernel: configuration check failed (see $O/.config)" >&2; exit 1; }
	echo "$HASH" > "$STAMP"
fi

# --- build -------------------------------------------------------------------
# is_built OBJ: whether the configuration builds OBJ (dir/file.o), by the
# obj- line that names it in its directory's Kbuild or Makefile, then the
# one that names that directory in its parent's, up to a top-level
# directory or arch/x86 (always built). $(BITS) is the configuration's.
is_built() {
	local path=$1 name=${1##*/} dir gate mk bits=64

	grep -q '^CONFIG_X86_32=y' "$O/.config" && bits=32
	while :; do
		dir=${path%/*}
		[ "$dir" != "$path" ] || return 0
		mk=$SRC/$dir/Kbuild
		[ -f "$mk" ] || mk=$SRC/$dir/Makefile
		[ -f "$mk" ] || return 1
		gate=$(sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' "$mk" | sed "s/\$(BITS)/$bits/g" |
			awk -v n="$name" '$1 ~ /^obj-/ { for (i = 2; i <= NF; i++) if ($i == n) { print $1; exit } }')
		case "$gate" in
		obj-y) ;;
		'obj-$(CONFIG_'*')') grep -q "^${gate:6:-1}=y" "$O/.config" || return 1 ;;
		*) return 1 ;;
		esac
		case "$dir" in */*) ;; *) return 0 ;; esac
		[ "$dir" != arch/x86 ] || return 0
		path=$dir name=${dir##*/}/
	done
}

# sanitize_var TOOL: the make variable TOOL_SANITIZE (KASAN or UBSAN) that
# instruments SANITIZE_OBJECTS alone. Kbuild instruments an object unless
# "$(TOOL_SANITIZE_file.o)$(TOOL_SANITIZE)" starts with n; set on the
# command line, TOOL_SANITIZE overrides every directory's own, so an object
# whose directory turns the tool off is left out of the list here, and one
# whose own line turns it off stays off (its "n" comes first).
sanitize_var() {
	local tool=$1 obj mk list=

	for obj in $SANITIZE_OBJECTS; do
		mk=$SRC/${obj%/*}/Makefile
		[ -f "$SRC/${obj%/*}/Kbuild" ] && mk=$SRC/${obj%/*}/Kbuild
		grep -Eq "^${tool}_SANITIZE[[:space:]]*:?=[[:space:]]*n" "$mk" 2>/dev/null && continue
		list="$list $obj"
	done
	echo "${tool}_SANITIZE=\$(if \$(filter \$(obj)/\$(target-stem).o,$list),y,n)"
}

targets=(bzImage)
if [ -n "${BUILD_OBJECTS:-}" ]; then
	targets=()
	for obj in $BUILD_OBJECTS; do
		[ -f "$SRC/${obj%.o}.c" ] && is_built "$obj" && targets+=("$obj")
	done
	[ ${#targets[@]} -gt 0 ] || fail "none of BUILD_OBJECTS is built by this configuration"
	echo "objects: ${targets[*]}" >>"$LOG"
fi
sanitize=()
if [ -n "${SANITIZE_OBJECTS:-}" ]; then
	sanitize=("$(sanitize_var KASAN)" "$(sanitize_var UBSAN)")
	printf 'instrumented: %s\n' "${sanitize[@]}" >>"$LOG"
fi
mk -j"$JOBS" "${CCOPT[@]}" "${sanitize[@]}" "${targets[@]}" || fail "make ${targets[*]}"

t1=$(date +%s)
# the CPU time of this build (user + system of every process it waited for)
times >"$O/.build-times"
cpu=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%d", t + 0.5 }' "$O/.build-times")
case $reconfigured in yes) what="config regenerated" ;; *) what="config unchanged" ;; esac
if [ -n "${BUILD_OBJECTS:-}" ]; then
	echo "build-kernel: $O: ${#targets[@]} targets ($((t1 - t0)) s, $cpu CPU-s, $what)"
else
	echo "build-kernel: $O/arch/x86/boot/bzImage ($((t1 - t0)) s, $cpu CPU-s, $what)"
fi
