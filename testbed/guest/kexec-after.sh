#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kernel kexec'd into by kexec-before.sh: it booted, so the kexec
# step passed. perf_events has checked the PMU at boot ("Broken BIOS
# detected" if an event select still counted: parse-log.py fails the run
# on that line too); a context must count exactly. Then a restart with
# contexts counting: QEMU (-no-reboot) exits, and the log must show no
# warning on the way.
echo "ok 1 kexec into the test kernel with contexts counting"
echo "PERFMON-KSFT-END kexec:kexec rc=0"

status=0
echo "PERFMON-KSFT-BEGIN kexec:pmu"
echo "TAP version 13"
echo "1..1"
if dmesg | grep -E 'Broken BIOS|corrupted hw-PMU' | sed 's/^/# /' | grep .; then
	echo "not ok 1 no counter left counting by the kernel before"
	rc=1
else
	echo "ok 1 no counter left counting by the kernel before"
	rc=0
fi
echo "PERFMON-KSFT-END kexec:pmu rc=$rc"
[ $rc = 0 ] || status=1

echo "PERFMON-KSFT-BEGIN kexec:count"
/kexec/kexec count
rc=$?
echo "PERFMON-KSFT-END kexec:count rc=$rc"
[ $rc = 0 ] || status=1

echo "PERFMON-GUEST: status=$status"
echo "PERFMON-GUEST: done"
/kexec/kexec restart
exit 1
