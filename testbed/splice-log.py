#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""splice-log.py OLD NEW OUT [PROGRAM...]: the serial log of a boot that ran only the
test programs whose binaries changed (NEW), completed with the sections of
the other programs from the last passing boot with the same kernel, QEMU,
initramfs scripts and settings (OLD), for parse-log.py to judge whole.

A section is a program's output from its PERFMON-KSFT-BEGIN line to its
PERFMON-KSFT-END line (guest/init), and what the kernel printed after it
until the next program began. OUT has NEW's boot (up to its first
section) and NEW's end (after its last section: kmemleak, status); in
between, every program of OLD in OLD's order, NEW's section where NEW ran
it, OLD's otherwise (after a line that says so), then the programs only
NEW ran. With PROGRAMs ("coll:test"), OLD's sections of the others are
left out."""
import re
import sys

BEGIN = re.compile(r"PERFMON-KSFT-BEGIN (\S+)")
END = re.compile(r"PERFMON-KSFT-END (\S+)")


def split(path):
    head, tail, sections, order = [], [], {}, []
    cur = None
    with open(path, errors="replace") as f:
        lines = f.readlines()
    last_end = max((i for i, l in enumerate(lines) if END.search(l)), default=-1)
    for i, line in enumerate(lines):
        m = BEGIN.search(line)
        if cur is None and m:
            cur = m.group(1)
            order.append(cur)
            sections[cur] = []
        if cur is not None:
            sections[cur].append(line)
            m = END.search(line)
            if m and m.group(1) == cur:
                cur = None
        elif i > last_end >= 0:
            tail.append(line)
        elif order:
            # between two programs: the kernel's messages of the boot
            sections[order[-1]].append(line)
        else:
            head.append(line)
    return head, sections, order, tail


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__ + "\n")
        return 2
    _, old_s, old_order, _ = split(argv[1])
    if len(argv) > 4:
        old_order = [n for n in old_order if n in argv[4:]]
    head, new_s, new_order, tail = split(argv[2])
    with open(argv[3], "w") as out:
        out.writelines(head)
        for name in old_order + [n for n in new_order if n not in old_s]:
            if name in new_s:
                out.writelines(new_s[name])
            else:
                out.write("PERFMON-HOST: %s: its binary is unchanged, its "
                          "section is that of the last passing boot\n" % name)
                out.writelines(old_s[name])
        out.writelines(tail)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
