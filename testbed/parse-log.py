#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judge a perfmon-lite test-bed serial log.

usage: parse-log.py [-q] LOG

Counts
  * KUnit results (KTAP printed by the kernel before /init runs): leaf test
    cases only, so suites and parameterized parents are not counted, their
    parameters are; "# SKIP" counts as skipped;
  * kselftest results printed between the guest/init markers
      PERFMON-KSFT-BEGIN coll:test ... PERFMON-KSFT-END coll:test rc=N
    leaf "ok"/"not ok" lines, "# SKIP" as skipped; a binary that exits
    with a failure code but printed no "not ok" counts as one failure; a
    "1..N" plan with fewer results counts the missing ones as failures;
and fails on kernel warnings/oopses/lockdep/RCU reports, kmemleak
"unreferenced object"s, sanitizer reports (KASAN "BUG: KASAN: ...",
"KASAN: null-ptr-deref ..."; UBSAN "UBSAN: ..."; KFENCE "BUG: KFENCE:
..."), and a guest that never printed
"PERFMON-GUEST: done" (timeout, panic, hang).

A guest that prints "PERFMON-EXPECT-HARD-LOCKUP cpu N" (the lockup boot)
then expects the hard lockup detector's report for CPU N as the next
kernel report: it passes as one result, and what follows (the report's
backtraces, the panic) is not judged; without it the run fails.

Prints one line per test result and per offending log line, then exactly
one summary line "N passed, N failed, N skipped" (every offending log line
and a missing done marker each count as one failure).  Exit status 0 only
if nothing failed, 1 otherwise, 2 on usage errors.
"""

import re
import sys

TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\]\s?")
RESULT = re.compile(r"^(?P<ind>\s*)(?P<not>not )?ok\b(?:\s+(?P<num>\d+))?"
                    r"(?:\s*-?\s*(?P<desc>.*?))?\s*(?:#\s*(?P<dir>.*))?$")
PLAN = re.compile(r"^(?P<ind>\s*)1\.\.(?P<n>\d+)\s*(?:#\s*(?P<dir>.*))?$")
KTAP_START = re.compile(r"^\s*K?TAP version \d+")
SUBTEST = re.compile(r"^(?P<ind>\s*)# Subtest: (?P<name>.*)$")
KSFT_BEGIN = re.compile(r"PERFMON-KSFT-BEGIN (?P<name>\S+)")
KSFT_END = re.compile(r"PERFMON-KSFT-END (?P<name>\S+) rc=(?P<rc>-?\d+)(?P<to> timeout)?")
GUEST_START = "PERFMON-GUEST: start"
GUEST_DONE = "PERFMON-GUEST: done"
EXPECT_LOCKUP = re.compile(r"PERFMON-EXPECT-HARD-LOCKUP cpu (?P<cpu>\d+)")
HARD_LOCKUP = re.compile(r"Watchdog detected hard LOCKUP on cpu (?P<cpu>\d+)")

# The kernel's note of a user-space fault, not a kernel problem.
USER_TRAP = re.compile(r"^traps: \S+\[\d+\] (general protection fault|trap) .* in \S+")

# Kernel reports that fail the run wherever they appear.
KERNEL_BAD = [
    re.compile(p) for p in (
        r"WARNING:",
        r"BUG:",
        r"\bOops\b",
        r"general protection fault",
        r"Kernel panic",
        r"possible circular locking",
        r"inconsistent lock state",
        r"possible recursive locking",
        r"suspicious RCU usage",
        r"INFO: trying to register non-static key",
        r"sleeping function called from invalid context",
        r"DEBUG_LOCKS_WARN_ON",
        r"unreferenced object 0x",
        # the sanitizer kernel (kasan.config): "BUG: KASAN: slab-use-
        # after-free in f+0x..", the "KASAN: null-ptr-deref in range" line of
        # a general protection fault, "UBSAN: shift-out-of-bounds in f.c:N",
        # "BUG: KFENCE: use-after-free read in f+0x.."; their init lines
        # are lower case ("kasan: KernelAddressSanitizer initialized",
        # "kfence: initialized")
        r"BUG: KASAN:",
        r"\bKASAN: ",
        r"UBSAN:",
        r"BUG: KFENCE:",
        r"\bKFENCE: ",
        r"detected stall",
        r"blocked for more than \d+ seconds",
        r"ODEBUG:",
        r"list_(add|del) corruption",
        r"kernel BUG at",
        r"Watchdog detected hard LOCKUP",
        # an NMI no handler claimed: a PMU interrupt perfmon failed to own
        r"NMI received for unknown reason",
        r"Dazed and confused",
        # perf_events at boot, finding an event select counting: a kernel
        # before this one (kexec) left a counter on
        r"Broken BIOS detected",
        r"corrupted hw-PMU resources",
        r"PERFMON-HOST: timeout",
        r"PERFMON-GUEST: ERROR",
    )
]


def directive(d):
    """Map a TAP directive to 'skip' / 'xfail' / None."""
    if not d:
        return None
    d = d.strip().upper()
    if d.startswith("SKIP"):
        return "skip"
    if d.startswith("TODO") or d.startswith("XFAIL"):
        return "xfail"
    return None


class TapCounter:
    """Count leaf results of one (possibly nested) TAP/KTAP stream.

    Nesting is by indentation.  A result line closes the (sub)test at its
    indentation; it is a leaf iff no deeper result line came since the
    previous result at the same or a shallower level.
    """

    def __init__(self, kind, prefix, report):
        self.kind = kind
        self.prefix = prefix
        self.report = report
        self.child_seen = {}    # indent -> a deeper result was seen
        self.child_failed = {}  # indent -> a deeper leaf failed
        self.names = {}         # indent -> "# Subtest:" name at that indent
        self.top_indent = None
        self.top_results = 0
        self.plan = None
        self.plan_dir = None
        self.failed_lines = 0
        self.results = 0

    def line(self, text):
        m = SUBTEST.match(text)
        if m:
            self.names[len(m.group("ind"))] = m.group("name").strip()
            return
        m = PLAN.match(text)
        if m:
            ind = len(m.group("ind"))
            if self.top_indent is None or ind <= self.top_indent:
                if self.plan is None:
                    self.top_indent = ind
                    self.plan = int(m.group("n"))
                    self.plan_dir = m.group("dir")
            return
        m = RESULT.match(text)
        if not m:
            return
        ind = len(m.group("ind"))
        if self.top_indent is None:
            self.top_indent = ind
        failed = m.group("not") is not None
        kind = directive(m.group("dir"))
        desc = (m.group("desc") or "").strip() or "#%s" % (m.group("num") or "?")
        leaf = not self.child_seen.get(ind, False)
        kids_failed = self.child_failed.get(ind, False)
        path = [self.names[i] for i in sorted(self.names)
                if i <= ind and self.names[i] != desc]
        name = ".".join(path + [desc])
        self.results += 1
        if ind == self.top_indent:
            self.top_results += 1
        if leaf:
            if kind == "skip":
                self.report("SKIP", self.kind, self.prefix + name, m.group("dir"))
            elif failed and kind != "xfail":
                self.report("FAIL", self.kind, self.prefix + name)
                self.failed_lines += 1
            else:
                self.report("PASS", self.kind, self.prefix + name)
        elif failed and kind not in ("skip", "xfail") and not kids_failed:
            # A parent that failed although none of its leaves did
            # (suite init/exit failure, missing results...).
            self.report("FAIL", self.kind, self.prefix + name,
                        "not ok without a failed subtest")
            self.failed_lines += 1
        # Close this level, tell the ancestors.
        for i in list(self.child_seen):
            if i >= ind:
                del self.child_seen[i]
        for i in list(self.child_failed):
            if i >= ind:
                del self.child_failed[i]
        for i in list(self.names):
            if i > ind:
                del self.names[i]
        leaf_failed = failed and kind not in ("skip", "xfail")
        for i in range(0, ind):
            self.child_seen[i] = True
            if leaf_failed or kids_failed:
                self.child_failed[i] = True


def main(argv):
    quiet = False
    args = argv[1:]
    if args and args[0] == "-q":
        quiet = True
        args = args[1:]
    if len(args) != 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        with open(args[0], "rb") as fh:
            raw = fh.read().decode("utf-8", "replace")
    except OSError as e:
        print("parse-log: %s" % e, file=sys.stderr)
        return 2

    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}

    def report(status, kind, name, why=None):
        counts[status] += 1
        if not quiet or status == "FAIL":
            print("%-4s %-5s %s%s" % (status, kind, name, " (%s)" % why.strip() if why else ""))

    lines = [TIMESTAMP.sub("", l.rstrip("\r")) for l in raw.replace("\r\n", "\n").split("\n")]

    kunit = None
    guest_started = False
    done = False
    ksft = None          # (name, TapCounter, begin line number)
    bad_lines = []
    expect_lockup = None  # the CPU whose hard lockup must be reported
    lockup_seen = False

    for no, text in enumerate(lines, 1):
        stripped = text.strip()

        if expect_lockup is not None:
            m = HARD_LOCKUP.search(text)
            if m and m.group("cpu") == expect_lockup:
                report("PASS", "log", "hard lockup on cpu %s reported" % expect_lockup)
                lockup_seen = True
                break
        m = EXPECT_LOCKUP.search(text)
        if m and expect_lockup is None:
            expect_lockup = m.group("cpu")
            continue

        # Offending kernel lines, anywhere.  A selftest's own "# ..." TAP
        # diagnostics are not kernel messages, nor are the kernel's notes of
        # a user-space fault ("traps: prog[pid] general protection fault
        # ip:... in prog"), which a test may provoke on purpose (RDPMC
        # without CR4.PCE): the test itself says whether that was expected.
        if not (ksft is not None and stripped.startswith("#")) and \
                not USER_TRAP.match(stripped):
            for pat in KERNEL_BAD:
                if pat.search(text):
                    bad_lines.append((no, stripped))
                    break

        if GUEST_START in text:
            guest_started = True
            continue
        if GUEST_DONE in text:
            done = True
            continue

        m = KSFT_BEGIN.search(text)
        if m:
            if ksft is not None:
                report("FAIL", "ksft", ksft[0], "no end marker")
            ksft = (m.group("name"), TapCounter("ksft", m.group("name") + ": ", report), no)
            continue
        m = KSFT_END.search(text)
        if m and ksft is not None:
            name, tc, _ = ksft
            rc = int(m.group("rc"))
            timeout = m.group("to") is not None
            if tc.plan is not None and tc.plan_dir and directive(tc.plan_dir) == "skip" and tc.results == 0:
                report("SKIP", "ksft", name, tc.plan_dir)
            elif tc.plan is not None and tc.top_results < tc.plan:
                for i in range(tc.top_results + 1, tc.plan + 1):
                    report("FAIL", "ksft", "%s: result %d" % (name, i),
                           "missing: planned %d, got %d, rc=%d%s" %
                           (tc.plan, tc.top_results, rc, ", timeout" if timeout else ""))
            elif timeout:
                report("FAIL", "ksft", name, "timeout")
            if tc.results == 0 and not (tc.plan is not None and tc.plan > 0):
                if tc.plan_dir is None or directive(tc.plan_dir) != "skip":
                    if rc == 4:
                        report("SKIP", "ksft", name, "exit code 4, no TAP")
                    elif rc == 0 and not timeout:
                        report("PASS", "ksft", name, "exit code 0, no TAP")
                    elif not timeout:
                        report("FAIL", "ksft", name, "exit code %d, no TAP" % rc)
            elif rc not in (0, 4) and tc.failed_lines == 0 and not timeout \
                    and not (tc.plan is not None and tc.top_results < tc.plan):
                report("FAIL", "ksft", name, "exit code %d but no 'not ok'" % rc)
            ksft = None
            continue
        if ksft is not None:
            ksft[1].line(text)
            continue

        if not guest_started:
            if kunit is None:
                if KTAP_START.match(text):
                    kunit = TapCounter("kunit", "", report)
                continue
            kunit.line(text)

    if ksft is not None:
        report("FAIL", "ksft", ksft[0], "no end marker (guest died in the test?)")
    if kunit is not None and kunit.plan is not None and kunit.top_results < kunit.plan:
        report("FAIL", "kunit", "(top level)", "planned %d suites, %d reported" %
               (kunit.plan, kunit.top_results))

    for no, text in bad_lines:
        counts["FAIL"] += 1
        print("FAIL log   line %d: %s" % (no, text))
    if expect_lockup is not None and not lockup_seen:
        counts["FAIL"] += 1
        print("FAIL log   no report of the hard lockup of cpu %s" % expect_lockup)
    if not done and not lockup_seen:
        counts["FAIL"] += 1
        print("FAIL guest no '%s' marker (timeout, panic or hang)" % GUEST_DONE)

    print("%d passed, %d failed, %d skipped" % (counts["PASS"], counts["FAIL"], counts["SKIP"]))
    return 0 if counts["FAIL"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
