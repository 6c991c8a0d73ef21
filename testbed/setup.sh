#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# setup.sh: install what the test bed needs from Debian's archive, once.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need=()
for pkg in "$KSRC_PKG" qemu-system-x86 busybox-static quilt ccache flex bison \
	bc cpio libelf-dev libssl-dev python3 python3-ply python3-git gcc make git \
	gcc-multilib libc6-dev-i386 \
	perl; do
	dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
		need+=("$pkg")
done
[ ${#need[@]} -eq 0 ] && exit 0
msg "installing: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# linux-source-6.12 too: the newest 6.12.y in the archive (lib.sh).
apt-get install -y -qq "${need[@]}" >&2
