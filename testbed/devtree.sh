#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# devtree.sh: create the development tree, a git work tree of the pristine
# kernel source with the series applied as one commit per patch.
#
#   DEVTREE (default $PERFMON_CACHE/devtree), branch "perfmon" (or a dated
#   name when another tree has it checked out), based on the tag
#   perfmon-base of $PERFMON_CACHE/base.
#
# Edit there, fold fixes into the right commit (git commit --fixup, then
# git rebase -i --autosquash perfmon-base), then `make export`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

DEVTREE=${DEVTREE:-$CACHE/devtree}

if [ -e "$DEVTREE" ]; then
	msg "$DEVTREE exists already; remove it first to recreate it from the series"
	git -C "$DEVTREE" log --oneline "$BASE_TAG..HEAD" >&2 || true
	exit 1
fi

ensure_base_repo
git -C "$BASE_REPO" worktree prune
# The branch is "perfmon", or a new name when another tree has that one.
branch=perfmon
if git -C "$BASE_REPO" show-ref -q --verify refs/heads/$branch; then
	git -C "$BASE_REPO" branch -D $branch >/dev/null 2>&1 ||
		branch=perfmon-$(date +%Y%m%d-%H%M%S)
fi
git -C "$BASE_REPO" worktree add -q -b "$branch" "$DEVTREE" "$BASE_TAG"
cd "$DEVTREE"
git config user.name "$PATCH_AUTHOR_NAME"
git config user.email "$PATCH_AUTHOR_EMAIL"
git config diff.orderFile scripts/git.orderFile
mapfile -t patches < <(series_patches)
if [ ${#patches[@]} -gt 0 ]; then
	git am -q --keep-cr "${patches[@]}"
fi
msg "development tree: $DEVTREE"
git log --oneline "$BASE_TAG..HEAD" >&2
