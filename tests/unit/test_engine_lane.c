/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The latency lane (protocol version 8): two engines joined by a driver
 * of its own that keeps each lane's work requests in order and lets the
 * test choose how the lanes interleave, and when a sender learns that
 * its work completed (never before the receiver took it: RC's ACK comes
 * after the receiver's completion, and both lanes share one completion
 * queue).  What it checks: the lanes are negotiated (and not with an
 * older peer); nothing goes before lane 1 is up; small writes go as DATA
 * records on lane 1 and arrive while lane 0 is held up behind bulk; a
 * stream never has WRs outstanding on both lanes (its bytes arrive in
 * order whatever the interleaving); a DATA record at the wrong place or
 * on a link of one lane ends the link.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "engine_io.h"
#include "engine_stream.h"
#include "tap.h"
#include "wire.h"

/* Stop at once: the driver cannot go on. */
#define BAIL_OUT(...)	do {					\
	printf("Bail out! ");						\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	exit(1);							\
} while (0)
#define diag(...)	do {					\
	printf("# ");							\
	printf(__VA_ARGS__);						\
	printf("\n");							\
} while (0)

#define SQ	32
#define RQ	32
#define RING	4096
#define NS	6

/* One work request in flight, and what a lane holds. */
struct fl {
	struct engine_wr w;
};

struct lanebox {
	struct fl q[SQ];		/* posted, not yet delivered */
	int qh, qn;
	struct engine_wr done[SQ];	/* delivered, completion not seen */
	int dh, dn;
	uint32_t recv[RQ];		/* receive slots posted */
	int rh, rn;
};

struct side {
	struct engine *e;
	uint8_t ctrl[2 * SQ * WIRE_MSG_SIZE];
	uint8_t rbuf[2 * RQ * WIRE_MSG_SIZE];
	struct lanebox l[2];
	uint8_t tx[NS][RING], rx[NS][RING];
	uint32_t id[NS];
	uint64_t put_at[NS], got_at[NS];
	int bad;
	uint32_t events;
};

static struct side S[2];

static uint8_t *
ptr(void *arg, uint64_t addr)
{

	(void)arg;
	return ((uint8_t *)(uintptr_t)addr);
}

static uint8_t
pat(int side, int k, uint64_t pos)
{

	return ((uint8_t)(pos * 31 + (uint64_t)k * 7 + (uint64_t)side * 101 +
	    (pos >> 8)));
}

static struct engine_conf
lconf(int lanes)
{
	struct engine_conf c;

	memset(&c, 0, sizeof(c));
	c.sq_size = SQ;
	c.rq_size = RQ;
	c.max_streams = 64;
	c.lanes = (uint8_t)lanes;
	c.ring_ptr = ptr;
	return (c);
}

static void
side_new(int i, struct engine_conf c)
{
	const char *err;

	memset(&S[i], 0, sizeof(S[i]));
	c.ctrl_send = S[i].ctrl;
	c.ctrl_send_addr = (uint64_t)(uintptr_t)S[i].ctrl;
	S[i].e = engine_new(&c, &err);
	if (S[i].e == NULL)
		BAIL_OUT("engine_new: %s", err);
}

/* Post what side ${i} hands out: receives, then WRs, each on its lane. */
static void
post(int i)
{
	struct side *s = &S[i];
	uint32_t slots[64];
	struct engine_wr w[16];
	struct lanebox *b;
	int n, k;

	n = engine_take_recvs(s->e, slots, 64);
	for (k = 0; k < n; k++) {
		b = &s->l[engine_slot_lane(s->e, slots[k])];
		if (b->rn == RQ)
			BAIL_OUT("more receives than the queue holds");
		b->recv[(b->rh + b->rn++) % RQ] = slots[k];
	}
	do {
		n = engine_take_wrs(s->e, w, 16);
		for (k = 0; k < n; k++) {
			b = &s->l[w[k].lane];
			if (b->qn + b->dn >= SQ)
				BAIL_OUT("side %d overran lane %u's send queue",
				    i, (unsigned)w[k].lane);
			b->q[(b->qh + b->qn++) % SQ].w = w[k];
		}
	} while (n == 16);
}

/* Side ${i}'s events: accept incoming streams, note the rest. */
static void
events(int i)
{
	struct side *s = &S[i];
	struct engine_event ev;
	struct engine_ring tx, rx;
	int k;

	while (engine_next_event(s->e, &ev)) {
		s->events |= ev.flags;
		if (!(ev.flags & ENGINE_EV_INCOMING))
			continue;
		for (k = 0; k < NS && s->id[k] != 0; k++)
			;
		if (k == NS)
			BAIL_OUT("too many streams");
		tx.addr = (uint64_t)(uintptr_t)s->tx[k];
		tx.size = RING;
		tx.key = 1;
		rx.addr = (uint64_t)(uintptr_t)s->rx[k];
		rx.size = RING;
		rx.key = 2;
		s->id[k] = ev.stream + 1;
		(void)engine_accept(s->e, ev.stream, &tx, &rx, NULL);
	}
}

/* Deliver side ${i}'s oldest WR on ${lane} to the peer; 0 if none. */
static int
deliver(int i, unsigned lane)
{
	struct side *s = &S[i], *p = &S[!i];
	struct lanebox *b = &s->l[lane], *pb = &p->l[lane];
	struct engine_wr w;
	uint32_t slot;
	uint8_t *buf;

	if (b->qn == 0)
		return (0);
	w = b->q[b->qh].w;
	b->qh = (b->qh + 1) % SQ;
	b->qn--;
	if (w.op == ENGINE_WR_WRITE_IMM)
		memcpy((void *)(uintptr_t)w.remote_addr,
		    (void *)(uintptr_t)w.local_addr, w.len);
	if (pb->rn == 0)
		BAIL_OUT("receiver not ready on lane %u", lane);
	slot = pb->recv[pb->rh];
	pb->rh = (pb->rh + 1) % RQ;
	pb->rn--;
	if (engine_slot_lane(p->e, slot) != lane)
		BAIL_OUT("slot %u posted on the wrong lane", (unsigned)slot);
	buf = p->rbuf + (size_t)slot * WIRE_MSG_SIZE;
	if (w.op == ENGINE_WR_SEND) {
		memcpy(buf, (void *)(uintptr_t)w.local_addr, w.len);
		(void)engine_on_recv(p->e, slot, buf, w.len);
	} else
		(void)engine_on_recv_imm(p->e, slot, w.imm, w.len);
	b->done[(b->dh + b->dn++) % SQ] = w;
	return (1);
}

/* Side ${i} learns its oldest delivered WR on ${lane} completed. */
static int
ack(int i, unsigned lane)
{
	struct lanebox *b = &S[i].l[lane];
	struct engine_wr w;

	if (b->dn == 0)
		return (0);
	w = b->done[b->dh];
	b->dh = (b->dh + 1) % SQ;
	b->dn--;
	if (w.signaled)
		(void)engine_on_send_done(S[i].e, w.wr_id);
	return (1);
}

/* Connect the pair (lanes as their configurations and caps say). */
static void
connect_pair(int lanes_a, int lanes_b, unsigned cap_b)
{
	struct wire_hello h[2], l1[2];
	int i;

	side_new(0, lconf(lanes_a));
	side_new(1, lconf(lanes_b));
	if (cap_b)
		engine_version_cap(S[1].e, cap_b);
	for (i = 0; i < 2; i++) {
		memset(&h[i], 0, sizeof(h[i]));
		engine_hello(S[i].e, &h[i]);
		h[i].nonce[0] = (uint8_t)(i + 1);
		post(i);
	}
	for (i = 0; i < 2; i++)
		engine_connected(S[i].e, &h[!i]);
	if (engine_lanes(S[0].e) < 2)
		return;
	for (i = 0; i < 2; i++) {
		post(i);	/* lane 1's receives, before its connect */
		memset(&l1[i], 0, sizeof(l1[i]));
		engine_lane_hello(S[i].e, &l1[i]);
		memcpy(l1[i].nonce, h[i].nonce, WIRE_NONCE_LEN);
	}
	for (i = 0; i < 2; i++)
		(void)engine_lane_up(S[i].e, &l1[!i]);
}

static void
pair_free(void)
{

	engine_free(S[0].e);
	engine_free(S[1].e);
}

/* Side 0 opens stream ${k}; 0 if the engine took it. */
static int
open_k(int k)
{
	struct engine_ring tx, rx;
	int id;

	tx.addr = (uint64_t)(uintptr_t)S[0].tx[k];
	tx.size = RING;
	tx.key = 1;
	rx.addr = (uint64_t)(uintptr_t)S[0].rx[k];
	rx.size = RING;
	rx.key = 2;
	if ((id = engine_open(S[0].e, "t", &tx, &rx, NULL)) < 0)
		return (-1);
	S[0].id[k] = (uint32_t)id + 1;
	return (0);
}

/* Put up to ${n} bytes of pattern into side ${i}'s stream ${k}. */
static uint32_t
put(int i, int k, uint32_t n)
{
	struct side *s = &S[i];
	uint32_t off, space, j;

	if (s->id[k] == 0)
		return (0);
	space = engine_tx_space(s->e, s->id[k] - 1, &off);
	if (n > space)
		n = space;
	for (j = 0; j < n; j++)
		s->tx[k][(off + j) % RING] = pat(i, k, s->put_at[k] + j);
	if (n > 0 && engine_tx_commit(s->e, s->id[k] - 1, n) == 0)
		s->put_at[k] += n;
	return (n);
}

/* Take what side ${i}'s stream ${k} has, checking it is the peer's. */
static uint32_t
take(int i, int k)
{
	struct side *s = &S[i];
	uint32_t off, n, j, all = 0;

	if (s->id[k] == 0)
		return (0);
	while ((n = engine_rx_data(s->e, s->id[k] - 1, &off)) > 0) {
		for (j = 0; j < n; j++)
			if (s->rx[k][(off + j) % RING] !=
			    pat(!i, k, s->got_at[k] + j))
				s->bad = 1;
		s->got_at[k] += n;
		all += n;
		(void)engine_rx_consume(s->e, s->id[k] - 1, n);
	}
	return (all);
}

/* Everything moves, lane by lane in a fixed order, until nothing does. */
static void
settle(void)
{
	int moved, i, k;

	do {
		moved = 0;
		for (i = 0; i < 2; i++) {
			events(i);
			post(i);
		}
		for (i = 0; i < 2; i++)
			for (k = 0; k < 2; k++) {
				while (deliver(i, (unsigned)k))
					moved = 1;
				while (ack(i, (unsigned)k))
					moved = 1;
			}
		for (i = 0; i < 2; i++)
			for (k = 0; k < NS; k++)
				if (take(i, k) > 0)
					moved = 1;
	} while (moved);
}

static void
test_negotiation(void)
{
	struct engine_stats st;

	connect_pair(2, 2, 0);
	ok(engine_lanes(S[0].e) == 2 && engine_lanes(S[1].e) == 2,
	    "both sides can: two lanes on both");
	engine_stats(S[0].e, &st);
	ok(st.lanes == 2 && engine_version(S[0].e) == WIRE_VERSION,
	    "stats say 2 lanes, the newest version");
	pair_free();

	connect_pair(2, 0, 0);
	ok(engine_lanes(S[0].e) == 1 && engine_lanes(S[1].e) == 1,
	    "one side cannot: one lane on both");
	ok(engine_version(S[0].e) == WIRE_VERSION,
	    "... and the link is up at once, in the newest version");
	pair_free();

	connect_pair(2, 2, 7);
	ok(engine_lanes(S[0].e) == 1 && engine_lanes(S[1].e) == 1 &&
	    engine_version(S[0].e) == 7,
	    "a version-7 peer: version 7, one lane on both");
	ok(open_k(0) == 0, "... and it carries a stream");
	settle();
	put(0, 0, 100);
	settle();
	ok(S[1].got_at[0] == 100 && !S[1].bad, "... its bytes, as WRITEs");
	pair_free();
}

static void
test_lane_wait(void)
{
	struct wire_hello h[2], l1;
	struct engine_wr w[4];
	uint32_t slots[128];
	int i, n;

	side_new(0, lconf(2));
	side_new(1, lconf(2));
	for (i = 0; i < 2; i++) {
		memset(&h[i], 0, sizeof(h[i]));
		engine_hello(S[i].e, &h[i]);
		ok(h[i].flags & WIRE_HELLO_LANES, "side %d's hello says LANES",
		    i);
		(void)engine_take_recvs(S[i].e, slots, 128);
	}
	engine_connected(S[0].e, &h[1]);
	n = engine_take_recvs(S[0].e, slots, 128);
	ok(n == RQ && slots[0] == RQ && engine_slot_lane(S[0].e, slots[0]) ==
	    1, "connected with two lanes: lane 1's %d receives to post", RQ);
	engine_keepalive(S[0].e);
	ok(engine_take_wrs(S[0].e, w, 4) == 0 && engine_version(S[0].e) == 0,
	    "nothing goes, and the link is not up, before lane 1 is");
	memset(&l1, 0, sizeof(l1));
	engine_lane_hello(S[1].e, &l1);
	ok(l1.flags == WIRE_HELLO_LANE1 && l1.credits == RQ,
	    "a lane-1 hello: LANE1 alone, with its receives");
	l1.version = 7;
	n = engine_lane_up(S[0].e, &l1);
	ok(n == -1 && engine_error(S[0].e) != NULL &&
	    strstr(engine_error(S[0].e), "lane 1's hello") != NULL,
	    "a lane-1 hello of another version ends the link: %s",
	    engine_error(S[0].e));
	pair_free();
}

/* A bulk stream holds lane 0 up; a small one's bytes go round it. */
static void
test_round_bulk(void)
{
	struct engine_stats st0, st1;
	int i;

	connect_pair(2, 2, 0);
	(void)open_k(0);
	(void)open_k(1);
	settle();
	ok(S[1].id[0] != 0 && S[1].id[1] != 0, "two streams open");
	/* Stream 0 is bulk: a ring's worth of WRITEs, held on lane 0. */
	ok(put(0, 0, RING) == RING, "a ring's worth put");
	post(0);
	ok(S[0].l[0].qn > 0 && S[0].l[1].qn == 0,
	    "bulk goes as WRITEs on lane 0 (%d posted)", S[0].l[0].qn);
	/* Stream 1 is a request: 64 bytes. */
	put(0, 1, 64);
	post(0);
	ok(S[0].l[1].qn == 1, "the 64-byte request goes on lane 1");
	while (deliver(0, 1))
		;
	events(1);
	ok(take(1, 1) == 64 && !S[1].bad,
	    "it arrives while lane 0 still holds the bulk (%d WRs)",
	    S[0].l[0].qn);
	ok(take(1, 0) == 0, "... none of which has arrived");
	/* The reply, the same way back. */
	while (ack(0, 1))
		;
	put(1, 1, 64);
	post(1);
	ok(S[1].l[1].qn >= 1 && S[1].l[0].qn == 0,
	    "the reply goes on lane 1 too");
	while (deliver(1, 1))
		;
	events(0);
	ok(take(0, 1) == 64 && !S[0].bad, "the reply arrives");
	settle();
	ok(S[1].got_at[0] == RING && !S[1].bad, "then the bulk, intact");
	engine_stats(S[0].e, &st0);
	engine_stats(S[1].e, &st1);
	ok(st0.eager == 1 && st0.eager_bytes == 64 && st1.eager_rx == 1,
	    "counted: one eager send of 64 bytes, one DATA record in");
	ok(st0.writes > 0 && st0.lane[1].wrs > 0 && st0.lane[0].wrs > 0,
	    "both lanes carried WRs (lane 0: %llu, lane 1: %llu)",
	    (unsigned long long)st0.lane[0].wrs,
	    (unsigned long long)st0.lane[1].wrs);
	for (i = 0; i < 2; i++)
		ok(engine_error(S[i].e) == NULL, "side %d is still up: %s",
		    i, engine_error(S[i].e) ? engine_error(S[i].e) : "yes");
	pair_free();
}

/* A stream's bytes on lane 1 complete before it writes on lane 0. */
static void
test_fence(void)
{
	struct engine_stats st;

	connect_pair(2, 2, 0);
	(void)open_k(0);
	settle();
	put(0, 0, 100);
	post(0);
	ok(S[0].l[1].qn == 1, "100 bytes go eager");
	put(0, 0, 2000);
	post(0);
	ok(S[0].l[0].qn == 0,
	    "the next 2000 wait: the eager SEND has not completed");
	deliver(0, 1);
	post(0);
	ok(S[0].l[0].qn == 0, "... nor once delivered, until its completion");
	ack(0, 1);
	post(0);
	ok(S[0].l[0].qn > 0, "its completion lets them go as WRITEs");
	settle();
	ok(S[1].got_at[0] == 2100 && !S[1].bad, "2100 bytes, in order");
	engine_stats(S[0].e, &st);
	ok(st.eager == 1, "one eager send");
	pair_free();
}

/*
 * When the engine waits on its own completions (engine_sends_quiet): not
 * for a small write's SEND on lane 1, which nothing waits for; for bulk
 * WRITEs on lane 0, for a stream fenced behind its lane-1 SEND, for more
 * than ENGINE_QUIET_LANE1 SENDs on lane 1, and for a link that failed.
 */
static void
test_quiet(void)
{
	int k;

	connect_pair(2, 2, 0);
	(void)open_k(0);
	(void)open_k(1);
	settle();
	ok(engine_sends_quiet(S[0].e) && engine_sends_quiet(S[1].e),
	    "quiet: both sides, idle");
	put(0, 0, 64);
	post(0);
	ok(S[0].l[1].qn == 1 && engine_sends_quiet(S[0].e),
	    "quiet: a 64-byte request's SEND on lane 1 waits for nobody");
	put(0, 0, 2000);
	post(0);
	ok(S[0].l[0].qn == 0 && !engine_sends_quiet(S[0].e),
	    "quiet: not once that stream waits behind it for lane 0");
	settle();
	ok(engine_sends_quiet(S[0].e) && S[1].got_at[0] == 2064 &&
	    !S[1].bad, "quiet: again once everything completed");
	put(0, 1, RING);
	post(0);
	ok(S[0].l[0].qn > 0 && !engine_sends_quiet(S[0].e),
	    "quiet: not while bulk WRITEs are outstanding on lane 0");
	settle();
	for (k = 0; k <= ENGINE_QUIET_LANE1; k++) {
		put(0, k % 2, 64);
		post(0);
		deliver(0, 1);
		events(1);
		take(1, k % 2);
	}
	ok(S[0].l[1].dn == ENGINE_QUIET_LANE1 + 1 &&
	    !engine_sends_quiet(S[0].e), "quiet: not with %d SENDs on lane 1 "
	    "not completed (%d)", ENGINE_QUIET_LANE1 + 1, S[0].l[1].dn);
	ok(engine_sends_quiet(S[1].e), "quiet: the side that took them is");
	settle();
	ok(engine_sends_quiet(S[0].e), "quiet: and again once they did");
	(void)engine_on_recv_imm(S[0].e, 0, 0xffffffffu, 1);
	ok(engine_error(S[0].e) != NULL && !engine_sends_quiet(S[0].e),
	    "quiet: never on a failed link");
	pair_free();
}

/* An accepted stream's first WRITE waits for its OPEN_OK to complete. */
static void
test_open_ok_first(void)
{
	struct engine_event ev;
	struct engine_ring tx, rx;
	uint32_t id = 0, off;
	int k;

	connect_pair(2, 2, 0);
	(void)open_k(0);
	post(0);
	while (deliver(0, 1))
		;
	/* Side 1 accepts by hand and writes 2000 bytes at once. */
	while (engine_next_event(S[1].e, &ev))
		if (ev.flags & ENGINE_EV_INCOMING)
			id = ev.stream;
	tx.addr = (uint64_t)(uintptr_t)S[1].tx[0];
	tx.size = RING;
	tx.key = 1;
	rx.addr = (uint64_t)(uintptr_t)S[1].rx[0];
	rx.size = RING;
	rx.key = 2;
	(void)engine_accept(S[1].e, id, &tx, &rx, NULL);
	S[1].id[0] = id + 1;
	ok(engine_tx_space(S[1].e, id, &off) > 0 && put(1, 0, 2000) == 2000,
	    "the acceptor commits 2000 bytes before its OPEN_OK went");
	post(1);
	ok(S[1].l[1].qn == 1 && S[1].l[0].qn == 0,
	    "its OPEN_OK goes on lane 1, and no WRITE before it completed");
	while (deliver(1, 0))
		;
	while (deliver(1, 1))
		;
	while (ack(1, 1))
		;
	post(1);
	ok(S[1].l[0].qn > 0, "once it completed, the WRITEs go on lane 0");
	settle();
	k = engine_error(S[0].e) == NULL;
	ok(k && S[0].got_at[0] == 2000 && !S[0].bad,
	    "the opener saw OPEN_OK first, then 2000 bytes in order");
	pair_free();
}

/* A new stream under a reused id stays behind its predecessor's CLOSE. */
static void
test_id_reuse(void)
{
	int before;

	connect_pair(2, 2, 0);
	(void)open_k(0);
	settle();
	put(0, 0, 3000);	/* WRITEs on lane 0 */
	settle();
	/* Both shut down and close; side 0's CLOSE goes last, held. */
	(void)engine_shutdown(S[0].e, S[0].id[0] - 1);
	settle();
	(void)engine_shutdown(S[1].e, S[1].id[0] - 1);
	(void)engine_close(S[1].e, S[1].id[0] - 1);
	settle();
	(void)engine_close(S[0].e, S[0].id[0] - 1);
	post(0);
	events(0);
	before = S[0].l[1].qn;
	ok(before > 0 && S[0].l[0].qn == 0,
	    "side 0's CLOSE is posted on lane 1 (%d WRs)", before);
	events(0);
	/* Its slot is released; the next OPEN takes the same id. */
	S[0].id[0] = 0;
	ok(open_k(1) == 0 && S[0].id[1] == 1,
	    "a new stream reuses id 0");
	post(0);
	ok(S[0].l[0].qn == 0 && S[0].l[1].qn == before + 1,
	    "its OPEN goes behind the CLOSE on the same lane, not round it");
	settle();
	ok(engine_error(S[1].e) == NULL && S[1].id[1] != 0,
	    "then it goes, after the CLOSE, and side 1 takes it: %s",
	    engine_error(S[1].e) ? engine_error(S[1].e) : "up");
	pair_free();
}

/* Random interleavings: every stream's bytes, in order, whatever comes. */
static void
test_random(void)
{
	uint64_t want[2][NS];
	unsigned seed;
	int round, step, i, k, bad = 0, down = 0, eager = 0, writes = 0;
	struct engine_stats st;

	for (round = 0; round < 40; round++) {
		seed = (unsigned)round * 2654435761u + 1;
		connect_pair(2, 2, 0);
		for (k = 0; k < NS; k++)
			(void)open_k(k);
		settle();
		memset(want, 0, sizeof(want));
		for (step = 0; step < 3000; step++) {
			seed = seed * 1103515245u + 12345u;
			i = (int)(seed >> 16) % 2;
			k = (int)(seed >> 8) % NS;
			switch ((seed >> 20) % 8) {
			case 0:
				/* Small or big. */
				want[i][k] += put(i, k, (seed >> 4) % 3 == 0 ?
				    (seed >> 3) % 3000 + 1 :
				    (seed >> 5) % 200 + 1);
				break;
			case 1:
				events(i);
				post(i);
				break;
			case 2:
			case 3:
				(void)deliver(i, (seed >> 24) % 2);
				break;
			case 4:
			case 5:
				(void)ack(i, (seed >> 24) % 2);
				break;
			default:
				(void)take(i, k);
				break;
			}
		}
		settle();
		for (i = 0; i < 2; i++) {
			for (k = 0; k < NS; k++)
				if (S[!i].got_at[k] != want[i][k])
					bad++;
			if (S[i].bad)
				bad++;
			if (engine_error(S[i].e) != NULL) {
				if (!down)
					diag("round %d side %d: %s", round, i,
					    engine_error(S[i].e));
				down++;
			}
			engine_stats(S[i].e, &st);
			eager += st.eager > 0;
			writes += st.writes > 0;
		}
		pair_free();
	}
	ok(down == 0, "40 random interleavings: no link ended (%d did)",
	    down);
	ok(bad == 0, "every stream's bytes arrived, in order, once");
	ok(eager == 80 && writes == 80,
	    "each side of each round sent both ways: DATA (%d) and WRITEs "
	    "(%d)", eager, writes);
}

/* Forged DATA records end the link. */
static void
test_forged(void)
{
	struct wire_rec r;
	uint8_t buf[WIRE_MSG_SIZE], bytes[8] = "abcdefg";
	uint32_t slot;
	size_t n;
	int rc;
	struct lanebox *b;

	connect_pair(2, 2, 0);
	(void)open_k(0);
	settle();
	memset(&r, 0, sizeof(r));
	r.type = WIRE_DATA;
	r.stream = S[1].id[0] - 1;
	r.cursor = 5;
	r.data = bytes;
	r.data_len = 7;
	n = wire_rec_encode(buf, sizeof(buf), &r);
	b = &S[1].l[1];
	slot = b->recv[b->rh];
	rc = engine_on_recv(S[1].e, slot, buf, (uint32_t)n);
	ok(n > 0 && rc == -1 &&
	    strstr(engine_error(S[1].e), "DATA for stream") != NULL,
	    "DATA at the wrong place ends the link: %s", engine_error(S[1].e));
	pair_free();

	connect_pair(2, 0, 0);
	(void)open_k(0);
	settle();
	r.stream = S[1].id[0] - 1;
	r.cursor = 0;
	n = wire_rec_encode(buf, sizeof(buf), &r);
	b = &S[1].l[0];
	slot = b->recv[b->rh];
	rc = engine_on_recv(S[1].e, slot, buf, (uint32_t)n);
	ok(rc == -1 &&
	    strstr(engine_error(S[1].e), "one lane") != NULL,
	    "DATA on a link of one lane ends it: %s", engine_error(S[1].e));
	pair_free();
}

int
main(void)
{

	test_negotiation();
	test_lane_wait();
	test_round_bulk();
	test_fence();
	test_quiet();
	test_open_ok_first();
	test_id_reuse();
	test_random();
	test_forged();
	return (tap_done());
}
