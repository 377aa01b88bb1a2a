#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Write the fuzzers' seed corpora (tests/fuzz/corpus/*): valid hellos,
one of every control record, multi-record messages, and for the engine an
input that opens a stream and moves data, inputs that resume streams
from both sides (see the modes in fuzz_engine.c), at version 5 and 4, and
inputs that grow and shrink rings, so fuzzing starts deep.  Each engine
seed has an entry in engine_seeds.c, which replays them (make check-unit)
and checks that each gets where its name says."""
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
    "auth": rec(11, bytes([0x42]) * 32),
    "resume": rec(12, bytes(range(16)) + bytes([0x42]) * 32 +
                  struct.pack(">H", 3)),
    "resume_stream": rec(13, struct.pack(">IIQQB", 0, 0, 1000, 800, 0) +
                         ring()),
    "resume_stream_gone": rec(13, struct.pack(">IIQQB", 1, 1, 0, 0, 4) +
                              bytes(16)),
    "resume_denied": rec(14, struct.pack(">H", 9)),
    "origin": rec(15, struct.pack(">IBHH", 1, 1, 50123, 443) +
                  bytes([192, 0, 2, 7]) + bytes(12) +
                  bytes([127, 0, 0, 1]) + bytes(12)),
    "ring": rec(16, struct.pack(">I", 0) + ring(0x20000, 0x78, 8192)),
    "ring_at": rec(17, struct.pack(">IQ", 0, 8192)),
    "resume_proof": rec(18, bytes([0x5a]) * 32),
    "resume_count": rec(21, struct.pack(">H", 3)),
    "fence": rec(22, struct.pack(">Q", 1)),
    "fenced": rec(23, struct.pack(">Q", 1)),
}


def resume(count, token=bytes(16)):
    return rec(12, token + bytes(32) + struct.pack(">H", count))


def resume_count(count):
    return rec(21, struct.pack(">H", count))


def rs(stream, peer, arrived=0, consumed=0, flags=0, size=4096):
    if flags & 4:
        return rec(13, struct.pack(">IIQQB", stream, peer, 0, 0, flags) +
                   bytes(16))
    return rec(13, struct.pack(">IIQQB", stream, peer, arrived, consumed,
                               flags) + ring(size=size))


def write(kind, name, data):
    d = os.path.join(here, "corpus", kind)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


hello = struct.pack(">IBBH", 0x52535452, 1, 0, 64) + bytes(8) + bytes(range(16))
write("wire", "hello", hello)
write("wire", "hello-v2", struct.pack(">IBBH", 0x52535452, 2, 3, 64) +
      bytes(8) + bytes(range(16)))
write("wire", "hello-v3", struct.pack(">IBBH", 0x52535452, 3, 3, 64) +
      bytes(8) + bytes(range(16)))
write("wire", "hello-v5", struct.pack(">IBBH", 0x52535452, 5, 3, 64) +
      bytes(8) + bytes(range(16)))
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
# The peer opens its stream 1 (our 2, after our 0 and 1), and says it
# posted one receive more: MSG_CREDIT counts every receive it ever posted,
# at most its queue (8) plus the SENDs we made (1, our OPENs).
incoming = RECS["open"] + rec(1, struct.pack(">Q", 9))
write("engine", "incoming", send(incoming) + imm(2, 50))
write("engine", "incoming-origin", send(RECS["origin"] + incoming) +
      imm(2, 50))
write("engine", "reset", opened + send(RECS["reset"]) + bytes([7, 2, 8, 9]))

# Resume (mode byte first).  The failed engine's streams are ours 0, 1, 2
# and the peer's 0, 1, 2; 1000 bytes went out on 0, 100 came in on 2.
# From version 5 the answering side proves the secret (RESUME_PROOF) before
# the other names its streams, and from version 10 the other says how many
# only then (RESUME_COUNT, its RESUME saying 0); the modes 0xe0 and up
# minus 0x10 are the same at version 4, where the names and their count
# come with the RESUME.
CLIENT, SERVER, REFUSER, SERVER_ADOPT_FAILS = 0xf2, 0xf4, 0xf6, 0xfc
V4 = -0x10
proof = send(RECS["resume_proof"])
answers = proof + send(rs(0, 0, 600, 500) + rs(1, 1) + rs(2, 2, 0, 0))
write("engine", "resume-client", bytes([CLIENT]) + answers + imm(2, 50) +
      bytes([6, 2]) + struct.pack("<I", 150) + bytes([5, 0]) +
      struct.pack("<I", 300) + bytes([4, 0]) +
      send(RECS["credit"][:2] + struct.pack(">IQ", 0, 1000)))
# The peer has no streams 0 and 2 (GONE); 1 resumes.  (Not with the CLOSE
# flag: our stream 1 never sent a CLOSE, and saying so is a violation.)
write("engine", "resume-client-gone", bytes([CLIENT]) + proof +
      send(rs(0, 0, flags=4) + rs(1, 1) + rs(2, 2, flags=4)) +
      bytes([8]))
write("engine", "resume-client-wrong-proof", bytes([CLIENT]) +
      send(rec(18, bytes([0x5b]) * 32)) + bytes([8]))
write("engine", "resume-client-v4", bytes([CLIENT + V4]) +
      send(rs(0, 0, 600, 500) + rs(1, 1) + rs(2, 2, 0, 0)) + imm(2, 50))
write("engine", "resume-client-denied", bytes([CLIENT]) +
      send(RECS["resume_denied"]) + bytes([8, 8]))
names = rs(0, 0, 1000, 800) + rs(1, 1) + rs(2, 2)
asks = send(resume(0)) + send(resume_count(3) + names)
# Once resumed, the peer opens its stream 3 (its 0 to 2 are the resumed
# ones), our 3; then ours can open no more (four at most).
open3 = rec(3, struct.pack(">I", 3) + ring() + bytes([2]) + b"pg")
write("engine", "resume-server", bytes([SERVER]) + asks + imm(2, 20) +
      bytes([6, 2]) + struct.pack("<I", 120) + bytes([5, 0]) +
      struct.pack("<I", 100) + bytes([4, 0]) + send(open3) + bytes([8]))
# The names in three SENDs, our OPEN waiting for the last.  (Stream 0's
# ring is the size it was, and no SHUTDOWN of ours arrived: there was none.)
write("engine", "resume-server-split", bytes([SERVER]) +
      send(resume(0)) + send(resume_count(3) + rs(2, 2)) + bytes([8]) +
      send(rs(0, 0, 700, 700)) + send(rs(1, 1, 0, 0)))
write("engine", "resume-server-v4", bytes([SERVER + V4]) +
      send(resume(3) + names) + imm(2, 20) + bytes([4, 0, 8]))
write("engine", "resume-server-adopt-fails", bytes([SERVER_ADOPT_FAILS]) +
      asks + bytes([7, 0, 7, 1]))
# The refused peer opens a stream instead.  From version 5 it names none
# (the names, and from 10 their count, wait for RESUME_PROOF); at 4 the
# names it sent go unheard.
write("engine", "resume-refused", bytes([REFUSER]) + send(resume(0)) +
      send(RECS["open"]))
write("engine", "resume-refused-v4", bytes([REFUSER + V4]) +
      send(resume(1)) + send(rs(0, 0)) + send(RECS["open"]))

# Ring resizes (version 4: the links above that do not resume).  Our
# streams 0 and 1 start with 4 KiB rings and may grow to 64 KiB; the
# input plays the peer, whose stream 0 is our 0.
def app_write(stream, n):
    return bytes([5, stream]) + struct.pack("<I", n)


def app_read(stream, n):
    return bytes([6, stream]) + struct.pack("<I", n)


def ring_rec(stream, size, addr=0x20000, rkey=0x78):
    return rec(16, struct.pack(">I", stream) + ring(addr, rkey, size))


def ring_at(stream, cursor):
    return rec(17, struct.pack(">IQ", stream, cursor))


def credit(stream, cursor):
    return rec(2, struct.pack(">IQ", stream, cursor))


def msg_credit(posted):
    return rec(1, struct.pack(">Q", posted))


TRIM, DONE = bytes([10]), bytes([4, 0])
# The peer grows its ring (RING; we answer RING_AT and write there), then
# our send ring grows: full twice over while the peer's ring had room.
write("engine", "ring-peer", opened + send(ring_rec(0, 8192) +
      msg_credit(9)) + app_write(0, 4096) + app_write(0, 4096) + DONE +
      app_write(0, 4096) + send(credit(0, 4096) + msg_credit(12)) +
      app_write(0, 4000) + DONE + app_write(0, 3000))
# Our send ring grows while the peer's message credit holds bytes back:
# they are written from the old ring once credit comes (MSG_CREDIT), the
# rest from the new.  Then two idle trims shrink it again.
tx_grown = (opened + send(ring_rec(0, 16384)) +
            (app_write(0, 4096) + DONE) * 4 + send(credit(0, 16384)) +
            app_write(0, 4096) + DONE + app_write(0, 4096) +
            app_write(0, 4000) + send(msg_credit(15)) + DONE +
            send(credit(0, 28576)) + app_write(0, 100))
# (The last WRITE still out when the send ring shrinks, or done.)
write("engine", "ring-tx-old", tx_grown + TRIM + TRIM + DONE +
      app_write(0, 100))
write("engine", "ring-tx-idle", tx_grown + DONE + TRIM + TRIM +
      app_write(0, 100) + DONE + app_write(0, 100))
# Our receive ring grows: the peer used all its credit, twice the ring
# arrived; RING goes out, the peer's RING_AT switches with bytes left in
# the old ring, which goes once read.  Then two idle trims shrink it back
# (RING, RING_AT at the end) and the small ring carries on.
grow = (opened + send(msg_credit(9)) + imm(0, 4096) + app_read(0, 4096) +
        imm(0, 4096) + send(ring_at(0, 8192) + msg_credit(12)) +
        imm(0, 4096) + app_read(0, 4096) + app_read(0, 4096) + DONE)
write("engine", "ring-grow", grow + imm(0, 8192) + app_read(0, 4096) +
      app_read(0, 4096) + TRIM + TRIM + send(ring_at(0, 20480) +
      msg_credit(17)) + imm(0, 100) + app_read(0, 100))
# A shrink that races data: the peer's bytes cross our RING, so its
# RING_AT comes after them and the big ring keeps them until read.
write("engine", "ring-shrink-race", grow + app_read(0, 4096) + TRIM +
      TRIM + imm(0, 3000) + send(ring_at(0, 15288) + msg_credit(16)) +
      imm(0, 1000) + app_read(0, 3000) + app_read(0, 1000))
# Growth refused (op 11: out of memory), then allowed again.
write("engine", "ring-refused", opened + bytes([11, 1]) + imm(0, 4096) +
      app_read(0, 4096) + imm(0, 4096) + bytes([11, 0]) +
      app_read(0, 4096) + imm(0, 4096) + app_read(0, 4096) +
      imm(0, 4096))
# Violations: RING_AT nobody asked for, or at the wrong cursor; a second
# RING before our RING_AT.  A RING after our RESET is old news.
write("engine", "ring-at-unasked", opened + send(ring_at(0, 0)))
write("engine", "ring-at-wrong", opened + send(msg_credit(9)) +
      imm(0, 4096) + app_read(0, 4096) + imm(0, 4096) +
      send(ring_at(0, 5000)))
write("engine", "ring-twice", opened + send(ring_rec(0, 8192) +
      ring_rec(0, 16384)))
write("engine", "ring-after-reset", opened + bytes([7, 2]) +
      send(ring_rec(0, 8192) + RECS["close"]))

# Sealed links (mode 0xd0 and up): the input's SENDs and data tags are
# sealed as the peer would; op 13 flips a bit of the next message.
SEALED = 0xd0
write("engine", "sealed-data", bytes([SEALED]) + opened + imm(0, 100) +
      imm(1, 4096) + app_read(0, 100) + bytes([5, 0]) +
      struct.pack("<I", 300) + DONE + imm(0, 200))
write("engine", "sealed-tamper-data", bytes([SEALED]) + opened +
      imm(0, 100) + bytes([13]) + imm(0, 50))
write("engine", "sealed-tamper-send", bytes([SEALED]) + opened +
      bytes([13]) + send(RECS["msg_credit"]))
write("engine", "sealed-resume-client", bytes([CLIENT - 0x20]) + answers +
      imm(2, 50) + bytes([5, 0]) + struct.pack("<I", 300) + DONE)

# Op 14 brings both directions' counts to just below a rekey boundary (the
# low and high nibbles of its byte: messages left), so the keys are
# renewed mid-run; 0xc0 to 0xcf are the sealed modes with AES-256-GCM.
def near_rekey(tx_left=1, rx_left=1):
    return bytes([14, (tx_left - 1) | ((rx_left - 1) << 4)])


write("engine", "sealed-rekey", bytes([SEALED]) + opened + near_rekey(2, 1) +
      send(RECS["keepalive"]) + send(RECS["keepalive"]) + imm(0, 100) +
      imm(1, 4096) + app_read(0, 100) + app_write(0, 300) + DONE +
      app_write(1, 2000) + imm(0, 200))
write("engine", "sealed-rekey-aes-resume", bytes([CLIENT - 0x30]) +
      near_rekey(3, 3) + answers + imm(2, 50) + app_write(0, 1200) +
      app_write(0, 1200) + DONE + app_write(0, 1200))

# Two lanes (0x90): op 0's SENDs land on lane 1, op 1's on lane 0; op
# 2's WRITEs WITH IMM on lane 0, op 3's on lane 1, which ends the link.
# A DATA record is in place on lane 1; an application write of 64 bytes
# then goes as one.  In the one-lane modes a DATA record ends the link.
def data_rec(stream, cursor, n):
    return rec(20, struct.pack(">IQ", stream, cursor) + bytes(range(n)))


LANES = 0x90
write("engine", "lanes-data", bytes([LANES]) + opened +
      send(data_rec(0, 0, 100)) + bytes([6, 0]) + struct.pack("<I", 100) +
      bytes([5, 1]) + struct.pack("<I", 64))
# Stream 0's 3000 bytes wait for its OPEN's completion on lane 1 (150),
# then go as WRITEs on lane 0, which complete (0); stream 1's 64 go as
# DATA.
write("engine", "lanes-bulk", bytes([LANES]) + opened +
      send(data_rec(1, 0, 100)) + imm(0, 4096) + bytes([5, 0]) +
      struct.pack("<I", 3000) + bytes([4, 150, 4, 0]) + bytes([5, 1]) +
      struct.pack("<I", 64))
write("engine", "lanes-data-gap", bytes([LANES]) + opened +
      send(data_rec(0, 5, 10)))
write("engine", "lanes-imm-lane1", bytes([LANES]) + opened + bytes([3]) +
      struct.pack("<II", 100 - 1, 100))
write("engine", "data-one-lane", bytes([0xf0]) + opened +
      send(data_rec(0, 0, 10)))

# Without immediates (0x80, as the 0x90 modes, version 12): a WRITE
# WITH IMM of even length arrives as the SEND of its notice (sealed, 0x88:
# and its tag), one of odd length as a WRITE WITH IMMEDIATE, which ends
# the link.  Lane 1 is open from the start (nothing went on lane 0
# before), so the OPENs go there; stream 0's 3000 bytes go as WRITEs and
# their notices on lane 0 once the peer answered the FENCE on lane 1
# after its records (FENCED 1).
NOTIFY = 0x80


def fenced(n):
    return send(rec(23, struct.pack(">Q", n)))


write("engine", "notify-data", bytes([NOTIFY]) + opened + imm(0, 100) +
      imm(1, 4096) + bytes([6, 0]) + struct.pack("<I", 100) + bytes([5, 0]) +
      struct.pack("<I", 3000) + bytes([4, 150]) + fenced(1) +
      bytes([4, 0]))
write("engine", "notify-sealed", bytes([NOTIFY | 8]) + opened + imm(0, 100) +
      bytes([5, 0]) + struct.pack("<I", 3000) + bytes([4, 150]) + fenced(1) +
      bytes([4, 0]))
# A FENCED that answers no FENCE of ours ends the link, as does a FENCE on
# a link that does not fence (one lane).
write("engine", "notify-fenced-unasked", bytes([NOTIFY]) + opened +
      fenced(7))
write("engine", "fence-one-lane", bytes([0xf0]) + opened +
      send(RECS["fence"]))
write("engine", "notify-imm", bytes([NOTIFY]) + opened + bytes([2]) +
      struct.pack("<II", 100 - 1, 101))

# The identity handshake (0xb0 to 0xbf, the newest version; 0xa0 to 0xaf, version
# 6): bit 0, this side connected; bit 1, a key too; bit 2, sealed; bit 3,
# AES-256-GCM.  Op 15 is the peer's next message (its byte: bit 0 spoils
# a byte, bit 1 the length): from version 7 the responder's confirmation
# follows message 3.
INITIATOR, KEY, SEAL, AES = 1, 2, 4, 8
HS, HS6 = 0xb0, 0xa0


def hs(spoil=0):
    return bytes([15, spoil])


open_c = bytes([8]) + send(rec(4, struct.pack(">II", 0, 3) + ring()))
write("engine", "hs-initiator", bytes([HS | INITIATOR | SEAL]) + hs() +
      hs() + open_c + imm(0, 100) + app_read(0, 100) + app_write(0, 300) +
      DONE)
write("engine", "hs-responder", bytes([HS | SEAL | AES]) + hs() + hs() +
      send(RECS["open"]) + imm(0, 50) + app_read(0, 50))
write("engine", "hs-clear", bytes([HS | INITIATOR]) + hs() + hs() +
      open_c + imm(0, 100))
write("engine", "hs-wrong-confirm", bytes([HS | INITIATOR | SEAL]) + hs() +
      hs(1 | (5 << 2)) + open_c)
write("engine", "hs-open-unconfirmed", bytes([HS | INITIATOR | SEAL]) +
      hs() + open_c + hs())
write("engine", "hs6-initiator", bytes([HS6 | INITIATOR | SEAL]) + hs() +
      open_c + imm(0, 100) + app_read(0, 100) + app_write(0, 300) + DONE)
# An initiator whose message 3 waits for room (the send queue full of
# keepalives) is done, and opens the peer's sealed bytes, while its own
# sends still go in clear until a completion lets message 3 go.
write("engine", "hs6-opens-first", bytes([HS6 | INITIATOR | SEAL]) +
      bytes([9]) * 100 + hs() + open_c + imm(0, 100) + app_read(0, 100))
write("engine", "hs6-responder", bytes([HS6 | SEAL]) + hs() + hs() +
      send(RECS["open"]) + imm(0, 50))
write("engine", "hs-spoilt", bytes([HS]) + hs(1 | (7 << 2)))
write("engine", "hs-short", bytes([HS | INITIATOR | SEAL]) + hs(2))
write("engine", "hs-auth-instead", bytes([HS | INITIATOR | KEY]) +
      send(RECS["auth"]) + hs())
write("engine", "hs-early-open", bytes([HS | SEAL]) +
      send(RECS["open"]) + hs())
