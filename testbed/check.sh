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

# One run at a time per cache: a run's background builds check out the
# final tree in $BASE_REPO until its summary, which another run's
# series would move under them.
mkdir -p "$CACHE"
exec 7>"$CACHE/.check.lock"
flock -n 7 || die "another make check or make soak runs on $CACHE (lock $CACHE/.check.lock)"

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
	# QEMU with the emulated PMU builds in the background from the first
	# stage on, at a low priority: on a cold cache it takes the CPU the
	# series stage leaves idle (one checkpatch at a time) and what the
	# test kernel's build leaves (links, configuration); the states of the
	# patches, later in the background, have a lower one still. The pmu
	# stage waits for it (testbed/qemu/build.sh holds a lock meanwhile).
	if [ "$s" = "${stages[0]}" ] && [[ " ${stages[*]} " == *" pmu "* ]]; then
		nice -n 10 "$TESTBED/qemu/build.sh" >/dev/null 2>"$RUN/qemu-prebuild.log" &
	fi
	case "$s" in
	series) name="series checks (apply, git am, quilt, tree view, form, checkpatch)" ;;
	build)
		if [ "${FULL_BUILDS:-0}" = 1 ]; then
			name="builds (final tree as the test kernel; a whole kernel at every patch, the final tree as a 32-bit kernel, without perfmon and with KASAN and UBSAN on every file, in the background when the guests follow)"
		else
			name="builds (final tree as the test kernel; every patch's files compiled, the final tree's without perfmon and as i386, in the background when the guests follow)"
		fi ;;
	pmu) name="emulated PMU (QEMU built with testbed/qemu, proven with perf_events)" ;;
	guest) name="guest (KUnit and kselftests in QEMU)" ;;
	*) die "unknown stage $s" ;;
	esac
	# The selftests and the initramfs build in the background while the
	# PMU stage runs; the guest stage waits for them (check-guest.sh).
	if [ "$s" = pmu ] && [[ " ${stages[*]} " == *" guest "* ]]; then
		"$TESTBED/check-guest.sh" --build "$RESULTS" >/dev/null 2>"$RUN/kselftest-prebuild.log" &
	fi
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
