#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Where a process keeps some bytes, as a core dump would see it.

  memscan.py PID FILE...   for each FILE, look for its whole content in
      every readable mapping of process PID (through /proc/PID/mem; needs
      root or ptrace rights) and print "FILE dumped D left-out L": how many
      copies are in mappings a core dump includes, and how many in
      mappings marked MADV_DONTDUMP ("dd" in the VmFlags of
      /proc/PID/smaps).  Device mappings (an RDMA device's doorbells) are
      not read.
"""
import sys


def mappings(pid):
    """(start, end, path, dontdump) for each mapping of pid."""
    out = []
    cur = None
    with open("/proc/%s/smaps" % pid) as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and not head[0].endswith(":"):
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                cur = [lo, hi, head[5] if len(head) > 5 else "",
                       False, head[1].startswith("r")]
                out.append(cur)
            elif head[0] == "VmFlags:":
                cur[3] = "dd" in head[1:]
    return [(lo, hi, path, dd) for lo, hi, path, dd, readable in out
            if readable and not path.startswith("/dev/")]


def main():
    pid = sys.argv[1]
    pats = [(name, open(name, "rb").read()) for name in sys.argv[2:]]
    counts = {name: [0, 0] for name, _ in pats}
    with open("/proc/%s/mem" % pid, "rb", buffering=0) as mem:
        for lo, hi, path, dd in mappings(pid):
            try:
                mem.seek(lo)
                data = mem.read(hi - lo)
            except OSError:
                continue
            for name, pat in pats:
                counts[name][1 if dd else 0] += data.count(pat)
    for name, _ in pats:
        print("%s dumped %d left-out %d" % (name, *counts[name]))


main()
