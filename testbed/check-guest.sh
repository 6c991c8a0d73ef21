#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-guest.sh RESULTS: boot the test kernel (the final state of the
# series, built by check-build.sh) in QEMU and run KUnit and the perfmon
# kselftests in it; judge the serial log with parse-log.py.
#
# GUEST_RUNS lists the boots as LABEL:QEMU-CPU[:TESTS] entries. A CPU with
# pmu=on boots the QEMU with the emulated PMU that check-pmu.sh built; the
# others boot stock QEMU, which has no PMU. TESTS, when given, limits the
# boot to these kselftest collections or programs (testbed.ksft= of
# guest/init: "perfmon" is a collection, "perfmon:attach_test" one program
# of it; several are separated by commas, e.g.
# perfmon:inherit_test,perfmon:lifecycle_test).
#
# The selftests are built twice: 64-bit as collection "perfmon" and
# 32-bit (-m32, run through IA32_EMULATION) as collection "perfmon32".
#
# Every PMU model runs count_test, the exact counts of its own table and
# switch code. Programs whose subject is the common code run on fewer,
# so that a cold make check stays within 40 minutes: inherit_test (the
# followers, about 55 s a boot) on hybrid, which runs every program
# (make soak: on Skylake, EPYC and the KASAN kernel too); calls_test (the
# calls' errors) 64-bit on core2 and hybrid and 32-bit on fam17h.
#
# A LABEL that starts with i386 boots the final tree built as a 32-bit
# kernel (check-build.sh) instead, with an initramfs of its own: /init is
# guest/init32.c, a static 32-bit program, and only perfmon32 is in it.
#
# A LABEL that starts with kexec boots an initramfs without the selftests:
# guest/kexec-before.sh kexecs into the test kernel with contexts counting
# on both CPUs, and guest/kexec-after.sh, in the kernel kexec'd into,
# checks that nothing was left counting, counts, and restarts with
# contexts counting (guest/kexec.c).
#
# A LABEL that starts with lockup boots an initramfs of its own with the
# NMI watchdog on (guest/lockup.sh): libpfm_examples_test and pfm_count -t
# and -i on pfm-threads (exact, demo/threads-check.sh) count with the
# detector on, then guest/lockup.c hard-locks CPU 1 (LKDTM) and the
# detector must report it (parse-log.py expects that report and nothing
# else). perfmon's first attach moved hard lockup detection to the buddy
# detector, which must report it, in the mode LOCKUP_MODES gives the boot
# (LABEL:MODE; held when none): held, a context counts on CPU 0
# throughout; loop, an unprivileged user attaches and detaches a context
# on CPU 0 in a loop; released, the perf detector is brought back, then a
# context attached and closed, and CPU 1 locks after the last release.
#
# A LABEL that starts with kasan boots the final tree built with the
# sanitizers (testbed/kasan.config: KASAN, UBSAN, KFENCE; check-build.sh
# builds it in the background and this script waits for it, so keep it
# last): parse-log.py fails the boot on any "BUG: KASAN:", "UBSAN:" or
# "BUG: KFENCE:" report. make soak boots it, every file instrumented
# (FULL_BUILDS=1, $CACHE/build/kasan-full); make check does not (its
# build and boot cost more than a cold run could spend: testbed/
# MEASUREMENTS.md), unless KASAN_BUILD=1 and GUEST_RUNS has a kasan entry,
# when KASAN and UBSAN instrument the series' files alone (perfmon's and
# those it hooks into). It runs the programs that create, inherit, load,
# race and free contexts (inherit_test, lifecycle_test), with the short
# settings of the other boots but 300 rounds of the race between a clone
# and the unload or close of an inheriting context (KASAN_SETTINGS). Its
# kernel has no ACPI: QEMU gets -smp 2,sockets=2, whose MP table lists both
# CPUs.
#
# A LABEL that starts with hotplug boots the test kernel with more
# possible than online CPUs and the NMI watchdog on: QEMU -smp 4
# (HOTPLUG_SMP) and "maxcpus=2" on the kernel command line (HOTPLUG_APPEND),
# so that CPUs 2 and 3 are possible and present but never come online (no
# worker of theirs ever runs). QEMU's -smp 2,maxcpus=4 does not do it: its
# MADT lists CPUs 2 and 3 as disabled (hot-pluggable) entries of a revision
# 1 table, which Linux (6.12 and 7.3 alike) counts only in a guest that knows it runs under a
# hypervisor (acpi_is_processor_usable(); CONFIG_HYPERVISOR_GUEST is off,
# and no Linux hypervisor driver knows TCG's CPUID signature), so that
# kernel sees 2 possible CPUs ("Allowing 2 present CPUs plus 0 hotplug
# CPUs"). The boot runs attach_test's "wd" fixture (testbed.ksft_args),
# which attaches and detaches contexts, moves the hard lockup detector
# between perf and buddy, and takes CPU 1 offline and back in between.
# Its CPU has 12 general-purpose counters (QEMU's pmu-gp=12:
# architectural perfmon 6, its MSRs at 0x1900, perf drives all 12 through
# them) and leaf 0x23: perfmon's table has 8, and share_test's
# undescribed_counters_read_zero finds nothing of perf's in the other 4;
# beside_test ("beside" fixture) keeps perf busy on the CPU of contexts
# on those 12 counters. Anything that
# walks the possible CPUs where it means the online ones (queues work
# there, waits for it) hangs or reports a hard lockup of an offline CPU
# here. It has a timeout of its own (HOTPLUG_TIMEOUT), shorter than
# GUEST_TIMEOUT: a hang costs that much.
#
# The boots named in WATCHDOG_BOOTS run with the NMI watchdog on
# (nmi_watchdog=1; run-guest.sh turns it off otherwise): the perfmon
# suite must pass there too, with every counter.
#
# What runs where (GUEST_RUNS): the whole 64-bit suite on a hybrid Alder
# Lake (with the NMI watchdog); on EPYC all of it but calls_test and
# inherit_test, and through IA32_EMULATION the 32-bit programs that pass
# the ABI's structures (abi, calls, count, sysfs); on Core 2 and family
# 10h the programs whose checks depend on the PMU (the register tables,
# counting, pmu_desc, libpfm's encodings; on Core 2 calls_test and
# beside_test too), not attach_test and lifecycle_test, whose calls and
# errnos do not. fam19h is EPYC with AMD
# PerfMonV2 (QEMU's perfmon-v2=on, family 19h model 11h like Zen 4),
# the only boot where perfmon (PFM_X86_AMD_GLOBAL) and perf
# (amd_pmu_v2_handle_irq) use PerfCntrGlobalCtl/Status: the PMU-dependent
# programs plus beside_test (perf busy on a monitored CPU: perf's enable
# writes that global control), attach_test (perf's take and give-back, with a status
# bit perfmon might leave behind for perf's v2 handler) and
# lifecycle_test (load races and the NMI on the global status); not
# calls_test, whose errnos do not depend on the global control, nor the
# 32-bit programs. It replaces nothing: fam17h stays the one AMD boot of
# perf's v1 driver with attach and lifecycle, of the 6 counters without
# global control, and of the 32-bit programs. A boot whose CPU has
# perfmon-v2=on must also show perf's "... version: 2" in its log, so
# that a QEMU that ignored the property (a second fam17h) fails.
# hybrid is Skylake-Client made an Alder Lake (model 151) with vCPU 1 an
# E-core (QEMU's hybrid-atoms=0x2): perf registers cpu_core and
# cpu_atom, and perfmon's table has the counters both types have (6
# general-purpose, 3 fixed, architectural perfmon version 5, full-width
# writes), so every test of two CPUs moves threads between a P-core and
# an E-core, and count_test's hybrid fixture runs. It replaces the
# Skylake boot of the whole suite: that table (version 4, 4 counters)
# differs only in its counter count, and Skylake still boots for
# kexec, hotplug and (make soak) KASAN. Its log must show perfmon's
# hybrid table, so that a QEMU that ignored the property (a plain Skylake) fails.
# late is the hybrid model with leaf 0x23 (pmu-ext=on) booted with
# maxcpus=1: only the P-core is up at boot, whose leaf 0x23 has 8 + 4
# counters, and count_test's hybrid fixture brings the E-core online
# for each of its tests (perfmon's table must be the 6 + 3 of both types), then
# share_test's test reads the P-core's other 2 counters.
# lockup-fam19h (released) runs perf's hard lockup detector on its v2
# driver after perfmon gave the PMU back, where a global status bit
# perfmon left set would make amd_pmu_v2_handle_irq() warn.
# make soak boots the i386 kernel (LABEL i386, I386_BOOT=1), which runs
# the 32-bit programs natively.
# The selftests' long runs (their rounds, cycles, sweeps and seconds, in
# the environment) are short by default and long in make soak
# (testbed/soak.sh), which sets GUEST_SETTINGS, KASAN_SETTINGS and
# GUEST_RUNS.
#
# The boots run GUEST_JOBS (default 1) at a time: a TCG guest keeps
# about 1.2 host CPUs busy, so two at a time on 2 CPUs gained nothing
# measurable (547 s against 530 s for the six boots). A boot whose
# inputs are all unchanged (kernel, initramfs contents, QEMU, the scripts)
# and that passed before is not repeated: its log and results are reused (lib.sh;
# CHECK_NO_CACHE=1 boots everything). When only some test programs'
# binaries changed (a change of the selftests), the boot runs those alone
# and the others' sections of its log come from the kept one
# (splice-log.py): a program's result depends on the kernel, QEMU, the
# boot's settings and its own binary, each program being independent of
# the others, as kselftests are.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# check-guest.sh --build RESULTS: only the selftests' build and the
# initramfs (below), which check.sh starts in the background while the
# PMU stage runs; the guest stage then waits for it and does not build
# them again.
BUILD_ONLY=0
[ "${1:-}" != --build ] || { BUILD_ONLY=1; shift; }
RESULTS=$1
LOGDIR=$(dirname "$RESULTS")
result() { echo "$1 $2" >>"$RESULTS"; [ "$1" = PASS ] || msg "  $1 $2${3:+: $3}"; }
[ "$BUILD_ONLY" = 0 ] || result() { :; }

TEST_O=$CACHE/build/test
KSFT_O=$CACHE/build/kselftest
KSFT_INSTALL=$CACHE/build/kselftest-install
KSFT32_O=$CACHE/build/kselftest32
KSFT32_INSTALL=$CACHE/build/kselftest32-install
INITRD=$CACHE/build/initramfs.cpio.gz
I386_BZIMAGE=$CACHE/build/i386/arch/x86/boot/bzImage
KASAN_BZIMAGE=$CACHE/build/kasan/arch/x86/boot/bzImage
[ "${FULL_BUILDS:-0}" = 0 ] || KASAN_BZIMAGE=$CACHE/build/kasan-full/arch/x86/boot/bzImage
INITRD32=$CACHE/build/initramfs32.cpio.gz
STAGE32=$CACHE/build/initramfs32
INITRD_KEXEC=$CACHE/build/initramfs-kexec.cpio.gz
STAGE_KEXEC=$CACHE/build/initramfs-kexec
INITRD_LOCKUP=$CACHE/build/initramfs-lockup.cpio.gz
STAGE_LOCKUP=$CACHE/build/initramfs-lockup
GUEST_RUNS=${GUEST_RUNS:-nopmu:max:perfmon,perfmon32 core2:core2duo,pmu=on:perfmon:abi_test,perfmon:beside_test,perfmon:calls_test,perfmon:count_test,perfmon:sysfs_test,perfmon:libpfm_examples_test,perfmon:share_test hybrid:Skylake-Client,pmu=on,model=151,hybrid-atoms=0x2:perfmon fam10h:Opteron_G3,pmu=on:perfmon:abi_test,perfmon:count_test,perfmon:sysfs_test,perfmon:libpfm_examples_test,perfmon:share_test fam17h:EPYC,pmu=on:perfmon:abi_test,perfmon:attach_test,perfmon:beside_test,perfmon:count_test,perfmon:kvm_test,perfmon:libpfm_examples_test,perfmon:lifecycle_test,perfmon:share_test,perfmon:sysfs_test,perfmon32:abi_test,perfmon32:calls_test,perfmon32:count_test,perfmon32:sysfs_test fam19h:EPYC,pmu=on,perfmon-v2=on,family=25,model=17:perfmon:abi_test,perfmon:beside_test,perfmon:count_test,perfmon:attach_test,perfmon:lifecycle_test,perfmon:libpfm_examples_test,perfmon:sysfs_test,perfmon:share_test kexec:Skylake-Client,pmu=on lockup:EPYC,pmu=on lockup-core2:core2duo,pmu=on lockup-fam10h:Opteron_G3,pmu=on lockup-fam19h:EPYC,pmu=on,perfmon-v2=on,family=25,model=17 hotplug:Skylake-Client,pmu=on,pmu-gp=12,pmu-ext=on:perfmon:attach_test,perfmon:beside_test,perfmon:share_test late:Skylake-Client,pmu=on,model=151,hybrid-atoms=0x2,pmu-ext=on:perfmon:count_test,perfmon:share_test kvm:EPYC,pmu=on,perfmon-v2=on,family=25,model=17,+svm,+npt:perfmon:kvm_test,kvm kvmperf:EPYC,pmu=on,perfmon-v2=on,family=25,model=17,+svm,+npt:perfmon:kvm_test,kvm}
WATCHDOG_BOOTS=${WATCHDOG_BOOTS:-hybrid}
LOCKUP_MODES=${LOCKUP_MODES-lockup-core2:loop lockup-fam10h:released lockup-fam19h:released}
# The selftests' environment (passed on the kernel command line to /init):
# none, the programs' short defaults (1,000 create/exit cycles and one
# fault-injection sweep of inherit_test, 100 rounds of lifecycle_test's
# load race and 10 s of its stress, 200 rounds of the race of a clone with
# an unload or a close), but 300 rounds of that race under KASAN.
GUEST_SETTINGS=${GUEST_SETTINGS-}
KASAN_SETTINGS=${KASAN_SETTINGS-PFM_FOLLOW_RACE_ROUNDS=300}
HOTPLUG_SMP=${HOTPLUG_SMP:-4}
HOTPLUG_APPEND=${HOTPLUG_APPEND-maxcpus=2 nmi_watchdog=1 testbed.ksft_args=-f,wd,-f,beside,-t,undescribed_counters_read_zero}
HOTPLUG_TIMEOUT=${HOTPLUG_TIMEOUT:-600}
LATE_APPEND=${LATE_APPEND-maxcpus=1 testbed.ksft_args=-f,hybrid,-t,undescribed_counters_read_zero}
# The kvm boots: KVM in the guest (TCG emulates SVM) with the mediated vPMU
# (kvm) and the perf-based one (kvmperf), the NMI watchdog on; KVM's own
# PMU selftests (KVM_SELFTESTS, built from the tree) and kvm_test. Of
# KVM's, pmu_counters_test needs an Intel host (TCG has no VMX).
KVM_APPEND=${KVM_APPEND-kvm_amd.enable_mediated_pmu=1 nmi_watchdog=1}
KVMPERF_APPEND=${KVMPERF_APPEND-nmi_watchdog=1}
KVM_SELFTESTS=${KVM_SELFTESTS-pmu_event_filter_test svm_pmu_host_guest_test}
KVM_O=$CACHE/build/kvm-selftests
# perfmon inside a KVM guest, with NESTED=1 (make soak): the kvm boot (its
# initramfs is then the main one and, appended, /nested: this QEMU with its
# libraries and firmware, the test kernel, an initramfs of NESTED_TESTS)
# runs kvm:nested_perfmon (testbed/guest/nested.sh), which boots the test
# kernel as its KVM guest on the mediated vPMU. That guest's log, passed on
# in the kvm boot's, is judged as a boot of its own: kvm-L2. Without it
# (make check) nested_perfmon skips. A guest in the TCG guest runs at a
# fraction of its speed (its boot alone takes 80 s of its own clock), and
# about once in 200 runs under host load it ended in a silent shutdown,
# or the kvm boot stalled: QEMU's 0010 (testbed/qemu/README.md) fixed the
# race found there. Make soak only: the nested guest costs minutes more.
# NESTED_TIMEOUT bounds L2 (nested.sh); the kvm boot's own limits grow
# with it.
NESTED=${NESTED:-0}
NESTED_TESTS=${NESTED_TESTS-perfmon:count_test}
NESTED_ARGS=${NESTED_ARGS--t,self_exact,-t,self_every_gp_counter,-t,ptrace_child_exact,-t,overflow_gp,-t,stopped_counts_nothing,-t,migrations_exact,-t,threads_isolated}
NESTED_TIMEOUT=${NESTED_TIMEOUT-1200}
INITRD_KVM=$CACHE/build/initramfs-kvm.cpio.gz
STAGE_NESTED=$CACHE/build/initramfs-nested

bzimage=$TEST_O/arch/x86/boot/bzImage
[ -f "$bzimage" ] || { result FAIL "guest: no test kernel" "the build stage failed"; exit 1; }

# nested_payload STAGE OUT: the archive of /nested (nested.sh), to append
# to the kvm boot's initramfs.
nested_payload() {
	local st=$1 out=$2 n=$1/nested qemu t name path
	qemu=$(cat "$CACHE/qemu/current") || return 1
	rm -rf "$st" && mkdir -p "$n/lib" "$n/fw" "$st/ksft" || return 1
	strip -o "$n/qemu-system-x86_64" "$qemu" || return 1
	# the dynamic loader runs it with these (the guest has no /lib)
	ldd "$qemu" | awk '$2 == "=>" { print $1, $3 } $1 ~ /ld-linux/ { print "ld-linux-x86-64.so.2", $1 }' |
		while read -r name path; do
			cp -L "$path" "$n/lib/$name" || exit 1
		done || return 1
	cp /usr/share/seabios/bios-256k.bin /usr/share/qemu/linuxboot_dma.bin "$n/fw/" &&
	cp "$bzimage" "$n/bzImage" || return 1
	for t in ${NESTED_TESTS//,/ }; do
		mkdir -p "$st/ksft/${t%%:*}" &&
		cp "$KSFT_INSTALL/${t%%:*}/${t#*:}" "$st/ksft/${t%%:*}/" &&
		echo "$t" >>"$st/ksft/kselftest-list.txt" || return 1
		[ ! -f "$KSFT_INSTALL/${t%%:*}/settings" ] ||
			cp "$KSFT_INSTALL/${t%%:*}/settings" "$st/ksft/${t%%:*}/"
	done
	"$TESTBED/mkinitramfs.sh" "$n/initrd.gz" "$st/ksft" &&
	printf 'NESTED_TESTS=%s\nNESTED_ARGS=%s\nNESTED_TIMEOUT=%s\n' \
		"$NESTED_TESTS" "$NESTED_ARGS" "$NESTED_TIMEOUT" >"$n/config" &&
	(cd "$st" && find nested | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 | gzip -1) >"$out"
}

log=$LOGDIR/kselftest-build.log
prebuilt=$LOGDIR/kselftest-prebuilt
exec 8>"$CACHE/build/.kselftest.lock"
flock 8
[ -e "$prebuilt" ] || {
	make -C "$BASE_REPO" O="$TEST_O" -s headers &&
	rm -rf "$KSFT_INSTALL" &&
	make -C "$BASE_REPO/tools/testing/selftests" TARGETS=perfmon \
		O="$KSFT_O" KHDR_INCLUDES="-isystem $TEST_O/usr/include" \
		USERLDFLAGS=-static KSFT_INSTALL_PATH="$KSFT_INSTALL" install &&
	rm -rf "$KSFT32_INSTALL" &&
	make -C "$BASE_REPO/tools/testing/selftests" TARGETS=perfmon \
		O="$KSFT32_O" KHDR_INCLUDES="-isystem $TEST_O/usr/include" \
		USERCFLAGS=-m32 USERLDFLAGS="-static -m32" \
		KSFT_INSTALL_PATH="$KSFT32_INSTALL" install &&
	cp -a "$KSFT32_INSTALL/perfmon" "$KSFT_INSTALL/perfmon32" &&
	sed -n 's/^perfmon:/perfmon32:/p' "$KSFT32_INSTALL/kselftest-list.txt" \
		>>"$KSFT_INSTALL/kselftest-list.txt" &&
	make -C "$BASE_REPO/tools/testing/selftests/kvm" OUTPUT="$KVM_O" \
		KHDR_INCLUDES="-isystem $TEST_O/usr/include" EXTRA_CFLAGS=-static \
		$(printf "$KVM_O/x86/%s " $KVM_SELFTESTS) &&
	mkdir -p "$KSFT_INSTALL/kvm" &&
	(for t in $KVM_SELFTESTS; do
		cp "$KVM_O/x86/$t" "$KSFT_INSTALL/kvm/" &&
		echo "kvm:$t" >>"$KSFT_INSTALL/kselftest-list.txt" || exit 1
	done) &&
	install -m 0755 "$TESTBED/guest/nested.sh" "$KSFT_INSTALL/kvm/nested_perfmon" &&
	echo "kvm:nested_perfmon" >>"$KSFT_INSTALL/kselftest-list.txt" &&
	echo timeout=600 >"$KSFT_INSTALL/kvm/settings" &&
	"$TESTBED/mkinitramfs.sh" "$INITRD" "$KSFT_INSTALL" &&
	{ [ "$NESTED" != 1 ] || {
		nested_payload "$STAGE_NESTED" "$STAGE_NESTED.cpio.gz" &&
		cat "$INITRD" "$STAGE_NESTED.cpio.gz" >"$INITRD_KVM"; }; } &&
	rm -rf "$STAGE32" && mkdir -p "$STAGE32/kselftest" "$STAGE32/dev" &&
	gcc -m32 -static -O2 -Wall -o "$STAGE32/init" "$TESTBED/guest/init32.c" &&
	cp -a "$KSFT32_INSTALL/perfmon" "$STAGE32/kselftest/perfmon32" &&
	sed -n 's/^perfmon:/perfmon32:/p' "$KSFT32_INSTALL/kselftest-list.txt" \
		>"$STAGE32/kselftest/kselftest-list.txt" &&
	{ mknod -m 600 "$STAGE32/dev/console" c 5 1 || true; } &&
	(cd "$STAGE32" && find . | cpio -o -H newc --quiet | gzip -1) >"$INITRD32" &&
	rm -rf "$STAGE_KEXEC" && mkdir -p "$STAGE_KEXEC/2/kexec" "$STAGE_KEXEC/1/kexec" &&
	gcc -static -O2 -Wall -Wno-unused-function -D_GNU_SOURCE= -isystem "$TEST_O/usr/include" \
		-I "$BASE_REPO/tools/testing/selftests/perfmon" \
		-o "$STAGE_KEXEC/2/kexec/kexec" "$TESTBED/guest/kexec.c" \
		"$BASE_REPO/tools/testing/selftests/perfmon/pfm_util.c" &&
	install -m 0755 "$TESTBED/guest/kexec-after.sh" "$STAGE_KEXEC/2/kexec/after.sh" &&
	"$TESTBED/mkinitramfs.sh" "$STAGE_KEXEC/1/kexec/initrd.gz" "" "$STAGE_KEXEC/2" &&
	cp "$STAGE_KEXEC/2/kexec/kexec" "$bzimage" "$STAGE_KEXEC/1/kexec/" &&
	install -m 0755 "$TESTBED/guest/kexec-before.sh" "$STAGE_KEXEC/1/kexec/before.sh" &&
	"$TESTBED/mkinitramfs.sh" "$INITRD_KEXEC" "" "$STAGE_KEXEC/1" &&
	rm -rf "$STAGE_LOCKUP" && mkdir -p "$STAGE_LOCKUP/lockup" &&
	gcc -static -O2 -Wall -Wno-unused-function -D_GNU_SOURCE= -isystem "$TEST_O/usr/include" \
		-I "$BASE_REPO/tools/testing/selftests/perfmon" \
		-o "$STAGE_LOCKUP/lockup/lockup" "$TESTBED/guest/lockup.c" \
		"$BASE_REPO/tools/testing/selftests/perfmon/pfm_util.c" &&
	gcc -static -O2 -Wall -isystem "$TEST_O/usr/include" -o "$STAGE_LOCKUP/lockup/pfm_count" \
		"$BASE_REPO/samples/perfmon/pfm_count.c" &&
	gcc -static -O2 -Wall -pthread -o "$STAGE_LOCKUP/lockup/pfm-threads" \
		"$TESTBED/demo/pfm-threads.c" &&
	cp "$KSFT_INSTALL/perfmon/libpfm_examples_test" "$STAGE_LOCKUP/lockup/" &&
	install -m 0755 "$TESTBED/guest/lockup.sh" "$STAGE_LOCKUP/lockup/lockup.sh" &&
	install -m 0755 "$TESTBED/demo/threads-check.sh" "$STAGE_LOCKUP/lockup/threads-check.sh" &&
	"$TESTBED/mkinitramfs.sh" "$INITRD_LOCKUP" "" "$STAGE_LOCKUP"
} >"$log" 2>&1 || { result FAIL "guest: build the kselftests and the initramfs" "see $log"; exit 1; }
if [ "$BUILD_ONLY" = 1 ]; then
	touch "$prebuilt"
	exit 0
fi
flock -u 8
exec 8>&-

# The main initramfs without the test programs' binaries: a boot of it
# whose other inputs are unchanged reruns only the programs whose binary
# changed (progs_of, boot).
ksft_id=$( { (cd "$KSFT_INSTALL" && find . -type f | LC_ALL=C sort |
	grep -v -x -F -f <(sed -n 's|^\([^:]*\):\(.*\)$|./\1/\2|p' kselftest-list.txt) |
	xargs -r sha256sum)
	files_id "$TESTBED/mkinitramfs.sh" "$TESTBED/guest"; } | sha256sum | cut -c1-24)

# progs_of TESTS: "coll:test sha256" of each program a boot with this
# testbed.ksft= selection runs (all of them when TESTS is empty).
progs_of() {
	local coll test o sel
	while IFS=: read -r coll test; do
		[ -n "$coll" ] && [ -n "$test" ] || continue
		sel=${1:-all}
		if [ "$sel" != all ]; then
			sel=no
			for o in ${1//,/ }; do
				{ [ "$o" = "$coll" ] || [ "$o" = "$coll:$test" ]; } && sel=yes
			done
		fi
		[ "$sel" = no ] && continue
		echo "$coll:$test $(sha256sum <"$KSFT_INSTALL/$coll/$test" | cut -c1-24)"
	done <"$KSFT_INSTALL/kselftest-list.txt"
}
ksft32_id=$(files_id "$STAGE32")
kexec_id=$(files_id "$STAGE_KEXEC/1" "$TESTBED/guest")
lockup_id=$(files_id "$STAGE_LOCKUP" "$TESTBED/guest")
nested_id=
[ "$NESTED" != 1 ] || nested_id=$(files_id "$STAGE_NESTED")
scripts_id=$(files_id "$TESTBED/run-guest.sh" "$TESTBED/parse-log.py" "$0")

GUEST_JOBS=${GUEST_JOBS:-1}

# boot LABEL CPU TESTS KERNEL INITRD QEMU KEY: one boot, judged into
# $LOGDIR/parse-LABEL.out; kept for reuse when it passed.
boot() {
	local label=$1 cpu=$2 tests=$3 kernel=$4 initrd=$5 qemu=$6 key=$7
	local glog=$LOGDIR/guest-$label.log keep=$LOGDIR/keep-$label t0 kept mode
	local progs=$LOGDIR/progs-$label changed= old=
	local append=${tests:+testbed.ksft=$tests}
	local smp=2 timeout=${GUEST_TIMEOUT:-900} settings=$GUEST_SETTINGS

	case "$label" in
	kexec*) append="testbed.guest=/kexec/before.sh kunit.enable=0" ;;
	lockup*) append="testbed.guest=/lockup/lockup.sh kunit.enable=0 nmi_watchdog=1" ;;
	hotplug*)
		append="$append${HOTPLUG_APPEND:+ $HOTPLUG_APPEND}"
		smp=$HOTPLUG_SMP timeout=$HOTPLUG_TIMEOUT ;;
	late*) append="$append${LATE_APPEND:+ $LATE_APPEND}" ;;
	kvmperf*) append="$append${KVMPERF_APPEND:+ $KVMPERF_APPEND}" ;;
	kvm*) append="$append${KVM_APPEND:+ $KVM_APPEND}"
		[ "$NESTED" != 1 ] || {
			append="$append testbed.timeout=$((NESTED_TIMEOUT + 120))"
			timeout=$((timeout + NESTED_TIMEOUT))
		} ;;
	# one CPU per package: the MP table lists both (no ACPI, kasan.config)
	kasan*) settings=$KASAN_SETTINGS smp=2,sockets=2 ;;
	esac
	for mode in $LOCKUP_MODES; do
		[ "${mode%%:*}" = "$label" ] && append="$append testbed.lockup=${mode#*:}"
	done
	case " $WATCHDOG_BOOTS " in *" $label "*) append="${append:+$append }nmi_watchdog=1" ;; esac
	t0=$(date +%s)
	: >"$progs"
	case "$initrd" in "$INITRD" | "$INITRD_KVM") progs_of "$tests" >"$progs" ;; esac
	if kept=$(cached_run "$key"); then
		# the programs whose binary is not the one of the kept run
		changed=$(grep -v -x -F -f "$kept/progs" "$progs" | cut -d' ' -f1 | paste -sd, -)
		if [ -z "$changed" ]; then
			cp "$kept/guest.log" "$glog"
			cp "$kept/parse.out" "$LOGDIR/parse-$label.out"
			msg "  guest $label (-cpu $cpu -smp $smp${tests:+, $tests}): inputs unchanged since $(cat "$kept/done"), results reused, log $glog"
			return 0
		fi
		# the others' sections come from the kept log (splice-log.py)
		old=$kept/guest.log
		append="testbed.ksft=$changed $(echo "$append" | sed 's/testbed\.ksft=[^ ]*//')"
		tests=$changed
	fi
	[ -z "$settings" ] || append="${append:+$append }$settings"
	"$TESTBED/run-guest.sh" ${qemu:+--qemu "$qemu"} --kernel "$kernel" --initrd "$initrd" --cpu "$cpu" \
		--smp "$smp" ${append:+--append "$append"} \
		--log "$glog" --timeout "$timeout" >"$LOGDIR/run-guest-$label.out" 2>&1
	msg "  guest $label (-cpu $cpu -smp $smp${tests:+, $tests}): $(($(date +%s) - t0)) s, log $glog${old:+, the other programs from the kept log}"
	if [ -n "$old" ]; then
		mv "$glog" "$glog.partial"
		python3 "$TESTBED/splice-log.py" "$old" "$glog.partial" "$glog" $(cut -d' ' -f1 "$progs")
	fi
	if python3 "$TESTBED/parse-log.py" "$glog" >"$LOGDIR/parse-$label.out" 2>&1; then
		mkdir -p "$keep" && cp "$glog" "$keep/guest.log" &&
			cp "$LOGDIR/parse-$label.out" "$keep/parse.out" && cp "$progs" "$keep/progs" &&
			keep_run "$key" "$keep/guest.log" "$keep/parse.out" "$keep/progs"
		rm -rf "$keep"
	fi
}

# The boots run GUEST_JOBS at a time; their results are recorded
# afterwards, in GUEST_RUNS order.
rc=0
booted=
for run in $GUEST_RUNS; do
	label=${run%%:*}
	cpu=${run#*:}
	tests=
	case "$cpu" in *:*) tests=${cpu#*:}; cpu=${cpu%%:*} ;; esac
	qemu=
	case "$cpu" in
	*pmu=on*)
		qemu=$(cat "$CACHE/qemu/current" 2>/dev/null)
		if [ ! -x "$qemu" ]; then
			result FAIL "guest[$label] no QEMU with the emulated PMU" "the pmu stage failed"
			rc=1
			continue
		fi ;;
	esac
	kernel=$bzimage initrd=$INITRD initrd_id=$ksft_id
	case "$label" in
	i386*)
		kernel=$I386_BZIMAGE initrd=$INITRD32 initrd_id=$ksft32_id
		wait_extra_builds "$LOGDIR" i386
		if [ ! -f "$kernel" ]; then
			result FAIL "guest[$label] no 32-bit kernel" "its build failed"
			rc=1
			continue
		fi ;;
	kasan*)
		kernel=$KASAN_BZIMAGE
		wait_extra_builds "$LOGDIR" kasan
		if [ ! -f "$kernel" ]; then
			result FAIL "guest[$label] no KASAN kernel" "its build failed"
			rc=1
			continue
		fi ;;
	kexec*)
		initrd=$INITRD_KEXEC initrd_id=$kexec_id ;;
	lockup*)
		initrd=$INITRD_LOCKUP initrd_id=$lockup_id ;;
	kvm)
		[ "$NESTED" != 1 ] || initrd=$INITRD_KVM initrd_id="$ksft_id $nested_id" ;;
	esac
	key=guest-$( { files_id "$kernel" "${qemu:-$(command -v qemu-system-x86_64)}"
		echo "$initrd_id $scripts_id $label|$cpu|$tests|${GUEST_TIMEOUT:-900}|$GUEST_SETTINGS|$WATCHDOG_BOOTS|$LOCKUP_MODES|$KASAN_SETTINGS|$HOTPLUG_SMP|$HOTPLUG_APPEND|$HOTPLUG_TIMEOUT|$LATE_APPEND|$KVM_APPEND|$KVMPERF_APPEND"; } | sha256sum | cut -c1-24)
	rm -f "$LOGDIR/parse-$label.out"
	while [ "$(jobs -rp | wc -l)" -ge "$GUEST_JOBS" ]; do
		wait -n
	done
	boot "$label" "$cpu" "$tests" "$kernel" "$initrd" "$qemu" "$key" &
	booted="$booted $label"
done
wait

# The nested guest's log, out of the kvm boot's: a boot of its own.
case "$NESTED: $booted " in
1:*" kvm "*)
	sed -n 's/^# L2| //p' "$LOGDIR/guest-kvm.log" 2>/dev/null |
		sed 's/L2GUEST-/PERFMON-/g' >"$LOGDIR/guest-kvm-L2.log"
	python3 "$TESTBED/parse-log.py" "$LOGDIR/guest-kvm-L2.log" >"$LOGDIR/parse-kvm-L2.out" 2>&1
	booted="$booted kvm-L2" ;;
esac

for label in $booted; do
	out=$LOGDIR/parse-$label.out
	# Every line but the closing count is one result: "STATUS KIND NAME".
	sed '$d' "$out" 2>/dev/null |
		while read -r status rest; do
			case "$status" in
			PASS | FAIL | SKIP) result "$status" "guest[$label] $rest" ;;
			esac
		done
	if ! grep -q '^[0-9]* passed, ' "$out" 2>/dev/null; then
		result FAIL "guest[$label] log could not be judged" "see $out"
		rc=1
	elif ! grep -q '^[0-9]* passed, 0 failed' "$out"; then
		rc=1
	fi
done

# A boot on a model that QEMU makes of properties must have had it:
# PerfMonV2 (perfmon-v2=on), where perf prints no "PerfMonV2" (6.12, 7.3),
# only "... version: 2" (0 on the other AMD models); more than 8
# general-purpose counters (pmu-gp=), "... version: 6"; the hybrid model
# (hybrid-atoms=), where perfmon's table has the counters common to the
# core types. The late boot must have brought its E-core online after
# boot (count_test's hybrid fixture says so).
v2re=$'^\\.\\.\\. version: +2\r?$'
v6re=$'^\\.\\.\\. version: +6\r?$'
hyre='perfmon: hybrid Intel processor: the [0-9]+ general-purpose and [0-9]+ fixed counters'
for run in $GUEST_RUNS; do
	label=${run%%:*}
	cpu=${run#*:}
	cpu=${cpu%%:*}
	case " $booted " in *" $label "*) ;; *) continue ;; esac
	case "$cpu" in
	*perfmon-v2=on*)
		re=$v2re what='PerfMonV2 (perf: version 2)' want='"... version: 2"' ;;
	*pmu-gp=*)
		re=$v6re what='architectural perfmon 6 (perf: version 6)' want='"... version: 6"' ;;
	*hybrid-atoms=*)
		re=$hyre what='a hybrid CPU (perfmon: the common counters)'
		want='"perfmon: hybrid Intel processor"' ;;
	*) continue ;;
	esac
	if grep -Eq "$re" "$LOGDIR/guest-$label.log" 2>/dev/null; then
		result PASS "guest[$label] boot on $what"
	else
		result FAIL "guest[$label] boot on $what" "no $want in $LOGDIR/guest-$label.log"
		rc=1
	fi
	case "$label" in late*) ;; *) continue ;; esac
	if grep -Eq '^# [1-9][0-9]* CPUs brought online after boot' "$LOGDIR/guest-$label.log"; then
		result PASS "guest[$label] E-core brought online after boot"
	else
		result FAIL "guest[$label] E-core brought online after boot" "no \"CPUs brought online after boot\" in $LOGDIR/guest-$label.log"
		rc=1
	fi
done

# The nested guest must have had PerfMonV2 from KVM's mediated vPMU.
case " $booted " in
*" kvm-L2 "*)
	if grep -Eq "$v2re" "$LOGDIR/guest-kvm-L2.log"; then
		result PASS "guest[kvm-L2] boot on PerfMonV2 (KVM's mediated vPMU)"
	else
		result FAIL "guest[kvm-L2] boot on PerfMonV2 (KVM's mediated vPMU)" \
			"no \"... version: 2\" in $LOGDIR/guest-kvm-L2.log"
		rc=1
	fi ;;
esac

# The exact counts the selftests checked, measured against expected, per model.
labels=
for run in $GUEST_RUNS; do labels="$labels ${run%%:*}"; done
case " $booted " in *" kvm-L2 "*) labels="$labels kvm-L2" ;; esac
# shellcheck disable=SC2086
python3 "$TESTBED/count-table.py" "$LOGDIR" $labels >"$LOGDIR/counts.md" 2>&1 &&
	msg "  counts: $(tail -n 1 "$LOGDIR/counts.md"), table in $LOGDIR/counts.md"
exit $rc
