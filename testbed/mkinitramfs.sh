#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkinitramfs.sh OUT.cpio.gz [KSFT_INSTALL_DIR] [EXTRA_DIR...]
#
# Build the test-bed initramfs (gzip'ed newc cpio):
#   /bin/busybox     the host's busybox-static (applet links made at boot)
#   /init            testbed/guest/init
#   /kselftest/      KSFT_INSTALL_DIR, i.e. the output of
#                    make -C tools/testing/selftests TARGETS=perfmon install
#                    (perfmon/<binaries>, kselftest-list.txt, run_kselftest.sh)
#   EXTRA_DIR...     each copied over the root, e.g. a dir holding demo.sh
#   /dev/console, /dev/null  device nodes written straight into the archive
#                    (no root, no mknod needed)
#
# Owner root:root and mtime 0 for every entry, so the same inputs give the
# same archive.  Staging happens under $PERFMON_CACHE/tmp.

set -euo pipefail

usage() {
	echo "usage: $0 OUT.cpio.gz [KSFT_INSTALL_DIR] [EXTRA_DIR...]" >&2
	exit 2
}
[ $# -ge 1 ] || usage

TESTBED=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=$1
KSFT=${2:-}
shift
[ $# -gt 0 ] && shift
CACHE=${PERFMON_CACHE:-/var/cache/perfmon-lite}
BUSYBOX=${BUSYBOX:-/bin/busybox}

if [ ! -x "$BUSYBOX" ] || ! "$BUSYBOX" --help >/dev/null 2>&1; then
	echo "mkinitramfs: $BUSYBOX missing (apt-get install busybox-static)" >&2
	exit 1
fi
if LC_ALL=C readelf -l "$BUSYBOX" 2>/dev/null | grep -q 'Requesting program interpreter'; then
	echo "mkinitramfs: $BUSYBOX is dynamically linked; need busybox-static" >&2
	exit 1
fi
if [ -n "$KSFT" ] && [ ! -d "$KSFT" ]; then
	echo "mkinitramfs: no such kselftest install dir: $KSFT" >&2
	exit 1
fi

mkdir -p "$CACHE/tmp"
STAGE=$(mktemp -d "$CACHE/tmp/initramfs.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT

mkdir -p "$STAGE"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,run,root,etc}
cp "$BUSYBOX" "$STAGE/bin/busybox"
install -m 0755 "$TESTBED/guest/init" "$STAGE/init"
echo 'root:x:0:0:root:/root:/bin/sh' > "$STAGE/etc/passwd"
echo 'root:x:0:' > "$STAGE/etc/group"
if [ -n "$KSFT" ]; then
	mkdir -p "$STAGE/kselftest"
	cp -a "$KSFT/." "$STAGE/kselftest/"
	# Dynamically linked selftests cannot run: there is no libc in here.
	find "$STAGE/kselftest" -type f -perm -u+x | while read -r f; do
		if LC_ALL=C readelf -l "$f" 2>/dev/null | grep -q 'Requesting program interpreter'; then
			echo "mkinitramfs: warning: ${f#"$STAGE"/} is dynamically linked (build with USERLDFLAGS=-static)" >&2
		fi
	done
fi
for d in "$@"; do
	[ -d "$d" ] || { echo "mkinitramfs: no such directory: $d" >&2; exit 1; }
	cp -a "$d/." "$STAGE/"
done

mkdir -p "$(dirname "$OUT")"
python3 - "$STAGE" "$OUT" <<'PY'
import gzip, os, stat, sys

stage, out = sys.argv[1], sys.argv[2]
ino = [300000]

def entry(name, mode, data=b"", nlink=1, rdev=(0, 0)):
    ino[0] += 1
    name_b = name.encode() + b"\0"
    hdr = "070701" + "".join("%08X" % v for v in (
        ino[0], mode, 0, 0, nlink, 0, len(data), 0, 0,
        rdev[0], rdev[1], len(name_b), 0))
    buf = hdr.encode() + name_b
    buf += b"\0" * (-len(buf) % 4)
    buf += data + b"\0" * (-len(data) % 4)
    return buf

parts = []
for root, dirs, files in os.walk(stage):
    dirs.sort()
    rel = os.path.relpath(root, stage)
    if rel != ".":
        parts.append(entry(rel, stat.S_IFDIR | (os.lstat(root).st_mode & 0o7777), nlink=2))
    for f in sorted(files + [d for d in dirs if os.path.islink(os.path.join(root, d))]):
        p = os.path.join(root, f)
        st = os.lstat(p)
        name = os.path.normpath(os.path.join(rel, f))
        if stat.S_ISLNK(st.st_mode):
            parts.append(entry(name, st.st_mode, os.readlink(p).encode()))
        elif stat.S_ISREG(st.st_mode):
            with open(p, "rb") as fh:
                parts.append(entry(name, st.st_mode, fh.read()))
parts.append(entry("dev/console", stat.S_IFCHR | 0o600, rdev=(5, 1)))
parts.append(entry("dev/null", stat.S_IFCHR | 0o666, rdev=(1, 3)))
parts.append(entry("TRAILER!!!", 0))
tmp = out + ".tmp"
with open(tmp, "wb") as fh:
    with gzip.GzipFile(fileobj=fh, mode="wb", compresslevel=6, mtime=0) as gz:
        gz.write(b"".join(parts))
os.replace(tmp, out)
PY
echo "mkinitramfs: $OUT ($(du -k "$OUT" | cut -f1) KiB)"
