#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""count-table.py LOGDIR: the exact counts of a guest stage, as a table.

The counting selftests log every exact count they check, matching or not:

    # count: <test>: <what> measured <n> expected <n>

This reads those lines from LOGDIR/guest-<label>.log (one log per emulated
model, in the order of GUEST_RUNS when given as further arguments, else
sorted) and prints a Markdown table with one row per collection, test and
count and one column per model: the value measured, or "measured != expected"
when they differ. The closing line says how many counts were exact.
"""
import os
import re
import sys

BEGIN = re.compile(r"PERFMON-KSFT-BEGIN (?P<coll>[^:\s]+):")
COUNT = re.compile(r"^# count: (?P<test>[^:]+): (?P<what>.*) measured "
                   r"(?P<m>\d+) expected (?P<e>\d+)\s*$")


def read_log(path):
    """{(collection, test, what): (measured, expected)} of one guest log."""
    counts = {}
    coll = "?"
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            m = BEGIN.search(line)
            if m:
                coll = m.group("coll")
                continue
            m = COUNT.match(line)
            if m:
                key = (coll, m.group("test"), m.group("what"))
                counts[key] = (int(m.group("m")), int(m.group("e")))
    return counts


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    logdir = sys.argv[1]
    labels = sys.argv[2:] or sorted(
        f[len("guest-"):-len(".log")] for f in os.listdir(logdir)
        if f.startswith("guest-") and f.endswith(".log"))
    models = []
    for label in labels:
        path = os.path.join(logdir, "guest-%s.log" % label)
        if os.path.exists(path):
            counts = read_log(path)
            if counts:
                models.append((label, counts))
    if not models:
        print("no counts in the guest logs of %s" % logdir)
        return 0
    keys = []
    for _, counts in models:
        for k in counts:
            if k not in keys:
                keys.append(k)
    exact = total = 0
    print("| collection | test | count | expected | " +
          " | ".join(label for label, _ in models) + " |")
    print("|---|---|---|---:|" + "---:|" * len(models))
    for key in keys:
        cells = []
        expected = set()
        for _, counts in models:
            if key not in counts:
                cells.append("-")
                continue
            m, e = counts[key]
            expected.add(e)
            total += 1
            if m == e:
                exact += 1
                cells.append(str(m))
            else:
                cells.append("**%d != %d**" % (m, e))
        exp = str(expected.pop()) if len(expected) == 1 else "(per model)"
        print("| %s | %s | %s | %s | %s |" % (key[0], key[1], key[2], exp,
                                              " | ".join(cells)))
    print()
    print("%d of %d counts exact on %d models" % (exact, total, len(models)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
