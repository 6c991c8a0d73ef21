#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The lockup boot (testbed.guest=/lockup/lockup.sh, nmi_watchdog=1): a
# hard lockup on CPU 1 while a context counts on CPU 0 (guest/lockup.c).
# The boot ends in the detector's panic; parse-log.py expects exactly
# that report after the line "PERFMON-EXPECT-HARD-LOCKUP cpu 1".
grep -q ' /sys/kernel/debug ' /proc/mounts ||
	mount -t debugfs debugfs /sys/kernel/debug
/lockup/lockup
echo "PERFMON-GUEST: ERROR lockup: the boot went on after the lockup (status $?)"
