/*
 * Unit tests for lib/engine: the behaviours the protocol promises, each
 * checked on a hand-driven fabric (tests/sim/fabric.c) where the order of
 * events is fixed, so a failure points at one rule.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fabric.h"
#include "tap.h"
#include "wire.h"

struct tstream {
	uint8_t *tx, *rx;
	uint32_t txsz, rxsz;
	uint32_t id;
	uint32_t events;	/* all event flags seen */
	uint16_t reason;
};

struct t {
	struct fab f;
	struct tstream *by_id[2][64];
	struct tstream acc[64];	/* streams side 1 accepted */
	int nacc;
	uint32_t acc_ring;	/* ring size side 1 accepts with */
};

static struct engine_conf
conf(uint32_t sq, uint32_t rq)
{
	struct engine_conf c;

	memset(&c, 0, sizeof(c));
	c.sq_size = sq;
	c.rq_size = rq;
	c.max_streams = 64;
	c.inline_size = 0;
	return (c);
}

static void
rings(struct t *T, int side, struct tstream *s, uint32_t txsz, uint32_t rxsz,
    struct engine_ring *tx, struct engine_ring *rx)
{

	s->txsz = txsz;
	s->rxsz = rxsz;
	fab_rings(&T->f, side, txsz, rxsz, 0x77, &s->tx, &s->rx, tx, rx);
}

/* Drain side ${i}'s events; side 1 accepts every INCOMING stream. */
static void
events(struct t *T, int i)
{
	struct engine_event ev;
	struct engine_ring tx, rx;
	struct tstream *s;

	while (engine_next_event(T->f.side[i].e, &ev)) {
		if (ev.flags & ENGINE_EV_INCOMING) {
			s = &T->acc[T->nacc++];
			memset(s, 0, sizeof(*s));
			s->id = ev.stream;
			rings(T, i, s, T->acc_ring, T->acc_ring, &tx, &rx);
			engine_accept(T->f.side[i].e, ev.stream, &tx, &rx, s);
			T->by_id[i][ev.stream] = s;
			continue;
		}
		if ((s = ev.user) == NULL)
			continue;
		s->events |= ev.flags;
		if (ev.flags & (ENGINE_EV_REFUSED | ENGINE_EV_RESET))
			s->reason = ev.reason;
	}
}

/* Run both sides until nothing moves; returns the WRs posted meanwhile. */
static uint64_t
settle(struct t *T)
{
	uint64_t before = T->f.side[0].wrs_posted + T->f.side[1].wrs_posted;
	int i, moved;

	do {
		moved = 0;
		for (i = 0; i < 2; i++) {
			/* Events first: accepting queues work to post. */
			events(T, i);
			fab_pump(&T->f, i);
			events(T, i);
		}
		for (i = 0; i < 2; i++) {
			while (fab_deliver(&T->f, i) > 0)
				moved = 1;
			while (fab_complete(&T->f, i) > 0)
				moved = 1;
		}
	} while (moved);
	return (T->f.side[0].wrs_posted + T->f.side[1].wrs_posted - before);
}

static int
setup(struct t *T, struct engine_conf a, struct engine_conf b)
{

	memset(T, 0, sizeof(*T));
	T->acc_ring = 4096;
	return (fab_init(&T->f, &a, &b));
}

static void
teardown(struct t *T)
{
	int k;

	fab_free(&T->f);
	for (k = 0; k < T->nacc; k++) {
		free(T->acc[k].tx);
		free(T->acc[k].rx);
	}
}

static int
open_stream(struct t *T, struct tstream *s, uint32_t txsz, uint32_t rxsz)
{
	struct engine_ring tx, rx;
	int id;

	memset(s, 0, sizeof(*s));
	rings(T, 0, s, txsz, rxsz, &tx, &rx);
	id = engine_open(T->f.side[0].e, "t", &tx, &rx, s);
	if (id >= 0)
		s->id = (uint32_t)id;
	return (id);
}

/* Put ${n} bytes of ${byte} into side ${i}'s stream; returns bytes put. */
static uint32_t
put(struct t *T, int i, uint32_t id, uint8_t *ring, uint32_t n, uint8_t byte)
{
	uint32_t off, k, done = 0;

	while (done < n && (k = engine_tx_space(T->f.side[i].e, id, &off))) {
		if (k > n - done)
			k = n - done;
		memset(ring + off, byte, k);
		engine_tx_commit(T->f.side[i].e, id, k);
		done += k;
	}
	return (done);
}

/* Take up to ${n} bytes; returns how many, checking they are ${byte}. */
static uint32_t
take(struct t *T, int i, uint32_t id, uint8_t *ring, uint32_t n, uint8_t byte,
    int *bad)
{
	uint32_t off, k, j, done = 0;

	while (done < n && (k = engine_rx_data(T->f.side[i].e, id, &off))) {
		if (k > n - done)
			k = n - done;
		for (j = 0; j < k; j++)
			if (ring[off + j] != byte)
				*bad = 1;
		engine_rx_consume(T->f.side[i].e, id, k);
		done += k;
	}
	return (done);
}

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
	struct engine_ring r = { 0x1000, 4096, 1 };
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
	ok(h.credits == 16 && h.version == 1 && h.flags == 0,
	    "hello grants the posted receives as credits");
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
	struct engine_ring bad = { 0x1000, 6000, 1 }, good = { 0x1000, 4096, 1 };
	int bad_bytes = 0;
	uint32_t got = 0;

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
		put(&T, 0, big.id, big.tx, (1u << 20) - got, 0xab);
		settle(&T);
		got += take(&T, 1, T.acc[0].id, T.acc[0].rx, 1u << 20, 0xab,
		    &bad_bytes);
		settle(&T);
	}
	ok(got == (1u << 20) && !bad_bytes,
	    "1 MiB crosses from a 64 MiB ring into a 4 KiB ring intact");
	ok(T.f.side[0].max_wr_len <= 4096,
	    "writes never exceed the smaller ring (%llu)",
	    (unsigned long long)T.f.side[0].max_wr_len);
	teardown(&T);
	free(big.tx);
	free(big.rx);

	/* 1 MiB rings both ways: writes are capped at 64 KiB. */
	setup(&T, conf(64, 64), conf(64, 64));
	T.acc_ring = 1u << 20;
	open_stream(&T, &s, 1u << 20, 1u << 20);
	settle(&T);
	put(&T, 0, s.id, s.tx, 1u << 20, 0x11);
	settle(&T);
	got = take(&T, 1, T.acc[0].id, T.acc[0].rx, 1u << 20, 0x11, &bad_bytes);
	ok(got == (1u << 20) && !bad_bytes, "1 MiB in one go");
	ok(T.f.side[0].max_wr_len == WIRE_WRITE_MAX,
	    "no write exceeds 64 KiB, and big ones use all of it (%llu)",
	    (unsigned long long)T.f.side[0].max_wr_len);
	ok(T.f.side[0].writes_posted == 16, "1 MiB took 16 writes (%llu)",
	    (unsigned long long)T.f.side[0].writes_posted);
	teardown(&T);
	free(s.tx);
	free(s.rx);
}

static void
test_wrap_and_credit(void)
{
	struct t T;
	struct tstream s;
	struct engine_stats st;
	uint64_t w0, c0;
	int bad = 0;

	setup(&T, conf(16, 16), conf(16, 16));
	open_stream(&T, &s, 4096, 4096);
	settle(&T);

	put(&T, 0, s.id, s.tx, 3000, 1);
	settle(&T);
	ok(take(&T, 1, T.acc[0].id, T.acc[0].rx, 1000, 1, &bad) == 1000,
	    "1000 of 3000 bytes read");
	engine_stats(T.f.side[1].e, &st);
	c0 = st.credit_updates;
	settle(&T);
	engine_stats(T.f.side[1].e, &st);
	ok(st.credit_updates == c0,
	    "no credit after 1000 bytes (below a quarter of 4096)");
	take(&T, 1, T.acc[0].id, T.acc[0].rx, 100, 1, &bad);
	settle(&T);
	engine_stats(T.f.side[1].e, &st);
	ok(st.credit_updates == c0 + 1,
	    "one credit update once 1100 bytes (a quarter) were read");
	take(&T, 1, T.acc[0].id, T.acc[0].rx, 1900, 1, &bad);
	settle(&T);

	/* 2000 bytes from offset 3000 cross the end of both rings. */
	w0 = T.f.side[0].writes_posted;
	put(&T, 0, s.id, s.tx, 2000, 2);
	settle(&T);
	ok(T.f.side[0].writes_posted - w0 == 2,
	    "a span across the ring's end costs exactly two writes");
	ok(take(&T, 1, T.acc[0].id, T.acc[0].rx, 2000, 2, &bad) == 2000 &&
	    !bad, "and arrives intact");
	teardown(&T);
	free(s.tx);
	free(s.rx);
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
	setup(&T, a, conf(64, 64));
	T.acc_ring = 1u << 20;
	open_stream(&T, &s, 1u << 20, 1u << 20);
	settle(&T);
	engine_stats(T.f.side[0].e, &st);
	{
		uint64_t w0 = st.writes + st.sends, s0 = st.signaled;

		/* 32 writes of 32 KiB in one batch. */
		put(&T, 0, s.id, s.tx, 32 * 32768, 3);
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
	take(&T, 1, T.acc[0].id, T.acc[0].rx, 32 * 32768, 3, &bad);
	settle(&T);
	ok(!bad, "the batch arrives intact");
	ok(T.f.side[0].max_outstanding <= 64, "the send queue never overflows");
	/* A small write goes inline. */
	put(&T, 0, s.id, s.tx, 10, 4);
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
	free(s.tx);
	free(s.rx);
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
	ok(put(&T, 0, s1.id, s1.tx, 4096, 5) == 4096, "s1: ring filled");
	settle(&T);
	engine_shutdown(T.f.side[0].e, s1.id);	/* too early: data pending */
	ok(engine_tx_space(T.f.side[0].e, s1.id, &k) == 0,
	    "no more bytes may be put after shutdown");
	settle(&T);
	ok(!(a1->events & ENGINE_EV_EOF), "no EOF while bytes are unread");

	/* s1's reader is slow: s2 still moves 64 KiB through 4 KiB rings. */
	while (got2 < 65536) {
		put(&T, 0, s2.id, s2.tx, 65536 - got2, 6);
		settle(&T);
		got2 += take(&T, 1, a2->id, a2->rx, 65536, 6, &bad);
		settle(&T);
		if (T.f.failed)
			break;
	}
	ok(got2 == 65536 && !bad,
	    "a stalled reader on s1 does not stall s2 on the same link");

	/* The other direction of s1 still flows after its shutdown. */
	put(&T, 1, a1->id, a1->tx, 300, 7);
	settle(&T);
	ok(take(&T, 0, s1.id, s1.rx, 300, 7, &bad) == 300 && !bad,
	    "s1's reverse direction flows after the forward shutdown");

	ok(take(&T, 1, a1->id, a1->rx, 4095, 5, &bad) == 4095,
	    "s1: all but one byte read");
	settle(&T);
	ok(!(a1->events & ENGINE_EV_EOF), "still no EOF with one byte left");
	ok(take(&T, 1, a1->id, a1->rx, 10, 5, &bad) == 1 && !bad,
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
	free(s1.tx);
	free(s1.rx);
	free(s2.tx);
	free(s2.rx);
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
	while (fab_deliver(&T.f, 0) > 0)
		;
	while (fab_complete(&T.f, 1) > 0)
		;
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
	free(s.tx);
	free(s.rx);

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
		free(x.tx);
		free(x.rx);
		free(y.tx);
		free(y.rx);
	}
	teardown(&T);

	/* An undecided INCOMING stream carries the user pointer set on it. */
	{
		int mark;

		setup(&T, conf(8, 8), conf(8, 8));
		open_stream(&T, &s, 4096, 4096);
		fab_pump(&T.f, 0);
		while (fab_deliver(&T.f, 0) > 0)
			;
		while (fab_complete(&T.f, 1) > 0)
			;
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
		free(s.tx);
		free(s.rx);
		teardown(&T);
	}
}

static void
test_idle_abort_goaway(void)
{
	struct t T;
	struct tstream s, g;
	struct engine_ring r = { 0x1000, 4096, 1 };

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
	free(s.tx);
	free(s.rx);
	free(g.tx);
	free(g.rx);
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
	const char *why;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		setup(&T, conf(8, 8), conf(8, 8));
		fab_inject(&T.f, 0, cases[k].kind, cases[k].buf, cases[k].len,
		    cases[k].imm);
		why = engine_error(T.f.side[0].e);
		ok(why != NULL && strstr(why, cases[k].expect) != NULL,
		    "%s ends the link: %s", cases[k].what,
		    why ? why : "(still up)");
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
		why = engine_error(T.f.side[0].e);
		ok(why && strstr(why, "exceed its free ring space"),
		    "4097 bytes into a 4096-byte ring end the link: %s",
		    why ? why : "(still up)");
		events(&T, 0);
		ok((s.events & ENGINE_EV_RESET) &&
		    (s.events & ENGINE_EV_RELEASED),
		    "its streams are reset and released");
		ok(engine_take_wrs(T.f.side[0].e, NULL, 0) == 0,
		    "a failed link posts nothing");
		teardown(&T);
		free(s.tx);
		free(s.rx);
	}
}

/*
 * Stand-in proofs: 32 bytes of (key + 1) from the initiator, (key + 2)
 * from the responder.  The engine only moves and gates them; the daemon's
 * HMAC is tested with the daemon.
 */
struct tauth {
	uint8_t key;
	int initiator;
	int proved, verified, failed;
	int proved_after_verify;
};

static void
tauth_prove(void *arg, uint8_t proof[WIRE_AUTH_LEN])
{
	struct tauth *a = arg;

	memset(proof, (uint8_t)(a->key + (a->initiator ? 1 : 2)),
	    WIRE_AUTH_LEN);
	a->proved++;
	a->proved_after_verify = a->verified;
}

static int
tauth_verify(void *arg, const uint8_t proof[WIRE_AUTH_LEN])
{
	struct tauth *a = arg;
	uint8_t want[WIRE_AUTH_LEN];

	memset(want, (uint8_t)(a->key + (a->initiator ? 2 : 1)),
	    WIRE_AUTH_LEN);
	if (memcmp(want, proof, WIRE_AUTH_LEN) != 0) {
		a->failed++;
		return (-1);
	}
	a->verified++;
	return (0);
}

/* Side 0 (initiator, key ${ka}) and side 1 (key ${kb}; none if ${kb} < 0). */
static void
auth_pair(struct t *T, struct engine_conf *c, struct tauth *ta,
    struct tauth *tb, uint8_t ka, int kb)
{

	memset(ta, 0, sizeof(*ta));
	memset(tb, 0, sizeof(*tb));
	ta->key = ka;
	ta->initiator = 1;
	tb->key = (uint8_t)kb;
	memset(T, 0, sizeof(*T));
	T->acc_ring = 4096;
	fab_init_auth(&T->f, c, c, &(struct engine_auth){ 1, tauth_prove,
	    tauth_verify, ta }, kb < 0 ? NULL : &(struct engine_auth){ 0,
	    tauth_prove, tauth_verify, tb });
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
	int bad = 0;
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
	free(s.tx);
	free(s.rx);
	settle(&T);
	ok(engine_authenticated(T.f.side[0].e) &&
	    engine_authenticated(T.f.side[1].e),
	    "both sides authenticated after the exchange");
	ok(ta.proved == 1 && tb.proved == 1 && ta.verified == 1 &&
	    tb.verified == 1, "each side proved once and checked once");
	ok(tb.proved_after_verify == 1,
	    "the responder proved itself only after checking the initiator");
	ok(open_stream(&T, &s, 4096, 4096) >= 0, "a stream opens after it");
	settle(&T);
	ok(s.events & ENGINE_EV_OPENED, "and is accepted");
	put(&T, 0, s.id, s.tx, 1000, 0x5a);
	settle(&T);
	ok(take(&T, 1, T.acc[0].id, T.acc[0].rx, 1000, 0x5a, &bad) == 1000 &&
	    !bad, "data flows on an authenticated link");
	free(s.tx);
	free(s.rx);
	teardown(&T);

	/* Wrong key: the responder fails the link and never proves itself. */
	auth_pair(&T, &c, &ta, &tb, 7, 9);
	settle(&T);
	ok(tb.failed == 1 && engine_error(T.f.side[1].e) != NULL &&
	    strstr(engine_error(T.f.side[1].e), "authentication failed"),
	    "wrong key: the responder ends the link: %s",
	    engine_error(T.f.side[1].e) ? engine_error(T.f.side[1].e) : "-");
	ok(engine_error_kind(T.f.side[1].e) == ENGINE_ERR_AUTH,
	    "wrong key: the kind is authentication");
	ok(tb.proved == 0 && !engine_authenticated(T.f.side[0].e),
	    "wrong key: the responder never sends its proof");
	teardown(&T);

	/* One side authenticates, the other does not: both refuse. */
	auth_pair(&T, &c, &ta, &tb, 7, -1);
	ok(engine_error(T.f.side[0].e) != NULL &&
	    strstr(engine_error(T.f.side[0].e), "does not authenticate"),
	    "a keyed side refuses a peer without auth: %s",
	    engine_error(T.f.side[0].e) ? engine_error(T.f.side[0].e) : "-");
	ok(engine_error(T.f.side[1].e) != NULL &&
	    strstr(engine_error(T.f.side[1].e), "no key"),
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
	ok(engine_error(T.f.side[1].e) != NULL &&
	    strstr(engine_error(T.f.side[1].e), "OPEN before authentication"),
	    "OPEN before the proof ends the link: %s",
	    engine_error(T.f.side[1].e) ? engine_error(T.f.side[1].e) : "-");
	ok(T.nacc == 0, "and no stream was offered to the application");
	teardown(&T);

	auth_pair(&T, &c, &ta, &tb, 7, 7);
	fab_inject(&T.f, 1, FAB_CQE_RECV_IMM, NULL, 0, wire_imm_encode(0, 1));
	ok(engine_error(T.f.side[1].e) != NULL &&
	    strstr(engine_error(T.f.side[1].e), "data before authentication"),
	    "data before the proof ends the link");
	teardown(&T);

	auth_pair(&T, &c, &ta, &tb, 7, 7);
	settle(&T);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_AUTH;
	n = wire_rec_encode(buf, sizeof(buf), &r);
	fab_inject(&T.f, 1, FAB_CQE_RECV, buf, (uint32_t)n, 0);
	ok(engine_error(T.f.side[1].e) != NULL &&
	    strstr(engine_error(T.f.side[1].e), "unexpected AUTH"),
	    "a second AUTH ends the link");
	teardown(&T);

	/* Without auth, an AUTH record is a violation too. */
	memset(&T, 0, sizeof(T));
	fab_init(&T.f, &c, &c);
	fab_inject(&T.f, 1, FAB_CQE_RECV, buf, (uint32_t)n, 0);
	ok(engine_error(T.f.side[1].e) != NULL &&
	    strstr(engine_error(T.f.side[1].e), "unexpected AUTH"),
	    "AUTH on a link without authentication ends it");
	teardown(&T);
}

int
main(void)
{

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
	return (tap_done());
}
