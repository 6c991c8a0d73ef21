#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# setup.sh: install what the test bed needs from Debian's archive, once.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need=()
for pkg in qemu-system-x86 busybox-static quilt ccache flex bison \
	bc cpio libelf-dev libssl-dev python3 python3-ply python3-git gcc make git \
	gcc-multilib libc6-dev-i386 rsync \
	perl; do
	dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
		need+=("$pkg")
done
# The kernel source comes from its own suite, and that package alone
# (lib.sh): the newest 7.3.y in the archive.
dpkg-query -W -f='${Status}\n' "$KSRC_PKG" 2>/dev/null | grep -q 'install ok installed' ||
	need+=("$KSRC_PKG/$KSRC_SUITE")
[ ${#need[@]} -eq 0 ] && exit 0
msg "installing: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
add_ksrc_suite
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
