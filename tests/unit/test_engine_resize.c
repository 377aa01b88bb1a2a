/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/protocol/engine.  Rings resized (protocol version
 * 4): grown under load, shrunk when idle, a shrink racing data, growth
 * refused, a peer that never answers a RING, the links that may not
 * resize, and a reader that lags.  The pair of engines, and how work and bytes move between
 * them, are engine_fixture.h's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixture.h"
#include "tap.h"

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

/*
 * ${rounds} rounds of bytes side 0 -> 1 whose reader takes an eighth of
 * its ring a round, never all there is: it, not the ring, is the limit.
 * Returns the most bytes that were ever unread at the end of a round,
 * 0 if the reader ever caught up.
 */
static uint64_t
lag(struct t *T, uint32_t a, uint32_t b, uint64_t *tx, uint64_t *rx,
    int rounds, int *bad)
{
	struct engine_ring r0, r1;
	uint64_t most = 0;

	while (rounds-- > 0) {
		put(T->f.side[0].e, a, NULL, 1 << 20, 0, tx);
		settle(T);
		engine_rings(T->f.side[1].e, b, &r0, &r1);
		take(T->f.side[1].e, b, NULL, r1.size / 8, 0, rx, bad);
		settle(T);
		if (*tx == *rx)
			return (0);
		if (*tx - *rx > most)
			most = *tx - *rx;
	}
	return (most);
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
	ok(setup_cap(&T, conf(16, 16), conf(16, 16), 0, 3) == 0 &&
	    !engine_can_resize(T.f.side[0].e) &&
	    !engine_can_resize(T.f.side[1].e),
	    "with a version-3 peer neither side resizes");
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
	ok(setup(&T, rconf(16, 16), rconf(16, 16)) == 0 &&
	    engine_can_resume(T.f.side[0].e) &&
	    !engine_can_resize(T.f.side[0].e),
	    "a link that can resume streams does not resize rings");
	teardown(&T);
}

/*
 * A reader that lags keeps its receive ring full: the ring does not grow
 * for that, and halves at each trim (never below its start) while bytes
 * keep coming; once the reader keeps up it grows again.
 */
static void
test_lag(void)
{
	struct t T;
	struct tmem m0, m1;
	struct engine_mem em0, em1;
	struct engine_stats st1;
	struct engine_ring tx, rx;
	uint64_t ptx, prx, grows, most;
	uint32_t b, want;
	int id, bad = 0;

	em0.alloc = em1.alloc = tm_alloc;
	em0.free = em1.free = tm_free;
	em0.arg = &m0;
	em1.arg = &m1;

	/* Lagging from its first byte: it never grows. */
	ok(setup(&T, conf(64, 64), conf(64, 64)) == 0, "a new link");
	tm_pair(&T, &m0, &m1, &em0, &em1);
	id = open_grow(&T, &m0, &m1, 65536);
	b = T.acc[0].id;
	ptx = prx = 0;
	most = lag(&T, (uint32_t)id, b, &ptx, &prx, 256, &bad);
	ok(most > 2048 && !bad && prx > 16 * 4096, "a reader that never "
	    "catches up takes %llu bytes, %llu unread at most",
	    (unsigned long long)prx, (unsigned long long)most);
	engine_rings(T.f.side[1].e, b, &tx, &rx);
	engine_stats(T.f.side[1].e, &st1);
	ok(rx.size == 4096 && st1.ring_grows == 0, "its ring does not grow "
	    "for it: %u", (unsigned)rx.size);
	grow_done(&T, &m0, &m1);

	id = grown(&T, &m0, &m1, &em0, &em1, &ptx, &prx, &b);
	engine_rings(T.f.side[1].e, b, &tx, &rx);
	engine_stats(T.f.side[1].e, &st1);
	grows = st1.ring_grows;
	ok(rx.size == 65536, "the receive ring grew to 65536 while its "
	    "reader kept up");
	engine_trim(T.f.side[1].e);	/* a period starts */
	ok(lag(&T, (uint32_t)id, b, &ptx, &prx, 64, &bad) > 32768,
	    "a lagging reader leaves more than half the ring unread");
	engine_stats(T.f.side[1].e, &st1);
	ok(st1.ring_grows == grows, "the ring did not grow for it: %llu "
	    "growths, %llu before", (unsigned long long)st1.ring_grows,
	    (unsigned long long)grows);
	for (want = 32768; want >= 4096; want /= 2) {
		engine_trim(T.f.side[1].e);
		settle(&T);
		engine_rings(T.f.side[1].e, b, &tx, &rx);
		ok(rx.size == want && m1.last_replaces == 2 * want &&
		    engine_error(T.f.side[1].e) == NULL,
		    "a period the reader never caught up in halves the ring "
		    "to %u: %u", (unsigned)want, (unsigned)rx.size);
		ok(lag(&T, (uint32_t)id, b, &ptx, &prx, 64, &bad) > 0 && !bad,
		    "bytes keep coming, intact, through the old ring and the "
		    "new one");
	}
	engine_trim(T.f.side[1].e);
	settle(&T);
	engine_rings(T.f.side[1].e, b, &tx, &rx);
	engine_stats(T.f.side[1].e, &st1);
	ok(rx.size == 4096 && st1.ring_grows == grows && tm_live(&m1) == 2,
	    "not below the size it started with, never grown, the old rings "
	    "freed: %u, %d rings held", (unsigned)rx.size, tm_live(&m1));

	/* The reader keeps up again: the ring holds the sender back. */
	ok(flow(&T, (uint32_t)id, b, &ptx, &prx, ptx + (1 << 20), &bad) &&
	    !bad, "1 MiB arrives intact once the reader keeps up");
	engine_rings(T.f.side[1].e, b, &tx, &rx);
	engine_stats(T.f.side[1].e, &st1);
	ok(rx.size == 65536 && st1.ring_grows == grows + 4,
	    "and the ring grows back to 65536: %u", (unsigned)rx.size);

	/* A reader that stops altogether is not lagging: no shrink. */
	engine_trim(T.f.side[1].e);
	put(T.f.side[0].e, (uint32_t)id, NULL, 1 << 20, 0, &ptx);
	settle(&T);
	engine_trim(T.f.side[1].e);	/* bytes came, none was read */
	settle(&T);
	engine_trim(T.f.side[1].e);	/* and none came since */
	settle(&T);
	engine_rings(T.f.side[1].e, b, &tx, &rx);
	ok(rx.size == 65536, "a full ring whose reader stopped and whose "
	    "sender is blocked keeps its size: %u", (unsigned)rx.size);
	grow_done(&T, &m0, &m1);
}

int
main(void)
{

	test_resize();
	test_lag();
	return (tap_done());
}
