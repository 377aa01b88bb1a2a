#!/usr/bin/env python3
"""Write the fuzzers' seed corpora (tests/fuzz/corpus/*): valid hellos,
one of every control record, multi-record messages, and for the engine an
input that opens a stream and moves data, so fuzzing starts deep."""
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))


def rec(t, body):
    return bytes([t, 2 + len(body)]) + body


def ring(addr=0x10000, rkey=0x77, size=4096):
    return struct.pack(">QII", addr, rkey, size)


RECS = {
    "msg_credit": rec(1, struct.pack(">Q", 12)),
    "credit": rec(2, struct.pack(">IQ", 0, 1024)),
    "open": rec(3, struct.pack(">I", 1) + ring() + bytes([2]) + b"pg"),
    "open_ok": rec(4, struct.pack(">II", 0, 3) + ring()),
    "refuse": rec(5, struct.pack(">IH", 1, 1)),
    "shutdown": rec(6, struct.pack(">IQ", 0, 100)),
    "close": rec(7, struct.pack(">I", 0)),
    "reset": rec(8, struct.pack(">IH", 0, 6)),
    "keepalive": rec(9, b""),
    "goaway": rec(10, struct.pack(">H", 5)),
}


def write(kind, name, data):
    d = os.path.join(here, "corpus", kind)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


hello = struct.pack(">IBBH", 0x52535452, 1, 0, 64) + bytes(8) + bytes(range(16))
write("wire", "hello", hello)
write("wire", "hello-padded", hello + bytes(24))
for name, data in RECS.items():
    write("wire", name, data)
write("wire", "many", b"".join(RECS.values()))

# Engine inputs: op byte, then arguments (see fuzz_engine.c).
def send(payload):
    return bytes([0]) + struct.pack("<H", len(payload)) + payload


def imm(stream, n):
    return bytes([2]) + struct.pack("<II", (stream << 16) | (n - 1), n)


opened = send(RECS["open_ok"] + rec(4, struct.pack(">II", 1, 4) + ring()))
write("engine", "open-ok", opened)
write("engine", "data", opened + imm(0, 100) + imm(1, 4096) +
      bytes([6, 0]) + struct.pack("<I", 100) + bytes([5, 0]) +
      struct.pack("<I", 300) + bytes([4, 0]))
write("engine", "shutdown-close", opened + imm(0, 10) +
      send(RECS["shutdown"][:2] + struct.pack(">IQ", 0, 10)) +
      bytes([6, 0]) + struct.pack("<I", 10) + bytes([7, 0, 7, 1]) +
      send(RECS["close"]))
write("engine", "incoming", send(RECS["open"] + RECS["msg_credit"]) +
      imm(2, 50))
write("engine", "reset", opened + send(RECS["reset"]) + bytes([7, 2, 8, 9]))
