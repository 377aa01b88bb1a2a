/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/queue.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm.h"
#include "conf.h"
#include "engine.h"
#include "engine_stream.h"
#include "fabric.h"
#include "link.h"
#include "loop.h"
#include "rsd.h"
#include "simlink.h"

enum simstate { S_IDLE, S_CONNECTING, S_UP };

struct dlink {
	struct fab *f;
	int side;
	struct loop *lp;
	const struct link_ops *ops;
	void *arg;
	struct dlink *other;
	struct loop_job flush;
	int flushing;
	uint32_t next_rkey;
	char peer[420];
	/* As tunnel.c knows it: */
	struct rsd *d;			/* NULL: made by simlink_new */
	const struct conf_tunnel *c;	/* a client link's tunnel */
	unsigned prio;			/* link_set_priority's; the fabric
					   has no device to share */
	enum simstate state;
	struct loop_job connect;
	char name[520];
	TAILQ_ENTRY(dlink) entry;
};

/*
 * Every link; the daemons' CMs (cm_start), one of which listens (its
 * configuration has listen addresses); the next fabric.
 */
static TAILQ_HEAD(, dlink) links = TAILQ_HEAD_INITIALIZER(links);
#define SIM_CMS	4
static struct simcm {
	struct rsd *d;
	const struct link_ops *ops;
	void *arg;
} cms[SIM_CMS], *listener;
static struct fab *next_fab;
/* Rings held, and the largest made. */
static unsigned rings_live;
static uint32_t ring_max;

static void on_connect(void *);

struct link_ring {
	struct dlink *dl;		/* NULL: detached */
	uint8_t *buf;
	uint32_t size;
	int rx;
	uint32_t rkey;			/* rx: as registered on dl's side */
};

static struct engine *
side_engine(const struct dlink *dl)
{

	return (dl->f->side[dl->side].e);
}

/*
 * link_deliver's rule: INCOMING to the owner (a client link, which has no
 * incoming, refuses it), the rest to the stream's.
 */
static void
deliver(struct dlink *dl, struct engine *e, const struct engine_event *ev)
{

	if ((ev->flags & ENGINE_EV_INCOMING) &&
	    !(ev->flags & ENGINE_EV_RELEASED)) {
		if (dl->ops->incoming == NULL)
			engine_refuse(e, ev->stream, WIRE_REASON_NO_TUNNEL);
		else
			dl->ops->incoming(dl->arg, dl, ev->stream,
			    engine_tunnel(e, ev->stream));
		return;
	}
	if (ev->user != NULL)
		dl->ops->event(dl->arg, dl, ev);
}

/*
 * The job (link.c's on_flush and pump): completions in, events out, work
 * requests onto the wire and through it, until nothing moves; then the
 * other side has completions to take.
 */
static void
on_flush(void *arg)
{
	struct dlink *dl = arg;
	struct fab *f = dl->f;
	struct engine *e = side_engine(dl);
	struct engine_event ev;
	int moved, n;

	dl->flushing = 1;
	do {
		moved = 0;
		while (fab_complete(f, dl->side) > 0)
			moved = 1;
		while (engine_error(e) == NULL && engine_next_event(e, &ev)) {
			deliver(dl, e, &ev);
			moved = 1;
		}
		if ((n = fab_pump(f, dl->side)) < 0)
			break;
		if (n > 0)
			moved = 1;
		while ((n = fab_deliver(f, dl->side)) > 0)
			moved = 1;
	} while (moved && n >= 0 && engine_error(e) == NULL && !f->failed);
	dl->flushing = 0;
	if (dl->other != NULL && f->side[dl->other->side].cq_n > 0)
		link_mark(dl->other);
}

struct dlink *
simlink_new(struct loop *lp, struct fab *f, int side, const char *peer,
    const struct link_ops *ops, void *arg)
{
	struct dlink *dl;

	if ((dl = calloc(1, sizeof(*dl))) == NULL)
		abort();
	dl->f = f;
	dl->side = side;
	dl->lp = lp;
	dl->ops = ops;
	dl->arg = arg;
	dl->next_rkey = 0x100u + ((uint32_t)side << 16);
	snprintf(dl->peer, sizeof(dl->peer), "%s", peer);
	snprintf(dl->name, sizeof(dl->name), "link from %s", peer);
	loop_job_init(&dl->flush, lp, on_flush, dl);
	loop_job_init(&dl->connect, lp, on_connect, dl);
	TAILQ_INSERT_TAIL(&links, dl, entry);
	return (dl);
}

void
simlink_join(struct dlink *a, struct dlink *b)
{

	a->other = b;
	b->other = a;
}

void
simlink_free(struct dlink *dl)
{

	if (dl == NULL)
		return;
	if (engine_active(side_engine(dl)) > 0) {
		fprintf(stderr, "simlink: %s freed with open streams, which "
		    "it cannot reset\n", dl->name);
		abort();
	}
	if (dl->other != NULL)
		dl->other->other = NULL;
	TAILQ_REMOVE(&links, dl, entry);
	loop_job_cancel(&dl->flush);
	loop_job_cancel(&dl->connect);
	free(dl);
}

void
simlink_fabric(struct fab *f)
{

	next_fab = f;
}

const char *
simlink_error(void)
{
	const struct dlink *dl;
	const char *why;

	TAILQ_FOREACH(dl, &links, entry) {
		if (dl->f->failed)
			return (dl->f->err);
		if ((why = engine_error(side_engine(dl))) != NULL)
			return (why);
	}
	return (NULL);
}

void
simlink_rings(unsigned *live, uint32_t *max)
{

	*live = rings_live;
	*max = ring_max;
}

/* ---- link.h, as bridge.c calls it. */

struct engine *
link_engine(const struct dlink *dl)
{

	return (dl != NULL ? side_engine(dl) : NULL);
}

struct loop *
link_loop(const struct dlink *dl)
{

	return (dl->lp);
}

const char *
link_peer(const struct dlink *dl)
{

	return (dl->peer);
}

void
link_mark(struct dlink *dl)
{

	if (dl != NULL && !dl->flushing)
		loop_job_defer(&dl->flush);
}

void
link_set_priority(struct dlink *dl, unsigned prio)
{

	dl->prio = prio;
}

/* ---- link.h and cm.h, as tunnel.c calls them. */

/* The client link connects: its peer's incoming link appears, both up. */
static void
on_connect(void *arg)
{
	struct dlink *dl = arg, *in;

	if (listener == NULL) {
		fprintf(stderr, "simlink: %s: no daemon listens\n", dl->name);
		abort();
	}
	in = simlink_new(listener->d->lp, dl->f, 1 - dl->side, "the client",
	    listener->ops, listener->arg);
	in->d = listener->d;
	in->state = S_UP;
	simlink_join(dl, in);
	dl->state = S_UP;
	dl->ops->up(dl->arg, dl);
	link_mark(dl);
}

struct dlink *
link_client_new(struct rsd *d, const struct conf_tunnel *c,
    const struct conf *nc, const struct link_ops *ops, void *arg)
{
	struct dlink *dl;

	(void)nc;
	if (next_fab == NULL) {
		fprintf(stderr, "simlink: no fabric for tunnel %s's link "
		    "(simlink_fabric)\n", c->name);
		abort();
	}
	dl = simlink_new(d->lp, next_fab, 0, c->peer.text, ops, arg);
	dl->d = d;
	dl->c = c;
	snprintf(dl->name, sizeof(dl->name), "tunnel %s: link to %s",
	    c->name, c->peer.text);
	return (dl);
}

void
link_client_start(struct dlink *dl)
{

	dl->state = S_CONNECTING;
	loop_job_defer(&dl->connect);
}

/* A simlink is never connected again anyway. */
void
link_client_retire(struct dlink *dl)
{

	(void)dl;
}

void
link_free(struct dlink *dl)
{

	loop_assert_exclusive();
	simlink_free(dl);
}

int
link_is_up(const struct dlink *dl)
{

	return (dl != NULL && dl->state == S_UP);
}

int
link_is_connecting(const struct dlink *dl)
{

	return (dl != NULL && dl->state == S_CONNECTING);
}

const char *
link_name(const struct dlink *dl)
{

	return (dl->name);
}

/* No link authenticates here: a client link has its tunnel's key. */
const struct conf_key *
link_key(const struct dlink *dl)
{
	static const struct conf_key none;

	return (dl->c != NULL ? &dl->c->key : &none);
}

/* Nor has any link an identity, or seals. */
const char *
link_peer_id(const struct dlink *dl)
{

	(void)dl;
	return ("");
}

const uint8_t *
link_peer_key(const struct dlink *dl)
{

	(void)dl;
	return (NULL);
}

const char *
link_sealing(const struct dlink *dl)
{

	(void)dl;
	return (NULL);
}

unsigned
link_count(const struct rsd *d, unsigned *up)
{
	const struct dlink *dl;
	unsigned n = 0;

	*up = 0;
	TAILQ_FOREACH(dl, &links, entry) {
		if (dl->d != d)
			continue;
		n++;
		*up += dl->state == S_UP;
	}
	return (n);
}

/* Simulated links prove no identity: a reload revokes none. */
void
link_revoke(struct rsd *d)
{

	(void)d;
}

void
link_goaway_all(struct rsd *d)
{
	struct dlink *dl;

	TAILQ_FOREACH(dl, &links, entry) {
		if (dl->d != d)
			continue;
		if (dl->c != NULL)
			dl->ops->down(dl->arg, dl, "shutting down",
			    VERBS_WC_NONE);
		if (dl->state == S_UP) {
			engine_goaway(side_engine(dl),
			    WIRE_REASON_SHUTTING_DOWN);
			link_mark(dl);
		}
	}
}

/* Nothing is freed while being accepted here. */
void
link_tick(struct rsd *d)
{

	(void)d;
}

int
link_tick_due(struct rsd *d)
{

	(void)d;
	return (0);
}

int
cm_start(struct rsd *d, const struct link_ops *ops, void *arg, char *err,
    size_t errlen)
{

	struct simcm *cm;

	for (cm = cms; cm < cms + SIM_CMS && cm->d != NULL; cm++)
		;
	if (cm == cms + SIM_CMS) {
		snprintf(err, errlen, "simlink: more than %d CMs", SIM_CMS);
		return (-1);
	}
	cm->d = d;
	cm->ops = ops;
	cm->arg = arg;
	return (0);
}

/* Its incoming links go (a client link is its tunnel's). */
void
cm_stop(struct rsd *d)
{
	struct dlink *dl, *next;
	struct simcm *cm;

	for (dl = TAILQ_FIRST(&links); dl != NULL; dl = next) {
		next = TAILQ_NEXT(dl, entry);
		if (dl->d == d && dl->c == NULL)
			simlink_free(dl);
	}
	for (cm = cms; cm < cms + SIM_CMS; cm++) {
		if (cm->d != d)
			continue;
		if (listener == cm)
			listener = NULL;
		memset(cm, 0, sizeof(*cm));
	}
}

/* No RDMA listeners: a plan with nothing in it. */
struct cm_listen_plan *
cm_listen_plan(struct rsd *d, const struct conf *nc, char *err,
    size_t errlen)
{
	static char nothing;

	(void)d;
	(void)nc;
	(void)err;
	(void)errlen;
	return ((struct cm_listen_plan *)(void *)&nothing);
}

/* A daemon with listen addresses takes the next client link. */
void
cm_listen_commit(struct rsd *d, const struct conf *nc,
    struct cm_listen_plan *p)
{
	struct simcm *cm;

	(void)p;
	for (cm = cms; cm < cms + SIM_CMS; cm++)
		if (cm->d == d && nc->nlisten > 0)
			listener = cm;
}

void
cm_listen_close(struct rsd *d)
{

	if (listener != NULL && listener->d == d)
		listener = NULL;
}

/* The fabric is always there. */
const char *
cm_rdma(const struct rsd *d, char *why, size_t len)
{

	(void)d;
	snprintf(why, len, "%s", "");
	return ("ready");
}

size_t
cm_listening(const struct rsd *d)
{

	return (listener != NULL && listener->d == d);
}

/* ---- Ring memory. */

/* A receive ring opens to the peer's WRITEs under an rkey of its own. */
static void
ring_register(struct link_ring *r, struct dlink *dl)
{

	r->dl = dl;
	if (!r->rx)
		return;
	r->rkey = dl->next_rkey++;
	fab_mr_add(dl->f, dl->side, (uint64_t)(uintptr_t)r->buf, r->size,
	    r->rkey);
}

static void
ring_unregister(struct link_ring *r)
{

	if (r->dl != NULL && r->rx)
		fab_mr_del(r->dl->f, r->dl->side, (uint64_t)(uintptr_t)r->buf);
	r->dl = NULL;
}

struct link_ring *
link_ring_new(struct dlink *dl, uint32_t size, int flags, char *err,
    size_t errlen)
{
	struct link_ring *r;
	void *buf;

	if ((r = calloc(1, sizeof(*r))) == NULL ||
	    posix_memalign(&buf, 4096, size) != 0) {
		free(r);
		snprintf(err, errlen, "no memory for a ring of %u bytes",
		    (unsigned)size);
		errno = ENOMEM;
		return (NULL);
	}
	memset(buf, 0, size);
	r->buf = buf;
	r->size = size;
	r->rx = (flags & LINK_RING_RX) != 0;
	ring_register(r, dl);
	rings_live++;
	if (size > ring_max)
		ring_max = size;
	return (r);
}

void
link_ring_free(struct link_ring *r)
{

	if (r == NULL)
		return;
	rings_live--;
	ring_unregister(r);
	free(r->buf);
	free(r);
}

uint32_t
link_ring_size(const struct link_ring *r)
{

	return (r != NULL ? r->size : 0);
}

void
link_ring_describe(const struct link_ring *r, struct engine_ring *ring)
{

	ring->addr = (uint64_t)(uintptr_t)r->buf;
	ring->size = r->size;
	ring->key = r->rx ? r->rkey : 1;
	ring->mem = (void *)(uintptr_t)r;
}

void
link_ring_detach(struct link_ring *r)
{

	if (r != NULL)
		ring_unregister(r);
}

int
link_ring_move(struct link_ring *r, struct dlink *dl, char *err,
    size_t errlen)
{

	(void)err;
	(void)errlen;
	ring_unregister(r);
	ring_register(r, dl);
	return (0);
}
