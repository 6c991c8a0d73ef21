#!/bin/bash
# Prove the emulated PMU with the guest kernel's own perf_events.
#
# Usage: QEMU=/path/to/qemu-system-x86_64 run.sh /path/to/bzImage
#        (or KERNEL=/path/to/bzImage).  QEMU defaults to the output of
#        ../qemu/build.sh.
# Boots the kernel on core2duo, Skylake-Client, Opteron_G3, EPYC, EPYC
# with AMD PerfMonV2 (perfmon-v2=on, family 19h model 11h, like Zen 4 Genoa)
# and a hybrid Alder Lake (Skylake-Client,model=151,hybrid-atoms=0x2: cpu0 a
# P-core, cpu1 an E-core) with pmu=on and on Skylake-Client without pmu=on,
# runs pmu-proof in each and ends with "N passed, N failed, N skipped"; exit
# status 1 on any failure.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
KERNEL=${1:-${KERNEL:-}}
if [ -z "$KERNEL" ] || [ ! -f "$KERNEL" ]; then
	echo "usage: QEMU=... $0 bzImage" >&2
	exit 2
fi
QEMU=${QEMU:-$("$here/../qemu/build.sh" | tail -1)}
TIMEOUT=${TIMEOUT:-300}
work=$(mktemp -d "${TMPDIR:-/tmp}/pmu-proof.XXXXXX")
# KEEP_LOGS=dir keeps the guest console logs
trap '[ -n "${KEEP_LOGS:-}" ] && mkdir -p "$KEEP_LOGS" && cp "$work"/*.log.txt "$KEEP_LOGS"/ 2>/dev/null; rm -rf "$work"' EXIT

# Static guest program and a tiny busybox initramfs.
gcc -O2 -Wall -static -o "$work/pmu-proof" "$here/pmu-proof.c"
# Bare-metal LVTPC probe (multiboot, 32 bit, freestanding).
probe=$work/lvtpc-probe.elf
gcc -m32 -ffreestanding -fno-pic -no-pie -fno-stack-protector -nostdlib -static -O2 -Wall \
	-Wl,-Ttext=0x100000 -Wl,--build-id=none -o "$probe" "$here/lvtpc-probe.c" || probe=
root=$work/root
mkdir -p "$root"/{bin,dev,proc,sys,tmp}
cp /bin/busybox "$root/bin/busybox"
for t in sh mount cat echo dmesg grep poweroff sleep; do
	ln -s busybox "$root/bin/$t"
done
cp "$work/pmu-proof" "$root/bin/pmu-proof"
cat >"$root/init" <<'EOF'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# keep late kernel messages off the console (the boot log is already out)
echo 1 >/proc/sys/kernel/printk
echo "=== pmu-proof start"
/bin/pmu-proof
rc=$?
echo "=== pmu-proof end rc=$rc"
dmesg | grep -E 'Uhhuh|NMI received|Dazed|perf: |WARNING:|BUG:|Broken PMU|unchecked MSR' | sed 's/^/# dmesg: /'
[ -n "$BENCH" ] && /bin/pmu-proof --bench
/bin/pmu-proof --exit $rc
poweroff -f
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz"

pass=0 fail=0 skip=0
tap() { # tap OK NAME [SKIP-REASON]
	if [ -n "${3:-}" ]; then
		echo "ok - $2 # SKIP $3"; skip=$((skip + 1))
	elif [ "$1" = 1 ]; then
		echo "ok - $2"; pass=$((pass + 1))
	else
		echo "not ok - $2"; fail=$((fail + 1))
	fi
}

# boot MODEL PMU(on/off) EXPECT-REGEX...
boot() {
	local model=$1 pmu=$2 cpu log rc=0 t0 t1
	shift 2
	cpu=$model
	[ "$pmu" = on ] && cpu="$model,pmu=on"
	log=$work/$model-$pmu.log
	echo "# ---- $cpu"
	t0=$(date +%s.%N)
	timeout "$TIMEOUT" "$QEMU" -accel tcg -cpu "$cpu" -smp 2 -m 1G -nodefaults -display none -no-reboot \
		-nic none -L /usr/share/seabios -L /usr/share/qemu \
		-device isa-debug-exit,iobase=0xf4,iosize=4 \
		-kernel "$KERNEL" -initrd "$work/initrd.gz" \
		-append "console=ttyS0 nmi_watchdog=0 msr.allow_writes=on panic=-1 BENCH=${BENCH:-}" \
		-serial "file:$log" -monitor none </dev/null >"$work/qemu.out" 2>&1 || rc=$?
	t1=$(date +%s.%N)
	tr -d '\r' <"$log" >"$log.txt"
	# the program's own output (a kernel may print KTAP lines of its own)
	sed -n '/^=== pmu-proof start/,/^=== pmu-proof end/p' "$log.txt" >"$log.prog"
	grep -E 'Performance Events|^\[[ 0-9.]*\] \.\.\. |^(\[[ 0-9.]*\] )?core: [a-z_]+ PMU driver: $|Broken PMU|PMU not available' "$log.txt" | sed 's/^/# /' || true
	echo "# guest run took $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s, qemu exit status $rc"
	grep -E '^(not )?ok |^# ' "$log.prog" | sed "s/^/[$cpu] /" || true
	grep -E '^# dmesg: ' "$log.txt" | sed "s/^/[$cpu] /" || true
	# boot log: every expected pattern present, no "Broken PMU"
	local ok=1 re
	for re in "$@"; do
		grep -Eq -- "$re" "$log.txt" || { echo "# missing in boot log: $re"; ok=0; }
	done
	if grep -Eq 'Broken PMU|PMU not available' "$log.txt"; then
		ok=0
	fi
	tap $ok "[$cpu] boot log names the expected PMU"
	if grep -Eq '# dmesg: .*(Uhhuh|NMI received|Dazed|WARNING:|BUG:|unchecked MSR)' "$log.txt"; then
		tap 0 "[$cpu] no unknown NMIs or kernel warnings"
	else
		tap 1 "[$cpu] no unknown NMIs or kernel warnings"
	fi
	# guest results
	local p f s
	# passed: every "ok" but the skips (names may hold a '#', as in "#GP")
	p=$(grep -E '^ok [0-9]+ ' "$log.prog" | grep -Evc '# SKIP' || true)
	s=$(grep -Ec '^ok [0-9]+ .*# SKIP' "$log.prog" || true)
	f=$(grep -Ec '^not ok [0-9]+ ' "$log.prog" || true)
	pass=$((pass + p)) skip=$((skip + s)) fail=$((fail + f))
	if ! grep -q '^=== pmu-proof end' "$log.txt"; then
		tap 0 "[$cpu] guest program completed"
	fi
	[ "$pmu" = on ] || return 0
	# LVTPC delivery modes and masking, from a bare-metal guest
	if [ -z "$probe" ]; then
		tap 1 "[$cpu] LVTPC probe" "cannot build 32-bit freestanding code"
		return 0
	fi
	rc=0
	timeout 120 "$QEMU" -accel tcg -cpu "$cpu" -m 128M -nodefaults -display none -no-reboot -nic none \
		-L /usr/share/seabios -L /usr/share/qemu -kernel "$probe" \
		-debugcon "file:$work/$model-probe.log" -serial none -monitor none \
		-device isa-debug-exit,iobase=0xf4,iosize=4 </dev/null >/dev/null 2>&1 || rc=$?
	sed "s/^/[$cpu lvtpc-probe] /" "$work/$model-probe.log"
	p=$(grep -Ec '^ok [0-9]+ ' "$work/$model-probe.log" || true)
	f=$(grep -Ec '^not ok [0-9]+ ' "$work/$model-probe.log" || true)
	pass=$((pass + p)) fail=$((fail + f))
	# isa-debug-exit: status 1 = probe passed, 3 = failed
	[ "$rc" = 1 ] || [ "$f" -gt 0 ] || tap 0 "[$cpu] lvtpc-probe completed (qemu status $rc)"
}

# perf's register counts at boot, as Linux 7.3 prints them
# (arch/x86/events/core.c, x86_pmu_show_pmu_cap())
BW='\.\.\. bit width: +'
GR='\.\.\. generic counters: +'
FX='\.\.\. fixed-purpose counters: +'
VER='\.\.\. version: +'
boot core2duo on 'Performance Events: .*Core2 events.*Intel PMU driver' \
	"${VER}2\$" "${BW}40\$" "${GR}2\$" "${FX}3\$"
boot Skylake-Client on 'Performance Events: .*Skylake events.*full-width counters.*Intel PMU driver' \
	"${VER}4\$" "${BW}48\$" "${GR}4\$" "${FX}3\$"
boot Opteron_G3 on 'Performance Events: AMD PMU driver' "${BW}48\$" "${GR}4\$"
EM='\.\.\. global_ctrl mask: +'
# without perfmon-v2=on no PerfMonV2: perf's AMD version stays 0
boot EPYC on 'Performance Events: Fam17h\+ core perfctr, AMD PMU driver' \
	"${VER}0\$" "${BW}48\$" "${GR}6\$"
# Linux prints no "PerfMonV2": version 2 is what says perf found it
boot "EPYC,perfmon-v2=on,family=25,model=17" on 'Performance Events: Fam17h\+ core perfctr, AMD PMU driver' \
	"${VER}2\$" "${BW}48\$" "${GR}6\$" "${EM}000000000000003f\$"
# Hybrid Alder Lake (family 6 model 0x97): one "Performance Events" line
# for both types, then a block of perf's register counts for each PMU when
# its first CPU comes up (intel/core.c init_hybrid_pmu(); no block for the
# boot CPU's "cpu" PMU): P-core 8 GP + 4 fixed with PERF_METRICS (bit 48),
# E-core 6 + 3
HYB=Skylake-Client,model=151,hybrid-atoms=0x2
# (a console without printk times, as the test kernel's, has no "[ time] ")
T='^(\[[ 0-9.]*\] )?'
boot "$HYB" on "${T}"'Performance Events: Alderlake Hybrid events, AnyThread deprecated, full-width counters, Intel PMU driver\.$'
# pmu_block NAME: the "... " lines right after "core: NAME PMU driver: "
pmu_block() {
	sed -E 's/^\[[ 0-9.]*\] //' "$work/$HYB-on.log.txt" | awk -v h="core: $1 PMU driver: " '
		!on && $0 == h { on = 1; next }
		on && /^\.\.\. / { sub(/^\.\.\. +/, ""); gsub(/  +/, " "); print; next }
		on { exit }'
}
# pmu_block_is NAME GP FIXED GLOBAL_CTRL-MASK
pmu_block_is() {
	local want got
	want=$(printf '%s\n' "version: 5" "bit width: 48" "generic counters: $2" \
		"generic bitmap: $(printf '%016x' $(((1 << $2) - 1)))" \
		"fixed-purpose counters: $3" \
		"fixed-purpose bitmap: $(printf '%016x' $(((1 << $3) - 1)))" \
		"value mask: 0000ffffffffffff" "max period: 00007fffffffffff" \
		"global_ctrl mask: $4")
	got=$(pmu_block "$1")
	if [ "$got" = "$want" ]; then
		tap 1 "[$HYB,pmu=on] boot log: $1 PMU driver: v5, 48 bits, $2 generic, $3 fixed, global_ctrl mask $4"
	else
		echo "# $1 PMU driver block: want"; printf '%s\n' "$want" | sed 's/^/#   /'
		echo "# got"; printf '%s\n' "$got" | sed 's/^/#   /'
		tap 0 "[$HYB,pmu=on] boot log: $1 PMU driver: v5, 48 bits, $2 generic, $3 fixed, global_ctrl mask $4"
	fi
}
pmu_block_is cpu_core 8 4 0001000f000000ff
pmu_block_is cpu_atom 6 3 000000070000003f
# one block each, and none for a non-hybrid "cpu" PMU
n=$(grep -Ec "${T}"'core: [a-z_]+ PMU driver: $' "$work/$HYB-on.log.txt" || true)
v=$(grep -Ec "${T}"'\.\.\. version: ' "$work/$HYB-on.log.txt" || true)
if [ "$n" = 2 ] && [ "$v" = 2 ]; then
	tap 1 "[$HYB,pmu=on] boot log: two PMU driver blocks, no other register counts"
else
	echo "# $n PMU driver lines, $v version lines (want 2, 2)"
	tap 0 "[$HYB,pmu=on] boot log: two PMU driver blocks, no other register counts"
fi
if grep -q '^ok [0-9]* hybrid: sysfs PMUs cpu_core' "$work/$HYB-on.log.prog"; then
	:
else
	tap 0 "[$HYB,pmu=on] pmu-proof found a hybrid CPU"
fi
boot Skylake-Client off 'Performance Events: .*(no PMU driver|software events only)'
if grep -q 'Intel PMU driver' "$work/Skylake-Client-off.log.txt"; then
	tap 0 "[Skylake-Client] without pmu=on no PMU is reported"
else
	tap 1 "[Skylake-Client] without pmu=on no PMU is reported"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
