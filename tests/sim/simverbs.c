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
 *   connecting side gave up goes from the listener's queue.  A link of
 *   two lanes (engine_lanes) connects its lane 1 as a second connection,
 *   as verbs_lane.c does (simverbs_lane.c), its traffic on lane 1 of the
 *   link's fabric; the link is UP once both lanes are.
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
 *   drains, leaving it unarmed, as the real one does.  As the real link's
 *   two completion queues, a receive's completion raises it, but a work
 *   request's, or an error, only if the arm included the WRs' queue (the
 *   engine waited on them: engine_sends_quiet).  Nothing posted to
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

/* Each CM a number of its own, for its default source address. */
static unsigned ncms;

/* --------------------------------------- links: made, set up, freed */

const char *
verbs_link_device(const struct verbs_link *l)
{

	return (l->device);
}

int
verbs_link_iwarp(const struct verbs_link *l)
{

	return (l->iwarp);
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
		sv_reject_to(o, 28, NULL);
	else if (l->state == L_UP || l->state == L_ACCEPTING ||
	    l->state == L_CONNECTING)
		sv_post(&o->cm->ch, SV_DISCONNECTED, o, NULL, 0);
}

void
verbs_link_free(struct verbs_link *l)
{
	struct simverbs_attempt *a;

	if (l == NULL)
		return;
	/* Its id goes: no event for it after this. */
	if (l->cm->ch.fd >= 0)
		sv_chan_purge(&l->cm->ch, l, NULL, NULL);
	if (!l->passive)
		sv_requests_abandon(l);
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
	if ((a = sv_att_of(l)) != NULL)
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

/* Connecting link ${l}'s route is known: queues, a hello, the request. */
static void
on_resolved(struct verbs_link *l, struct verbs_ev *ev)
{
	struct simverbs_attempt *a = sv_att_of(l);
	const struct simverbs_peer *p = sv_peer_at(l->peer);
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
	sv_check_posted(l);
	l->state = L_CONNECTING;
	if (a != NULL)
		a->version = l->conn->hello[0][4];
	if (p->dark) {
		if (a != NULL)
			a->outcome = SIMVERBS_DARK;
		return;
	}
	if ((ls = sv_listener_at((const struct sockaddr *)&l->dst)) == NULL) {
		sv_reject_to(l, 8, NULL);
		return;
	}
	req = sv_post(&ls->cm->lch, SV_REQUEST, l, l->conn->hello[0],
	    WIRE_HELLO_LEN);
	req->ls = ls;
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
	struct simverbs_attempt *a = sv_att_of(l);
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
			sv_post(&o->cm->ch, SV_ESTABLISHED, o, NULL, 0);
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
	l->hca.inline_size = l->conf.inline_size;	/* it takes any */
	l->hca.qpn = l->qpn;
	o = l->conn->end[1 - l->side];
	l->hca.peer_qpn = o != NULL ? o->qpn : 0;
	l->have_hca = 1;
	if (!l->passive && engine_error(l->e) == NULL &&
	    engine_lanes(l->e) > 1) {
		/* Its second connection resolves in one event too. */
		l->lane1 = L1_RESOLVING;
		sv_post(&l->cm->ch, SV_RESOLVED, l, NULL, 0)->lane = 1;
		return;
	}
	if (l->lane1 != L1_NONE && l->lane1 != L1_UP)
		return;
	sv_up_event(l, ev);
}

const struct hca_info *
verbs_link_hca(const struct verbs_link *l)
{

	return (l->have_hca ? &l->hca : NULL);
}

enum verbs_wc_error
verbs_link_wc_error(const struct verbs_link *l)
{

	return (l->wc_error);
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
		sin->sin_port = htons(sv_next_port());
	sv_att_new(l);
	l->state = L_RESOLVING;
	sv_post(&cm->ch, SV_RESOLVED, l, NULL, 0);
	return (l);
}

void
verbs_reject(struct verbs_link *l)
{

	if (l->state == L_INCOMING)
		sv_refuse(l->conn->end[0], NULL, WIRE_NOTE_REFUSED);
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
	p = sv_peer_at(from != NULL ? from->peer : "");
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
		sv_refuse(from, NULL, WIRE_NOTE_REFUSED);
		l->state = L_DOWN;
		return (-1);
	}
	l->conn->have[1] = 1;
	sv_check_posted(l);
	sv_post(&from->cm->ch, SV_ESTABLISHED, from, l->conn->hello[1],
	    WIRE_HELLO_LEN);
	if ((a = sv_att_of(from)) != NULL)
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

	TAILQ_FOREACH(cm, &sv_cms, entry) {
		TAILQ_FOREACH(l, &cm->links, entry) {
			if ((c = l->conn) == NULL || c->cut || l->passive ||
			    strcmp(l->peer, addr) != 0)
				continue;
			c->cut = 1;
			if (fab_break(&c->f, none) != 0)
				sv_error("%s", c->f.err);
			for (i = 0; i < 2; i++)
				if (c->end[i] != NULL)
					sv_wc_error(c->end[i], VERBS_WC_RETRY,
					    "work request failed: transport "
					    "retry counter exceeded");
			n++;
		}
	}
	return (n);
}

void
simverbs_iwarp(int on)
{

	sv_iwarp = on;
}

int
simverbs_overwrite(const char *addr, int side)
{
	struct verbs_cm *cm;
	struct verbs_link *l;
	struct sv_conn *c;
	int n = 0;

	TAILQ_FOREACH(cm, &sv_cms, entry) {
		TAILQ_FOREACH(l, &cm->links, entry) {
			if ((c = l->conn) == NULL || c->cut || l->passive ||
			    strcmp(l->peer, addr) != 0)
				continue;
			c->f.side[side ? 1 : 0].overwrite = 16;
			n++;
		}
	}
	return (n);
}

uint64_t
simverbs_raises(const char *addr, int side)
{
	struct verbs_cm *cm;
	struct verbs_link *l;
	uint64_t n = 0;

	TAILQ_FOREACH(cm, &sv_cms, entry)
		TAILQ_FOREACH(l, &cm->links, entry)
			if (l->conn != NULL && !l->passive &&
			    strcmp(l->peer, addr) == 0 &&
			    l->conn->end[side ? 1 : 0] != NULL)
				n += l->conn->end[side ? 1 : 0]->raises;
	return (n);
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
	TAILQ_INSERT_TAIL(&sv_cms, cm, entry);
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
			sv_request_orphaned(ev);
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
	TAILQ_REMOVE(&sv_cms, cm, entry);
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
	if ((sev = sv_chan_pop(&cm->ch)) == NULL)
		return (0);
	l = sev->l;
	ev->link = l;
	snprintf(ev->peer, sizeof(ev->peer), "%s", l->peer);
	/* The links' channel carries nothing else. */
	if (sev->lane) {
		sv_lane_event(l, sev, ev);
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

/* ------------------------------------- sv_listeners and their requests */

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
	if (sv_listener_at(ai->ai_addr) != NULL) {
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
	TAILQ_INSERT_TAIL(&sv_listeners, ls, entry);
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
	sv_chan_purge(&ls->cm->lch, NULL, ls, sv_request_orphaned);
	TAILQ_REMOVE(&sv_listeners, ls, entry);
	free(ls);
}

/* A connect request at listener ${ls}: through the gate, or refused. */
static void
on_request(struct verbs_listener *ls, const struct sv_event *sev)
{
	struct verbs_link *from = sev->l;
	const struct simverbs_peer *p = sv_peer_at(from->peer);
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
		sv_refuse(from, sev->data, why);
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

	if ((sev = sv_chan_pop(&cm->lch)) == NULL)
		return (0);
	if (sev->type == SV_REQUEST) {
		on_request(sev->ls, sev);
	} else {
		/* Requests whose connecting side gave up go. */
		for (r = TAILQ_FIRST(&cm->reqs); r != NULL; r = next) {
			next = TAILQ_NEXT(r, entry);
			if (r->from == NULL)
				sv_request_go(r, -1);
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

	sv_request_go(r, why);
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
		sv_request_go(r, -1);
		return;
	}
	if (r->lane) {
		sv_lane_take(r, ev);
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
	sv_request_go(r, -1);
	if (sv_setup(l, err, sizeof(err)) == 0) {
		l->state = L_INCOMING;
		ev->type = VERBS_EV_INCOMING;
		ev->link = l;
		return;
	}
	snprintf(ev->why, sizeof(ev->why), "%s", err);
	sv_refuse(from, NULL, WIRE_NOTE_REFUSED);
	l->state = L_DOWN;
	verbs_link_free(l);
}

void
verbs_link_set_user(struct verbs_link *l, void *user)
{

	l->user = user;
}
