#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-build.sh RESULTS: every patch of the series compiles on its own, and
# the final tree builds as the test kernel, compiles with CONFIG_PERFMON
# disabled and as a 32-bit (i386) kernel, and builds as the sanitizer
# kernel (KASAN, UBSAN, KFENCE).
#
# Each fault is caught by the cheapest build that catches it. make check
# compiles, for each patch, the objects of the C files the series touches
# (its own and those it hooks into, kernel/fork.c to arch/x86/events/core.c,
# and the system call tables' objects), those the configuration builds, in
# one build directory ($CACHE/build/objs): make recompiles what the patch
# changed and what includes a header it changed. The same objects compile
# as i386 ($CACHE/build/i386-objs) and without CONFIG_PERFMON
# ($CACHE/build/noperfmon-objs: the hooked files). Whole kernels, a link
# and every other file included, are the test kernel and the sanitizer
# one. make soak (FULL_BUILDS=1) builds a whole kernel for every patch, as
# i386 and without perfmon instead, as below.
#
# The sanitizer kernel is the test configuration with testbed/kasan.config
# (generic inline KASAN, UBSAN, KFENCE), less what its boot does not use:
# ACPI and PCI (its guest has two CPUs from the MP table), lockdep,
# kmemleak and the debug objects (the test kernel's boots of the same
# programs have them). make soak builds and boots it (FULL_BUILDS=1,
# every file instrumented); make check only with KASAN_BUILD=1 and a
# kasan boot in GUEST_RUNS (its CPU time is what a cold make check could
# not afford: testbed/MEASUREMENTS.md). Then KASAN and UBSAN
# instrument the series' C files alone, the objects above (build-kernel.sh
# SANITIZE_OBJECTS): perfmon's own and the files it hooks into (fork,
# exit, exec, the context switch, perf's x86 core, the watchdog), where
# its pointers are followed; KASAN's allocator side (redzones, the
# quarantine of freed objects) covers every allocation, so that a context
# or a task that perfmon's code reaches after it was freed is reported.
# The rest compiles as in the test kernel, at its cost. make soak builds
# it with every file instrumented, into $CACHE/build/kasan-full. (One
# kernel with the sanitizers for every boot would save a build, but its
# boots cost twice: the 64-bit suite on the hybrid model took 284 s on it
# against 143 s on the test kernel, and as much with perfmon's files alone
# instrumented: the sanitizers' runtime costs, not the instrumented code.)
#
# The states of the tree come from $CACHE/check/commits (check-series.sh).
# They are checked out one after the other in a worktree of $BASE_REPO
# ($CACHE/src/states), so that git rewrites only the files that differ and
# make rebuilds incrementally, in one build directory ($CACHE/build/states),
# with testbed/states.config on tinyconfig: the smallest configuration that
# compiles all of perfmon and its hooks. The test configuration
# (testbed/kernel.config: ACPI, PCI, lockdep, kmemleak, the debug objects)
# builds only the final tree, in $BASE_REPO, into $CACHE/build/test: the
# test kernel, which the PMU proof and the guests boot. When the guests
# follow, it builds first and alone, and the states build in the
# background while the guests run (below); otherwise it builds in the
# background while the states build: an incremental build of a state is
# mostly one process at a time (make's walk, the link), which leaves the
# other CPU to it.
#
# A state is identified by its kernel sources: its tree without the files
# that no part of "make bzImage" reads (Documentation/, the selftests,
# MAINTAINERS). A patch that changes only those has the build of the state
# before it, and a state that built once with the same configuration is
# not built again (stamps in $CACHE/stamps).
#
# As i386, the final tree is built with the states' configuration made
# 32-bit (i386.config), into $CACHE/build/i386-states; make soak
# (I386_BOOT=1) builds the test configuration made 32-bit instead, into
# $CACHE/build/i386, and boots it.
#
# Without CONFIG_PERFMON, the final tree is built from the smallest
# configuration that compiles every hook (noperfmon.config on tinyconfig),
# into $CACHE/build/noperfmon: that build is a compile and link check,
# nothing boots it. (Not in the states' directory: CONFIG_PERFMON changes
# struct task_struct, and so nearly every object, both ways.)
#
# The sanitizer kernel goes after the i386 and no-perfmon builds, in the
# background with them, and is stamp-cached like them.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

RESULTS=$1
LOGDIR=$(dirname "$RESULTS")
result() { echo "$1 $2" >>"$RESULTS"; [ "$1" = PASS ] || msg "  $1 $2${3:+: $3}"; }

commits=$CACHE/check/commits
if [ ! -s "$commits" ]; then
	result SKIP "build: every patch" "the series did not apply"
	exit 1
fi

cfg_hash=$(cat "$TESTBED/build-kernel.sh" "$TESTBED/kernel.config" "$TESTBED/noperfmon.config" \
	"$TESTBED/i386.config" "$TESTBED/states.config" "$TESTBED/kasan.config" | sha256sum | cut -c1-16)
mkdir -p "$CACHE/stamps"
TEST_O=$CACHE/build/test
FULL_BUILDS=${FULL_BUILDS:-0}
# make check compiles the series' objects as i386 with the states'
# configuration; make soak (I386_BOOT=1) builds the test configuration,
# which it boots.
if [ "${I386_BOOT:-0}" = 1 ]; then
	I386_O=$CACHE/build/i386 I386_LABEL=i386 I386_FRAGMENTS=("$TESTBED/kernel.config")
elif [ "$FULL_BUILDS" = 1 ]; then
	I386_O=$CACHE/build/i386-states I386_LABEL=i386-states I386_FRAGMENTS=("$TESTBED/states.config")
else
	I386_O=$CACHE/build/i386-objs I386_LABEL=i386-objs I386_FRAGMENTS=("$TESTBED/states.config")
fi
# The sanitizer kernel only when a guest boots it: make soak's
# (KASAN_BUILD=1, with FULL_BUILDS), or on request.
KASAN_BUILD=${KASAN_BUILD:-$FULL_BUILDS}
KASAN_O=$CACHE/build/kasan KASAN_LABEL=kasan
KASAN_WHAT="build final tree with KASAN, UBSAN and KFENCE on the series' files"
[ "$KASAN_BUILD" = 1 ] || KASAN_WHAT=
if [ "$FULL_BUILDS" = 1 ]; then
	STATES_O=$CACHE/build/states STATES_LABEL=states
	NOPFM_O=$CACHE/build/noperfmon NOPFM_LABEL=noperfmon
	KASAN_O=$CACHE/build/kasan-full KASAN_LABEL=kasan-full
	KASAN_WHAT="build final tree with KASAN, UBSAN and KFENCE on every file"
else
	STATES_O=$CACHE/build/objs STATES_LABEL=objs
	NOPFM_O=$CACHE/build/noperfmon-objs NOPFM_LABEL=noperfmon-objs
fi
STATES_SRC=$CACHE/src/states

# kbuild_id COMMIT: the identity of a state's kernel sources.
kbuild_id() {
	git -C "$BASE_REPO" ls-tree -r "$1" |
		grep -v -E $'\t(Documentation/|tools/testing/selftests/|MAINTAINERS$)' |
		sha256sum | cut -c1-40
}

# build_state COMMIT TREE O LABEL SRC [fragment...]: build COMMIT,
# checked out in the git worktree SRC, into O.
build_state() {
	local commit=$1 tree=$2 o=$3 label=$4 src=$5
	shift 5
	local stamp=$CACHE/stamps/$label-$tree-$cfg_hash
	local log=$LOGDIR/build-$label-${tree:0:12}.log
	if [ -e "$stamp" ] && [ "$(cat "$o/.perfmon-tree" 2>/dev/null)" = "$tree" ]; then
		return 0
	fi
	[ "$(git -C "$src" rev-parse HEAD)" = "$(git -C "$src" rev-parse "$commit")" ] ||
		git -C "$src" checkout -q -f --detach "$commit" || return 1
	# a build directory stays with the source tree it was configured from
	[ "$(cat "$o/.perfmon-src" 2>/dev/null)" = "$src" ] || rm -rf "$o"
	mkdir -p "$o" && echo "$src" >"$o/.perfmon-src"
	rm -f "$o/.perfmon-tree"
	if "$TESTBED/build-kernel.sh" "$src" "$o" "$@" >"$log" 2>&1; then
		echo "$tree" >"$o/.perfmon-tree"
		touch "$stamp"
		return 0
	fi
	cp "$o/build.log" "$log.full" 2>/dev/null
	return 1
}

# cpu_of LABEL TREE: ", N CPU-s", the CPU time of that build (its log's
# last line, build-kernel.sh), or nothing.
cpu_of() {
	local c
	c=$(grep -o '[0-9]* CPU-s' "$LOGDIR/build-$1-${2:0:12}.log" 2>/dev/null | tail -n 1)
	echo "${c:+, $c}"
}

last_commit=$(tail -n 1 "$commits" | cut -d' ' -f1)
last_tree=$(kbuild_id "$last_commit")
first_commit=$(head -n 1 "$commits" | cut -d' ' -f1)

# The objects of the compiles: every C file of the kernel that the series
# adds or changes, the system call tables' objects and the perf hard
# lockup detector's (which the watchdog patch builds beside the buddy
# detector); build-kernel.sh keeps those the configuration builds.
objects=$(
	{
		git -C "$BASE_REPO" diff --name-only "$BASE_TAG" "$last_commit" -- '*.c' |
			grep -v -E '^(tools|samples|Documentation|scripts|usr)/'
		printf '%s\n' arch/x86/entry/syscall_64.c arch/x86/entry/syscall_32.c \
			kernel/watchdog_perf.c
	} | sed 's/\.c$/.o/' | sort -u | paste -sd' ' -
)
state_objects=$objects kasan_objects=$objects
[ "$FULL_BUILDS" = 0 ] || state_objects= kasan_objects=

# build_states: the state of every patch, in order, into one build
# directory; after a state that does not build, the later ones are
# skipped.
build_states() {
	local failed=no prev_id= commit name tree t0

	if ! git -C "$STATES_SRC" rev-parse -q --verify HEAD >/dev/null 2>&1; then
		rm -rf "$STATES_SRC"
		git -C "$BASE_REPO" worktree prune
		git -C "$BASE_REPO" worktree add -q --detach "$STATES_SRC" "$first_commit" ||
			{ result FAIL "build: every patch" "cannot create $STATES_SRC"; return 1; }
	fi
	while read -r commit name; do
		tree=$(kbuild_id "$commit")
		if [ "$failed" = yes ]; then
			result SKIP "build $name" "an earlier patch did not build"
			continue
		fi
		if [ "$tree" = "$prev_id" ]; then
			result PASS "build $name (kernel sources as in the patch before)"
			continue
		fi
		prev_id=$tree
		if [ -e "$CACHE/stamps/$STATES_LABEL-$tree-$cfg_hash" ]; then
			result PASS "build $name"
			continue
		fi
		t0=$(date +%s)
		if BUILD_OBJECTS=$state_objects KERNEL_FRAGMENT= build_state "$commit" "$tree" "$STATES_O" \
			"$STATES_LABEL" "$STATES_SRC" "$TESTBED/states.config"; then
			msg "  built $name ($(($(date +%s) - t0)) s$(cpu_of "$STATES_LABEL" "$tree"))"
			result PASS "build $name"
		else
			result FAIL "build $name" "see $LOGDIR/build-$STATES_LABEL-${tree:0:12}.log"
			failed=yes
		fi
	done < <(cut -d' ' -f1,3 "$commits")
	[ "$failed" = no ]
}

# test_kernel_result RC SECONDS: the test kernel's verdict.
test_kernel_result() {
	if [ "$1" = 0 ]; then
		[ "$2" -lt 2 ] || msg "  built the test kernel ($2 s$(cpu_of test "$last_tree"))"
		result PASS "build final tree as the test kernel"
		return 0
	fi
	result FAIL "build final tree as the test kernel" "see $LOGDIR/build-test-${last_tree:0:12}.log"
	return 1
}

git -C "$BASE_REPO" checkout -q -f --detach "$last_commit" ||
	{ result FAIL "build final tree as the test kernel" "cannot check it out"; exit 1; }
guests_follow=no
[[ " ${CHECK_STAGES:-} " == *" guest "* ]] && guests_follow=yes

if [ "$guests_follow" = no ]; then
	# The test kernel in the background (see above), the states meanwhile.
	(
		renice -n 5 "$BASHPID" >/dev/null
		t0=$(date +%s)
		build_state "$last_commit" "$last_tree" "$TEST_O" test "$BASE_REPO"
		echo "$? $(($(date +%s) - t0))" >"$LOGDIR/test-kernel.rc"
	) </dev/null &
	test_pid=$!
	build_states
	states_rc=$?
	wait "$test_pid"
	read -r rc secs <"$LOGDIR/test-kernel.rc" 2>/dev/null || rc=1 secs=0
	test_kernel_result "$rc" "$secs" || exit 1
	[ "$states_rc" = 0 ] || exit 1
else
	# The test kernel alone, on every CPU: the PMU proof and the guests
	# need it and nothing else of this stage; the states go on in the
	# background with the builds below.
	t0=$(date +%s)
	build_state "$last_commit" "$last_tree" "$TEST_O" test "$BASE_REPO" </dev/null
	rc=$?
	test_kernel_result "$rc" "$(($(date +%s) - t0))" || exit 1
fi

# The final tree as i386 (then I386_FILE, if given, is created), without
# perfmon, and with the sanitizers (then KASAN_FILE).
extra_builds() {
	local t0 t1

	local i386_objects=$objects i386_what="compile the series' files as i386 (objects)"
	local nopfm_objects=$objects nopfm_what="compile the hooked files without CONFIG_PERFMON (objects)"

	[ "$I386_LABEL" = i386-objs ] ||
		i386_objects= i386_what="build final tree as a 32-bit kernel"
	[ "$NOPFM_LABEL" = noperfmon-objs ] ||
		nopfm_objects= nopfm_what="build final tree without CONFIG_PERFMON"
	t0=$(date +%s)
	if BUILD_OBJECTS=$i386_objects KERNEL_FRAGMENT= build_state "$last_commit" "$last_tree" \
		"$I386_O" "$I386_LABEL" "$BASE_REPO" "${I386_FRAGMENTS[@]}" "$TESTBED/i386.config"; then
		if grep -q '^CONFIG_X86_32=y' "$I386_O/.config" &&
		   grep -q '^CONFIG_PERFMON=y' "$I386_O/.config"; then
			result PASS "$i386_what"
		else
			result FAIL "$i386_what" "CONFIG_X86_32 or CONFIG_PERFMON is not set"
		fi
	else
		result FAIL "$i386_what" "see $LOGDIR/build-$I386_LABEL-${last_tree:0:12}.log"
	fi
	[ -z "${1:-}" ] || touch "$1"
	# before the KASAN kernel: nothing builds while the kasan guest, whose
	# irqsoff test a busy host can fail, boots it
	if BUILD_OBJECTS=$nopfm_objects KERNEL_FRAGMENT= build_state "$last_commit" "$last_tree" \
		"$NOPFM_O" "$NOPFM_LABEL" "$BASE_REPO" "$TESTBED/noperfmon.config"; then
		if grep -q '^CONFIG_PERFMON=y' "$NOPFM_O/.config"; then
			result FAIL "$nopfm_what" "CONFIG_PERFMON is still set"
		else
			result PASS "$nopfm_what"
		fi
	else
		result FAIL "$nopfm_what" "see $LOGDIR/build-$NOPFM_LABEL-${last_tree:0:12}.log"
	fi
	t1=$(date +%s)
	if [ -z "$KASAN_WHAT" ]; then
		:
	elif SANITIZE_OBJECTS=$kasan_objects build_state "$last_commit" "$last_tree" "$KASAN_O" \
		"$KASAN_LABEL" "$BASE_REPO" "$TESTBED/kasan.config"; then
		# the sanitizers' calls in a file of perfmon's, and in make
		# check none in a file of the rest
		if ! grep -q '^CONFIG_PERFMON=y' "$KASAN_O/.config"; then
			result FAIL "$KASAN_WHAT" "CONFIG_PERFMON is not set"
		elif ! nm -u "$KASAN_O/kernel/perfmon/context.o" | grep -q ' __asan_report_' ||
		     ! nm -u "$KASAN_O/kernel/perfmon/context.o" | grep -q ' __ubsan_handle_'; then
			result FAIL "$KASAN_WHAT" "kernel/perfmon/context.o has no __asan_report_ or __ubsan_handle_ call"
		elif [ -n "$kasan_objects" ] && nm -u "$KASAN_O/kernel/pid.o" | grep -q -E ' __(asan|ubsan)_'; then
			result FAIL "$KASAN_WHAT" "kernel/pid.o, not one of the series' files, is instrumented"
		else
			result PASS "$KASAN_WHAT"
		fi
	else
		result FAIL "$KASAN_WHAT" "see $LOGDIR/build-$KASAN_LABEL-${last_tree:0:12}.log"
	fi
	[ "$(($(date +%s) - t1))" -lt 2 ] ||
		msg "  built the final tree with KASAN ($(($(date +%s) - t1)) s$(cpu_of "$KASAN_LABEL" "$last_tree"))"
	[ -z "${2:-}" ] || touch "$2"
	msg "  built the final tree as i386, without CONFIG_PERFMON${KASAN_WHAT:+ and with KASAN} ($(($(date +%s) - t0)) s)"
}

# Leave the source at the final state for the guest stage.
git -C "$BASE_REPO" checkout -q -f --detach "$last_commit"

# When the guest stage follows (CHECK_STAGES, from check.sh), the states
# and the builds above run in the background at the lowest priority while
# the PMU proof and the guests run: a TCG guest keeps about 1.2 of the 2
# CPUs busy, and QEMU's build (check.sh) comes before them. The states
# first, then i386, then without perfmon, the KASAN kernel last:
# check-guest.sh waits for each kernel it boots (the kasan guest last,
# when nothing builds any more), and check.sh for all of them before its
# summary (wait_extra_builds, lib.sh).
if [ "$guests_follow" = yes ]; then
	: >"$LOGDIR/extra-builds.pending"
	msg "  the states of every patch, the builds as i386 and without CONFIG_PERFMON${KASAN_WHAT:+ and with KASAN} go on in the background (log: $LOGDIR/states.log)"
	(
		renice -n 19 "$BASHPID" >/dev/null
		t0=$(date +%s)
		build_states 2>"$LOGDIR/states.log"
		msg "  built the states of every patch ($(($(date +%s) - t0)) s, in the background)"
		extra_builds "$LOGDIR/extra-builds.i386" "$LOGDIR/extra-builds.kasan"
		touch "$LOGDIR/extra-builds.done"
	) </dev/null &
else
	extra_builds
fi
