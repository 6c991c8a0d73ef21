#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-demo.sh: `make run`. Applies and builds the series (cached after the
# first time), boots the patched kernel in QEMU and shows what perfmon
# offers from inside the guest.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$TESTBED/setup.sh"
RUN=$CACHE/runs/demo-$(date +%Y%m%d-%H%M%S)
mkdir -p "$RUN"
: >"$RUN/results"
stage "apply and build the series (cached after the first run)"
"$TESTBED/check-series.sh" "$RUN/results" >/dev/null 2>&1 || true
[ -s "$CACHE/check/commits" ] || stage_fail "$RUN" "the series does not apply"
"$TESTBED/check-build.sh" "$RUN/results" || stage_fail "$RUN" "the build failed"
stage_end

stage "build the demo and the initramfs"
TEST_O=$CACHE/build/test
demo=$RUN/root/demo
mkdir -p "$demo"
make -C "$BASE_REPO" O="$TEST_O" -s headers
cp "$TESTBED/demo/demo.sh" "$RUN/root/demo.sh"
cp "$TESTBED/demo/threads-check.sh" "$demo/threads-check.sh"
for prog in pfm-info pfm-count-loop pfm-threads; do
	gcc -static -O2 -Wall -pthread -isystem "$TEST_O/usr/include" -o "$demo/$prog" \
		"$TESTBED/demo/$prog.c" || stage_fail "" "the demo program $prog does not build"
done
# A real multi-threaded workload: Debian's xz (xz-utils is a required
# package), with the libraries it links, as /demo/xz (busybox has an xz
# applet that only decompresses).
if xz=$(command -v xz) && libs=$(ldd "$xz" | awk '/=>/ { print $3 } /^\t\// { print $1 }'); then
	cp -L "$xz" "$demo/xz"
	for lib in $libs; do
		mkdir -p "$RUN/root$(dirname "$lib")"
		cp -L "$lib" "$RUN/root$lib"
	done
fi
# The sample of the series, as the last patch state has it: counts a
# command's instructions, cycles, branches; demo.sh compares its -i
# (PFM_FL_INHERIT) and -t (ptrace) ways of counting a whole command.
gcc -static -O2 -Wall -isystem "$TEST_O/usr/include" -o "$demo/pfm_count" \
	"$BASE_REPO/samples/perfmon/pfm_count.c" || stage_fail "" "samples/perfmon/pfm_count.c does not build"
"$TESTBED/mkinitramfs.sh" "$RUN/initramfs.cpio.gz" "" "$RUN/root" >/dev/null
stage_end

stage "QEMU with the emulated PMU (built once, then cached)"
qemu=$("$TESTBED/qemu/build.sh" 2>"$RUN/qemu-build.log" | tail -n 1) || qemu=
[ -x "$qemu" ] || { msg "no emulated PMU (see $RUN/qemu-build.log): stock QEMU, no PMU"; qemu=; }
stage_end

# Core 2 and AMD family 10h, as libpfm-3.x knows them; stock QEMU without
# the emulated PMU.
if [ -n "$qemu" ]; then
	runs="core2duo,pmu=on Opteron_G3,pmu=on"
else
	runs=max
fi
status=0
for cpu in $runs; do
	stage "boot the patched kernel (QEMU -cpu $cpu, 2 CPUs)"
	log=$RUN/guest-${cpu%%,*}.log
	"$TESTBED/run-guest.sh" ${qemu:+--qemu "$qemu"} --cpu "$cpu" \
		--kernel "$TEST_O/arch/x86/boot/bzImage" \
		--initrd "$RUN/initramfs.cpio.gz" --log "$log" \
		--append "testbed.guest=demo" --timeout 600 >/dev/null 2>&1 || true
	stage_end
	sed -n '/^PERFMON-GUEST: running/,/^PERFMON-GUEST: done/p' "$log" |
		grep -v '^PERFMON-GUEST:'
	if grep -q '^PERFMON-GUEST: /demo.sh rc=0' "$log"; then
		msg "full serial log: $log"
	else
		msg "FAILED: the demo did not run to its end on -cpu $cpu; read $log"
		status=1
	fi
	echo
done
exit $status
