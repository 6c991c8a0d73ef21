#!/bin/bash
# Slowdown of a guest workload (qsort/memcpy/getppid, best of 5 in the guest)
# under the emulated PMU.  Usage: QEMU=... [QEMU_STOCK=...] bench.sh bzImage [model]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
KERNEL=$1
MODEL=${2:-Skylake-Client}
QEMU_STOCK=${QEMU_STOCK:-/usr/bin/qemu-system-x86_64}
work=$(mktemp -d "${TMPDIR:-/tmp}/pmu-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
gcc -O2 -static -o "$work/pmu-proof" "$here/pmu-proof.c"
root=$work/root
mkdir -p "$root"/{bin,dev,proc,sys}
cp /bin/busybox "$root/bin/"
for t in sh mount poweroff; do ln -s busybox "$root/bin/$t"; done
cp "$work/pmu-proof" "$root/bin/"
printf '#!/bin/sh\nmount -t proc proc /proc\necho 1 >/proc/sys/kernel/printk\nfor a in $(cat /proc/cmdline); do case $a in work=*) /bin/pmu-proof --work-${a#work=};; esac; done\n[ -e /bin/bench ] && /bin/pmu-proof --bench\npoweroff -f\n' >"$root/init"
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz"
# host CPU time (user+sys) of a whole boot that runs the workload 6 times
run() { # label qemu cpu idle|count
	local t
	t=$( { /usr/bin/time -f '%U %S' "$2" -accel tcg -cpu "$3" -smp 2 -m 1G -nodefaults -display none -no-reboot -nic none \
		-L /usr/share/seabios -L /usr/share/qemu -kernel "$KERNEL" -initrd "$work/initrd.gz" \
		-append "console=ttyS0 nmi_watchdog=0 work=$4" -serial "file:$work/out" -monitor none \
		</dev/null >/dev/null 2>"$work/err"; } ; tail -1 "$work/err")
	echo "$1 ($3, $4): host cpu $(echo "$t" | awk '{print $1 + $2}') s $(tr -d '\r' <"$work/out" | grep '^# work' || true)"
}
for round in 1 2 3; do
	run "Debian stock QEMU 7.2" "$QEMU_STOCK" "$MODEL" idle
	run "patched QEMU, no pmu=on" "$QEMU" "$MODEL" idle
	run "patched QEMU, pmu=on, perf idle" "$QEMU" "$MODEL,pmu=on" idle
	run "patched QEMU, pmu=on, 3 events counting (no sampling)" "$QEMU" "$MODEL,pmu=on" count
done
