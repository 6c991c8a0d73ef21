#!/bin/sh
# /bench/run.sh: guest side of `make bench`, run by testbed/guest/init
# (testbed.guest=/bench/run.sh). Arguments of pfmbench come from the kernel
# command line: bench.args=-n,2000,-r,3 (commas for spaces).
args=
for w in $(cat /proc/cmdline); do
	case $w in bench.args=*) args=$(echo "${w#bench.args=}" | tr , ' ') ;; esac
done
echo "BENCH-GUEST: $(uname -r) $(grep -m1 'model name' /proc/cpuinfo)"
echo "BENCH-GUEST: pfmbench $args"
# shellcheck disable=SC2086
/bench/pfmbench $args
rc=$?
echo "BENCH-GUEST: rc=$rc"
exit $rc
