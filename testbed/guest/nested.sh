#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kvm:nested_perfmon, a kselftest of the kvm boot: perfmon inside a KVM
# guest, as on the cloud machines most people count on.
#
# The kvm boot's initramfs carries /nested (check-guest.sh): QEMU with its
# libraries and firmware, the test kernel and a small initramfs of perfmon's
# counting tests.  This script boots that kernel as a KVM guest (L2) of the
# kvm boot (L1, whose SVM TCG emulates) with the vPMU that KVM offers
# (-cpu host,pmu=on,perfmon-v2=on: with kvm_amd.enable_mediated_pmu=1 the
# mediated vPMU, PerfMonV2 capped at version 2; perfmon-v2=on is the test
# bed's QEMU patch 0008), and passes its serial log on as TAP diagnostics,
# each line "# L2| ..." with its PERFMON- markers renamed L2GUEST-, so that
# L1's judge reads them as nothing of its own; the host (check-guest.sh)
# takes them back out and judges them as a boot of their own, kvm-L2.
# Its one TAP result: the L2 guest ran its tests to the end and reported
# status 0.  Without /nested or /dev/kvm it skips.
#
# NESTED_TESTS and NESTED_ARGS (the L2 guest's testbed.ksft= and
# testbed.ksft_args=) and NESTED_TIMEOUT come from /nested/config.
# NESTED_TIMEOUT only catches a hang: L2 runs at a fraction of L1's speed,
# and when the host is loaded (ten runnable tasks on two CPUs) its boot
# alone took 404 s of L1's clock (83 s otherwise), so it is generous.
# no_timer_check: a starved L2 failed its boot's check that the IO-APIC
# timer ticks ("IO-APIC + timer doesn't work!", a panic); KVM's timer is
# not in question there.
# -cpu host,-xsave: with XSAVE, the L2 kernel finds CPUID leaf 0xD's sizes
# inconsistent ("XSAVE consistency problem", TCG's SVM under KVM) and then
# crashes at its first fork.

N=/nested
NESTED_TESTS=perfmon:count_test
NESTED_ARGS=
NESTED_TIMEOUT=1200
NESTED_MEM=384M
[ -r $N/config ] && . $N/config

echo "TAP version 13"
if [ ! -x $N/qemu-system-x86_64 ]; then
	echo "1..0 # SKIP no nested guest in this boot's initramfs"
	exit 4
fi
if [ ! -c /dev/kvm ]; then
	echo "1..0 # SKIP no /dev/kvm"
	exit 4
fi
echo "1..1"
echo "# L2: -cpu host,pmu=on,perfmon-v2=on, testbed.ksft=$NESTED_TESTS${NESTED_ARGS:+ testbed.ksft_args=$NESTED_ARGS}"
log=/tmp/nested-l2.log
t0=$(cut -d' ' -f1 /proc/uptime)
# isa-debug-exit: QEMU exits 33 for the guest's status 0, 35 for 1
{
	timeout -s KILL "$NESTED_TIMEOUT" \
		$N/lib/ld-linux-x86-64.so.2 --library-path $N/lib $N/qemu-system-x86_64 \
		-L $N/fw -accel kvm -machine pc -cpu host,pmu=on,perfmon-v2=on,-xsave -smp 2 \
		-m "$NESTED_MEM" -nodefaults -display none -no-reboot -monitor none \
		-global kvm-apic.vapic=false \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-chardev stdio,id=con,signal=off -serial chardev:con \
		-d cpu_reset,guest_errors -D /tmp/nested-qemu.d \
		-kernel $N/bzImage -initrd $N/initrd.gz \
		-append "console=ttyS0 nmi_watchdog=0 no_timer_check panic=-1 kunit.enable=0 testbed.ksft=$NESTED_TESTS${NESTED_ARGS:+ testbed.ksft_args=$NESTED_ARGS}" \
		</dev/null 2>/tmp/nested-qemu.err
	echo $? >/tmp/nested-qemu.rc
} | tr -d '\r' | tee $log | sed 's/PERFMON-/L2GUEST-/g; s/^/# L2| /'
rc=$(cat /tmp/nested-qemu.rc)
t1=$(cut -d' ' -f1 /proc/uptime)
sed 's/^/# qemu: /' /tmp/nested-qemu.err
echo "# L2: QEMU exit code $rc after $t0 .. $t1 s of L1's uptime"
if [ $rc = 33 ] && grep -q '^PERFMON-GUEST: done' $log; then
	echo "ok 1 nested_perfmon: the KVM guest ran $NESTED_TESTS to the end, status 0"
	exit 0
fi
# how the guest's CPUs were at their resets (a triple fault's state)
sed 's/^/# qemu -d: /' /tmp/nested-qemu.d | tail -200
echo "not ok 1 nested_perfmon: the KVM guest ended with QEMU's code $rc (33: status 0)"
exit 1
