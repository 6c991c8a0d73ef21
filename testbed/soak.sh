#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# soak.sh: the long runs that make check runs short, with the same stages,
# judge and summary line ("N passed, N failed, N skipped", after the total
# time). Run it before a release of the series and after a change of the
# switch, attach, inheritance or interrupt paths: it looks for the rare
# interleavings that the seconds of make check may miss.
#
#   skylake  (NMI watchdog on) and fam17h: lifecycle_test and inherit_test
#            with 10,000 rounds of the load race, 60 s of the context
#            stress, 10,000 create/exit cycles, ten fault-injection sweeps
#            of a clone and 10,000 rounds of a clone racing an unload;
#   skylake and fam19h (PerfMonV2): beside_test, 5,000 rounds of each of
#            its tests with perf busy on the monitored CPU;
#   kasan    the same programs on the KASAN kernel, every file
#            instrumented (make check's instruments the series' files
#            alone): 1,000 rounds of each race, 60 s of stress, 2,000
#            cycles, two sweeps;
#   lockup-core2  an unprivileged attach/detach loop for 120 s before the
#            hard lockup that the buddy detector must report;
#   kvm      KVM's mediated vPMU in the EPYC PerfMonV2 guest, and in it a
#            KVM guest (testbed/guest/nested.sh) running all of count_test
#            (make check skips it; NESTED=1 testbed/check.sh guest runs a
#            subset of seven tests);
#   i386     the test configuration built as a 32-bit kernel (make check
#            only compiles the series' files as i386), booted on Skylake:
#            the 32-bit selftests natively.
#
# And the full builds that make check replaces by compiles of the series'
# files (FULL_BUILDS=1, testbed/check-build.sh): a whole kernel for every
# patch of the series, and the final tree without CONFIG_PERFMON, compiled
# and linked, and the KASAN kernel with every file instrumented. The test
# kernel is make check's (cached); each variable below can be set from the
# environment.
set -uo pipefail
TESTBED=$(cd "$(dirname "$0")" && pwd)

export GUEST_RUNS=${SOAK_RUNS:-skylake:Skylake-Client,pmu=on:perfmon:lifecycle_test,perfmon:inherit_test,perfmon:beside_test fam17h:EPYC,pmu=on:perfmon:lifecycle_test,perfmon:inherit_test fam19h:EPYC,pmu=on,perfmon-v2=on,family=25,model=17:perfmon:beside_test kvm:EPYC,pmu=on,perfmon-v2=on,family=25,model=17,+svm,+npt:kvm:nested_perfmon lockup-core2:core2duo,pmu=on i386:Skylake-Client,pmu=on kasan:Skylake-Client,pmu=on:perfmon:inherit_test,perfmon:lifecycle_test}
export WATCHDOG_BOOTS=${SOAK_WATCHDOG_BOOTS:-skylake}
export GUEST_SETTINGS=${SOAK_SETTINGS:-PFM_INHERIT_CYCLES=10000 PFM_INHERIT_SWEEPS=10 PFM_RACE_ROUNDS=10000 PFM_STRESS_SECONDS=60 PFM_FOLLOW_RACE_ROUNDS=10000 PFM_BESIDE_ROUNDS=5000 testbed.timeout=2400}
export KASAN_SETTINGS=${SOAK_KASAN_SETTINGS:-PFM_INHERIT_CYCLES=2000 PFM_INHERIT_SWEEPS=2 PFM_RACE_ROUNDS=1000 PFM_STRESS_SECONDS=60 PFM_FOLLOW_RACE_ROUNDS=1000 testbed.timeout=2400}
export LOCKUP_MODES=${SOAK_LOCKUP_MODES:-lockup-core2:loop,120}
export GUEST_TIMEOUT=${SOAK_TIMEOUT:-3600}
export NESTED=1
export NESTED_ARGS=${SOAK_NESTED_ARGS-}
export NESTED_TIMEOUT=${SOAK_NESTED_TIMEOUT:-2300}
export I386_BOOT=${I386_BOOT:-1}
export FULL_BUILDS=${FULL_BUILDS:-1}
exec "$TESTBED/check.sh" series build pmu guest
