/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "bridge.h"
#include "cm.h"
#include "conf.h"
#include "engine_stream.h"
#include "link.h"
#include "log.h"
#include "loop.h"
#include "resolve.h"
#include "rsd.h"
#include "secmem.h"
#include "sock.h"
#include "tunnel.h"

/* ------------------------------------------------------------- streams */

/* Why a stream may not come in. */
enum admission { ADMITTED, NO_TUNNEL, SHUTTING_DOWN, DENIED, DENIED_CLEAR,
    DENIED_PEER, OLD_VERSION, NO_ORIGIN, UNTRUSTED_ORIGIN, LIMITED };

/*
 * The question both sides ask: room under the tunnel's max_streams.
 * Counts what it refuses.
 */
static enum admission
tunnel_room(struct tun *t)
{

	loop_assert_exclusive();
	if (t->nstreams >= t->c->sz.max_streams) {
		ST_REFUSE(t->st, TR_LIMIT);
		return (LIMITED);
	}
	return (ADMITTED);
}

/*
 * With an identity here, a target tunnel takes streams only from a peer
 * that proved an identity it may use (the peers it names, or any
 * configured peer), still configured; or, with a key and no peers of its
 * own, from one that proved the key and no identity.
 */
static int
peer_admitted(const struct conf *c, const struct conf_tunnel *t,
    const struct dlink *dl, const struct conf_peer *p)
{

	if (!c->identity.set || (link_peer_key(dl) == NULL && t->key.set &&
	    t->peer_mask_n == 0))
		return (1);
	return (p != NULL && conf_tunnel_trusts(c, t, p));
}

/* And a tunnel that encrypts only on a sealed link. */
static enum admission
identity_admits(const struct conf *c, const struct conf_tunnel *t,
    const struct dlink *dl, const struct conf_peer *p)
{

	if (t->encrypt && link_sealing(dl) == NULL)
		return (DENIED_CLEAR);
	return (peer_admitted(c, t, dl, p) ? ADMITTED : DENIED_PEER);
}

/*
 * May ${t}'s target be told the client address (ORIGIN) a peer claims?
 * Without identities here, every peer the tunnel admits may (the key's
 * holders, or anyone with proxy_trust_any_peer); with them, a peer ${p}
 * with origin = true, and one without an identity only with
 * proxy_trust_key_holders.
 */
static int
origin_believed(const struct conf *c, const struct conf_tunnel *t,
    const struct conf_peer *p)
{

	if (!c->identity.set)
		return (1);
	return (p != NULL ? p->origin : t->proxy_trust_key_holders);
}

/*
 * The serving side's questions first: a tunnel of that name that takes
 * new streams, a link that proved its key (keyed tunnels) and speaks at
 * least the tunnel's min_version, and the client's address (ORIGIN) if
 * the target is to be told it; then room.  A client tunnel has none of
 * these to check: its own link carries its key and its version.  Counts
 * what it refuses.
 */
static enum admission
tunnel_admit_incoming(struct rsd *d, struct tun *t, struct dlink *dl,
    uint32_t id)
{
	const struct conf_key *proved = link_key(dl);
	struct engine *e = link_engine(dl);
	enum admission a = ADMITTED;
	const struct conf_peer *p = NULL;

	loop_assert_exclusive();
	if (t == NULL)
		return (d->draining ? SHUTTING_DOWN : NO_TUNNEL);
	if (link_peer_key(dl) != NULL)
		p = conf_peer_by_pub(d->conf, link_peer_key(dl));
	if (t->c->key.set && (proved == NULL || !proved->set ||
	    !conf_key_same(proved, &t->c->key)))
		a = DENIED;
	else
		a = identity_admits(d->conf, t->c, dl, p);
	if (a != ADMITTED) {
		ST_REFUSE(t->st, TR_DENIED);
	} else if (engine_version(e) < t->c->sz.min_version) {
		a = OLD_VERSION;
		ST_REFUSE(t->st, TR_VERSION);
	} else if (t->c->proxy_protocol != 0 &&
	    engine_origin(e, id) == NULL) {
		/* A header naming this host would make every client local. */
		a = NO_ORIGIN;
		ST_REFUSE(t->st, TR_ORIGIN);
	} else if (t->c->proxy_protocol != 0 &&
	    !origin_believed(d->conf, t->c, p)) {
		/* A peer's claims about clients: only if it is trusted. */
		a = UNTRUSTED_ORIGIN;
		ST_REFUSE(t->st, TR_ORIGIN);
	}
	if (a == ADMITTED)
		return (tunnel_room(t));
	return (a);
}

/* A client accepted on ${t}'s listener: its stream, or why not. */
static void
client_arrives(struct tun *t, int fd)
{
	struct bridge *b;
	enum admission a;
	char why[160];

	a = tunnel_room(t);
	if ((b = bridge_client(t, fd, t->link)) == NULL)
		return;
	if (a == LIMITED) {
		snprintf(why, sizeof(why), "stream limit %u reached",
		    (unsigned)t->c->sz.max_streams);
		bridge_refuse_client(b, &t->limit_log, why);
	} else if (link_is_up(t->link)) {
		bridge_open(b);
	} else if (!link_is_connecting(t->link)) {
		/* Waiting is for a link on its way, not one in back-off. */
		ST_ADD(t->st, failed, 1);
		snprintf(why, sizeof(why), "link to %s is down",
		    link_peer(t->link));
		bridge_refuse_client(b, &t->down_log, why);
	}
}

static void
on_accept(void *arg, uint32_t events)
{
	struct tun *t = arg;
	int fd, k;

	(void)events;
	for (k = 0; k < 16; k++) {
		if ((fd = sock_accept(t->lfd, t->lw)) >= 0) {
			if (t->c->accept.kind == CONF_ADDR_TCP)
				sock_nodelay(fd);
			client_arrives(t, fd);
			continue;
		}
		if (errno == EMFILE || errno == ENFILE) {
			ST_ADD(t->st, accept_pauses, 1);
			log_burst_about(&t->emfile_log, loop_now_ms(),
			    LOG_WARNING, NULL, "tunnel %s: out of file "
			    "descriptors (%s); pausing accepts for %d ms at a "
			    "time", t->c->name, strerror(errno),
			    SOCK_ACCEPT_PAUSE_MS);
		} else if (errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR && errno != ECONNABORTED) {
			log_err("tunnel %s: accept: %s", t->c->name,
			    strerror(errno));
		}
		return;
	}
}

/* A client tunnel's link is up: its waiting clients' streams open. */
static void
client_link_up(void *arg, struct dlink *dl)
{
	struct tun *t = arg;
	struct bridge *b, *next;

	(void)dl;
	if (t->link_failed)
		ST_ADD(t->st, link_reconnects, 1);
	t->link_failed = 0;
	for (b = bridge_first(t); b != NULL; b = next) {
		next = bridge_next(b);
		if (bridge_waiting(b))
			bridge_open(b);
	}
}

/* It failed or went down: clients still waiting for it are closed. */
static void
client_link_down(void *arg, struct dlink *dl, const char *why,
    enum verbs_wc_error wce)
{
	struct tun *t = arg;
	struct bridge *b, *next;
	char msg[400];

	if (wce != VERBS_WC_NONE)
		ST_ADD(t->st, completion_errors[wce], 1);
	/* The link closing because the tunnel or the daemon goes is none. */
	if (!t->draining && !t->d->draining && !t->d->stop) {
		ST_ADD(t->st, link_failures, 1);
		t->link_failed = 1;
	}
	snprintf(msg, sizeof(msg), "link to %s failed (%s)", link_peer(dl),
	    why);
	for (b = bridge_first(t); b != NULL; b = next) {
		next = bridge_next(b);
		if (!bridge_waiting(b))
			continue;
		ST_ADD(t->st, failed, 1);
		bridge_refuse_client(b, NULL, msg);
	}
}

/* A peer asks for a stream: the target tunnel of that name, if it may. */
static void
stream_arrives(void *arg, struct dlink *dl, uint32_t id, const char *name)
{
	struct rsd *d = arg;
	struct engine *e = link_engine(dl);
	struct tun *t = tunnel_find_target(d, name);
	uint64_t now = loop_now_ms();

	struct log_burst *b = &d->deny_log;
	int level = LOG_WARNING;
	uint16_t reason;
	char why[200], tn[80] = "";

	switch (tunnel_admit_incoming(d, t, dl, id)) {
	case ADMITTED:
		/* The serving side yields, or not, as its tunnel says. */
		link_set_priority(dl, t->c->sz.priority);
		bridge_incoming(dl, t, id);
		return;
	case SHUTTING_DOWN:
		b = &d->drain_log;
		level = LOG_INFO;
		reason = WIRE_REASON_SHUTTING_DOWN;
		snprintf(why, sizeof(why), "refused a stream for tunnel '%s': "
		    "shutting down", name);
		break;
	case NO_TUNNEL:
		b = &d->open_log;
		reason = WIRE_REASON_NO_TUNNEL;
		snprintf(why, sizeof(why), "refused a stream for tunnel '%s', "
		    "which is not configured here", name);
		break;
	case DENIED:
		reason = WIRE_REASON_DENIED;
		snprintf(why, sizeof(why), "refused a stream: the link is not "
		    "authenticated with this tunnel's key");
		break;
	case DENIED_CLEAR:
		reason = WIRE_REASON_DENIED;
		snprintf(why, sizeof(why), "refused a stream: the tunnel "
		    "encrypts, and the link is not sealed");
		break;
	case DENIED_PEER:
		reason = WIRE_REASON_DENIED;
		snprintf(why, sizeof(why), "refused a stream: %s%s%s may not "
		    "use this tunnel", link_peer_id(dl)[0] != '\0' ?
		    "the peer " : "a peer without an identity",
		    link_peer_id(dl), link_peer_id(dl)[0] != '\0' ?
		    " (not in its peers, or no longer listed)" : "");
		break;
	case UNTRUSTED_ORIGIN:
		b = &d->origin_log;
		reason = WIRE_REASON_NO_ORIGIN;
		snprintf(why, sizeof(why), "refused a stream: %s%s is not "
		    "trusted for client addresses (%s = true), and "
		    "proxy_protocol would pass its claim on",
		    link_peer_id(dl)[0] != '\0' ? "the peer " : "a peer "
		    "without an identity", link_peer_id(dl),
		    link_peer_id(dl)[0] != '\0' ? "origin" :
		    "proxy_trust_key_holders");
		break;
	case OLD_VERSION:
		b = &d->version_log;
		reason = WIRE_REASON_VERSION;
		snprintf(why, sizeof(why), "refused a stream: the link speaks "
		    "protocol version %u, below the tunnel's min_version %u",
		    engine_version(e), (unsigned)t->c->sz.min_version);
		break;
	case NO_ORIGIN:
		b = &d->origin_log;
		reason = WIRE_REASON_NO_ORIGIN;
		snprintf(why, sizeof(why), "refused a stream that does not say "
		    "its client's address (no ORIGIN): proxy_protocol would "
		    "name this host instead");
		break;
	case LIMITED:
	default:
		b = &t->limit_log;
		reason = WIRE_REASON_LIMIT;
		snprintf(why, sizeof(why), "stream limit %u reached, refusing",
		    (unsigned)t->c->sz.max_streams);
		break;
	}
	/* Said once per burst of each kind: a peer can send OPENs at will. */
	if (t != NULL)
		snprintf(tn, sizeof(tn), "tunnel %s: ", t->c->name);
	log_burst_about(b, now, level, &(struct log_about){ t != NULL ?
	    t->c->name : NULL, 0, link_peer(dl) }, "%s%s: %s", tn,
	    link_name(dl), why);
	engine_refuse(e, id, reason);
}

static void
stream_event(void *arg, struct dlink *dl, const struct engine_event *ev)
{

	(void)arg;
	(void)dl;
	bridge_event(ev->user, ev);
}

static int
stream_adopt(void *arg, struct dlink *dl, void *user, struct engine_ring *tx,
    struct engine_ring *rx)
{

	(void)arg;
	return (bridge_adopt(user, dl, tx, rx));
}

static const struct link_ops client_ops = {
	.incoming = NULL,		/* a client link takes no OPEN */
	.event = stream_event,
	.up = client_link_up,
	.down = client_link_down,
	.adopt = stream_adopt,
};

static const struct link_ops incoming_ops = {
	.incoming = stream_arrives,
	.event = stream_event,
	.up = NULL,
	.down = NULL,
	.adopt = stream_adopt,
};

/*
 * The sweep: streams idle past their tunnel's idle_timeout end, and
 * links freed while being accepted get their turn to go (verbs_cm_tick).
 */
static void
on_sweep_job(void *arg)
{
	struct rsd *d = arg;
	struct tun *t;
	uint64_t now = loop_now_ms();

	link_tick(d);
	TAILQ_FOREACH(t, &d->tuns, entry)
		if (t->c->sz.idle_timeout > 0)
			bridge_sweep(t, now);
}

/*
 * Once a second, in a shared turn: the sweep's exclusive turn comes only
 * when it has work, so an idle daemon never stops its workers.
 */
static void
on_sweep(void *arg)
{
	struct rsd *d = arg;
	struct tun *t;
	int due;

	loop_timer_arm(&d->sweep, 1000);
	due = link_tick_due(d);
	TAILQ_FOREACH(t, &d->tuns, entry)
		due |= t->c->sz.idle_timeout > 0 && t->nstreams > 0;
	if (due)
		loop_job_defer(&d->sweep_job);
}

/* ---------------------------------------------------- socket activation */

int
tunnel_activation(struct rsd *d, char *err, size_t errlen)
{
	char **names = NULL;
	int n, i, fd;

	if ((n = sd_listen_fds_with_names(1, &names)) <= 0) {
		if (n < 0)
			snprintf(err, errlen, "cannot take the sockets "
			    "systemd passed: %s", strerror(-n));
		return (n);
	}
	d->act_fds = calloc((size_t)n, sizeof(*d->act_fds));
	d->act_names = names;
	if (d->act_fds == NULL) {
		snprintf(err, errlen, "out of memory");
		return (-1);
	}
	d->nact = (size_t)n;
	for (i = 0; i < n; i++) {
		fd = SD_LISTEN_FDS_START + i;
		d->act_fds[i] = fd;
		if (sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1) <= 0) {
			snprintf(err, errlen, "the descriptor systemd passed "
			    "as '%s' is not a listening stream socket",
			    names[i]);
			return (-1);
		}
		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) ||
		    fcntl(fd, F_SETFD, FD_CLOEXEC)) {
			snprintf(err, errlen, "fcntl: %s", strerror(errno));
			return (-1);
		}
	}
	return (n);
}

/* The activated socket named ${name}, taken out of the list, or -1. */
static int
act_take(struct rsd *d, const char *name)
{
	size_t i;
	int fd;

	for (i = 0; i < d->nact; i++) {
		if (d->act_fds[i] >= 0 && strcmp(d->act_names[i], name) == 0) {
			fd = d->act_fds[i];
			d->act_fds[i] = -1;
			return (fd);
		}
	}
	return (-1);
}

/* Give activated socket ${fd} back (its tunnel went away). */
static void
act_put(struct rsd *d, int fd)
{
	size_t i;

	for (i = 0; i < d->nact; i++) {
		if (d->act_fds[i] == -1 && SD_LISTEN_FDS_START + (int)i == fd) {
			d->act_fds[i] = fd;
			return;
		}
	}
	close(fd);
}

static void
act_warn_unused(struct rsd *d)
{
	size_t i;

	for (i = 0; i < d->nact; i++)
		if (d->act_fds[i] >= 0)
			log_warn("the socket systemd passed as '%s' matches no "
			    "client tunnel; nothing accepts on it",
			    d->act_names[i]);
}

/* ------------------------------------------------------------- tunnels */

static void
tun_unwatch(struct tun *t)
{

	loop_fd_del(t->lw);
	t->lw = NULL;
}

/* Close listener ${fd} of tunnel config ${c} (one from systemd goes back). */
static void
listener_close(struct rsd *d, const struct conf_tunnel *c, int fd,
    int activated, struct sock_file *sf)
{

	if (fd < 0)
		return;
	if (activated) {
		act_put(d, fd);
		return;
	}
	close(fd);
	if (c->accept.kind == CONF_ADDR_UNIX)
		sock_unix_unlink(c->accept.path, sf);
	memset(sf, 0, sizeof(*sf));
}

/* Stop accepting: close the listener. */
static void
tun_close_listener(struct tun *t)
{

	tun_unwatch(t);
	listener_close(t->d, t->c, t->lfd, t->activated, &t->sf);
	t->lfd = -1;
	t->activated = 0;
}

static void
tun_free(struct tun *t)
{

	loop_assert_exclusive();
	TAILQ_REMOVE(&t->d->tuns, t, entry);
	tun_close_listener(t);
	link_free(t->link);
	rname_free(t->target_rn);
	loop_timer_stop(&t->reap);
	if (t->st != NULL && --t->st->refs == 0)
		free(t->st);
	secmem_free(t);
}

static void
on_reap(void *arg)
{
	struct tun *t = arg;

	if (t->draining && t->nstreams == 0) {
		log_info("tunnel %s: the last stream of the old configuration "
		    "ended", t->c->name);
		tun_free(t);
	}
}

/* A draining tunnel goes once its last stream is gone (outside callbacks). */
static void
tun_maybe_reap(struct tun *t)
{

	if (t->draining && t->nstreams == 0 && !loop_timer_armed(&t->reap))
		loop_timer_arm(&t->reap, 0);
}

/* A tunnel for ${c}, in no list, counting into ${st} (NULL: its own). */
static struct tun *
tun_new(struct rsd *d, const struct conf_tunnel *c, struct tun_stats *st)
{
	struct tun *t;

	loop_assert_exclusive();
	/* Its copy of the configuration holds its key (see secmem.h). */
	if ((t = secmem_alloc(sizeof(*t))) == NULL)
		return (NULL);
	if (st == NULL && (st = calloc(1, sizeof(*st))) == NULL) {
		secmem_free(t);
		return (NULL);
	}
	st->refs++;
	t->d = d;
	t->conf = *c;
	t->c = &t->conf;
	t->lfd = -1;
	t->st = st;
	TAILQ_INIT(&t->streams);
	loop_timer_init(&t->reap, d->lp, on_reap, t);
	TAILQ_INSERT_TAIL(&d->tuns, t, entry);
	return (t);
}

/* The running, not draining, tunnel called ${name}. */
static struct tun *
live_by_name(struct rsd *d, const char *name)
{
	struct tun *t;

	TAILQ_FOREACH(t, &d->tuns, entry)
		if (!t->draining && strcmp(t->c->name, name) == 0)
			return (t);
	return (NULL);
}

/* The running client tunnel listening on ${a}. */
static struct tun *
live_by_accept(struct rsd *d, const struct conf_addr *a)
{
	struct tun *t;

	TAILQ_FOREACH(t, &d->tuns, entry)
		if (!t->draining && t->lfd >= 0 && t->c->has_accept &&
		    conf_addr_same(&t->c->accept, a))
			return (t);
	return (NULL);
}

/* Retire ${t}: no new streams; open ones finish on its own link. */
static void
tun_retire(struct tun *t, const char *why)
{

	t->draining = 1;
	tun_close_listener(t);
	if (t->link != NULL)
		link_client_retire(t->link);
	if (t->nstreams > 0)
		log_notice("tunnel %s: %s; its %u open stream%s on",
		    t->c->name, why, (unsigned)t->nstreams,
		    t->nstreams == 1 ? " carries" : "s carry");
	else
		log_notice("tunnel %s: %s", t->c->name, why);
	tun_maybe_reap(t);
}

/* -------------------------------------------------------------- applying */

/*
 * What applying a configuration does with each of its tunnels.  Either
 * the running tunnel is kept as it is, or a new one (nt) replaces it: a
 * client tunnel's new one takes over the listener of the running tunnel
 * on the same address (from), or one systemd passed, or binds its own.
 */
struct plan {
	struct tun *keep;
	struct tun *nt;
	struct tun *from;
	int perms_set;			/* from's socket file was changed */
	struct sock_perms perms;	/* what it had */
};

/* Whether a handed-over Unix listener needs other permissions. */
static int
perms_differ(const struct conf_tunnel *x, const struct conf_tunnel *y)
{

	return (x->unix_mode != y->unix_mode ||
	    strcmp(x->unix_owner, y->unix_owner) != 0 ||
	    strcmp(x->unix_group, y->unix_group) != 0);
}

/* Prefix ${err} with the file, line and tunnel at fault. */
static void
blame(const struct conf *nc, const struct conf_tunnel *c, char *err,
    size_t errlen)
{
	char why[1024];

	snprintf(why, sizeof(why), "%s", err);
	snprintf(err, errlen, "%s:%d: tunnel %s: %s", nc->file, c->line,
	    c->name, why);
}

/* A new client tunnel's listener: handed over, from systemd, or bound. */
static int
plan_listener(struct rsd *d, const struct conf *nc, struct plan *pl,
    size_t i, char *err, size_t errlen)
{
	const struct conf_tunnel *c = &nc->tunnels[i];
	/* Looked up by conf_load, before the apply: no name service here. */
	const struct sock_ids ids = { (uid_t)c->unix_uid, (gid_t)c->unix_gid };
	struct tun *nt = pl[i].nt, *t;
	size_t j;

	/*
	 * The running tunnel of the same name on the same address hands its
	 * listener over; failing that, another tunnel on that address does
	 * (a renamed tunnel), except on port 0, which names no address.
	 */
	t = live_by_name(d, c->name);
	if (t == NULL || t->lfd < 0 || !t->c->has_accept ||
	    !conf_addr_same(&t->c->accept, &c->accept))
		t = c->accept.kind == CONF_ADDR_TCP &&
		    strcmp(c->accept.port, "0") == 0 ? NULL :
		    live_by_accept(d, &c->accept);
	/* Each listener is handed over once, and never from a kept tunnel. */
	for (j = 0; t != NULL && j < i; j++)
		if (pl[j].keep == t || pl[j].from == t)
			t = NULL;
	for (j = i + 1; t != NULL && j < nc->ntunnels; j++)
		if (pl[j].keep == t)
			t = NULL;
	if ((pl[i].from = t) != NULL) {
		if (c->accept.kind == CONF_ADDR_UNIX && !t->activated &&
		    perms_differ(t->c, c)) {
			if (sock_unix_perms(c->accept.path, &t->sf,
			    c->unix_mode, &ids, &pl[i].perms, err, errlen)) {
				blame(nc, c, err, errlen);
				return (-1);
			}
			pl[i].perms_set = 1;
		}
	} else if ((nt->lfd = act_take(d, c->name)) >= 0) {
		nt->activated = 1;
		sock_local_text(nt->lfd, nt->bound, sizeof(nt->bound));
	} else if ((nt->lfd = sock_listen(&c->accept, c->unix_mode, &ids,
	    &nt->sf, nt->bound, sizeof(nt->bound), err, errlen)) < 0) {
		blame(nc, c, err, errlen);
		return (-1);
	}
	/* Watched from the commit on; made now, as it can fail. */
	if ((nt->lw = loop_fd_add(d->lp, pl[i].from ? pl[i].from->lfd :
	    nt->lfd, 0, on_accept, nt)) == NULL ||
	    (nt->link = link_client_new(d, nt->c, nc, &client_ops,
	    nt)) == NULL) {
		snprintf(err, errlen, "tunnel %s: out of memory", c->name);
		return (-1);
	}
	return (0);
}

/* Everything about tunnels that can fail: new tunnels, listeners, links. */
static int
plan_tunnels(struct rsd *d, const struct conf *nc, struct plan *pl,
    char *err, size_t errlen)
{
	const struct conf *oc = d->conf;
	const struct conf_tunnel *c;
	struct tun *old;
	size_t i;
	int same_source;

	same_source = oc == nc || (oc->has_source == nc->has_source &&
	    (!nc->has_source || conf_addr_same(&oc->source, &nc->source)));
	for (i = 0; i < nc->ntunnels; i++) {
		c = &nc->tunnels[i];
		old = live_by_name(d, c->name);
		if (old != NULL && conf_tunnel_same(old->c, c) &&
		    (!c->has_accept || same_source))
			pl[i].keep = old;
	}
	for (i = 0; i < nc->ntunnels; i++) {
		if (pl[i].keep != NULL)
			continue;
		c = &nc->tunnels[i];
		/* A changed tunnel keeps counting where the old one was. */
		old = live_by_name(d, c->name);
		if ((pl[i].nt = tun_new(d, c, old != NULL ? old->st : NULL)) ==
		    NULL) {
			snprintf(err, errlen, "tunnel %s: out of memory",
			    c->name);
			return (-1);
		}
		/* Not live until the commit: keep it out of every lookup. */
		pl[i].nt->draining = 1;
		if (c->has_target && c->target.kind == CONF_ADDR_TCP &&
		    (pl[i].nt->target_rn = rname_new(d->res, c->target.host,
		    c->target.port, 0)) == NULL) {
			snprintf(err, errlen, "tunnel %s: out of memory",
			    c->name);
			return (-1);
		}
		if (c->has_accept && plan_listener(d, nc, pl, i, err, errlen))
			return (-1);
	}
	return (0);
}

/* Undo a plan that failed part way: the daemon is as it was. */
static void
undo(const struct conf *nc, struct plan *pl)
{
	size_t i;

	for (i = 0; i < nc->ntunnels; i++) {
		if (pl[i].perms_set)
			(void)sock_unix_restore(nc->tunnels[i].accept.path,
			    &pl[i].from->sf, &pl[i].perms);
		/* A listener to be handed over is not nt's yet: it stays. */
		if (pl[i].nt != NULL)
			tun_free(pl[i].nt);
	}
}

/* New tunnel ${pl->nt} goes live (nothing here can fail). */
static void
commit_tunnel(struct plan *pl)
{
	struct tun *nt = pl->nt, *from = pl->from;
	const struct conf_tunnel *c = nt->c;

	nt->draining = 0;
	if (c->has_target) {
		log_info("tunnel %s: serving target %s", c->name,
		    c->target.text);
		return;
	}
	if (from != NULL) {
		tun_unwatch(from);
		nt->lfd = from->lfd;
		nt->activated = from->activated;
		nt->sf = from->sf;
		memcpy(nt->bound, from->bound, sizeof(nt->bound));
		from->lfd = -1;
		from->activated = 0;
		memset(&from->sf, 0, sizeof(from->sf));
	}
	if (loop_fd_set(nt->lw, EPOLLIN))
		log_err("tunnel %s: cannot watch %s: %s", c->name, nt->bound,
		    strerror(errno));
	link_client_start(nt->link);
	/* Tests and scripts read the bound address from this line. */
	log_notice("tunnel %s: accepting on %s%s, peer %s", c->name,
	    nt->bound, nt->activated ? " (socket from systemd)" : "",
	    link_peer(nt->link));
}

/*
 * Make the running daemon match ${nc} (which may be d->conf itself, at
 * start).  Everything that can fail is done first (plan_*), and undone if
 * anything fails: the daemon runs on as it was.  Then, with nothing left
 * to fail: unchanged tunnels stay as they are; changed and removed ones
 * drain; new ones start.  A changed tunnel's listener is handed over,
 * never closed, so no client is turned away during a reload.
 */
static int
tunnel_apply(struct rsd *d, struct conf *nc, char *err, size_t errlen)
{
	struct tun_list live = TAILQ_HEAD_INITIALIZER(live);
	struct cm_listen_plan *lp = NULL;
	struct plan *pl;
	struct tun *t, *next;
	size_t i;

	loop_assert_exclusive();
	if ((pl = calloc(nc->ntunnels + 1, sizeof(*pl))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (-1);
	}
	if (plan_tunnels(d, nc, pl, err, errlen) ||
	    (lp = cm_listen_plan(d, nc, err, errlen)) == NULL) {
		undo(nc, pl);
		free(pl);
		return (-1);
	}

	/* The configured tunnels, in the file's order, make up the list... */
	cm_listen_commit(d, nc, lp);
	for (i = 0; i < nc->ntunnels; i++) {
		t = pl[i].keep != NULL ? pl[i].keep : pl[i].nt;
		TAILQ_REMOVE(&d->tuns, t, entry);
		TAILQ_INSERT_TAIL(&live, t, entry);
	}
	/* (new ones take their listeners over before the old ones close)... */
	for (i = 0; i < nc->ntunnels; i++)
		if (pl[i].nt != NULL)
			commit_tunnel(&pl[i]);
	/* ...then those that drain: the old ones and those already draining. */
	for (t = TAILQ_FIRST(&d->tuns); t != NULL; t = next) {
		next = TAILQ_NEXT(t, entry);
		if (!t->draining)
			tun_retire(t, conf_tunnel_find(nc, t->c->name) != NULL ?
			    "configuration changed" :
			    "removed from the configuration");
	}
	TAILQ_CONCAT(&live, &d->tuns, entry);
	TAILQ_CONCAT(&d->tuns, &live, entry);
	if (d->conf != nc)
		conf_free(d->conf);
	d->conf = nc;
	free(pl);
	return (0);
}

int
tunnel_start(struct rsd *d, char *err, size_t errlen)
{

	TAILQ_INIT(&d->tuns);
	loop_timer_init(&d->sweep, d->lp, on_sweep, d);
	loop_timer_share(&d->sweep, 1);
	loop_job_init(&d->sweep_job, d->lp, on_sweep_job, d);
	if ((d->res = resolver_new(d->lp, err, errlen)) == NULL ||
	    cm_start(d, &incoming_ops, d, err, errlen) != 0 ||
	    tunnel_apply(d, d->conf, err, errlen) != 0)
		return (-1);
	act_warn_unused(d);
	loop_timer_arm(&d->sweep, 1000);
	return (0);
}

/*
 * What admission now refuses, a reload ends: streams of target tunnels
 * (configured, or draining after a change) whose peer the tunnel of
 * their name now configured would not admit (its peers no longer name
 * it), on links that stay up for the peer's other tunnels.  Peers no
 * longer among the peers at all are link_revoke's, whose links end with
 * their streams.  A tunnel a reload removed drains as before.
 */
static void
revoke_streams(struct rsd *d)
{
	const struct conf_peer *p;
	struct tun *t, *now;
	struct bridge *b, *next;
	struct dlink *dl;
	char why[200];

	loop_assert_exclusive();
	TAILQ_FOREACH(t, &d->tuns, entry) {
		if (!t->c->has_target ||
		    (now = tunnel_find_target(d, t->c->name)) == NULL)
			continue;
		for (b = bridge_first(t); b != NULL; b = next) {
			next = bridge_next(b);
			if ((dl = bridge_serving(b)) == NULL)
				continue;
			p = NULL;
			if (link_peer_key(dl) != NULL && (p =
			    conf_peer_by_pub(d->conf, link_peer_key(dl))) ==
			    NULL)
				continue;
			if (peer_admitted(d->conf, now->c, dl, p))
				continue;
			if (p != NULL)
				snprintf(why, sizeof(why), "revoked by a "
				    "reload: the peer is %s, which the tunnel "
				    "no longer names in its peers", p->name);
			else
				snprintf(why, sizeof(why), "revoked by a "
				    "reload: the tunnel no longer takes a peer "
				    "without an identity");
			d->streams_revoked++;
			bridge_revoke(b, why);
		}
	}
}

int
tunnel_reload(struct rsd *d, struct conf *nc, char *err, size_t errlen)
{

	if (d->draining) {
		snprintf(err, errlen, "the daemon is stopping");
		return (-1);
	}
	if (tunnel_apply(d, nc, err, errlen))
		return (-1);
	link_revoke(d);
	revoke_streams(d);
	act_warn_unused(d);
	return (0);
}

void
tunnel_drain(struct rsd *d)
{
	struct tun *t;

	d->draining = 1;
	TAILQ_FOREACH(t, &d->tuns, entry)
		tun_close_listener(t);
	cm_listen_close(d);
	link_goaway_all(d);
}

uint32_t
tunnel_streams(const struct rsd *d)
{
	const struct tun *t;
	uint32_t n = 0;

	TAILQ_FOREACH(t, &d->tuns, entry)
		n += t->nstreams;
	return (n);
}

void
tunnel_stop(struct rsd *d)
{
	struct tun *t;
	size_t i;

	d->stop = 1;
	loop_timer_stop(&d->sweep);
	loop_job_cancel(&d->sweep_job);
	/*
	 * Links first: resetting their streams frees the bridges, which
	 * need their tunnels.  Client tunnels own their links.
	 */
	TAILQ_FOREACH(t, &d->tuns, entry) {
		link_free(t->link);
		t->link = NULL;
	}
	cm_stop(d);
	while ((t = TAILQ_FIRST(&d->tuns)) != NULL)
		tun_free(t);
	resolver_free(d->res);
	d->res = NULL;
	for (i = 0; i < d->nact; i++) {
		if (d->act_fds[i] >= 0)
			close(d->act_fds[i]);
		free(d->act_names[i]);
	}
	free(d->act_fds);
	free(d->act_names);
	d->act_fds = NULL;
	d->act_names = NULL;
	d->nact = 0;
}

struct tun *
tunnel_find(struct rsd *d, const char *name)
{

	return (live_by_name(d, name));
}

struct tun *
tunnel_find_target(struct rsd *d, const char *name)
{
	struct tun *t;

	if (name == NULL || d->draining)
		return (NULL);
	t = live_by_name(d, name);
	return (t != NULL && t->c->has_target ? t : NULL);
}

void
tunnel_status(const struct rsd *d, char *buf, size_t len)
{
	unsigned streams = tunnel_streams(d), up, links = link_count(d, &up);
	size_t ntuns = d->conf->ntunnels;
	char why[600];
	int n;

	if (d->draining) {
		snprintf(buf, len, "stopping: waiting for %u stream%s to "
		    "finish", streams, streams == 1 ? "" : "s");
		return;
	}
	n = snprintf(buf, len, "%zu tunnel%s, %u stream%s, %u of %u link%s "
	    "up", ntuns, ntuns == 1 ? "" : "s", streams,
	    streams == 1 ? "" : "s", up, links, links == 1 ? "" : "s");
	/* Until RDMA is there, this is what the operator has to do. */
	(void)cm_rdma(d, why, sizeof(why));
	if (why[0] != '\0' && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "; %s", why);
	/* A failed reload is news until the next one works. */
	if (d->reload_error[0] != '\0' && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "; reload failed, running "
		    "the previous configuration: %s", d->reload_error);
}

static void
warn_line(void *arg, const char *msg)
{

	(void)arg;
	log_warn("%s", msg);
}

void
tunnel_warn(struct rsd *d)
{

	if (conf_warn(d->conf, !d->noauth_warned, warn_line, NULL))
		d->noauth_warned = 1;
}
