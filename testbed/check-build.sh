#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-build.sh RESULTS: every patch of the series builds on its own, and
# the final tree builds as the test kernel, with CONFIG_PERFMON disabled
# and as a 32-bit (i386) kernel.
#
# The states of the tree come from $CACHE/check/commits (check-series.sh).
# They are checked out one after the other in $BASE_REPO, so that git
# rewrites only the files that differ and make rebuilds incrementally, in
# one build directory ($CACHE/build/states), with testbed/states.config on
# tinyconfig: the smallest configuration that compiles all of perfmon and
# its hooks. The test configuration (testbed/kernel.config: ACPI, PCI,
# lockdep, kmemleak, the debug objects) costs two to three times as much
# per build; it builds only the final tree, the test kernel, in
# $CACHE/build/test, which the PMU proof and the guests boot.
#
# A state is identified by its kernel sources: its tree without the files
# that no part of "make bzImage" reads (Documentation/, the selftests,
# MAINTAINERS). A patch that changes only those has the build of the state
# before it, and a state that built once with the same configuration is
# not built again (stamps in $CACHE/stamps).
#
# Without CONFIG_PERFMON, the final tree is built from the smallest
# configuration that compiles every hook (noperfmon.config on tinyconfig):
# that build is a compile and link check, nothing boots it.
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
	"$TESTBED/i386.config" "$TESTBED/states.config" | sha256sum | cut -c1-16)
mkdir -p "$CACHE/stamps"
TEST_O=$CACHE/build/test
NOPFM_O=$CACHE/build/noperfmon
I386_O=$CACHE/build/i386
STATES_O=$CACHE/build/states

# kbuild_id COMMIT: the identity of a state's kernel sources.
kbuild_id() {
	git -C "$BASE_REPO" ls-tree -r "$1" |
		grep -v -E $'\t(Documentation/|tools/testing/selftests/|MAINTAINERS$)' |
		sha256sum | cut -c1-40
}

# build_state COMMIT TREE O LABEL [fragment...]
build_state() {
	local commit=$1 tree=$2 o=$3 label=$4
	shift 4
	local stamp=$CACHE/stamps/$label-$tree-$cfg_hash
	local log=$LOGDIR/build-$label-${tree:0:12}.log
	if [ -e "$stamp" ] && [ "$(cat "$o/.perfmon-tree" 2>/dev/null)" = "$tree" ]; then
		return 0
	fi
	[ "$(git -C "$BASE_REPO" rev-parse HEAD)" = "$(git -C "$BASE_REPO" rev-parse "$commit")" ] ||
		git -C "$BASE_REPO" checkout -q -f --detach "$commit" || return 1
	rm -f "$o/.perfmon-tree"
	if "$TESTBED/build-kernel.sh" "$BASE_REPO" "$o" "$@" >"$log" 2>&1; then
		echo "$tree" >"$o/.perfmon-tree"
		touch "$stamp"
		return 0
	fi
	cp "$o/build.log" "$log.full" 2>/dev/null
	return 1
}

failed=no
last_commit= last_tree= prev_id=
while read -r commit name; do
	tree=$(kbuild_id "$commit")
	last_commit=$commit last_tree=$tree
	if [ "$failed" = yes ]; then
		result SKIP "build $name" "an earlier patch did not build"
		continue
	fi
	if [ "$tree" = "$prev_id" ]; then
		result PASS "build $name (kernel sources as in the patch before)"
		continue
	fi
	prev_id=$tree
	if [ -e "$CACHE/stamps/states-$tree-$cfg_hash" ]; then
		result PASS "build $name"
		continue
	fi
	t0=$(date +%s)
	if KERNEL_FRAGMENT= build_state "$commit" "$tree" "$STATES_O" states "$TESTBED/states.config"; then
		msg "  built $name ($(($(date +%s) - t0)) s)"
		result PASS "build $name"
	else
		result FAIL "build $name" "see $LOGDIR/build-states-${tree:0:12}.log"
		failed=yes
	fi
done < <(cut -d' ' -f1,3 "$commits")

[ "$failed" = no ] || exit 1

# The test kernel: the final tree with the test configuration.
t0=$(date +%s)
if build_state "$last_commit" "$last_tree" "$TEST_O" test; then
	[ $(($(date +%s) - t0)) -lt 2 ] || msg "  built the test kernel ($(($(date +%s) - t0)) s)"
	result PASS "build final tree as the test kernel"
else
	result FAIL "build final tree as the test kernel" "see $LOGDIR/build-test-${last_tree:0:12}.log"
	exit 1
fi

# The final tree as i386 (then FILE, if given, is created) and without
# perfmon.
extra_builds() {
	local t0

	t0=$(date +%s)
	if build_state "$last_commit" "$last_tree" "$I386_O" i386 "$TESTBED/i386.config"; then
		if grep -q '^CONFIG_X86_32=y' "$I386_O/.config" &&
		   grep -q '^CONFIG_PERFMON=y' "$I386_O/.config"; then
			result PASS "build final tree as a 32-bit kernel"
		else
			result FAIL "build final tree as a 32-bit kernel" "CONFIG_X86_32 or CONFIG_PERFMON is not set"
		fi
	else
		result FAIL "build final tree as a 32-bit kernel" "see $LOGDIR/build-i386-${last_tree:0:12}.log"
	fi
	[ -z "${1:-}" ] || touch "$1"
	if KERNEL_FRAGMENT= build_state "$last_commit" "$last_tree" "$NOPFM_O" noperfmon "$TESTBED/noperfmon.config"; then
		if grep -q '^CONFIG_PERFMON=y' "$NOPFM_O/.config"; then
			result FAIL "build final tree without CONFIG_PERFMON" "CONFIG_PERFMON is still set"
		else
			result PASS "build final tree without CONFIG_PERFMON"
		fi
	else
		result FAIL "build final tree without CONFIG_PERFMON" "see $LOGDIR/build-noperfmon-${last_tree:0:12}.log"
	fi
	msg "  built the final tree as i386 and without CONFIG_PERFMON ($(($(date +%s) - t0)) s)"
}

# Leave the source at the final state for the guest stage.
git -C "$BASE_REPO" checkout -q -f --detach "$last_commit"

# When the guest stage follows (CHECK_STAGES, from check.sh), these two
# builds run in the background at the lowest priority while the PMU proof
# and the guests run: a TCG guest keeps about 1.2 of the 2 CPUs busy.
# The i386 kernel comes first: check-guest.sh waits for it before it boots
# it, and check.sh for both before its summary (wait_extra_builds, lib.sh).
if [[ " ${CHECK_STAGES:-} " == *" guest "* ]]; then
	: >"$LOGDIR/extra-builds.pending"
	msg "  the builds without CONFIG_PERFMON and as i386 go on in the background"
	(
		renice -n 9 "$BASHPID" >/dev/null
		extra_builds "$LOGDIR/extra-builds.i386"
		touch "$LOGDIR/extra-builds.done"
	) </dev/null &
else
	extra_builds
fi
