#!/bin/bash
# Build Debian's QEMU 7.2 (x86_64-softmmu, TCG with TCG plugins, and KVM) with the emulated-PMU patch series.
# The host runs it with TCG; the kvm boot runs the same binary inside its guest
# with KVM, for a nested guest (testbed/guest/nested.sh).
# Prints the absolute path of the cached qemu-system-x86_64 as the last line of stdout.
set -eu
CACHE=${PERFMON_CACHE:-/var/cache/perfmon-lite}
here=$(cd "$(dirname "$0")" && pwd)
QC=$CACHE/qemu
mkdir -p "$QC"
LOG=$QC/build.log
log() { echo "build.sh: $*" >&2; }

patches=$(ls "$here"/[0-9][0-9][0-9][0-9]-*.patch 2>/dev/null | sort || true)
key=$(cat $patches "$here/build.sh" | sha256sum | cut -c1-16)
out=$QC/$key/qemu-system-x86_64
if [ -x "$out" ]; then
	echo "$out"
	exit 0
fi

# one build at a time; another run may have finished it meanwhile
exec 9>"$QC/.lock"
flock 9
if [ -x "$out" ]; then
	echo "$out"
	exit 0
fi

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

# Build dependencies and the firmware the binary uses at run time.
need=
for p in meson ninja-build libglib2.0-dev libpixman-1-dev libfdt-dev pkg-config gcc dpkg-dev patch qemu-system-x86 seabios qemu-system-data; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need="$need $p"
done

# deb-src stanza for the archives the machine already uses (separate file, idempotent).
SRCLIST=/etc/apt/sources.list.d/perfmon-lite-src.sources
have_src() { apt-cache showsrc qemu 2>/dev/null | grep -q '^Package: qemu'; }
if ! have_src; then
	if [ ! -e "$SRCLIST" ]; then
		log "adding deb-src stanzas in $SRCLIST"
		# not the suite the kernel source comes from (lib.sh): only
		# bookworm's QEMU 7.2 takes the patches
		for f in /etc/apt/sources.list.d/*.sources; do
			case "$f" in "$SRCLIST" | */perfmon-lite-*) continue ;; esac
			awk 'BEGIN{RS="";ORS="\n\n"} /(^|\n)Types:[^\n]*deb/ {sub(/Types:[^\n]*/,"Types: deb-src"); print}' "$f"
		done | $SUDO tee "$SRCLIST" >/dev/null
	fi
	$SUDO apt-get update >>"$LOG" 2>&1
	need_update_done=1
fi
if [ -n "$need" ]; then
	log "installing:$need"
	[ -n "${need_update_done:-}" ] || $SUDO apt-get update >>"$LOG" 2>&1
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y $need >>"$LOG" 2>&1
fi

# Debian source, once.
if ! ls -d "$QC"/src/qemu-7.2*/ >/dev/null 2>&1; then
	log "fetching the qemu source package"
	rm -rf "$QC/src.tmp" && mkdir -p "$QC/src.tmp"
	# the version installed, 7.2 from bookworm, whatever else apt knows
	qver=$(dpkg-query -W -f='${source:Version}' qemu-system-x86)
	(cd "$QC/src.tmp" && apt-get source "qemu=$qver") >>"$LOG" 2>&1
	mv "$QC/src.tmp" "$QC/src"
fi
pristine=$(ls -d "$QC"/src/qemu-7.2*/ | head -1)
pristine=${pristine%/}

# Fresh copy, apply the series, configure, build.
work=$QC/$key.work
rm -rf "$work"
mkdir -p "$work"
log "copying $pristine"
cp -a "$pristine" "$work/qemu"
for p in $patches; do
	log "applying $(basename "$p")"
	(cd "$work/qemu" && patch -p1 --fuzz=0 <"$p") >>"$LOG" 2>&1 || { tail -20 "$LOG" >&2; exit 1; }
done
# Only the devices the test bed's guests use (run-guest.sh: -machine pc
# -nodefaults, a serial port, isa-debug-exit; the HPET the kernel picks as
# its clocksource): without the others (USB, network, display, sound,
# storage, IPMI, TPM...) the build compiles about a third less.
cat >"$work/qemu/configs/devices/x86_64-softmmu/perfmon-lite.mak" <<'MAK'
CONFIG_I440FX=y
CONFIG_ISA_DEBUG=y
CONFIG_HPET=y
MAK
# No debug information (-g): nothing here debugs QEMU itself, and the
# compile costs a fifth less without it (348 CPU-s against 434, 2-core
# machine, testbed/MEASUREMENTS.md).
log "configuring (log: $LOG)"
mkdir -p "$work/qemu/build"
(cd "$work/qemu/build" && ../configure --target-list=x86_64-softmmu --without-default-features \
	--without-default-devices --with-devices-x86_64=perfmon-lite \
	--enable-tcg --enable-kvm --enable-plugins --disable-docs --disable-werror --disable-debug-info) >>"$LOG" 2>&1 || { tail -30 "$LOG" >&2; exit 1; }
log "building"
start=$(date +%s)
(cd "$work/qemu/build" && nice ninja -j"$(nproc)" qemu-system-x86_64) >>"$LOG" 2>&1 || { tail -40 "$LOG" >&2; exit 1; }
log "built in $(( $(date +%s) - start )) s"
mkdir -p "$QC/$key"
# the TCG plugin API header of this very tree, for plugins built against it (testbed/bench/)
cp "$work/qemu/include/qemu/qemu-plugin.h" "$QC/$key/qemu-plugin.h"
cp "$work/qemu/build/qemu-system-x86_64" "$out.tmp"
mv "$out.tmp" "$out"
rm -rf "$work"
echo "$out"
