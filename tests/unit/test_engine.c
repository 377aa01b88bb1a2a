/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/engine: the behaviours the protocol promises, each
 * checked on a hand-driven fabric (tests/sim/fabric.c) where the order of
 * events is fixed, so a failure points at one rule.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "engine_fixture.h"
#include "noise.h"
#include "seal.h"
#include "tap.h"

static void
test_conf(void)
{
	struct engine_conf c = conf(4, 4);
	uint8_t buf[4 * WIRE_MSG_SIZE];
	const char *why;
	struct engine *e;

	c.ctrl_send = buf;
	ok(engine_conf_check(&c) == NULL, "minimum depths are accepted");
	c.sq_size = 2;
	why = engine_conf_check(&c);
	ok(why && strstr(why, "sq_size") && strstr(why, "minimum 4"),
	    "sq_size 2 is refused by name: %s", why ? why : "(null)");
	c.sq_size = 4;
	c.rq_size = 3;
	why = engine_conf_check(&c);
	ok(why && strstr(why, "rq_size"), "rq_size 3 is refused");
	c.rq_size = 4;
	c.max_streams = 0;
	ok(engine_new(&c, &why) == NULL && strstr(why, "max_streams"),
	    "max_streams 0 is refused");
	c.max_streams = 1;
	e = engine_new(&c, &why);
	ok(e != NULL, "engine_new with minimum sizes");
	engine_free(e);
	engine_free(NULL);
	ok(1, "engine_free(NULL) is a no-op");
}

static void
test_before_connect(void)
{
	struct engine_conf c = conf(8, 16);
	uint8_t buf[8 * WIRE_MSG_SIZE];
	struct engine_wr wrs[4];
	struct engine_ring r = { 0x1000, 4096, 1, NULL };
	uint32_t slots[64];
	const char *why;
	struct engine *e;
	struct wire_hello h;

	c.ctrl_send = buf;
	e = engine_new(&c, &why);
	ok(engine_take_recvs(e, slots, 64) == 16,
	    "all 16 receives are handed out before connecting");
	ok(slots[0] == 0 && slots[15] == 15, "receive slots are 0..15");
	engine_hello(e, &h);
	ok(h.credits == 16 && h.version == WIRE_VERSION && h.flags == 0,
	    "hello grants the posted receives as credits");
	engine_version_cap(e, 2);
	engine_hello(e, &h);
	ok(h.version == 1 && h.flags == 0,
	    "capped at 2 without resume, a side says version 1");
	ok(engine_open(e, "t", &r, &r, NULL) == ENGINE_EDOWN,
	    "no stream opens before the link is up");
	ok(engine_take_wrs(e, wrs, 4) == 0, "no work before the link is up");
	engine_free(e);
}

static void
test_sizes(void)
{
	struct t T;
	struct tstream s, big;
	struct engine_ring bad = { 0x1000, 6000, 1, NULL }, good = { 0x1000, 4096, 1, NULL };
	struct engine_conf c;
	int bad_bytes = 0, k;
	uint32_t got = 0, chunk;

	setup(&T, conf(16, 16), conf(16, 16));
	ok(engine_open(T.f.side[0].e, "t", &bad, &good, NULL) == ENGINE_EINVAL,
	    "a 6000-byte send ring is refused, not rounded");
	bad.size = 2048;
	ok(engine_open(T.f.side[0].e, "t", &good, &bad, NULL) == ENGINE_EINVAL,
	    "a 2048-byte receive ring is refused");
	ok(engine_open(T.f.side[0].e, "bad name", &good, &good, NULL) ==
	    ENGINE_EINVAL, "a tunnel name with a space is refused");

	/* 64 MiB rings on one side, 4 KiB on the other, moving 1 MiB. */
	T.acc_ring = 4096;
	ok(open_stream(&T, &big, 64u << 20, 64u << 20) >= 0,
	    "a stream with 64 MiB rings opens");
	settle(&T);
	ok(big.events & ENGINE_EV_OPENED, "and is accepted");
	while (got < (1u << 20)) {
		put(T.f.side[0].e, big.id, big.tx, (1u << 20) - got, 0xab,
		    &big.tx_at);
		settle(&T);
		got += take(T.f.side[1].e, T.acc[0].id, T.acc[0].rx, 1u << 20,
		    0xab, &T.acc[0].rx_at, &bad_bytes);
		settle(&T);
	}
	ok(got == (1u << 20) && !bad_bytes,
	    "1 MiB crosses from a 64 MiB ring into a 4 KiB ring intact");
	ok(T.f.side[0].max_wr_len <= 4096,
	    "writes never exceed the smaller ring (%llu)",
	    (unsigned long long)T.f.side[0].max_wr_len);
	teardown(&T);
	tstream_free(&big);

	/*
	 * 1 MiB rings both ways: writes are cut into chunks, the default
	 * one and the largest the immediate can say (64 KiB).
	 */
	for (k = 0; k < 2; k++) {
		c = conf(64, 64);
		c.chunk = k == 0 ? 0 : WIRE_WRITE_MAX;
		chunk = k == 0 ? WINDOW_CHUNK : WIRE_WRITE_MAX;
		setup(&T, c, conf(64, 64));
		T.acc_ring = 1u << 20;
		open_stream(&T, &s, 1u << 20, 1u << 20);
		settle(&T);
		put(T.f.side[0].e, s.id, s.tx, 1u << 20, 0x11, &s.tx_at);
		settle(&T);
		got = take(T.f.side[1].e, T.acc[0].id, T.acc[0].rx, 1u << 20,
		    0x11, &T.acc[0].rx_at, &bad_bytes);
		ok(got == (1u << 20) && !bad_bytes, "1 MiB in one go, %u-byte "
		    "chunks", chunk);
		ok(T.f.side[0].max_wr_len == chunk, "no write exceeds the "
		    "chunk, and big ones use all of it (%llu)",
		    (unsigned long long)T.f.side[0].max_wr_len);
		ok(T.f.side[0].writes_posted == (1u << 20) / chunk,
		    "1 MiB took %u writes (%llu)", (1u << 20) / chunk,
		    (unsigned long long)T.f.side[0].writes_posted);
		teardown_n(&T, &s, 1);
	}
	c.chunk = WIRE_WRITE_MAX + 1;
	ok(engine_conf_check(&c) != NULL, "a chunk above 64 KiB is refused");
}

static void
test_wrap_and_credit(void)
{
	struct t T;
	struct tstream s;
	struct tstream *a = &T.acc[0];
	struct engine_stats st;
	uint64_t w0, c0;
	int bad = 0;

	setup(&T, conf(16, 16), conf(16, 16));
	open_stream(&T, &s, 4096, 4096);
	settle(&T);

	put(T.f.side[0].e, s.id, s.tx, 3000, 1, &s.tx_at);
	settle(&T);
	ok(take(T.f.side[1].e, a->id, a->rx, 1000, 1, &a->rx_at, &bad) == 1000,
	    "1000 of 3000 bytes read");
	engine_stats(T.f.side[1].e, &st);
	c0 = st.credit_updates;
	settle(&T);
	engine_stats(T.f.side[1].e, &st);
	ok(st.credit_updates == c0,
	    "no credit after 1000 bytes (below a quarter of 4096)");
	take(T.f.side[1].e, a->id, a->rx, 100, 1, &a->rx_at, &bad);
	settle(&T);
	engine_stats(T.f.side[1].e, &st);
	ok(st.credit_updates == c0 + 1,
	    "one credit update once 1100 bytes (a quarter) were read");
	take(T.f.side[1].e, a->id, a->rx, 1900, 1, &a->rx_at, &bad);
	settle(&T);

	/* 2000 bytes from offset 3000 cross the end of both rings. */
	w0 = T.f.side[0].writes_posted;
	put(T.f.side[0].e, s.id, s.tx, 2000, 2, &s.tx_at);
	settle(&T);
	ok(T.f.side[0].writes_posted - w0 == 2,
	    "a span across the ring's end costs exactly two writes");
	ok(take(T.f.side[1].e, a->id, a->rx, 2000, 2, &a->rx_at, &bad) == 2000 &&
	    !bad, "and arrives intact");
	teardown(&T);
	tstream_free(&s);
}

static void
test_signal_inline(void)
{
	struct t T;
	struct tstream s;
	struct engine_conf a = conf(64, 64);
	struct engine_stats st;
	int bad = 0;

	a.signal_every = 8;
	a.inline_size = 64;
	a.window_min = 8u << 20;	/* signals as the window does not ask */
	setup(&T, a, conf(64, 64));
	T.acc_ring = 1u << 20;
	open_stream(&T, &s, 1u << 20, 1u << 20);
	settle(&T);
	engine_stats(T.f.side[0].e, &st);
	{
		uint64_t w0 = st.writes + st.sends, s0 = st.signaled;

		/* 32 writes of 32 KiB in one batch. */
		put(T.f.side[0].e, s.id, s.tx, 32 * 32768, 3, &s.tx_at);
		fab_pump(&T.f, 0);
		engine_stats(T.f.side[0].e, &st);
		ok(st.writes + st.sends - w0 >= 16,
		    "a batch of %llu work requests",
		    (unsigned long long)(st.writes + st.sends - w0));
		ok(st.signaled - s0 <= (st.writes + st.sends - w0) / 8 + 2,
		    "only every 8th (and the last) is signalled: %llu of %llu",
		    (unsigned long long)(st.signaled - s0),
		    (unsigned long long)(st.writes + st.sends - w0));
	}
	settle(&T);
	take(T.f.side[1].e, T.acc[0].id, T.acc[0].rx, 32 * 32768, 3,
	    &T.acc[0].rx_at, &bad);
	settle(&T);
	ok(!bad, "the batch arrives intact");
	ok(T.f.side[0].max_outstanding <= 64, "the send queue never overflows");
	/* A small write goes inline. */
	put(T.f.side[0].e, s.id, s.tx, 10, 4, &s.tx_at);
	fab_pump(&T.f, 0);
	{
		struct fab_side *fs = &T.f.side[0];
		struct fab_wr *last = &fs->wire[(fs->wire_head + fs->wire_n -
		    1) % fs->wire_cap];

		ok(fs->wire_n > 0 && last->wr.inlined && last->wr.len == 10,
		    "a 10-byte write is posted inline");
	}
	settle(&T);
	teardown(&T);
	tstream_free(&s);
}

static void
test_half_close_and_isolation(void)
{
	struct t T;
	struct tstream s1, s2;
	struct tstream *a1, *a2;
	int bad = 0;
	uint32_t got2 = 0, k;

	setup(&T, conf(16, 16), conf(16, 16));
	T.acc_ring = 4096;
	open_stream(&T, &s1, 4096, 4096);
	open_stream(&T, &s2, 4096, 4096);
	settle(&T);
	a1 = &T.acc[0];
	a2 = &T.acc[1];

	/* s1: 10000 bytes then shutdown; the reader sees EOF only at the end. */
	ok(put(T.f.side[0].e, s1.id, s1.tx, 4096, 5, &s1.tx_at) == 4096,
	    "s1: ring filled");
	settle(&T);
	engine_shutdown(T.f.side[0].e, s1.id);	/* too early: data pending */
	ok(engine_tx_space(T.f.side[0].e, s1.id, &k) == 0,
	    "no more bytes may be put after shutdown");
	settle(&T);
	ok(!(a1->events & ENGINE_EV_EOF), "no EOF while bytes are unread");

	/* s1's reader is slow: s2 still moves 64 KiB through 4 KiB rings. */
	while (got2 < 65536) {
		put(T.f.side[0].e, s2.id, s2.tx, 65536 - got2, 6, &s2.tx_at);
		settle(&T);
		got2 += take(T.f.side[1].e, a2->id, a2->rx, 65536, 6,
		    &a2->rx_at, &bad);
		settle(&T);
		if (T.f.failed)
			break;
	}
	ok(got2 == 65536 && !bad,
	    "a stalled reader on s1 does not stall s2 on the same link");

	/* The other direction of s1 still flows after its shutdown. */
	put(T.f.side[1].e, a1->id, a1->tx, 300, 7, &a1->tx_at);
	settle(&T);
	ok(take(T.f.side[0].e, s1.id, s1.rx, 300, 7, &s1.rx_at, &bad) == 300 &&
	    !bad,
	    "s1's reverse direction flows after the forward shutdown");

	ok(take(T.f.side[1].e, a1->id, a1->rx, 4095, 5, &a1->rx_at, &bad) ==
	    4095,
	    "s1: all but one byte read");
	settle(&T);
	ok(!(a1->events & ENGINE_EV_EOF), "still no EOF with one byte left");
	ok(take(T.f.side[1].e, a1->id, a1->rx, 10, 5, &a1->rx_at, &bad) == 1 &&
	    !bad,
	    "the last byte");
	settle(&T);
	ok(a1->events & ENGINE_EV_EOF, "EOF right after the last byte");

	/* Close both ways: s1 gracefully, everything released. */
	engine_shutdown(T.f.side[1].e, a1->id);
	settle(&T);
	ok(s1.events & ENGINE_EV_EOF, "reverse EOF after the reverse shutdown");
	engine_close(T.f.side[0].e, s1.id);
	engine_close(T.f.side[1].e, a1->id);
	settle(&T);
	ok((s1.events & ENGINE_EV_RELEASED) && (a1->events & ENGINE_EV_RELEASED),
	    "a graceful close releases both ends");
	ok(!(s1.events & ENGINE_EV_RESET) && !(a1->events & ENGINE_EV_RESET),
	    "without a reset");

	/* s2: the opener resets; the acceptor sees RESET with the reason. */
	engine_reset(T.f.side[0].e, s2.id, WIRE_REASON_RESET);
	settle(&T);
	ok((a2->events & ENGINE_EV_RESET) && a2->reason == WIRE_REASON_RESET,
	    "a reset reaches the peer with its reason");
	engine_close(T.f.side[1].e, a2->id);
	settle(&T);
	ok((s2.events & ENGINE_EV_RELEASED) && (a2->events & ENGINE_EV_RELEASED),
	    "a reset releases both ends");
	ok(engine_idle(T.f.side[0].e) && engine_idle(T.f.side[1].e),
	    "both engines are idle at the end");
	teardown(&T);
	tstream_free(&s1);
	tstream_free(&s2);
}

static void
test_refuse_and_limit(void)
{
	struct t T;
	struct tstream s;
	struct engine_conf b = conf(8, 8);
	struct engine_event ev;
	int id;

	b.max_streams = 1;
	setup(&T, conf(8, 8), b);
	/* Side 1 refuses by hand this time. */
	id = open_stream(&T, &s, 4096, 4096);
	fab_pump(&T.f, 0);
	land(&T, 0);
	ok(engine_next_event(T.f.side[1].e, &ev) &&
	    (ev.flags & ENGINE_EV_INCOMING) &&
	    strcmp(engine_tunnel(T.f.side[1].e, ev.stream), "t") == 0,
	    "the acceptor sees INCOMING with the tunnel name");
	engine_refuse(T.f.side[1].e, ev.stream, WIRE_REASON_NO_TUNNEL);
	settle(&T);
	ok((s.events & ENGINE_EV_REFUSED) && s.reason == WIRE_REASON_NO_TUNNEL,
	    "the opener sees REFUSED with 'no such tunnel'");
	ok(s.events & ENGINE_EV_RELEASED, "and the stream is released");
	ok(id >= 0, "open returned an id");
	tstream_free(&s);

	/* The acceptor has one slot: the second open is refused by limit. */
	{
		struct tstream x, y;

		open_stream(&T, &x, 4096, 4096);
		open_stream(&T, &y, 4096, 4096);
		settle(&T);
		ok((x.events & ENGINE_EV_OPENED) &&
		    (y.events & ENGINE_EV_REFUSED) &&
		    y.reason == WIRE_REASON_LIMIT,
		    "beyond the peer's stream limit: refused (%s)",
		    wire_reason_str(y.reason));
		tstream_free(&x);
		tstream_free(&y);
	}
	teardown(&T);

	/* An undecided INCOMING stream carries the user pointer set on it. */
	{
		int mark;

		setup(&T, conf(8, 8), conf(8, 8));
		open_stream(&T, &s, 4096, 4096);
		fab_pump(&T.f, 0);
		land(&T, 0);
		ok(engine_next_event(T.f.side[1].e, &ev) &&
		    (ev.flags & ENGINE_EV_INCOMING) && ev.user == NULL &&
		    engine_set_user(T.f.side[1].e, ev.stream, &mark) == 0,
		    "a user pointer can be set on an INCOMING stream");
		ok(engine_set_user(T.f.side[1].e, ev.stream + 1, &mark) ==
		    ENGINE_EINVAL, "but not on an id that is not INCOMING");
		engine_fail(T.f.side[1].e, ENGINE_ERR_TRANSPORT, "gone");
		ok(engine_next_event(T.f.side[1].e, &ev) && ev.user == &mark &&
		    (ev.flags & ENGINE_EV_RESET) &&
		    (ev.flags & ENGINE_EV_RELEASED),
		    "its RESET and RELEASED carry it");
		ok(engine_error_kind(T.f.side[1].e) == ENGINE_ERR_TRANSPORT &&
		    strcmp(engine_err_name(ENGINE_ERR_TRANSPORT), "transport") ==
		    0, "engine_fail's kind is what engine_error_kind says");
		tstream_free(&s);
		teardown(&T);
	}
}

static void
test_idle_abort_goaway(void)
{
	struct t T;
	struct tstream s, g;
	struct engine_ring r = { 0x1000, 4096, 1, NULL };

	setup(&T, conf(8, 8), conf(8, 8));
	ok(settle(&T) == 0, "a new link with nothing to say sends nothing");
	engine_keepalive(T.f.side[0].e);
	ok(settle(&T) == 1, "a keepalive is one SEND");

	/* Reset while OPENING: the RESET goes out after OPEN_OK, reason kept. */
	open_stream(&T, &s, 4096, 4096);
	engine_reset(T.f.side[0].e, s.id, WIRE_REASON_TIMEOUT);
	settle(&T);
	ok(T.nacc == 1 && (T.acc[0].events & ENGINE_EV_RESET) &&
	    T.acc[0].reason == WIRE_REASON_TIMEOUT,
	    "a stream reset while opening reaches the peer with its reason "
	    "(%s)", wire_reason_str(T.acc[0].reason));
	engine_close(T.f.side[1].e, T.acc[0].id);
	settle(&T);
	ok((s.events & ENGINE_EV_RELEASED) && !(s.events & ENGINE_EV_OPENED),
	    "and is released without an OPENED event");

	/* GOAWAY: refused at once, and no opens from the side going away. */
	engine_goaway(T.f.side[1].e, WIRE_REASON_SHUTTING_DOWN);
	ok(engine_open(T.f.side[1].e, "t", &r, &r, NULL) == ENGINE_EDOWN,
	    "a side going away opens nothing");
	open_stream(&T, &g, 4096, 4096);
	settle(&T);
	ok((g.events & ENGINE_EV_REFUSED) &&
	    g.reason == WIRE_REASON_SHUTTING_DOWN,
	    "an open towards a side going away is refused (%s)",
	    wire_reason_str(g.reason));
	ok(engine_peer_goaway(T.f.side[0].e), "the peer's GOAWAY is known");
	ok(engine_open(T.f.side[0].e, "t", &r, &r, NULL) == ENGINE_EDOWN,
	    "and no new stream is opened towards it");
	teardown(&T);
	tstream_free(&s);
	tstream_free(&g);
}

static void
test_violations(void)
{
	static const struct {
		const char *what;
		int kind;
		uint8_t buf[16];
		uint32_t len;
		uint32_t imm;
		const char *expect;
	} cases[] = {
		{ "data for a stream never opened", FAB_CQE_RECV_IMM, { 0 }, 10,
		    0x00050009, "not open" },
		{ "an immediate with an unknown operation", FAB_CQE_RECV_IMM,
		    { 0 }, 10, 0x80000009, "unknown operation" },
		{ "an empty SEND", FAB_CQE_RECV, { 0 }, 0, 0, "without records" },
		{ "an unknown record type", FAB_CQE_RECV, { 0x63, 2 }, 2, 0,
		    "unknown record type" },
		{ "a truncated record", FAB_CQE_RECV, { 3, 40, 0, 0 }, 4, 0,
		    "truncated" },
		{ "CLOSE for an unknown stream", FAB_CQE_RECV,
		    { 7, 6, 0, 0, 0, 9 }, 6, 0, "CLOSE for stream 9" },
		{ "a message credit beyond the queue", FAB_CQE_RECV,
		    { 1, 10, 0, 0, 1, 0, 0, 0, 0, 0 }, 10, 0,
		    "beyond the peer's receive queue" },
	};
	size_t k;
	struct t T;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		setup(&T, conf(8, 8), conf(8, 8));
		fab_inject(&T.f, 0, cases[k].kind, cases[k].buf, cases[k].len,
		    cases[k].imm);
		ok(failed_with(T.f.side[0].e, cases[k].expect),
		    "%s ends the link: %s", cases[k].what,
		    err_of(T.f.side[0].e));
		ok(engine_error_kind(T.f.side[0].e) == ENGINE_ERR_PROTOCOL,
		    "and its kind is %s",
		    engine_err_name(engine_error_kind(T.f.side[0].e)));
		teardown(&T);
	}

	/* Data beyond the free space of an open stream's ring. */
	{
		struct tstream s;

		setup(&T, conf(8, 8), conf(8, 8));
		open_stream(&T, &s, 4096, 4096);
		settle(&T);
		fab_inject(&T.f, 0, FAB_CQE_RECV_IMM, NULL, 4097,
		    wire_imm_encode(s.id, 4097));
		ok(failed_with(T.f.side[0].e, "exceed its free ring space"),
		    "4097 bytes into a 4096-byte ring end the link: %s",
		    err_of(T.f.side[0].e));
		events(&T, 0);
		ok((s.events & ENGINE_EV_RESET) &&
		    (s.events & ENGINE_EV_RELEASED),
		    "its streams are reset and released");
		ok(engine_take_wrs(T.f.side[0].e, NULL, 0) == 0,
		    "a failed link posts nothing");
		teardown(&T);
		tstream_free(&s);
	}
}

/*
 * Stand-in handshake of four messages (three before version 7, without
 * the responder's confirmation): message i (1 to 4) is 40 * i bytes of
 * (fleet + i); a side accepts the peer's if its fleet matches.  The
 * engine only carries and gates the messages; the daemon's Noise
 * handshake is tested with lib/noise.
 */
struct ths {
	uint8_t fleet;
	int initiator, steps;
	int v6;			/* three messages, as before version 7 */
	size_t got[5];
};

static int
ths_step(void *arg, const uint8_t *in, size_t inlen, uint8_t *out,
    size_t *outlen, const char **why)
{
	struct ths *h = arg;
	int want = h->initiator ? 2 * h->steps : 2 * h->steps + 1, i;
	int last = h->v6 ? 3 : 4;

	h->steps++;
	*outlen = 0;
	if (in != NULL) {
		for (i = 0; i < (int)inlen; i++)
			if (in[i] != (uint8_t)(h->fleet + want))
				break;
		if (inlen != (size_t)(40 * want) || i < (int)inlen) {
			*why = "not of this fleet";
			return (-1);
		}
		h->got[want] = inlen;
	}
	if (want == last)
		return (ENGINE_HS_DONE);
	*outlen = (size_t)(40 * (want + 1));
	memset(out, h->fleet + want + 1, *outlen);
	return (want + 1 == last ? ENGINE_HS_DONE : want + 1 == 3 ?
	    ENGINE_HS_KEYS : ENGINE_HS_MORE);
}

/* Both sides' hellos capped at version ${cap} (0: the newest). */
static void
hs_pair(struct t *T, struct engine_conf *c, struct ths *ha, struct ths *hb,
    uint8_t fa, int fb, unsigned cap)
{

	memset(ha, 0, sizeof(*ha));
	memset(hb, 0, sizeof(*hb));
	ha->fleet = fa;
	ha->initiator = 1;
	hb->fleet = (uint8_t)fb;
	ha->v6 = hb->v6 = cap == 6;
	memset(T, 0, sizeof(*T));
	T->acc_ring = 4096;
	fab_init_seal(&T->f, c, c, &(struct engine_auth){ .initiator = 1,
	    .step = ths_step, .arg = ha, .seal = 1 },
	    fb < 0 ? NULL : &(struct engine_auth){ .step = ths_step,
	    .arg = hb, .aesgcm = 1 }, NULL, NULL, cap);
}

/*
 * A stream from side 0 opens, is accepted, and carries ${n} bytes of
 * pattern ${key} intact, on a fabric that saw no violation.
 */
static int
stream_flows(struct t *T, uint32_t n, uint8_t key)
{
	struct tstream s;
	struct tstream *a;
	int bad = 0, rc;

	if (open_stream(T, &s, 4096, 4096) < 0)
		return (0);
	settle(T);
	put(T->f.side[0].e, s.id, s.tx, n, key, &s.tx_at);
	settle(T);
	a = &T->acc[T->nacc > 0 ? T->nacc - 1 : 0];
	rc = (s.events & ENGINE_EV_OPENED) && T->nacc > 0 &&
	    take(T->f.side[1].e, a->id, a->rx, n, key, &a->rx_at, &bad) == n &&
	    !bad && !T->f.failed;
	tstream_free(&s);
	return (rc);
}

/*
 * The real handshake through the engine: lib/noise's Noise_XX with
 * static keys, as the daemon runs it (daemon/handshake.c adds the peers'
 * lists and the psk), and from version 7 the responder's confirmation:
 * BLAKE2b-256 keyed with Split's third key, of "rstream-confirm-v1" and
 * the handshake hash.  Its messages fit HANDSHAKE records and SENDs.
 */
struct rnoise {
	struct noise_hs hs;
	int initiator, started, split, nmsg;
	int v6;			/* no confirmation, as before version 7 */
	int spoil;		/* responder: a wrong confirmation */
	uint8_t priv[NOISE_KEY_LEN], peer_pub[NOISE_KEY_LEN];
	uint8_t h[NOISE_HASH_LEN], confirm[32];
	size_t sizes[4];	/* the messages, 1 to 4, each side its own */
	struct seal_pair seal;		/* lib/seal, keyed by Split */
};

static void
rnoise_confirm(struct rnoise *r, const uint8_t k3[NOISE_KEY_LEN])
{
	static const char label[] = "rstream-confirm-v1";
	crypto_generichash_state st;

	crypto_generichash_init(&st, k3, NOISE_KEY_LEN, sizeof(r->confirm));
	crypto_generichash_update(&st, (const uint8_t *)label,
	    sizeof(label) - 1);
	crypto_generichash_update(&st, r->h, sizeof(r->h));
	crypto_generichash_final(&st, r->confirm, sizeof(r->confirm));
}

static int
rnoise_step(void *arg, const uint8_t *in, size_t inlen, uint8_t *out,
    size_t *outlen, const char **why)
{
	struct rnoise *r = arg;
	uint8_t c1[NOISE_KEY_LEN], c2[NOISE_KEY_LEN], k3[NOISE_KEY_LEN];
	size_t plen;

	*outlen = 0;
	*why = "noise";
	if (r->split) {
		*why = "wrong confirmation";
		return (inlen == sizeof(r->confirm) && sodium_memcmp(in,
		    r->confirm, inlen) == 0 ? ENGINE_HS_DONE : -1);
	}
	if (!r->started) {
		r->started = 1;
		if (noise_init(&r->hs, r->initiator, (const uint8_t *)"p", 1,
		    r->priv, NULL) != 0)
			return (-1);
	}
	if (in != NULL && noise_read(&r->hs, in, inlen, NULL, 0, &plen) != 0)
		return (-1);
	if (!noise_done(&r->hs) && noise_write(&r->hs, NULL, 0, out,
	    WIRE_HS_MAX, outlen) != 0)
		return (-1);
	if (*outlen > 0)
		r->sizes[2 * r->nmsg++ + !r->initiator] = *outlen;
	if (!noise_done(&r->hs))
		return (ENGINE_HS_MORE);
	if (noise_remote_static(&r->hs) == NULL || memcmp(
	    noise_remote_static(&r->hs), r->peer_pub, NOISE_KEY_LEN) != 0) {
		*why = "not the peer's key";
		return (-1);
	}
	noise_split(&r->hs, c1, c2, k3, r->h);
	rnoise_confirm(r, k3);
	r->split = 1;
	if (seal_dir_init(&r->seal.tx, SEAL_CHACHAPOLY, r->initiator ? c1 : c2) ||
	    seal_dir_init(&r->seal.rx, SEAL_CHACHAPOLY, r->initiator ? c2 : c1)) {
		*why = "seal_dir_init";
		return (-1);
	}
	if (r->v6)
		return (ENGINE_HS_DONE);
	if (r->initiator)
		return (ENGINE_HS_KEYS);
	memcpy(out, r->confirm, sizeof(r->confirm));
	out[0] ^= (uint8_t)r->spoil;
	*outlen = sizeof(r->confirm);
	r->sizes[3] = *outlen;
	return (ENGINE_HS_DONE);
}

/* The link and the seal directions of both sides go. */
static void
rnoise_teardown(struct t *T, struct rnoise *ra, struct rnoise *rb)
{
	teardown(T);
	seal_pair_wipe(&ra->seal);
	seal_pair_wipe(&rb->seal);
}

/*
 * Two sides with fresh static keys, side 1 expecting side 0's unless
 * ${stranger}; side 0 asks for sealing if ${seal}; both hellos capped at
 * version ${cap} (0: the newest).  Connected, message 1 not yet sent.
 */
static void
rnoise_pair(struct t *T, struct engine_conf *c, struct rnoise *ra,
    struct rnoise *rb, int seal, int stranger, unsigned cap)
{
	uint8_t pa[NOISE_KEY_LEN], pb[NOISE_KEY_LEN];

	memset(ra, 0, sizeof(*ra));
	memset(rb, 0, sizeof(*rb));
	noise_keygen(ra->priv, pa);
	noise_keygen(rb->priv, pb);
	memcpy(ra->peer_pub, pb, sizeof(pb));
	memcpy(rb->peer_pub, pa, sizeof(pa));
	if (stranger)
		memset(rb->peer_pub, 7, sizeof(rb->peer_pub));
	ra->initiator = 1;
	ra->v6 = rb->v6 = cap == 6;
	memset(T, 0, sizeof(*T));
	T->acc_ring = 4096;
	fab_init_seal(&T->f, c, c, &(struct engine_auth){ .initiator = 1,
	    .step = rnoise_step, .arg = ra, .seal = (uint8_t)seal },
	    &(struct engine_auth){ .step = rnoise_step, .arg = rb },
	    &(struct engine_seal){ seal_pair_seal, seal_pair_open,
	    seal_pair_restore, seal_pair_ptr, &ra->seal },
	    &(struct engine_seal){ seal_pair_seal, seal_pair_open,
	    seal_pair_restore, seal_pair_ptr, &rb->seal }, cap);
}

/* Side ${side} opens no stream: ENGINE_EDOWN. */
static int
no_stream(struct t *T, int side)
{
	struct tstream s;
	struct engine_ring tx, rx;
	int rc;

	rings(T, side, &s, 4096, 4096, &tx, &rx);
	rc = engine_open(T->f.side[side].e, "t", &tx, &rx, &s) ==
	    ENGINE_EDOWN;
	tstream_free(&s);
	return (rc);
}

static void
test_handshake_noise(void)
{
	struct engine_conf c = conf(8, 8);
	struct rnoise ra, rb;
	struct engine *a, *b;
	struct t T;

	rnoise_pair(&T, &c, &ra, &rb, 1, 0, 0);
	settle(&T);
	ok(engine_authenticated(T.f.side[0].e) &&
	    engine_authenticated(T.f.side[1].e) &&
	    memcmp(ra.h, rb.h, sizeof(ra.h)) == 0,
	    "Noise_XX through the engine: both authenticated, one hash");
	ok(ra.sizes[0] == 32 && rb.sizes[1] == 96 && ra.sizes[2] == 64 &&
	    rb.sizes[3] == 32, "its messages are 32, 96 and 64 bytes, and "
	    "the confirmation 32");
	ok(stream_flows(&T, 3000, 0x21), "a stream carries data after it");
	ok(engine_sealed(T.f.side[0].e) && engine_sealed(T.f.side[1].e) &&
	    seal_dir_count(&ra.seal.tx) > 0 && seal_dir_count(&ra.seal.tx) ==
	    seal_dir_count(&rb.seal.rx) && seal_dir_count(&rb.seal.tx) ==
	    seal_dir_count(&ra.seal.rx), "sealed with the handshake's keys, from "
	    "the message after it (%llu and %llu messages)",
	    (unsigned long long)seal_dir_count(&ra.seal.tx),
	    (unsigned long long)seal_dir_count(&rb.seal.tx));
	rnoise_teardown(&T, &ra, &rb);

	/* Neither asks for sealing: the link stays in clear. */
	rnoise_pair(&T, &c, &ra, &rb, 0, 0, 0);
	settle(&T);
	ok(stream_flows(&T, 3000, 0x22) && !engine_sealed(T.f.side[0].e) &&
	    seal_dir_count(&ra.seal.tx) == 0 && rb.sizes[3] == 32,
	    "without SEAL in either hello the link carries data in clear, "
	    "after the confirmation all the same");
	rnoise_teardown(&T, &ra, &rb);

	/* Side 1 expects another key: it fails the link at message 3. */
	rnoise_pair(&T, &c, &ra, &rb, 1, 1, 0);
	settle(&T);
	ok(failed_with(T.f.side[1].e, "not the peer's key"),
	    "an unexpected static key fails the link: %s",
	    err_of(T.f.side[1].e));
	ok(!engine_authenticated(T.f.side[0].e) && rb.sizes[3] == 0,
	    "... with no confirmation: the initiator never authenticates");
	rnoise_teardown(&T, &ra, &rb);

	/*
	 * Version 7, one message at a time: message 3 leaves the initiator
	 * unauthenticated, opening no stream, until the responder accepted
	 * it and its confirmation arrived.
	 */
	rnoise_pair(&T, &c, &ra, &rb, 1, 0, 0);
	a = T.f.side[0].e;
	b = T.f.side[1].e;
	hop(&T, 0);
	hop(&T, 1);
	fab_pump(&T.f, 0);
	ok(ra.sizes[2] == 64 && !engine_authenticated(a) && no_stream(&T, 0),
	    "the initiator sent message 3: not authenticated, no stream "
	    "opens");
	land(&T, 0);
	ok(engine_authenticated(b) && !engine_authenticated(a) &&
	    no_stream(&T, 0), "the responder accepted it; the initiator "
	    "still waits for its confirmation");
	fab_pump(&T.f, 1);
	ok(rb.sizes[3] == 32 && !engine_authenticated(a) && no_stream(&T, 0),
	    "the confirmation is on its way: still nothing");
	land(&T, 1);
	ok(engine_authenticated(a) && engine_error(a) == NULL,
	    "the confirmation checked: the initiator is authenticated");
	ok(stream_flows(&T, 3000, 0x23) && engine_sealed(a) &&
	    seal_dir_count(&ra.seal.tx) == seal_dir_count(&rb.seal.rx) &&
	    seal_dir_count(&rb.seal.tx) == seal_dir_count(&ra.seal.rx),
	    "a sealed stream carries data after it, the confirmation in "
	    "clear");
	rnoise_teardown(&T, &ra, &rb);

	/* A wrong confirmation fails the link, as authentication. */
	rnoise_pair(&T, &c, &ra, &rb, 1, 0, 0);
	rb.spoil = 1;
	settle(&T);
	a = T.f.side[0].e;
	ok(failed_with(a, "authentication failed: wrong confirmation") &&
	    engine_error_kind(a) == ENGINE_ERR_AUTH,
	    "a wrong confirmation fails the initiator's link: %s",
	    err_of(a));
	ok(!engine_authenticated(a) && T.nacc == 0,
	    "... which never authenticated, nor opened a stream");
	rnoise_teardown(&T, &ra, &rb);

	/* Version 6: no confirmation; the initiator is done at message 3. */
	rnoise_pair(&T, &c, &ra, &rb, 1, 0, 6);
	settle(&T);
	ok(engine_version(T.f.side[0].e) == 6 &&
	    engine_authenticated(T.f.side[0].e) &&
	    engine_authenticated(T.f.side[1].e) && rb.sizes[3] == 0,
	    "at version 6 both authenticate after message 3, no confirmation");
	ok(stream_flows(&T, 3000, 0x24) && engine_sealed(T.f.side[0].e) &&
	    seal_dir_count(&ra.seal.tx) == seal_dir_count(&rb.seal.rx) &&
	    seal_dir_count(&rb.seal.tx) == seal_dir_count(&ra.seal.rx),
	    "... and seal as before");
	rnoise_teardown(&T, &ra, &rb);
}

static void
test_handshake(void)
{
	struct engine_conf c = conf(8, 8);
	struct ths ha, hb;
	struct tstream s;
	struct engine_ring tx, rx;
	struct engine_wr w[4];
	struct wire_hello h;
	struct engine *b;
	int held;
	struct t T;

	hs_pair(&T, &c, &ha, &hb, 3, 3, 0);
	engine_hello(T.f.side[0].e, &h);
	ok(h.flags == (WIRE_HELLO_IDENTITY | WIRE_HELLO_SEAL),
	    "a side with an identity says IDENTITY (and SEAL if asked)");
	engine_hello(T.f.side[1].e, &h);
	ok(h.flags == (WIRE_HELLO_IDENTITY | WIRE_HELLO_AESGCM),
	    "... and AESGCM if it can, and no AUTH without a key");
	rings(&T, 0, &s, 4096, 4096, &tx, &rx);
	ok(engine_open(T.f.side[0].e, "t", &tx, &rx, &s) == ENGINE_EDOWN,
	    "no stream opens before the handshake");
	tstream_free(&s);
	/* Message 1 to the responder, which answers with message 2. */
	b = T.f.side[1].e;
	fab_pump(&T.f, 0);
	fab_deliver(&T.f, 0);
	while (fab_complete(&T.f, 1) > 0)
		;
	ok(hb.got[1] == 40 && hb.steps == 1, "the responder read message 1");
	fab_pump(&T.f, 1);
	/* Between its message and the initiator's last it posts nothing. */
	engine_keepalive(b);
	held = engine_take_wrs(b, w, 4) == 0;
	ok(held, "the responder posts nothing while it waits for message 3");
	settle(&T);
	ok(ha.got[2] == 80 && hb.got[3] == 120 && ha.got[4] == 160 &&
	    ha.steps == 3 && hb.steps == 2,
	    "four messages (the confirmation last), each read once");
	ok(engine_authenticated(T.f.side[0].e) && engine_authenticated(b),
	    "both sides authenticated after the handshake");
	ok(stream_flows(&T, 1000, 0x5a), "a stream carries data after it");
	teardown(&T);

	/* Version 6: three messages; the initiator is done at its last. */
	hs_pair(&T, &c, &ha, &hb, 3, 3, 6);
	settle(&T);
	ok(ha.got[2] == 80 && hb.got[3] == 120 && ha.got[4] == 0 &&
	    ha.steps == 2 && hb.steps == 2 &&
	    engine_authenticated(T.f.side[0].e) &&
	    engine_authenticated(T.f.side[1].e) &&
	    stream_flows(&T, 1000, 0x5b),
	    "at version 6 three messages, no confirmation, as before");
	teardown(&T);

	/*
	 * Steps out of version 7's order fail the link: an initiator done at
	 * its message 3, a responder that does not confirm; and KEYS at 6.
	 */
	hs_pair(&T, &c, &ha, &hb, 3, 3, 0);
	ha.v6 = 1;
	settle(&T);
	ok(engine_error_kind(T.f.side[0].e) == ENGINE_ERR_LOCAL &&
	    !engine_authenticated(T.f.side[0].e),
	    "version 7: an initiator's step done at message 3 fails: %s",
	    err_of(T.f.side[0].e));
	teardown(&T);
	hs_pair(&T, &c, &ha, &hb, 3, 3, 0);
	hb.v6 = 1;
	settle(&T);
	ok(engine_error_kind(T.f.side[1].e) == ENGINE_ERR_LOCAL &&
	    !engine_authenticated(T.f.side[0].e),
	    "... a responder's done without its confirmation fails");
	teardown(&T);
	hs_pair(&T, &c, &ha, &hb, 3, 3, 6);
	ha.v6 = 0;
	settle(&T);
	ok(engine_error_kind(T.f.side[0].e) == ENGINE_ERR_LOCAL,
	    "version 6: an initiator's KEYS fails");
	teardown(&T);

	/*
	 * A confirmation before message 3 went (the initiator read message 2
	 * and its answer waits): unexpected.
	 */
	hs_pair(&T, &c, &ha, &hb, 3, 3, 0);
	hop(&T, 0);
	hop(&T, 1);
	{
		uint8_t m[WIRE_MSG_SIZE];
		struct wire_rec r;
		size_t n;

		memset(&r, 0, sizeof(r));
		r.type = WIRE_HANDSHAKE;
		r.hs_len = 160;
		memset(r.hs, 3 + 4, 160);
		n = wire_rec_encode(m, sizeof(m), &r);
		fab_inject(&T.f, 0, FAB_CQE_RECV, m, (uint32_t)n, 0);
		ok(ha.steps == 2 && failed_with(T.f.side[0].e, "unexpected "
		    "HANDSHAKE") && !engine_authenticated(
		    T.f.side[0].e), "a confirmation before message 3 went "
		    "ends the link: %s", err_of(T.f.side[0].e));
	}
	teardown(&T);

	/* A record after a handshake message, in its SEND: a violation. */
	hs_pair(&T, &c, &ha, &hb, 3, 3, 0);
	{
		uint8_t m[WIRE_MSG_SIZE];
		struct wire_rec r;
		size_t n;

		memset(&r, 0, sizeof(r));
		r.type = WIRE_HANDSHAKE;
		r.hs_len = 40;
		memset(r.hs, 3 + 1, 40);
		n = wire_rec_encode(m, sizeof(m), &r);
		memset(&r, 0, sizeof(r));
		r.type = WIRE_KEEPALIVE;
		n += wire_rec_encode(m + n, sizeof(m) - n, &r);
		b = T.f.side[1].e;
		fab_inject(&T.f, 1, FAB_CQE_RECV, m, (uint32_t)n, 0);
		ok(failed_with(b, "records after HANDSHAKE"),
		    "a record after HANDSHAKE in its SEND ends the link: %s",
		    err_of(b));
	}
	teardown(&T);

	/* Another fleet: the responder fails the link at message 1. */
	hs_pair(&T, &c, &ha, &hb, 3, 5, 0);
	settle(&T);
	b = T.f.side[1].e;
	ok(failed_with(b, "authentication failed: not of this "
	    "fleet") && engine_error_kind(b) == ENGINE_ERR_AUTH,
	    "a failed step fails the link: %s",
	    err_of(b));
	ok(!engine_authenticated(T.f.side[0].e),
	    "the initiator is not authenticated");
	teardown(&T);

	/* An identity on one side only: both refuse. */
	hs_pair(&T, &c, &ha, &hb, 3, -1, 0);
	ok(failed_with(T.f.side[0].e, "peer has no identity"),
	    "a side with an identity refuses a peer without: %s",
	    err_of(T.f.side[0].e));
	ok(failed_with(T.f.side[1].e, "this side has none"),
	    "a side without refuses a peer with one");
	teardown(&T);
}

static void
test_auth(void)
{
	struct engine_conf c = conf(8, 8);
	struct tauth ta, tb;
	struct tstream s;
	struct engine_ring tx, rx;
	struct wire_hello h;
	struct wire_rec r;
	uint8_t buf[WIRE_MSG_SIZE];
	size_t n;
	struct t T;

	/* Same key: the handshake runs in order, then streams flow. */
	auth_pair(&T, &c, &ta, &tb, 7, 7);
	engine_hello(T.f.side[0].e, &h);
	ok(h.flags == WIRE_HELLO_AUTH, "an authenticating side says so in "
	    "its hello");
	ok(!engine_authenticated(T.f.side[0].e) &&
	    !engine_authenticated(T.f.side[1].e),
	    "neither side is authenticated before the proofs");
	rings(&T, 0, &s, 4096, 4096, &tx, &rx);
	ok(engine_open(T.f.side[0].e, "t", &tx, &rx, &s) == ENGINE_EDOWN,
	    "no stream opens (no ring is granted) before authentication");
	tstream_free(&s);
	settle(&T);
	ok(engine_authenticated(T.f.side[0].e) &&
	    engine_authenticated(T.f.side[1].e),
	    "both sides authenticated after the exchange");
	ok(ta.proved == 1 && tb.proved == 1 && ta.verified == 1 &&
	    tb.verified == 1, "each side proved once and checked once");
	ok(tb.proved_after_verify == 1,
	    "the responder proved itself only after checking the initiator");
	ok(stream_flows(&T, 1000, 0x5a), "data flows on an authenticated "
	    "link");
	teardown(&T);

	/* Wrong key: the responder fails the link and never proves itself. */
	auth_pair(&T, &c, &ta, &tb, 7, 9);
	settle(&T);
	ok(tb.failed == 1 &&
	    failed_with(T.f.side[1].e, "authentication failed"),
	    "wrong key: the responder ends the link: %s",
	    err_of(T.f.side[1].e));
	ok(engine_error_kind(T.f.side[1].e) == ENGINE_ERR_AUTH,
	    "wrong key: the kind is authentication");
	ok(tb.proved == 0 && !engine_authenticated(T.f.side[0].e),
	    "wrong key: the responder never sends its proof");
	teardown(&T);

	/* One side authenticates, the other does not: both refuse. */
	auth_pair(&T, &c, &ta, &tb, 7, -1);
	ok(failed_with(T.f.side[0].e, "does not authenticate"),
	    "a keyed side refuses a peer without auth: %s",
	    err_of(T.f.side[0].e));
	ok(failed_with(T.f.side[1].e, "no key"),
	    "a keyless side refuses a peer that authenticates");
	teardown(&T);

	/* A peer that skips the proof: OPEN, data or a second AUTH. */
	auth_pair(&T, &c, &ta, &tb, 7, 7);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_OPEN;
	r.ring.addr = 0x10000;
	r.ring.rkey = 1;
	r.ring.size = 4096;
	r.name_len = 1;
	r.name[0] = 't';
	n = wire_rec_encode(buf, sizeof(buf), &r);
	fab_inject(&T.f, 1, FAB_CQE_RECV, buf, (uint32_t)n, 0);
	ok(failed_with(T.f.side[1].e, "OPEN before authentication"),
	    "OPEN before the proof ends the link: %s",
	    err_of(T.f.side[1].e));
	ok(T.nacc == 0, "and no stream was offered to the application");
	teardown(&T);

	auth_pair(&T, &c, &ta, &tb, 7, 7);
	fab_inject(&T.f, 1, FAB_CQE_RECV_IMM, NULL, 0, wire_imm_encode(0, 1));
	ok(failed_with(T.f.side[1].e, "data before authentication"),
	    "data before the proof ends the link");
	teardown(&T);

	auth_pair(&T, &c, &ta, &tb, 7, 7);
	settle(&T);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_AUTH;
	n = wire_rec_encode(buf, sizeof(buf), &r);
	fab_inject(&T.f, 1, FAB_CQE_RECV, buf, (uint32_t)n, 0);
	ok(failed_with(T.f.side[1].e, "unexpected AUTH"),
	    "a second AUTH ends the link");
	teardown(&T);

	/* Without auth, an AUTH record is a violation too. */
	setup(&T, c, c);
	fab_inject(&T.f, 1, FAB_CQE_RECV, buf, (uint32_t)n, 0);
	ok(failed_with(T.f.side[1].e, "unexpected AUTH"),
	    "AUTH on a link without authentication ends it");
	teardown(&T);
}

/* ---------------------------------------------------------------- resume */

static void
test_keep(void)
{
	struct rz R;
	struct t T;
	struct tstream k, u, q, x;
	struct tstream *ak;
	struct wire_hello h;
	struct engine_conf plain = conf(16, 16);
	uint64_t p0 = 0, p1 = 0;
	uint32_t off;
	int bad = 0;

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	engine_hello(E(&R, 0), &h);
	ok(h.version == WIRE_VERSION && h.flags == WIRE_HELLO_RESUME,
	    "a side offering resume says the newest version with RESUME");
	engine_version_cap(E(&R, 0), 1);
	engine_hello(E(&R, 0), &h);
	ok(h.version == 1 && h.flags == 0,
	    "capped at 1 (a version-1 peer's hello answered), a side "
	    "offering resume says 1, without RESUME");
	engine_version_cap(E(&R, 0), WIRE_VERSION);
	engine_hello(E(&R, 0), &h);
	ok(engine_can_resume(E(&R, 0)) && engine_can_resume(E(&R, 1)),
	    "both sides offered it: the link can resume");
	open_stream(&R.T, &k, 4096, 4096);
	ok(engine_keep(E(&R, 0), k.id) == 0,
	    "engine_keep right after engine_open");
	ok(!engine_kept(E(&R, 0), k.id), "it takes effect only once open");
	open_stream(&R.T, &u, 4096, 4096);
	settle(&R.T);
	ak = &R.T.acc[0];
	ok(engine_kept(E(&R, 0), k.id) && !engine_kept(E(&R, 0), u.id),
	    "once open, the stream asked for is kept, the other is not");
	ok(engine_keep(E(&R, 1), ak->id) == 0 && engine_kept(E(&R, 1), ak->id),
	    "an acceptor keeps right after engine_accept");

	ok(put(E(&R, 0), k.id, k.tx, 4096, 1, &p0) == 4096 &&
	    put(E(&R, 0), u.id, u.tx, 4096, 9, &u.tx_at) == 4096,
	    "both send rings filled");
	settle(&R.T);
	ok(engine_tx_space(E(&R, 0), k.id, &off) == 0,
	    "a kept stream's bytes stay after their WRITE completed");
	ok(engine_tx_space(E(&R, 0), u.id, &off) == 4096,
	    "an unkept stream's space returns with the completion");
	ok(engine_keep(E(&R, 0), u.id) == ENGINE_EINVAL,
	    "engine_keep after bytes were written is refused");
	k.events = 0;
	ok(take(E(&R, 1), ak->id, ak->rx, 1023, 1, &p1, &bad) == 1023 &&
	    !bad, "the reader takes 1023 bytes");
	settle(&R.T);
	ok(engine_tx_space(E(&R, 0), k.id, &off) == 0 &&
	    !(k.events & ENGINE_EV_WRITABLE),
	    "no CREDIT below a quarter of the ring: still no space");
	take(E(&R, 1), ak->id, ak->rx, 1, 1, &p1, &bad);
	settle(&R.T);
	ok(engine_tx_space(E(&R, 0), k.id, &off) == 1024 &&
	    (k.events & ENGINE_EV_WRITABLE),
	    "the CREDIT for 1024 bytes frees 1024 bytes, with WRITABLE");
	ok(put(E(&R, 0), k.id, k.tx, 4096, 1, &p0) == 1024,
	    "exactly those 1024 bytes can be put again");
	settle(&R.T);
	ok(take(E(&R, 1), ak->id, ak->rx, 8192, 1, &p1, &bad) == 4096 &&
	    !bad && p1 == p0, "and every byte arrives once, in order");
	settle(&R.T);

	/* A send ring under a quarter of the peer's receive ring: not kept. */
	R.T.acc_ring = 32768;
	open_stream(&R.T, &q, 4096, 4096);
	engine_keep(E(&R, 0), q.id);
	open_stream(&R.T, &x, 8192, 4096);
	engine_keep(E(&R, 0), x.id);
	settle(&R.T);
	ok(!engine_kept(E(&R, 0), q.id),
	    "a 4 KiB send ring towards a 32 KiB receive ring is not kept");
	ok(engine_kept(E(&R, 0), x.id),
	    "an 8 KiB one (exactly a quarter) is");
	ok(engine_keep(E(&R, 1), R.T.acc[2].id) == 0 &&
	    engine_kept(E(&R, 1), R.T.acc[2].id),
	    "the other way (32 KiB towards 4 KiB) is kept");
	put(E(&R, 0), q.id, q.tx, 4096, 3, &q.tx_at);
	settle(&R.T);
	ok(engine_tx_space(E(&R, 0), q.id, &off) == 4096,
	    "an engine_keep that did not take effect frees on completion");
	rz_teardown(&R);
	tstream_free(&k);
	tstream_free(&u);
	tstream_free(&q);
	tstream_free(&x);

	/* The peer does not offer resume. */
	setup(&T, rconf(16, 16), plain);
	engine_hello(T.f.side[1].e, &h);
	ok(h.version == WIRE_VERSION && h.flags == 0,
	    "a side without conf.resume says no RESUME flag");
	ok(!engine_can_resume(T.f.side[0].e) &&
	    !engine_can_resume(T.f.side[1].e),
	    "one side without resume: the link cannot resume");
	open_stream(&T, &k, 4096, 4096);
	ok(engine_keep(T.f.side[0].e, k.id) == 0,
	    "engine_keep is accepted where conf.resume is set");
	settle(&T);
	ok(!engine_kept(T.f.side[0].e, k.id),
	    "but does not take effect when the peer did not offer resume");
	ok(engine_keep(T.f.side[1].e, T.acc[0].id) == ENGINE_EINVAL,
	    "engine_keep fails without conf.resume");
	put(T.f.side[0].e, k.id, k.tx, 4096, 4, &k.tx_at);
	settle(&T);
	ok(engine_tx_space(T.f.side[0].e, k.id, &off) == 4096,
	    "and space returns on completion as before");
	engine_fail(T.f.side[0].e, ENGINE_ERR_TRANSPORT, "gone");
	events(&T, 0);
	ok((k.events & ENGINE_EV_RESET) && !(k.events & ENGINE_EV_SUSPENDED),
	    "such a stream is reset when the link fails");
	teardown(&T);
	tstream_free(&k);
}

static void
test_suspend(void)
{
	struct rz R;
	struct tstream k, u, p;
	struct tstream *ak, *au;
	struct engine_stats st;
	struct engine_wr wrs[4];
	struct engine_ring r = { 0x1000, 4096, 1, NULL };
	uint64_t t0 = 0, r1 = 0, t1 = 0, r0 = 0;
	uint32_t off;
	uint8_t junk[2] = { 0xee, 2 };
	int bad = 0;

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	open_stream(&R.T, &k, 4096, 4096);
	engine_keep(E(&R, 0), k.id);
	open_stream(&R.T, &u, 4096, 4096);
	settle(&R.T);
	ak = &R.T.acc[0];
	au = &R.T.acc[1];
	engine_keep(E(&R, 1), ak->id);
	put(E(&R, 0), k.id, k.tx, 1000, 1, &t0);
	put(E(&R, 1), ak->id, ak->tx, 700, 2, &t1);
	put(E(&R, 0), u.id, u.tx, 500, 3, &u.tx_at);
	settle(&R.T);
	open_stream(&R.T, &p, 4096, 4096);
	engine_keep(E(&R, 0), p.id);
	fab_pump(&R.T.f, 0);	/* its OPEN is lost with the link */
	rz_loss(&R, 0, 0);
	ok((k.events & ENGINE_EV_SUSPENDED) &&
	    !(k.events & (ENGINE_EV_RESET | ENGINE_EV_RELEASED)) &&
	    (ak->events & ENGINE_EV_SUSPENDED) &&
	    !(ak->events & (ENGINE_EV_RESET | ENGINE_EV_RELEASED)),
	    "a kept stream is SUSPENDED on both sides when the link fails");
	ok((u.events & ENGINE_EV_RESET) && (u.events & ENGINE_EV_RELEASED) &&
	    u.reason == WIRE_REASON_RESET && (au->events & ENGINE_EV_RESET) &&
	    !(u.events & ENGINE_EV_SUSPENDED),
	    "an unkept stream is reset and released");
	ok((p.events & ENGINE_EV_RESET) && (p.events & ENGINE_EV_RELEASED),
	    "a kept stream still opening is reset");
	ok(engine_suspended(R.old[0]) == 1 && engine_suspended(R.old[1]) == 1,
	    "one stream waits in each failed engine");
	ok(engine_active(R.old[0]) == 1, "and holds its slot");
	engine_stats(R.old[0], &st);
	ok(st.streams_suspended == 1, "counted as suspended");
	ok(engine_error_kind(R.old[0]) == ENGINE_ERR_TRANSPORT,
	    "the failed engine says transport");

	/* The application still drains and fills a suspended stream. */
	ok(take(R.old[0], k.id, k.rx, 4096, 2, &r0, &bad) == 700 && !bad,
	    "the 700 bytes that arrived can still be read");
	ok(take(R.old[1], ak->id, ak->rx, 4096, 1, &r1, &bad) == 1000 &&
	    !bad, "on both sides");
	ok(engine_tx_space(R.old[0], k.id, &off) == 3096 &&
	    put(R.old[0], k.id, k.tx, 4096, 1, &t0) == 3096,
	    "the send ring takes what the peer has not consumed for sure "
	    "(3096 bytes)");
	ok(engine_take_wrs(R.old[0], wrs, 4) == 0,
	    "but a failed engine posts nothing");
	ok(engine_open(R.old[0], "t", &r, &r, NULL) == ENGINE_EDOWN,
	    "and opens nothing");
	ok(engine_resume(R.old[0], R.old[1], R.token, ak->tx) ==
	    ENGINE_EDOWN, "nor resumes");
	rz_teardown(&R);
	ok((k.events & ENGINE_EV_RESET) && k.reason == WIRE_REASON_LINK_LOST &&
	    (k.events & ENGINE_EV_RELEASED), "engine_abandon ends it (%s)",
	    wire_reason_str(k.reason));
	tstream_free(&k);
	tstream_free(&u);
	tstream_free(&p);

	/* The embedder ending the link (ENGINE_ERR_LOCAL) suspends too. */
	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	open_stream(&R.T, &k, 4096, 4096);
	engine_keep(E(&R, 0), k.id);
	settle(&R.T);
	engine_fail(E(&R, 0), ENGINE_ERR_LOCAL, "ended here");
	events(&R.T, 0);
	ok((k.events & ENGINE_EV_SUSPENDED) && !(k.events & ENGINE_EV_RESET),
	    "engine_fail(ENGINE_ERR_LOCAL) suspends a kept stream");
	engine_abandon(E(&R, 0), WIRE_REASON_LINK_LOST);
	events(&R.T, 0);
	rz_teardown(&R);
	tstream_free(&k);

	/* A peer that breaks the protocol gets no second chance. */
	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	(void)rz_kept(&R, &k);
	fab_inject(&R.T.f, 0, FAB_CQE_RECV, junk, 2, 0);
	events(&R.T, 0);
	ok(engine_error_kind(E(&R, 0)) == ENGINE_ERR_PROTOCOL &&
	    (k.events & ENGINE_EV_RESET) && (k.events & ENGINE_EV_RELEASED) &&
	    !(k.events & ENGINE_EV_SUSPENDED) &&
	    engine_suspended(E(&R, 0)) == 0,
	    "a protocol violation resets even a kept stream");
	rz_teardown(&R);
	tstream_free(&k);
}

/* One stream of test_resume_data: pattern keys and cursors both ways. */
struct rs {
	struct tstream s;	/* side 0's end */
	struct tstream *a;	/* side 1's end */
	uint64_t t0, r1;	/* side 0 -> 1: put, taken */
	uint64_t t1, r0;	/* side 1 -> 0 */
	uint32_t k0, k1;
};

static void
test_resume_data(void)
{
	struct rz R;
	struct rs S[5];
	struct engine_stats st0, st1;
	struct engine *e0, *e1;
	int bad = 0, i, n, rounds;
	uint32_t off;

	/*
	 * S[0]: data both ways in flight.  S[1]: shut down after bytes whose
	 * WRITE and SHUTDOWN are lost.  S[2]: a graceful close in progress:
	 * both shut, side 0's CLOSE lost.  S[3]: side 0 shuts down while
	 * suspended, after bytes that did not arrive.  S[4]: side 1's reader
	 * takes bytes while suspended (its CREDIT goes out after the resume).
	 */
	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	e0 = E(&R, 0);
	for (i = 0; i < 5; i++) {
		memset(&S[i], 0, sizeof(S[i]));
		open_stream(&R.T, &S[i].s, 4096, 4096);
		engine_keep(e0, S[i].s.id);
		S[i].k0 = 10 + 2 * (uint32_t)i;
		S[i].k1 = 11 + 2 * (uint32_t)i;
	}
	settle(&R.T);
	e1 = E(&R, 1);
	for (i = 0; i < 5; i++) {
		S[i].a = &R.T.acc[i];
		engine_keep(e1, S[i].a->id);
	}
	ok(R.T.nacc == 5 && engine_kept(e0, S[4].s.id) &&
	    engine_kept(e1, S[4].a->id), "five kept streams open");

	/* Some traffic that arrives and is read. */
	for (i = 0; i < 5; i++) {
		put(e0, S[i].s.id, S[i].s.tx, 3000, S[i].k0, &S[i].t0);
		put(e1, S[i].a->id, S[i].a->tx, 2500, S[i].k1, &S[i].t1);
	}
	settle(&R.T);
	for (i = 0; i < 5; i++) {
		take(e1, S[i].a->id, S[i].a->rx, 1500, S[i].k0, &S[i].r1,
		    &bad);
		take(e0, S[i].s.id, S[i].s.rx, 1500, S[i].k1, &S[i].r0, &bad);
	}
	settle(&R.T);

	/* S[2]: both shut down and read to EOF; side 0 closes. */
	engine_shutdown(e0, S[2].s.id);
	engine_shutdown(e1, S[2].a->id);
	settle(&R.T);
	take(e1, S[2].a->id, S[2].a->rx, 8192, S[2].k0, &S[2].r1, &bad);
	take(e0, S[2].s.id, S[2].s.rx, 8192, S[2].k1, &S[2].r0, &bad);
	settle(&R.T);
	ok((S[2].s.events & ENGINE_EV_EOF) && (S[2].a->events & ENGINE_EV_EOF),
	    "S2: both ends saw EOF before the loss");
	engine_close(e0, S[2].s.id);
	fab_pump(&R.T.f, 0);

	/* In flight when the link goes: data both ways, a SHUTDOWN. */
	put(e0, S[0].s.id, S[0].s.tx, 2000, S[0].k0, &S[0].t0);
	put(e1, S[0].a->id, S[0].a->tx, 1000, S[0].k1, &S[0].t1);
	put(e0, S[1].s.id, S[1].s.tx, 1000, S[1].k0, &S[1].t0);
	engine_shutdown(e0, S[1].s.id);
	put(e0, S[3].s.id, S[3].s.tx, 1000, S[3].k0, &S[3].t0);
	fab_pump(&R.T.f, 0);
	fab_pump(&R.T.f, 1);
	/* One WRITE each way lands and is seen; the rest lands unseen or not. */
	fab_deliver(&R.T.f, 1);
	while (fab_complete(&R.T.f, 0) > 0)
		;
	events(&R.T, 0);
	n = (int)R.T.f.side[0].wire_n;
	rz_loss(&R, (size_t)n - 1, 0);
	ok(R.T.f.side[0].wrs_landed_unseen == (uint64_t)n - 1 && n >= 4,
	    "%d of side 0's WRs landed, their completions lost", n - 1);
	ok(engine_suspended(R.old[0]) == 5 && engine_suspended(R.old[1]) == 5,
	    "all five streams are suspended on both sides");
	ok(!(S[2].s.events & ENGINE_EV_SUSPENDED) &&
	    (S[2].a->events & ENGINE_EV_SUSPENDED),
	    "a closed stream says nothing; its peer's end is SUSPENDED");

	/* While suspended. */
	engine_shutdown(R.old[0], S[3].s.id);
	ok(take(R.old[1], S[4].a->id, S[4].a->rx, 8192, S[4].k0, &S[4].r1,
	    &bad) == 1500 && !bad, "S4: the reader takes what arrived");
	ok(put(R.old[1], S[0].a->id, S[0].a->tx, 500, S[0].k1, &S[0].t1) ==
	    500, "S0: the writer adds 500 bytes");

	n = rz_resume(&R);
	ok(n == 5, "engine_resume moves the five streams (%d)", n);
	ok(R.adopts[0] == 5 && R.adopt_bad == 0,
	    "each moved with the adopt callback, its rings re-registered");
	e0 = E(&R, 0);
	e1 = E(&R, 1);
	ok(engine_resume_pending(e0) == 5, "five answers are awaited");
	rz_settle(&R);
	ok(R.finds == 1 && R.adopts[1] == 5 && R.old[1] == NULL,
	    "side 1 found the failed engine, adopted all five and freed it");
	ok(!R.T.f.failed, "no WRITE used a stale rkey: %s",
	    R.T.f.failed ? R.T.f.err : "fine");
	ok(engine_error(e0) == NULL && engine_error(e1) == NULL,
	    "both links are healthy: %s",
	    engine_error(e0) ? engine_error(e0) :
	    engine_error(e1) ? engine_error(e1) : "yes");
	ok(engine_resume_pending(e0) == 0 && engine_resume_pending(e1) == 0,
	    "nothing pending");
	for (i = 0, n = 0; i < 5; i++)
		n += (S[i].s.events & ENGINE_EV_RESUMED) &&
		    (S[i].a->events & ENGINE_EV_RESUMED);
	ok(n == 4 && (S[2].a->events & ENGINE_EV_RESUMED),
	    "RESUMED on both sides (on side 1 only where side 0 had closed)");

	/* Everything moves to the end, checked byte by byte. */
	for (rounds = 0; rounds < 100; rounds++) {
		for (i = 0; i < 5; i++) {
			if (i == 2)
				continue;
			take(e1, S[i].a->id, S[i].a->rx, 65536, S[i].k0,
			    &S[i].r1, &bad);
			take(e0, S[i].s.id, S[i].s.rx, 65536, S[i].k1,
			    &S[i].r0, &bad);
		}
		settle(&R.T);
	}
	for (i = 0, n = 0; i < 5; i++)
		n += S[i].r1 == S[i].t0 && S[i].r0 == S[i].t1;
	ok(n == 5 && !bad, "every byte arrived once, in order, both ways "
	    "(S0: %llu/%llu and %llu/%llu)", (unsigned long long)S[0].r1,
	    (unsigned long long)S[0].t0, (unsigned long long)S[0].r0,
	    (unsigned long long)S[0].t1);
	ok((S[1].a->events & ENGINE_EV_EOF) && (S[3].a->events & ENGINE_EV_EOF),
	    "a SHUTDOWN lost with the link, and one made while suspended, "
	    "arrive after the bytes");
	ok(!(S[0].a->events & ENGINE_EV_EOF),
	    "no EOF where none was sent");
	engine_stats(e0, &st0);
	engine_stats(e1, &st1);
	ok(st0.streams_resumed == 5 && st1.streams_resumed == 5,
	    "five streams resumed on each side");
	ok(st0.resumed_bytes > 0,
	    "side 0 wrote again what landed unseen (%llu bytes)",
	    (unsigned long long)st0.resumed_bytes);

	/* S2's close finishes: side 0's CLOSE is sent again. */
	engine_close(e1, S[2].a->id);
	settle(&R.T);
	ok((S[2].s.events & ENGINE_EV_RELEASED) &&
	    (S[2].a->events & ENGINE_EV_RELEASED) &&
	    !(S[2].a->events & ENGINE_EV_RESET),
	    "the graceful close in progress completes across the resume");

	/* The rest close gracefully. */
	for (i = 0; i < 5; i++) {
		if (i == 2)
			continue;
		engine_shutdown(e0, S[i].s.id);
		engine_shutdown(e1, S[i].a->id);
	}
	settle(&R.T);
	for (i = 0; i < 5; i++) {
		if (i == 2)
			continue;
		take(e1, S[i].a->id, S[i].a->rx, 65536, S[i].k0, &S[i].r1,
		    &bad);
		take(e0, S[i].s.id, S[i].s.rx, 65536, S[i].k1, &S[i].r0,
		    &bad);
	}
	settle(&R.T);
	for (i = 0; i < 5; i++) {
		if (i == 2)
			continue;
		engine_close(e0, S[i].s.id);
		engine_close(e1, S[i].a->id);
	}
	settle(&R.T);
	for (i = 0, n = 0; i < 5; i++)
		n += (S[i].s.events & ENGINE_EV_RELEASED) &&
		    (S[i].a->events & ENGINE_EV_RELEASED) &&
		    !((S[i].s.events | S[i].a->events) & ENGINE_EV_RESET);
	ok(n == 5 && !bad, "all five end gracefully");
	ok(engine_active(e0) == 0 && engine_active(e1) == 0 &&
	    engine_idle(e0) && engine_idle(e1),
	    "both engines are idle with no stream");
	ok(engine_tx_space(e0, 0, &off) == 0, "no stream is left");
	rz_teardown(&R);
	for (i = 0; i < 5; i++) {
		tstream_free(&S[i].s);
	}
}

static void
test_resume_gone(void)
{
	struct rz R;
	struct tstream a, b, c;
	struct tstream *aa, *ab, *ac;
	struct engine_stats st0, st1;
	uint64_t t = 0, r = 0;
	int bad = 0;

	/*
	 * a: kept by side 0 only (side 1's 4 KiB send ring is under a
	 * quarter of side 0's 64 KiB receive ring); c: kept by side 1 only;
	 * b: kept by both.
	 */
	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	open_stream(&R.T, &a, 4096, 65536);
	engine_keep(E(&R, 0), a.id);
	open_stream(&R.T, &b, 4096, 4096);
	engine_keep(E(&R, 0), b.id);
	settle(&R.T);
	R.T.acc_ring = 32768;
	open_stream(&R.T, &c, 4096, 4096);
	engine_keep(E(&R, 0), c.id);
	settle(&R.T);
	aa = &R.T.acc[0];
	ab = &R.T.acc[1];
	ac = &R.T.acc[2];
	engine_keep(E(&R, 1), aa->id);
	engine_keep(E(&R, 1), ab->id);
	engine_keep(E(&R, 1), ac->id);
	ok(engine_kept(E(&R, 0), a.id) && !engine_kept(E(&R, 1), aa->id) &&
	    !engine_kept(E(&R, 0), c.id) && engine_kept(E(&R, 1), ac->id) &&
	    engine_kept(E(&R, 0), b.id) && engine_kept(E(&R, 1), ab->id),
	    "a is kept by side 0 only, c by side 1 only, b by both");
	put(E(&R, 0), b.id, b.tx, 2000, 7, &t);
	settle(&R.T);
	rz_loss(&R, 0, 0);
	ok((a.events & ENGINE_EV_SUSPENDED) && (aa->events & ENGINE_EV_RESET) &&
	    (c.events & ENGINE_EV_RESET) && (ac->events & ENGINE_EV_SUSPENDED),
	    "each is suspended where it was kept, reset where not");
	ok(rz_resume(&R) == 2, "side 0 resumes a and b");
	rz_settle(&R);
	ok((a.events & ENGINE_EV_RESET) && a.reason == WIRE_REASON_NOT_RESUMED &&
	    (a.events & ENGINE_EV_RELEASED),
	    "a: side 1 answers GONE; side 0 resets it (%s)",
	    wire_reason_str(a.reason));
	ok((ac->events & ENGINE_EV_RESET) &&
	    ac->reason == WIRE_REASON_NOT_RESUMED &&
	    (ac->events & ENGINE_EV_RELEASED),
	    "c: side 0 did not name it; side 1 resets it (%s)",
	    wire_reason_str(ac->reason));
	ok((b.events & ENGINE_EV_RESUMED) && (ab->events & ENGINE_EV_RESUMED) &&
	    !(b.events & ENGINE_EV_RESET) && !(ab->events & ENGINE_EV_RESET),
	    "b is resumed");
	ok(take(E(&R, 1), ab->id, ab->rx, 8192, 7, &r, &bad) == 2000 && !bad,
	    "and its bytes are all there");
	engine_stats(E(&R, 0), &st0);
	engine_stats(E(&R, 1), &st1);
	ok(st0.streams_not_resumed == 1 && st1.streams_not_resumed == 1 &&
	    st0.streams_resumed == 1 && st1.streams_resumed == 1,
	    "one resumed and one not on each side");
	ok(R.adopts[1] == 2, "side 1 adopted b and c (%d)", R.adopts[1]);
	ok(engine_error(E(&R, 0)) == NULL && engine_error(E(&R, 1)) == NULL,
	    "the link stays up");
	rz_teardown(&R);
	tstream_free(&a);
	tstream_free(&b);
	tstream_free(&c);

	/*
	 * A graceful close finished on side 1 (both CLOSEs exchanged there)
	 * while side 0 never got side 1's CLOSE: side 0's stream is
	 * suspended, side 1's is gone, and GONE completes the close.
	 */
	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	aa = rz_kept(&R, &a);
	engine_shutdown(E(&R, 0), a.id);
	engine_shutdown(E(&R, 1), aa->id);
	settle(&R.T);
	engine_close(E(&R, 0), a.id);
	settle(&R.T);
	engine_close(E(&R, 1), aa->id);
	fab_pump(&R.T.f, 1);	/* side 1's CLOSE is lost */
	rz_loss(&R, 0, 0);
	ok((aa->events & ENGINE_EV_RELEASED) && !(aa->events & ENGINE_EV_RESET) &&
	    engine_suspended(R.old[0]) == 1 &&
	    !(a.events & ENGINE_EV_RELEASED),
	    "side 1 is done with the stream; side 0 waits for its CLOSE");
	ok(rz_resume(&R) == 1, "side 0 resumes it");
	rz_settle(&R);
	ok((a.events & ENGINE_EV_RELEASED) && !(a.events & ENGINE_EV_RESET),
	    "the GONE answer completes the close without a reset");
	rz_teardown(&R);
	tstream_free(&a);
}

static void
test_resume_denied(void)
{
	struct rz R;
	struct tstream k, n;
	struct tstream *ak;
	struct engine_stats st0, st1;
	uint8_t tok[WIRE_NONCE_LEN], proof[WIRE_AUTH_LEN];
	uint64_t t = 0, r = 0;
	int bad = 0;

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	ak = rz_kept(&R, &k);
	rz_loss(&R, 0, 0);
	R.deny = WIRE_REASON_DENIED;
	ok(rz_resume(&R) == 1, "side 0 offers its stream");
	rz_settle(&R);
	ok(R.finds == 1 && R.adopts[1] == 0, "side 1 refused in find");
	ok((k.events & ENGINE_EV_RESET) && k.reason == WIRE_REASON_DENIED &&
	    (k.events & ENGINE_EV_RELEASED),
	    "the resuming stream is reset with find's reason (%s)",
	    wire_reason_str(k.reason));
	engine_stats(E(&R, 0), &st0);
	engine_stats(E(&R, 1), &st1);
	ok(st0.resumes_denied == 1 && st1.resumes_denied == 1 &&
	    st0.streams_not_resumed == 1, "a denied resume, counted");
	ok(engine_resume_pending(E(&R, 0)) == 0, "nothing is pending");
	ok(engine_suspended(R.old[1]) == 1 &&
	    !(ak->events & ENGINE_EV_RESET),
	    "side 1's stream still waits in its failed engine");
	engine_abandon(R.old[1], WIRE_REASON_LINK_LOST);
	events_of(&R.T, 1, R.old[1]);
	ok((ak->events & ENGINE_EV_RESET) &&
	    ak->reason == WIRE_REASON_LINK_LOST &&
	    (ak->events & ENGINE_EV_RELEASED),
	    "until engine_abandon ends it (%s)", wire_reason_str(ak->reason));
	engine_free(R.old[1]);
	R.old[1] = NULL;

	/* The link itself carries on. */
	open_stream(&R.T, &n, 4096, 4096);
	settle(&R.T);
	put(E(&R, 0), n.id, n.tx, 3000, 5, &t);
	settle(&R.T);
	ok((n.events & ENGINE_EV_OPENED) &&
	    take(E(&R, 1), R.T.acc[1].id, R.T.acc[1].rx, 8192, 5, &r,
	    &bad) == 3000 && !bad,
	    "after a denied resume the link opens new streams");
	ok(engine_error(E(&R, 0)) == NULL && engine_error(E(&R, 1)) == NULL,
	    "and is healthy");
	rz_teardown(&R);
	tstream_free(&k);
	tstream_free(&n);

	/* A token that names nothing: refused too, as not resumed. */
	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	(void)rz_kept(&R, &k);
	rz_loss(&R, 0, 0);
	memcpy(tok, R.token, sizeof(tok));
	tok[0] ^= 1;
	memset(proof, RZ_ASK, sizeof(proof));
	ok(engine_resume(E(&R, 0), R.old[0], tok, proof) == 1,
	    "side 0 names a token side 1 does not know");
	rz_settle(&R);
	ok((k.events & ENGINE_EV_RESET) &&
	    k.reason == WIRE_REASON_NOT_RESUMED,
	    "an unknown token: RESET (%s)", wire_reason_str(k.reason));
	rz_teardown(&R);
	tstream_free(&k);
}

static void
test_abandon(void)
{
	struct rz R;
	struct tstream k1, k2, k3;
	struct tstream *a3;
	struct engine_stats st;
	uint8_t proof[WIRE_AUTH_LEN] = { 0 };

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	open_stream(&R.T, &k1, 4096, 4096);
	engine_keep(E(&R, 0), k1.id);
	open_stream(&R.T, &k2, 4096, 4096);
	engine_keep(E(&R, 0), k2.id);
	open_stream(&R.T, &k3, 4096, 4096);
	engine_keep(E(&R, 0), k3.id);
	settle(&R.T);
	a3 = &R.T.acc[2];
	engine_keep(E(&R, 1), R.T.acc[0].id);
	engine_keep(E(&R, 1), R.T.acc[1].id);
	engine_keep(E(&R, 1), a3->id);
	/* k2: the peer shut down and side 0 read EOF and shut down too. */
	engine_shutdown(E(&R, 1), R.T.acc[1].id);
	engine_shutdown(E(&R, 0), k2.id);
	settle(&R.T);
	ok(k2.events & ENGINE_EV_EOF, "k2 saw EOF");
	ok(engine_resume(E(&R, 0), E(&R, 1), R.token, proof) == ENGINE_EINVAL,
	    "engine_resume from an engine that did not fail is refused");
	rz_loss(&R, 0, 0);
	ok(engine_suspended(R.old[0]) == 3, "three streams suspended");
	ok(engine_resume(E(&R, 0), E(&R, 0), R.token, proof) == ENGINE_EINVAL,
	    "engine_resume from itself is refused");

	/* While suspended: k2 closes gracefully, k3 is reset. */
	ok(engine_close(R.old[0], k2.id) == 0,
	    "a suspended stream past EOF closes");
	ok(engine_reset(R.old[0], k3.id, WIRE_REASON_RESET) == 0,
	    "a suspended stream is reset by the application");
	events_of(&R.T, 0, R.old[0]);
	ok((k3.events & ENGINE_EV_RELEASED) && !(k3.events & ENGINE_EV_RESET),
	    "and is released at once");
	ok(engine_suspended(R.old[0]) == 2 && engine_active(R.old[0]) == 2,
	    "two left");
	engine_abandon(R.old[0], WIRE_REASON_LINK_LOST);
	events_of(&R.T, 0, R.old[0]);
	ok((k1.events & ENGINE_EV_RESET) && k1.reason == WIRE_REASON_LINK_LOST &&
	    (k1.events & ENGINE_EV_RELEASED),
	    "engine_abandon resets a suspended stream with its reason");
	ok((k2.events & ENGINE_EV_RELEASED) && !(k2.events & ENGINE_EV_RESET),
	    "and only releases one the application closed");
	ok(engine_suspended(R.old[0]) == 0 && engine_active(R.old[0]) == 0,
	    "nothing is left");
	engine_stats(R.old[0], &st);
	ok(st.streams_not_resumed == 2, "two not resumed (%llu)",
	    (unsigned long long)st.streams_not_resumed);
	k1.events = 0;
	engine_abandon(R.old[0], WIRE_REASON_LINK_LOST);
	events_of(&R.T, 0, R.old[0]);
	ok(k1.events == 0, "a second engine_abandon does nothing");

	/* Side 0 resumes nothing: side 1's streams end. */
	ok(rz_resume(&R) == 0, "an engine_resume with no stream left");
	rz_settle(&R);
	ok((a3->events & ENGINE_EV_RESET) &&
	    a3->reason == WIRE_REASON_NOT_RESUMED &&
	    (R.T.acc[0].events & ENGINE_EV_RELEASED) &&
	    (R.T.acc[1].events & ENGINE_EV_RELEASED),
	    "side 1 resets the streams side 0 did not name (%s)",
	    wire_reason_str(a3->reason));
	ok(engine_active(E(&R, 1)) == 0 && engine_error(E(&R, 1)) == NULL,
	    "side 1 holds none and its link is up");
	rz_teardown(&R);
	tstream_free(&k1);
	tstream_free(&k2);
	tstream_free(&k3);
}

/* A buggy embedder keeps the old rkey: the fabric catches the WRITE. */
static void
test_stale_rkey(void)
{
	struct rz R;
	struct tstream k;
	uint64_t t = 0;

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	(void)rz_kept(&R, &k);
	rz_loss(&R, 0, 0);
	R.keep_rkey = 1;
	rz_resume(&R);
	put(E(&R, 0), k.id, k.tx, 100, 1, &t);
	rz_settle(&R);
	ok(R.T.f.failed && strstr(R.T.f.err, "stale") != NULL,
	    "a WRITE with a receive ring's rkey from the lost link is a "
	    "fabric violation: %s", R.T.f.failed ? R.T.f.err : "(none)");
	rz_teardown(&R);
	tstream_free(&k);
}

static void
rec_resume(struct wire_rec *r, const uint8_t *token, uint16_t count)
{

	memset(r, 0, sizeof(*r));
	r->type = WIRE_RESUME;
	memcpy(r->token, token, WIRE_NONCE_LEN);
	memset(r->proof, RZ_ASK, WIRE_AUTH_LEN);
	r->count = count;
}

static void
rec_rs(struct wire_rec *r, uint32_t stream, uint32_t peer, uint64_t arrived,
    uint64_t consumed, uint8_t flags, uint32_t size)
{

	memset(r, 0, sizeof(*r));
	r->type = WIRE_RESUME_STREAM;
	r->stream = stream;
	r->peer_stream = peer;
	r->cursor = arrived;
	r->consumed = consumed;
	r->flags = flags;
	if (!(flags & WIRE_RS_GONE)) {
		r->ring.addr = 0x10000;
		r->ring.rkey = 0x55;
		r->ring.size = size;
	}
}

/* Inject ${n} records into side ${i}; 1 if the link failed with ${what}. */
static int
inject_recs(struct rz *R, int i, const struct wire_rec *r, int n,
    const char *what)
{
	uint8_t buf[WIRE_MSG_SIZE];

	fab_inject(&R->T.f, i, FAB_CQE_RECV, buf, recs(buf, r, n), 0);
	return (failed_with(E(R, i), what) &&
	    engine_error_kind(E(R, i)) == ENGINE_ERR_PROTOCOL);
}

/*
 * Side 1 takes ${r}, a RESUME, and sends its RESUME_PROOF (into the
 * fabric, undelivered): from version 5 side 0 names its streams after
 * that.  1 if side 1 adopted and proved.
 */
static int
inject_resume(struct rz *R, const struct wire_rec *r)
{
	uint8_t buf[WIRE_MSG_SIZE];

	fab_inject(&R->T.f, 1, FAB_CQE_RECV, buf, recs(buf, r, 1), 0);
	fab_pump(&R->T.f, 1);
	return (engine_error(E(R, 1)) == NULL && R->adopted != NULL);
}

/* Side 0 takes side 1's right RESUME_PROOF, as if it came. */
static int
inject_answer(struct rz *R)
{
	struct wire_rec r;
	uint8_t buf[WIRE_MSG_SIZE];

	memset(&r, 0, sizeof(r));
	r.type = WIRE_RESUME_PROOF;
	memset(r.proof, RZ_ANSWER, WIRE_AUTH_LEN);
	fab_inject(&R->T.f, 0, FAB_CQE_RECV, buf, recs(buf, &r, 1), 0);
	return (engine_error(E(R, 0)) == NULL && R->proofs == 1);
}

/*
 * A link with one kept stream (side 0 sent 3000 bytes, side 1 read 2000
 * and sent 100) that was lost; the test speaks for side 0 by hand.
 */
static void
rz_lost_stream(struct rz *R, struct tstream *k)
{
	uint64_t t = 0, r = 0, t1 = 0;
	int bad = 0;

	rz_setup(R, rconf(16, 16), rconf(16, 16));
	(void)rz_kept(R, k);
	put(E(R, 0), k->id, k->tx, 3000, 1, &t);
	put(E(R, 1), R->T.acc[0].id, R->T.acc[0].tx, 100, 2, &t1);
	settle(&R->T);
	take(E(R, 1), R->T.acc[0].id, R->T.acc[0].rx, 2000, 1, &r, &bad);
	settle(&R->T);
	rz_loss(R, 0, 0);
}

static void
test_resume_violations(void)
{
	struct rz R;
	struct t T;
	struct tstream k;
	struct wire_rec r[3];
	uint8_t buf[WIRE_MSG_SIZE];
	uint8_t tok[WIRE_NONCE_LEN] = { 0 };
	uint32_t sid, cid;

	/* RESUME where the link cannot resume. */
	memset(&T, 0, sizeof(T));
	setup(&T, conf(8, 8), conf(8, 8));
	rec_resume(&r[0], tok, 0);
	fab_inject(&T.f, 1, FAB_CQE_RECV, buf, recs(buf, r, 1), 0);
	ok(failed_with(T.f.side[1].e, "unexpected RESUME"),
	    "RESUME on a link without resume ends it: %s",
	    err_of(T.f.side[1].e));
	teardown(&T);

	/* RESUME twice. */
	rz_setup(&R, rconf(8, 8), rconf(8, 8));
	rec_resume(&r[0], tok, 0);
	fab_inject(&R.T.f, 1, FAB_CQE_RECV, buf, recs(buf, r, 1), 0);
	ok(engine_error(E(&R, 1)) == NULL && R.finds == 1,
	    "a RESUME naming nothing is refused, not a violation");
	ok(inject_recs(&R, 1, r, 1, "unexpected RESUME"),
	    "a second RESUME ends the link");
	rz_teardown(&R);

	/* RESUME after the peer opened a stream. */
	rz_setup(&R, rconf(8, 8), rconf(8, 8));
	open_stream(&R.T, &k, 4096, 4096);
	settle(&R.T);
	ok(inject_recs(&R, 1, r, 1, "unexpected RESUME"),
	    "RESUME after an OPEN ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	/* RESUME_STREAM without a RESUME, or beyond its count. */
	rz_setup(&R, rconf(8, 8), rconf(8, 8));
	rec_rs(&r[0], 0, 0, 0, 0, 0, 4096);
	ok(inject_recs(&R, 1, r, 1, "unexpected RESUME_STREAM"),
	    "RESUME_STREAM without RESUME ends the link");
	rz_teardown(&R);
	/* From version 5, a RESUME_STREAM only after our RESUME_PROOF. */
	rz_lost_stream(&R, &k);
	rec_resume(&r[0], R.token, 1);
	rec_rs(&r[1], R.T.acc[0].id, k.id, 100, 0, 0, 4096);
	ok(inject_recs(&R, 1, r, 2, "unexpected RESUME_STREAM") &&
	    R.adopted != NULL,
	    "a RESUME_STREAM before side 1 sent its proof ends the link");
	rz_teardown(&R);
	tstream_free(&k);
	rz_setup(&R, rconf(8, 8), rconf(8, 8));
	rec_resume(&r[0], tok, 1);
	rec_rs(&r[1], 0, 0, 0, 0, 0, 4096);
	ok(inject_resume(&R, r) == 0 && engine_error(E(&R, 1)) == NULL &&
	    engine_resume_pending(E(&R, 1)) == 0,
	    "a RESUME side 1 refuses: no RESUME_STREAM is to come");
	ok(inject_recs(&R, 1, &r[1], 1, "unexpected RESUME_STREAM"),
	    "and one that comes anyway ends the link");
	rz_teardown(&R);
	rz_lost_stream(&R, &k);
	rec_resume(&r[0], R.token, 1);
	rec_rs(&r[1], R.T.acc[0].id, k.id, 100, 0, 0, 4096);
	rec_rs(&r[2], 1, 1, 0, 0, 0, 4096);
	ok(inject_resume(&R, r), "side 1 adopts and proves");
	ok(inject_recs(&R, 1, &r[1], 2, "unexpected RESUME_STREAM"),
	    "a RESUME_STREAM beyond the RESUME's count ends the link");
	rz_teardown(&R);
	tstream_free(&k);
	rz_lost_stream(&R, &k);
	rec_resume(&r[0], R.token, 1);
	rec_rs(&r[1], 0, 0, 0, 0, WIRE_RS_GONE, 0);
	(void)inject_resume(&R, r);
	ok(inject_recs(&R, 1, &r[1], 1, "unexpected RESUME_STREAM"),
	    "a GONE from the side that asked ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	/* Cursors and rings of a real suspended stream, misreported. */
	rz_lost_stream(&R, &k);
	sid = R.T.acc[0].id;
	cid = k.id;
	rec_resume(&r[0], R.token, 1);
	rec_rs(&r[1], sid, cid, 101, 0, 0, 4096);
	ok(inject_resume(&R, r) && inject_recs(&R, 1, &r[1], 1, "outside"),
	    "arrived beyond what was sent (101 of 100) ends the link");
	ok(R.adopted != NULL, "(after the streams were adopted)");
	rz_teardown(&R);
	tstream_free(&k);

	rz_lost_stream(&R, &k);
	rec_resume(&r[0], R.token, 1);
	rec_rs(&r[1], R.T.acc[0].id, k.id, 100, 0, 0, 8192);
	ok(inject_resume(&R, r) && inject_recs(&R, 1, &r[1], 1, "instead of"),
	    "a resumed ring of another size ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	rz_lost_stream(&R, &k);
	rec_resume(&r[0], R.token, 1);
	rec_rs(&r[1], R.T.acc[0].id, k.id, 100, 100, WIRE_RS_SHUT, 4096);
	ok(inject_resume(&R, r) && inject_recs(&R, 1, &r[1], 1, "never sent"),
	    "a SHUTDOWN seen that was never sent ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	/* Side 0 asked; side 1's answers misreport. */
	rz_lost_stream(&R, &k);
	sid = R.T.acc[0].id;
	cid = k.id;
	rz_resume(&R);
	rec_rs(&r[0], cid, sid, 2000, 2000, 0, 4096);
	ok(inject_recs(&R, 0, r, 1, "RESUME_STREAM before RESUME_PROOF"),
	    "an answer before side 1's proof ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	rz_lost_stream(&R, &k);
	sid = R.T.acc[0].id;
	cid = k.id;
	rz_resume(&R);
	/* Side 1 consumed 2000 and may have credited it: consumed 0 is old. */
	rec_rs(&r[0], cid, sid, 2000, 0, 0, 4096);
	ok(inject_answer(&R) && inject_recs(&R, 0, r, 1, "outside"),
	    "a consumed cursor behind the last CREDIT ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	rz_lost_stream(&R, &k);
	sid = R.T.acc[0].id;
	cid = k.id;
	rz_resume(&R);
	rec_rs(&r[0], cid, sid + 1, 2000, 2000, 0, 4096);
	ok(inject_answer(&R) && inject_recs(&R, 0, r, 1, "not resuming"),
	    "an answer naming another peer stream ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	rz_lost_stream(&R, &k);
	sid = R.T.acc[0].id;
	cid = k.id;
	rz_resume(&R);
	ok(inject_answer(&R), "side 1's proof is taken");
	rec_rs(&r[0], cid, sid, 2000, 2000, 0, 4096);
	fab_inject(&R.T.f, 0, FAB_CQE_RECV, buf, recs(buf, r, 1), 0);
	ok(engine_error(E(&R, 0)) == NULL,
	    "a right answer is taken");
	ok(inject_recs(&R, 0, r, 1, "not resuming"),
	    "the same answer twice ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	rz_lost_stream(&R, &k);
	rz_resume(&R);
	memset(&r[0], 0, sizeof(r[0]));
	r[0].type = WIRE_CREDIT;
	r[0].stream = k.id;
	r[0].cursor = 1;
	ok(inject_answer(&R) && inject_recs(&R, 0, r, 1, "does not allow"),
	    "a CREDIT for a stream still resuming ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	rz_lost_stream(&R, &k);
	rz_resume(&R);
	memset(&r[0], 0, sizeof(r[0]));
	r[0].type = WIRE_RESUME_DENIED;
	r[0].reason = WIRE_REASON_DENIED;
	fab_inject(&R.T.f, 0, FAB_CQE_RECV, buf, recs(buf, r, 1), 0);
	ok(engine_error(E(&R, 0)) == NULL, "a RESUME_DENIED is taken once");
	ok(inject_recs(&R, 0, r, 1, "unexpected RESUME_DENIED"),
	    "a second one ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	rz_setup(&R, rconf(8, 8), rconf(8, 8));
	memset(&r[0], 0, sizeof(r[0]));
	r[0].type = WIRE_RESUME_DENIED;
	ok(inject_recs(&R, 0, r, 1, "unexpected RESUME_DENIED"),
	    "RESUME_DENIED without a RESUME ends the link");
	rz_teardown(&R);
}

/*
 * A link (hellos capped at ${cap_a} and ${cap_b}) with one kept stream
 * ${k}, on which side 0 wrote 3000 bytes of pattern 4, then lost.
 */
static void
rz_kept_lost(struct rz *R, struct tstream *k, unsigned cap_a, unsigned cap_b)
{
	uint64_t t = 0;

	rz_setup_cap(R, rconf(16, 16), rconf(16, 16), cap_a, cap_b);
	(void)rz_kept(R, k);
	put(E(R, 0), k->id, k->tx, 3000, 4, &t);
	fab_pump(&R->T.f, 0);
	rz_loss(R, 0, 0);
}

/*
 * Version 5: side 1 proves the secret before side 0 names its streams,
 * grants their rings, opens new ones or trusts any cursor.
 */
static void
test_resume_mutual(void)
{
	struct rz R;
	struct tstream k, n;
	uint64_t got = 0;
	int bad = 0, nacc;

	rz_kept_lost(&R, &k, 0, 0);
	ok(engine_version(E(&R, 0)) == WIRE_VERSION &&
	    engine_version(E(&R, 1)) == WIRE_VERSION,
	    "two sides of the newest version");
	ok(rz_resume(&R) == 1, "side 0 asks to resume its stream");
	ok(!engine_resume_proven(E(&R, 0)),
	    "side 0 waits for side 1's proof");
	/* Side 0 opens a stream meanwhile: its OPEN waits too. */
	nacc = R.T.nacc;
	ok(open_stream(&R.T, &n, 4096, 4096) >= 0, "side 0 opens a new stream");
	hop(&R.T, 0);
	ok(R.finds == 1 && R.adopted == R.old[1] &&
	    engine_resume_pending(E(&R, 1)) == 1,
	    "side 1 adopted, but side 0 named no stream (%u to come)",
	    (unsigned)engine_resume_pending(E(&R, 1)));
	ok(R.T.nacc == nacc, "nor sent the new stream's OPEN");
	ok(R.proofs == 0 && !(k.events & ENGINE_EV_RESUMED),
	    "nothing is resumed before the proof");
	hop(&R.T, 1);
	ok(R.proofs == 1 && engine_resume_proven(E(&R, 0)),
	    "side 1's RESUME_PROOF comes and checks out");
	rz_settle(&R);
	ok(engine_error(E(&R, 0)) == NULL && engine_error(E(&R, 1)) == NULL,
	    "no violation");
	ok((k.events & ENGINE_EV_RESUMED) &&
	    take(E(&R, 1), R.T.acc[0].id, R.T.acc[0].rx, 8192, 4, &got,
	    &bad) == 3000 && !bad,
	    "the stream resumes and its bytes arrive");
	ok((n.events & ENGINE_EV_OPENED) && R.T.nacc == nacc + 1,
	    "the new stream opens after the names");
	ok(engine_resume_confirmed(E(&R, 1)),
	    "side 1 saw a stream named: the peer holds the new secret");
	rz_teardown(&R);
	tstream_free(&k);
	tstream_free(&n);
}

/* Version 5: a wrong RESUME_PROOF ends the link; nothing was named. */
static void
test_resume_wrong_proof(void)
{
	struct rz R;
	struct tstream k;
	struct engine_stats st;

	rz_kept_lost(&R, &k, 0, 0);
	R.wrong_answer = 1;
	ok(rz_resume(&R) == 1, "side 0 asks to resume its stream");
	hop(&R.T, 0);
	hop(&R.T, 1);
	events_of(&R.T, 0, E(&R, 0));
	ok(R.proofs == 1 && engine_error_kind(E(&R, 0)) == ENGINE_ERR_AUTH &&
	    failed_with(E(&R, 0), "RESUME_PROOF is wrong"),
	    "a wrong proof ends side 0's link: %s", err_of(E(&R, 0)));
	ok((k.events & ENGINE_EV_RESET) && (k.events & ENGINE_EV_RELEASED) &&
	    !(k.events & ENGINE_EV_RESUMED),
	    "its stream is reset, not suspended for another try");
	engine_stats(E(&R, 0), &st);
	ok(st.streams_suspended == 0 && engine_suspended(E(&R, 0)) == 0,
	    "nothing waits in the failed engine");
	ok(engine_resume_pending(E(&R, 1)) == 1,
	    "side 1 never saw the stream named, nor its ring");
	rz_teardown(&R);
	tstream_free(&k);
}

/* A peer of version 4 resumes as before: no proof back, names at once. */
static void
test_resume_v4(void)
{
	struct rz R;
	struct tstream k;
	struct wire_rec r;
	uint8_t buf[WIRE_MSG_SIZE];
	uint64_t got = 0;
	int bad = 0, side;

	for (side = 0; side < 2; side++) {
		rz_kept_lost(&R, &k, side ? 0 : 4, side ? 4 : 0);
		ok(engine_version(E(&R, 0)) == 4 &&
		    engine_version(E(&R, 1)) == 4,
		    "side %d says 4: the link speaks 4", side);
		got = 0;
		ok(rz_resume(&R) == 1 && engine_resume_proven(E(&R, 0)),
		    "side 0 asks, and waits for no proof");
		hop(&R.T, 0);
		ok(R.adopted == R.old[1] &&
		    engine_resume_pending(E(&R, 1)) == 0,
		    "the RESUME_STREAM came with the RESUME");
		rz_settle(&R);
		ok(R.proofs == 0 && (k.events & ENGINE_EV_RESUMED) &&
		    take(E(&R, 1), R.T.acc[0].id, R.T.acc[0].rx, 8192, 4,
		    &got, &bad) == 3000 && !bad,
		    "the stream resumed without a RESUME_PROOF");
		rz_teardown(&R);
		tstream_free(&k);
	}
	/* A RESUME_PROOF below version 5 is a violation. */
	rz_setup_cap(&R, rconf(8, 8), rconf(8, 8), 4, 0);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_RESUME_PROOF;
	fab_inject(&R.T.f, 0, FAB_CQE_RECV, buf, recs(buf, &r, 1), 0);
	ok(failed_with(E(&R, 0), "RESUME_PROOF on a link below version 5"),
	    "a RESUME_PROOF on a version-4 link ends it: %s",
	    err_of(E(&R, 0)));
	rz_teardown(&R);
	/* And where nothing asked for one, from version 5. */
	rz_setup(&R, rconf(8, 8), rconf(8, 8));
	fab_inject(&R.T.f, 0, FAB_CQE_RECV, buf, recs(buf, &r, 1), 0);
	ok(failed_with(E(&R, 0), "unexpected RESUME_PROOF"),
	    "a RESUME_PROOF without a RESUME ends the link: %s",
	    err_of(E(&R, 0)));
	rz_teardown(&R);
	/* Every record type's version is checked: a HANDSHAKE (version 6)
	 * on a version-5 link. */
	rz_setup_cap(&R, rconf(8, 8), rconf(8, 8), 5, 0);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_HANDSHAKE;
	r.hs_len = 8;
	fab_inject(&R.T.f, 0, FAB_CQE_RECV, buf, recs(buf, &r, 1), 0);
	ok(failed_with(E(&R, 0), "HANDSHAKE on a link below version 6"),
	    "a HANDSHAKE on a version-5 link ends it: %s",
	    err_of(E(&R, 0)));
	rz_teardown(&R);
}

/*
 * Side 1 opens a stream while side 0's RESUME_STREAMs are still coming:
 * the id it gets may be one side 0 still maps to a stream it is resuming
 * (side 1 lost that stream with the link), so the OPEN must not overtake
 * the GONE answer that unmaps it.
 */
static void
test_resume_open_race(void)
{
	struct rz R;
	struct tstream s[12], n;
	struct engine_ring tx, rx;
	int i, id, k;

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	for (i = 0; i < 12; i++) {
		/* s[11]: side 1's 4 KiB send ring is under a quarter of 64. */
		open_stream(&R.T, &s[i], 4096, i == 11 ? 65536 : 4096);
		engine_keep(E(&R, 0), s[i].id);
	}
	settle(&R.T);
	for (i = 0; i < 12; i++)
		engine_keep(E(&R, 1), R.T.acc[i].id);
	ok(!engine_kept(E(&R, 1), R.T.acc[11].id) &&
	    R.T.acc[11].id == 11 && s[11].id == 11,
	    "side 1 does not keep stream 11");
	rz_loss(&R, 0, 0);
	ok(rz_resume(&R) == 12, "side 0 resumes twelve streams");
	/* The RESUME goes; side 1 adopts, and its proof comes back. */
	fab_pump(&R.T.f, 0);
	fab_deliver(&R.T.f, 0);
	while (fab_complete(&R.T.f, 1) > 0)
		;
	fab_pump(&R.T.f, 1);
	fab_deliver(&R.T.f, 1);
	while (fab_complete(&R.T.f, 0) > 0)
		;
	ok(R.adopted == R.old[1] && R.proofs == 1 &&
	    engine_resume_pending(E(&R, 1)) == 12,
	    "side 1 adopted and proved before a stream was named");
	fab_pump(&R.T.f, 0);
	ok(R.T.f.side[0].wire_n >= 2,
	    "the RESUME_STREAMs take more than one SEND (%zu)",
	    R.T.f.side[0].wire_n);
	/* Only the first SEND of names arrives: some are still due. */
	while (engine_resume_pending(E(&R, 1)) == 12 &&
	    fab_deliver(&R.T.f, 0) > 0)
		while (fab_complete(&R.T.f, 1) > 0)
			;
	ok(engine_resume_pending(E(&R, 1)) > 0 &&
	    engine_resume_pending(E(&R, 1)) < 12,
	    "side 1 waits for more RESUME_STREAMs (%u)",
	    (unsigned)engine_resume_pending(E(&R, 1)));
	engine_abandon(R.old[1], WIRE_REASON_NOT_RESUMED);
	events_of(&R.T, 1, R.old[1]);
	engine_free(R.old[1]);
	R.old[1] = NULL;
	memset(&n, 0, sizeof(n));
	rings(&R.T, 1, &n, 4096, 4096, &tx, &rx);
	id = engine_open(E(&R, 1), "t", &tx, &rx, &n);
	ok(id == 11, "side 1 opens a stream; it gets the free id 11 (%d)", id);
	n.id = (uint32_t)id;
	rz_settle(&R);
	ok(engine_error(E(&R, 0)) == NULL && engine_error(E(&R, 1)) == NULL,
	    "no violation: the OPEN follows the GONE answer (%s)",
	    engine_error(E(&R, 0)) ? engine_error(E(&R, 0)) :
	    engine_error(E(&R, 1)) ? engine_error(E(&R, 1)) : "fine");
	ok((s[11].events & ENGINE_EV_RESET) &&
	    s[11].reason == WIRE_REASON_NOT_RESUMED,
	    "side 0's stream 11 was not resumed");
	ok(n.events & ENGINE_EV_OPENED, "side 1's new stream opened");
	for (i = 0, k = 0; i < 11; i++)
		k += (s[i].events & ENGINE_EV_RESUMED) != 0;
	ok(k == 11, "the other eleven resumed");
	rz_teardown(&R);
	for (i = 0; i < 12; i++) {
		tstream_free(&s[i]);
	}
	tstream_free(&n);
}

/* Resume on an authenticated link: only once the proofs checked out. */
static void
test_resume_auth(void)
{
	struct rz R;
	struct tauth ta, tb;
	struct tstream k;
	struct engine_conf c = rconf(8, 8);
	struct wire_rec r;
	uint8_t buf[WIRE_MSG_SIZE], proof[WIRE_AUTH_LEN];
	uint64_t t = 0, got = 0;
	int bad = 0;

	memset(&R, 0, sizeof(R));
	auth_pair(&R.T, &c, &ta, &tb, 7, 7);
	rz_hooks(&R);
	settle(&R.T);
	(void)rz_kept(&R, &k);
	put(E(&R, 0), k.id, k.tx, 2000, 3, &t);
	fab_pump(&R.T.f, 0);
	rz_loss(&R, 0, 0);
	ok(!engine_authenticated(E(&R, 0)) && !engine_authenticated(E(&R, 1)),
	    "the new link starts unauthenticated");
	memset(proof, RZ_ASK, sizeof(proof));
	ok(engine_resume(E(&R, 0), R.old[0], R.token, proof) == ENGINE_EDOWN,
	    "engine_resume before the peer's proof: EDOWN");
	/* A RESUME before the proof ends side 1's link. */
	memset(&r, 0, sizeof(r));
	r.type = WIRE_RESUME;
	memcpy(r.token, R.token, WIRE_NONCE_LEN);
	fab_inject(&R.T.f, 1, FAB_CQE_RECV, buf,
	    (uint32_t)wire_rec_encode(buf, sizeof(buf), &r), 0);
	ok(failed_with(E(&R, 1), "RESUME before authentication") &&
	    R.finds == 0, "RESUME before authentication ends the link: %s",
	    err_of(E(&R, 1)));
	rz_teardown(&R);
	tstream_free(&k);

	/* Again, resuming once authenticated. */
	memset(&R, 0, sizeof(R));
	auth_pair(&R.T, &c, &ta, &tb, 7, 7);
	rz_hooks(&R);
	settle(&R.T);
	(void)rz_kept(&R, &k);
	t = 0;
	put(E(&R, 0), k.id, k.tx, 2000, 3, &t);
	fab_pump(&R.T.f, 0);
	rz_loss(&R, 0, 0);
	settle(&R.T);
	ok(engine_authenticated(E(&R, 0)) && engine_authenticated(E(&R, 1)) &&
	    ta.proved == 2 && tb.verified == 2,
	    "the new link authenticates again, with proofs of its own");
	ok(rz_resume(&R) == 1, "then side 0 resumes");
	rz_settle(&R);
	ok((k.events & ENGINE_EV_RESUMED) &&
	    take(E(&R, 1), R.T.acc[0].id, R.T.acc[0].rx, 8192, 3, &got,
	    &bad) == 2000 && !bad,
	    "and the bytes lost in flight arrive on the new link");
	rz_teardown(&R);
	tstream_free(&k);
}

static void
test_resume_calls(void)
{
	struct rz R;
	struct t T;
	struct tstream k, k2;
	uint8_t proof[WIRE_AUTH_LEN] = { 0 };
	struct engine *old[2];
	size_t d[2] = { 0, 0 };

	/* engine_resume needs a new link that can resume and has no stream. */
	rz_setup(&R, rconf(8, 8), rconf(8, 8));
	(void)rz_kept(&R, &k);
	rz_loss(&R, 0, 0);
	open_stream(&R.T, &k2, 4096, 4096);
	ok(engine_resume(E(&R, 0), R.old[0], R.token, proof) ==
	    ENGINE_EINVAL, "engine_resume after a stream was opened: EINVAL");
	ok(engine_suspended(R.old[0]) == 1, "and nothing moved");
	rz_teardown(&R);
	tstream_free(&k);
	tstream_free(&k2);

	memset(&T, 0, sizeof(T));
	setup(&T, rconf(8, 8), conf(8, 8));
	fab_relink(&T.f, d, old);
	ok(engine_can_resume(T.f.side[0].e) && engine_can_resume(T.f.side[1].e),
	    "fab_relink connects engines with resume on");
	ok(engine_resume(T.f.side[0].e, old[0], T.f.side[1].nonce, proof) ==
	    ENGINE_EINVAL, "engine_resume without an adopt callback: EINVAL");
	engine_free(old[0]);
	engine_free(old[1]);
	teardown(&T);
}

/* A stream opened by side 0 with origin ${o} (NULL: none); its accepted id. */
static int
open_with_origin(struct t *T, struct tstream *s, const struct wire_origin *o)
{
	if (open_stream(T, s, 4096, 4096) < 0)
		return (-1);
	if (o != NULL && engine_set_origin(T->f.side[0].e, s->id, o) != 0)
		return (-1);
	settle(T);
	return (T->nacc > 0 ? (int)T->acc[T->nacc - 1].id : -1);
}

static void
test_origin(void)
{
	struct wire_origin o, bad_o;
	const struct wire_origin *got;
	struct wire_rec r[2];
	uint8_t buf[WIRE_MSG_SIZE];
	struct tstream s, s2;
	struct t T;
	int id;

	memset(&o, 0, sizeof(o));
	o.family = WIRE_FAM_INET;
	memcpy(o.src, "\xc0\x00\x02\x07", 4);
	memcpy(o.dst, "\x7f\x00\x00\x01", 4);
	o.src_port = 50123;
	o.dst_port = 15432;

	/* Both sides version 3: the acceptor learns the origin. */
	setup(&T, conf(16, 16), conf(16, 16));
	ok(engine_can_origin(T.f.side[0].e) && engine_can_origin(T.f.side[1].e),
	    "two version-3 sides can send ORIGIN");
	id = open_with_origin(&T, &s, &o);
	got = id >= 0 ? engine_origin(T.f.side[1].e, (uint32_t)id) : NULL;
	ok(got != NULL && memcmp(got, &o, sizeof(o)) == 0,
	    "the ORIGIN before an OPEN reaches the acceptor whole");
	ok(engine_origin(T.f.side[0].e, s.id) != NULL,
	    "the opener's stream keeps its origin too");
	ok(engine_set_origin(T.f.side[0].e, s.id, &o) == ENGINE_EINVAL,
	    "an origin once OPEN went out is refused");
	id = open_with_origin(&T, &s2, NULL);
	ok(id >= 0 && engine_origin(T.f.side[1].e, (uint32_t)id) == NULL,
	    "a stream opened without an origin has none");
	memset(&bad_o, 0, sizeof(bad_o));
	bad_o.family = WIRE_FAM_MAX + 1;
	tstream_free(&s2);
	ok(open_stream(&T, &s2, 4096, 4096) >= 0 &&
	    engine_set_origin(T.f.side[0].e, s2.id, &bad_o) == ENGINE_EINVAL,
	    "an origin of an unknown family is refused");
	teardown(&T);
	free(s.tx); free(s.rx); free(s2.tx); free(s2.rx);

	/* An older peer (capped at 2): no ORIGIN goes out, the OPEN does. */
	memset(&T, 0, sizeof(T));
	T.acc_ring = 4096;
	{
		struct engine_conf a = conf(16, 16), b = conf(16, 16);

		ok(fab_init_cap(&T.f, &a, &b, 0, 2) == 0 &&
		    !engine_can_origin(T.f.side[0].e) &&
		    !engine_can_origin(T.f.side[1].e),
		    "with a version-2 peer neither side sends ORIGIN");
	}
	id = open_with_origin(&T, &s, &o);
	ok(id >= 0 && engine_origin(T.f.side[1].e, (uint32_t)id) == NULL &&
	    engine_error(T.f.side[1].e) == NULL,
	    "the stream opens without its origin on a version-2 link");
	/* And an ORIGIN sent anyway breaks the protocol. */
	memset(r, 0, sizeof(r));
	r[0].type = WIRE_ORIGIN;
	r[0].stream = 9;
	r[0].origin = o;
	fab_inject(&T.f, 1, FAB_CQE_RECV, buf, recs(buf, r, 1), 0);
	ok(failed_with(T.f.side[1].e, "below version 3"),
	    "ORIGIN on a version-2 link is a violation");
	teardown(&T);
	free(s.tx); free(s.rx);

	/* ORIGIN must be followed by its stream's OPEN. */
	setup(&T, conf(16, 16), conf(16, 16));
	r[1].type = WIRE_KEEPALIVE;
	fab_inject(&T.f, 1, FAB_CQE_RECV, buf, recs(buf, r, 2), 0);
	ok(failed_with(T.f.side[1].e, "not followed by its OPEN"),
	    "ORIGIN followed by another record is a violation");
	teardown(&T);
	setup(&T, conf(16, 16), conf(16, 16));
	fab_inject(&T.f, 1, FAB_CQE_RECV, buf, recs(buf, r, 1), 0);
	ok(failed_with(T.f.side[1].e, "not followed by its OPEN"),
	    "ORIGIN at the end of a SEND is a violation");
	teardown(&T);
}

/* ---------------------------------------------------------------- resize */

/* Ring memory for the resize tests: counted, and registered with the fabric. */
struct tmem {
	struct t *T;
	int side;
	int allocs, frees, refuse;
	uint8_t *live[64];
	uint32_t last_replaces;
};

static int
tm_alloc(void *arg, void *user, int rx, uint32_t size, uint32_t replaces,
    struct engine_ring *ring)
{
	struct tmem *m = arg;
	uint8_t *p;
	int k;

	(void)user;
	m->last_replaces = replaces;
	if (m->refuse)
		return (-1);
	for (k = 0; k < 64 && m->live[k] != NULL; k++)
		;
	if (k == 64 || (p = calloc(1, size)) == NULL)
		abort();
	m->live[k] = p;
	if (rx)
		fab_mr_add(&m->T->f, m->side, (uint64_t)(uintptr_t)p, size,
		    0x99);
	ring->addr = (uint64_t)(uintptr_t)p;
	ring->size = size;
	ring->key = rx ? 0x99 : 1;
	ring->mem = p;
	m->allocs++;
	return (0);
}

static void
tm_free(void *arg, void *user, const struct engine_ring *ring)
{
	struct tmem *m = arg;
	int k;

	(void)user;
	for (k = 0; k < 64; k++) {
		if (m->live[k] == ring->mem && ring->mem != NULL) {
			fab_mr_del(&m->T->f, m->side, ring->addr);
			free(m->live[k]);
			m->live[k] = NULL;
			m->frees++;
			return;
		}
	}
	abort();	/* not ours, or freed twice */
}

static int
tm_live(const struct tmem *m)
{
	int k, n = 0;

	for (k = 0; k < 64; k++)
		n += m->live[k] != NULL;
	return (n);
}

static void
tm_release(struct tmem *m)
{
	int k;

	for (k = 0; k < 64; k++) {
		free(m->live[k]);
		m->live[k] = NULL;
	}
}

/*
 * Sides 0 and 1 of ${T} take ring memory through ${em0} and ${em1}, whose
 * books are ${m0} and ${m1}.
 */
static void
tm_pair(struct t *T, struct tmem *m0, struct tmem *m1,
    const struct engine_mem *em0, const struct engine_mem *em1)
{

	memset(m0, 0, sizeof(*m0));
	memset(m1, 0, sizeof(*m1));
	m0->T = m1->T = T;
	m1->side = 1;
	engine_set_mem(T->f.side[0].e, em0);
	engine_set_mem(T->f.side[1].e, em1);
}

/* Open a stream from side 0 whose rings start at 4096 and may grow. */
static int
open_grow(struct t *T, struct tmem *m0, struct tmem *m1, uint32_t max)
{
	struct engine_ring tx, rx;
	struct engine_event ev;
	int id;
	uint32_t peer;

	tm_alloc(m0, NULL, 0, 4096, 0, &tx);
	tm_alloc(m0, NULL, 1, 4096, 0, &rx);
	id = engine_open(T->f.side[0].e, "t", &tx, &rx, NULL);
	if (id < 0 || engine_ring_limits(T->f.side[0].e, (uint32_t)id, max,
	    max) != 0)
		return (-1);
	fab_pump(&T->f, 0);
	land(T, 0);
	if (!engine_next_event(T->f.side[1].e, &ev) ||
	    !(ev.flags & ENGINE_EV_INCOMING))
		return (-1);
	peer = ev.stream;
	tm_alloc(m1, NULL, 0, 4096, 0, &tx);
	tm_alloc(m1, NULL, 1, 4096, 0, &rx);
	if (engine_accept(T->f.side[1].e, peer, &tx, &rx, NULL) != 0 ||
	    engine_ring_limits(T->f.side[1].e, peer, max, max) != 0)
		return (-1);
	T->acc[0].id = peer;
	settle(T);
	return (id);
}

/* Move ${total} bytes side 0 -> 1, the reader keeping up. */
static int
flow(struct t *T, uint32_t a, uint32_t b, uint64_t *tx, uint64_t *rx,
    uint64_t total, int *bad)
{
	int rounds = 0;

	while (*rx < total && rounds++ < 100000) {
		put(T->f.side[0].e, a, NULL, (uint32_t)(total - *tx), 0, tx);
		settle(T);
		take(T->f.side[1].e, b, NULL, UINT32_MAX, 0, rx, bad);
		settle(T);
	}
	return (*rx == total);
}

/* The end of a resize test's link: settled, freed, every ring too. */
static void
grow_done(struct t *T, struct tmem *m0, struct tmem *m1)
{

	settle(T);
	events(T, 0);
	events(T, 1);
	teardown(T);
	tm_release(m0);
	tm_release(m1);
}

/*
 * A new link (with ${em0} and ${em1} for memory) whose stream from side 0
 * moved 1 MiB, so that side 1's receive ring grew; its id, the peer's in
 * ${*b}, the cursors in ${*ptx} and ${*prx}.
 */
static int
grown(struct t *T, struct tmem *m0, struct tmem *m1,
    const struct engine_mem *em0, const struct engine_mem *em1,
    uint64_t *ptx, uint64_t *prx, uint32_t *b)
{
	int id, bad = 0;

	ok(setup(T, conf(64, 64), conf(64, 64)) == 0, "a new link");
	tm_pair(T, m0, m1, em0, em1);
	id = open_grow(T, m0, m1, 65536);
	*b = T->acc[0].id;
	*ptx = *prx = 0;
	ok(flow(T, (uint32_t)id, *b, ptx, prx, 1 << 20, &bad) && !bad,
	    "its receive ring grew");
	return (id);
}

static void
test_resize(void)
{
	struct t T;
	struct tmem m0, m1;
	struct engine_mem em0, em1;
	struct engine_stats st0, st1;
	struct engine_ring tx, rx;
	struct wire_rec r[2];
	uint8_t buf[WIRE_MSG_SIZE];
	uint64_t ptx = 0, prx = 0;
	int id, bad = 0;
	uint32_t b;

	ok(setup(&T, conf(64, 64), conf(64, 64)) == 0 &&
	    engine_can_resize(T.f.side[0].e) &&
	    engine_can_resize(T.f.side[1].e),
	    "two version-4 sides can resize rings");
	em0.alloc = em1.alloc = tm_alloc;
	em0.free = em1.free = tm_free;
	em0.arg = &m0;
	em1.arg = &m1;
	tm_pair(&T, &m0, &m1, &em0, &em1);
	id = open_grow(&T, &m0, &m1, 65536);
	b = T.acc[0].id;
	ok(id >= 0, "a stream opens with 4096-byte rings and a 65536 limit");

	/* A bulk transfer grows both rings to the limit. */
	ok(flow(&T, (uint32_t)id, b, &ptx, &prx, 1 << 20, &bad) && !bad,
	    "1 MiB arrives intact while the rings grow");
	engine_stats(T.f.side[0].e, &st0);
	engine_stats(T.f.side[1].e, &st1);
	engine_rings(T.f.side[0].e, (uint32_t)id, &tx, &rx);
	ok(tx.size == 65536 && st0.ring_grows == 4,
	    "the sender's send ring doubled up to 65536 (4 growths): %u, %llu",
	    (unsigned)tx.size, (unsigned long long)st0.ring_grows);
	engine_rings(T.f.side[1].e, b, &tx, &rx);
	ok(rx.size == 65536 && st1.ring_grows == 4,
	    "the receiver's receive ring doubled up to 65536: %u, %llu",
	    (unsigned)rx.size, (unsigned long long)st1.ring_grows);
	ok(tm_live(&m0) == 2 && tm_live(&m1) == 2 &&
	    m0.frees == m0.allocs - 2 && m1.frees == m1.allocs - 2,
	    "every replaced ring was freed (side 0 %d of %d, side 1 %d of %d)",
	    m0.frees, m0.allocs, m1.frees, m1.allocs);
	engine_rings(T.f.side[0].e, (uint32_t)id, &tx, &rx);
	ok(rx.size == 4096,
	    "the direction that carried nothing kept its small ring");

	/* Idle for two trims: back to 4096, and still carrying data. */
	engine_trim(T.f.side[0].e);
	engine_trim(T.f.side[1].e);
	settle(&T);
	engine_rings(T.f.side[1].e, b, &tx, &rx);
	ok(rx.size == 65536, "one trim does not shrink (no idle period yet)");
	engine_trim(T.f.side[0].e);
	engine_trim(T.f.side[1].e);
	settle(&T);
	engine_stats(T.f.side[0].e, &st0);
	engine_stats(T.f.side[1].e, &st1);
	engine_rings(T.f.side[1].e, b, &tx, &rx);
	ok(rx.size == 4096 && st1.ring_shrinks == 1 && m1.last_replaces ==
	    65536, "an idle receive ring shrinks back to 4096");
	engine_rings(T.f.side[0].e, (uint32_t)id, &tx, &rx);
	ok(tx.size == 4096 && st0.ring_shrinks == 1,
	    "an idle send ring shrinks back to 4096");
	ok(tm_live(&m0) == 2 && tm_live(&m1) == 2,
	    "the big rings were freed on shrinking");
	ok(flow(&T, (uint32_t)id, b, &ptx, &prx, (1 << 20) + 100000, &bad) &&
	    !bad, "data flows intact after the shrink (and regrows)");

	/*
	 * A shrink that races data: the receiver announces the small ring
	 * while WRITEs to the big one are on the wire.
	 */
	engine_trim(T.f.side[1].e);
	engine_trim(T.f.side[0].e);
	put(T.f.side[0].e, (uint32_t)id, NULL, 3000, 0, &ptx);
	fab_pump(&T.f, 0);		/* the WRITE is on the wire */
	engine_trim(T.f.side[1].e);	/* nothing arrived: it shrinks */
	fab_pump(&T.f, 1);		/* RING crosses the WRITE */
	engine_stats(T.f.side[1].e, &st1);
	ok(st1.ring_shrinks == 2, "the receiver announced a small ring "
	    "with bytes in flight");
	ok(flow(&T, (uint32_t)id, b, &ptx, &prx, prx + 3000 + 200000, &bad) &&
	    !bad && engine_error(T.f.side[0].e) == NULL &&
	    engine_error(T.f.side[1].e) == NULL,
	    "bytes written to the old ring and after the switch arrive in order");

	/* A refused growth is counted; the stream keeps its ring and flows. */
	engine_trim(T.f.side[0].e);
	engine_trim(T.f.side[1].e);
	engine_trim(T.f.side[0].e);
	engine_trim(T.f.side[1].e);
	settle(&T);
	m0.refuse = m1.refuse = 1;
	ok(flow(&T, (uint32_t)id, b, &ptx, &prx, prx + 300000, &bad) && !bad,
	    "data flows when every growth is refused");
	engine_stats(T.f.side[1].e, &st1);
	engine_rings(T.f.side[1].e, b, &tx, &rx);
	ok(st1.ring_refused > 0 && rx.size == 4096,
	    "refusals are counted and the ring stays: %llu",
	    (unsigned long long)st1.ring_refused);
	m0.refuse = m1.refuse = 0;

	/* Violations: RING_AT at the wrong cursor, RING_AT never asked for. */
	memset(r, 0, sizeof(r));
	r[0].type = WIRE_RING_AT;
	r[0].stream = b;
	r[0].cursor = 5;
	fab_inject(&T.f, 1, FAB_CQE_RECV, buf, recs(buf, r, 1), 0);
	ok(failed_with(T.f.side[1].e, "RING_AT"),
	    "RING_AT with no RING outstanding is a violation: %s",
	    err_of(T.f.side[1].e));
	grow_done(&T, &m0, &m1);

	/*
	 * After a shrink the old ring may hold more unread bytes than the
	 * new one holds at all: the peer has no room, and a WRITE beyond it
	 * breaks the protocol (the room must not wrap around to a huge one).
	 */
	id = grown(&T, &m0, &m1, &em0, &em1, &ptx, &prx, &b);
	engine_trim(T.f.side[1].e);
	engine_trim(T.f.side[1].e);	/* announces a 4096-byte ring */
	put(T.f.side[0].e, (uint32_t)id, NULL, 20000, 0, &ptx);
	fab_pump(&T.f, 0);		/* 20000 bytes to the old ring */
	land(&T, 0);
	settle(&T);			/* RING, RING_AT: the switch */
	engine_rings(T.f.side[1].e, b, &tx, &rx);
	ok(rx.size == 4096 && engine_error(T.f.side[1].e) == NULL,
	    "the switch to 4096 bytes happened with 20000 unread in the old "
	    "ring");
	fab_inject(&T.f, 1, FAB_CQE_RECV_IMM, NULL, 100,
	    wire_imm_encode(b, 100));
	ok(failed_with(T.f.side[1].e, "exceed its free ring space"),
	    "a WRITE while the old ring holds more than the new one is a "
	    "violation: %s", err_of(T.f.side[1].e));
	grow_done(&T, &m0, &m1);

	/*
	 * A peer that never answers a RING: both rings would stay for the
	 * stream's life; the RING_AT deadline ends the link instead.
	 */
	id = grown(&T, &m0, &m1, &em0, &em1, &ptx, &prx, &b);
	engine_trim(T.f.side[1].e);
	engine_trim(T.f.side[1].e);	/* announces a 4096-byte ring */
	fab_pump(&T.f, 1);		/* the RING is out, never delivered */
	engine_stats(T.f.side[1].e, &st1);
	ok(st1.ring_shrinks == 1 && tm_live(&m1) == 3,
	    "the receiver holds the old ring and the announced one");
	for (int k = 1; k < ENGINE_RING_AT_TICKS; k++)
		engine_tick(T.f.side[1].e);
	ok(engine_error(T.f.side[1].e) == NULL,
	    "%d ticks after the RING the peer still has time",
	    ENGINE_RING_AT_TICKS - 1);
	engine_tick(T.f.side[1].e);
	ok(failed_with(T.f.side[1].e, "no RING_AT for stream") &&
	    engine_error_kind(T.f.side[1].e) == ENGINE_ERR_PROTOCOL,
	    "tick %d ends the link: %s", ENGINE_RING_AT_TICKS,
	    err_of(T.f.side[1].e));
	grow_done(&T, &m0, &m1);

	/* A version-3 peer: no resizing; a RING from it is a violation. */
	memset(&T, 0, sizeof(T));
	T.acc_ring = 4096;
	{
		struct engine_conf a = conf(16, 16), c = conf(16, 16);

		ok(fab_init_cap(&T.f, &a, &c, 0, 3) == 0 &&
		    !engine_can_resize(T.f.side[0].e) &&
		    !engine_can_resize(T.f.side[1].e),
		    "with a version-3 peer neither side resizes");
	}
	memset(r, 0, sizeof(r));
	r[0].type = WIRE_RING;
	r[0].stream = 0;
	r[0].ring.addr = 0x1000;
	r[0].ring.rkey = 1;
	r[0].ring.size = 8192;
	fab_inject(&T.f, 0, FAB_CQE_RECV, buf, recs(buf, r, 1), 0);
	ok(failed_with(T.f.side[0].e, "cannot resize"),
	    "RING on a version-3 link is a violation");
	teardown(&T);

	/* A link that can resume keeps fixed rings. */
	{
		struct engine_conf a = conf(16, 16), c = conf(16, 16);

		a.resume = c.resume = 1;
		memset(&T, 0, sizeof(T));
		ok(fab_init(&T.f, &a, &c) == 0 &&
		    engine_can_resume(T.f.side[0].e) &&
		    !engine_can_resize(T.f.side[0].e),
		    "a link that can resume streams does not resize rings");
		teardown(&T);
	}
}

/* engine_stream_flags_str: the state, then the flags that are set. */
static void
test_stream_flags_str(void)
{
	struct t T;
	struct tstream s;
	char b[ENGINE_FLAGS_STR_LEN], small[8];
	struct engine *e0, *e1;

	setup(&T, conf(16, 16), conf(16, 16));
	e0 = T.f.side[0].e;
	e1 = T.f.side[1].e;
	open_stream(&T, &s, 4096, 4096);
	ok(strcmp(engine_stream_flags_str(e0, s.id, b, sizeof(b)),
	    "OPENING HAS_RINGS") == 0, "an open sent: %s", b);
	settle(&T);
	ok(strcmp(engine_stream_flags_str(e0, s.id, b, sizeof(b)),
	    "OPEN PEER_MAPPED|HAS_RINGS") == 0, "an open answered: %s", b);
	engine_shutdown(e0, s.id);
	settle(&T);
	ok(strcmp(engine_stream_flags_str(e0, s.id, b, sizeof(b)),
	    "OPEN APP_SHUT|SHUT_SENT|PEER_MAPPED|HAS_RINGS") == 0,
	    "shut, in bit order: %s", b);
	ok(strcmp(engine_stream_flags_str(e1, T.acc[0].id, b, sizeof(b)),
	    "OPEN PEER_SHUT|EOF_DONE|PEER_MAPPED|HAS_RINGS") == 0,
	    "the peer's side after its EOF: %s", b);
	ok(strcmp(engine_stream_flags_str(e0, s.id + 1, b, sizeof(b)),
	    "FREE") == 0, "a slot never used: %s", b);
	ok(strcmp(engine_stream_flags_str(e0, 64, b, sizeof(b)), "?") == 0,
	    "no slot: %s", b);
	ok(engine_stream_flags_str(e0, s.id, small, sizeof(small)) == small &&
	    strcmp(small, "OPEN AP") == 0, "a short buffer is cut: %s", small);
	engine_reset(e0, s.id, WIRE_REASON_RESET);
	ok(strstr(engine_stream_flags_str(e0, s.id, b, sizeof(b)),
	    "APP_CLOSED|RESET") != NULL, "reset by the application: %s", b);
	teardown(&T);
	free(s.tx);
	free(s.rx);
}

/* ------------------------------------------------------------ scheduler */

/* The WRITE at place ${k} of what side 0 has in flight, or NULL. */
static const struct engine_wr *
in_flight(struct t *T, size_t k)
{
	struct fab_side *fs = &T->f.side[0];

	if (k >= fs->wire_n)
		return (NULL);
	return (&fs->wire[(fs->wire_head + k) % fs->wire_cap].wr);
}

/* Does work request ${w} read stream ${s}'s send ring? */
static int
reads(const struct engine_wr *w, const struct tstream *s)
{

	return (w->op == ENGINE_WR_WRITE_IMM &&
	    w->local_addr >= (uint64_t)(uintptr_t)s->tx &&
	    w->local_addr < (uint64_t)(uintptr_t)s->tx + s->txsz);
}

/* Data bytes in flight from side 0 before ${s}'s first WRITE; -1: none. */
static long
bytes_before(struct t *T, const struct tstream *s)
{
	const struct engine_wr *w;
	long n = 0;
	size_t k;

	for (k = 0; (w = in_flight(T, k)) != NULL; k++) {
		if (reads(w, s))
			return (n);
		if (w->op == ENGINE_WR_WRITE_IMM)
			n += w->len;
	}
	return (-1);
}

/* Open ${n} streams from side 0 with ${size}-byte rings both ways. */
static void
open_n(struct t *T, struct tstream *s, int n, uint32_t size)
{
	int k;

	T->acc_ring = size;
	for (k = 0; k < n; k++)
		open_stream(T, &s[k], size, size);
	settle(T);
}

static void
test_sched_fair(void)
{
	struct engine_conf c;
	struct t T;
	struct tstream s[5];
	struct engine *e;
	const struct engine_wr *w;
	long ahead;
	uint32_t bytes[2] = { 0, 0 };
	size_t k;
	int j;

	/*
	 * Three bulk streams fill their rings, then a fourth puts 64
	 * bytes: it waits for one chunk of each, not for their rings.
	 */
	setup(&T, conf(256, 64), conf(256, 64));
	e = T.f.side[0].e;
	open_n(&T, s, 4, 256u << 10);
	for (j = 0; j < 3; j++)
		put(e, s[j].id, s[j].tx, 256u << 10, 0x40 + (uint32_t)j,
		    &s[j].tx_at);
	put(e, s[3].id, s[3].tx, 64, 0x33, &s[3].tx_at);
	fab_pump(&T.f, 0);
	ahead = bytes_before(&T, &s[3]);
	ok(ahead >= 0 && ahead <= 3 * WINDOW_CHUNK,
	    "64 bytes wait for one chunk of each of 3 bulk streams (%ld "
	    "bytes ahead, at most %u)", ahead, 3 * WINDOW_CHUNK);
	ok(T.f.side[0].max_wr_len == WINDOW_CHUNK, "bulk writes are whole "
	    "chunks (%llu)", (unsigned long long)T.f.side[0].max_wr_len);
	/*
	 * The bulk streams used whole quanta: they queue at the tail.  The
	 * 64-byte stream went idle: its next bytes go first.
	 */
	while (fab_deliver(&T.f, 0) > 0)
		;
	while (fab_complete(&T.f, 0) > 0)
		;
	put(e, s[3].id, s[3].tx, 64, 0x34, &s[3].tx_at);
	fab_pump(&T.f, 0);
	ahead = bytes_before(&T, &s[3]);
	ok(ahead == 0, "a stream that went idle goes before the bulk "
	    "streams' turns (%ld bytes ahead)", ahead);
	teardown_n(&T, s, 4);

	/* Weight 4 against weight 1: four chunks for each one. */
	c = conf(256, 64);
	c.window_min = 8u << 20;
	setup(&T, c, conf(256, 64));
	e = T.f.side[0].e;
	open_n(&T, s, 2, 1u << 20);
	ok(engine_set_weight(e, s[0].id, 4) == 0, "weight 4 is taken");
	ok(engine_set_weight(e, s[1].id, 0) == ENGINE_EINVAL &&
	    engine_set_weight(e, s[1].id, ENGINE_WEIGHT_MAX + 1) ==
	    ENGINE_EINVAL, "weights outside 1-%d are refused",
	    ENGINE_WEIGHT_MAX);
	put(e, s[0].id, s[0].tx, 1u << 20, 0x10, &s[0].tx_at);
	put(e, s[1].id, s[1].tx, 1u << 20, 0x11, &s[1].tx_at);
	fab_pump(&T.f, 0);
	for (k = 0; k < 40 && (w = in_flight(&T, k)) != NULL; k++)
		for (j = 0; j < 2; j++)
			if (reads(w, &s[j]))
				bytes[j] += w->len;
	ok(bytes[1] > 0 && bytes[0] == 4 * bytes[1],
	    "weight 4 moves 4 times the bytes of weight 1 (%u, %u)",
	    bytes[0], bytes[1]);
	teardown_n(&T, s, 2);
}

static void
test_sched_window(void)
{
	struct t T;
	struct tstream s[2];
	struct engine_conf c = conf(256, 64);
	struct engine_stats st;
	struct engine_stream_stats ss;
	struct engine *e;
	const struct engine_wr *w;
	uint64_t now = 1000000;
	long ahead;
	int j;

	/* A window of 64 KiB: a bulk stream keeps no more outstanding. */
	c.window_max = 64u << 10;
	setup(&T, c, conf(256, 64));
	e = T.f.side[0].e;
	engine_clock(e, now);
	open_n(&T, s, 2, 1u << 20);
	put(e, s[0].id, s[0].tx, 1u << 20, 0x21, &s[0].tx_at);
	fab_pump(&T.f, 0);
	engine_stats(e, &st);
	ok(st.inflight == 64u << 10 && st.window == 64u << 10,
	    "a bulk stream fills the 64 KiB window and no more (%llu of %llu)",
	    (unsigned long long)st.inflight, (unsigned long long)st.window);
	ok(st.sq_depth == 4, "4 WRITEs on the send queue (%u)", st.sq_depth);

	/* The 64 bytes wait for the window, then go before more bulk. */
	put(e, s[1].id, s[1].tx, 64, 0x22, &s[1].tx_at);
	engine_clock(e, now += 5000);
	fab_pump(&T.f, 0);
	engine_stats(e, &st);
	ok(bytes_before(&T, &s[1]) < 0 && st.stall_window > 0,
	    "while the window is full nothing more goes (%llu stalls)",
	    (unsigned long long)st.stall_window);
	/* Control records do not wait for the window. */
	engine_keepalive(e);
	fab_pump(&T.f, 0);
	w = in_flight(&T, T.f.side[0].wire_n - 1);
	ok(w != NULL && w->op == ENGINE_WR_SEND,
	    "a KEEPALIVE goes out past a full window");
	engine_clock(e, now += 20000);
	while (fab_deliver(&T.f, 0) > 0)
		;
	while (fab_complete(&T.f, 0) > 0)
		;
	fab_pump(&T.f, 0);
	ahead = bytes_before(&T, &s[1]);
	ok(ahead >= 0 && ahead <= WINDOW_CHUNK, "then they go behind at most "
	    "one chunk (%ld bytes)", ahead);
	j = engine_stream_stats(e, s[1].id, &ss);
	ok(j == 0 && ss.wait_sq_ns == 25000 && ss.queued == 0 &&
	    ss.wait_credit_ns == 0, "the stream waited 25 us for its turn "
	    "(%llu ns), none for credit", (unsigned long long)ss.wait_sq_ns);
	engine_stats(e, &st);
	ok(st.rtt_ns == 20000 && st.rate > 0, "the completion gave an rtt "
	    "(%llu ns) and a rate (%llu B/s)", (unsigned long long)st.rtt_ns,
	    (unsigned long long)st.rate);
	ok(engine_stream_stats(e, 63, &ss) == -1,
	    "no figures for a stream that is not there");
	teardown_n(&T, s, 2);
}

/* A stream that filled its peer's ring waits for credit, and says so. */
static void
test_sched_credit_wait(void)
{
	struct t T;
	struct tstream s;
	struct engine_stream_stats ss;
	struct engine_stats st;
	struct engine *e;
	int rc;

	setup(&T, conf(64, 64), conf(64, 64));
	e = T.f.side[0].e;
	engine_clock(e, 1000);
	T.acc_ring = 4096;
	open_stream(&T, &s, 16384, 4096);
	settle(&T);
	(void)engine_data_busy(e);
	engine_keepalive(e);
	settle(&T);
	ok(!engine_data_busy(e), "control records alone keep a link idle");
	put(e, s.id, s.tx, 4096, 0x61, &s.tx_at);
	ok(engine_data_busy(e), "data waiting makes it busy");
	fab_pump(&T.f, 0);
	put(e, s.id, s.tx, 4096, 0x62, &s.tx_at);
	fab_pump(&T.f, 0);
	engine_clock(e, 8000);
	rc = engine_stream_stats(e, s.id, &ss);
	ok(rc == 0 && ss.wait_credit_ns == 7000 && ss.wait_sq_ns == 0 &&
	    ss.queued == 4096 && ss.unacked == 4096, "4 KiB behind a full "
	    "4 KiB peer ring wait 7 us for credit (%llu ns, %llu queued)",
	    (unsigned long long)ss.wait_credit_ns,
	    (unsigned long long)ss.queued);
	ok(engine_data_busy(e), "and so does data posted since");
	settle(&T);
	take(T.f.side[1].e, T.acc[0].id, T.acc[0].rx, 4096, 0x61,
	    &T.acc[0].rx_at, &rc);
	settle(&T);
	engine_stats(e, &st);
	ok(st.wait_credit_ns == 7000, "the link counts the wait once the "
	    "credit came (%llu ns)", (unsigned long long)st.wait_credit_ns);
	teardown(&T);
	tstream_free(&s);
}

/*
 * A modelled wire of 1 GiB/s (a microsecond per KiB) behind side 0,
 * whose daemon reacts (reads the completions, posts more, and side 1
 * consumes and returns credit) every ${react_ns}, moving ${total} bytes
 * of stream ${s}.  Returns the bytes that arrived intact.
 */
static uint32_t
model(struct t *T, struct tstream *s, uint64_t react_ns, uint32_t total)
{
	struct fab_side *f0 = &T->f.side[0], *f1 = &T->f.side[1];
	const struct engine_wr *w;
	uint64_t now = 1000000, next = now;
	uint32_t got = 0, sent = 0;
	long steps = 0;
	int bad = 0;

	while (got < total && steps++ < 10000000) {
		if (now >= next) {
			sent += put(T->f.side[0].e, s->id, s->tx, total - sent,
			    0x5a, &s->tx_at);
			events(T, 1);
			got += take(T->f.side[1].e, T->acc[0].id, T->acc[0].rx,
			    total - got, 0x5a, &T->acc[0].rx_at, &bad);
			fab_pump(&T->f, 1);
			events(T, 0);
			fab_pump(&T->f, 0);
			next = now + react_ns;
		}
		if ((w = in_flight(T, 0)) != NULL)
			now += w->len * 1000 / 1024;
		else if (f1->wire_n == 0)
			now = next;
		engine_clock(f0->e, now);
		engine_clock(f1->e, now);
		fab_deliver(&T->f, 0);
		fab_deliver(&T->f, 1);
		while (fab_complete(&T->f, 0) > 0 ||
		    fab_complete(&T->f, 1) > 0)
			;
	}
	return (bad ? 0 : got);
}

/*
 * The window follows the wire and how fast this side reacts: a side that
 * posts again as soon as a completion comes keeps its window at the
 * floor; one that looks only every 200 us learns a window that covers
 * 200 us of the wire (about 200 KB), far below the 8 MiB it may use.
 */
static void
test_sched_estimate(void)
{
	static const uint64_t react[] = { 0, 200000 };
	struct t T;
	struct tstream s;
	struct engine_stats st;
	struct engine *e;
	uint32_t got;
	int k;

	for (k = 0; k < 2; k++) {
		setup(&T, conf(256, 64), conf(256, 64));
		e = T.f.side[0].e;
		engine_clock(e, 1000);
		open_n(&T, &s, 1, 4u << 20);
		engine_stats(e, &st);
		ok(st.window == WINDOW_MIN_CHUNKS * WINDOW_CHUNK,
		    "the window starts at %d chunks (%llu)",
		    WINDOW_MIN_CHUNKS, (unsigned long long)st.window);
		got = model(&T, &s, react[k], 16u << 20);
		engine_stats(e, &st);
		ok(got == 16u << 20, "reacting every %llu us, 16 MiB arrive "
		    "intact (%u bytes)", (unsigned long long)react[k] / 1000,
		    got);
		ok(st.rtt_ns > 0 && st.rate > 900000000 &&
		    st.rate < 1100000000, "the rate is the wire's (%llu B/s, "
		    "rtt %llu ns)", (unsigned long long)st.rate,
		    (unsigned long long)st.rtt_ns);
		if (k == 0)
			ok(st.window == WINDOW_MIN_CHUNKS * WINDOW_CHUNK,
			    "a quick side keeps its window at the floor "
			    "(%llu bytes)", (unsigned long long)st.window);
		else
			ok(st.window >= 200000 && st.window <= 1u << 20,
			    "a side that looks every 200 us keeps 200 KB to "
			    "1 MiB outstanding (%llu bytes)",
			    (unsigned long long)st.window);
		if (k == 1) {
			engine_window_share(e, 1);
			engine_stats(e, &st);
			ok(st.window == WINDOW_SHARE_MIN_CHUNKS * WINDOW_CHUNK,
			    "a link that yields keeps %d chunks (%llu bytes)",
			    WINDOW_SHARE_MIN_CHUNKS,
			    (unsigned long long)st.window);
			engine_window_share(e, 1000);
			engine_stats(e, &st);
			ok(st.window >= 200000, "and takes its window back "
			    "(%llu bytes)", (unsigned long long)st.window);
		}
		teardown(&T);
		tstream_free(&s);
	}
}

/* ---------------------------------------------------------------- sealing */

#define SEAL_ERR	"sealed record failed authentication (tampered or " \
	"injected)"

/*
 * A pair sealed with ${aead}, both directions counting from ${from}, with
 * one stream open, side 0's ring ${txsz} to 4 KiB; WRITEs of at most
 * ${chunk} bytes (0: the default).
 */
static void
seal_pair_at(struct t *T, struct tstream *s, uint32_t txsz, uint32_t chunk,
    enum seal_aead aead, uint64_t from)
{
	struct engine_conf c = conf(16, 16);

	c.chunk = chunk;
	setup(T, c, c);
	fab_seal_at(&T->f, aead, from);
	open_stream(T, s, txsz, 4096);
	settle(T);
}

static void
seal_pair(struct t *T, struct tstream *s, uint32_t txsz, uint32_t chunk)
{

	seal_pair_at(T, s, txsz, chunk, SEAL_CHACHAPOLY, 0);
}

/* Did side ${i}'s link fail with the seal error? */
static int
seal_failed(struct t *T, int i)
{
	const char *why = engine_error(T->f.side[i].e);

	return (why != NULL && strcmp(why, SEAL_ERR) == 0 &&
	    engine_error_kind(T->f.side[i].e) == ENGINE_ERR_PROTOCOL);
}

static void
test_seal_data(void)
{
	struct t T;
	struct tstream s;
	struct tstream *a;
	struct engine_stats st0, st1;
	struct engine *e0, *e1;
	uint64_t t0 = 0, r1 = 0, t1 = 0, r0 = 0;
	uint32_t off;
	int bad = 0, round, plain = 1;

	seal_pair(&T, &s, 8192, 512);
	e0 = T.f.side[0].e;
	e1 = T.f.side[1].e;
	a = &T.acc[0];
	ok(T.nacc == 1 && engine_sealed(e0) && engine_sealed(e1),
	    "a sealed pair opens a stream");
	for (round = 0; round < 40; round++) {
		put(e0, s.id, s.tx, 3000, 1, &t0);
		put(e1, a->id, a->tx, 1700, 2, &t1);
		settle(&T);
		take(e1, a->id, a->rx, 8192, 1, &r1, &bad);
		take(e0, s.id, s.rx, 8192, 2, &r0, &bad);
		settle(&T);
	}
	ok(!bad && r1 == t0 && r0 == t1 && t0 > 100000 && t1 > 60000 &&
	    engine_error(e0) == NULL && engine_error(e1) == NULL,
	    "data moves both ways byte-exact (%llu and %llu bytes)",
	    (unsigned long long)r1, (unsigned long long)r0);
	/* What the WRITEs read was sealed in place: no plaintext is left. */
	for (off = 0; off < 64; off++)
		plain &= a->tx[off] == pat(2, off);
	ok(!plain, "a stream that keeps no bytes leaves its send ring sealed");
	engine_stats(e0, &st0);
	engine_stats(e1, &st1);
	ok(st0.sealed && st0.sealed_msgs == st0.writes + st0.sends &&
	    st1.opened_msgs == st0.sealed_msgs,
	    "every WR was sealed (%llu) and opened at the peer (%llu)",
	    (unsigned long long)st0.sealed_msgs,
	    (unsigned long long)st1.opened_msgs);

	/*
	 * Many WRITEs of one stream land before the reader learns of the
	 * first: each one's tag must still be there for it.
	 */
	put(e0, s.id, s.tx, 8192, 1, &t0);
	fab_pump(&T.f, 0);
	while (fab_deliver(&T.f, 0) > 0)
		;
	settle(&T);
	engine_stats(e1, &st1);
	ok(st1.bytes_rx - r1 == 4096 && engine_error(e1) == NULL &&
	    T.f.side[0].writes_posted > 8,
	    "the ring fills in WRITEs that all landed before their tags were "
	    "read");
	while (take(e1, a->id, a->rx, 8192, 1, &r1, &bad) > 0)
		settle(&T);
	ok(!bad && r1 == t0 && engine_error(e1) == NULL,
	    "then every byte arrives");
	teardown(&T);
	tstream_free(&s);
}

/*
 * Side 0 writes 100 bytes; the fabric flips bit ${bit} of what lands in
 * side 1's ring (payload, then the tag after it).
 */
static void
seal_tamper_write(uint32_t bit, const char *what)
{
	struct t T;
	struct tstream s;
	struct engine_stats st;
	uint64_t t0 = 0;

	seal_pair(&T, &s, 4096, 0);
	put(T.f.side[0].e, s.id, s.tx, 100, 1, &t0);
	T.f.side[0].tamper = bit + 1;
	settle(&T);
	engine_stats(T.f.side[1].e, &st);
	ok(seal_failed(&T, 1) && st.bytes_rx == 0 &&
	    !(T.acc[0].events & ENGINE_EV_READABLE),
	    "a bit flipped in a WRITE's %s fails the link (%s), and nothing "
	    "of it is read", what, engine_error(T.f.side[1].e));
	teardown(&T);
	tstream_free(&s);
}

static void
test_seal_tamper(void)
{
	struct t T;
	struct tstream s;
	struct engine_wr w, tw;
	uint8_t copy[100];
	uint64_t t0 = 0, r1 = 0;
	int bad = 0;

	seal_tamper_write(5, "payload");
	seal_tamper_write(100 * 8 + 3, "tag");

	/* A SEND: side 0's OPEN. */
	setup(&T, conf(16, 16), conf(16, 16));
	fab_seal(&T.f);
	open_stream(&T, &s, 4096, 4096);
	T.f.side[0].tamper = 8 * 3 + 1;
	settle(&T);
	ok(seal_failed(&T, 1) && T.nacc == 0,
	    "a bit flipped in a SEND fails the link; its OPEN is not seen");
	teardown(&T);
	tstream_free(&s);

	/* The same WRITE again, bytes and tag and immediate. */
	seal_pair(&T, &s, 4096, 0);
	put(T.f.side[0].e, s.id, s.tx, 100, 1, &t0);
	fab_pump(&T.f, 0);
	w = T.f.side[0].wire[T.f.side[0].wire_head].wr;
	tw = T.f.side[0].wire[(T.f.side[0].wire_head + 1) %
	    T.f.side[0].wire_cap].wr;
	fab_deliver(&T.f, 0);
	memcpy(copy, T.acc[0].rx, sizeof(copy));
	settle(&T);
	ok(take(T.f.side[1].e, T.acc[0].id, T.acc[0].rx, 4096, 1, &r1,
	    &bad) == 100 && !bad, "the WRITE arrives");
	memcpy(T.acc[0].rx + 100, copy, sizeof(copy));
	fab_inject(&T.f, 1, FAB_CQE_RECV_TAG,
	    T.f.side[0].ctrl_send + (tw.wr_id % 16) * WIRE_MSG_SIZE,
	    WIRE_TAG_LEN, tw.imm);
	ok(w.op == ENGINE_WR_WRITE && tw.op == ENGINE_WR_SEND_IMM &&
	    tw.imm == w.imm && seal_failed(&T, 1) && r1 == 100,
	    "the same WRITE replayed fails the link: %s",
	    engine_error(T.f.side[1].e));
	teardown(&T);
	tstream_free(&s);

	/*
	 * A tag whose immediate claims more than is left before the ring's
	 * end: refused before anything is opened (opening would write past
	 * the ring; ASan saw it).
	 */
	seal_pair(&T, &s, 4096, 0);
	r1 = t0 = 0;
	put(T.f.side[0].e, s.id, s.tx, 4000, 1, &t0);
	settle(&T);
	ok(take(T.f.side[1].e, T.acc[0].id, T.acc[0].rx, 4096, 1, &r1,
	    &bad) == 4000 && !bad, "4000 bytes arrive and are read");
	settle(&T);
	memset(copy, 0, sizeof(copy));
	fab_inject(&T.f, 1, FAB_CQE_RECV_TAG, copy, WIRE_TAG_LEN,
	    wire_imm_encode(T.acc[0].id, 4096));
	ok(failed_with(T.f.side[1].e, "crosses the end of its ring"),
	    "a tag for bytes past the ring's end fails the link: %s",
	    err_of(T.f.side[1].e));
	teardown(&T);
	tstream_free(&s);
}

/* Is ${n} bytes of ${ring} from pattern position ${pos} plaintext? */
static int
is_plain(const uint8_t *ring, uint32_t size, uint32_t key, uint64_t pos,
    uint32_t n)
{
	uint32_t j;

	for (j = 0; j < n; j++)
		if (ring[(pos + j) % size] != pat(key, pos + j))
			return (0);
	return (1);
}

/*
 * A sealed pair (signalled rarely) with a kept stream, 16 KiB towards 4
 * KiB: 1100 bytes went out in a WRITE that asked for no completion, and
 * the peer read them, so its CREDIT came before this side learnt that the
 * WRITE finished.  Returns side 1's stream; 0 in ${*bad} if all was so.
 */
static struct tstream *
credit_first(struct rz *R, struct tstream *k, uint64_t *t0, uint64_t *r1,
    int *bad)
{
	struct engine_conf c = rconf(16, 16);
	struct engine_stats st;
	struct tstream *ak;

	c.signal_every = 8;
	rz_setup(R, c, c);
	fab_seal(&R->T.f);
	open_stream(&R->T, k, 16384, 4096);
	engine_keep(E(R, 0), k->id);
	settle(&R->T);
	ak = &R->T.acc[0];
	engine_keep(E(R, 1), ak->id);
	put(E(R, 0), k->id, k->tx, 1100, 1, t0);
	settle(&R->T);
	take(E(R, 1), ak->id, ak->rx, 8192, 1, r1, bad);
	settle(&R->T);
	engine_stats(E(R, 0), &st);
	*bad |= !engine_kept(E(R, 0), k->id) || st.sq_depth == 0 || *r1 != *t0;
	return (ak);
}

/*
 * The peer's CREDIT for a kept stream's bytes comes before this side
 * learns their WRITE finished (it asked for no completion): the bytes
 * must stay until it did, or its restore would scribble on new ones.
 * If the link fails first, that finishes the WRITE.
 */
static void
test_seal_credit_first(void)
{
	struct rz R;
	struct tstream k;
	struct tstream *ak;
	uint64_t t0 = 0, r1 = 0;
	uint32_t off;
	int bad = 0, round;

	ak = credit_first(&R, &k, &t0, &r1, &bad);
	ok(!bad && engine_tx_space(E(&R, 0), k.id, &off) == 16384 - 1100,
	    "consumed, but not known complete: the bytes stay");
	for (round = 0; round < 8; round++) {
		put(E(&R, 0), k.id, k.tx, 16384, 1, &t0);
		settle(&R.T);
		take(E(&R, 1), ak->id, ak->rx, 65536, 1, &r1, &bad);
		settle(&R.T);
	}
	while (take(E(&R, 1), ak->id, ak->rx, 65536, 1, &r1, &bad) > 0)
		settle(&R.T);
	ok(!bad && r1 == t0 && t0 > 2 * 16384 && engine_error(E(&R, 1)) == NULL,
	    "and every byte after them arrives right (%llu of %llu)",
	    (unsigned long long)r1, (unsigned long long)t0);
	rz_teardown(&R);
	tstream_free(&k);

	t0 = r1 = 0;
	credit_first(&R, &k, &t0, &r1, &bad);
	rz_loss(&R, 0, 0);
	ok(!bad && is_plain(k.tx, 16384, 1, 0, 1100),
	    "the link fails first: that finishes the WRITE, in plaintext");
	ok(put(R.old[0], k.id, k.tx, 16384, 1, &t0) == 16384,
	    "and the suspended stream has the consumed bytes free again");
	rz_teardown(&R);
	tstream_free(&k);
}

static void
test_seal_restore(void)
{
	struct rz R;
	struct tstream k;
	struct tstream *ak;
	uint64_t t0 = 0, r1 = 0;
	int bad = 0;

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	fab_seal(&R.T.f);
	ak = rz_kept(&R, &k);
	/* Over a quarter of the ring: the WRITE asks for its completion. */
	put(E(&R, 0), k.id, k.tx, 1100, 1, &t0);
	settle(&R.T);
	ok(engine_kept(E(&R, 0), k.id) && engine_sealed(E(&R, 0)) &&
	    is_plain(k.tx, 4096, 1, 0, 1100),
	    "a kept stream's send ring holds plaintext again once its WRITE "
	    "completed");
	put(E(&R, 0), k.id, k.tx, 1400, 1, &t0);
	fab_pump(&R.T.f, 0);
	ok(R.T.f.side[0].wire_n > 0 && !is_plain(k.tx, 4096, 1, 1100, 1400),
	    "a WRITE outstanding has its bytes sealed");
	rz_loss(&R, 0, 0);
	ok(is_plain(k.tx, 4096, 1, 1100, 1400),
	    "and plaintext again once the link failed with it outstanding");
	ok(rz_resume(&R) == 1, "the stream resumes on a new sealed link");
	rz_settle(&R);
	ok(take(E(&R, 1), ak->id, ak->rx, 8192, 1, &r1, &bad) == 2500 &&
	    !bad && r1 == t0 && engine_sealed(E(&R, 1)) &&
	    engine_error(E(&R, 1)) == NULL,
	    "under the new link's keys every byte arrives exactly once");
	rz_teardown(&R);
	tstream_free(&k);
}

/*
 * Data both ways over a link whose counts start ${before} messages below
 * the first rekey boundary: every byte arrives through the renewal.
 */
static void
seal_rekey_data(enum seal_aead aead, uint64_t before)
{
	struct t T;
	struct tstream s;
	struct tstream *a;
	struct engine_stats st0, st1;
	uint64_t t0 = 0, r1 = 0, t1 = 0, r0 = 0;
	int bad = 0, round;

	seal_pair_at(&T, &s, 8192, 512, aead, SEAL_REKEY_EVERY - before);
	a = &T.acc[0];
	for (round = 0; round < 10; round++) {
		put(T.f.side[0].e, s.id, s.tx, 3000, 1, &t0);
		put(T.f.side[1].e, a->id, a->tx, 1700, 2, &t1);
		settle(&T);
		take(T.f.side[1].e, a->id, a->rx, 8192, 1, &r1, &bad);
		take(T.f.side[0].e, s.id, s.rx, 8192, 2, &r0, &bad);
		settle(&T);
	}
	engine_stats(T.f.side[0].e, &st0);
	engine_stats(T.f.side[1].e, &st1);
	ok(!bad && r1 == t0 && r0 == t1 && t0 == 30000 && t1 == 17000 &&
	    engine_error(T.f.side[0].e) == NULL &&
	    engine_error(T.f.side[1].e) == NULL && fab_rekeys(&T.f) == 4 &&
	    st0.sealed_msgs > before && st1.sealed_msgs > before &&
	    seal_dir_count(&T.f.side[0].seal.tx) == seal_dir_count(&T.f.side[1].seal.rx) &&
	    seal_dir_count(&T.f.side[1].seal.tx) == seal_dir_count(&T.f.side[0].seal.rx),
	    "%s: both directions renew their keys mid-stream, both ends (%d "
	    "of 4), and every byte arrives (%llu and %llu)",
	    seal_aead_name(aead), (int)fab_rekeys(&T.f),
	    (unsigned long long)r1, (unsigned long long)r0);
	teardown(&T);
	tstream_free(&s);
}

/*
 * A kept stream's WRITEs sealed at messages E-2, E-1 and E (E the first
 * rekey boundary) are all outstanding; the first completes after the
 * renewal, then the link fails with the other two: each is restored under
 * the key it was sealed with, and the resume carries every byte.
 */
static void
test_seal_rekey(void)
{
	struct rz R;
	struct tstream k;
	struct tstream *ak;
	uint64_t t0 = 0, r1 = 0, wp;
	uint32_t n;
	int bad = 0, w;

	seal_rekey_data(SEAL_CHACHAPOLY, 20);
	if (seal_aesgcm_available())
		seal_rekey_data(SEAL_AESGCM, 20);
	else
		ok(1, "# SKIP AES-256-GCM: this CPU lacks AES-NI or PCLMUL");

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	fab_seal(&R.T.f);
	ak = rz_kept(&R, &k);
	settle(&R.T);
	seal_dir_set_count_for_test(&R.T.f.side[0].seal.tx, SEAL_REKEY_EVERY - 2);
	seal_dir_set_count_for_test(&R.T.f.side[1].seal.rx, SEAL_REKEY_EVERY - 2);
	/* Over a quarter of the ring each: every WRITE asks for completion. */
	wp = R.T.f.side[0].writes_posted;
	for (w = 0; w < 3; w++) {
		put(E(&R, 0), k.id, k.tx, 1100, 1, &t0);
		fab_pump(&R.T.f, 0);
	}
	ok(seal_dir_count(&R.T.f.side[0].seal.tx) == SEAL_REKEY_EVERY + 1 &&
	    R.T.f.side[0].writes_posted - wp == 3 &&
	    !is_plain(k.tx, 4096, 1, 0, 1) &&
	    !is_plain(k.tx, 4096, 1, 2200, 1),
	    "three WRITEs outstanding, sealed across the rekey boundary");
	/* The first WRITE and its tag land, and it completes. */
	fab_deliver(&R.T.f, 0);
	fab_deliver(&R.T.f, 0);
	while (fab_complete(&R.T.f, 0) > 0 || fab_complete(&R.T.f, 1) > 0)
		;
	ok(engine_error(E(&R, 0)) == NULL && engine_kept(E(&R, 0), k.id) &&
	    is_plain(k.tx, 4096, 1, 0, 1100) &&
	    !is_plain(k.tx, 4096, 1, 1100, 1) && !is_plain(k.tx, 4096, 1, 2200, 1),
	    "the WRITE sealed before the renewal completes after it: its "
	    "bytes are plaintext again, the others still sealed");
	rz_loss(&R, 0, 0);
	ok(is_plain(k.tx, 4096, 1, 0, 3300) && engine_kept(R.old[0], k.id),
	    "the link fails with WRITEs of both keys outstanding: all "
	    "plaintext again, and the stream kept");
	ok(rz_resume(&R) == 1, "the stream resumes on a new sealed link");
	rz_settle(&R);
	n = take(E(&R, 1), ak->id, ak->rx, 8192, 1, &r1, &bad);
	ok(n == 3300 && !bad && r1 == t0 && engine_sealed(E(&R, 1)) &&
	    engine_error(E(&R, 1)) == NULL,
	    "every byte arrives exactly once (%u of %llu)", (unsigned)n,
	    (unsigned long long)t0);
	rz_teardown(&R);
	tstream_free(&k);
}

int
main(void)
{

	if (sodium_init() < 0)
		return (1);
	test_conf();
	test_before_connect();
	test_sizes();
	test_wrap_and_credit();
	test_signal_inline();
	test_half_close_and_isolation();
	test_refuse_and_limit();
	test_idle_abort_goaway();
	test_violations();
	test_auth();
	test_handshake();
	test_handshake_noise();
	test_keep();
	test_suspend();
	test_resume_data();
	test_resume_gone();
	test_resume_denied();
	test_abandon();
	test_stale_rkey();
	test_resume_violations();
	test_resume_mutual();
	test_resume_wrong_proof();
	test_resume_v4();
	test_resume_open_race();
	test_resume_auth();
	test_resume_calls();
	test_origin();
	test_resize();
	test_stream_flags_str();
	test_sched_fair();
	test_sched_window();
	test_sched_estimate();
	test_sched_credit_wait();
	test_seal_data();
	test_seal_tamper();
	test_seal_restore();
	test_seal_credit_first();
	test_seal_rekey();
	return (tap_done());
}
