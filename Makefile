# SPDX-License-Identifier: GPL-2.0
#
# perfmon-lite: the patch series and its test bed.
#
#   make run          boot the patched kernel in QEMU and show perfmon at work
#   make check        every check: series, per-patch builds, guest tests
#   make soak         the long runs of the tests (minutes of races, stress
#                     and cycles where make check runs seconds): before a
#                     release, after a change of the switch, attach or
#                     interrupt paths
#   make check-quick  the series checks only (apply, git am, quilt, tree
#                     view, form, checkpatch): seconds
#   make tree         create the development tree (git, one commit per patch)
#   make export       regenerate the patches, series and tree view from it
#   make bench        perfmon against perf_events in guest instructions and
#                     MSR accesses per operation (testbed/bench/, not in check)
#
# Builds and logs go to $(PERFMON_CACHE), outside this repository.

PERFMON_CACHE ?= /var/cache/perfmon-lite
export PERFMON_CACHE

.PHONY: run check soak check-quick check-build check-pmu check-guest tree export bench help

help:
	@sed -n '3,17p' Makefile | sed 's/^# \{0,1\}//'

run:
	@testbed/run-demo.sh

check:
	@testbed/check.sh

soak:
	@testbed/soak.sh

check-quick:
	@testbed/check.sh series

check-build:
	@testbed/check.sh series build

check-pmu:
	@testbed/check.sh series build pmu

check-guest:
	@testbed/check.sh series build pmu guest

tree:
	@testbed/devtree.sh

export:
	@testbed/export.sh

bench:
	@testbed/bench/bench.sh
