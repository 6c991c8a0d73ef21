#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# export.sh: regenerate the product from the development tree:
#   - NNNN-*.patch and series: git format-patch of perfmon-base..HEAD as
#     two series, the core (up to CORE_LAST_SUBJECT, lib.sh) and
#     PFM_FL_INHERIT, each numbered from 1 in its subjects, with a cover
#     letter each (cover-letter.txt, cover-letter-inherit.txt);
#   - the tree view: every file the series creates, as after the last patch
#     (arch/, kernel/, include/, tools/, Documentation/, samples/).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

DEVTREE=${DEVTREE:-$CACHE/devtree}
[ -d "$DEVTREE" ] || die "no development tree at $DEVTREE (make tree)"
cd "$DEVTREE"
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	die "$DEVTREE has uncommitted changes; commit or fold them first"

# The boundary of the two series: the last patch of the core.
core=$(git log --format='%H %s' "$BASE_TAG..HEAD" |
	awk -v s="$CORE_LAST_SUBJECT" 'substr($0, 42) == s { print $1 }')
[ "$(printf '%s\n' "$core" | grep -c .)" = 1 ] ||
	die "no single commit \"$CORE_LAST_SUBJECT\" in $BASE_TAG..HEAD: the last patch of the core series (CORE_LAST_SUBJECT in testbed/lib.sh)"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fp() {
	git format-patch -q --zero-commit --no-signature --no-cover-letter \
		--subject-prefix="PATCH v$SERIES_VERSION" \
		-O scripts/git.orderFile -o "$out/$1" "$2"
}
fp core "$BASE_TAG..$core"
fp inherit "$core..HEAD"
ncore=$(find "$out/core" -name '*.patch' | wc -l)
ninherit=$(find "$out/inherit" -name '*.patch' | wc -l)

# One series file for both, in the order they apply; the files are
# numbered through, each series' subjects from 1.
rm -f "$TOP"/[0-9][0-9][0-9][0-9]-*.patch
{
	echo "# perfmon-lite for Linux $KSRC_SERIES: apply in this order (git am or quilt)"
	for p in "$out"/core/*.patch; do
		cp "$p" "$TOP/"
		basename "$p"
	done
	echo "$SERIES_MARK"
	for p in "$out"/inherit/*.patch; do
		b=$(basename "$p")
		n=$((10#${b:0:4} + ncore))
		b=$(printf '%04d%s' "$n" "${b:4}")
		cp "$p" "$TOP/$b"
		echo "$b"
	done
} >"$TOP/series"

# The cover letters: every Cc of the series' patches (git send-email
# --cc-cover), the text in testbed/, the shortlog and the diffstat.
cover() { # TEXT RANGE COUNT FROM
	local n=$3
	git log --format=%B "$2" | sed -n 's/^Cc: //p' | sort -u | sed 's/^/Cc: /'
	if [ "$n" -ge 10 ]; then
		echo "Subject: [PATCH v$SERIES_VERSION 00/$n] $(head -n 1 "$1")"
	else
		echo "Subject: [PATCH v$SERIES_VERSION 0/$n] $(head -n 1 "$1")"
	fi
	echo
	tail -n +3 "$1"
	echo
	git shortlog --no-merges "$2"
	git diff --stat=72 "$4" "${2##*..}"
}
cover "$TESTBED/cover-letter.txt" "$BASE_TAG..$core" "$ncore" "$BASE_TAG" \
	>"$TOP/cover-letter.txt"
cover "$TESTBED/cover-letter-inherit.txt" "$core..HEAD" "$ninherit" "$core" \
	>"$TOP/cover-letter-inherit.txt"

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
msg "exported $ncore + $ninherit patches and ${#added[@]} files"
