#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""TCP ends for the fault tests: what plain socat cannot do.

  tcp-tool.py server PORT LOG        serve on 127.0.0.1:PORT; each connection
      reads a first line and acts on it:
        "echo"   echo everything back until EOF
        "stall"  never read again (a target that stops reading)
        "sink"   read to EOF, then answer the byte count
        "reset"  read 1000 bytes, then close with a reset (SO_LINGER 0)
        "record" read to the end and append "clean N" (EOF) or "reset N"
                 (connection reset) to LOG
  tcp-tool.py deaf PORT              listen on 127.0.0.1:PORT and never
      accept: connections complete, and what they send only fills buffers
  tcp-tool.py unix-deaf PATH         listen on Unix socket PATH and never
      accept, with the backlog full (connect() there gets EAGAIN); print
      "full" once it is
  tcp-tool.py reset-client PORT      connect, say "record", send 64 KiB,
      then close with a reset
  tcp-tool.py probe PORT FIRSTLINE   connect, send FIRSTLINE and 2000
      bytes, shut down writing, then read: print "reset" if the connection is reset, "clean"
      on a clean end of stream
  tcp-tool.py burst PORT N SECONDS   open N connections at once, each says
      "echo" and a line; print "served S refused R hung H"
  tcp-tool.py soak PORT SECONDS LONG SHORT [SEED]
      for SECONDS, keep LONG long "echo" streams sending pseudo-random data
      and SHORT short ones in flight (each sends 0 to 8 KiB, reads the
      echo back and closes; a new one starts as each ends), checking every
      byte echoed; then end the long ones with a half-close and wait for
      their last bytes.  Any refusal, reset, early end, stray or wrong
      byte, or 30 s without progress is a failure; at 100 it winds down.
      Print the first 20 failures, one per line, then "short S long L
      failed F sent B received R" (B and R count every byte on the client
      sockets, "echo" lines included); exit 1 on any failure
  tcp-tool.py rr PORT N              over one connection to a plain echo
      (no first line), N round trips, each of 3000 random bytes and,
      1 to 30 ms later, 100 more (a WRITE's worth, then a DATA record's
      worth), read back and checked; print "rr N" and exit 0, or say
      which one failed, exit 1
"""
import errno
import os
import random
import selectors
import socket
import struct
import sys
import time

LINGER0 = struct.pack("ii", 1, 0)


def reset_close(s):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER0)
    s.close()


def server(port, log):
    sel = selectors.DefaultSelector()
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(1024)
    ls.setblocking(False)
    sel.register(ls, selectors.EVENT_READ, None)
    # per connection: [mode, first-line buffer, byte count, pending output]
    while True:
        for key, _ in sel.select():
            if key.data is None:
                try:
                    c, _ = ls.accept()
                except BlockingIOError:
                    continue
                c.setblocking(False)
                sel.register(c, selectors.EVENT_READ, [None, b"", 0, b""])
                continue
            c, st = key.fileobj, key.data
            try:
                data = c.recv(65536)
            except ConnectionResetError:
                if st[0] == "record":
                    with open(log, "a") as f:
                        f.write("reset %d\n" % st[2])
                sel.unregister(c)
                c.close()
                continue
            except BlockingIOError:
                continue
            # Only an empty read is the end: what follows a first line
            # that came alone is empty too.
            eof = not data
            if st[0] is None:
                st[1] += data
                if b"\n" not in st[1] and data:
                    continue
                line, _, data = st[1].partition(b"\n")
                st[0] = line.decode(errors="replace").strip()
                if st[0] == "stall":
                    sel.unregister(c)   # keep it open, never read
                    stalled.append(c)
                    continue
            st[2] += len(data)
            if st[0] == "echo" and data:
                c.setblocking(True)
                try:
                    c.sendall(data)
                except OSError:
                    # The tunnel reset this one: it alone ends (an
                    # uncaught error would end every stream of the run).
                    sel.unregister(c)
                    c.close()
                    continue
                c.setblocking(False)
            elif st[0] == "reset" and st[2] >= 1000:
                sel.unregister(c)
                reset_close(c)
                continue
            if eof:
                if st[0] == "record":
                    with open(log, "a") as f:
                        f.write("clean %d\n" % st[2])
                elif st[0] == "sink":
                    c.setblocking(True)
                    try:
                        c.sendall(b"%d\n" % st[2])
                    except OSError:
                        pass
                sel.unregister(c)
                c.close()


def reset_client(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"record\n" + b"x" * 65536)
    time.sleep(1)
    reset_close(s)


def probe(port, first):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(first.encode() + b"\n" + b"y" * 2000)
    s.shutdown(socket.SHUT_WR)
    s.settimeout(60)
    try:
        while s.recv(65536):
            pass
        print("clean")
    except ConnectionResetError:
        print("reset")


def burst(port, n, secs):
    sel = selectors.DefaultSelector()
    for i in range(n):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        sel.register(s, selectors.EVENT_WRITE, [i, b"", False])
    served = refused = 0
    deadline = time.time() + secs
    while sel.get_map() and time.time() < deadline:
        for key, ev in sel.select(1):
            s, st = key.fileobj, key.data
            if ev & selectors.EVENT_WRITE:
                try:
                    s.send(b"echo\nping %d\n" % st[0])
                except OSError:
                    refused += 1
                    sel.unregister(s)
                    s.close()
                    continue
                sel.modify(s, selectors.EVENT_READ, st)
                continue
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            st[1] += data
            if st[1] == b"ping %d\n" % st[0]:
                served += 1
            elif data:
                continue
            else:
                refused += 1
            sel.unregister(s)
            s.close()
    print("served %d refused %d hung %d" % (served, refused,
                                            len(sel.get_map())))


class Soak:
    """One stream of the soak: what is left to send, what must come back."""

    def __init__(self, kind, sock, payload=b""):
        self.kind = kind            # "long", "shut" or "close" (see soak())
        self.sock = sock
        self.connected = False
        self.out = b"echo\n" + payload
        self.expect = bytearray(payload)    # sent or queued, not yet back
        self.shut = False           # our side half-closed
        self.last = time.monotonic()        # last progress, for hangs
        self.events = 0


SOAK_POOL = 1 << 20         # long streams send slices of this random block
SOAK_WINDOW = 256 << 10     # a long stream's bytes in flight, at most
SOAK_HANG = 30              # seconds without progress: a hang


def soak(port, secs, nlong, nshort, seed):
    rnd = random.Random(seed)
    pool = rnd.randbytes(SOAK_POOL)
    sel = selectors.DefaultSelector()
    fails = []
    done = {"long": 0, "short": 0}
    sent = received = 0

    def start(kind):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        # Short streams: log-uniform sizes up to 8 KiB; half half-close
        # and read to the end (so nothing at all is a case), half close
        # once the echo is in (so at least a byte must come back).
        payload = b""
        if kind == "short":
            kind = rnd.choice(("shut", "close"))
            n = int(2 ** rnd.uniform(0, 13)) - (kind == "shut")
            off = rnd.randrange(SOAK_POOL - n)
            payload = pool[off:off + n]
        st = Soak(kind, s, payload)
        watch(st)

    def watch(st):
        ev = selectors.EVENT_READ if st.connected else 0
        if not st.connected or st.out or (
                st.kind == "long" and not stopping and
                len(st.expect) < SOAK_WINDOW):
            ev |= selectors.EVENT_WRITE
        if ev != st.events:
            if st.events:
                sel.modify(st.sock, ev, st)
            else:
                sel.register(st.sock, ev, st)
            st.events = ev

    def shut(st):
        # A "shut" stream half-closes once its bytes are out; a long one
        # once the time is up and its last bytes are out.
        if st.connected and not st.out and not st.shut and (
                st.kind == "shut" or st.kind == "long" and stopping):
            st.sock.shutdown(socket.SHUT_WR)
            st.shut = True

    def finish(st, why=None):
        nonlocal end
        sel.unregister(st.sock)
        st.sock.close()
        if why is None:
            done["long" if st.kind == "long" else "short"] += 1
        else:
            fails.append("%s stream: %s (%d bytes still expected)" %
                         (st.kind, why, len(st.expect)))
            if len(fails) >= 100:
                end = 0         # enough: no new streams, wind down
        if st.kind != "long" and not stopping:
            start("short")

    stopping = False
    end = time.monotonic() + secs
    for _ in range(nlong):
        start("long")
    for _ in range(nshort):
        start("short")
    while sel.get_map():
        now = time.monotonic()
        if not stopping and now >= end:
            stopping = True
            for key in list(sel.get_map().values()):
                try:
                    shut(key.data)
                except OSError as e:
                    finish(key.data, "%s" % e)
                    continue
                watch(key.data)
        for key, ev in sel.select(1):
            now = time.monotonic()
            st = key.data
            if not st.connected:
                err = st.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    finish(st, "connect: " + errno.errorcode.get(err, str(err)))
                    continue
                st.connected = True
            try:
                if ev & selectors.EVENT_WRITE:
                    if not st.out and st.kind == "long" and not stopping:
                        n = rnd.randint(1, 65536)
                        n = min(n, SOAK_WINDOW - len(st.expect))
                        off = rnd.randrange(SOAK_POOL - n)
                        st.out = pool[off:off + n]
                        st.expect += st.out
                    if st.out:
                        n = st.sock.send(st.out)
                        st.out = st.out[n:]
                        sent += n
                        st.last = now
                if ev & selectors.EVENT_READ:
                    data = st.sock.recv(65536)
                    if data:
                        received += len(data)
                        st.last = now
                        if st.expect[:len(data)] != data:
                            finish(st, "echo differs from what was sent "
                                   "(%d bytes read)" % len(data))
                            continue
                        del st.expect[:len(data)]
                    elif st.expect or st.out:
                        finish(st, "early end of stream")
                        continue
                    else:
                        finish(st)
                        continue
                shut(st)
            except OSError as e:
                finish(st, "%s" % e)
                continue
            if st.kind == "close" and not st.out and not st.expect:
                finish(st)
                continue
            watch(st)
        now = time.monotonic()
        for key in list(sel.get_map().values()):
            if now - key.data.last > SOAK_HANG:
                finish(key.data, "no progress for %d s" % SOAK_HANG)
    for f in fails[:20]:
        print(f)
    print("short %d long %d failed %d sent %d received %d" % (
        done["short"], done["long"], len(fails), sent, received))
    return 1 if fails else 0


def rr(port, n):
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for i in range(n):
        msg = os.urandom(3100)
        s.sendall(msg[:3000])
        time.sleep(random.uniform(0.001, 0.03))
        s.sendall(msg[3000:])
        got = b""
        while len(got) < len(msg):
            c = s.recv(len(msg) - len(got))
            if not c:
                sys.exit("rr: round trip %d: the stream ended after %d "
                         "bytes" % (i, len(got)))
            got += c
        if got != msg:
            sys.exit("rr: round trip %d: wrong bytes back" % i)
    s.close()
    print("rr %d" % n)


stalled = []
if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "deaf":
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", int(sys.argv[2])))
        ls.listen(16)
        while True:
            time.sleep(3600)
    elif cmd == "unix-deaf":
        ls = socket.socket(socket.AF_UNIX)
        ls.bind(sys.argv[2])
        ls.listen(0)
        while True:
            c = socket.socket(socket.AF_UNIX)
            c.setblocking(False)
            try:
                c.connect(sys.argv[2])
            except BlockingIOError:
                break
            stalled.append(c)
        print("full", flush=True)
        while True:
            time.sleep(3600)
    elif cmd == "server":
        server(int(sys.argv[2]), sys.argv[3])
    elif cmd == "reset-client":
        reset_client(int(sys.argv[2]))
    elif cmd == "probe":
        probe(int(sys.argv[2]), sys.argv[3])
    elif cmd == "burst":
        burst(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
    elif cmd == "soak":
        sys.exit(soak(int(sys.argv[2]), float(sys.argv[3]),
                      int(sys.argv[4]), int(sys.argv[5]),
                      int(sys.argv[6]) if len(sys.argv) > 6 else None))
    elif cmd == "rr":
        rr(int(sys.argv[2]), int(sys.argv[3]))
    else:
        sys.exit("unknown command " + cmd)
