#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# What `make run` shows inside the guest: the perfmon interface of the
# patched kernel, as a perfmon2 tool sees it, counting a real
# multi-threaded workload and a calibrated one whose counts are known.
echo "== /sys/kernel/perfmon"
for f in /sys/kernel/perfmon/*; do
	[ -f "$f" ] && printf '%-32s %s\n' "$f" "$(cat "$f")"
done
echo
echo "== what the system calls answer"
/demo/pfm-info
echo
if [ ! -e /sys/kernel/perfmon/pmu_desc/model ]; then
	echo "perfmon found no PMU on this machine: nothing to count"
	exit 0
fi

rc=0
if [ -x /demo/xz ]; then
	echo "== a real multi-threaded workload: xz -T2 compresses 3.4 MB,"
	echo "== samples/perfmon/pfm_count -t counts each of its threads"
	seq 1 500000 >/tmp/data
	/demo/pfm_count -t /demo/xz -T2 -3 --block-size=512KiB -k /tmp/data || rc=1
	echo "$(wc -c </tmp/data) bytes in, $(wc -c </tmp/data.xz) bytes out"
	echo
fi

echo "== every thread of a multi-threaded command, exactly: pfm-threads 3 N"
echo "== (thread i runs i * N iterations of dec+jnz), N and 2N, user level"
n=1000000
/demo/pfm_count -u -t /demo/pfm-threads 3 $n >/tmp/t1 &&
	/demo/pfm_count -u -t /demo/pfm-threads 3 $((2 * n)) >/tmp/t2 || rc=1
cat /tmp/t1
cat /tmp/t2
# Rows sorted by instructions: the main thread, then threads 1, 2, 3.
grep '^ *[0-9]' /tmp/t1 | sort -n -k 2 >/tmp/s1
grep '^ *[0-9]' /tmp/t2 | sort -n -k 2 >/tmp/s2
paste /tmp/s1 /tmp/s2 | awk -v n=$n '
BEGIN {
	printf "%-8s %16s %16s %16s %16s\n", "2N - N", "instructions",
	       "expected", "branches", "expected"
}
# $1-$4: thread instructions cycles branches of the N run, $5-$8 of 2N
# The main thread only starts and joins the others: how long it waits,
# and so which code it runs, depends on timing. The others are exact.
NR == 1 {
	printf "%-8s %16d %16s %16d %16s\n", "main", $6 - $2, "-", $8 - $4, "-"
	next
}
{
	i = NR - 1; di = $6 - $2; db = $8 - $4
	printf "%-8s %16d %16d %16d %16d\n", i, di, 2 * i * n, db, i * n
	if (di != 2 * i * n || db != i * n)
		bad = 1
}
END {
	if (NR != 4 || bad) { print "MISMATCH"; exit 1 }
	print "exact: each thread counted on its own, 2N run minus N run"
}' || rc=1
echo

echo "== a thread counts its own user instructions and branches"
/demo/pfm-count-loop 1000000 || rc=1
exit $rc
