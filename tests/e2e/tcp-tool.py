#!/usr/bin/env python3
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
  tcp-tool.py reset-client PORT      connect, say "record", send 64 KiB,
      then close with a reset
  tcp-tool.py probe PORT FIRSTLINE   connect, send FIRSTLINE and 2000
      bytes, shut down writing, then read: print "reset" if the connection is reset, "clean"
      on a clean end of stream
  tcp-tool.py burst PORT N SECONDS   open N connections at once, each says
      "echo" and a line; print "served S refused R hung H"
"""
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
                c.sendall(data)
                c.setblocking(False)
            elif st[0] == "reset" and st[2] >= 1000:
                sel.unregister(c)
                reset_close(c)
                continue
            if not data:
                if st[0] == "record":
                    with open(log, "a") as f:
                        f.write("clean %d\n" % st[2])
                elif st[0] == "sink":
                    c.setblocking(True)
                    c.sendall(b"%d\n" % st[2])
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
    elif cmd == "server":
        server(int(sys.argv[2]), sys.argv[3])
    elif cmd == "reset-client":
        reset_client(int(sys.argv[2]))
    elif cmd == "probe":
        probe(int(sys.argv[2]), sys.argv[3])
    elif cmd == "burst":
        burst(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
    else:
        sys.exit("unknown command " + cmd)
