#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh [series|build|pmu|guest]...: the project's checks, in stages.
# With no argument every stage runs. Each stage prints its name and its
# elapsed time; a failure names the stage and the log to read. The last
# line counts every check: "N passed, N failed, N skipped".
set -uo pipefail
. "$(dirname "$0")/lib.sh"

"$TESTBED/setup.sh" || die "could not install the packages the test bed needs"

stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(series build pmu guest)
export CHECK_STAGES="${stages[*]}"

RUN=$CACHE/runs/$(date +%Y%m%d-%H%M%S)
mkdir -p "$RUN"
ln -sfn "$RUN" "$CACHE/runs/last"
RESULTS=$RUN/results
: >"$RESULTS"
T0=$(date +%s)
C0=$(cpu_ticks)
msg "logs: $RUN"

status=0
for s in "${stages[@]}"; do
	# QEMU with the emulated PMU builds in the background, at the lowest
	# priority, along with the kernels: on a cold cache it takes the CPU
	# time the kernel builds leave idle (links, configuration). The pmu
	# stage waits for it (testbed/qemu/build.sh holds a lock meanwhile).
	if [ "$s" = build ] && [[ " ${stages[*]} " == *" pmu "* ]]; then
		nice -n 19 "$TESTBED/qemu/build.sh" >/dev/null 2>"$RUN/qemu-prebuild.log" &
	fi
	case "$s" in
	series) name="series checks (apply, git am, quilt, tree view, form, checkpatch)" ;;
	build)
		if [ "${FULL_BUILDS:-0}" = 1 ]; then
			name="builds (a whole kernel at every patch; final tree as the test kernel, as a 32-bit kernel, without perfmon and with KASAN and UBSAN on every file, the last three in the background when the guests follow)"
		else
			name="builds (every patch: the series' files compiled; final tree as the test kernel, its files compiled without perfmon and as i386, and with KASAN and UBSAN on the series' files, the last three in the background when the guests follow)"
		fi ;;
	pmu) name="emulated PMU (QEMU built with testbed/qemu, proven with perf_events)" ;;
	guest) name="guest (KUnit and kselftests in QEMU)" ;;
	*) die "unknown stage $s" ;;
	esac
	stage "$name"
	before=$(grep -c '^FAIL' "$RESULTS")
	"$TESTBED/check-$s.sh" "$RESULTS" || true
	after=$(grep -c '^FAIL' "$RESULTS")
	stage_end
	if [ "$after" -gt "$before" ]; then
		status=1
		msg "FAILED stage \"$name\": $((after - before)) failure(s); logs in $RUN"
	fi
done

wait
wait_extra_builds "$RUN"
msg "total time $(($(date +%s) - T0)) s, $((($(cpu_ticks) - C0) / CLK_TCK)) CPU-s; results in $RESULTS"
pass=$(grep -c '^PASS' "$RESULTS")
fail=$(grep -c '^FAIL' "$RESULTS")
skip=$(grep -c '^SKIP' "$RESULTS")
grep -v '^PASS' "$RESULTS" >&2
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ] || status=1
exit $status
