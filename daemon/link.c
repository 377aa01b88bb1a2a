#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>

#include <netinet/in.h>

#include <sys/epoll.h>

#include "auth.h"
#include "bridge.h"
#include "engine.h"
#include "link.h"
#include "log.h"
#include "loop.h"
#include "resolve.h"
#include "rsd.h"
#include "tunnel.h"
#include "verbs.h"

/* D_AUTH: connected, proofs not yet exchanged; no stream may open. */
enum { D_IDLE, D_CONNECTING, D_AUTH, D_UP, D_DEAD };

struct dlink {
	struct rsd *d;
	struct tun *t;			/* client link: its tunnel */
	struct verbs_link *vl;
	int state;
	struct loop_fd *cqw;
	struct loop_timer ka;		/* keepalive */
	struct loop_timer retry;	/* reconnect after back-off */
	struct loop_timer reap;		/* incoming: free outside callbacks */
	struct loop_timer deadline;	/* handshake_timeout */
	/* Authentication: callbacks for the engine, and the link's key. */
	struct engine_auth ea;
	struct conf_key key;		/* client: its tunnel's; in: proved */
	uint32_t backoff;
	int failures;
	int auth_said;			/* client: an auth failure was logged */
	struct bridge *waiting;		/* clients waiting for the link */
	struct rname *peer_rn, *src_rn;	/* client: the peer, our source */
	struct rname_waiter rw;		/* the peer's name is looked up */
	unsigned next_addr;		/* the peer address to try next */
	struct bridge **incoming;	/* INCOMING streams not yet accepted */
	uint32_t nincoming;
	int dispatching, again;
	int closing;			/* link_free: do not reconnect */
	char peer[420];
	struct sockaddr_storage peer_sa;	/* incoming: the peer's address */
	int auth;			/* incoming: the peer authenticates */
	uint64_t idle_since;		/* up with no stream since; 0: busy */
	uint64_t heard_recvs, heard_ms;	/* receives seen, and when last */
	struct log_burst open_log;	/* refusals of the peer's OPENs */
	char name[520];			/* "tunnel pg: link to X" / "link from X" */
	struct dlink *next;
};

static void link_down(struct dlink *, const char *);
static void link_up(struct dlink *);

/* A message about link ${dl}: the journal gets TUNNEL= and PEER=. */
#define LLOG(level, dl, ...)						\
	log_about(level, &(struct log_about){ (dl)->t ?			\
	    (dl)->t->c->name : NULL, 0, (dl)->peer }, __VA_ARGS__)
static void link_connect(struct dlink *);

static void on_keepalive(void *);
static void on_retry(void *);
static void on_reap(void *);
static void on_deadline(void *);

/* A new link of daemon ${d}, in no list yet. */
static struct dlink *
dl_new(struct rsd *d)
{
	struct dlink *dl;

	if ((dl = calloc(1, sizeof(*dl))) == NULL)
		return (NULL);
	dl->d = d;
	loop_timer_init(&dl->ka, d->lp, on_keepalive, dl);
	loop_timer_init(&dl->retry, d->lp, on_retry, dl);
	loop_timer_init(&dl->reap, d->lp, on_reap, dl);
	loop_timer_init(&dl->deadline, d->lp, on_deadline, dl);
	return (dl);
}

static void
list_add(struct dlink *dl)
{

	dl->next = dl->d->links;
	dl->d->links = dl;
}

static void
list_del(struct dlink *dl)
{
	struct dlink **p;

	for (p = &dl->d->links; *p != NULL; p = &(*p)->next)
		if (*p == dl) {
			*p = dl->next;
			return;
		}
}

static void
on_cq(void *arg, uint32_t events)
{
	struct dlink *dl = arg;

	(void)events;
	verbs_link_poll(dl->vl);
	link_kick(dl);
}

/*
 * Every LINK_KEEPALIVE_MS: make sure the peer hears from us, and that we
 * hear from it.  A peer that sent nothing (not even its keepalive) for
 * LINK_SILENCE_MS is gone, even if our own sends still get acknowledged
 * or we have no message credit left to send with.
 */
static void
on_keepalive(void *arg)
{
	struct dlink *dl = arg;
	struct engine *e;
	struct engine_stats st;
	uint64_t now = loop_now_ms();
	char why[96];

	loop_timer_arm(&dl->ka, LINK_KEEPALIVE_MS);
	if (dl->state != D_UP || (e = link_engine(dl)) == NULL)
		return;
	engine_stats(e, &st);
	if (st.recvs != dl->heard_recvs) {
		dl->heard_recvs = st.recvs;
		dl->heard_ms = now;
	} else if (now - dl->heard_ms >= LINK_SILENCE_MS) {
		snprintf(why, sizeof(why), "nothing heard from the peer for "
		    "%llu s", (unsigned long long)(now - dl->heard_ms) / 1000);
		link_down(dl, why);
		return;
	}
	engine_keepalive(e);
	link_kick(dl);
}

static int
watch_cq(struct dlink *dl)
{

	if (dl->cqw != NULL || verbs_link_fd(dl->vl) < 0)
		return (0);
	dl->cqw = loop_fd_add(dl->d->lp, verbs_link_fd(dl->vl), EPOLLIN,
	    on_cq, dl);
	return (dl->cqw == NULL ? -1 : 0);
}

/* The engine wants this side's proof (see auth.h). */
static void
prove(void *arg, uint8_t proof[WIRE_AUTH_LEN])
{
	struct dlink *dl = arg;
	uint8_t hellos[AUTH_HELLOS_LEN];

	/* Both hellos exist once connected; a zero proof fails anyway. */
	memset(proof, 0, WIRE_AUTH_LEN);
	if (verbs_link_hellos(dl->vl, hellos) == 0)
		auth_proof(dl->key.key, dl->key.len, dl->t != NULL, hellos,
		    proof);
}

/* True, and ${k} is the link's key from now on, if the initiator proved it. */
static int
proves(struct dlink *dl, const struct conf_key *k,
    const uint8_t hellos[AUTH_HELLOS_LEN], const uint8_t proof[WIRE_AUTH_LEN])
{

	if (!k->set || auth_check(k->key, k->len, 1, hellos, proof) != 0)
		return (0);
	dl->key = *k;
	return (1);
}

/*
 * The peer's proof.  Our own links know their key.  A peer linking to us
 * may hold the global key or any target tunnel's: the one it proves
 * decides which tunnels it may open (dispatch).
 */
static int
verify(void *arg, const uint8_t proof[WIRE_AUTH_LEN])
{
	struct dlink *dl = arg;
	const struct conf *c = dl->d->conf;
	uint8_t hellos[AUTH_HELLOS_LEN];
	size_t i;

	if (verbs_link_hellos(dl->vl, hellos) != 0)
		return (-1);
	if (dl->t != NULL)
		return (auth_check(dl->key.key, dl->key.len, 0, hellos,
		    proof));
	if (proves(dl, &c->key, hellos, proof))
		return (0);
	for (i = 0; i < c->ntunnels; i++)
		if (c->tunnels[i].has_target &&
		    proves(dl, &c->tunnels[i].key, hellos, proof))
			return (0);
	return (-1);
}

static void
on_deadline(void *arg)
{
	struct dlink *dl = arg;
	char why[96];

	if (dl->state != D_CONNECTING && dl->state != D_AUTH)
		return;
	snprintf(why, sizeof(why), "%s not finished within "
	    "handshake_timeout (%u s)", dl->state == D_AUTH ?
	    "authentication" : "connecting",
	    (unsigned)dl->d->conf->handshake_timeout);
	link_down(dl, why);
}

static void
deadline_stop(struct dlink *dl)
{

	loop_timer_stop(&dl->deadline);
}

static void
deadline_start(struct dlink *dl)
{

	loop_timer_arm(&dl->deadline,
	    (uint64_t)dl->d->conf->handshake_timeout * 1000);
}

/* May a stream on ${dl} use tunnel ${t}?  A keyed tunnel needs its key. */
static int
key_allows(const struct dlink *dl, const struct tun *t)
{

	return (!t->c->key.set || (dl->key.set &&
	    conf_key_same(&dl->key, &t->c->key)));
}

static void
dispatch(struct dlink *dl, const struct engine_event *ev)
{
	struct engine *e = verbs_link_engine(dl->vl);
	struct bridge *b = ev->user;
	struct tun *t;
	const char *name;
	char held[64];

	if ((ev->flags & ENGINE_EV_INCOMING) &&
	    !(ev->flags & ENGINE_EV_RELEASED)) {
		/* Links we opened carry our client tunnels only. */
		if (dl->t != NULL) {
			LLOG(LOG_WARNING, dl, "%s: the peer opened a stream "
			    "on it; refused", dl->name);
			engine_refuse(e, ev->stream, WIRE_REASON_NO_TUNNEL);
			return;
		}
		name = engine_tunnel(e, ev->stream);
		t = tunnel_find_target(dl->d, name);
		if (t == NULL && dl->d->draining) {
			log_info("%s: refused a stream for tunnel '%s': "
			    "shutting down", dl->name, name);
			engine_refuse(e, ev->stream,
			    WIRE_REASON_SHUTTING_DOWN);
			return;
		}
		if (t == NULL) {
			if (log_burst(&dl->open_log, loop_now_ms(), held,
			    sizeof(held)))
				LLOG(LOG_WARNING, dl, "%s: refused a stream for "
				    "tunnel '%s', which is not configured "
				    "here%s", dl->name, name, held);
			engine_refuse(e, ev->stream, WIRE_REASON_NO_TUNNEL);
			return;
		}
		if (!key_allows(dl, t)) {
			if (log_burst(&dl->d->deny_log, loop_now_ms(), held,
			    sizeof(held)))
				LLOG(LOG_WARNING, dl, "tunnel %s: %s: refused "
				    "a stream: the link is not authenticated "
				    "with this tunnel's key%s", t->c->name,
				    dl->name, held);
			t->st->refused++;
			t->st->denied++;
			engine_refuse(e, ev->stream, WIRE_REASON_DENIED);
			return;
		}
		if (t->nstreams >= t->c->sz.max_streams) {
			if (log_burst(&t->limit_log, loop_now_ms(), held,
			    sizeof(held)))
				log_warn("tunnel %s: %s: stream limit %u "
				    "reached, refusing%s", t->c->name,
				    dl->name, (unsigned)t->c->sz.max_streams,
				    held);
			t->st->refused++;
			t->st->limited++;
			engine_refuse(e, ev->stream, WIRE_REASON_LIMIT);
			return;
		}
		bridge_incoming(dl, t, ev->stream);
		return;
	}
	if (b == NULL && ev->stream < dl->nincoming)
		b = dl->incoming[ev->stream];
	if (b != NULL)
		bridge_event(b, ev);
}

/**
 * link_kick(dl):
 * Post what the engine has ready and dispatch its stream events.  Call
 * after any engine call; ${dl} (and the caller's bridge) may be gone when
 * it returns, so call it last.
 */
void
link_kick(struct dlink *dl)
{
	struct engine_event ev;
	struct engine *e;
	const char *why;

	if (dl == NULL || dl->vl == NULL ||
	    (e = verbs_link_engine(dl->vl)) == NULL)
		return;
	/* Handlers call back in here: the outermost call does the work. */
	if (dl->dispatching) {
		dl->again = 1;
		return;
	}
	dl->dispatching = 1;
	do {
		dl->again = 0;
		verbs_link_flush(dl->vl);
		/* Handlers queue work (credits, refusals, data): post it too. */
		while (engine_next_event(e, &ev)) {
			dispatch(dl, &ev);
			dl->again = 1;
		}
	} while (dl->again && engine_error(e) == NULL);
	dl->dispatching = 0;
	/* Idle since when: the link may give its slot up (evict_idle). */
	if (engine_active(e) > 0)
		dl->idle_since = 0;
	else if (dl->idle_since == 0 && dl->state == D_UP)
		dl->idle_since = loop_now_ms();
	if ((why = engine_error(e)) != NULL && dl->state != D_DEAD &&
	    dl->state != D_IDLE)
		link_down(dl, why);
	else if (dl->state == D_AUTH && engine_authenticated(e))
		link_up(dl);
}

static void
on_retry(void *arg)
{
	struct dlink *dl = arg;

	link_connect(dl);
}

static void
on_reap(void *arg)
{
	struct dlink *dl = arg;

	link_free(dl);
}

static void
fail_waiting(struct dlink *dl, const char *why)
{
	struct bridge *b;

	while ((b = dl->waiting) != NULL) {
		dl->waiting = bridge_next(b);
		bridge_link_failed(b, why);
	}
}

/*
 * The link ended: reset its streams (the engine already did; delivering
 * the events closes their sockets and frees their rings), free the verbs
 * side, and reconnect (client link) or go away (incoming link).
 */
static void
link_down(struct dlink *dl, const char *why_in)
{
	struct engine_event ev;
	struct engine *e = dl->vl ? verbs_link_engine(dl->vl) : NULL;
	int was_up = dl->state == D_UP;
	int auth_failed;
	char why[256], held[64];

	/* It may be the engine's own message, freed with the link below. */
	snprintf(why, sizeof(why), "%s", why_in);
	/* Ending before the proofs checked out is an authentication failure. */
	auth_failed = dl->state == D_AUTH ||
	    strncmp(why, "authentication failed", 21) == 0 ||
	    (dl->t == NULL && dl->ea.verify != NULL && e != NULL &&
	    !engine_authenticated(e));
	if (auth_failed)
		dl->d->auth_failures++;
	deadline_stop(dl);
	if (e != NULL) {
		/* No WRITE may touch a ring once its memory is released. */
		verbs_link_stop(dl->vl);
		engine_fail(e, why);
		dl->dispatching = 1;
		while (engine_next_event(e, &ev))
			dispatch(dl, &ev);
		dl->dispatching = 0;
	}
	loop_fd_del(dl->cqw);
	dl->cqw = NULL;
	loop_timer_stop(&dl->ka);
	verbs_link_free(dl->vl);
	dl->vl = NULL;
	free(dl->incoming);
	dl->incoming = NULL;
	dl->nincoming = 0;
	fail_waiting(dl, why);

	if (dl->t == NULL && auth_failed) {
		/* Counted every time; said once per burst (it may be a flood). */
		if (log_burst(&dl->d->auth_log, loop_now_ms(), held,
		    sizeof(held)))
			LLOG(LOG_WARNING, dl, "%s failed authentication: %s%s",
			    dl->name, why, held);
	} else if (dl->t == NULL) {
		/* A peer breaking the protocol is news; one leaving is not. */
		LLOG(strncmp(why, "protocol violation", 18) == 0 ?
		    LOG_WARNING : LOG_INFO, dl, "%s ended: %s", dl->name, why);
	}
	if (dl->t == NULL) {
		dl->state = D_DEAD;
		if (!loop_timer_armed(&dl->reap))
			loop_timer_arm(&dl->reap, 0);
		return;
	}
	dl->state = D_IDLE;
	dl->failures++;
	/* Nothing more will use a stopping daemon's or old tunnel's link. */
	if (dl->d->stop || dl->d->draining || dl->closing || dl->t->draining) {
		LLOG(LOG_INFO, dl, "%s closed", dl->name);
		return;
	}
	if (was_up) {
		LLOG(LOG_WARNING, dl, "%s went down: %s; reconnecting",
		    dl->name, why);
		dl->backoff = LINK_BACKOFF_MIN_MS;
	} else if (dl->failures == 1 || log_level() >= LOG_DEBUG ||
	    (auth_failed && !dl->auth_said)) {
		/* Once per run of failures, and once when auth is why. */
		dl->auth_said |= auth_failed;
		LLOG(LOG_WARNING, dl, "%s failed: %s; retrying every %.1f "
		    "s at most", dl->name, why, LINK_BACKOFF_MAX_MS / 1000.0);
	}
	loop_timer_arm(&dl->retry, dl->backoff);
	dl->backoff = dl->backoff * 2 > LINK_BACKOFF_MAX_MS ?
	    LINK_BACKOFF_MAX_MS : dl->backoff * 2;
}

static void
link_conf(const struct conf *cf, const struct conf_sizes *sz,
    struct verbs_link_conf *lc)
{

	memset(lc, 0, sizeof(*lc));
	lc->sq_size = sz->sq_size;
	lc->rq_size = sz->rq_size;
	lc->inline_size = sz->inline_size;
	lc->max_streams = sz->max_streams;
	lc->ack_timeout = (uint8_t)cf->ack_timeout;
	lc->retry_count = (uint8_t)cf->retry_count;
}

static void on_peer_resolved(void *);

/*
 * Connect to the peer's next address (every one is tried in turn, one per
 * attempt), once its name is resolved.  Nothing starts while the daemon
 * or the tunnel drains: a retry that comes due then does nothing.
 */
static void
link_connect(struct dlink *dl)
{
	const struct conf_tunnel *c = dl->t->c;
	const struct resolve_addrs *dst, *src = NULL;
	const struct sockaddr *sa;
	struct verbs_link_conf lc;
	const char *why;
	char err[256];
	size_t i, k;

	if (dl->d->stop || dl->d->draining || dl->closing || dl->t->draining)
		return;
	dl->state = D_CONNECTING;	/* failing, link_down reschedules */
	switch (rname_get(dl->peer_rn, &dst, &why)) {
	case 0:
		rname_wait(dl->peer_rn, &dl->rw, on_peer_resolved, dl);
		return;
	case -1:
		link_down(dl, why);
		return;
	}
	if (dl->src_rn != NULL && rname_get(dl->src_rn, &src, &why) != 1) {
		link_down(dl, "the source address is unusable");
		return;
	}
	/* With a source address, only peer addresses of its family. */
	for (k = 0; k < dst->n; k++) {
		i = dl->next_addr++ % dst->n;
		sa = (const struct sockaddr *)&dst->a[i];
		if (src == NULL ||
		    sa->sa_family == ((const struct sockaddr *)&src->a[0])->sa_family)
			break;
	}
	if (k == dst->n) {
		link_down(dl, "the peer has no address of the source "
		    "address's family");
		return;
	}
	link_conf(dl->d->conf, &c->sz, &lc);
	dl->key = c->key;
	if (c->key.set) {
		dl->ea = (struct engine_auth){ 1, prove, verify, dl };
		lc.auth = &dl->ea;
	}
	if (log_level() >= LOG_DEBUG) {
		char to[80];

		resolve_addr_text(sa, to, sizeof(to));
		LLOG(LOG_DEBUG, dl, "%s: connecting to %s", dl->name, to);
	}
	dl->vl = verbs_connect(dl->d->cm, sa, src != NULL ?
	    (const struct sockaddr *)&src->a[0] : NULL, &lc, dl, err,
	    sizeof(err));
	if (dl->vl == NULL)
		link_down(dl, err);
}

static void
on_peer_resolved(void *arg)
{

	link_connect(arg);
}

struct dlink *
link_client_new(struct tun *t, const struct conf *nc)
{
	struct dlink *dl;

	if ((dl = dl_new(t->d)) == NULL)
		return (NULL);
	dl->t = t;
	dl->backoff = LINK_BACKOFF_MIN_MS;
	/* Always HOST:PORT, however the configuration spelt it. */
	snprintf(dl->peer, sizeof(dl->peer), strchr(t->c->peer.host, ':') ?
	    "[%s]:%s" : "%s:%s", t->c->peer.host, t->c->peer.port);
	snprintf(dl->name, sizeof(dl->name), "tunnel %s: link to %s",
	    t->c->name, dl->peer);
	if ((dl->peer_rn = rname_new(t->d->res, t->c->peer.host,
	    t->c->peer.port, 0)) == NULL || (nc->has_source &&
	    (dl->src_rn = rname_new(t->d->res, nc->source.host, "0",
	    1)) == NULL)) {
		link_free(dl);
		return (NULL);
	}
	return (dl);
}

void
link_client_start(struct dlink *dl)
{

	list_add(dl);
	link_connect(dl);
}

static void
link_up(struct dlink *dl)
{
	struct bridge *b;

	if (watch_cq(dl)) {
		link_down(dl, "cannot watch the completion channel");
		return;
	}
	/* Connected: no stream until the peer has proved its key. */
	if (!engine_authenticated(link_engine(dl))) {
		dl->state = D_AUTH;
		/* Ours: the CM bounds connecting; the proofs get this long. */
		if (dl->t != NULL)
			deadline_start(dl);
		link_kick(dl);
		return;
	}
	deadline_stop(dl);
	dl->state = D_UP;
	dl->idle_since = dl->heard_ms = loop_now_ms();
	dl->failures = 0;
	dl->auth_said = 0;
	dl->backoff = LINK_BACKOFF_MIN_MS;
	if (dl->t != NULL)
		LLOG(LOG_INFO, dl, "%s is up (device %s, sq_size %u, "
		    "rq_size %u, inline_size %u, %s)", dl->name,
		    verbs_link_device(dl->vl),
		    (unsigned)dl->t->c->sz.sq_size,
		    (unsigned)dl->t->c->sz.rq_size,
		    (unsigned)dl->t->c->sz.inline_size,
		    dl->key.set ? "authenticated" : "not authenticated");
	else if (dl->key.set)
		LLOG(LOG_INFO, dl, "%s authenticated", dl->name);
	loop_timer_arm(&dl->ka, LINK_KEEPALIVE_MS);
	while ((b = dl->waiting) != NULL) {
		dl->waiting = bridge_next(b);
		bridge_link_up(b);
	}
	link_kick(dl);
}

/* Whether two socket addresses are the same host (ports aside). */
static int
same_host(const struct sockaddr *x, const struct sockaddr *y)
{

	if (x->sa_family != y->sa_family)
		return (0);
	if (x->sa_family == AF_INET)
		return (((const struct sockaddr_in *)(const void *)x)->
		    sin_addr.s_addr == ((const struct sockaddr_in *)
		    (const void *)y)->sin_addr.s_addr);
	if (x->sa_family == AF_INET6)
		return (memcmp(&((const struct sockaddr_in6 *)(const void *)x)->
		    sin6_addr, &((const struct sockaddr_in6 *)(const void *)y)->
		    sin6_addr, sizeof(struct in6_addr)) == 0);
	return (0);
}

/* An incoming link that may give its slot up: up, idle long enough. */
static int
evictable(const struct dlink *dl, uint64_t now, uint64_t idle_ms)
{

	return (dl->t == NULL && dl->state == D_UP && dl->idle_since != 0 &&
	    now - dl->idle_since >= idle_ms);
}

/*
 * At a limit, an incoming link that carried no stream for
 * link_idle_timeout gives its slot to the new one: an unauthenticated
 * one first, then the one idle longest.  Only links without a key when
 * ${unauth_only}.  Returns 1 if one was closed.
 */
static int
evict_idle(struct rsd *d, int unauth_only, const char *limit)
{
	struct dlink *dl, *victim = NULL;
	uint64_t now = loop_now_ms(), idle_ms;
	char why[160];

	if (d->conf->link_idle_timeout == 0)
		return (0);
	idle_ms = (uint64_t)d->conf->link_idle_timeout * 1000;
	for (dl = d->links; dl != NULL; dl = dl->next) {
		if (!evictable(dl, now, idle_ms) ||
		    (unauth_only && dl->key.set))
			continue;
		if (victim == NULL || (victim->key.set && !dl->key.set) ||
		    (victim->key.set == dl->key.set &&
		    dl->idle_since < victim->idle_since))
			victim = dl;
	}
	if (victim == NULL)
		return (0);
	snprintf(why, sizeof(why), "closed after %llu s without a stream, to "
	    "make room for a new link (%s reached)",
	    (unsigned long long)((now - victim->idle_since) / 1000), limit);
	d->links_evicted++;
	LLOG(LOG_NOTICE, victim, "%s %s", victim->name, why);
	link_down(victim, why);
	return (1);
}

/* The settings behind the refusals that are limits. */
static const char *const refusal_setting[LINK_REFUSAL_N] = {
	[LINK_MAX_PENDING] = "max_pending",
	[LINK_MAX_PENDING_PER_ADDR] = "max_pending_per_addr",
	[LINK_MAX_UNAUTH_LINKS] = "max_unauth_links",
	[LINK_MAX_LINKS] = "max_links",
};

/*
 * The limit a new incoming link from ${peer} (authenticating or not)
 * would break, with its value in ${value}, or LINK_REFUSAL_N for none.
 * A link slot may be freed for it (evict_idle).
 */
static enum link_refusal
incoming_limit(struct rsd *d, const struct sockaddr *peer, int auth,
    uint32_t *value)
{
	const struct conf *c = d->conf;
	const struct dlink *dl;
	uint32_t links = 0, pending = 0, from = 0, unauth = 0;
	int handshaking;

	for (dl = d->links; dl != NULL; dl = dl->next) {
		if (dl->t != NULL || dl->state == D_DEAD)
			continue;
		links++;
		unauth += !dl->auth;
		/* Handshaking links are capped too: they cost a peer nothing. */
		handshaking = dl->state == D_CONNECTING || dl->state == D_AUTH;
		pending += handshaking;
		from += handshaking && peer != NULL &&
		    same_host((const struct sockaddr *)&dl->peer_sa, peer);
	}
	if (pending >= c->max_pending) {
		*value = c->max_pending;
		return (LINK_MAX_PENDING);
	}
	if (from >= c->max_pending_per_addr) {
		*value = c->max_pending_per_addr;
		return (LINK_MAX_PENDING_PER_ADDR);
	}
	/* At or above max_links, max_unauth_links is max_links' business. */
	if (!auth && c->max_unauth_links < c->max_links &&
	    unauth >= c->max_unauth_links) {
		if (!evict_idle(d, 1, refusal_setting[LINK_MAX_UNAUTH_LINKS])) {
			*value = c->max_unauth_links;
			return (LINK_MAX_UNAUTH_LINKS);
		}
		links--;	/* one was just closed */
	}
	if (links >= c->max_links &&
	    !evict_idle(d, 0, refusal_setting[LINK_MAX_LINKS])) {
		*value = c->max_links;
		return (LINK_MAX_LINKS);
	}
	return (LINK_REFUSAL_N);
}

/* Turn a connect request away: count it, say it once per burst. */
static int __attribute__((format(printf, 4, 5)))
reject(const char *peer, uint64_t *count, struct log_burst *b,
    const char *fmt, ...)
{
	char msg[200], held[64];
	va_list ap;

	(*count)++;
	if (log_burst(b, loop_now_ms(), held, sizeof(held))) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		log_about(LOG_WARNING, &(struct log_about){ NULL, 0, peer },
		    "link from %s rejected: %s%s", peer, msg, held);
	}
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
		*open |= !c->tunnels[i].key.set;
	}
}

/**
 * link_gate(d, peer, peer_text, hello):
 * The RDMA listeners' gate (see verbs_gate_fn): reject a connect request
 * that max_links, max_pending, allow or the keys configured turn away,
 * logging (once per burst) and counting it.  ${d} is the daemon.
 */
int
link_gate(void *arg, const struct sockaddr *peer, const char *peer_text,
    const struct wire_hello *hello, const char *invalid)
{
	struct rsd *d = arg;
	const struct conf *c = d->conf;
	enum link_refusal why;
	uint32_t value;
	int keyed, open, auth;

	if (d->stop)
		return (-1);
	/* What costs the peer nothing is turned away before any work. */
	if (c->nallow > 0 && (peer == NULL ||
	    !conf_net_match(c->allow, c->nallow, peer)))
		return (reject(peer_text, &d->links_rejected,
		    &d->refusal_log[LINK_NOT_ALLOWED], "not in allow"));
	if (hello == NULL)
		return (reject(peer_text, &d->links_rejected,
		    &d->refusal_log[LINK_BAD_HELLO],
		    "invalid connect data: %s", invalid));
	/* Say at once what cannot work; the proofs come after connecting. */
	auth = (hello->flags & WIRE_HELLO_AUTH) != 0;
	keys_here(c, &keyed, &open);
	if (auth && !keyed)
		return (reject(peer_text, &d->auth_failures, &d->auth_log,
		    "it authenticates, but no key_file is configured here"));
	if (!auth && !open)
		return (reject(peer_text, &d->auth_failures, &d->auth_log,
		    "it does not authenticate, and every tunnel here needs a "
		    "key_file"));
	if ((why = incoming_limit(d, peer, auth, &value)) != LINK_REFUSAL_N)
		return (reject(peer_text, &d->links_rejected,
		    &d->refusal_log[why], "%s %u reached",
		    refusal_setting[why], (unsigned)value));
	return (0);
}

static void
link_incoming(struct rsd *d, const struct verbs_ev *ev)
{
	struct dlink *dl;

	/* link_gate let it through; things may have changed since. */
	if (d->stop || (dl = dl_new(d)) == NULL) {
		verbs_reject(ev->link);
		verbs_link_free(ev->link);
		return;
	}
	dl->vl = ev->link;
	dl->peer_sa = ev->peer_sa;
	dl->auth = ev->peer_auth;
	snprintf(dl->peer, sizeof(dl->peer), "%s", ev->peer);
	snprintf(dl->name, sizeof(dl->name), "link from %s", ev->peer);
	verbs_link_set_user(dl->vl, dl);
	if (ev->peer_auth) {
		dl->ea = (struct engine_auth){ 0, prove, verify, dl };
		engine_set_auth(verbs_link_engine(dl->vl), &dl->ea);
	}
	/* Bridges for streams that are still connecting to their targets. */
	dl->nincoming = WIRE_STREAMS_MAX;
	if ((dl->incoming = calloc(dl->nincoming, sizeof(*dl->incoming))) ==
	    NULL || watch_cq(dl) || verbs_accept(dl->vl)) {
		LLOG(LOG_ERR, dl, "%s: cannot accept", dl->name);
		loop_fd_del(dl->cqw);
		verbs_link_free(dl->vl);
		free(dl->incoming);
		free(dl);
		return;
	}
	dl->state = D_CONNECTING;
	list_add(dl);
	deadline_start(dl);
	LLOG(LOG_INFO, dl, "%s accepted (device %s, %s)", dl->name,
	    verbs_link_device(dl->vl), ev->peer_auth ? "authenticating" :
	    "not authenticated");
}

/**
 * link_cm_event(d, ev):
 * Handle an RDMA CM outcome (incoming link, up, down, rejected).
 */
void
link_cm_event(struct rsd *d, const struct verbs_ev *ev)
{
	struct dlink *dl;

	switch (ev->type) {
	case VERBS_EV_INCOMING:
		link_incoming(d, ev);
		return;
	case VERBS_EV_REJECTED:
		log_warn("link from %s rejected: %s", ev->peer, ev->why);
		return;
	case VERBS_EV_UP:
		if ((dl = verbs_link_user(ev->link)) != NULL)
			link_up(dl);
		return;
	case VERBS_EV_DOWN:
		dl = verbs_link_user(ev->link);
		if (dl != NULL && dl->vl == ev->link)
			link_down(dl, ev->why);
		return;
	default:
		return;
	}
}

/**
 * link_free(dl):
 * Tear down and free a link (at exit).  NULL is a no-op.
 */
void
link_free(struct dlink *dl)
{

	if (dl == NULL)
		return;
	dl->closing = 1;
	if (dl->vl != NULL)
		link_down(dl, "shutting down");
	if (dl->t != NULL && dl->t->link == dl)
		dl->t->link = NULL;
	loop_timer_stop(&dl->retry);
	loop_timer_stop(&dl->reap);
	loop_timer_stop(&dl->ka);
	deadline_stop(dl);
	rname_unwait(&dl->rw);
	rname_free(dl->peer_rn);
	rname_free(dl->src_rn);
	list_del(dl);
	explicit_bzero(&dl->key, sizeof(dl->key));
	free(dl);
}

/**
 * link_count(d, up):
 * How many links there are; ${*up} is set to how many of them are up.
 */
unsigned
link_count(const struct rsd *d, unsigned *up)
{
	const struct dlink *dl;
	unsigned n = 0;

	*up = 0;
	for (dl = d->links; dl != NULL; dl = dl->next) {
		n++;
		*up += dl->state == D_UP;
	}
	return (n);
}

/**
 * link_kick_all(d):
 * link_kick every link (after work was queued on several).
 */
void
link_kick_all(struct rsd *d)
{
	struct dlink *dl, *next;

	for (dl = d->links; dl != NULL; dl = next) {
		next = dl->next;
		link_kick(dl);
	}
}

/**
 * link_goaway_all(d):
 * Tell every peer this daemon opens and accepts no new streams, and close
 * the clients still waiting for a link.
 */
void
link_goaway_all(struct rsd *d)
{
	struct dlink *dl;
	struct engine *e;

	for (dl = d->links; dl != NULL; dl = dl->next) {
		fail_waiting(dl, "shutting down");
		if (dl->state == D_UP && (e = link_engine(dl)) != NULL) {
			engine_goaway(e, WIRE_REASON_SHUTTING_DOWN);
			link_kick(dl);
		}
	}
}

int
link_is_up(const struct dlink *dl)
{

	return (dl != NULL && dl->state == D_UP);
}

/**
 * link_info(dl, li):
 * Describe ${dl} for rstreamctl.
 */
void
link_info(const struct dlink *dl, struct link_info *li)
{
	static const char *states[] = { "down", "connecting",
	    "authenticating", "up", "ended" };
	struct engine *e = link_engine(dl);

	memset(li, 0, sizeof(*li));
	li->name = dl->name;
	li->peer = dl->peer;
	li->dir = dl->t != NULL ? "out" : "in";
	li->tunnel = dl->t != NULL ? dl->t->c->name : "";
	li->state = states[dl->state];
	if (dl->t != NULL && dl->state == D_IDLE && loop_timer_armed(&dl->retry))
		li->state = "retrying";
	li->device = dl->vl != NULL && dl->state == D_UP ?
	    verbs_link_device(dl->vl) : "";
	li->goaway = e != NULL && engine_peer_goaway(e);
	if (e != NULL && dl->state == D_UP) {
		engine_stats(e, &li->st);
		li->have_stats = 1;
	}
}

int
link_is_connecting(const struct dlink *dl)
{

	/* Authenticating is connecting too: the link is not usable yet. */
	return (dl != NULL && (dl->state == D_CONNECTING ||
	    dl->state == D_AUTH));
}

void
link_wait(struct dlink *dl, struct bridge *b)
{

	bridge_set_next(b, dl->waiting);
	dl->waiting = b;
}

const struct dlink *
link_next(const struct dlink *dl)
{

	return (dl->next);
}

struct engine *
link_engine(const struct dlink *dl)
{

	return (dl->vl ? verbs_link_engine(dl->vl) : NULL);
}

struct verbs_link *
link_verbs(const struct dlink *dl)
{

	return (dl->vl);
}

const char *
link_peer(const struct dlink *dl)
{

	return (dl->peer);
}

void
link_set_incoming(struct dlink *dl, uint32_t id, struct bridge *b)
{

	if (id < dl->nincoming)
		dl->incoming[id] = b;
}
