/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * simverbs: verbs.h over the fabric (see simverbs.h).  What it keeps of
 * verbs.h's promises, and how:
 *
 * - The RDMA CM.  Each channel (verbs_cm_fd, verbs_cm_listen_fd) is an
 *   eventfd, readable while its queue of events is not empty; one call of
 *   verbs_cm_handle or verbs_cm_handle_listen takes one event.  A connect
 *   resolves in one event (no route, no probe for an SL), then its hello
 *   goes to the listener at its destination as a connect request, which
 *   the listener's gate is asked about (hello checked first) before it
 *   waits for verbs_cm_request.  An accept is established at the
 *   connecting side with the accepting side's hello, which then is
 *   established too (the RTU).  Rejects carry the refusal note with IB CM
 *   reason 28, and nothing listening is reason 8; the reading of both is
 *   verbs_pure's, as the real layer's.  A link freed while connected, or
 *   while accepting, has its peer told (DISCONNECTED, or a reject without
 *   a note for a request never answered), unless its path broke; a link
 *   freed gets no event after (its id is gone), and a request whose
 *   connecting side gave up goes from the listener's queue.
 * - The fabric.  A connection is one struct fab: side 0 the connecting
 *   link's, side 1 the accepting one's, each with the engine its link made
 *   (verbs_pure's, from its verbs_link_conf), attached (fab_attach).  Every
 *   receive is posted before connect and accept, or it is a violation.
 *   What a link posts executes at once at its peer, in order, by the
 *   fabric's rules (a WRITE lands only inside a region live on that
 *   connection under its rkey; a message without a posted receive is
 *   RNR); a violation is kept for simverbs_error and fails the link, as an
 *   HCA's error completion would.  Completions wait in the fabric; a
 *   link's completion channel (verbs_link_fd, an eventfd) is raised by the
 *   first one to come after verbs_link_arm (a new link's starts armed),
 *   not by those already waiting, and verbs_link_poll takes the event and
 *   drains, leaving it unarmed, as the real one does.  Nothing posted to
 *   a peer whose queue pair is stopped or freed executes (its CM tells).
 * - Ring memory is plain memory; a receive ring is a region of its
 *   link's side under an rkey of its own, which no other ring, link or
 *   connection ever has; detached, it is no region; moved, it is one of
 *   the new link's, under a new rkey.  Memory is charged against
 *   verbs_cm_set_max_pinned before it is allocated (control buffers
 *   too), and a link is freed with its last ring.
 *
 * What cannot matter here, and is not done: no pool of freed rings (each
 * ring is allocated, which verbs.h allows: the pool is a cache), so
 * verbs_link_pool_trim does nothing and no ring counts as reused; no
 * RDMA missing (verbs_cm_open succeeds, verbs_cm_moved says yes once);
 * nothing waits for verbs_cm_tick (a link freed while accepting tells its
 * peer at once); no device, traffic class or service level (the link's
 * hca_info names device "sim0" and transport "sim"); no time-outs of
 * the CM or the transport: a dark request stays unanswered, and a broken
 * path fails both ends at once rather than after the retries.
 */
#include "config.h"

#include <sys/eventfd.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addr.h"
#include "budget.h"
#include "engine.h"
#include "fabric.h"
#include "hca.h"
#include "loop.h"
#include "simverbs.h"
#include "simverbs_int.h"
#include "verbs.h"
#include "verbs_pure.h"
#include "wire.h"

static TAILQ_HEAD(, verbs_cm) cms = TAILQ_HEAD_INITIALIZER(cms);
static TAILQ_HEAD(, verbs_listener) listeners =
    TAILQ_HEAD_INITIALIZER(listeners);
static unsigned ncms;
/* Queue pair numbers are never used twice, as on one HCA. */
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

static const struct simverbs_peer *
peer_at(const char *addr)
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
static struct simverbs_attempt *
att_of(const struct verbs_link *l)
{

	return (l->att >= 0 ? &atts[l->att] : NULL);
}

/* Connecting link ${l} makes an attempt, from now. */
static void
att_new(struct verbs_link *l)
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

static struct sv_event *
chan_pop(struct sv_chan *c)
{
	struct sv_event *ev;

	if (c->fd < 0 || (ev = TAILQ_FIRST(&c->q)) == NULL)
		return (NULL);
	TAILQ_REMOVE(&c->q, ev, entry);
	chan_settle(c);
	return (ev);
}

/* Send an event of ${type} for link ${l} to channel ${c}. */
static struct sv_event *
post(struct sv_chan *c, enum sv_type type, struct verbs_link *l,
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
static void
chan_purge(struct sv_chan *c, const struct verbs_link *l,
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
static void
reject_to(struct verbs_link *l, int status, const struct wire_note *note)
{
	struct simverbs_attempt *a;
	uint8_t buf[WIRE_NOTE_LEN] = { 0 };
	struct sv_event *ev;

	if (l == NULL)
		return;
	a = att_of(l);
	if (note != NULL)
		wire_note_encode(buf, note);
	ev = post(&l->cm->ch, SV_REJECTED, l, buf, note != NULL ?
	    sizeof(buf) : 0);
	ev->status = status;
	/* A link connecting its lane 1 has lane 0 up: the reject is lane 1's. */
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
static void
refuse(struct verbs_link *from, const uint8_t *hello, uint8_t why)
{
	const struct simverbs_peer *p;
	struct wire_note n = { WIRE_VERSION, why };

	if (from == NULL)
		return;
	p = peer_at(from->peer);
	if (p->noted < 0 && hello != NULL && hello[4] > 1)
		n.version = (uint8_t)(hello[4] - 1);
	else if (p->noted > 0)
		n.version = (uint8_t)p->noted;
	else if (p->speaks != 0)
		n.version = (uint8_t)p->speaks;
	reject_to(from, 28, &n);
}

/* A request event that a listener's end leaves unanswered: the kernel
 * rejects it, without a note. */
static void
request_orphaned(struct sv_event *ev)
{

	reject_to(ev->l, 28, NULL);
}

/* Request ${r} goes, its connecting side refused for ${why} first
 * (enum wire_note_why; -1: not). */
static void
request_go(struct verbs_request *r, int why)
{

	if (why >= 0)
		refuse(r->from, NULL, (uint8_t)why);
	TAILQ_REMOVE(&r->cm->reqs, r, entry);
	free(r);
}

/* Connecting link ${l} goes: its requests go from every listener. */
static void
requests_abandon(struct verbs_link *l)
{
	struct verbs_request *r;
	struct verbs_cm *cm;

	TAILQ_FOREACH(cm, &cms, entry) {
		if (cm->lch.fd >= 0)
			chan_purge(&cm->lch, l, NULL, NULL);
		TAILQ_FOREACH(r, &cm->reqs, entry) {
			if (r->from != l)
				continue;
			r->from = NULL;
			post(&cm->lch, SV_GAVE_UP, NULL, NULL, 0);
		}
	}
}

/* --------------------------------------- links: made, set up, freed */

static struct verbs_link *
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
static int
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
	l->armed = 1;
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
	verbs_engine_conf(&l->conf, l->ctrl_send, l->qpn, &ec);
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

const char *
verbs_link_device(const struct verbs_link *l)
{

	return (l->device);
}

/* Every receive goes up before connect and accept (DESIGN). */
static void
check_posted(const struct verbs_link *l)
{
	const struct fab_side *s = &l->conn->f.side[l->side];

	if (s->posted_n != s->conf.rq_size)
		sv_error("%s: %zu of %u receives posted before %s", l->peer,
		    s->posted_n, (unsigned)s->conf.rq_size, l->passive ?
		    "accepting" : "connecting");
}

/* Lane 1's receives all go up before its connect and accept too. */
static void
check_posted1(const struct verbs_link *l)
{
	const struct fab_side *s = &l->conn->f.side[l->side];

	if (s->lane1.posted_n != s->conf.rq_size)
		sv_error("%s: %zu of %u lane-1 receives posted before %s",
		    l->peer, s->lane1.posted_n, (unsigned)s->conf.rq_size,
		    l->passive ? "accepting it" : "connecting it");
}

/* ${l} is down for ${why}: a DOWN event in ${ev}. */
static void
sv_down(struct verbs_link *l, struct verbs_ev *ev, const char *why)
{

	sv_transport_fail(l, why);
	l->state = L_DOWN;
	ev->type = VERBS_EV_DOWN;
	snprintf(ev->why, sizeof(ev->why), "%s", why);
}

/* ${l} goes: its peer hears of it as the CM would tell it. */
static void
tell_peer(struct verbs_link *l)
{
	struct sv_conn *c = l->conn;
	struct verbs_link *o = c != NULL ? c->end[1 - l->side] : NULL;

	if (o == NULL || c->cut)
		return;
	if (l->passive && l->state == L_INCOMING)
		reject_to(o, 28, NULL);
	else if (l->state == L_UP || l->state == L_ACCEPTING ||
	    l->state == L_CONNECTING)
		post(&o->cm->ch, SV_DISCONNECTED, o, NULL, 0);
}

void
verbs_link_free(struct verbs_link *l)
{
	struct simverbs_attempt *a;

	if (l == NULL)
		return;
	/* Its id goes: no event for it after this. */
	if (l->cm->ch.fd >= 0)
		chan_purge(&l->cm->ch, l, NULL, NULL);
	if (!l->passive)
		requests_abandon(l);
	tell_peer(l);
	l->stopped = 1;
	if (l->conn != NULL && l->conn->end[l->side] == l) {
		l->conn->end[l->side] = NULL;
		l->conn->f.side[l->side].e = NULL;
	}
	engine_free(l->e);
	l->e = NULL;
	free(l->ctrl_send);
	l->ctrl_send = NULL;
	budget_give(&l->cm->pinned, l->ctrl_bytes);
	l->cm->control -= l->ctrl_bytes;
	l->ctrl_bytes = 0;
	if (l->efd >= 0)
		close(l->efd);
	l->efd = -1;
	if ((a = att_of(l)) != NULL)
		a->end_ms = loop_now_ms();
	TAILQ_REMOVE(&l->cm->links, l, entry);
	l->freed = 1;
	if (l->nmems == 0)
		sv_destroy(l);
}

int
verbs_link_hellos(const struct verbs_link *l,
    uint8_t out[2 * WIRE_HELLO_LEN])
{

	if (l->conn == NULL || !l->conn->have[0] || !l->conn->have[1])
		return (-1);
	memcpy(out, l->conn->hello, 2 * WIRE_HELLO_LEN);
	return (0);
}

/* ----------------------------------------- connecting and accepting */

/* The listener that takes requests to ${sa}, or NULL. */
static struct verbs_listener *
listener_at(const struct sockaddr *sa)
{
	const struct sockaddr_in *any = NULL;
	struct verbs_listener *ls;

	TAILQ_FOREACH(ls, &listeners, entry) {
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

/* Connecting link ${l}'s route is known: queues, a hello, the request. */
static void
on_resolved(struct verbs_link *l, struct verbs_ev *ev)
{
	struct simverbs_attempt *a = att_of(l);
	const struct simverbs_peer *p = peer_at(l->peer);
	struct verbs_listener *ls;
	struct sv_event *req;
	char err[200];

	l->conn = sv_zalloc(sizeof(*l->conn));
	l->conn->refs = 1;
	if (sv_setup(l, err, sizeof(err)) != 0) {
		sv_down(l, ev, err);
		return;
	}
	if (verbs_hello_make(l->e, l->conf.version_max, l->conn->hello[0])) {
		sv_down(l, ev, "no random numbers available yet");
		return;
	}
	l->conn->have[0] = 1;
	check_posted(l);
	l->state = L_CONNECTING;
	if (a != NULL)
		a->version = l->conn->hello[0][4];
	if (p->dark) {
		if (a != NULL)
			a->outcome = SIMVERBS_DARK;
		return;
	}
	if ((ls = listener_at((const struct sockaddr *)&l->dst)) == NULL) {
		reject_to(l, 8, NULL);
		return;
	}
	req = post(&ls->cm->lch, SV_REQUEST, l, l->conn->hello[0],
	    WIRE_HELLO_LEN);
	req->ls = ls;
}

/* Both lanes are up (or the one the link runs): UP, and what waited goes. */
static void
up_event(struct verbs_link *l, struct verbs_ev *ev)
{

	ev->type = VERBS_EV_UP;
	if (verbs_link_flush(l))
		sv_down(l, ev, engine_error(l->e));
}

/*
 * Lane 0 connected: a connecting side reads the accepting side's hello
 * first; a link of two lanes is up once its lane 1 is too (lane_event).
 */
static void
on_established(struct verbs_link *l, const struct sv_event *sev,
    struct verbs_ev *ev)
{
	struct verbs_link *o = l->conn->end[1];
	struct simverbs_attempt *a = att_of(l);
	struct wire_hello h;
	char why[200];
	int werr;

	if (!l->passive) {
		if ((werr = wire_hello_decode(sev->data, sev->len, &h)) !=
		    WIRE_OK) {
			snprintf(why, sizeof(why), "peer's accept data is "
			    "invalid: %s", wire_strerror(werr));
			sv_down(l, ev, why);
			return;
		}
		engine_connected(l->e, &h);
		/* The accepting side is established by our RTU. */
		if (o != NULL && o->state == L_ACCEPTING)
			post(&o->cm->ch, SV_ESTABLISHED, o, NULL, 0);
		if (a != NULL) {
			a->outcome = SIMVERBS_UP;
			a->up_ms = loop_now_ms();
		}
	}
	l->state = L_UP;
	l->up0 = 1;
	memset(&l->hca, 0, sizeof(l->hca));
	snprintf(l->hca.device, sizeof(l->hca.device), "%s", l->device);
	snprintf(l->hca.transport, sizeof(l->hca.transport), "sim");
	snprintf(l->hca.gid, sizeof(l->hca.gid), "?");
	snprintf(l->hca.peer_gid, sizeof(l->hca.peer_gid), "?");
	l->hca.port = 1;
	l->hca.gid_index = l->hca.traffic_class = l->hca.sl = -1;
	l->hca.path_mtu = 4096;
	l->hca.qpn = l->qpn;
	o = l->conn->end[1 - l->side];
	l->hca.peer_qpn = o != NULL ? o->qpn : 0;
	l->have_hca = 1;
	if (!l->passive && engine_error(l->e) == NULL &&
	    engine_lanes(l->e) > 1) {
		/* Its second connection resolves in one event too. */
		l->lane1 = L1_RESOLVING;
		post(&l->cm->ch, SV_RESOLVED, l, NULL, 0)->lane = 1;
		return;
	}
	if (l->lane1 != L1_NONE && l->lane1 != L1_UP)
		return;
	up_event(l, ev);
}

/* ${l}'s own lane-1 hello into ${out}: its lane-0 hello's nonce. */
static void
lane_hello(struct verbs_link *l, uint8_t out[WIRE_HELLO_LEN])
{
	struct wire_hello h, mine;

	memset(&h, 0, sizeof(h));
	engine_lane_hello(l->e, &h);
	if (wire_hello_decode(l->conn->hello[l->side], WIRE_HELLO_LEN,
	    &mine) == WIRE_OK)
		memcpy(h.nonce, mine.nonce, sizeof(h.nonce));
	wire_hello_encode(out, &h);
}

/* Connecting link ${l}'s lane 1 is resolved: receives, then its request. */
static void
lane_resolved(struct verbs_link *l, struct verbs_ev *ev)
{
	struct verbs_listener *ls;
	struct sv_event *req;

	/* Lane 1's receives, handed out by engine_connected, go up. */
	if (verbs_link_flush(l)) {
		sv_down(l, ev, "lane 1: cannot post receives");
		return;
	}
	check_posted1(l);
	lane_hello(l, l->conn->hello1[0]);
	l->lane1 = L1_CONNECTING;
	if (peer_at(l->peer)->dark)
		return;
	if ((ls = listener_at((const struct sockaddr *)&l->dst)) == NULL) {
		sv_down(l, ev, "lane 1: connection refused: nothing listening "
		    "at that address and port");
		return;
	}
	req = post(&ls->cm->lch, SV_REQUEST, l, l->conn->hello1[0],
	    WIRE_HELLO_LEN);
	req->ls = ls;
	req->lane = 1;
}

/* Lane 1 established: a connecting side checks the accept's nonce. */
static void
lane_established(struct verbs_link *l, const struct sv_event *sev,
    struct verbs_ev *ev)
{
	struct verbs_link *o = l->conn->end[1];
	struct wire_hello h, peer0;

	if (!l->passive) {
		if (wire_hello_decode(sev->data, sev->len, &h) != WIRE_OK) {
			sv_down(l, ev, "lane 1: the peer's accept data is "
			    "invalid");
			return;
		}
		if (wire_hello_decode(l->conn->hello[1], WIRE_HELLO_LEN,
		    &peer0) != WIRE_OK || memcmp(h.nonce, peer0.nonce,
		    sizeof(h.nonce)) != 0) {
			sv_down(l, ev, "lane 1: the peer's accept names "
			    "another link");
			return;
		}
		if (engine_lane_up(l->e, &h) != 0) {
			sv_down(l, ev, engine_error(l->e));
			return;
		}
		if (o != NULL && o->lane1 == L1_ACCEPTING)
			post(&o->cm->ch, SV_ESTABLISHED, o, NULL, 0)->lane = 1;
	}
	l->lane1 = L1_UP;
	if (l->up0 && l->state == L_UP)
		up_event(l, ev);
}

/* An event of ${l}'s lane-1 connection. */
static void
lane_event(struct verbs_link *l, const struct sv_event *sev,
    struct verbs_ev *ev)
{
	char why[200];

	switch (sev->type) {
	case SV_RESOLVED:
		lane_resolved(l, ev);
		return;
	case SV_ESTABLISHED:
		lane_established(l, sev, ev);
		return;
	case SV_DISCONNECTED:
		sv_down(l, ev, "peer disconnected lane 1");
		return;
	default:
		snprintf(why, sizeof(why), "lane 1: %s",
		    verbs_reject_text(sev->status));
		sv_down(l, ev, why);
		return;
	}
}

const struct hca_info *
verbs_link_hca(const struct verbs_link *l)
{

	return (l->have_hca ? &l->hca : NULL);
}

const char *
verbs_link_peer(const struct verbs_link *l)
{

	return (l->peer);
}

struct verbs_link *
verbs_connect(struct verbs_cm *cm, const struct sockaddr *dst,
    const struct sockaddr *src, const struct verbs_link_conf *conf,
    void *user, char *err, size_t errlen)
{
	struct sockaddr_in *sin;
	struct verbs_link *l;

	if (cm->ch.fd < 0 || (dst->sa_family != AF_INET &&
	    dst->sa_family != AF_INET6)) {
		snprintf(err, errlen, "no RDMA yet, or not an IP address");
		errno = ENODEV;
		return (NULL);
	}
	l = sv_link_new(cm, conf, user);
	memcpy(&l->dst, dst, dst->sa_family == AF_INET ?
	    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
	addr_text(dst, l->peer, sizeof(l->peer));
	/* Where the request comes from: the source, or the CM's own. */
	if (src != NULL) {
		memcpy(&l->src, src, src->sa_family == AF_INET ?
		    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
	} else {
		sin = (struct sockaddr_in *)(void *)&l->src;
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(0x7f000900u | (cm->n & 0xff));
	}
	sin = (struct sockaddr_in *)(void *)&l->src;
	if (l->src.ss_family == AF_INET)
		sin->sin_port = htons(next_port);
	next_port = next_port == 60999 ? 40000 : next_port + 1;
	att_new(l);
	l->state = L_RESOLVING;
	post(&cm->ch, SV_RESOLVED, l, NULL, 0);
	return (l);
}

void
verbs_reject(struct verbs_link *l)
{

	if (l->state == L_INCOMING)
		refuse(l->conn->end[0], NULL, WIRE_NOTE_REFUSED);
	l->state = L_DOWN;
}

int
verbs_accept(struct verbs_link *l)
{
	struct verbs_link *from;
	const struct simverbs_peer *p;
	struct simverbs_attempt *a;
	unsigned cap;

	if (l->state != L_INCOMING)
		return (-1);
	from = l->conn->end[0];
	p = peer_at(from != NULL ? from->peer : "");
	/* Answer in the peer's version or older (and the host's own). */
	cap = l->peer_hello.version;
	if (l->conf.version_max != 0 && l->conf.version_max < cap)
		cap = l->conf.version_max;
	if (p->answers != 0 && p->answers < cap)
		cap = p->answers;
	if (from == NULL ||
	    verbs_hello_make(l->e, cap, l->conn->hello[1]) != 0) {
		sv_transport_fail(l, from == NULL ? "rdma_accept failed" :
		    "no random numbers available yet");
		refuse(from, NULL, WIRE_NOTE_REFUSED);
		l->state = L_DOWN;
		return (-1);
	}
	l->conn->have[1] = 1;
	check_posted(l);
	post(&from->cm->ch, SV_ESTABLISHED, from, l->conn->hello[1],
	    WIRE_HELLO_LEN);
	if ((a = att_of(from)) != NULL)
		a->outcome = SIMVERBS_ACCEPTED;
	/* The peer may send as soon as it sees our accept. */
	engine_connected(l->e, &l->peer_hello);
	l->state = L_ACCEPTING;
	if (engine_lanes(l->e) > 1)
		l->lane1 = L1_WAITING;
	return (0);
}

/* ------------------------ paths that break, peers that stop hearing */

int
simverbs_cut(const char *addr)
{
	const size_t none[2] = { 0, 0 };
	struct verbs_cm *cm;
	struct verbs_link *l;
	struct sv_conn *c;
	int n = 0, i;

	TAILQ_FOREACH(cm, &cms, entry) {
		TAILQ_FOREACH(l, &cm->links, entry) {
			if ((c = l->conn) == NULL || c->cut || l->passive ||
			    strcmp(l->peer, addr) != 0)
				continue;
			c->cut = 1;
			if (fab_break(&c->f, none) != 0)
				sv_error("%s", c->f.err);
			for (i = 0; i < 2; i++)
				if (c->end[i] != NULL)
					sv_wc_error(c->end[i], "work request "
					    "failed: transport retry counter "
					    "exceeded");
			n++;
		}
	}
	return (n);
}

int
simverbs_lane_drop(const char *addr)
{
	struct verbs_cm *cm;
	struct verbs_link *l;
	struct sv_conn *c;
	int n = 0, i;

	TAILQ_FOREACH(cm, &cms, entry) {
		TAILQ_FOREACH(l, &cm->links, entry) {
			if ((c = l->conn) == NULL || c->cut || l->passive ||
			    l->lane1 != L1_UP || strcmp(l->peer, addr) != 0)
				continue;
			for (i = 0; i < 2; i++)
				if (c->end[i] != NULL)
					post(&c->end[i]->cm->ch,
					    SV_DISCONNECTED, c->end[i], NULL,
					    0)->lane = 1;
			n++;
		}
	}
	return (n);
}

struct verbs_link *
simverbs_lane_request(struct verbs_cm *cm, const char *dst,
    const uint8_t *nonce)
{
	struct verbs_link *l, *o, *last = NULL;
	struct verbs_listener *ls;
	struct verbs_cm *c;
	struct sockaddr_in *sin;
	struct wire_hello h, h0;
	uint8_t buf[WIRE_HELLO_LEN];
	struct sv_event *req;

	memset(&h, 0, sizeof(h));
	h.version = WIRE_VERSION;
	h.flags = WIRE_HELLO_LANE1;
	h.credits = 32;
	l = sv_link_new(cm, &(struct verbs_link_conf){ .sq_size = 1 }, NULL);
	l->forged = 1;
	snprintf(l->peer, sizeof(l->peer), "%s", dst);
	if (nonce != NULL) {
		memcpy(h.nonce, nonce, sizeof(h.nonce));
		sin = (struct sockaddr_in *)(void *)&l->src;
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(0x7f000900u | (cm->n & 0xff));
		sin->sin_port = htons(next_port);
		next_port = next_port == 60999 ? 40000 : next_port + 1;
	} else {
		TAILQ_FOREACH(c, &cms, entry)
			TAILQ_FOREACH(o, &c->links, entry)
				if (!o->passive && !o->forged &&
				    o->conn != NULL && o->conn->have[0] &&
				    strcmp(o->peer, dst) == 0)
					last = o;
		if (last == NULL)
			abort();
		if (wire_hello_decode(last->conn->hello[0], WIRE_HELLO_LEN,
		    &h0) != WIRE_OK)
			abort();
		memcpy(h.nonce, h0.nonce, WIRE_NONCE_LEN);
		l->src = last->src;
		l->dst = last->dst;
	}
	if (nonce != NULL) {
		struct addrinfo hints, *ai;
		char host[64], *port;

		snprintf(host, sizeof(host), "%s", dst);
		if ((port = strrchr(host, ':')) == NULL)
			abort();
		*port++ = '\0';
		memset(&hints, 0, sizeof(hints));
		hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
		hints.ai_socktype = SOCK_STREAM;
		if (getaddrinfo(host, port, &hints, &ai) != 0)
			abort();
		memcpy(&l->dst, ai->ai_addr, ai->ai_addrlen);
		freeaddrinfo(ai);
	}
	att_new(l);
	atts[l->att].version = h.version;
	l->state = L_CONNECTING;
	wire_hello_encode(buf, &h);
	if ((ls = listener_at((const struct sockaddr *)&l->dst)) == NULL) {
		reject_to(l, 8, NULL);
		return (l);
	}
	req = post(&ls->cm->lch, SV_REQUEST, l, buf, WIRE_HELLO_LEN);
	req->ls = ls;
	req->lane = 1;
	return (l);
}

void
simverbs_deaf(struct verbs_cm *cm, int deaf)
{
	struct verbs_link *l;

	cm->deaf = deaf;
	if (deaf)
		return;
	/* An armed channel is raised by what waited; an unarmed one is
	 * drained by its loop's next turn anyway. */
	TAILQ_FOREACH(l, &cm->links, entry)
		sv_notify(l);
}

/* ----------------------------------------------- the links' channel */

struct verbs_cm *
verbs_cm_new(char *err, size_t errlen)
{
	struct verbs_cm *cm;

	(void)err;
	(void)errlen;
	cm = sv_zalloc(sizeof(*cm));
	cm->ch.fd = cm->lch.fd = -1;
	TAILQ_INIT(&cm->ch.q);
	TAILQ_INIT(&cm->lch.q);
	TAILQ_INIT(&cm->reqs);
	TAILQ_INIT(&cm->links);
	cm->n = ++ncms;
	TAILQ_INSERT_TAIL(&cms, cm, entry);
	return (cm);
}

enum verbs_rdma
verbs_cm_open(struct verbs_cm *cm, char *why, size_t whylen)
{

	if (whylen > 0)
		why[0] = '\0';
	if (cm->ch.fd >= 0)
		return (VERBS_RDMA_READY);
	if ((cm->ch.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
	    (cm->lch.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
		abort();
	return (VERBS_RDMA_READY);
}

int
verbs_cm_is_open(const struct verbs_cm *cm)
{

	return (cm->ch.fd >= 0);
}

void
verbs_cm_free(struct verbs_cm *cm)
{
	struct sv_event *ev;

	if (cm == NULL)
		return;
	while (!TAILQ_EMPTY(&cm->reqs))
		verbs_request_refuse(TAILQ_FIRST(&cm->reqs),
		    WIRE_NOTE_REFUSED);
	while ((ev = TAILQ_FIRST(&cm->lch.q)) != NULL) {
		TAILQ_REMOVE(&cm->lch.q, ev, entry);
		if (ev->type == SV_REQUEST)
			request_orphaned(ev);
		free(ev);
	}
	while ((ev = TAILQ_FIRST(&cm->ch.q)) != NULL) {
		TAILQ_REMOVE(&cm->ch.q, ev, entry);
		free(ev);
	}
	if (cm->ch.fd >= 0)
		close(cm->ch.fd);
	if (cm->lch.fd >= 0)
		close(cm->lch.fd);
	TAILQ_REMOVE(&cms, cm, entry);
	free(cm);
}

void
verbs_cm_tick(struct verbs_cm *cm)
{

	(void)cm;
}

int
verbs_cm_tick_due(struct verbs_cm *cm)
{

	(void)cm;
	return (0);
}

int
verbs_cm_moved(struct verbs_cm *cm)
{
	int first = !cm->moved_said;

	cm->moved_said = 1;
	return (first);
}

int
verbs_cm_fd(const struct verbs_cm *cm)
{

	return (cm->ch.fd);
}

int
verbs_cm_listen_fd(const struct verbs_cm *cm)
{

	return (cm->lch.fd);
}

int
verbs_cm_handle(struct verbs_cm *cm, struct verbs_ev *ev)
{
	struct sv_event *sev;
	struct verbs_link *l;

	memset(ev, 0, sizeof(*ev));
	if ((sev = chan_pop(&cm->ch)) == NULL)
		return (0);
	l = sev->l;
	ev->link = l;
	snprintf(ev->peer, sizeof(ev->peer), "%s", l->peer);
	/* The links' channel carries nothing else. */
	if (sev->lane) {
		lane_event(l, sev, ev);
	} else if (sev->type == SV_RESOLVED) {
		on_resolved(l, ev);
	} else if (sev->type == SV_ESTABLISHED) {
		on_established(l, sev, ev);
	} else if (sev->type == SV_DISCONNECTED) {
		sv_down(l, ev, "peer disconnected");
	} else {
		sv_down(l, ev, verbs_reject_text(sev->status));
		verbs_refused(ev, sev->status, l->conn != NULL &&
		    l->conn->have[0] ? l->conn->hello[0] : NULL, sev->data,
		    sev->len);
	}
	free(sev);
	return (1);
}

void *
verbs_link_user(const struct verbs_link *l)
{

	return (l->user);
}

/* ------------------------------------- listeners and their requests */

struct verbs_listener *
verbs_listen(struct verbs_cm *cm, const char *host, const char *port,
    const struct verbs_link_conf *conf, void *user, char *err, size_t errlen)
{
	struct addrinfo hints, *ai;
	struct verbs_listener *ls;
	int rc;

	(void)user;
	if (cm->lch.fd < 0) {
		snprintf(err, errlen, "no RDMA yet");
		errno = ENODEV;
		return (NULL);
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
	if ((rc = getaddrinfo(host != NULL && host[0] != '\0' ? host : NULL,
	    port, &hints, &ai)) != 0) {
		snprintf(err, errlen, "simverbs listens on numeric addresses "
		    "only: %s: %s", host, gai_strerror(rc));
		errno = EINVAL;
		return (NULL);
	}
	if (listener_at(ai->ai_addr) != NULL) {
		freeaddrinfo(ai);
		snprintf(err, errlen, "cannot listen for RDMA links on %s: "
		    "%s", host, strerror(EADDRINUSE));
		errno = EADDRINUSE;
		return (NULL);
	}
	ls = sv_zalloc(sizeof(*ls));
	ls->cm = cm;
	ls->conf = *conf;
	memcpy(&ls->sa, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	TAILQ_INSERT_TAIL(&listeners, ls, entry);
	return (ls);
}

void
verbs_listener_set_gate(struct verbs_listener *ls, verbs_gate_fn *gate,
    void *arg)
{

	ls->gate = gate;
	ls->gate_arg = arg;
}

void
verbs_listener_set_conf(struct verbs_listener *ls,
    const struct verbs_link_conf *conf)
{

	ls->conf = *conf;
}

void
verbs_listener_free(struct verbs_listener *ls)
{

	if (ls == NULL)
		return;
	chan_purge(&ls->cm->lch, NULL, ls, request_orphaned);
	TAILQ_REMOVE(&listeners, ls, entry);
	free(ls);
}

/* A connect request at listener ${ls}: through the gate, or refused. */
static void
on_request(struct verbs_listener *ls, const struct sv_event *sev)
{
	struct verbs_link *from = sev->l;
	const struct simverbs_peer *p = peer_at(from->peer);
	const struct sockaddr *psa = (const struct sockaddr *)&from->src;
	struct verbs_request *r;
	struct wire_hello h;
	int werr = wire_hello_decode(sev->data, sev->len, &h);
	char peer[64];
	uint8_t why;

	/* An older rstreamd's verbs layer cannot read a newer hello. */
	if (werr == WIRE_OK && p->speaks != 0 && h.version > p->speaks)
		werr = WIRE_EVERSION;
	addr_text(psa, peer, sizeof(peer));
	if (verbs_gate_ask(ls->gate, ls->gate_arg, psa, peer, werr, &h,
	    &why) != 0) {
		refuse(from, sev->data, why);
		return;
	}
	r = sv_zalloc(sizeof(*r));
	r->cm = ls->cm;
	r->lane = sev->lane;
	r->from = from;
	r->conf = ls->conf;
	r->h = h;
	memcpy(r->peer, peer, sizeof(r->peer));
	memcpy(&r->peer_sa, psa, sizeof(r->peer_sa));
	TAILQ_INSERT_TAIL(&ls->cm->reqs, r, entry);
}

int
verbs_request_lane(const struct verbs_request *r)
{

	return (r->lane);
}

const struct sockaddr *
verbs_request_peer(const struct verbs_request *r, const char **text,
    int *auth)
{

	*text = r->peer;
	*auth = (r->h.flags & (WIRE_HELLO_AUTH | WIRE_HELLO_IDENTITY)) != 0;
	return ((const struct sockaddr *)&r->peer_sa);
}

int
verbs_cm_handle_listen(struct verbs_cm *cm)
{
	struct verbs_request *r, *next;
	struct sv_event *sev;

	if ((sev = chan_pop(&cm->lch)) == NULL)
		return (0);
	if (sev->type == SV_REQUEST) {
		on_request(sev->ls, sev);
	} else {
		/* Requests whose connecting side gave up go. */
		for (r = TAILQ_FIRST(&cm->reqs); r != NULL; r = next) {
			next = TAILQ_NEXT(r, entry);
			if (r->from == NULL)
				request_go(r, -1);
		}
	}
	free(sev);
	return (1);
}

struct verbs_request *
verbs_cm_request(const struct verbs_cm *cm)
{

	return (TAILQ_FIRST(&cm->reqs));
}

void
verbs_request_refuse(struct verbs_request *r, uint8_t why)
{

	request_go(r, why);
}

/*
 * The link lane-1 request ${r} is for, as verbs_lane.c finds it: accepted
 * from the same address, its peer's lane-0 nonce the request's, waiting
 * for lane 1; NULL, with ${*dup} set when such a link has one.
 */
static struct verbs_link *
lane_match(const struct verbs_request *r, int *dup)
{
	struct verbs_link *l;

	*dup = 0;
	TAILQ_FOREACH(l, &r->cm->links, entry) {
		if (l->freed || !l->passive || l->e == NULL ||
		    memcmp(l->peer_hello.nonce, r->h.nonce,
		    WIRE_NONCE_LEN) != 0 || !addr_same(
		    (const struct sockaddr *)&l->src,
		    (const struct sockaddr *)&r->peer_sa, 0))
			continue;
		if (l->lane1 == L1_WAITING)
			return (l);
		*dup = 1;
	}
	return (NULL);
}

/* Lane-1 request ${r}: to its link, accepted there, or refused. */
static void
lane_take(struct verbs_request *r, struct verbs_ev *ev)
{
	struct verbs_link *l, *from = r->from;
	struct wire_hello h = r->h;
	int dup;

	if ((l = lane_match(r, &dup)) == NULL) {
		snprintf(ev->why, sizeof(ev->why), "%s", dup ? "a second "
		    "lane-1 connection for a link that has one" : "a lane-1 "
		    "connection that matches no link waiting for one");
		request_go(r, WIRE_NOTE_REFUSED);
		return;
	}
	request_go(r, -1);
	/* Lane 1's receives, handed out by engine_connected, go up. */
	if (verbs_link_flush(l) == 0)
		check_posted1(l);
	/* The peer's lane-1 hello is checked before it is answered. */
	if (engine_error(l->e) != NULL || engine_lane_up(l->e, &h) != 0) {
		refuse(from, NULL, WIRE_NOTE_REFUSED);
		sv_down(l, ev, engine_error(l->e));
		ev->link = l;
		return;
	}
	lane_hello(l, l->conn->hello1[1]);
	post(&from->cm->ch, SV_ESTABLISHED, from, l->conn->hello1[1],
	    WIRE_HELLO_LEN)->lane = 1;
	l->lane1 = L1_ACCEPTING;
	ev->type = VERBS_EV_NONE;
	ev->link = l;
}

void
verbs_request_take(struct verbs_request *r, struct verbs_ev *ev)
{
	struct verbs_link *l, *from = r->from;
	char err[200];

	memset(ev, 0, sizeof(*ev));
	memcpy(ev->peer, r->peer, sizeof(ev->peer));
	ev->peer_sa = r->peer_sa;
	ev->type = VERBS_EV_REJECTED;
	if (from == NULL) {
		snprintf(ev->why, sizeof(ev->why), "the peer gave up");
		request_go(r, -1);
		return;
	}
	if (r->lane) {
		lane_take(r, ev);
		return;
	}
	l = sv_link_new(r->cm, &r->conf, NULL);
	l->passive = 1;
	l->side = 1;
	l->conn = from->conn;
	l->conn->refs++;
	l->peer_hello = r->h;
	l->src = r->peer_sa;
	snprintf(l->peer, sizeof(l->peer), "%s", r->peer);
	ev->peer_auth = (r->h.flags & WIRE_HELLO_AUTH) != 0;
	ev->peer_ident = (r->h.flags & WIRE_HELLO_IDENTITY) != 0;
	request_go(r, -1);
	if (sv_setup(l, err, sizeof(err)) == 0) {
		l->state = L_INCOMING;
		ev->type = VERBS_EV_INCOMING;
		ev->link = l;
		return;
	}
	snprintf(ev->why, sizeof(ev->why), "%s", err);
	refuse(from, NULL, WIRE_NOTE_REFUSED);
	l->state = L_DOWN;
	verbs_link_free(l);
}

void
verbs_link_set_user(struct verbs_link *l, void *user)
{

	l->user = user;
}
