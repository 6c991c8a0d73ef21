#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-series.sh RESULTS: the static checks of the series.
#
#  - setup.sh finds the machine's Debian archive in apt's one-line and
#    deb822 sources (test-sources.sh);
#  - every patch applies in order to the pristine tree, with no fuzz;
#  - the series applies with git am and with quilt, to the same result;
#  - the tree view in this repository equals the files the series creates;
#  - the series file holds two series (the core, then PFM_FL_INHERIT), each
#    numbered from 1 with its cover letter, as make export writes them;
#  - every patch has a "subsystem: Summary" subject, a body, a
#    Signed-off-by, is at most 40 KB, and passes checkpatch.pl --strict
#    with no error and no warning (checks are reported).
#
# What passed once on the same inputs is not run again: a patch's commit
# on the same parent, git am and quilt on the same series, checkpatch on
# the same patch (under $CACHE/check and $CACHE/checkpatch).
#
# Each check appends "PASS|FAIL|SKIP name" to RESULTS. On success the
# commits of the applied series are recorded in $CACHE/check/commits (one
# "commit tree patch" line per patch) for check-build.sh.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

RESULTS=$1
LOGDIR=$(dirname "$RESULTS")
result() { echo "$1 $2" >>"$RESULTS"; [ "$1" = PASS ] || msg "  $1 $2${3:+: $3}"; }

# 0. The test bed's own setup: the archive setup.sh adds the kernel
#    source's suite from is found in either form of apt's sources.
while read -r st name; do
	result "$st" "$name"
done < <("$TESTBED/test-sources.sh")

ensure_base_repo
git -C "$BASE_REPO" config gc.auto 0
ksrc="$KSRC_PKG $(ksrc_version) (Linux $(make -s -C "$BASE_REPO" kernelversion))"
msg "  the series applies to $ksrc"
echo "$ksrc" >"$LOGDIR/kernel-version"
mapfile -t patches < <(series_patches)
[ ${#patches[@]} -gt 0 ] || { result FAIL "series: no patches listed"; exit 1; }
export GIT_AUTHOR_NAME=$PATCH_AUTHOR_NAME GIT_AUTHOR_EMAIL=$PATCH_AUTHOR_EMAIL
export GIT_COMMITTER_NAME=$PATCH_AUTHOR_NAME GIT_COMMITTER_EMAIL=$PATCH_AUTHOR_EMAIL
export GIT_AUTHOR_DATE='2025-01-01T00:00:00Z' GIT_COMMITTER_DATE='2025-01-01T00:00:00Z'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$CACHE/check"
commits=$CACHE/check/commits
rm -f "$commits"

# 1. Apply patch by patch into a private index: no work tree is touched,
#    and git apply never applies with fuzz. A patch applied once to the
#    same commit gives the same commit again (fixed names and dates): its
#    commit is taken from $applied_cache ("parent patch-hash commit tree"
#    lines), so that an unchanged prefix of the series costs nothing (git
#    apply reads and writes the kernel's whole index, a second a patch).
export GIT_INDEX_FILE=$tmp/index
applied_cache=$CACHE/check/applied
index_at=
prev=$(git -C "$BASE_REPO" rev-parse "$BASE_TAG^{commit}")
applied=yes
: >"$tmp/commits"
for p in "${patches[@]}"; do
	name=$(basename "$p")
	if [ "$applied" = no ]; then
		result SKIP "apply $name" "an earlier patch did not apply"
		continue
	fi
	key="$prev $(sha256sum <"$p" | cut -c1-64)"
	hit_commit= hit_tree=
	read -r hit_commit hit_tree < <(grep -m1 "^$key " "$applied_cache" 2>/dev/null | cut -d' ' -f3-4)
	if [ -n "${hit_tree:-}" ] && git -C "$BASE_REPO" cat-file -e "$hit_commit^{commit}" 2>/dev/null; then
		echo "applied to $prev before: commit $hit_commit (from $applied_cache)" >"$LOGDIR/apply-$name.log"
		prev=$hit_commit
		echo "$prev $hit_tree $name" >>"$tmp/commits"
		result PASS "apply $name"
		continue
	fi
	[ "$index_at" = "$prev" ] || git -C "$BASE_REPO" read-tree "$prev"
	if ! git -C "$BASE_REPO" apply --cached --check "$p" >"$LOGDIR/apply-$name.log" 2>&1 ||
	   ! git -C "$BASE_REPO" apply --cached "$p" >>"$LOGDIR/apply-$name.log" 2>&1; then
		result FAIL "apply $name" "it does not apply to $ksrc: the series needs rebasing on that release; see $LOGDIR/apply-$name.log"
		applied=no
		continue
	fi
	tree=$(git -C "$BASE_REPO" write-tree)
	subject=$(sed -n 's/^Subject: \(\[PATCH[^]]*\] \)\{0,1\}//p' "$p" | head -n1)
	prev=$(git -C "$BASE_REPO" commit-tree "$tree" -p "$prev" -m "$subject")
	index_at=$prev
	echo "$key $prev $tree" >>"$applied_cache"
	echo "$prev $tree $name" >>"$tmp/commits"
	result PASS "apply $name"
done
unset GIT_INDEX_FILE
[ "$applied" = yes ] && cp "$tmp/commits" "$commits"
final=$prev

# 2. git am and quilt, on a small tree holding only the files the series
#    touches; both must give the files of the final tree.
if [ "$applied" = yes ]; then
	mapfile -t touched < <(git -C "$BASE_REPO" diff --name-only --no-renames "$BASE_TAG" "$final")
	mapfile -t existing < <(git -C "$BASE_REPO" ls-tree -r --name-only "$BASE_TAG" -- "${touched[@]}")
	compare_to_final() { # DIR: same content as the final tree for every touched file
		local f bad=0
		for f in "${touched[@]}"; do
			if git -C "$BASE_REPO" cat-file -e "$final:$f" 2>/dev/null; then
				cmp -s <(git -C "$BASE_REPO" cat-file blob "$final:$f") "$1/$f" ||
					{ echo "differs: $f"; bad=1; }
			elif [ -e "$1/$f" ]; then
				echo "should not exist: $f"; bad=1
			fi
		done
		return $bad
	}
	# a series that applied so once applies so again: the logs are kept
	# under the hash of the base commit, the series file and the patches
	kept=$CACHE/check/applies-$( { git -C "$BASE_REPO" rev-parse "$BASE_TAG^{commit}"
		cat "$TOP/series" "${patches[@]}"; } | sha256sum | cut -c1-24)
	for tool in "git am" quilt; do
		log=$LOGDIR/${tool// /-}.log
		if [ -f "$kept.${tool// /-}" ] && [ "${CHECK_NO_CACHE:-0}" != 1 ]; then
			cp "$kept.${tool// /-}" "$log"
			result PASS "series applies with $tool"
			continue
		fi
		dir=$tmp/${tool// /-}
		mkdir -p "$dir"
		[ ${#existing[@]} -gt 0 ] &&
			git -C "$BASE_REPO" archive "$BASE_TAG" -- "${existing[@]}" | tar -C "$dir" -xf -
		if [ "$tool" = quilt ]; then
			(cd "$dir" && QUILT_PATCHES=$TOP quilt push -a --fuzz=0) >"$log" 2>&1
		else
			(cd "$dir" && git init -q && git add -A -f && git commit -q -m base &&
				git am --keep-cr "${patches[@]}") >"$log" 2>&1
		fi
		rc=$?
		if [ $rc = 0 ] && grep -qi 'fuzz' "$log"; then rc=1; fi
		if [ $rc = 0 ] && compare_to_final "$dir" >>"$log" 2>&1; then
			result PASS "series applies with $tool"
			cp "$log" "$kept.${tool// /-}"
		else
			result FAIL "series applies with $tool" "see $log"
		fi
	done

	# 3. The tree view: the files the series adds, nothing else, same bytes.
	log=$LOGDIR/tree-view.log
	: >"$log"
	mapfile -t added < <(git -C "$BASE_REPO" diff --name-only --no-renames --diff-filter=A "$BASE_TAG" "$final")
	mkdir -p "$tmp/view"
	[ ${#added[@]} -gt 0 ] && git -C "$BASE_REPO" archive "$final" -- "${added[@]}" | tar -C "$tmp/view" -xf -
	for d in $TREE_VIEW_DIRS; do
		[ -e "$TOP/$d" ] || [ -e "$tmp/view/$d" ] || continue
		diff -r "$TOP/$d" "$tmp/view/$d" >>"$log" 2>&1
	done
	if [ -s "$log" ]; then
		result FAIL "tree view equals the files the series creates" "see $log (make export regenerates it)"
	else
		result PASS "tree view equals the files the series creates"
	fi
else
	result SKIP "series applies with git am" "the series does not apply"
	result SKIP "series applies with quilt" "the series does not apply"
	result SKIP "tree view equals the files the series creates" "the series does not apply"
fi

# 4. Each patch on its own: form, size, checkpatch.
for p in "${patches[@]}"; do
	name=$(basename "$p")
	size=$(wc -c <"$p")
	if [ "$size" -le 40960 ]; then
		result PASS "size $name"
	else
		result FAIL "size $name" "$size bytes, over 40960"
	fi
	subject=$(sed -n 's/^Subject: \(\[PATCH[^]]*\] \)\{0,1\}//p' "$p" | head -n1)
	body=$(awk '/^$/ && !h {h=1; next} h && /^---$/ {exit} h' "$p" | grep -vc '^\(Signed-off-by\|[A-Za-z-]*-by\):\|^$')
	problem=
	[[ $subject =~ ^([A-Za-z0-9_.,/-]+:\ )+[A-Z] ]] || problem="subject \"$subject\" is not \"subsystem: Summary\""
	[ "$body" -ge 3 ] || problem="${problem:+$problem; }the body does not say what and why"
	grep -q "^Signed-off-by: .* <.*@.*>$" "$p" || problem="${problem:+$problem; }no Signed-off-by"
	if [ -z "$problem" ]; then
		result PASS "form $name"
	else
		result FAIL "form $name" "$problem"
	fi
	log=$LOGDIR/checkpatch-$name.log
	# A patch that passed checkpatch.pl of this tree once passes again:
	# its log is kept under the hash of both.
	kept=$CACHE/checkpatch/$(cat "$p" "$BASE_REPO/scripts/checkpatch.pl" "$BASE_REPO/scripts/spelling.txt" |
		sha256sum | cut -c1-24)
	if [ -f "$kept" ] && [ "${CHECK_NO_CACHE:-0}" != 1 ]; then
		cp "$kept" "$log"
	else
		# checkpatch runs scripts/spdxcheck.py with the python3 on PATH; it
		# needs Debian's python3-ply, which a pyenv or venv python lacks, and
		# a failing spdxcheck only prints a traceback: use the system python3
		# and count a traceback as a failure.
		(cd "$BASE_REPO" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl --strict \
			--root="$BASE_REPO" "$p") >"$log" 2>&1
		! grep -q '^Traceback' "$log" && grep -q '^total: 0 errors, 0 warnings,' "$log" &&
			mkdir -p "$CACHE/checkpatch" && cp "$log" "$kept"
	fi
	if grep -q '^Traceback' "$log"; then
		result FAIL "checkpatch $name" "a checkpatch helper failed; see $log"
	elif grep -q '^total: 0 errors, 0 warnings,' "$log"; then
		result PASS "checkpatch $name"
		grep -q '^total: 0 errors, 0 warnings, 0 checks' "$log" ||
			msg "  note: checkpatch $name: $(grep '^total:' "$log")"
	else
		result FAIL "checkpatch $name" "$(grep '^total:' "$log" || echo 'no summary'); see $log"
	fi
done

# 5. Two series, as they are posted: the core, then PFM_FL_INHERIT after
#    the line SERIES_MARK of the series file, each numbered from 1 in its
#    subjects ([PATCH vN k/n], N = SERIES_VERSION), each with its cover
#    letter ([PATCH vN 0/n]), whose changelog starts at "Changes in vN:".
ncore=$(core_count)
ninherit=$((${#patches[@]} - ncore))
problem=
grep -qxF -- "$SERIES_MARK" "$TOP/series" ||
	problem="no line \"$SERIES_MARK\" in series"
for i in "${!patches[@]}"; do
	if [ "$i" -lt "$ncore" ]; then
		want="$((i + 1)) $ncore"
	else
		want="$((i - ncore + 1)) $ninherit"
	fi
	read -r k n < <(sed -n "s/^Subject: \\[PATCH v$SERIES_VERSION 0*\\([0-9]\\{1,\\}\\)\\/0*\\([0-9]\\{1,\\}\\)\\].*/\\1 \\2/p" \
		"${patches[$i]}" | head -n1)
	[ "${k:-} ${n:-}" = "$want" ] ||
		problem="${problem:+$problem; }$(basename "${patches[$i]}") is not [PATCH v$SERIES_VERSION ${want/ //}]"
done
for c in "cover-letter.txt $ncore" "cover-letter-inherit.txt $ninherit"; do
	read -r f n <<<"$c"
	grep -q "^Subject: \[PATCH v$SERIES_VERSION 0*0/0*$n\] " "$TOP/$f" 2>/dev/null ||
		problem="${problem:+$problem; }$f has no [PATCH v$SERIES_VERSION 0/$n] subject"
done
grep -qx "Changes in v$SERIES_VERSION:" "$TOP/cover-letter.txt" ||
	problem="${problem:+$problem; }cover-letter.txt has no \"Changes in v$SERIES_VERSION:\" line"
if [ -z "$problem" ]; then
	result PASS "two series: the core ($ncore patches), then PFM_FL_INHERIT ($ninherit), each numbered with its cover letter"
else
	result FAIL "two series, each numbered with its cover letter" "$problem (make export writes them)"
fi
