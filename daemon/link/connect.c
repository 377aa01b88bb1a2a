/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/socket.h>

#include <stdio.h>
#include <string.h>

#include "addr.h"
#include "conf.h"
#include "connect.h"
#include "handshake.h"
#include "hca.h"
#include "link_int.h"
#include "link_timers.h"
#include "log.h"
#include "loop.h"
#include "resolve.h"
#include "rsd.h"
#include "verbs.h"

/* Client links holding a connect slot to peer address ${sa}. */
static unsigned
slots_taken(struct rsd *d, const struct sockaddr *sa)
{
	struct dlink *o;
	unsigned n = 0;

	TAILQ_FOREACH(o, &d->links, entry)
		n += o->slot && addr_same((const struct sockaddr *)&o->dst, sa,
		    1);
	return (n);
}

void
connect_slot_unqueue(struct dlink *dl)
{

	loop_assert_exclusive();
	if (!dl->queued)
		return;
	TAILQ_REMOVE(&dl->d->connq, dl, qentry);
	dl->queued = 0;
}

/* Waiting links whose address has a free slot now take it, in turn. */
static void
slots_kick(struct rsd *d)
{
	struct dlink *o, *next;

	for (o = TAILQ_FIRST(&d->connq); o != NULL; o = next) {
		next = TAILQ_NEXT(o, qentry);
		if (slots_taken(d, (const struct sockaddr *)&o->dst) >=
		    LINK_CONNECT_SLOTS)
			continue;
		connect_slot_unqueue(o);
		o->slot = 1;
		link_timers_attempt_now(o);
	}
}

/* ${dl} is up or down: its slot goes to the next link waiting for one. */
void
connect_slot_release(struct dlink *dl)
{

	if (!dl->slot)
		return;
	dl->slot = 0;
	slots_kick(dl->d);
}

/* Wait for a slot to ${dl->dst}: connecting, as far as clients can tell. */
static void
slot_wait(struct dlink *dl)
{

	loop_assert_exclusive();
	dl->state = D_CONNECTING;
	if (!dl->queued)
		TAILQ_INSERT_TAIL(&dl->d->connq, dl, qentry);
	dl->queued = 1;
}

/*
 * A reject can be forged, and the kernel sends one without a note when a
 * listener goes with requests pending: a step-down is never silent.
 */
const char *
connect_refused(struct dlink *dl, const struct verbs_ev *ev, char *why,
    size_t len)
{
	int resume = dl->c->sz.resume_time > 0;
	unsigned said, v, min = dl->c->sz.min_version;

	dl->busy = ev->peer_busy;
	if (ev->peer_version == 0)
		return (ev->why);
	/* A step-down's own attempt does not step again, and says why. */
	if (dl->att_version != 0) {
		snprintf(why, len, "the peer refused protocol version %u "
		    "too, which it had asked for (a forged reject, or a peer "
		    "that changed); not stepping down twice",
		    wire_version_said(dl->att_version, resume));
		return (why);
	}
	said = wire_version_said(dl->d->conf->max_version, resume);
	v = wire_version_said((unsigned)ev->peer_version, resume);
	/* Below version 11 an iWARP link could carry nothing. */
	if (v < WIRE_VERSION_NOTIFY && dl->vl != NULL &&
	    verbs_link_iwarp(dl->vl)) {
		dl->d->stepdowns_refused++;
		snprintf(why, len, "the peer refused protocol version %u and "
		    "speaks %d at most (an older rstreamd, or a forged "
		    "reject); not stepping down: this iWARP device has no "
		    "immediate data, which links below version %u need", said,
		    ev->peer_version, WIRE_VERSION_NOTIFY);
		return (why);
	}
	if (v < min) {
		dl->d->stepdowns_refused++;
		snprintf(why, len, "the peer refused protocol version %u and "
		    "speaks %d at most (an older rstreamd, or a forged "
		    "reject); not stepping down below min_version %u", said,
		    ev->peer_version, min);
		return (why);
	}
	dl->d->stepdowns++;
	dl->step_version = (uint8_t)v;
	LLOG(LOG_WARNING, dl, "%s: the peer refused protocol version %u (an "
	    "older rstreamd, or a forged reject); trying that address once "
	    "more with version %u (min_version %u)", dl->name, said, v, min);
	return (ev->why);
}

static void
qos_line(void *arg, const char *msg)
{

	(void)arg;
	log_warn("%s", msg);
}

void
connect_device(struct dlink *dl, const struct verbs_ev *ev)
{
	char on[200];

	if (dl->c == NULL || dl->qos_warned)
		return;
	snprintf(on, sizeof(on), "the device of its link to %s, %s,",
	    ev->peer, ev->device);
	if (conf_qos_warn(dl->c, !(ev->qos & HCA_QOS_TOS),
	    !(ev->qos & HCA_QOS_SL), on, qos_line, NULL) > 0)
		dl->qos_warned = 1;
}

int
connect_too_old(struct dlink *dl, unsigned version, char *why, size_t len)
{

	if (version >= dl->c->sz.min_version)
		return (0);
	dl->d->stepdowns_refused++;
	snprintf(why, len, "the peer answered in protocol version %u, below "
	    "min_version %u", version, (unsigned)dl->c->sz.min_version);
	return (1);
}

/*
 * A client link's attempt was refused, but not failed: a step-down goes
 * to the same address at once; a busy peer (see LINK_CONNECT_SLOTS) is
 * asked again when one of this daemon's links connecting to it is up,
 * or after the back-off if none is.  Its clients wait meanwhile.  Any
 * other end is a failure, and forgets the step-down.
 */
int
connect_again(struct dlink *dl)
{

	if (link_stays_down(dl) || (dl->step_version == 0 && !dl->busy)) {
		dl->step_version = 0;
		dl->busy = 0;
		return (0);
	}
	dl->state = D_CONNECTING;
	if (dl->step_version != 0) {
		dl->busy = 0;
		link_timers_attempt_now(dl);
		return (1);
	}
	dl->busy = 0;
	LLOG(LOG_INFO, dl, "%s: the peer has too many links from here "
	    "connecting; trying again when one is up", dl->name);
	if (slots_taken(dl->d, (const struct sockaddr *)&dl->dst) > 0) {
		slot_wait(dl);
		return (1);
	}
	link_timers_attempt_later(dl);
	return (1);
}

static void
attempt_conf(const struct conf *cf, const struct conf_sizes *sz,
    struct verbs_link_conf *lc)
{

	memset(lc, 0, sizeof(*lc));
	lc->sq_size = sz->sq_size;
	lc->rq_size = sz->rq_size;
	lc->inline_size = sz->inline_size;
	lc->max_streams = sz->max_streams;
	lc->ack_timeout = (uint8_t)cf->ack_timeout;
	lc->retry_count = (uint8_t)cf->retry_count;
	lc->pool_bytes = cf->ring_pool;
	lc->resume = sz->resume_time > 0;
	lc->version_max = cf->max_version < WIRE_VERSION ?
	    (uint8_t)cf->max_version : 0;
	lc->tos_set = sz->traffic_class != CONF_UNSET;
	lc->tos = (uint8_t)sz->traffic_class;
	lc->sl_set = sz->service_level != CONF_UNSET;
	lc->sl = (uint8_t)sz->service_level;
}

static void
on_peer_resolved(void *arg)
{

	connect_next(arg);
}

/*
 * The address of this attempt: the next of entry ${pi}'s addresses ${dst}
 * (of the source address's family, if there is one), or the one the last
 * attempt went to (a step-down).  Its index, or -1 if there is none.
 * Each entry keeps its own place: entries of different address counts
 * taking turns must not skip one another's addresses.
 */
static long
pick_addr(struct dlink *dl, unsigned pi, const struct resolve_addrs *dst,
    const struct resolve_addrs *src, int again)
{
	const struct sockaddr *sa;
	size_t i, k;

	for (k = 0; k < dst->n; k++) {
		i = ((again ? dl->att_ai : dl->next_addr[pi]) + k) % dst->n;
		sa = (const struct sockaddr *)&dst->a[i];
		if (src == NULL || sa->sa_family ==
		    ((const struct sockaddr *)&src->a[0])->sa_family)
			return ((long)i);
	}
	return (-1);
}

/* This attempt cannot start: the next one goes to the next peer entry. */
static void
connect_failed(struct dlink *dl, const char *why)
{

	dl->step_version = 0;
	dl->next_peer++;
	link_fail(dl, why);
}

/*
 * Where this attempt of client link ${dl} to peer entry ${pi} goes, once
 * the names are resolved: the index of its address in ${*dst}, and the
 * source address in ${*src} (NULL: any).  -1 when it cannot start now:
 * it waits for the peer's name, or it failed (the link is down).
 */
static long
connect_where(struct dlink *dl, unsigned pi, int again,
    const struct resolve_addrs **dst, const struct resolve_addrs **src)
{
	const char *why;
	long i;

	*src = NULL;
	switch (rname_get(dl->peer_rn[pi], dst, &why)) {
	case 0:
		rname_wait(dl->peer_rn[pi], &dl->rw, on_peer_resolved, dl);
		return (-1);
	case -1:
		connect_failed(dl, why);
		return (-1);
	}
	if (dl->src_rn != NULL && rname_get(dl->src_rn, src, &why) != 1) {
		connect_failed(dl, "the source address is unusable");
		return (-1);
	}
	if ((i = pick_addr(dl, pi, *dst, *src, again)) < 0)
		connect_failed(dl, "the peer has no address of the source "
		    "address's family");
	return (i);
}

/* The attempt: connect to ${sa}, from ${src} (NULL: any address). */
static void
connect_start(struct dlink *dl, const struct sockaddr *sa,
    const struct sockaddr *src)
{
	const struct conf_tunnel *c = dl->c;
	struct verbs_link_conf lc;
	char err[256], to[80];
	int auth = c->key.set || dl->d->conf->identity.set;

	attempt_conf(dl->d->conf, &c->sz, &lc);
	/* A step-down's attempt: older than max_version. */
	if (dl->att_version != 0)
		lc.version_max = dl->att_version;
	if (auth)
		handshake_init(dl, 1, c->key.set, 1);
	link_hooks(dl, auth, NULL, &lc);
	if (log_level() >= LOG_DEBUG) {
		addr_text(sa, to, sizeof(to));
		LLOG(LOG_DEBUG, dl, "%s: connecting to %s", dl->name, to);
	}
	dl->vl = verbs_connect(dl->d->cm, sa, src, &lc, dl, err, sizeof(err));
	if (dl->vl == NULL) {
		link_fail(dl, err);
		return;
	}
	/*
	 * The CM would retry a connect request lost on a dark path for a
	 * minute or more, its streams suspended meanwhile: a fresh attempt
	 * after handshake_timeout finds a path that came back sooner.
	 */
	link_timers_connecting(dl);
}

/*
 * Connect to the peer's next address (every one is tried in turn, one per
 * attempt), once its name is resolved and one of the connect slots to
 * that address is free.  Nothing starts while the daemon or the tunnel
 * drains: a retry that comes due then does nothing.
 */
void
connect_next(struct dlink *dl)
{
	const struct conf_tunnel *c = dl->c;
	const struct resolve_addrs *dst, *src;
	const struct sockaddr *sa;
	int again = dl->step_version != 0;
	unsigned pi;
	long i;

	/* One that failed tries again once its flush job took it down. */
	if (link_stays_down(dl) || dl->failing)
		return;
	dl->state = D_CONNECTING;	/* if it fails, link_down reschedules */
	/* Each attempt to the next peer entry (one per path, say). */
	pi = again ? dl->att_pi : dl->next_peer % c->npeers;
	if (c->npeers > 1)
		connect_naming(dl, &c->peers[pi]);
	if ((i = connect_where(dl, pi, again, &dst, &src)) < 0)
		return;
	sa = (const struct sockaddr *)&dst->a[i];
	memcpy(&dl->dst, sa, sizeof(dst->a[i]));
	if (!dl->slot && slots_taken(dl->d, sa) >= LINK_CONNECT_SLOTS) {
		slot_wait(dl);
		return;
	}
	dl->slot = 1;
	/* This is the attempt: the next one goes on from here. */
	if (!again) {
		dl->next_peer++;
		dl->next_addr[pi] = (unsigned)i + 1;
	}
	dl->att_pi = pi;
	dl->att_ai = (unsigned)i;
	dl->att_version = dl->step_version;
	dl->step_version = 0;
	connect_start(dl, sa, src != NULL ?
	    (const struct sockaddr *)&src->a[0] : NULL);
}

/* A client link's peer and name, for the peer entry it tries. */
void
connect_naming(struct dlink *dl, const struct conf_addr *peer)
{

	/* Always HOST:PORT, however the configuration spelt it. */
	snprintf(dl->peer, sizeof(dl->peer), strchr(peer->host, ':') ?
	    "[%s]:%s" : "%s:%s", peer->host, peer->port);
	snprintf(dl->name, sizeof(dl->name), "tunnel %s: link to %s",
	    dl->c->name, dl->peer);
	dl->name_len = 0;
}