/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * simverbs_cm: what the simulated CM's files share (simverbs_int.h):
 * what a test sets and reads (simverbs.h's knobs and attempts), the
 * channels and their events, refusals and requests that go, links made,
 * set up and downed, and the listener at an address.  How the whole
 * keeps verbs.h's promises: simverbs.c.
 */
#include "config.h"

#include <sys/eventfd.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addr.h"
#include "budget.h"
#include "engine.h"
#include "fabric.h"
#include "loop.h"
#include "simverbs.h"
#include "simverbs_int.h"
#include "verbs.h"
#include "verbs_pure.h"
#include "wire.h"

struct sv_cms sv_cms = TAILQ_HEAD_INITIALIZER(sv_cms);
int sv_iwarp;
struct sv_listeners sv_listeners = TAILQ_HEAD_INITIALIZER(sv_listeners);
/* Queue pair numbers are never used twice, as on one HCA; source ports
 * come in turn. */
static uint32_t next_qpn = 0x100;
static uint16_t next_port = 40000;

/* What the test set, and what it reads back. */
#define KNOBS_MAX 16
static struct {
	char addr[64];
	struct simverbs_peer p;
} knobs[KNOBS_MAX];
static size_t nknobs;
/* Every attempt ever (a link keeps its index); those since the last
 * simverbs_reset from att_base. */
static struct simverbs_attempt *atts;
static size_t natts, atts_cap, att_base;

/* --------------------------------------- what a test sets and reads */

uint16_t
sv_next_port(void)
{
	uint16_t p = next_port;

	next_port = next_port == 60999 ? 40000 : next_port + 1;
	return (p);
}

const struct simverbs_peer *
sv_peer_at(const char *addr)
{
	static const struct simverbs_peer plain;
	size_t i;

	for (i = 0; i < nknobs; i++)
		if (strcmp(knobs[i].addr, addr) == 0)
			return (&knobs[i].p);
	return (&plain);
}

void
simverbs_peer(const char *addr, const struct simverbs_peer *p)
{
	size_t i;

	for (i = 0; i < nknobs && strcmp(knobs[i].addr, addr) != 0; i++)
		;
	if (i == KNOBS_MAX)
		abort();
	if (i == nknobs)
		nknobs++;
	snprintf(knobs[i].addr, sizeof(knobs[i].addr), "%s", addr);
	memset(&knobs[i].p, 0, sizeof(knobs[i].p));
	if (p != NULL)
		knobs[i].p = *p;
}

void
simverbs_reset(void)
{

	nknobs = 0;
	att_base = natts;
	sv_error_clear();
}

size_t
simverbs_attempts(void)
{

	return (natts - att_base);
}

const struct simverbs_attempt *
simverbs_attempt(size_t i)
{

	return (i < natts - att_base ? &atts[att_base + i] : NULL);
}

/* ${l}'s attempt, or NULL (an incoming link). */
struct simverbs_attempt *
sv_att_of(const struct verbs_link *l)
{

	return (l->att >= 0 ? &atts[l->att] : NULL);
}

/* Connecting link ${l} makes an attempt, from now. */
void
sv_att_new(struct verbs_link *l)
{
	struct simverbs_attempt *a;

	if (natts == atts_cap) {
		atts_cap = atts_cap ? atts_cap * 2 : 64;
		if ((atts = realloc(atts, atts_cap * sizeof(*atts))) == NULL)
			abort();
	}
	l->att = (long)natts;
	a = &atts[natts++];
	memset(a, 0, sizeof(*a));
	snprintf(a->dst, sizeof(a->dst), "%s", l->peer);
	a->start_ms = loop_now_ms();
}

/* ------------------------------------------------ the CM's channels */

static void
chan_push(struct sv_chan *c, struct sv_event *ev)
{
	uint64_t one = 1;

	TAILQ_INSERT_TAIL(&c->q, ev, entry);
	if (write(c->fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		abort();
}

/* The channel's fd reads as it should: readable while events wait. */
static void
chan_settle(struct sv_chan *c)
{
	uint64_t n;

	if (TAILQ_EMPTY(&c->q) && read(c->fd, &n, sizeof(n)) < 0 &&
	    errno != EAGAIN)
		abort();
}

struct sv_event *
sv_chan_pop(struct sv_chan *c)
{
	struct sv_event *ev;

	if (c->fd < 0 || (ev = TAILQ_FIRST(&c->q)) == NULL)
		return (NULL);
	TAILQ_REMOVE(&c->q, ev, entry);
	chan_settle(c);
	return (ev);
}

/* Send an event of ${type} for link ${l} to channel ${c}. */
struct sv_event *
sv_post(struct sv_chan *c, enum sv_type type, struct verbs_link *l,
    const void *data, size_t len)
{
	struct sv_event *ev = sv_zalloc(sizeof(*ev));

	ev->type = type;
	ev->l = l;
	if (len > sizeof(ev->data))
		abort();
	if (len > 0)
		memcpy(ev->data, data, len);
	ev->len = len;
	chan_push(c, ev);
	return (ev);
}

/* Events for ${l} (or at listener ${ls}) go from ${c}, unanswered. */
void
sv_chan_purge(struct sv_chan *c, const struct verbs_link *l,
    const struct verbs_listener *ls, void (*gone)(struct sv_event *))
{
	struct sv_event *ev, *next;

	for (ev = TAILQ_FIRST(&c->q); ev != NULL; ev = next) {
		next = TAILQ_NEXT(ev, entry);
		if ((l != NULL && ev->l == l) || (ls != NULL && ev->ls == ls)) {
			TAILQ_REMOVE(&c->q, ev, entry);
			if (gone != NULL)
				gone(ev);
			free(ev);
		}
	}
	chan_settle(c);
}

/* ----------------------------------- refusals, and requests that go */

/*
 * Connecting link ${l}'s request is rejected with IB CM reason ${status}
 * and ${note} (NULL: none), as its attempt records.
 */
void
sv_reject_to(struct verbs_link *l, int status, const struct wire_note *note)
{
	struct simverbs_attempt *a;
	uint8_t buf[WIRE_NOTE_LEN] = { 0 };
	struct sv_event *ev;

	if (l == NULL)
		return;
	a = sv_att_of(l);
	if (note != NULL)
		wire_note_encode(buf, note);
	ev = sv_post(&l->cm->ch, SV_REJECTED, l, buf, note != NULL ?
	    sizeof(buf) : 0);
	ev->status = status;
	/* A link connecting its lane 1 has lane 0 up: the reject is
	 * lane 1's. */
	ev->lane = l->lane1 == L1_CONNECTING;
	if (a == NULL)
		return;
	a->outcome = status == 8 ? SIMVERBS_NOBODY : SIMVERBS_REJECTED;
	a->noted = note != NULL;
	a->note_version = note != NULL ? note->version : 0;
	a->busy = note != NULL && note->why == WIRE_NOTE_BUSY;
}

/* A listener's refusal of connecting link ${from}'s hello (byte 4 of
 * ${hello}: its version) for ${why}: the note its address's host says. */
void
sv_refuse(struct verbs_link *from, const uint8_t *hello, uint8_t why)
{
	const struct simverbs_peer *p;
	struct wire_note n = { WIRE_VERSION, why };

	if (from == NULL)
		return;
	p = sv_peer_at(from->peer);
	if (p->noted < 0 && hello != NULL && hello[4] > 1)
		n.version = (uint8_t)(hello[4] - 1);
	else if (p->noted > 0)
		n.version = (uint8_t)p->noted;
	else if (p->speaks != 0)
		n.version = (uint8_t)p->speaks;
	sv_reject_to(from, 28, &n);
}

/* A request event that a listener's end leaves unanswered: the kernel
 * rejects it, without a note. */
void
sv_request_orphaned(struct sv_event *ev)
{

	sv_reject_to(ev->l, 28, NULL);
}

/* Request ${r} goes, its connecting side refused for ${why} first
 * (enum wire_note_why; -1: not). */
void
sv_request_go(struct verbs_request *r, int why)
{

	if (why >= 0)
		sv_refuse(r->from, NULL, (uint8_t)why);
	TAILQ_REMOVE(&r->cm->reqs, r, entry);
	free(r);
}

/* Connecting link ${l} goes: its requests go from every listener. */
void
sv_requests_abandon(struct verbs_link *l)
{
	struct verbs_request *r;
	struct verbs_cm *cm;

	TAILQ_FOREACH(cm, &sv_cms, entry) {
		if (cm->lch.fd >= 0)
			sv_chan_purge(&cm->lch, l, NULL, NULL);
		TAILQ_FOREACH(r, &cm->reqs, entry) {
			if (r->from != l)
				continue;
			r->from = NULL;
			sv_post(&cm->lch, SV_GAVE_UP, NULL, NULL, 0);
		}
	}
}

/* ---------------------------------- links: made, set up, downed */

struct verbs_link *
sv_link_new(struct verbs_cm *cm, const struct verbs_link_conf *conf,
    void *user)
{
	struct verbs_link *l = sv_zalloc(sizeof(*l));

	l->cm = cm;
	l->conf = *conf;
	l->user = user;
	l->efd = -1;
	l->att = -1;
	snprintf(l->peer, sizeof(l->peer), "?");
	snprintf(l->device, sizeof(l->device), "?");
	TAILQ_INSERT_TAIL(&cm->links, l, entry);
	return (l);
}

/*
 * ${l}'s queues on side ${l->side} of its connection: its completion
 * channel, control buffers (charged), engine, every receive posted.
 */
int
sv_setup(struct verbs_link *l, char *err, size_t errlen)
{
	struct verbs_cm *cm = l->cm;
	struct engine_conf ec;
	uint64_t sz = (uint64_t)WIRE_LANES_MAX * (l->conf.sq_size +
	    l->conf.rq_size) * WIRE_MSG_SIZE;

	snprintf(l->device, sizeof(l->device), "sim0");
	l->qpn = next_qpn++;
	if ((l->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		return (-1);
	}
	l->armed = l->armed_send = 1;
	if (budget_take(&cm->pinned, cm->max_pinned, sz) != 0) {
		snprintf(err, errlen, "max_memory: no room for %llu bytes of "
		    "control buffers", (unsigned long long)sz);
		errno = ENOBUFS;
		return (-1);
	}
	l->ctrl_bytes = sz;
	cm->control += sz;
	l->ctrl_send = sv_zalloc((size_t)WIRE_LANES_MAX * l->conf.sq_size *
	    WIRE_MSG_SIZE);
	l->iwarp = sv_iwarp != 0;
	verbs_engine_conf(&l->conf, l->ctrl_send, l->qpn, l->iwarp, &ec);
	if ((l->e = verbs_engine_new(&l->conf, l->passive, &ec, err,
	    errlen)) == NULL)
		return (-1);
	if (fab_attach(&l->conn->f, l->side, &ec, l->e) != 0) {
		snprintf(err, errlen, "out of memory");
		return (-1);
	}
	l->conn->end[l->side] = l;
	if (verbs_link_flush(l)) {
		snprintf(err, errlen, "cannot post receives: %s",
		    engine_error(l->e));
		return (-1);
	}
	return (0);
}

/* Every receive goes up before connect and accept (DESIGN). */
void
sv_check_posted(const struct verbs_link *l)
{
	const struct fab_side *s = &l->conn->f.side[l->side];

	if (s->posted_n != s->conf.rq_size)
		sv_error("%s: %zu of %u receives posted before %s", l->peer,
		    s->posted_n, (unsigned)s->conf.rq_size, l->passive ?
		    "accepting" : "connecting");
}

/* Lane 1's receives all go up before its connect and accept too. */
void
sv_check_posted1(const struct verbs_link *l)
{
	const struct fab_side *s = &l->conn->f.side[l->side];

	if (s->lane1.posted_n != s->conf.rq_size)
		sv_error("%s: %zu of %u lane-1 receives posted before %s",
		    l->peer, s->lane1.posted_n, (unsigned)s->conf.rq_size,
		    l->passive ? "accepting it" : "connecting it");
}

/* ${l} is down for ${why}: a DOWN event in ${ev}. */
void
sv_down(struct verbs_link *l, struct verbs_ev *ev, const char *why)
{

	/* The engine's first failure is why, as verbs_vl_down says. */
	sv_transport_fail(l, why);
	if (l->e != NULL && engine_error(l->e) != NULL)
		why = engine_error(l->e);
	l->state = L_DOWN;
	ev->type = VERBS_EV_DOWN;
	snprintf(ev->why, sizeof(ev->why), "%s", why);
}

/* The listener that takes requests to ${sa}, or NULL. */
struct verbs_listener *
sv_listener_at(const struct sockaddr *sa)
{
	const struct sockaddr_in *any = NULL;
	struct verbs_listener *ls;

	TAILQ_FOREACH(ls, &sv_listeners, entry) {
		if (addr_same((const struct sockaddr *)&ls->sa, sa, 1))
			return (ls);
		if (ls->sa.ss_family == AF_INET && sa->sa_family == AF_INET)
			any = (const struct sockaddr_in *)(void *)&ls->sa;
		if (any != NULL && any->sin_addr.s_addr == INADDR_ANY &&
		    any->sin_port ==
		    ((const struct sockaddr_in *)(const void *)sa)->sin_port)
			return (ls);
		any = NULL;
	}
	return (NULL);
}

/* Both lanes are up (or the one the link runs): UP, and what waited goes. */
void
sv_up_event(struct verbs_link *l, struct verbs_ev *ev)
{

	ev->type = VERBS_EV_UP;
	if (verbs_link_flush(l))
		sv_down(l, ev, engine_error(l->e));
}

