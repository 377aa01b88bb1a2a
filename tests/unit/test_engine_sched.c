/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/protocol/engine.  The scheduler: turns by bytes
 * across streams and their weights, the send window, waits for credit,
 * and the window learnt from the wire and from how fast a side reacts.
 * The pair of engines, and how work and bytes move between them, are
 * engine_fixture.h's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixture.h"
#include "tap.h"

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

int
main(void)
{

	test_sched_fair();
	test_sched_window();
	test_sched_estimate();
	test_sched_credit_wait();
	return (tap_done());
}
