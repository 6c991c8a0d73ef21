#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-guest.sh RESULTS: boot the test kernel (the final state of the
# series, built by check-build.sh) in QEMU and run KUnit and the perfmon
# kselftests in it; judge the serial log with parse-log.py.
#
# GUEST_RUNS lists the boots as LABEL:QEMU-CPU entries. A CPU with pmu=on
# boots the QEMU with the emulated PMU that check-pmu.sh built; the others
# boot stock QEMU, which has no PMU.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

RESULTS=$1
LOGDIR=$(dirname "$RESULTS")
result() { echo "$1 $2" >>"$RESULTS"; [ "$1" = PASS ] || msg "  $1 $2${3:+: $3}"; }

TEST_O=$CACHE/build/test
KSFT_O=$CACHE/build/kselftest
KSFT_INSTALL=$CACHE/build/kselftest-install
INITRD=$CACHE/build/initramfs.cpio.gz
GUEST_RUNS=${GUEST_RUNS:-nopmu:max core2:core2duo,pmu=on skylake:Skylake-Client,pmu=on fam10h:Opteron_G3,pmu=on fam17h:EPYC,pmu=on}

bzimage=$TEST_O/arch/x86/boot/bzImage
[ -f "$bzimage" ] || { result FAIL "guest: no test kernel" "the build stage failed"; exit 1; }

log=$LOGDIR/kselftest-build.log
{
	make -C "$BASE_REPO" O="$TEST_O" -s headers &&
	rm -rf "$KSFT_INSTALL" &&
	make -C "$BASE_REPO/tools/testing/selftests" TARGETS=perfmon \
		O="$KSFT_O" KHDR_INCLUDES="-isystem $TEST_O/usr/include" \
		USERLDFLAGS=-static KSFT_INSTALL_PATH="$KSFT_INSTALL" install &&
	"$TESTBED/mkinitramfs.sh" "$INITRD" "$KSFT_INSTALL"
} >"$log" 2>&1 || { result FAIL "guest: build the kselftests and the initramfs" "see $log"; exit 1; }

rc=0
for run in $GUEST_RUNS; do
	label=${run%%:*}
	cpu=${run#*:}
	glog=$LOGDIR/guest-$label.log
	qemu=
	case "$cpu" in
	*pmu=on*)
		qemu=$(cat "$CACHE/qemu/current" 2>/dev/null)
		if [ ! -x "$qemu" ]; then
			result FAIL "guest[$label] no QEMU with the emulated PMU" "the pmu stage failed"
			rc=1
			continue
		fi ;;
	esac
	t0=$(date +%s)
	"$TESTBED/run-guest.sh" ${qemu:+--qemu "$qemu"} --kernel "$bzimage" --initrd "$INITRD" --cpu "$cpu" \
		--log "$glog" --timeout "${GUEST_TIMEOUT:-900}" >"$LOGDIR/run-guest-$label.out" 2>&1
	msg "  guest $label (-cpu $cpu): $(($(date +%s) - t0)) s, log $glog"
	python3 "$TESTBED/parse-log.py" "$glog" >"$LOGDIR/parse-$label.out" 2>&1 || rc=1
	# Every line but the closing count is one result: "STATUS KIND NAME".
	sed '$d' "$LOGDIR/parse-$label.out" |
		while read -r status rest; do
			case "$status" in
			PASS | FAIL | SKIP) result "$status" "guest[$label] $rest" ;;
			esac
		done
	grep -q '^[0-9]* passed, ' "$LOGDIR/parse-$label.out" ||
		{ result FAIL "guest[$label] log could not be judged" "see $LOGDIR/parse-$label.out"; rc=1; }
done
exit $rc
