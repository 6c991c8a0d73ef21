#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# threads-check.sh DIR N HOWS: DIR/pfm_count counts DIR/pfm-threads 3 N
# and 3 2N at user level, each way named in HOWS ("t", or "i t"), prints
# its tables and checks the differences exactly: with -t each thread's,
# with -i the total less the first thread's own counts. Exit status 0
# only when every count is exact. Shared by demo.sh (make run) and the
# lockup boots (guest/lockup.sh), which run it with the NMI watchdog on.
dir=$1 n=$2 hows=$3
rc=0

echo "== every thread of a multi-threaded command, exactly: pfm-threads 3 N"
echo "== (thread i runs i * N iterations of dec+jnz), N and 2N, user level,"
echo "== pfm_count -t: each thread on its own"
for how in $hows; do
	"$dir"/pfm_count -u -"$how" "$dir"/pfm-threads 3 "$n" >/tmp/"$how"-1 &&
		"$dir"/pfm_count -u -"$how" "$dir"/pfm-threads 3 $((2 * n)) >/tmp/"$how"-2 ||
		{ rc=1; : >/tmp/"$how"-1; : >/tmp/"$how"-2; }
done
cat /tmp/t-1
cat /tmp/t-2
# Rows sorted by instructions: the main thread, then threads 1, 2, 3.
grep '^ *[0-9]' /tmp/t-1 | sort -n -k 2 >/tmp/s1
grep '^ *[0-9]' /tmp/t-2 | sort -n -k 2 >/tmp/s2
paste /tmp/s1 /tmp/s2 | awk -v n="$n" '
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

case " $hows " in
*" i "*) ;;
*) exit $rc ;;
esac
echo
echo "== the same with pfm_count -i: one context for the whole command;"
echo "== its first thread's own counts, the others together, the total"
cat /tmp/i-1
cat /tmp/i-2
# The threads 1-3 together: -t the sum of their rows, -i "others".
{
	awk 'NR > 1 { i += $2; b += $4 } END { print i + 0, b + 0 }' /tmp/s1
	awk 'NR > 1 { i += $2; b += $4 } END { print i + 0, b + 0 }' /tmp/s2
	awk '$1 == "others" { print $2, $4 }' /tmp/i-1 /tmp/i-2
	awk 'FNR == 1 { print $2, $4 }' /tmp/s1 /tmp/s2
	awk '$1 ~ /^[0-9]+$/ { print $2, $4 }' /tmp/i-1 /tmp/i-2
} | awk -v n="$n" '
{ v[NR, 1] = $1; v[NR, 2] = $2 }
END {
	if (NR != 8) { print "MISSING COUNTS"; exit 1 }
	printf "%-22s %14s %14s %14s\n", "2N - N", "-t: threads", "-i: others",
	       "expected"
	printf "%-22s %14d %14d %14d\n", "threads 1-3 instr.",
	       v[2, 1] - v[1, 1], v[4, 1] - v[3, 1], 12 * n
	printf "%-22s %14d %14d %14d\n", "threads 1-3 branches",
	       v[2, 2] - v[1, 2], v[4, 2] - v[3, 2], 6 * n
	printf "%-22s %14d %14d %14s\n", "main thread instr.",
	       v[6, 1] - v[5, 1], v[8, 1] - v[7, 1], "-"
	if (v[2, 1] - v[1, 1] != 12 * n || v[4, 1] - v[3, 1] != 12 * n ||
	    v[2, 2] - v[1, 2] != 6 * n || v[4, 2] - v[3, 2] != 6 * n) {
		print "MISMATCH"
		exit 1
	}
	print "exact both ways: -i counts the threads the kernel made follow"
	print "the first one (its total less the first thread'"'"'s own counts)"
	print "as -t counts them one by one; the main thread depends on timing"
}' || rc=1
exit $rc
