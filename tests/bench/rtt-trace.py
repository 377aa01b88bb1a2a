#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Read `perf script` output of raw_syscalls (every process's system calls
with kernel timestamps) taken while rr ran round trips through a tunnel
(client rr -> daemon A -> RDMA -> daemon B -> echo target and back) and
print, as Markdown, the median time of each hop and each process's system
calls per round trip.  See tests/bench/rtt-trace."""

import argparse
import collections
import re
import statistics
import sys

NAMES = {0: "read", 1: "write", 3: "close", 7: "poll", 16: "ioctl",
         19: "readv", 20: "writev", 23: "select", 39: "getpid",
         44: "sendto", 45: "recvfrom", 46: "sendmsg", 47: "recvmsg",
         202: "futex", 228: "clock_gettime", 232: "epoll_wait",
         233: "epoll_ctl", 270: "pselect6", 271: "ppoll", 281: "epoll_pwait"}
READS = {"read", "readv", "recvfrom", "recvmsg"}
WRITES = {"write", "writev", "sendto", "sendmsg"}
WAITS = {"epoll_wait", "epoll_pwait", "select", "pselect6", "poll", "ppoll"}

LINE = re.compile(r"^\s*(?P<comm>\S.*?)\s+(?P<pid>\d+)/(?P<tid>\d+)\s+"
                  r"(?P<time>\d+\.\d+):\s+raw_syscalls:sys_(?P<ev>enter|exit):"
                  r"\s+NR (?P<nr>-?\d+) (?P<rest>.*)$")


class Call:
    __slots__ = ("nr", "name", "args", "t0", "t1", "ret", "tid")


def parse(path):
    """Per pid, the completed system calls of all its threads (a daemon's
    loops run in worker threads), in the order they started."""
    open_calls = {}
    calls = collections.defaultdict(list)
    comm = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            pid, tid = int(m["pid"]), int(m["tid"])
            t, nr = float(m["time"]), int(m["nr"])
            if pid == tid:
                comm[pid] = m["comm"].strip()
            if m["ev"] == "enter":
                c = Call()
                c.nr, c.name, c.t0 = nr, NAMES.get(nr, "nr%d" % nr), t
                c.tid = tid
                c.args = [int(a, 16) for a in
                          re.findall(r"([0-9a-f]+)", m["rest"])[:3]]
                open_calls[tid] = c
            else:
                c = open_calls.pop(tid, None)
                if c is None or c.nr != nr:
                    continue
                ret = re.search(r"=\s*(-?\d+)", m["rest"])
                c.t1, c.ret = t, int(ret.group(1)) if ret else 0
                calls[pid].append(c)
    for seq in calls.values():
        seq.sort(key=lambda c: c.t0)
    return calls, comm


def fd_kinds(path):
    kinds = collections.defaultdict(dict)
    with open(path) as f:
        for line in f:
            p = line.split(None, 2)
            if len(p) == 3:
                kinds[int(p[0])][int(p[1])] = p[2].strip()
    return kinds


def stream_fd(calls, size, kinds):
    """The socket a daemon moves the round trips' bytes through: the one
    most of its reads and writes of exactly ${size} bytes went to."""
    cnt = collections.Counter(c.args[0] for c in calls if c.args and
                              (c.name in READS or c.name in WRITES) and
                              c.ret == size)
    return cnt.most_common(1)[0][0] if cnt else None


def by_stream(C, A, B, size, kinds, skip):
    """Hops keyed by the round trips' own sockets in each daemon, so they
    hold beside bulk streams: client write -> A reads it -> B writes it
    to the target -> B reads the answer -> A writes it to the client ->
    the client has it.  Returns {hop: [us, ...]}."""
    fa, fb = stream_fd(A, size, kinds), stream_fd(B, size, kinds)
    if fa is None or fb is None:
        return None

    def on(fd, names):
        return lambda c: (c.name in names and c.args and c.args[0] == fd
                          and c.ret > 0)
    starts = [c for c in C if c.name in WRITES and c.ret > 0]
    hops = collections.OrderedDict((k, []) for k in (
        "client write -> A has read it",
        "A read -> B writes it to the target (A's turn, post, fabric, "
        "B's turn)",
        "B's write -> B has read the answer (target and its sockets)",
        "B read -> A writes it to the client (B's turn, post, fabric, "
        "A's turn)",
        "A's write -> client has the response"))
    for i in range(skip, len(starts) - 1):
        t0, tend = starts[i].t0, starts[i + 1].t0
        walk(hops, C, t0, tend, ((A, on(fa, READS), "t1"),
                                 (B, on(fb, WRITES), "t0"),
                                 (B, on(fb, READS), "t1"),
                                 (A, on(fa, WRITES), "t0")))
    return hops


def walk(hops, C, t0, tend, steps):
    """One round trip, from the client's write at ${t0} to its next at
    ${tend}: the first call of each step after the one before (its time
    ${key}), then the client's last read; each gap goes to its hop.
    Returns whether every step was found in the window."""
    m = [t0]
    for seq, pred, key in steps:
        c = first(seq, m[-1], pred, key)
        if c is None or getattr(c, key) >= tend:
            return False
        m.append(getattr(c, key))
    last = [c for c in C if c.name in READS and t0 <= c.t1 < tend]
    if not last:
        return False
    m.append(last[-1].t1)
    for k, (x, y) in zip(hops, zip(m, m[1:])):
        hops[k].append((y - x) * 1e6)
    return True


def first(calls, since, pred, key="t1"):
    """The first call with pred(c) whose time ${key} is >= since."""
    for c in calls:
        if getattr(c, key) >= since and pred(c):
            return c
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace", required=True)
    ap.add_argument("--fds", required=True)
    ap.add_argument("--client", default="rr")
    ap.add_argument("--a", type=int, required=True)
    ap.add_argument("--b", type=int, required=True)
    ap.add_argument("--skip", type=int, default=10)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--timeline", action="store_true",
                    help="print one round trip's system calls, in order")
    o = ap.parse_args()
    calls, comm = parse(o.trace)
    kinds = fd_kinds(o.fds)
    cl = [p for p in calls if comm.get(p) == o.client]
    echo = [p for p in calls if comm.get(p) == "socat"]
    if not cl:
        sys.exit("rtt-trace: no client process in the trace")
    # The round trips' client: the rr that wrote ${size} bytes most often
    # (bulk streams are rr processes too).
    cl = max(cl, key=lambda p: sum(1 for c in calls[p] if c.name in WRITES
                                   and c.ret == o.size))
    A, B, C = calls[o.a], calls[o.b], calls[cl]
    coarse = by_stream(C, A, B, o.size, kinds, o.skip)
    if coarse and coarse[next(iter(coarse))]:
        n = len(coarse[next(iter(coarse))])
        print("By the round trips' own sockets (%d round trips; holds "
              "beside bulk streams):\n" % n)
        # The slowest tenth: the round trips whose hops add up to their
        # 90th percentile or more (walk keeps the hops' lists aligned),
        # and the mean of each hop over them: where the tail waits.
        sums = [sum(v[i] for v in coarse.values()) for i in range(n)]
        cut = sorted(sums)[int(n * 0.9)]
        slow = [i for i in range(n) if sums[i] >= cut]
        print("| hop | median us | p90 us | share of median | "
              "slowest tenth's mean us | its share |")
        print("|---|---:|---:|---:|---:|---:|")
        tot = sum(statistics.median(v) for v in coarse.values())
        stot = sum(sums[i] for i in slow) / len(slow)
        for k, v in coarse.items():
            sm = sum(v[i] for i in slow) / len(slow)
            v = sorted(v)
            print("| %s | %.0f | %.0f | %.0f%% | %.0f | %.0f%% |" % (
                k, statistics.median(v), v[int(len(v) * 0.9)],
                100 * statistics.median(v) / tot, sm, 100 * sm / stot))
        print("| **round trip (sum of hops)** | **%.0f** | %.0f | | "
              "**%.0f** | |" % (statistics.median(sums), cut, stot))
        print()
    if not echo:
        sys.exit("rtt-trace: no echo process in the trace")
    echo = max(echo, key=lambda p: sum(1 for c in calls[p]
                                       if c.name in READS and c.ret == o.size))
    E = calls[echo]

    def uverbs(pid):
        return {fd for fd, k in kinds[pid].items() if "uverbs" in k}

    ua, ub = uverbs(o.a), uverbs(o.b)

    def post(u):
        return lambda c: c.name == "write" and c.args and c.args[0] in u

    def sock_write(u):
        return lambda c: (c.name in WRITES and c.args and
                          c.args[0] not in u and c.ret > 0)

    def woke(c):
        return c.name in WAITS and c.ret > 0

    def got(c):
        return c.name in READS and c.ret > 0

    starts = [c for c in C if c.name in WRITES and c.ret > 0]
    hops = collections.OrderedDict((k, []) for k in (
        "client write -> daemon A wakes",
        "A: reads the socket, posts the WRITE",
        "fabric A -> B: post to B's wakeup",
        "B: completion -> write to the target",
        "target socket -> echo reads",
        "echo: read -> write back",
        "echo write -> daemon B wakes",
        "B: reads the socket, posts the WRITE",
        "fabric B -> A: post to A's wakeup",
        "A: completion -> write to the client",
        "A's write -> client has the response"))
    windows = []
    for i in range(o.skip, len(starts) - 1):
        t0, tend = starts[i].t0, starts[i + 1].t0
        steps = [(A, woke, "t1"), (A, post(ua), "t0"), (B, woke, "t1"),
                 (B, sock_write(ub), "t0"), (E, got, "t1"),
                 (E, sock_write(set()), "t0"), (B, woke, "t1"),
                 (B, post(ub), "t0"), (A, woke, "t1"),
                 (A, sock_write(ua), "t0")]
        if walk(hops, C, t0, tend, steps):
            windows.append((t0, tend))
    if not windows:
        sys.exit("rtt-trace: no round trip found in the trace hop by hop "
                 "(beside bulk streams, the daemons' posts and wakeups "
                 "are not the round trips' own: read the table above)")
    if o.timeline:
        t0, tend = windows[len(windows) // 2]
        print("One round trip's system calls (us from the request):\n")
        print("| process | thread | call | fd | enter | exit | returned |")
        print("|---|---:|---|---:|---:|---:|---:|")
        rows = []
        for label, seq in (("client", C), ("A", A), ("B", B), ("echo", E)):
            for c in seq:
                if t0 <= c.t0 < tend:
                    rows.append((c.t0, label, c))
        for _, label, c in sorted(rows, key=lambda r: r[0]):
            print("| %s | %d | %s | %s | %.0f | %.0f | %d |" % (
                label, c.tid, c.name, c.args[0] if c.args else "",
                (c.t0 - t0) * 1e6, (c.t1 - t0) * 1e6, c.ret))
        print()
    n = len(windows)
    total = [sum(v[i] for v in hops.values()) for i in range(n)]
    print("%d round trips traced (the first %d skipped)\n" % (n, o.skip))
    print("| hop | median us | share |")
    print("|---|---:|---:|")
    med_total = statistics.median(total)
    for k, v in hops.items():
        med = statistics.median(v)
        print("| %s | %.0f | %.0f%% |" % (k, med, 100 * med / med_total))
    print("| **round trip (sum of hops)** | **%.0f** | |" % med_total)
    print()
    print("System calls per round trip (counted between the first and the "
          "last traced window):\n")
    print("| process | calls | by name |")
    print("|---|---:|---|")
    lo, hi = windows[0][0], windows[-1][1]
    # Per round trip: those that started in the range, complete or not.
    n = sum(1 for c in starts if lo <= c.t0 < hi)
    for label, seq, u in (("client (rr)", C, set()),
                          ("daemon A (client side)", A, ua),
                          ("daemon B (target side)", B, ub),
                          ("echo target (socat)", E, set())):
        cnt = collections.Counter()
        for c in seq:
            if lo <= c.t0 < hi:
                name = c.name
                if c.args and c.args[0] in u:
                    name += "(uverbs,%d)" % c.args[2] if len(c.args) > 2 \
                        else "(uverbs)"
                cnt[name] += 1
        tot = sum(cnt.values())
        by = ", ".join("%s %.1f" % (k, v / n) for k, v in cnt.most_common())
        print("| %s | %.1f | %s |" % (label, tot / n, by))


main()
