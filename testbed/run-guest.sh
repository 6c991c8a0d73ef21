#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-guest.sh --kernel bzImage --initrd initramfs.cpio.gz --log LOG
#              [--qemu BIN] [--cpu MODEL] [--smp N] [--mem SIZE]
#              [--timeout SECONDS] [--append "extra cmdline"] [--console]
#              [-- extra qemu args...]
#
# Boot the test kernel under QEMU TCG (KVM hangs on these machines), serial
# console to LOG (and to stdout too with --console, needed for
# testbed.guest=shell).  KUnit runs at boot, then testbed/guest/init runs the
# kselftests and powers off, passing a status through isa-debug-exit.
#
# Exit status:
#   0    guest printed its results and reported status 0
#   1    guest reported a failing selftest (status 1)
#   2    usage error
#   3    QEMU ended without a guest status (panic -> reboot, crash, plain
#        poweroff) -- see LOG
#   4    QEMU failed (bad option, missing file...) -- see stderr / LOG
#   124  timeout: QEMU was killed, "PERFMON-HOST: timeout" appended to LOG
# In every case run parse-log.py LOG for the verdict on KUnit, warnings,
# lockdep and kmemleak: the guest status covers only the selftest exit codes.

set -euo pipefail

KERNEL='' INITRD='' LOG='' QEMU=qemu-system-x86_64 CPU=max SMP=2 MEM=1G
TIMEOUT=600 APPEND='' CONSOLE=0
EXTRA=()

usage() {
	sed -n '4,9p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) KERNEL=$2; shift 2 ;;
	--initrd) INITRD=$2; shift 2 ;;
	--log) LOG=$2; shift 2 ;;
	--qemu) QEMU=$2; shift 2 ;;
	--cpu) CPU=$2; shift 2 ;;
	--smp) SMP=$2; shift 2 ;;
	--mem) MEM=$2; shift 2 ;;
	--timeout) TIMEOUT=$2; shift 2 ;;
	--append) APPEND=$2; shift 2 ;;
	--console) CONSOLE=1; shift ;;
	--) shift; EXTRA=("$@"); break ;;
	-h|--help) usage ;;
	*) echo "run-guest: unknown option $1" >&2; usage ;;
	esac
done
[ -n "$KERNEL" ] && [ -n "$INITRD" ] && [ -n "$LOG" ] || usage
for f in "$KERNEL" "$INITRD"; do
	[ -r "$f" ] || { echo "run-guest: cannot read $f" >&2; exit 2; }
done
QEMU_PATH=$(command -v "$QEMU") || { echo "run-guest: no $QEMU" >&2; exit 2; }

# A QEMU other than the system one (e.g. the PMU-enabled build) does not
# know where Debian keeps the firmware (SeaBIOS, linuxboot option ROMs).
FW=()
case "$(readlink -f "$QEMU_PATH")" in
/usr/bin/qemu-system-*) ;;
*) FW=(-L /usr/share/seabios -L /usr/share/qemu) ;;
esac

# Serial console: file only, or stdio with a copy in the log file.
if [ "$CONSOLE" = 1 ]; then
	SERIAL=(-chardev "stdio,id=con0,signal=off,logfile=$LOG" -serial chardev:con0)
else
	SERIAL=(-serial "file:$LOG")
fi
mkdir -p "$(dirname "$LOG")"
: > "$LOG"

# pty.legacy_count=0: no BSD ptys (nothing here opens them), whose 512
# device nodes each boot would otherwise create.
CMDLINE="console=ttyS0 nmi_watchdog=0 panic=-1 kunit.enable=1 pty.legacy_count=0 $APPEND"
CMDLINE=${CMDLINE% }

t0=$(date +%s.%N)
set +e
timeout -k 10 "$TIMEOUT" "$QEMU" "${FW[@]}" \
	-accel tcg -machine pc -cpu "$CPU" -smp "$SMP" -m "$MEM" \
	-nodefaults -display none -no-reboot -nic none -monitor none \
	"${SERIAL[@]}" \
	-device isa-debug-exit,iobase=0xf4,iosize=4 \
	-kernel "$KERNEL" -initrd "$INITRD" -append "$CMDLINE" \
	"${EXTRA[@]}"
rc=$?
set -e
t1=$(date +%s.%N)
secs=$(printf '%.1f' "$(echo "$t1 - $t0" | bc)")

# guest/init writes 0x10 | status to isa-debug-exit: QEMU exits
# (value << 1) | 1, i.e. 33 (status 0) or 35 (status 1).  Other QEMU exit
# codes: 0 = guest reset/poweroff without a status, 1 = QEMU error.
case $rc in
33) echo "run-guest: guest status 0 after ${secs} s"; exit 0 ;;
35) echo "run-guest: guest status 1 (selftest failure) after ${secs} s"; exit 1 ;;
124|137)
	# The serial log may end in the middle of a line.
	[ -s "$LOG" ] && [ -n "$(tail -c1 "$LOG")" ] && echo >> "$LOG"
	echo "PERFMON-HOST: timeout: qemu killed after ${TIMEOUT} s" >> "$LOG"
	echo "run-guest: timeout after ${TIMEOUT} s, QEMU killed" >&2
	exit 124 ;;
0)
	echo "run-guest: QEMU ended without a guest status after ${secs} s (panic/reset/poweroff?)" >&2
	exit 3 ;;
*)
	echo "run-guest: QEMU failed with exit code $rc after ${secs} s" >&2
	exit 4 ;;
esac
