#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-pmu.sh RESULTS: the emulated PMU (testbed/qemu) proven exact against
# the guest kernel's own perf_events: the test kernel (check-build.sh) boots
# on the four emulated models, on EPYC with AMD PerfMonV2 and on a hybrid
# Alder Lake (cpu_core on cpu0, cpu_atom on cpu1, each proven with its own
# PMU's events), and once without the PMU (testbed/pmu-proof/run.sh).
# perfmon is built in but never used there: no
# context is created, and until one is attached perfmon neither reserves
# nor writes a PMU register nor has a handler on the NMI path, so what is
# proven is perf_events on the emulated PMU, and perf_events unchanged by
# a perfmon that is not in use.
# A run whose inputs are all unchanged is not repeated (lib.sh).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

RESULTS=$1
LOGDIR=$(dirname "$RESULTS")
result() { echo "$1 $2" >>"$RESULTS"; [ "$1" = PASS ] || msg "  $1 $2${3:+: $3}"; }

kernel=$CACHE/build/test/arch/x86/boot/bzImage
[ -f "$kernel" ] || { result FAIL "pmu: no test kernel" "the build stage failed"; exit 1; }

log=$LOGDIR/qemu-build.log
qemu=$("$TESTBED/qemu/build.sh" 2>"$log" | tail -n 1)
if [ ! -x "$qemu" ]; then
	result FAIL "pmu: build QEMU with the emulated PMU" "see $log and $CACHE/qemu/build.log"
	exit 1
fi
echo "$qemu" >"$CACHE/qemu/current"
result PASS "pmu: build QEMU with the emulated PMU"

out=$LOGDIR/pmu-proof.out
key=pmu-$(files_id "$kernel" "$qemu" "$TESTBED/pmu-proof" "$0")
if kept=$(cached_run "$key"); then
	cp "$kept/pmu-proof.out" "$out"
	rc=0
	msg "  pmu-proof: inputs unchanged since $(cat "$kept/done"), results reused"
else
	QEMU=$qemu KEEP_LOGS=$LOGDIR/pmu-proof "$TESTBED/pmu-proof/run.sh" "$kernel" >"$out" 2>&1
	rc=$?
	[ $rc = 0 ] && grep -q '^[0-9]* passed, 0 failed' "$out" && keep_run "$key" "$out"
fi
# every TAP line is one result; the closing count line is not
sed -E -n 's/^(\[[^]]*\] )?(not ok|ok) [-0-9]* ?-? ?(.*)$/\2\t\1\3/p' "$out" |
	while IFS=$'\t' read -r status name; do
		case "$name" in
		*"# SKIP"*) result SKIP "pmu-proof ${name%%# SKIP*}" ;;
		*) if [ "$status" = ok ]; then
			result PASS "pmu-proof $name"
		   else
			result FAIL "pmu-proof $name" "see $out"
		   fi ;;
		esac
	done
grep -q '^[0-9]* passed, 0 failed' "$out" && [ $rc = 0 ] ||
	{ result FAIL "pmu-proof run" "see $out"; exit 1; }
