/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/protocol/engine.  Data and credit: ring sizes and
 * chunks, a span across the ring's end, credit updates every quarter of
 * a ring, signalled and inline work requests.  The pair of engines, and
 * how work and bytes move between them, are engine_fixture.h's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixture.h"
#include "tap.h"

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
	ok(take(T.f.side[1].e, a->id, a->rx, 2000, 2, &a->rx_at, &bad) ==
	    2000 && !bad, "and arrives intact");
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

int
main(void)
{

	test_sizes();
	test_wrap_and_credit();
	test_signal_inline();
	return (tap_done());
}
