# SPDX-License-Identifier: GPL-2.0
# Shared settings and helpers for the perfmon-lite test bed scripts.
# shellcheck shell=bash

TESTBED=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$TESTBED/.." && pwd)
CACHE=${PERFMON_CACHE:-/var/cache/perfmon-lite}

# The kernel the series is checked against: Debian's linux-source-7.3,
# the newest 7.3.y in the archive when it is installed (setup.sh), from
# the trixie-backports suite, which setup.sh adds pinned so that nothing
# else comes from it. The cache follows the version installed
# (ensure_kernel_source), and the series stage says which one it applied
# to.
KSRC_SERIES=7.3
KSRC_PKG=linux-source-$KSRC_SERIES
KSRC_SUITE=trixie-backports
KSRC_TARBALL=/usr/src/$KSRC_PKG.tar.xz
PRISTINE=$CACHE/src/$KSRC_PKG
BASE_REPO=$CACHE/base
BASE_TAG=perfmon-base

# The product is two series, posted one after the other: the core, whose
# last patch is the one with this subject, and PFM_FL_INHERIT, which
# applies on top of it. The series file lists both, in order, with the
# line SERIES_MARK between them; export.sh numbers each on its own.
CORE_LAST_SUBJECT='Documentation: userspace-api: Add perfmon'
SERIES_MARK='# --- second series: PFM_FL_INHERIT, on top of the core'
# The posting's version: [PATCH vN k/n] in the subjects of both series, and
# the core's cover letter opens its changelog with "Changes in vN:".
SERIES_VERSION=12

PATCH_AUTHOR_NAME=${PATCH_AUTHOR_NAME:-Perfmon Lite Maintainers}
PATCH_AUTHOR_EMAIL=${PATCH_AUTHOR_EMAIL:-perfmon-lite@lists.example.org}

msg() { printf '%s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# cpu_ticks: the CPU time the machine has spent so far, user and system
# (with nice, interrupts and softirqs), in clock ticks, from /proc/stat.
cpu_ticks() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat
}
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)

# stage NAME: print the stage name; stage_end prints its elapsed time and
# the CPU-seconds the machine spent meanwhile (user + system, everything
# that ran, the builds in the background included: on a machine doing
# nothing else, what the stage cost).
stage() {
	STAGE_NAME=$1
	STAGE_T0=$(date +%s)
	STAGE_C0=$(cpu_ticks)
	printf '==> %s\n' "$STAGE_NAME" >&2
}
stage_end() {
	printf '<== %s (%ds, %d CPU-s)\n' "$STAGE_NAME" $(($(date +%s) - STAGE_T0)) \
		$((($(cpu_ticks) - STAGE_C0) / CLK_TCK)) >&2
}
# stage_fail LOG MESSAGE: name the stage and the log to read, then exit.
stage_fail() {
	printf 'FAILED stage "%s": %s\n' "$STAGE_NAME" "$2" >&2
	[ -n "$1" ] && printf '  read: %s\n' "$1" >&2
	exit 1
}

# The patches listed in the series file, in order, as absolute paths.
series_patches() {
	local p
	while IFS= read -r p; do
		case "$p" in '' | '#'*) continue ;; esac
		printf '%s\n' "$TOP/${p%% *}"
	done <"$TOP/series"
}

# core_count: how many patches of the series file the core series has.
core_count() {
	awk -v mark="$SERIES_MARK" '$0 == mark { exit }
		$0 != "" && substr($0, 1, 1) != "#" { n++ }
		END { print n + 0 }' "$TOP/series"
}

# ksrc_version: the version of the kernel source package installed.
ksrc_version() {
	dpkg-query -W -f='${Version}' "$KSRC_PKG" 2>/dev/null
}

# Make sure the kernel source package is there and extracted, once per
# version: another version installed (apt-get install --only-upgrade
# linux-source-7.3) is extracted again, and the base repository made
# again from it.
ensure_kernel_source() {
	local ver

	if [ ! -f "$KSRC_TARBALL" ]; then
		msg "installing $KSRC_PKG, the newest in the archive"
		add_ksrc_suite
		apt-get update -qq >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends "$KSRC_PKG/$KSRC_SUITE" >&2
	fi
	ver=$(ksrc_version)
	# a cache older than the version file holds the version installed
	if [ -f "$PRISTINE/Makefile" ] && [ ! -f "$PRISTINE.version" ]; then
		echo "$ver" >"$PRISTINE.version"
	fi
	if [ -f "$PRISTINE/Makefile" ] && [ "$(cat "$PRISTINE.version")" != "$ver" ]; then
		msg "$KSRC_PKG is now $ver: extracting it, and making $BASE_REPO again"
		rm -rf "$PRISTINE" "$BASE_REPO"
	fi
	if [ ! -f "$PRISTINE/Makefile" ]; then
		mkdir -p "$CACHE/src"
		rm -rf "$PRISTINE.tmp"
		mkdir -p "$PRISTINE.tmp"
		tar -C "$PRISTINE.tmp" -xf "$KSRC_TARBALL"
		mv "$PRISTINE.tmp/$KSRC_PKG" "$PRISTINE"
		rmdir "$PRISTINE.tmp"
		echo "$ver" >"$PRISTINE.version"
	fi
}

# debian_archive_uri [APT_DIR]: the URI of the Debian archive that the
# machine's own apt sources name (not the security archive), from
# APT_DIR (default /etc/apt): sources.list and sources.list.d/*.list in
# the one-line form, sources.list.d/*.sources in the deb822 form (what
# current Debian images ship, often with no sources.list at all).
# Options in brackets, stanzas with "Enabled: no" and files apt does not
# read (*.disabled, *.save) are skipped. Prints nothing if no entry
# names such an archive; always returns 0.
debian_archive_uri() {
	local dir=${1:-/etc/apt}
	local files=() f

	[ -f "$dir/sources.list" ] && files+=("$dir/sources.list")
	for f in "$dir"/sources.list.d/*.list "$dir"/sources.list.d/*.sources; do
		[ -f "$f" ] && files+=("$f")
	done
	[ ${#files[@]} -gt 0 ] || return 0
	awk '
	function want(uri, suite) {
		return uri ~ /^https?:\/\/[^ ]+\/debian\/?$/ && suite !~ /security/
	}
	function stanza(   i, n, u, s) {
		if (types ~ /(^| )deb( |$)/ && tolower(enabled) != "no") {
			n = split(uris, u, " ")
			split(suites, s, " ")
			for (i = 1; i <= n; i++)
				if (want(u[i], s[1])) { print u[i]; found = 1; exit }
		}
		types = uris = suites = enabled = ""
	}
	FNR == 1 { if (deb822) stanza(); deb822 = FILENAME ~ /\.sources$/ }
	deb822 && /^[[:space:]]*$/ { stanza(); next }
	deb822 && /^[[:space:]]*#/ { next }
	deb822 {
		key = tolower($1); sub(/^[^:]*:[[:space:]]*/, "")
		if (key == "types:") types = $0
		else if (key == "uris:") uris = $0
		else if (key == "suites:") suites = $0
		else if (key == "enabled:") enabled = $0
		next
	}
	$1 == "deb" {
		i = 2
		if ($i ~ /^\[/) while ($i !~ /\]$/ && i < NF) i++
		if ($i ~ /^\[/ || $i ~ /\]$/) i++
		if (want($i, $(i + 1))) { print $i; found = 1; exit }
	}
	END { if (deb822 && !found) stanza() }
	' "${files[@]}" | head -n 1
	return 0
}

# add_ksrc_suite: make the suite that has $KSRC_PKG known to apt, pinned
# so that apt takes that one package from it and nothing else (an upgrade
# of the machine keeps to bookworm). The archive is the one the machine's
# apt sources name (debian_archive_uri), deb.debian.org if none does.
add_ksrc_suite() {
	local list=/etc/apt/sources.list.d/perfmon-lite-$KSRC_SUITE.sources
	local pin=/etc/apt/preferences.d/perfmon-lite-$KSRC_SUITE
	local uri

	[ -e "$list" ] && [ -e "$pin" ] && return 0
	uri=$(debian_archive_uri)
	uri=${uri:-http://deb.debian.org/debian}
	msg "adding $KSRC_SUITE ($uri) for $KSRC_PKG only"
	cat >"$list" <<-EOF
		Types: deb
		URIs: $uri
		Suites: $KSRC_SUITE
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	cat >"$pin" <<-EOF
		Package: *
		Pin: release n=$KSRC_SUITE
		Pin-Priority: 1

		Package: $KSRC_PKG
		Pin: release n=$KSRC_SUITE
		Pin-Priority: 500
	EOF
}

# A git repository of the pristine source, commit tagged $BASE_TAG.
ensure_base_repo() {
	ensure_kernel_source
	if git -C "$BASE_REPO" rev-parse -q --verify "$BASE_TAG^{commit}" >/dev/null 2>&1; then
		return 0
	fi
	msg "creating $BASE_REPO (a git repository of the pristine source, once)"
	rm -rf "$BASE_REPO"
	cp -a "$PRISTINE" "$BASE_REPO"
	# Debian's packaging rule at the end of .gitignore ignores every
	# top-level entry; drop it so that git sees the tree.
	sed -i -e '/^# Debian packaging: ignore everything/,$d' "$BASE_REPO/.gitignore"
	(
		cd "$BASE_REPO"
		git init -q -b main
		git config user.name "$PATCH_AUTHOR_NAME"
		git config user.email "$PATCH_AUTHOR_EMAIL"
		git config gc.auto 0
		git add -A -f
		GIT_AUTHOR_DATE='2025-01-01T00:00:00Z' GIT_COMMITTER_DATE='2025-01-01T00:00:00Z' \
			git commit -q -m "Linux $(make -s kernelversion) from Debian $KSRC_PKG $(ksrc_version)"
		git tag "$BASE_TAG"
	) >&2
}

# Top-level folders of the repository that hold the tree view.
TREE_VIEW_DIRS="arch kernel include tools Documentation samples"

# Results of a guest run are kept under the hash of everything the run
# reads (kernel, initramfs contents, QEMU, scripts) and reused while that
# hash holds; only passing runs are kept. CHECK_NO_CACHE=1 reruns all.
RESULT_CACHE=$CACHE/results-cache

# files_id PATH...: one hash of the contents of files and directory trees.
files_id() {
	local p
	for p in "$@"; do
		if [ -d "$p" ]; then
			(cd "$p" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum)
		else
			sha256sum <"$p"
		fi
	done | sha256sum | cut -c1-24
}

# cached_run KEY: the directory of a kept run of KEY, if there is one.
cached_run() {
	[ "${CHECK_NO_CACHE:-0}" = 1 ] && return 1
	[ -e "$RESULT_CACHE/$1/done" ] && echo "$RESULT_CACHE/$1"
}

# keep_run KEY FILE...: keep these files as the run of KEY.
keep_run() {
	local key=$1 d
	shift
	d=$RESULT_CACHE/$key
	rm -rf "$d" && mkdir -p "$d" && cp "$@" "$d"/ && date -u +%FT%TZ >"$d/done"
}

# wait_extra_builds LOGDIR [i386|kasan]: wait for the builds check-build.sh
# left running in the background (the patches' states, the final tree as
# i386, without perfmon and, when built, with KASAN), or until the i386 or
# the KASAN one is done.
wait_extra_builds() {
	local done=$1/extra-builds.done

	[ "${2:-}" = i386 ] && done=$1/extra-builds.i386
	[ "${2:-}" = kasan ] && done=$1/extra-builds.kasan
	while [ -e "$1/extra-builds.pending" ] && [ ! -e "$done" ] &&
	      [ ! -e "$1/extra-builds.done" ]; do
		sleep 5
	done
}

