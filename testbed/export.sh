#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# export.sh: regenerate the product from the development tree:
#   - NNNN-*.patch and series: git format-patch of perfmon-base..HEAD;
#   - the tree view: every file the series creates, as after the last patch
#     (arch/, kernel/, include/, tools/, Documentation/, samples/).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

DEVTREE=${DEVTREE:-$CACHE/devtree}
[ -d "$DEVTREE" ] || die "no development tree at $DEVTREE (make tree)"
cd "$DEVTREE"
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	die "$DEVTREE has uncommitted changes; commit or fold them first"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
git format-patch -q --zero-commit --no-signature --no-cover-letter \
	-O scripts/git.orderFile -o "$out" "$BASE_TAG..HEAD"

rm -f "$TOP"/[0-9][0-9][0-9][0-9]-*.patch
{
	echo "# perfmon-lite for Linux $KSRC_SERIES: apply in this order (git am or quilt)"
	for p in "$out"/*.patch; do
		cp "$p" "$TOP/"
		basename "$p"
	done
} >"$TOP/series"

# The cover letter: every Cc of the patches (git send-email --cc-cover),
# testbed/cover-letter.txt, the shortlog and the diffstat.
n=$(grep -vc '^#' "$TOP/series")
{
	git log --format=%B "$BASE_TAG..HEAD" | sed -n 's/^Cc: //p' | sort -u | sed 's/^/Cc: /'
	echo "Subject: [PATCH 00/$(printf '%02d' "$n")] $(head -n 1 "$TESTBED/cover-letter.txt")"
	echo
	tail -n +3 "$TESTBED/cover-letter.txt"
	echo
	git shortlog --no-merges "$BASE_TAG..HEAD"
	git diff --stat=72 "$BASE_TAG" HEAD
} >"$TOP/cover-letter.txt"

# The tree view: exactly the files the series adds.
for d in $TREE_VIEW_DIRS; do
	[ -d "$TOP/$d" ] && git -C "$TOP" ls-files -z -- "$d" | (cd "$TOP" && xargs -0r rm -f)
	[ -d "$TOP/$d" ] && find "$TOP/$d" -type f -delete
done
mapfile -t added < <(git diff --name-only --no-renames --diff-filter=A "$BASE_TAG" HEAD)
if [ ${#added[@]} -gt 0 ]; then
	git archive HEAD -- "${added[@]}" | tar -C "$TOP" -xf -
fi
for d in $TREE_VIEW_DIRS; do
	[ -d "$TOP/$d" ] && find "$TOP/$d" -type d -empty -delete
done
msg "exported $(grep -vc '^#' "$TOP/series") patches and ${#added[@]} files"
