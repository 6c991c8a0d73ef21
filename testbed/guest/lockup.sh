#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The lockup boots (testbed.guest=/lockup/lockup.sh, nmi_watchdog=1).
# First, counting with the detector on: the selftest libpfm_examples_test
# must pass, and pfm_count -u -t and -i must count pfm-threads 3 N and
# 3 2N exactly (demo/threads-check.sh, as make run does). Then a hard
# lockup on CPU 1 (guest/lockup.c) in the mode testbed.lockup= names on
# the command line: held (the default: a context counts on CPU 0
# throughout), loop (an unprivileged user attaches and detaches a context
# on CPU 0 in a loop) or released (after the last context is closed);
# testbed.lockup=loop,SECONDS makes the loop run that long before the
# lockup (make soak). A failed check prints "PERFMON-GUEST:
# ERROR lockup: ..." and the lockup still follows. The boot ends in the
# detector's panic; parse-log.py expects exactly that report after the
# line "PERFMON-EXPECT-HARD-LOCKUP cpu 1".
grep -q ' /sys/kernel/debug ' /proc/mounts ||
	mount -t debugfs debugfs /sys/kernel/debug
mode=held
for w in $(cat /proc/cmdline); do
	case "$w" in testbed.lockup=*) mode=${w#*=} ;; esac
done

up() { cut -d' ' -f1 /proc/uptime; }

# Between the markers of guest/init, so that the judge counts its results.
echo "PERFMON-KSFT-BEGIN perfmon:libpfm_examples_test uptime=$(up)"
(cd /lockup && exec timeout -s KILL 300 ./libpfm_examples_test) </dev/null >/tmp/examples 2>&1
rc=$?
cat /tmp/examples
echo "PERFMON-KSFT-END perfmon:libpfm_examples_test rc=$rc uptime=$(up)"
totals=$(grep '^# Totals:' /tmp/examples)
case "$rc $totals" in
"0 # Totals: pass:0 "*) ok=0 ;;
"0 # Totals: pass:"*" fail:0 "*" error:0") ok=1 ;;
*) ok=0 ;;
esac
[ $ok = 1 ] ||
	echo "PERFMON-GUEST: ERROR lockup: libpfm_examples_test with the NMI watchdog on: rc=$rc, ${totals:-no totals}"

sh /lockup/threads-check.sh /lockup 1000000 "i t" ||
	echo "PERFMON-GUEST: ERROR lockup: pfm_count -t and -i did not count pfm-threads 3 N and 3 2N exactly with the NMI watchdog on"

echo "lockup: pfm_count done, uptime $(up) s"
# shellcheck disable=SC2086
/lockup/lockup $(echo "$mode" | tr ',' ' ')
echo "PERFMON-GUEST: ERROR lockup: the boot went on after the lockup (status $?)"
exit 1
