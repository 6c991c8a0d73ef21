#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-sources.sh: setup.sh's detection of the machine's Debian archive
# (lib.sh's debian_archive_uri), on apt directories made here: deb822
# sources only with no sources.list (current Debian images), the one-line
# form, options in brackets, a disabled stanza, files apt does not read,
# nothing at all. Prints "PASS|FAIL name" lines; exits 1 on a failure.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# case NAME WANT: DIR is $tmp/NAME, filled by the caller
check() {
	local got

	got=$(set -e; debian_archive_uri "$tmp/$1"; echo "rc=$?")
	if [ "$got" = "${2:+$2
}rc=0" ]; then
		echo "PASS setup finds the archive: $1"
	else
		echo "FAIL setup finds the archive: $1 (got \"${got//$'\n'/ }\", want \"$2\")"
		fail=1
	fi
}
mk() { mkdir -p "$tmp/$1/sources.list.d"; }

mk deb822-only
cat >"$tmp/deb822-only/sources.list.d/debian.sources" <<'E'
Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main
E
check deb822-only http://mirror.example/debian

mk deb822-security-first
cat >"$tmp/deb822-security-first/sources.list.d/debian.sources" <<'E'
Types: deb
URIs: https://sec.example/debian
Suites: bookworm-security
Components: main

Types: deb-src deb
Enabled: no
URIs: http://off.example/debian
Suites: bookworm

Types: deb deb-src
URIs: https://on.example/debian/
Suites: bookworm
E
check deb822-security-first https://on.example/debian/

mk one-line
cat >"$tmp/one-line/sources.list" <<'E'
# deb http://commented.example/debian bookworm main
deb http://security.debian.org/debian-security bookworm-security main
deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://line.example/debian bookworm main
E
check one-line http://line.example/debian

mk ignored-files
echo 'deb http://no.example/debian bookworm main' \
	>"$tmp/ignored-files/sources.list.d/old.list.disabled"
printf 'Types: deb\nURIs: http://no.example/debian\nSuites: bookworm\n' \
	>"$tmp/ignored-files/sources.list.d/x.sources.save"
check ignored-files ""

mk empty
check empty ""
check missing-directory ""

exit $fail
