/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/protocol/wire: every record round-trips, and every decoder
 * rejects truncated, oversized and out-of-range input with the right error.
 */
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "wire.h"

static struct wire_rec
mkrec(uint8_t type)
{
	struct wire_rec r;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.stream = 16383;
	r.peer_stream = 77;
	r.cursor = 0x0123456789abcdefULL;
	r.ring.addr = 0xfedcba9876543210ULL;
	r.ring.rkey = 0xdeadbeef;
	r.ring.size = 1u << 20;
	r.reason = WIRE_REASON_TARGET_REFUSED;
	for (size_t i = 0; i < WIRE_AUTH_LEN; i++)
		r.proof[i] = (uint8_t)(i * 7 + 1);
	r.name_len = 2;
	memcpy(r.name, "pg", 3);
	r.consumed = 0x0123456789ab0000ULL;
	r.count = 1234;
	r.flags = WIRE_RS_SHUT | WIRE_RS_CLOSE;
	for (size_t i = 0; i < WIRE_NONCE_LEN; i++)
		r.token[i] = (uint8_t)(i * 5 + 2);
	r.origin.family = WIRE_FAM_INET6;
	r.origin.src_port = 40001;
	r.origin.dst_port = 443;
	for (size_t i = 0; i < 16; i++) {
		r.origin.src[i] = (uint8_t)(0xf0 + i);
		r.origin.dst[i] = (uint8_t)(i * 3);
	}
	return (r);
}

static int
rec_equal(const struct wire_rec *a, const struct wire_rec *b)
{

	if (a->type != b->type)
		return (0);
	switch (a->type) {
	case WIRE_MSG_CREDIT:
	case WIRE_FENCE:
	case WIRE_FENCED:
		return (a->cursor == b->cursor);
	case WIRE_CREDIT:
	case WIRE_SHUTDOWN:
	case WIRE_RING_AT:
		return (a->stream == b->stream && a->cursor == b->cursor);
	case WIRE_RING:
		return (a->stream == b->stream &&
		    memcmp(&a->ring, &b->ring, sizeof(a->ring)) == 0);
	case WIRE_OPEN:
		return (a->stream == b->stream &&
		    memcmp(&a->ring, &b->ring, sizeof(a->ring)) == 0 &&
		    a->name_len == b->name_len &&
		    strcmp(a->name, b->name) == 0);
	case WIRE_OPEN_OK:
		return (a->stream == b->stream &&
		    a->peer_stream == b->peer_stream &&
		    memcmp(&a->ring, &b->ring, sizeof(a->ring)) == 0);
	case WIRE_REFUSE:
	case WIRE_RESET:
		return (a->stream == b->stream && a->reason == b->reason);
	case WIRE_CLOSE:
		return (a->stream == b->stream);
	case WIRE_KEEPALIVE:
		return (1);
	case WIRE_GOAWAY:
		return (a->reason == b->reason);
	case WIRE_AUTH:
	case WIRE_RESUME_PROOF:
		return (memcmp(a->proof, b->proof, WIRE_AUTH_LEN) == 0);
	case WIRE_RESUME:
		return (memcmp(a->proof, b->proof, WIRE_AUTH_LEN) == 0 &&
		    memcmp(a->token, b->token, WIRE_NONCE_LEN) == 0 &&
		    a->count == b->count);
	case WIRE_RESUME_STREAM:
		return (a->stream == b->stream &&
		    a->peer_stream == b->peer_stream &&
		    a->cursor == b->cursor && a->consumed == b->consumed &&
		    a->flags == b->flags &&
		    memcmp(&a->ring, &b->ring, sizeof(a->ring)) == 0);
	case WIRE_RESUME_DENIED:
		return (a->reason == b->reason);
	case WIRE_ORIGIN:
		return (a->stream == b->stream &&
		    memcmp(&a->origin, &b->origin, sizeof(a->origin)) == 0);
	}
	return (0);
}

/* Stream id 16384 (out of range) into a record's first field. */
static void
put_stream_max(uint8_t *buf)
{

	buf[2] = 0;
	buf[3] = 0;
	buf[4] = 0x40;
	buf[5] = 0;
}

/* HANDSHAKE (version 6): the only type whose length is the message's. */
static void
test_handshake_rec(void)
{
	uint8_t buf[WIRE_MSG_SIZE];
	struct wire_rec r, d;
	size_t n, used, lens[] = { 1, 96, WIRE_HS_MAX }, i;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		memset(&r, 0, sizeof(r));
		r.type = WIRE_HANDSHAKE;
		r.hs_len = (uint8_t)lens[i];
		memset(r.hs, 0xa5 + (int)i, lens[i]);
		n = wire_rec_encode(buf, sizeof(buf), &r);
		ok(n == 2 + lens[i] && wire_rec_decode(buf, n, &d, &used) ==
		    WIRE_OK && used == n && d.hs_len == lens[i] &&
		    memcmp(d.hs, r.hs, lens[i]) == 0,
		    "HANDSHAKE of %zu bytes round-trips", lens[i]);
		ok(wire_rec_decode(buf, n - 1, &d, &used) == WIRE_ETRUNC,
		    "HANDSHAKE of %zu bytes: truncation refused", lens[i]);
	}
	r.hs_len = 0;
	ok(wire_rec_encode(buf, sizeof(buf), &r) == 0,
	    "an empty HANDSHAKE is not encoded");
	r.hs_len = WIRE_HS_MAX + 1;
	ok(wire_rec_encode(buf, sizeof(buf), &r) == 0,
	    "a HANDSHAKE above the maximum is not encoded");
	memset(buf, 0, sizeof(buf));
	buf[0] = WIRE_HANDSHAKE;
	buf[1] = 2;
	ok(wire_rec_decode(buf, sizeof(buf), &d, &used) == WIRE_ELEN,
	    "an empty HANDSHAKE is refused");
	buf[1] = 2 + WIRE_HS_MAX + 1;
	ok(wire_rec_decode(buf, sizeof(buf), &d, &used) == WIRE_ELEN,
	    "a HANDSHAKE above the maximum is refused");
}

static void
test_records(void)
{
	uint8_t buf[WIRE_MSG_SIZE], big[WIRE_MSG_SIZE + 8];
	struct wire_rec r, d;
	size_t n, used, i;
	int t, err, all;

	for (t = WIRE_MSG_CREDIT; t <= WIRE_RESUME_PROOF; t++) {
		r = mkrec((uint8_t)t);
		n = wire_rec_encode(buf, sizeof(buf), &r);
		ok(n == wire_rec_size(&r) && n > 0, "type %d encodes", t);
		err = wire_rec_decode(buf, n, &d, &used);
		ok(err == WIRE_OK && used == n && rec_equal(&r, &d),
		    "type %d round-trips", t);

		/* Every truncation is refused, none reads past the end. */
		all = 1;
		for (i = 0; i < n; i++) {
			if (wire_rec_decode(buf, i, &d, &used) != WIRE_ETRUNC)
				all = 0;
		}
		ok(all, "type %d: every truncated prefix is refused", t);

		/* A length field longer than the type allows is refused. */
		memcpy(big, buf, n);
		memset(big + n, 0, 8);
		big[1] = (uint8_t)(n + 1);
		ok(wire_rec_decode(big, n + 8, &d, &used) == WIRE_ELEN,
		    "type %d: oversized length field is refused", t);
		/* And a shorter one too. */
		if (n > 2) {
			big[1] = (uint8_t)(n - 1);
			ok(wire_rec_decode(big, n + 8, &d, &used) != WIRE_OK,
			    "type %d: undersized length field is refused", t);
		}
		ok(wire_rec_encode(buf, n - 1, &r) == 0,
		    "type %d: encoder refuses a short buffer", t);
	}

	/* Unknown types. */
	buf[0] = 0; buf[1] = 2;
	ok(wire_rec_decode(buf, 2, &d, &used) == WIRE_ETYPE, "type 0 refused");
	buf[0] = 24; buf[1] = 2;
	ok(wire_rec_decode(buf, 2, &d, &used) == WIRE_ETYPE, "type 24 refused");

	/* DATA: type 20, stream, cursor, then its bytes, 1 to 241 of them. */
	{
		uint8_t bytes[WIRE_DATA_MAX + 1];

		for (i = 0; i < sizeof(bytes); i++)
			bytes[i] = (uint8_t)(i * 13 + 5);
		r = mkrec(WIRE_DATA);
		r.data = bytes;
		r.data_len = WIRE_DATA_MAX;
		n = wire_rec_encode(buf, sizeof(buf), &r);
		ok(n == 255 && buf[0] == 20 && buf[1] == 255 &&
		    memcmp(buf + 14, bytes, WIRE_DATA_MAX) == 0,
		    "DATA: 255 bytes at most, its bytes at offset 14");
		err = wire_rec_decode(buf, n, &d, &used);
		ok(err == WIRE_OK && used == n && d.stream == r.stream &&
		    d.cursor == r.cursor && d.data_len == WIRE_DATA_MAX &&
		    d.data == buf + 14, "DATA round-trips, its bytes in place");
		all = 1;
		for (i = 0; i < n; i++)
			if (wire_rec_decode(buf, i, &d, &used) != WIRE_ETRUNC)
				all = 0;
		ok(all, "DATA: every truncated prefix is refused");
		r.data_len = 0;
		ok(wire_rec_encode(buf, sizeof(buf), &r) == 0,
		    "DATA without bytes does not encode");
		buf[0] = WIRE_DATA;
		buf[1] = 14;
		ok(wire_rec_decode(buf, 14, &d, &used) == WIRE_ELEN,
		    "DATA without bytes is refused");
		ok(wire_rec_version(WIRE_DATA) == 8, "DATA is version 8's");
	}

	/* FENCE and FENCED: types 22 and 23, their number after the header,
	 * as MSG_CREDIT's cursor. */
	r = mkrec(WIRE_FENCE);
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(n == 10 && buf[0] == 22 && buf[1] == 10 && buf[2] == 0x01 &&
	    buf[9] == 0xef && wire_rec_decode(buf, n, &d, &used) == WIRE_OK &&
	    used == 10 && rec_equal(&r, &d), "FENCE: 10 bytes, its number at "
	    "offset 2, round trip");
	r = mkrec(WIRE_FENCED);
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(n == 10 && buf[0] == 23 && wire_rec_decode(buf, n, &d, &used) ==
	    WIRE_OK && rec_equal(&r, &d), "FENCED: 10 bytes, round trip");

	/* RESUME_COUNT: type 21, the count after the header, at most
	 * WIRE_STREAMS_MAX. */
	r = mkrec(WIRE_RESUME_COUNT);
	r.count = 300;
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(n == 4 && buf[0] == 21 && buf[2] == 1 && buf[3] == 44 &&
	    wire_rec_decode(buf, n, &d, &used) == WIRE_OK && d.count == 300,
	    "RESUME_COUNT: 4 bytes, the count at offset 2");
	buf[2] = 0x40;
	buf[3] = 1;
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ESTREAM,
	    "RESUME_COUNT: above WIRE_STREAMS_MAX refused");

	/* RESUME_PROOF: type 18, the proof after the header, as AUTH. */
	r = mkrec(WIRE_RESUME_PROOF);
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(n == 34 && buf[0] == 18 && buf[1] == 34 &&
	    memcmp(buf + 2, r.proof, WIRE_AUTH_LEN) == 0,
	    "RESUME_PROOF: 34 bytes, the proof at offset 2");

	/* RING and RING_AT: their layout (their stream ids below). */
	r = mkrec(WIRE_RING);
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(n == 22 && buf[0] == 16 && buf[1] == 22 &&
	    memcmp(buf + 6, "\xfe\xdc\xba\x98\x76\x54\x32\x10", 8) == 0 &&
	    memcmp(buf + 18, "\x00\x10\x00\x00", 4) == 0,
	    "RING: 22 bytes, the ring's address at 6 and size at 18");
	r = mkrec(WIRE_RING_AT);
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(n == 14 && buf[0] == 17 && buf[1] == 14 &&
	    memcmp(buf + 6, "\x01\x23\x45\x67\x89\xab\xcd\xef", 8) == 0,
	    "RING_AT: 14 bytes, the cursor at 6");

	/* ORIGIN: what a family does not use must be zero. */
	r = mkrec(WIRE_ORIGIN);
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(n == 43, "ORIGIN is 43 bytes");
	ok(buf[6] == WIRE_FAM_INET6 && buf[7] == 0x9c && buf[8] == 0x41 &&
	    buf[9] == 0x01 && buf[10] == 0xbb && buf[11] == 0xf0 &&
	    buf[27] == 0, "ORIGIN's layout: family, ports, addresses");
	buf[6] = WIRE_FAM_MAX + 1;
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_EFAMILY,
	    "ORIGIN with an unknown family refused");
	buf[6] = WIRE_FAM_INET;
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ERESERVED,
	    "ORIGIN IPv4 with bytes past the IPv4 address refused");
	memset(r.origin.src + 4, 0, 12);
	memset(r.origin.dst + 4, 0, 12);
	r.origin.family = WIRE_FAM_INET;
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_OK &&
	    d.origin.family == WIRE_FAM_INET && d.origin.src[3] == 0xf3 &&
	    d.origin.src_port == 40001, "ORIGIN IPv4 decodes");
	buf[6] = WIRE_FAM_UNIX;
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ERESERVED,
	    "ORIGIN Unix with addresses refused");
	memset(&r.origin, 0, sizeof(r.origin));
	r.origin.family = WIRE_FAM_UNIX;
	r.origin.dst_port = 1;
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ERESERVED,
	    "ORIGIN Unix with a port refused");
	r.origin.dst_port = 0;
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_OK &&
	    d.origin.family == WIRE_FAM_UNIX, "ORIGIN Unix decodes");
	put_stream_max(buf);
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ESTREAM,
	    "ORIGIN's stream id is checked");

	/* RESUME and RESUME_STREAM: every field checked. */
	r = mkrec(WIRE_RESUME);
	r.count = WIRE_STREAMS_MAX + 1;
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ESTREAM,
	    "RESUME: a count above the stream limit refused");
	r = mkrec(WIRE_RESUME_STREAM);
	r.flags = 0x08;
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_EFLAGS,
	    "RESUME_STREAM: unknown flags refused");
	r = mkrec(WIRE_RESUME_STREAM);
	r.consumed = r.cursor + 1;
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ECURSOR,
	    "RESUME_STREAM: consumed beyond arrived refused");
	r = mkrec(WIRE_RESUME_STREAM);
	r.ring.size = 3;
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ERING,
	    "RESUME_STREAM: an unusable ring refused");
	r = mkrec(WIRE_RESUME_STREAM);
	r.peer_stream = WIRE_STREAMS_MAX;
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ESTREAM,
	    "RESUME_STREAM: peer stream out of range refused");
	memset(&r, 0, sizeof(r));
	r.type = WIRE_RESUME_STREAM;
	r.stream = 5;
	r.peer_stream = 6;
	r.flags = WIRE_RS_GONE;
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_OK &&
	    d.flags == WIRE_RS_GONE && d.stream == 5 && d.peer_stream == 6,
	    "RESUME_STREAM: a GONE answer needs no ring");
	buf[2 + 4 + 4 + 8 + 8 + 1 + 12] = 1;
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ERESERVED,
	    "RESUME_STREAM: a GONE answer with a ring refused");
	buf[0] = 255; buf[1] = 2;
	ok(wire_rec_decode(buf, 2, &d, &used) == WIRE_ETYPE,
	    "type 255 refused");

	/* Stream ids out of range, in each record that carries one. */
	for (t = WIRE_CREDIT; t <= WIRE_RING_AT; t++) {
		if (t > WIRE_RESET && t < WIRE_RING)
			continue;
		r = mkrec((uint8_t)t);
		r.stream = WIRE_STREAMS_MAX;
		n = wire_rec_encode(buf, sizeof(buf), &r);
		ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ESTREAM,
		    "type %d: stream %u refused", t, (unsigned)r.stream);
	}
	r = mkrec(WIRE_OPEN_OK);
	r.peer_stream = 0xffffffff;
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ESTREAM,
	    "OPEN_OK: peer stream out of range refused");

	/* Ring sizes. */
	{
		static const uint32_t bad[] = { 0, 1000, 4095, 6000, 1u << 31,
		    0xffffffff };
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			r = mkrec(WIRE_OPEN);
			r.ring.size = bad[i];
			n = wire_rec_encode(buf, sizeof(buf), &r);
			ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ERING,
			    "OPEN: ring size %u refused", (unsigned)bad[i]);
			r = mkrec(WIRE_OPEN_OK);
			r.ring.size = bad[i];
			n = wire_rec_encode(buf, sizeof(buf), &r);
			ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ERING,
			    "OPEN_OK: ring size %u refused", (unsigned)bad[i]);
			r = mkrec(WIRE_RING);
			r.ring.size = bad[i];
			n = wire_rec_encode(buf, sizeof(buf), &r);
			ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ERING,
			    "RING: ring size %u refused", (unsigned)bad[i]);
		}
	}

	/* Names: empty, too long, bad characters. */
	r = mkrec(WIRE_OPEN);
	r.name_len = 0;
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ENAME,
	    "OPEN: empty name refused");
	r.name_len = WIRE_NAME_MAX;
	memset(r.name, 'a', WIRE_NAME_MAX);
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_OK &&
	    d.name_len == WIRE_NAME_MAX && strlen(d.name) == WIRE_NAME_MAX,
	    "OPEN: 64-character name accepted");
	r.name_len = WIRE_NAME_MAX + 1;
	memset(r.name, 'a', WIRE_NAME_MAX + 1);
	n = wire_rec_encode(buf, sizeof(buf), &r);
	ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ENAME,
	    "OPEN: 65-character name refused");
	{
		static const char *bad[] = { "a b", "a/b", "a\n", "\x01",
		    "na\xffme", "a\0b" };
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			r = mkrec(WIRE_OPEN);
			r.name_len = (uint8_t)(i == 5 ? 3 : strlen(bad[i]));
			memcpy(r.name, bad[i], r.name_len);
			n = wire_rec_encode(buf, sizeof(buf), &r);
			ok(wire_rec_decode(buf, n, &d, &used) == WIRE_ENAME,
			    "OPEN: bad name %zu refused", i);
		}
	}

	/* Several records back to back decode one after the other. */
	{
		size_t off = 0;
		struct wire_rec a = mkrec(WIRE_CREDIT), b = mkrec(WIRE_CLOSE);

		off += wire_rec_encode(buf + off, sizeof(buf) - off, &a);
		off += wire_rec_encode(buf + off, sizeof(buf) - off, &b);
		err = wire_rec_decode(buf, off, &d, &used);
		ok(err == WIRE_OK && rec_equal(&a, &d), "first of two records");
		err = wire_rec_decode(buf + used, off - used, &d, &n);
		ok(err == WIRE_OK && rec_equal(&b, &d) && used + n == off,
		    "second of two records");
	}
}

static void
test_hello(void)
{
	uint8_t buf[64];
	struct wire_hello h, d;
	size_t i;
	int all;

	memset(&h, 0, sizeof(h));
	h.version = WIRE_VERSION;
	h.flags = 0;
	h.credits = 384;
	for (i = 0; i < WIRE_NONCE_LEN; i++)
		h.nonce[i] = (uint8_t)(i * 17 + 3);
	wire_hello_encode(buf, &h);
	ok(WIRE_HELLO_LEN <= 56, "hello fits the 56-byte CM limit");
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.credits == 384 && d.version == WIRE_VERSION &&
	    memcmp(d.nonce, h.nonce, WIRE_NONCE_LEN) == 0, "hello round-trips");

	/* The CM pads private data: zero padding is fine, garbage is not. */
	memset(buf + WIRE_HELLO_LEN, 0, sizeof(buf) - WIRE_HELLO_LEN);
	ok(wire_hello_decode(buf, 56, &d) == WIRE_OK,
	    "hello with zero padding to 56 bytes");
	buf[50] = 1;
	ok(wire_hello_decode(buf, 56, &d) == WIRE_ERESERVED,
	    "hello with non-zero padding refused");
	buf[50] = 0;

	all = 1;
	for (i = 0; i < WIRE_HELLO_LEN; i++)
		if (wire_hello_decode(buf, i, &d) != WIRE_ETRUNC)
			all = 0;
	ok(all, "every truncated hello is refused");
	ok(wire_hello_decode(NULL, 0, &d) == WIRE_ETRUNC, "no private data");

	buf[0] ^= 1;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_EMAGIC,
	    "bad magic refused");
	buf[0] ^= 1;
	buf[4] = WIRE_VERSION + 1;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_EVERSION,
	    "a version above ours refused");
	buf[4] = 1;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.version == 1, "version 1 understood");
	buf[5] = WIRE_HELLO_RESUME;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_EFLAGS,
	    "version 1 with the resume flag refused");
	buf[4] = 2;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.flags == WIRE_HELLO_RESUME, "version 2 with the resume flag");
	buf[5] = WIRE_HELLO_IDENTITY;
	buf[4] = 5;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_EFLAGS,
	    "version 5 with IDENTITY refused");
	buf[5] = WIRE_HELLO_SEAL;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_EFLAGS,
	    "version 5 with SEAL refused");
	buf[5] = WIRE_HELLO_AESGCM;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_EFLAGS,
	    "version 5 with AESGCM refused");
	buf[4] = 6;
	buf[5] = WIRE_HELLO_FLAGS & ~(WIRE_HELLO_V8 | WIRE_HELLO_NOTIFY);
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.flags == (WIRE_HELLO_FLAGS & ~(WIRE_HELLO_V8 |
	    WIRE_HELLO_NOTIFY)),
	    "version 6 with every flag of 6");
	buf[5] = WIRE_HELLO_LANES;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_EFLAGS,
	    "version 6 with LANES refused");
	buf[4] = 7;
	buf[5] = WIRE_HELLO_LANE1;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_EFLAGS,
	    "version 7 with LANE1 refused");
	buf[4] = 8;
	buf[5] = WIRE_HELLO_FLAGS & ~(WIRE_HELLO_LANE1 | WIRE_HELLO_NOTIFY);
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.flags == (WIRE_HELLO_FLAGS & ~(WIRE_HELLO_LANE1 |
	    WIRE_HELLO_NOTIFY)),
	    "version 8 with every flag but LANE1 and NOTIFY");
	buf[4] = 10;
	buf[5] = WIRE_HELLO_NOTIFY;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_EFLAGS,
	    "version 10 with NOTIFY refused");
	buf[4] = 11;
	buf[5] = WIRE_HELLO_FLAGS & ~WIRE_HELLO_LANE1;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.flags == (WIRE_HELLO_FLAGS & ~WIRE_HELLO_LANE1),
	    "version 11 with every flag but LANE1");
	buf[5] = WIRE_HELLO_LANE1 | WIRE_HELLO_NOTIFY;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_EFLAGS,
	    "a lane-1 hello with NOTIFY refused (lane 1 runs as lane 0)");
	buf[5] = WIRE_HELLO_LANE1;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.flags == WIRE_HELLO_LANE1, "version 8: LANE1 alone");
	buf[5] = WIRE_HELLO_LANE1 | WIRE_HELLO_RESUME;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_EFLAGS,
	    "version 8: LANE1 with any other flag refused");
	buf[4] = 6;
	buf[5] = 0x20;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_EFLAGS,
	    "an unknown flag refused");
	buf[5] = WIRE_HELLO_RESUME;
	buf[4] = 3;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.version == 3 && d.flags == WIRE_HELLO_RESUME,
	    "version 3 with the resume flag");
	buf[5] = 0;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.version == 3 && d.flags == 0, "version 3 without resume");
	buf[4] = 4;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.version == 4, "version 4 understood");
	buf[4] = 5;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.version == 5, "version 5 understood");
	buf[4] = 6;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.version == 6, "version 6 understood");
	buf[4] = 7;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.version == 7, "version 7 understood");
	buf[4] = 8;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.version == 8, "version 8 understood");
	buf[4] = 9;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.version == 9, "version 9 understood");
	buf[4] = 10;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.version == 10, "version 10 understood");
	buf[4] = 11;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.version == 11, "version 11 understood");
	buf[4] = 12;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.version == 12, "version 12 understood");
	buf[4] = 13;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_EVERSION,
	    "version 13 refused");
	ok(wire_version_said(5, 1) == 5 && wire_version_said(4, 1) == 4 &&
	    wire_version_said(4, 0) == 4 && wire_version_said(3, 1) == 3 &&
	    wire_version_said(2, 0) == 1 && wire_version_said(2, 1) == 2 &&
	    wire_version_said(1, 1) == 1 &&
	    wire_version_said(9, 0) == 9 &&
	    wire_version_said(10, 0) == 10 &&
	    wire_version_said(11, 0) == 11 &&
	    wire_version_said(12, 0) == WIRE_VERSION,
	    "the version a hello says: the cap, 1 below 3 without resume");
	buf[4] = 0;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_EVERSION,
	    "version 0 refused");
	buf[4] = WIRE_VERSION;
	buf[9] = 1;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_ERESERVED,
	    "reserved bytes refused");
	buf[9] = 0;
	buf[5] = WIRE_HELLO_AUTH;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.flags == WIRE_HELLO_AUTH, "the auth flag is decoded");
	buf[5] = WIRE_HELLO_NOTIFY;
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_OK &&
	    d.flags == WIRE_HELLO_NOTIFY, "the notify flag is decoded");
	buf[5] = 0;

	h.credits = WIRE_CREDITS_MIN - 1;
	wire_hello_encode(buf, &h);
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_ECREDITS,
	    "too few credits refused");
	h.credits = WIRE_CREDITS_MAX + 1;
	wire_hello_encode(buf, &h);
	ok(wire_hello_decode(buf, WIRE_HELLO_LEN, &d) == WIRE_ECREDITS,
	    "too many credits refused");
}

static void
test_imm(void)
{
	uint32_t s, l, imm;
	int all = 1;
	uint32_t streams[] = { 0, 1, 8191, 16383 };
	uint32_t lens[] = { 1, 2, 4096, 65535, 65536 };
	size_t i, j;

	for (i = 0; i < 4; i++)
		for (j = 0; j < 5; j++) {
			imm = wire_imm_encode(streams[i], lens[j]);
			if (wire_imm_decode(imm, &s, &l) != WIRE_OK ||
			    s != streams[i] || l != lens[j])
				all = 0;
		}
	ok(all, "immediates round-trip at the extremes");
	ok(wire_imm_decode(0x40000000u, &s, &l) == WIRE_EOP,
	    "immediate op 1 refused");
	ok(wire_imm_decode(0xffffffffu, &s, &l) == WIRE_EOP,
	    "immediate op 3 refused");
}

static void
test_strings(void)
{
	int e, all = 1;

	for (e = WIRE_OK; e <= WIRE_EFAMILY; e++)
		if (strcmp(wire_strerror(e), "unknown error") == 0)
			all = 0;
	ok(all, "every decoder error has a description");
	ok(strcmp(wire_reason_str(WIRE_REASON_NO_TUNNEL),
	    "no such tunnel on the peer") == 0, "reason text");
	ok(strcmp(wire_reason_str(999), "unknown reason") == 0,
	    "unknown reason text");
}

static void
test_note(void)
{
	uint8_t note[WIRE_NOTE_LEN], pad[148];
	struct wire_note n;

	wire_note_encode(note, &(struct wire_note){ WIRE_VERSION, 0 });
	ok(memcmp(note, "RSTR", 4) == 0 && note[4] == WIRE_VERSION &&
	    note[5] == 0 && note[7] == 0, "a refusal note: magic, version");
	ok(wire_note_decode(note, sizeof(note), &n) && n.version ==
	    WIRE_VERSION && n.why == WIRE_NOTE_REFUSED,
	    "a refusal note decodes to the version it says, refused");
	wire_note_encode(note, &(struct wire_note){ 3, 0 });
	ok(wire_note_decode(note, sizeof(note), &n) && n.version == 3,
	    "a version-3 peer's note says 3 (a version-4 side steps down)");
	wire_note_encode(note, &(struct wire_note){ WIRE_VERSION,
	    WIRE_NOTE_BUSY });
	ok(note[5] == WIRE_NOTE_BUSY && wire_note_decode(note, sizeof(note),
	    &n) && n.why == WIRE_NOTE_BUSY, "a busy note says so in byte 5");
	note[5] = 77;
	ok(wire_note_decode(note, sizeof(note), &n) &&
	    n.why == WIRE_NOTE_REFUSED, "an unknown why is a refusal");
	ok(!wire_note_decode(note, sizeof(note) - 1, &n),
	    "a short refusal note is none");
	ok(!wire_note_decode(NULL, 0, &n), "no reject data is no note");
	memset(pad, 0, sizeof(pad));
	ok(!wire_note_decode(pad, sizeof(pad), &n),
	    "zero padding (an older peer's reject) is no note");
}

/* Each type's name and version, as wire.h's list says them. */
static void
test_rec_types(void)
{
	static const struct {
		uint8_t type;
		const char *name;
		unsigned version;
	} want[] = {
		{ WIRE_MSG_CREDIT, "MSG_CREDIT", 1 }, { WIRE_CREDIT, "CREDIT", 1 },
		{ WIRE_OPEN, "OPEN", 1 }, { WIRE_OPEN_OK, "OPEN_OK", 1 },
		{ WIRE_REFUSE, "REFUSE", 1 }, { WIRE_SHUTDOWN, "SHUTDOWN", 1 },
		{ WIRE_CLOSE, "CLOSE", 1 }, { WIRE_RESET, "RESET", 1 },
		{ WIRE_KEEPALIVE, "KEEPALIVE", 1 }, { WIRE_GOAWAY, "GOAWAY", 1 },
		{ WIRE_AUTH, "AUTH", 1 }, { WIRE_RESUME, "RESUME", 2 },
		{ WIRE_RESUME_STREAM, "RESUME_STREAM", 2 },
		{ WIRE_RESUME_DENIED, "RESUME_DENIED", 2 },
		{ WIRE_ORIGIN, "ORIGIN", 3 }, { WIRE_RING, "RING", 4 },
		{ WIRE_RING_AT, "RING_AT", 4 },
		{ WIRE_RESUME_PROOF, "RESUME_PROOF", 5 },
		{ WIRE_HANDSHAKE, "HANDSHAKE", 6 },
		{ WIRE_RESUME_COUNT, "RESUME_COUNT", 10 },
		{ WIRE_FENCE, "FENCE", 12 },
		{ WIRE_FENCED, "FENCED", 12 },
	};
	size_t i, bad = 0;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (strcmp(wire_rec_name(want[i].type), want[i].name) != 0 ||
		    wire_rec_version(want[i].type) != want[i].version) {
			printf("# type %u: %s, version %u\n",
			    (unsigned)want[i].type,
			    wire_rec_name(want[i].type),
			    wire_rec_version(want[i].type));
			bad++;
		}
	ok(bad == 0, "every record type has its name and its version");
	ok(strcmp(wire_rec_name(0), "?") == 0 && wire_rec_version(0) == 0 &&
	    strcmp(wire_rec_name(WIRE_FENCED + 1), "?") == 0 &&
	    wire_rec_version(WIRE_FENCED + 1) == 0 &&
	    wire_rec_version(255) == 0, "types 0, 24 and 255 are none");
}

/* How many lanes two hellos make (wire_hello_lanes). */
static void
test_lanes(void)
{
	struct wire_hello a, b;

	memset(&a, 0, sizeof(a));
	a.version = 8;
	b = a;
	a.flags = b.flags = WIRE_HELLO_LANES;
	ok(wire_hello_lanes(&a, &b) == 2, "both say LANES: two lanes");
	b.flags = 0;
	ok(wire_hello_lanes(&a, &b) == 1 && wire_hello_lanes(&b, &a) == 1,
	    "one says nothing: one lane, whichever side");
	a.flags = b.flags = WIRE_HELLO_LANES | WIRE_HELLO_IDENTITY;
	ok(wire_hello_lanes(&a, &b) == 2,
	    "identities without sealing: two lanes");
	a.flags |= WIRE_HELLO_SEAL;
	ok(wire_hello_lanes(&a, &b) == 1 && wire_hello_lanes(&b, &a) == 1,
	    "sealed at version 8: one lane on both");
	a.version = 9;
	ok(wire_hello_lanes(&a, &b) == 1 && wire_hello_lanes(&b, &a) == 1,
	    "sealed, one side at version 9, the other 8: one lane on both");
	b.version = 9;
	ok(wire_hello_lanes(&a, &b) == 2 && wire_hello_lanes(&b, &a) == 2,
	    "sealed, both at version 9: two lanes on both");
	b.version = 8;
	b.flags &= (uint8_t)~WIRE_HELLO_IDENTITY;
	ok(wire_hello_lanes(&a, &b) == 2,
	    "SEAL without both identities seals nothing: two lanes");
	/* Without immediates (iWARP): version 12 fences lane switches. */
	a.version = 11;
	b.version = 12;
	a.flags = WIRE_HELLO_LANES | WIRE_HELLO_NOTIFY;
	b.flags = WIRE_HELLO_LANES;
	ok(wire_hello_lanes(&a, &b) == 1 && wire_hello_lanes(&b, &a) == 1,
	    "without immediates, one side at version 11: one lane on both");
	b.flags = WIRE_HELLO_LANES | WIRE_HELLO_NOTIFY;
	ok(wire_hello_lanes(&a, &b) == 1 && wire_hello_lanes(&b, &a) == 1,
	    "without immediates, both say so, one at 11: one lane on both");
	a.version = 12;
	a.flags = WIRE_HELLO_LANES;
	ok(wire_hello_lanes(&a, &b) == 2 && wire_hello_lanes(&b, &a) == 2,
	    "without immediates (either hello), both at version 12: two "
	    "lanes on both");
	a.version = b.version = 11;
	a.flags = b.flags = WIRE_HELLO_LANES;
	ok(wire_hello_lanes(&a, &b) == 2,
	    "with immediates at version 11: two lanes");
}

int
main(void)
{

	test_rec_types();
	test_records();
	test_handshake_rec();
	test_hello();
	test_lanes();
	test_imm();
	test_note();
	test_strings();
	return (tap_done());
}
