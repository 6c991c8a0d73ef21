#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The first kernel of the kexec boot (testbed.guest=/kexec/before.sh):
# kexec into the same kernel with contexts counting on both CPUs. The
# result of this step is printed by the kernel kexec'd into
# (kexec-after.sh), or below if the kexec failed.
echo "PERFMON-KSFT-BEGIN kexec:kexec"
echo "TAP version 13"
echo "1..1"
/kexec/kexec load /kexec/bzImage /kexec/initrd.gz \
	"console=ttyS0 nmi_watchdog=0 panic=-1 kunit.enable=0 testbed.guest=/kexec/after.sh"
echo "not ok 1 kexec into the test kernel with contexts counting"
echo "PERFMON-KSFT-END kexec:kexec rc=1"
exit 1
