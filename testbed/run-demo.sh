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
for prog in pfm-info pfm-count-loop; do
	gcc -static -O2 -Wall -isystem "$TEST_O/usr/include" -o "$demo/$prog" \
		"$TESTBED/demo/$prog.c" || stage_fail "" "the demo program $prog does not build"
done
"$TESTBED/mkinitramfs.sh" "$RUN/initramfs.cpio.gz" "" "$RUN/root" >/dev/null
stage_end

stage "boot the patched kernel (QEMU, 2 CPUs)"
"$TESTBED/run-guest.sh" --kernel "$TEST_O/arch/x86/boot/bzImage" \
	--initrd "$RUN/initramfs.cpio.gz" --log "$RUN/guest.log" \
	--append "testbed.guest=demo" --timeout 600 >/dev/null 2>&1 || true
stage_end
sed -n '/^PERFMON-GUEST: running/,/^PERFMON-GUEST: done/p' "$RUN/guest.log" |
	grep -v '^PERFMON-GUEST:'
grep -q '^PERFMON-GUEST: /demo.sh rc=0' "$RUN/guest.log" ||
	stage_fail "$RUN/guest.log" "the demo did not run to its end"
msg "full serial log: $RUN/guest.log"
