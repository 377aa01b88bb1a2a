/*
 * sim: two rstream engines joined by the in-memory fabric, driven at
 * random from a seed, with every invariant checked on every run:
 *
 *  - each stream's bytes arrive exactly and in order, both directions;
 *  - end-of-stream comes only after all bytes, and only for streams that
 *    were shut down; resets and refusals only where the plan has them;
 *  - no deadlock, with queue depths at the protocol minimum and 4 KiB
 *    rings; the run ends with every stream released and both engines idle;
 *  - never more receives consumed than posted (the fabric reports RNR);
 *    send queues never overflow; no WRITE lands outside a receive ring;
 *  - a misbehaving peer ends the link with a protocol violation, and the
 *    bytes delivered before it stay correct.
 *
 * Usage: sim [-c CONFIG] [-s SEED] [-n COUNT] [-v]
 * Without -s it runs COUNT seeds of each configuration (or of CONFIG) and
 * prints TAP; a failing seed is printed with the command that replays it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "fabric.h"
#include "ring.h"
#include "wire.h"

struct config {
	const char *name;
	const char *desc;
	unsigned seeds;
	uint32_t sq_min, sq_max, rq_min, rq_max;
	uint32_t ring_min_log, ring_max_log;
	uint32_t max_streams;
	uint32_t streams_max;		/* streams opened per run, at most */
	uint64_t bytes_max;		/* per direction per stream */
	int faults;
};

static const struct config configs[] = {
	{ "tiny", "queue depths at the minimum (4), 4 KiB rings",
	    400, 4, 4, 4, 4, 12, 12, 4, 8, 48 << 10, 0 },
	{ "mixed", "random depths 4-64, rings 4-64 KiB, stream limit 16",
	    400, 4, 64, 4, 64, 12, 16, 16, 24, 128 << 10, 0 },
	{ "bulk", "deep queues, rings up to 1 MiB, MiBs per stream",
	    40, 64, 256, 64, 256, 16, 20, 8, 4, 3 << 20, 0 },
	{ "faults", "a hostile peer injects invalid input mid-transfer",
	    200, 4, 32, 4, 32, 12, 15, 16, 12, 64 << 10, 1 },
};
#define NCONFIGS (sizeof(configs) / sizeof(configs[0]))

static int verbose;
static uint64_t total_bytes, total_streams, total_eofs;

/* ---------------------------------------------------------------- rng */

static uint64_t
splitmix(uint64_t x)
{

	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return (x ^ (x >> 31));
}

struct rng {
	uint64_t s;
};

static uint64_t
rnd(struct rng *r)
{

	r->s = splitmix(r->s);
	return (r->s);
}

static uint64_t
below(struct rng *r, uint64_t n)
{

	return (n ? rnd(r) % n : 0);
}

/* The byte at position ${p} of the stream keyed ${key}. */
static uint8_t
gen(uint64_t key, uint64_t p)
{

	return ((uint8_t)(splitmix(key ^ (p >> 3) * 0x100000001b3ULL) >>
	    (8 * (p & 7))));
}

/* ---------------------------------------------------------------- plans */

/* What happens to a stream, derived from its serial on both sides. */
enum { P_NORMAL, P_OPENER_RESETS, P_ACCEPTOR_RESETS, P_REFUSED };

struct plan {
	int kind;
	uint64_t bytes[2];	/* [0]: opener->acceptor, [1]: back */
	uint64_t reset_at;	/* bytes the resetting side sends first */
	uint32_t ring_log[2][2];	/* [side role][0 tx, 1 rx] */
	int slow_reader[2];
};

static void
make_plan(const struct config *c, uint64_t seed, uint64_t serial,
    struct plan *p)
{
	struct rng r = { splitmix(seed * 1000003 + serial) };
	uint64_t k = below(&r, 100);
	int i, j;

	memset(p, 0, sizeof(*p));
	p->kind = k < 80 ? P_NORMAL : k < 88 ? P_OPENER_RESETS :
	    k < 95 ? P_ACCEPTOR_RESETS : P_REFUSED;
	for (i = 0; i < 2; i++) {
		/* Some streams are empty one way, to test bare half-close. */
		p->bytes[i] = below(&r, 8) == 0 ? 0 : below(&r, c->bytes_max + 1);
		p->slow_reader[i] = below(&r, 6) == 0;
		for (j = 0; j < 2; j++)
			p->ring_log[i][j] = c->ring_min_log +
			    (uint32_t)below(&r, c->ring_max_log -
			    c->ring_min_log + 1);
	}
	p->reset_at = below(&r, (p->bytes[0] < p->bytes[1] ?
	    p->bytes[0] : p->bytes[1]) + 1);
}

/* ---------------------------------------------------------------- state */

struct astream {
	uint64_t serial;
	int opener;		/* this side opened it */
	struct plan plan;
	uint8_t *tx, *rx;
	uint32_t txsz, rxsz, rkey;
	uint64_t tx_total, tx_done, rx_expect, rx_got;
	int shut, opened, eof, closed, reset_seen, refused;
};

/* Does the plan have this side (or the peer) reset the stream? */
static int
i_reset(const struct astream *a)
{

	return (a->plan.kind == (a->opener ? P_OPENER_RESETS :
	    P_ACCEPTOR_RESETS));
}

static int
peer_resets(const struct astream *a)
{

	return (a->plan.kind == (a->opener ? P_ACCEPTOR_RESETS :
	    P_OPENER_RESETS));
}

struct side {
	struct astream **st;	/* by engine stream id */
	uint32_t nst;
	uint64_t next_serial;	/* streams this side opens: serial*2+side */
	uint32_t opens_left;
	uint32_t live;
};

struct run {
	const struct config *c;
	uint64_t seed;
	struct rng r;
	struct fab f;
	struct side side[2];
	int failed;
	char err[512];
	int link_dead;
	uint32_t next_rkey;
	int progressed;
};

static int rfail(struct run *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static int
rfail(struct run *R, const char *fmt, ...)
{
	va_list ap;

	if (R->failed)
		return (-1);
	va_start(ap, fmt);
	vsnprintf(R->err, sizeof(R->err), fmt, ap);
	va_end(ap);
	R->failed = 1;
	return (-1);
}

static uint64_t
dirkey(uint64_t serial, int dir)
{

	return (splitmix(serial * 2 + (uint64_t)dir + 0x5eed));
}

static int
alloc_rings(struct run *R, int i, struct astream *a, uint32_t txlog,
    uint32_t rxlog)
{

	a->txsz = 1u << txlog;
	a->rxsz = 1u << rxlog;
	a->tx = malloc(a->txsz);
	a->rx = malloc(a->rxsz);
	if (a->tx == NULL || a->rx == NULL)
		return (rfail(R, "out of memory"));
	/* Poison: a byte the peer never wrote shows up as a mismatch. */
	memset(a->rx, 0xa5, a->rxsz);
	a->rkey = R->next_rkey++;
	fab_mr_add(&R->f, i, (uint64_t)(uintptr_t)a->rx, a->rxsz, a->rkey);
	return (0);
}

static void
free_rings(struct run *R, int i, struct astream *a)
{

	fab_mr_del(&R->f, i, (uint64_t)(uintptr_t)a->rx);
	free(a->tx);
	free(a->rx);
	a->tx = a->rx = NULL;
}

/* ---------------------------------------------------------------- events */

static int
on_incoming(struct run *R, int i, uint32_t id)
{
	struct side *S = &R->side[i];
	struct astream *a;
	struct engine_ring tx, rx;
	const char *name = engine_tunnel(R->f.side[i].e, id);
	unsigned long long serial;

	if (name == NULL || sscanf(name, "s%llu", &serial) != 1)
		return (rfail(R, "side %d: INCOMING with bad name", i));
	if (S->st[id] != NULL)
		return (rfail(R, "side %d: INCOMING on live id %u", i,
		    (unsigned)id));
	if ((a = calloc(1, sizeof(*a))) == NULL)
		abort();
	a->serial = serial;
	make_plan(R->c, R->seed, serial, &a->plan);
	if (a->plan.kind == P_REFUSED) {
		free(a);
		return (engine_refuse(R->f.side[i].e, id,
		    WIRE_REASON_NO_TUNNEL) == 0 ? 0 :
		    rfail(R, "engine_refuse failed"));
	}
	S->st[id] = a;
	if (alloc_rings(R, i, a, a->plan.ring_log[1][0],
	    a->plan.ring_log[1][1]))
		return (-1);
	a->tx_total = a->plan.bytes[1];
	a->rx_expect = a->plan.bytes[0];
	a->opened = 1;
	S->live++;
	tx.addr = (uint64_t)(uintptr_t)a->tx;
	tx.size = a->txsz;
	tx.key = 0;
	rx.addr = (uint64_t)(uintptr_t)a->rx;
	rx.size = a->rxsz;
	rx.key = a->rkey;
	if (engine_accept(R->f.side[i].e, id, &tx, &rx, a) != 0)
		return (rfail(R, "engine_accept failed"));
	return (0);
}

static int
drain_events(struct run *R, int i)
{
	struct side *S = &R->side[i];
	struct engine_event ev;
	struct astream *a;

	while (engine_next_event(R->f.side[i].e, &ev)) {
		if (ev.stream >= S->nst)
			return (rfail(R, "side %d: event for stream %u",
			    i, (unsigned)ev.stream));
		a = S->st[ev.stream];
		if (verbose)
			printf("# side %d stream %u (s%lld): events 0x%x "
			    "reason %u\n", i, (unsigned)ev.stream,
			    a ? (long long)a->serial : -1LL,
			    (unsigned)ev.flags, (unsigned)ev.reason);
		if (ev.flags & ENGINE_EV_INCOMING) {
			if (on_incoming(R, i, ev.stream))
				return (-1);
			R->progressed = 1;
			continue;
		}
		if (a == NULL || ev.user != a)
			return (rfail(R, "side %d: event 0x%x for unused "
			    "stream %u", i, (unsigned)ev.flags,
			    (unsigned)ev.stream));
		R->progressed = 1;
		if (ev.flags & ENGINE_EV_OPENED)
			a->opened = 1;
		if (ev.flags & ENGINE_EV_REFUSED) {
			if (a->plan.kind != P_REFUSED &&
			    ev.reason != WIRE_REASON_LIMIT)
				return (rfail(R, "side %d stream s%llu "
				    "refused (%s) against its plan", i,
				    (unsigned long long)a->serial,
				    wire_reason_str(ev.reason)));
			a->refused = 1;
		}
		if (ev.flags & ENGINE_EV_EOF) {
			if (a->rx_got != a->rx_expect)
				return (rfail(R, "side %d stream s%llu: EOF "
				    "after %llu of %llu bytes", i,
				    (unsigned long long)a->serial,
				    (unsigned long long)a->rx_got,
				    (unsigned long long)a->rx_expect));
			if (a->eof || a->reset_seen)
				return (rfail(R, "side %d stream s%llu: EOF "
				    "twice or after reset", i,
				    (unsigned long long)a->serial));
			a->eof = 1;
		}
		if (ev.flags & ENGINE_EV_RESET) {
			if (!peer_resets(a) && !R->link_dead)
				return (rfail(R, "side %d stream s%llu: "
				    "unexpected RESET (%s)", i,
				    (unsigned long long)a->serial,
				    wire_reason_str(ev.reason)));
			a->reset_seen = 1;
		}
		if (ev.flags & ENGINE_EV_RELEASED) {
			int done = a->refused || a->reset_seen ||
			    (a->closed && (a->eof || a->plan.kind !=
			    P_NORMAL));

			if (!done && !R->link_dead)
				return (rfail(R, "side %d stream s%llu "
				    "released before it finished", i,
				    (unsigned long long)a->serial));
			total_bytes += a->rx_got;
			total_streams++;
			total_eofs += a->eof;
			free_rings(R, i, a);
			free(a);
			S->st[ev.stream] = NULL;
			S->live--;
		}
	}
	return (0);
}

/* ---------------------------------------------------------------- actions */

static int
open_stream(struct run *R, int i)
{
	struct side *S = &R->side[i];
	struct engine_ring tx, rx;
	struct astream *a;
	char name[32];
	uint64_t serial = S->next_serial * 2 + (uint64_t)i;
	int id;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		abort();
	make_plan(R->c, R->seed, serial, &a->plan);
	if (alloc_rings(R, i, a, a->plan.ring_log[0][0],
	    a->plan.ring_log[0][1]))
		return (-1);
	a->opener = 1;
	a->serial = serial;
	a->tx_total = a->plan.bytes[0];
	a->rx_expect = a->plan.bytes[1];
	tx.addr = (uint64_t)(uintptr_t)a->tx;
	tx.size = a->txsz;
	tx.key = 0;
	rx.addr = (uint64_t)(uintptr_t)a->rx;
	rx.size = a->rxsz;
	rx.key = a->rkey;
	snprintf(name, sizeof(name), "s%llu", (unsigned long long)serial);
	id = engine_open(R->f.side[i].e, name, &tx, &rx, a);
	if (id < 0) {
		free_rings(R, i, a);
		free(a);
		if (id == ENGINE_ELIMIT)
			return (0);	/* try again later */
		return (rfail(R, "side %d: engine_open failed: %d", i, id));
	}
	if (S->st[id] != NULL)
		return (rfail(R, "side %d: stream id %d reused while live",
		    i, id));
	S->st[id] = a;
	if (verbose)
		printf("# side %d opens stream %d as s%llu (plan %d, %llu/%llu "
		    "bytes)\n", i, id, (unsigned long long)serial,
		    a->plan.kind, (unsigned long long)a->plan.bytes[0],
		    (unsigned long long)a->plan.bytes[1]);
	S->next_serial++;
	S->opens_left--;
	S->live++;
	R->progressed = 1;
	return (0);
}

/* Does this side reset this stream now? */
static int
resets_now(const struct astream *a)
{

	return (i_reset(a) && a->tx_done >= a->plan.reset_at);
}

static int
act_stream(struct run *R, int i, uint32_t id)
{
	struct engine *e = R->f.side[i].e;
	struct astream *a = R->side[i].st[id];
	uint64_t key_tx = dirkey(a->serial, a->opener ? 0 : 1);
	uint64_t key_rx = dirkey(a->serial, a->opener ? 1 : 0);
	uint32_t off, n, k, want;

	if (a == NULL || a->closed || a->refused)
		return (0);
	if (a->reset_seen) {
		/* The peer reset it: the application closes its side. */
		a->closed = 1;
		R->progressed = 1;
		return (engine_close(e, id) == 0 ? 0 :
		    rfail(R, "engine_close after reset failed"));
	}
	if (resets_now(a)) {
		a->closed = 1;
		R->progressed = 1;
		return (engine_reset(e, id, WIRE_REASON_RESET) == 0 ? 0 :
		    rfail(R, "engine_reset failed"));
	}

	/* Write. */
	if (a->tx_done < a->tx_total && below(&R->r, 2) == 0) {
		n = engine_tx_space(e, id, &off);
		want = (uint32_t)below(&R->r, below(&R->r, 4) == 0 ?
		    65536 * 2 : 4096) + 1;
		if (n > want)
			n = want;
		if (n > a->tx_total - a->tx_done)
			n = (uint32_t)(a->tx_total - a->tx_done);
		if (i_reset(a) && a->tx_done + n > a->plan.reset_at)
			n = (uint32_t)(a->plan.reset_at - a->tx_done);
		for (k = 0; k < n; k++)
			a->tx[off + k] = gen(key_tx, a->tx_done + k);
		if (n > 0) {
			if (engine_tx_commit(e, id, n) != 0)
				return (rfail(R, "engine_tx_commit failed"));
			a->tx_done += n;
			R->progressed = 1;
		}
	}
	if (a->tx_done == a->tx_total && !a->shut && !i_reset(a)) {
		a->shut = 1;
		R->progressed = 1;
		if (engine_shutdown(e, id) != 0)
			return (rfail(R, "engine_shutdown failed"));
	}

	/* Read (slow readers only now and then). */
	if (!a->plan.slow_reader[a->opener ? 0 : 1] || below(&R->r, 20) == 0) {
		n = engine_rx_data(e, id, &off);
		want = (uint32_t)below(&R->r, 16384) + 1;
		if (n > want)
			n = want;
		for (k = 0; k < n; k++) {
			if (a->rx[off + k] != gen(key_rx, a->rx_got + k))
				return (rfail(R, "side %d stream s%llu: byte "
				    "%llu is wrong", i,
				    (unsigned long long)a->serial,
				    (unsigned long long)(a->rx_got + k)));
		}
		if (n > 0) {
			if (a->rx_got + n > a->rx_expect)
				return (rfail(R, "side %d stream s%llu: more "
				    "bytes than were sent", i,
				    (unsigned long long)a->serial));
			/* Scribble: the engine must not hand this out again. */
			memset(a->rx + off, 0x5a, n);
			if (engine_rx_consume(e, id, n) != 0)
				return (rfail(R, "engine_rx_consume failed"));
			a->rx_got += n;
			R->progressed = 1;
		}
	}

	/* Close once both directions are done. */
	if (a->shut && a->eof) {
		a->closed = 1;
		R->progressed = 1;
		if (engine_close(e, id) != 0)
			return (rfail(R, "engine_close failed"));
	}
	return (0);
}

static int
app_step(struct run *R, int i)
{
	struct side *S = &R->side[i];
	uint32_t id, tries;

	if (S->opens_left > 0 && !R->link_dead && below(&R->r, 8) == 0)
		return (open_stream(R, i));
	if (S->live == 0)
		return (0);
	for (tries = 0; tries < 8; tries++) {
		id = (uint32_t)below(&R->r, S->nst);
		if (S->st[id] != NULL)
			return (act_stream(R, i, id));
	}
	for (id = 0; id < S->nst; id++)
		if (S->st[id] != NULL && !S->st[id]->closed)
			return (act_stream(R, i, id));
	return (0);
}

/* ---------------------------------------------------------------- faults */

static int
inject_fault(struct run *R)
{
	struct side *S = &R->side[0];
	uint8_t buf[64];
	struct wire_rec r;
	uint32_t id, target = UINT32_MAX;
	size_t n;
	int kind = (int)(R->seed % 6);

	for (id = 0; id < S->nst; id++)
		if (S->st[id] != NULL && S->st[id]->opened &&
		    !S->st[id]->closed && !S->st[id]->reset_seen) {
			target = id;
			break;
		}
	if (target == UINT32_MAX && (kind == 1 || kind == 2))
		kind = 0;
	memset(&r, 0, sizeof(r));
	switch (kind) {
	case 0:		/* data for a stream that does not exist */
		fab_inject(&R->f, 0, FAB_CQE_RECV_IMM, NULL, 100,
		    wire_imm_encode(WIRE_STREAMS_MAX - 1, 100));
		break;
	case 1:		/* data beyond the free space of the ring */
		n = S->st[target]->rxsz + 1;
		fab_inject(&R->f, 0, FAB_CQE_RECV_IMM, NULL, (uint32_t)n,
		    wire_imm_encode(target, (uint32_t)n));
		break;
	case 2:		/* ring credit beyond what was sent */
		r.type = WIRE_CREDIT;
		r.stream = target;
		r.cursor = (uint64_t)1 << 40;
		n = wire_rec_encode(buf, sizeof(buf), &r);
		fab_inject(&R->f, 0, FAB_CQE_RECV, buf, (uint32_t)n, 0);
		break;
	case 3:		/* garbage control record */
		buf[0] = 0xee;
		buf[1] = 2;
		fab_inject(&R->f, 0, FAB_CQE_RECV, buf, 2, 0);
		break;
	case 4:		/* truncated OPEN */
		buf[0] = WIRE_OPEN;
		buf[1] = 40;
		memset(buf + 2, 0, 8);
		fab_inject(&R->f, 0, FAB_CQE_RECV, buf, 10, 0);
		break;
	case 5:		/* message credit beyond the receive queue */
		r.type = WIRE_MSG_CREDIT;
		r.cursor = (uint64_t)1 << 50;
		n = wire_rec_encode(buf, sizeof(buf), &r);
		fab_inject(&R->f, 0, FAB_CQE_RECV, buf, (uint32_t)n, 0);
		break;
	}
	if (R->f.failed)
		return (rfail(R, "fabric: %s", R->f.err));
	if (engine_error(R->f.side[0].e) == NULL)
		return (rfail(R, "fault %d did not end the link", kind));
	if (strstr(engine_error(R->f.side[0].e), "protocol violation") == NULL)
		return (rfail(R, "fault %d: unexpected error: %s", kind,
		    engine_error(R->f.side[0].e)));
	if (verbose)
		printf("# fault %d: %s\n", kind, engine_error(R->f.side[0].e));
	/* The QP goes down with it: the other side sees its link fail. */
	R->link_dead = 1;
	engine_fail(R->f.side[1].e, ENGINE_ERR_TRANSPORT, "peer disconnected");
	return (0);
}

/* ---------------------------------------------------------------- run */

static int
finished(struct run *R)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (R->side[i].live != 0)
			return (0);
		if (R->side[i].opens_left != 0 && !R->link_dead)
			return (0);
	}
	if (R->link_dead)
		return (1);
	return (!fab_busy(&R->f) && engine_idle(R->f.side[0].e) &&
	    engine_idle(R->f.side[1].e));
}

static int
run_one(const struct config *c, uint64_t seed, char *err, size_t errlen)
{
	struct run *R = calloc(1, sizeof(*R));
	struct engine_conf ec[2];
	uint64_t step, idle = 0, fault_at = 0;
	int i, rc = 0;
	struct engine_stats st;

	if (R == NULL)
		abort();
	R->c = c;
	R->seed = seed;
	R->r.s = splitmix(seed);
	R->next_rkey = 0x100;
	for (i = 0; i < 2; i++) {
		memset(&ec[i], 0, sizeof(ec[i]));
		ec[i].sq_size = c->sq_min + (uint32_t)below(&R->r,
		    c->sq_max - c->sq_min + 1);
		ec[i].rq_size = c->rq_min + (uint32_t)below(&R->r,
		    c->rq_max - c->rq_min + 1);
		ec[i].inline_size = (uint32_t)below(&R->r, 3) * 128;
		ec[i].signal_every = (uint32_t)below(&R->r, 8);
		ec[i].max_streams = c->max_streams;
		R->side[i].nst = c->max_streams;
		R->side[i].st = calloc(c->max_streams, sizeof(struct astream *));
		R->side[i].opens_left = 1 + (uint32_t)below(&R->r,
		    c->streams_max);
	}
	if (c->faults)
		fault_at = 200 + below(&R->r, 3000);
	if (fab_init(&R->f, &ec[0], &ec[1])) {
		rfail(R, "fabric: %s", R->f.err);
		goto out;
	}
	for (step = 0; step < 20000000 && !R->failed; step++) {
		uint64_t k = below(&R->r, 100);

		R->progressed = 0;
		if (c->faults && !R->link_dead && step >= fault_at &&
		    R->side[0].live > 0 && R->f.side[0].posted_n > 0) {
			if (inject_fault(R))
				break;
			R->progressed = 1;
		} else if (k < 25) {
			R->progressed = fab_deliver(&R->f, 0) > 0;
		} else if (k < 50) {
			R->progressed = fab_deliver(&R->f, 1) > 0;
		} else if (k < 60) {
			R->progressed = fab_complete(&R->f, 0) > 0;
		} else if (k < 70) {
			R->progressed = fab_complete(&R->f, 1) > 0;
		} else {
			if (app_step(R, (int)below(&R->r, 2)))
				break;
		}
		if (R->f.failed) {
			rfail(R, "fabric: %s", R->f.err);
			break;
		}
		for (i = 0; i < 2; i++) {
			const char *why = engine_error(R->f.side[i].e);

			if (why != NULL && !R->link_dead) {
				rfail(R, "side %d link failed: %s", i, why);
				break;
			}
			if (fab_pump(&R->f, i) < 0) {
				rfail(R, "fabric: %s", R->f.err);
				break;
			}
			if (drain_events(R, i))
				break;
		}
		if (R->failed)
			break;
		if (finished(R))
			break;
		idle = R->progressed ? 0 : idle + 1;
		if (idle > 20000) {
			rfail(R, "deadlock: nothing can move (side 0: %u "
			    "live, side 1: %u live, in flight %zu/%zu)",
			    (unsigned)R->side[0].live,
			    (unsigned)R->side[1].live,
			    R->f.side[0].wire_n, R->f.side[1].wire_n);
			break;
		}
	}
	if (!R->failed && !finished(R))
		rfail(R, "did not finish within the step limit");
	if (!R->failed && !R->link_dead) {
		for (i = 0; i < 2; i++) {
			engine_stats(R->f.side[i].e, &st);
			if (st.streams_active != 0)
				rfail(R, "side %d: %u streams still active",
				    i, (unsigned)st.streams_active);
		}
	}
out:
	if (R->failed) {
		snprintf(err, errlen, "%s", R->err);
		rc = -1;
	}
	for (i = 0; i < 2; i++) {
		uint32_t id;

		for (id = 0; id < R->side[i].nst; id++)
			if (R->side[i].st[id] != NULL) {
				free(R->side[i].st[id]->tx);
				free(R->side[i].st[id]->rx);
				free(R->side[i].st[id]);
			}
		free(R->side[i].st);
	}
	fab_free(&R->f);
	free(R);
	return (rc);
}

int
main(int argc, char **argv)
{
	const char *only = NULL;
	uint64_t seed = 0, count = 0;
	int have_seed = 0, ch, t = 0, bad = 0;
	size_t ci;
	char err[512];

	while ((ch = getopt(argc, argv, "c:s:n:v")) != -1) {
		switch (ch) {
		case 'c':
			only = optarg;
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			have_seed = 1;
			break;
		case 'n':
			count = strtoull(optarg, NULL, 0);
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: sim [-c CONFIG] [-s SEED] "
			    "[-n COUNT] [-v]\n");
			return (2);
		}
	}
	for (ci = 0; ci < NCONFIGS; ci++) {
		const struct config *c = &configs[ci];
		uint64_t n = count ? count : c->seeds, s, failures = 0;
		clock_t t0 = clock();

		if (only != NULL && strcmp(only, c->name) != 0)
			continue;
		if (have_seed) {
			int rc = run_one(c, seed, err, sizeof(err));

			printf("%s %d - %s seed %llu%s%s\n", rc ? "not ok" : "ok",
			    ++t, c->name, (unsigned long long)seed,
			    rc ? ": " : "", rc ? err : "");
			bad |= rc != 0;
			continue;
		}
		for (s = 1; s <= n; s++) {
			if (run_one(c, s, err, sizeof(err)) != 0) {
				if (failures++ < 5)
					printf("# %s seed %llu failed: %s\n"
					    "#   replay: tests/sim/sim -c %s "
					    "-s %llu -v\n", c->name,
					    (unsigned long long)s, err,
					    c->name, (unsigned long long)s);
			}
		}
		printf("%s %d - %s: %s: %llu seeds, %llu failed "
		    "(%llu stream ends, %llu EOFs, %.1f MiB verified, "
		    "%.1f s)\n",
		    failures ? "not ok" : "ok", ++t, c->name, c->desc,
		    (unsigned long long)n, (unsigned long long)failures,
		    (unsigned long long)total_streams,
		    (unsigned long long)total_eofs,
		    (double)total_bytes / 1048576,
		    (double)(clock() - t0) / CLOCKS_PER_SEC);
		total_bytes = total_streams = total_eofs = 0;
		fflush(stdout);
		bad |= failures != 0;
	}
	printf("1..%d\n", t);
	return (bad ? 1 : 0);
}
