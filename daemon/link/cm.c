/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "admit.h"
#include "cm.h"
#include "conf.h"
#include "connect.h"
#include "engine.h"
#include "handshake.h"
#include "link.h"
#include "link_int.h"
#include "link_timers.h"
#include "log.h"
#include "loop.h"
#include "rsd.h"
#include "secmem.h"
#include "verbs.h"

struct cm_listen_plan {
	size_t n;
	struct verbs_listener **lsn;	/* becomes d->lsn at the commit */
	struct cm_wait *wait;		/* becomes d->lsn_wait */
	struct {
		struct verbs_listener *l;
		size_t from;		/* taken over from d->lsn[from] */
	} nl[];
};

#define NEW_LISTENER	((size_t)-1)

/* How long an RDMA CM channel rests after an error it keeps returning. */
#define CM_PAUSE_MS	1000

static void cm_event(struct rsd *, const struct verbs_ev *);

/* ------------------------------------------------------ incoming links */

/*
 * Ask admit.c about a new link from ${peer}: what it needs to know of the
 * links there are, then (if ${act}: in an exclusive turn) act on the
 * answer, closing a link that makes room.  Returns ADMIT_OK or the limit
 * in the way, with its value.  Links change only in exclusive turns, so
 * the list may be read in any turn of the daemon's loop.
 */
static enum admit_refusal
incoming_limit(struct rsd *d, const struct sockaddr *peer, int auth, int act,
    uint32_t *value)
{
	const struct conf *c = d->conf;
	struct admit_limits lim = { c->max_links, c->max_pending,
	    c->max_pending_per_addr, c->max_unauth_links,
	    (uint64_t)c->link_idle_timeout * 1000 };
	struct admit_link *al;
	struct dlink *dl, **who;
	enum admit_refusal why, room;
	uint64_t now = loop_now_ms();
	size_t n = 0, victim;
	char msg[160];

	TAILQ_FOREACH(dl, &d->links, entry)
		n++;
	if ((al = calloc(n + 1, sizeof(*al))) == NULL ||
	    (who = calloc(n + 1, sizeof(*who))) == NULL) {
		free(al);
		*value = 0;
		return (ADMIT_MAX_PENDING);
	}
	n = 0;
	TAILQ_FOREACH(dl, &d->links, entry) {
		if (dl->c != NULL || dl->state == D_DEAD)
			continue;
		/* One that failed (link_fail) counts as what its flush job
		 * makes of it: suspended if it keeps streams, else gone. */
		if (dl->failing && dl->old == NULL)
			continue;
		who[n] = dl;
		al[n].pending = !dl->failing && (dl->state == D_CONNECTING ||
		    dl->state == D_AUTH);
		al[n].same_addr = peer != NULL && addr_same(
		    (const struct sockaddr *)&dl->peer_sa, peer, 0);
		al[n].unauth = !dl->auth;
		al[n].idle_since = !dl->failing && dl->state == D_UP ?
		    __atomic_load_n(&dl->idle_since, __ATOMIC_RELAXED) : 0;
		n++;
	}
	why = admit_link(&lim, al, n, auth, now, &victim, &room, value);
	if (why == ADMIT_OK && victim != ADMIT_NONE && act) {
		dl = who[victim];
		snprintf(msg, sizeof(msg), "closed after %llu s without a "
		    "stream, to make room for a new link (%s reached)",
		    (unsigned long long)((now - dl->idle_since) / 1000),
		    admit_setting(room));
		d->links_evicted++;
		LLOG(LOG_NOTICE, dl, "%s %s", dl->name, msg);
		link_fail(dl, msg);
	}
	free(al);
	free(who);
	return (why);
}

/* Turn a connect request away: count it (the gate runs in shared turns:
 * atomic), say it once per burst. */
static int __attribute__((format(printf, 4, 5)))
reject(const char *peer, uint64_t *count, struct log_burst *b,
    const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	(void)__atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_burst_about(b, loop_now_ms(), LOG_WARNING,
	    &(struct log_about){ NULL, 0, peer }, "link from %s rejected: %s",
	    peer, msg);
	return (-1);
}

/* Whether some target tunnel has a key, and whether some has none. */
static void
keys_here(const struct conf *c, int *keyed, int *open)
{
	size_t i;

	*keyed = c->key.set;
	*open = 0;
	for (i = 0; i < c->ntunnels; i++) {
		if (!c->tunnels[i].has_target)
			continue;
		*keyed |= c->tunnels[i].key.set;
		/* With an identity, a tunnel without a key wants one. */
		*open |= !c->tunnels[i].key.set && !c->identity.set;
	}
}

/* The rate limiter's key for ${sa}: its address, IPv4 as v4-mapped. */
static void
rate_key(const struct sockaddr *sa, uint8_t key[ADMIT_KEY_LEN])
{
	const struct sockaddr_in *in = (const void *)sa;
	const struct sockaddr_in6 *in6 = (const void *)sa;

	memset(key, 0, ADMIT_KEY_LEN);
	if (sa != NULL && sa->sa_family == AF_INET) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &in->sin_addr, 4);
	} else if (sa != NULL && sa->sa_family == AF_INET6) {
		memcpy(key, &in6->sin6_addr, ADMIT_KEY_LEN);
	}
}

/* Refuse a request the limits turn away; a pending limit may be waited
 * out (the peer asks again when one of its links is up). */
static int
refuse_limited(struct rsd *d, const char *peer_text, enum admit_refusal why,
    uint32_t value, uint8_t *note)
{

	if (why == ADMIT_MAX_PENDING || why == ADMIT_MAX_PENDING_PER_ADDR)
		*note = WIRE_NOTE_BUSY;
	return (reject(peer_text, &d->links_rejected, &d->refusal_log[why],
	    "%s %u reached", admit_setting(why), (unsigned)value));
}

/*
 * The RDMA listeners' gate (see verbs_gate_fn): a connect request is
 * checked before anything is made for it, what costs the peer nothing
 * first: its address's rate, allow, its hello, the keys, then the limits
 * (admit.h), which on_take asks again, in an exclusive turn, before the
 * link is made.  It runs in the daemon's loop alongside the workers: it
 * reads the configuration and the links and changes nothing but the rate
 * limiter (the daemon's loop's), and the counts and log bursts of
 * refusals (atomic; see Threads in loop.h).
 */
static int
gate(void *arg, const struct sockaddr *peer, const char *peer_text,
    const struct wire_hello *hello, const char *invalid, uint8_t *note)
{
	struct rsd *d = arg;
	const struct conf *c = d->conf;
	enum admit_refusal why;
	uint8_t key[ADMIT_KEY_LEN];
	uint32_t value;
	int keyed, open, auth, ident;

	if (d->stop)
		return (-1);
	rate_key(peer, key);
	if (!admit_rate_take(d->rate, key, c->max_connect_rate,
	    loop_now_ms())) {
		*note = WIRE_NOTE_BUSY;
		return (reject(peer_text, &d->links_rejected,
		    &d->refusal_log[ADMIT_RATE], "more than max_connect_rate "
		    "%u connect requests a second from it",
		    (unsigned)c->max_connect_rate));
	}
	if (c->nallow > 0 && (peer == NULL ||
	    !conf_net_match(c->allow, c->nallow, peer)))
		return (reject(peer_text, &d->links_rejected,
		    &d->refusal_log[ADMIT_NOT_ALLOWED], "not in allow"));
	if (hello == NULL)
		return (reject(peer_text, &d->links_rejected,
		    &d->refusal_log[ADMIT_BAD_HELLO],
		    "invalid connect data: %s", invalid));
	/*
	 * A link's lane 1 (verbs_request_lane): its link was let in and is
	 * counted; it proves nothing itself.  on_take finds its link by its
	 * nonce and address, or refuses it.
	 */
	if (hello->flags & WIRE_HELLO_LANE1)
		return (0);
	/* Say at once what cannot work; the proofs come after connecting. */
	auth = (hello->flags & WIRE_HELLO_AUTH) != 0;
	ident = (hello->flags & WIRE_HELLO_IDENTITY) != 0;
	keys_here(c, &keyed, &open);
	if (ident && !c->identity.set)
		return (reject(peer_text, &d->auth_failures, &d->auth_log,
		    "it has an identity, but no identity_file is configured "
		    "here"));
	if (auth && !keyed)
		return (reject(peer_text, &d->auth_failures, &d->auth_log,
		    "it authenticates, but no key_file is configured here"));
	if (!auth && !ident && !open)
		return (reject(peer_text, &d->auth_failures, &d->auth_log,
		    "it does not authenticate, and every tunnel here needs a "
		    "key_file or an identity"));
	if ((why = incoming_limit(d, peer, auth || ident, 0, &value)) !=
	    ADMIT_OK)
		return (refuse_limited(d, peer_text, why, value, note));
	return (0);
}

/*
 * An RDMA CM channel failed (errno says how): it rests, as it is
 * level-triggered and retrying at once would spin.
 */
static void
cm_failed(struct rsd *d, struct loop_fd *w, const char *which)
{

	log_burst_about(&d->cm_log, loop_now_ms(), LOG_ERR, NULL, "the RDMA "
	    "CM %s failed: %s; retrying every %d ms", which, strerror(errno),
	    CM_PAUSE_MS);
	loop_fd_pause(w, CM_PAUSE_MS);
}

/* Connect requests wait for on_take: the next turn, exclusive. */
static void
on_listen(void *arg, uint32_t events)
{
	struct rsd *d = arg;
	int k, rc;

	(void)events;
	for (k = 0; k < 64; k++) {
		if ((rc = verbs_cm_handle_listen(d->cm)) < 0)
			cm_failed(d, d->lcm_w, "listeners' channel");
		if (rc <= 0)
			break;
	}
	if (verbs_cm_request(d->cm) != NULL)
		loop_job_defer(&d->take);
}

/* The requests the gate let through: the limits again, then a link. */
static void
on_take(void *arg)
{
	struct rsd *d = arg;
	struct verbs_request *r;
	const struct sockaddr *peer;
	struct verbs_ev ev;
	enum admit_refusal why;
	const char *text;
	uint32_t value;
	uint8_t note;
	int auth;

	while ((r = verbs_cm_request(d->cm)) != NULL) {
		peer = verbs_request_peer(r, &text, &auth);
		note = WIRE_NOTE_REFUSED;
		if (d->stop || d->draining) {
			verbs_request_refuse(r, note);
			continue;
		}
		if (verbs_request_lane(r)) {
			verbs_request_take(r, &ev);
			if (ev.type == VERBS_EV_REJECTED)
				(void)__atomic_fetch_add(&d->links_rejected,
				    1, __ATOMIC_RELAXED);
			cm_event(d, &ev);
			continue;
		}
		if ((why = incoming_limit(d, peer, auth, 1, &value)) !=
		    ADMIT_OK) {
			(void)refuse_limited(d, text, why, value, &note);
			verbs_request_refuse(r, note);
			continue;
		}
		verbs_request_take(r, &ev);
		cm_event(d, &ev);
	}
}

/* A connect request let through becomes an incoming link, accepted. */
static void
incoming_new(struct rsd *d, const struct verbs_ev *ev)
{
	struct dlink *dl;
	int auth = ev->peer_auth || ev->peer_ident;

	/* The gate let it through; things may have changed since. */
	if (d->stop || (dl = link_alloc(d, d->in_ops, d->in_arg)) == NULL) {
		verbs_reject(ev->link);
		verbs_link_free(ev->link);
		return;
	}
	dl->vl = ev->link;
	dl->peer_sa = ev->peer_sa;
	dl->auth = auth;
	snprintf(dl->peer, sizeof(dl->peer), "%s", ev->peer);
	snprintf(dl->name, sizeof(dl->name), "link from %s", ev->peer);
	verbs_link_set_user(dl->vl, dl);
	if (auth)
		handshake_init(dl, 0, ev->peer_auth, ev->peer_ident);
	link_hooks(dl, auth, verbs_link_engine(dl->vl), NULL);
	if (link_watch_cq(dl) || verbs_accept(dl->vl)) {
		LLOG(LOG_ERR, dl, "%s: cannot accept", dl->name);
		loop_fd_del(dl->cqw);
		verbs_link_free(dl->vl);
		handshake_forget(dl);
		secmem_free(dl);
		return;
	}
	dl->state = D_CONNECTING;
	link_list_add(dl);
	link_timers_connecting(dl);
	/* Message 1 may come before ESTABLISHED: a shared turn answers. */
	link_share(dl);
	LLOG(LOG_INFO, dl, "%s accepted (device %s, %s)", dl->name,
	    verbs_link_device(dl->vl), ev->peer_ident ? "identifying" :
	    ev->peer_auth ? "authenticating" : "not authenticated");
}

static void
cm_event(struct rsd *d, const struct verbs_ev *ev)
{
	struct dlink *dl;
	char why[400];

	switch (ev->type) {
	case VERBS_EV_INCOMING:
		incoming_new(d, ev);
		return;
	case VERBS_EV_REJECTED:
		log_burst_about(&d->reject_log, loop_now_ms(), LOG_WARNING,
		    &(struct log_about){ NULL, 0, ev->peer }, "link from %s "
		    "rejected: %s", ev->peer, ev->why);
		return;
	case VERBS_EV_UP:
		if ((dl = verbs_link_user(ev->link)) != NULL)
			link_up(dl);
		return;
	case VERBS_EV_DEVICE:
		if ((dl = verbs_link_user(ev->link)) != NULL)
			connect_device(dl, ev);
		return;
	case VERBS_EV_DOWN:
		dl = verbs_link_user(ev->link);
		/* One that failed already goes for that reason. */
		if (dl == NULL || dl->vl != ev->link || dl->failing)
			return;
		link_fail(dl, dl->c != NULL ? connect_refused(dl, ev, why,
		    sizeof(why)) : ev->why);
		return;
	default:
		return;
	}
}


static void
on_cm(void *arg, uint32_t events)
{
	struct rsd *d = arg;
	struct verbs_ev ev;
	int k, rc;

	(void)events;
	for (k = 0; k < 64; k++) {
		if ((rc = verbs_cm_handle(d->cm, &ev)) < 0)
			cm_failed(d, d->cm_w, "event channel");
		if (rc <= 0)
			return;
		cm_event(d, &ev);
	}
}

/* ------------------------------------------------ RDMA not there yet */

/*
 * A daemon waiting for RDMA looks every CM_LOOK_MS (one stat of
 * /dev/infiniband, see verbs_cm_moved) and tries again at once when it
 * changed, else after a back-off of CM_RETRY_MIN_MS doubling to
 * CM_RETRY_MAX_MS (an address added to a device's interface changes no
 * file).
 */
#define CM_LOOK_MS		1000
#define CM_RETRY_MIN_MS		1000
#define CM_RETRY_MAX_MS		8000

/* Why a listener does not listen (yet). */
enum cm_wait_kind {
	WAIT_NONE = 0,		/* it listens */
	WAIT_CM,		/* the RDMA CM is not open (rsd.rdma says why) */
	WAIT_DEVICE,		/* no RDMA device has its address */
	WAIT_ERROR		/* anything else (said in why) */
};

struct cm_wait {
	enum cm_wait_kind kind;
	char why[400];		/* what was said about it */
};

/* What cm_rdma says when the RDMA CM's state does not. */
enum cm_rdma_extra { EXTRA_UNUSED, EXTRA_LISTEN, EXTRA_N };
static const char *const extra_names[EXTRA_N] = {
	[EXTRA_UNUSED] = "unused",
	[EXTRA_LISTEN] = "listener-waiting"
};

/* Whether ${c} needs RDMA: a client tunnel's link, or a listener. */
static int
needs_rdma(const struct conf *c)
{
	size_t i;

	for (i = 0; i < c->ntunnels; i++)
		if (c->tunnels[i].has_accept || (c->tunnels[i].has_target &&
		    c->nlisten > 0))
			return (1);
	return (0);
}

/* The first listener that waits, and how many do, or NULL. */
static const struct cm_wait *
waiting(const struct rsd *d, size_t *n)
{
	const struct cm_wait *first = NULL;
	size_t i;

	*n = 0;
	for (i = 0; i < d->nlsn; i++) {
		if (d->lsn_wait == NULL || d->lsn_wait[i].kind == WAIT_NONE)
			continue;
		if ((*n)++ == 0)
			first = &d->lsn_wait[i];
	}
	return (first);
}

/* Try again later: the back-off, and the looks until then. */
static void
rdma_wait(struct rsd *d)
{

	d->rdma_next_ms = loop_now_ms() + d->rdma_backoff_ms;
	d->rdma_backoff_ms = d->rdma_backoff_ms * 2 > CM_RETRY_MAX_MS ?
	    CM_RETRY_MAX_MS : d->rdma_backoff_ms * 2;
	if (!loop_timer_armed(&d->rdma_timer))
		loop_timer_arm(&d->rdma_timer, CM_LOOK_MS);
}

/* The RDMA CM's channels into the loop, once. */
static int
rdma_watch(struct rsd *d)
{

	if (d->cm_w == NULL && (d->cm_w = loop_fd_add(d->lp,
	    verbs_cm_fd(d->cm), EPOLLIN, on_cm, d)) == NULL)
		return (-1);
	if (d->lcm_w == NULL) {
		if ((d->lcm_w = loop_fd_add(d->lp, verbs_cm_listen_fd(d->cm),
		    EPOLLIN, on_listen, d)) == NULL)
			return (-1);
		/* Anyone can send connect requests: they stop no worker. */
		loop_fd_share(d->lcm_w, 1);
	}
	return (0);
}

/*
 * Open the RDMA CM, if it is not open.  Said once when it cannot be,
 * once more whenever what is missing changes, and once when it came:
 * then client links waiting out a back-off try at once.  0 once open.
 */
static int
rdma_open(struct rsd *d)
{
	char why[sizeof(d->rdma_why)];
	enum verbs_rdma r;
	struct dlink *dl;
	int was = d->rdma;

	if (verbs_cm_is_open(d->cm) && d->cm_w != NULL && d->lcm_w != NULL)
		return (0);
	r = verbs_cm_open(d->cm, why, sizeof(why));
	if (r == VERBS_RDMA_READY && rdma_watch(d) != 0) {
		r = VERBS_RDMA_FAILED;
		snprintf(why, sizeof(why), "cannot watch the RDMA CM "
		    "channels: %s", strerror(errno));
	}
	if (r != VERBS_RDMA_READY) {
		if ((int)r != was || strcmp(why, d->rdma_why) != 0)
			log_warn("no RDMA yet: %s; links and RDMA listeners "
			    "start by themselves once it is there", why);
		else
			log_debug("still no RDMA: %s", verbs_rdma_name(r));
		d->rdma = (int)r;
		snprintf(d->rdma_why, sizeof(d->rdma_why), "%s", why);
		rdma_wait(d);
		return (-1);
	}
	d->rdma = VERBS_RDMA_READY;
	d->rdma_why[0] = '\0';
	if (was == -1 || was == VERBS_RDMA_READY)
		return (0);
	log_notice("RDMA is there: the RDMA CM is open");
	TAILQ_FOREACH(dl, &d->links, entry)
		if (dl->c != NULL)
			link_timers_rdma_ready(dl);
	return (0);
}

/*
 * Why listener ${w} waits is now ${kind} (${why}): said when that
 * changed (the RDMA CM's absence is said once for all, by rdma_open).
 */
static void
wait_set(struct cm_wait *w, enum cm_wait_kind kind, const char *why)
{

	if (kind == w->kind && strcmp(why, w->why) == 0) {
		if (kind == WAIT_DEVICE || kind == WAIT_ERROR)
			log_debug("still: %s", why);
		return;
	}
	w->kind = kind;
	snprintf(w->why, sizeof(w->why), "%s", why);
	if (kind == WAIT_DEVICE)
		log_warn("%s; listening by itself once one has", why);
	else if (kind == WAIT_ERROR)
		log_err("%s; trying again every %d s at most", why,
		    CM_RETRY_MAX_MS / 1000);
}

/*
 * Listen for links on ${a}, configured by ${lc}: the listener in ${*lp},
 * or NULL there when it has to wait for RDMA, and why in ${w}.  Returns
 * 0, or -1 when it failed otherwise (the reason in ${err}).
 */
static int
listen_on(struct rsd *d, const struct conf_addr *a,
    const struct verbs_link_conf *lc, struct verbs_listener **lp,
    struct cm_wait *w, char *err, size_t errlen)
{

	if (!verbs_cm_is_open(d->cm)) {
		*lp = NULL;
		wait_set(w, WAIT_CM, "");
		return (0);
	}
	if ((*lp = verbs_listen(d->cm, a->host, a->port, lc, d, err,
	    errlen)) != NULL) {
		verbs_listener_set_gate(*lp, gate, d);
		wait_set(w, WAIT_NONE, "");
		log_notice("listening for RDMA links on %s", a->text);
		return (0);
	}
	if (errno != ENODEV)
		return (-1);
	wait_set(w, WAIT_DEVICE, err);
	return (0);
}

static void listener_conf(const struct conf *, struct verbs_link_conf *);

/* Open the RDMA CM and listen where it waited; 0 when nothing waits. */
static int
rdma_try(struct rsd *d)
{
	struct verbs_link_conf lc;
	char err[400];
	size_t i;
	int left = 0;

	if (rdma_open(d) != 0)
		return (-1);
	listener_conf(d->conf, &lc);
	for (i = 0; i < d->nlsn; i++) {
		if (d->lsn[i] != NULL)
			continue;
		if (listen_on(d, &d->conf->listen[i].addr, &lc, &d->lsn[i],
		    &d->lsn_wait[i], err, sizeof(err)) != 0)
			wait_set(&d->lsn_wait[i], WAIT_ERROR, err);
		left += d->lsn[i] == NULL;
	}
	if (left > 0) {
		rdma_wait(d);
		return (-1);
	}
	d->rdma_backoff_ms = CM_RETRY_MIN_MS;
	return (0);
}

/*
 * A look, in a shared turn (it stops no worker): a try, in the next
 * exclusive turn, if /dev/infiniband changed or the time came.
 */
static void
on_look(void *arg)
{
	struct rsd *d = arg;

	if (d->stop || d->draining || !needs_rdma(d->conf))
		return;
	d->rdma_moved |= verbs_cm_moved(d->cm);
	if (!d->rdma_moved && loop_now_ms() < d->rdma_next_ms) {
		loop_timer_arm(&d->rdma_timer, CM_LOOK_MS);
		return;
	}
	loop_job_defer(&d->rdma_job);
}

static void
on_try(void *arg)
{
	struct rsd *d = arg;

	if (d->stop || d->draining || !needs_rdma(d->conf))
		return;
	if (d->rdma_moved)
		d->rdma_backoff_ms = CM_RETRY_MIN_MS;
	d->rdma_moved = 0;
	(void)rdma_try(d);
}

const char *
cm_rdma(const struct rsd *d, char *why, size_t len)
{
	const struct cm_wait *w;
	size_t n;

	snprintf(why, len, "%s", "");
	if (d->rdma == -1 || (d->rdma != VERBS_RDMA_READY &&
	    !needs_rdma(d->conf)))
		return (extra_names[EXTRA_UNUSED]);
	if (d->rdma != VERBS_RDMA_READY) {
		snprintf(why, len, "no RDMA yet: %s", d->rdma_why);
		return (verbs_rdma_name((enum verbs_rdma)d->rdma));
	}
	if ((w = waiting(d, &n)) == NULL)
		return (verbs_rdma_name(VERBS_RDMA_READY));
	if (n > 1)
		snprintf(why, len, "%s (and %zu more listeners wait)", w->why,
		    n - 1);
	else
		snprintf(why, len, "%s", w->why);
	return (extra_names[EXTRA_LISTEN]);
}

size_t
cm_listening(const struct rsd *d)
{
	size_t i, n = 0;

	for (i = 0; i < d->nlsn; i++)
		n += d->lsn[i] != NULL;
	return (n);
}

/* ------------------------------------------------- channel and listeners */

int
cm_start(struct rsd *d, const struct link_ops *ops, void *arg, char *err,
    size_t errlen)
{

	TAILQ_INIT(&d->links);
	TAILQ_INIT(&d->connq);
	d->in_ops = ops;
	d->in_arg = arg;
	d->rdma = -1;
	d->rdma_backoff_ms = CM_RETRY_MIN_MS;
	loop_job_init(&d->take, d->lp, on_take, d);
	loop_timer_init(&d->rdma_timer, d->lp, on_look, d);
	loop_timer_share(&d->rdma_timer, 1);
	loop_job_init(&d->rdma_job, d->lp, on_try, d);
	if ((d->rate = calloc(1, sizeof(*d->rate))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (-1);
	}
	/* The RDMA CM opens once a tunnel needs it (cm_listen_plan). */
	if ((d->cm = verbs_cm_new(err, errlen)) == NULL)
		return (-1);
	return (0);
}

void
cm_listen_close(struct rsd *d)
{
	size_t i;

	for (i = 0; i < d->nlsn; i++)
		verbs_listener_free(d->lsn[i]);
	free(d->lsn);
	free(d->lsn_wait);
	d->lsn = NULL;
	d->lsn_wait = NULL;
	d->nlsn = 0;
}

void
cm_stop(struct rsd *d)
{
	struct dlink *dl;

	if (d->cm == NULL)
		return;
	while ((dl = TAILQ_FIRST(&d->links)) != NULL)
		link_free(dl);
	cm_listen_close(d);
	loop_job_cancel(&d->take);
	loop_timer_stop(&d->rdma_timer);
	loop_job_cancel(&d->rdma_job);
	loop_fd_del(d->cm_w);
	loop_fd_del(d->lcm_w);
	d->cm_w = d->lcm_w = NULL;
	verbs_cm_free(d->cm);
	d->cm = NULL;
	free(d->rate);
	d->rate = NULL;
}

/* Incoming links may carry any target tunnel: size them for the largest. */
static void
listener_conf(const struct conf *c, struct verbs_link_conf *lc)
{
	const struct conf_sizes *sz;
	size_t i;

	memset(lc, 0, sizeof(*lc));
	for (i = 0; i < c->ntunnels; i++) {
		if (!c->tunnels[i].has_target)
			continue;
		sz = &c->tunnels[i].sz;
		if (sz->sq_size > lc->sq_size)
			lc->sq_size = sz->sq_size;
		if (sz->rq_size > lc->rq_size)
			lc->rq_size = sz->rq_size;
		if (sz->inline_size > lc->inline_size)
			lc->inline_size = sz->inline_size;
		lc->max_streams += sz->max_streams;
		lc->resume |= sz->resume_time > 0;
	}
	if (lc->max_streams > WIRE_STREAMS_MAX)
		lc->max_streams = WIRE_STREAMS_MAX;
	lc->ack_timeout = (uint8_t)c->ack_timeout;
	lc->retry_count = (uint8_t)c->retry_count;
	lc->pool_bytes = c->ring_pool;
	/* Answered in the peer's version, or max_version if older. */
	lc->version_max = c->max_version < WIRE_VERSION ?
	    (uint8_t)c->max_version : 0;
}

/* The configuration's listen addresses, where some tunnel has a target. */
static size_t
nlisten(const struct conf *c)
{
	size_t i;

	for (i = 0; i < c->ntunnels; i++)
		if (c->tunnels[i].has_target)
			return (c->nlisten);
	return (0);
}

struct cm_listen_plan *
cm_listen_plan(struct rsd *d, const struct conf *nc, char *err,
    size_t errlen)
{
	const struct conf *oc = d->conf;
	struct cm_listen_plan *p;
	struct verbs_link_conf lc;
	size_t i, j;

	if ((p = calloc(1, sizeof(*p) + (nc->nlisten + 1) *
	    sizeof(p->nl[0]))) == NULL ||
	    (p->lsn = calloc(nc->nlisten + 1, sizeof(*p->lsn))) == NULL ||
	    (p->wait = calloc(nc->nlisten + 1, sizeof(*p->wait))) == NULL) {
		if (p != NULL)
			free(p->lsn);
		free(p);
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	/* Nothing is undone here: an open RDMA CM serves any configuration. */
	if (needs_rdma(nc))
		(void)rdma_open(d);
	p->n = nlisten(nc);
	listener_conf(nc, &lc);
	for (j = 0; j < p->n; j++) {
		p->nl[j].from = NEW_LISTENER;
		for (i = 0; i < d->nlsn && oc != nc; i++) {
			if (!conf_addr_same(&oc->listen[i].addr,
			    &nc->listen[j].addr))
				continue;
			if (d->lsn[i] != NULL) {
				p->nl[j].l = d->lsn[i];
				p->nl[j].from = i;
				d->lsn[i] = NULL;	/* taken over */
			} else {
				/* What was said of it stays said. */
				p->wait[j] = d->lsn_wait[i];
			}
			break;
		}
		if (p->nl[j].l != NULL)
			continue;
		if (listen_on(d, &nc->listen[j].addr, &lc, &p->nl[j].l,
		    &p->wait[j], err, errlen) != 0) {
			cm_listen_undo(d, p);
			return (NULL);
		}
	}
	return (p);
}

void
cm_listen_undo(struct rsd *d, struct cm_listen_plan *p)
{
	size_t j;

	/* Listeners taken over go back where they were; new ones close. */
	for (j = 0; j < p->n; j++) {
		if (p->nl[j].from != NEW_LISTENER)
			d->lsn[p->nl[j].from] = p->nl[j].l;
		else
			verbs_listener_free(p->nl[j].l);
	}
	free(p->lsn);
	free(p->wait);
	free(p);
}

void
cm_listen_commit(struct rsd *d, const struct conf *nc,
    struct cm_listen_plan *p)
{
	struct verbs_link_conf lc;
	size_t i;

	loop_assert_exclusive();
	for (i = 0; i < d->nlsn; i++) {
		if (d->lsn[i] != NULL) {
			log_notice("no longer listening for RDMA links on %s",
			    d->conf->listen[i].addr.text);
			verbs_listener_free(d->lsn[i]);
		}
	}
	free(d->lsn);
	free(d->lsn_wait);
	d->nlsn = p->n;
	d->lsn = p->lsn;
	d->lsn_wait = p->wait;
	for (i = 0; i < p->n; i++)
		d->lsn[i] = p->nl[i].l;
	free(p);
	verbs_cm_set_max_pinned(d->cm, conf_max_memory_bytes(nc));
	listener_conf(nc, &lc);
	for (i = 0; i < d->nlsn; i++)
		if (d->lsn[i] != NULL)
			verbs_listener_set_conf(d->lsn[i], &lc);
	if (cm_listening(d) < d->nlsn && !loop_timer_armed(&d->rdma_timer))
		rdma_wait(d);
	if (d->nlsn > 0)
		log_info("incoming links: sq_size %u, rq_size %u, inline_size "
		    "%u, %u streams", (unsigned)lc.sq_size,
		    (unsigned)lc.rq_size, (unsigned)lc.inline_size,
		    (unsigned)lc.max_streams);
}
