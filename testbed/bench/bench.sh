#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh: `make bench` (issue 10). perfmon against perf_events in guest
# instructions, RDMSR, WRMSR, RDPMC and CR4 writes per operation, counted by
# QEMU itself (the pmcount TCG plugin) on the emulated PMUs; see README.md.
#
# Builds or reuses: QEMU with TCG plugins (testbed/qemu/build.sh), the
# plugin, the final kernel with CONFIG_PERFMON=y (the test kernel of
# `make check`, $CACHE/build/test, when it is the final state of the series)
# and the same with CONFIG_PERFMON off (for B2, built here), pfmbench,
# pfm_count (samples/perfmon, for B5's ptrace way) and an initramfs. Boots
# each model twice (PERFMON=y: B1 B3 B4 B5 B6; PERFMON=n: B1 without counting)
# and writes $CACHE/runs/last/bench.md (+ bench.png).
#
# Environment:
#   BENCH_MODELS   the models, each a QEMU CPU model or LABEL:CPU (the
#                  CPU string without pmu=on, which is added; the LABEL
#                  names the boots and the report's sections); default
#                  "Skylake-Client EPYC PerfMonV2:EPYC,perfmon-v2=on,family=25,model=17"
#                  (the last one EPYC with AMD PerfMonV2, like Zen 4)
#   BENCH_ITERS    operations per region (default 2000)
#   BENCH_ITERS5   B5 operations (thread create + join) per region
#                  (default BENCH_ITERS / 4)
#   BENCH_CPUS5    B5 on 1 CPU (all pinned to CPU 1) and/or unpinned on 2:
#                  "1" (default), "2" or "1,2"
#   BENCH_REPS     repetitions, variants alternating (default 5)
#   BENCH_ONLY     the benchmarks to run, e.g. "B1,B5" (default all: B1 B3
#                  B4 B5 B6, and B2 with B1)
#   BENCH_B2       0: no CONFIG_PERFMON=n kernel, no B2 (default 1, when B1
#                  runs)
#   BENCH_KERNEL   bzImage with CONFIG_PERFMON=y (default: the test kernel);
#                  with BENCH_HEADERS, BENCH_PFM_COUNT and BENCH_B2=0 no
#                  source tree is needed (BENCH_COMMIT/BENCH_BASE unused)
#   BENCH_SYSMAP   its System.map (default: next to the build)
#   BENCH_PFM_COUNT  pfm_count.c to build for the guest (default: the
#                  final tree's samples/perfmon/pfm_count.c)
#   BENCH_COMMIT   the state of the series to build (default: the last of
#                  $CACHE/check/commits), in BENCH_BASE (default $CACHE/base)
#   BENCH_HEADERS  uapi headers of the final tree (default: built here)
#   BENCH_RELEASE  1: also the final tree without its debug options
#                  (nodebug.config), PERFMON=y and =n, booted and reported
#                  as B1-nodebug ... B4-nodebug
#   BENCH_HOST_EVENT  1: every variant runs beside a perf host event
#                  (cycles, exclude_guest) on every CPU (pfmbench -H), as
#                  a machine with a system-wide profiler would
#   BENCH_ICOUNT   QEMU -icount option (default shift=0: 1 ns of guest time
#                  per instruction, one TCG thread; empty: MTTCG and the
#                  host's clock, as make check runs; see README.md)
set -euo pipefail

TESTBED=$(cd "$(dirname "$0")/.." && pwd)
HERE=$TESTBED/bench
CACHE=${PERFMON_CACHE:-/var/cache/perfmon-lite}
BC=$CACHE/bench
MODELS=${BENCH_MODELS:-Skylake-Client EPYC PerfMonV2:EPYC,perfmon-v2=on,family=25,model=17}
ITERS=${BENCH_ITERS:-2000}
ITERS5=${BENCH_ITERS5:-$((ITERS / 4))}
CPUS5=${BENCH_CPUS5:-1}
REPS=${BENCH_REPS:-5}
ONLY=${BENCH_ONLY:-B1,B3,B4,B5,B6}
B2=${BENCH_B2:-1}
case ",$ONLY," in *,B1,*) ;; *) B2=0 ;; esac
ICOUNT=${BENCH_ICOUNT-shift=0}
BASE=${BENCH_BASE:-$CACHE/base}
mkdir -p "$BC"
T0=$(date +%s)
msg() { echo "bench: $*" >&2; }
stage() { msg "[$(($(date +%s) - T0)) s] $*"; }

# --- QEMU with plugins, and the plugin -----------------------------------
stage "QEMU with TCG plugins"
QEMU=$("$TESTBED/qemu/build.sh" | tail -n 1)
QDIR=$(dirname "$QEMU")
[ -f "$QDIR/qemu-plugin.h" ] || { msg "no qemu-plugin.h beside $QEMU (QEMU built without plugins?)"; exit 1; }
PLUGIN=$BC/pmcount-$(cat "$HERE/pmcount.c" "$QDIR/qemu-plugin.h" | sha256sum | cut -c1-12).so
if [ ! -f "$PLUGIN" ]; then
	gcc -shared -fPIC -O2 -Wall $(pkg-config --cflags glib-2.0) -I "$QDIR" \
		"$HERE/pmcount.c" -o "$PLUGIN.tmp" && mv "$PLUGIN.tmp" "$PLUGIN"
fi

# --- kernels ---------------------------------------------------------------
kbuild_id() {
	git -C "$BASE" ls-tree -r "$1" |
		grep -v -E $'\t(Documentation/|tools/testing/selftests/|MAINTAINERS$)' |
		sha256sum | cut -c1-40
}
# The state of the series and its sources, only when something is built from
# them (a kernel, the headers, pfm_count).
SRC= TREE=
need_src() {
	[ -z "$SRC" ] || return 0
	COMMIT=${BENCH_COMMIT:-}
	if [ -z "$COMMIT" ]; then
		[ -s "$CACHE/check/commits" ] || { msg "no $CACHE/check/commits: run make check first (or set BENCH_COMMIT)"; exit 1; }
		COMMIT=$(tail -n 1 "$CACHE/check/commits" | cut -d' ' -f1)
	fi
	COMMIT=$(git -C "$BASE" rev-parse "$COMMIT")
	TREE=$(kbuild_id "$COMMIT")
	# The sources of that state, exported once (the checkout in BASE is make check's).
	SRC=$BC/src-${TREE:0:12}
	if [ ! -f "$SRC/.complete" ]; then
		stage "exporting the sources of ${COMMIT:0:12}"
		rm -rf "$SRC" && mkdir -p "$SRC"
		git -C "$BASE" archive "$COMMIT" | tar -x -C "$SRC"
		touch "$SRC/.complete"
	fi
}

KY=${BENCH_KERNEL:-}
SYSMAP_Y=${BENCH_SYSMAP:-}
if [ -z "$KY" ]; then
	need_src
	if [ "$(cat "$CACHE/build/test/.perfmon-tree" 2>/dev/null)" = "$TREE" ]; then
		KY=$CACHE/build/test/arch/x86/boot/bzImage
		SYSMAP_Y=$CACHE/build/test/System.map
		msg "PERFMON=y: the test kernel of make check ($KY)"
	else
		stage "building the final tree with CONFIG_PERFMON=y"
		nice -n 19 "$TESTBED/build-kernel.sh" "$SRC" "$BC/build-y" >&2
		KY=$BC/build-y/arch/x86/boot/bzImage
		SYSMAP_Y=$BC/build-y/System.map
	fi
fi
[ -n "$SYSMAP_Y" ] || SYSMAP_Y=$(dirname "$KY")/System.map
[ -f "$SYSMAP_Y" ] || SYSMAP_Y=$(dirname "$KY")/../../../System.map
NO=$BC/build-n
KN=
if [ "$B2" = 1 ]; then
	stage "building the final tree with CONFIG_PERFMON off (B2; incremental)"
	need_src
	if [ "$(cat "$NO/.perfmon-tree" 2>/dev/null)" != "$TREE" ] || [ ! -f "$NO/arch/x86/boot/bzImage" ]; then
		rm -f "$NO/.perfmon-tree"
		nice -n 19 "$TESTBED/build-kernel.sh" "$SRC" "$NO" "$HERE/noperfmon.config" >&2
		echo "$TREE" >"$NO/.perfmon-tree"
	fi
	KN=$NO/arch/x86/boot/bzImage
fi
# build_tree DIR FRAGMENT...: the final state into DIR (incremental)
build_tree() {
	local o=$1
	shift
	need_src
	if [ "$(cat "$o/.perfmon-tree" 2>/dev/null)" != "$TREE" ] || [ ! -f "$o/arch/x86/boot/bzImage" ]; then
		rm -f "$o/.perfmon-tree"
		nice -n 19 "$TESTBED/build-kernel.sh" "$SRC" "$o" "$@" >&2
		echo "$TREE" >"$o/.perfmon-tree"
	fi
}
RELEASE=${BENCH_RELEASE:-0}
if [ "$RELEASE" = 1 ]; then
	stage "building the final tree without debug options, PERFMON=y and =n (BENCH_RELEASE=1)"
	build_tree "$BC/build-ry" "$HERE/nodebug.config"
	build_tree "$BC/build-rn" "$HERE/nodebug.config" "$HERE/noperfmon.config"
fi

HDR=${BENCH_HEADERS:-}
if [ -z "$HDR" ]; then
	need_src
	HDR=$NO/usr/include
	# the headers of this state (B2 off: build-n may hold an older one's)
	if [ ! -f "$HDR/linux/perfmon.h" ] || [ "$(cat "$NO/.perfmon-headers" 2>/dev/null)" != "$TREE" ]; then
		nice make -s -C "$SRC" O="$NO" headers >&2
		echo "$TREE" >"$NO/.perfmon-headers"
	fi
fi
PFMC=${BENCH_PFM_COUNT:-}
if [ -z "$PFMC" ]; then
	need_src
	PFMC=$SRC/samples/perfmon/pfm_count.c
fi

# --- guest programs and initramfs ------------------------------------------
stage "pfmbench and the initramfs"
STAGE=$BC/stage
rm -rf "$STAGE" && mkdir -p "$STAGE/bench"
gcc -O2 -Wall -static -pthread -isystem "$HDR" -o "$STAGE/bench/pfmbench" "$HERE/pfmbench.c"
# B5's ptrace way (-t) and pfm_count -i: the sample tool of the series
gcc -O2 -Wall -static -isystem "$HDR" -o "$STAGE/bench/pfm_count" "$PFMC"
install -m 0755 "$HERE/guest/run.sh" "$STAGE/bench/run.sh"
INITRD=$BC/initramfs.cpio.gz
"$TESTBED/mkinitramfs.sh" "$INITRD" "" "$STAGE" >&2

# --- boots -----------------------------------------------------------------
RUN=$BC/runs/$(date +%Y%m%d-%H%M%S)
mkdir -p "$RUN"
ln -sfn "$RUN" "$BC/runs/last"
APPEND="testbed.guest=/bench/run.sh kunit.enable=0 kmemleak=off"
boot() { # label cpu kernel args
	local label=$1 cpu=$2 kernel=$3 args=$4 t0=$(date +%s) rc=0
	rm -f "$RUN/regions-$label.jsonl"
	"$TESTBED/run-guest.sh" --qemu "$QEMU" --kernel "$kernel" --initrd "$INITRD" \
		--cpu "$cpu,pmu=on" --log "$RUN/guest-$label.log" --timeout "${BENCH_TIMEOUT:-1800}" \
		--append "$APPEND bench.args=$args" \
		-- -plugin "$PLUGIN,out=$RUN/regions-$label.jsonl" ${ICOUNT:+-icount "$ICOUNT"} \
		>"$RUN/run-guest-$label.out" 2>&1 || rc=$?
	stage "  $label: $(($(date +%s) - t0)) s, exit $rc, log $RUN/guest-$label.log"
	[ $rc = 0 ] || { tail -n 20 "$RUN/guest-$label.log" >&2; return 1; }
	# a kernel that warned is not one to measure
	if grep -a -n -E '(WARNING|BUG):|Oops|Kernel panic|possible (circular|recursive) locking' \
		"$RUN/guest-$label.log" >&2; then
		msg "$label: the kernel reported a problem (log $RUN/guest-$label.log)"
		return 1
	fi
}
# pfmbench's lists, commas being bench.args' spaces
YARGS="-n,$ITERS,-r,$REPS,-m,$ITERS5,-c,${CPUS5//,/+},-b,${ONLY//,/+}${BENCH_HOST_EVENT:+,-H}"
fail=0
stage "plugin self-test (Skylake-Client)"
boot selftest Skylake-Client "$KY" "-t" || fail=1
LABELS=
for spec in $MODELS; do
	# LABEL:CPU, or a bare CPU model that is its own label
	m=${spec%%:*}
	cpu=${spec#*:}
	stage "booting $m (-cpu $cpu,pmu=on): PERFMON=y"
	boot "$m-y" "$cpu" "$KY" "$YARGS" || fail=1
	if [ "$B2" = 1 ]; then
		stage "booting $m: PERFMON=n"
		boot "$m-n" "$cpu" "$KN" "-n,$ITERS,-r,$REPS,-b,B1" || fail=1
	fi
	if [ "$RELEASE" = 1 ]; then
		stage "booting $m without debug options: PERFMON=y$([ "$B2" != 1 ] || echo ", =n")"
		boot "$m-yr" "$cpu" "$BC/build-ry/arch/x86/boot/bzImage" "$YARGS" || fail=1
		[ "$B2" != 1 ] ||
			boot "$m-nr" "$cpu" "$BC/build-rn/arch/x86/boot/bzImage" "-n,$ITERS,-r,$REPS,-b,B1" || fail=1
	fi
	LABELS="$LABELS $m"
done
[ $fail = 0 ] || { msg "a boot failed"; exit 1; }

# --- report ------------------------------------------------------------------
stage "report"
# runs/last is make check's last run; without one, a directory of its own
OUTDIR=$CACHE/runs/last
if [ ! -d "$OUTDIR" ]; then
	d=$CACHE/runs/bench-$(date +%Y%m%d-%H%M%S)
	mkdir -p "$d" && ln -sfn "$d" "$OUTDIR"
fi
RARGS=()
[ "$RELEASE" != 1 ] || RARGS=(--release --sysmap-r "$BC/build-ry/System.map")
# shellcheck disable=SC2086
python3 "$HERE/report.py" --run "$RUN" --sysmap-y "$SYSMAP_Y" --sysmap-n "$NO/System.map" \
	--kernel-y "$KY" --kernel-n "$KN" --icount "$ICOUNT" \
	"${RARGS[@]}" --md "$RUN/bench.md" --plot "$RUN/bench" $LABELS || rc=$?
cp "$RUN/bench.md" "$OUTDIR/bench.md"
[ ! -f "$RUN/bench.png" ] || cp "$RUN/bench.png" "$OUTDIR/bench.png"
stage "done: $OUTDIR/bench.md (logs in $RUN)"
[ "${rc:-0}" = 0 ] || { msg "the plugin's self-test failed: the figures are not to be trusted"; exit 1; }
