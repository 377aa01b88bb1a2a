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
#include "conf.h"
#include "link.h"
#include "log.h"
#include "loop.h"
#include "resolve.h"
#include "rsd.h"
#include "sock.h"
#include "tunnel.h"
#include "verbs.h"

/* How long a listener rests when the process is out of descriptors. */
#define ACCEPT_PAUSE_MS	200

static void
on_accept(void *arg, uint32_t events)
{
	struct tun *t = arg;
	char held[64];
	int fd, k;

	(void)events;
	for (k = 0; k < 16; k++) {
		fd = accept4(t->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			bridge_client(t, fd);
			continue;
		}
		if (errno == EMFILE || errno == ENFILE) {
			/* Back off instead of spinning (or dying). */
			t->st->accept_pauses++;
			if (log_burst(&t->emfile_log, loop_now_ms(), held,
			    sizeof(held)))
				log_warn("tunnel %s: out of file descriptors "
				    "(%s); pausing accepts for %d ms at a "
				    "time%s", t->c->name, strerror(errno),
				    ACCEPT_PAUSE_MS, held);
			loop_fd_pause(t->lw, ACCEPT_PAUSE_MS);
		} else if (errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR && errno != ECONNABORTED) {
			log_err("tunnel %s: accept: %s", t->c->name,
			    strerror(errno));
		}
		return;
	}
}

/* How long the RDMA CM channel rests after an error it keeps returning. */
#define CM_PAUSE_MS	1000

static void
on_cm(void *arg, uint32_t events)
{
	struct rsd *d = arg;
	struct verbs_ev ev;
	char held[64];
	int k, rc;

	(void)events;
	for (k = 0; k < 64; k++) {
		if ((rc = verbs_cm_handle(d->cm, &ev)) < 0) {
			/* Level-triggered: retrying at once would spin. */
			if (log_burst(&d->cm_log, loop_now_ms(), held,
			    sizeof(held)))
				log_err("the RDMA CM event channel failed: %s; "
				    "retrying every %d ms%s", strerror(errno),
				    CM_PAUSE_MS, held);
			loop_fd_pause(d->cm_w, CM_PAUSE_MS);
		}
		if (rc <= 0)
			return;
		link_cm_event(d, &ev);
	}
}

/*
 * Once a second: streams idle past their tunnel's idle_timeout end, and
 * links freed while being accepted get their turn to go (verbs_cm_tick).
 */
static void
on_sweep(void *arg)
{
	struct rsd *d = arg;
	struct tun *t;
	uint64_t now = loop_now_ms();

	loop_timer_arm(&d->sweep, 1000);
	verbs_cm_tick(d->cm);
	TAILQ_FOREACH(t, &d->tuns, entry)
		if (t->c->sz.idle_timeout > 0)
			bridge_sweep(t, now);
}

/* ---------------------------------------------------- socket activation */

/**
 * tunnel_activation(d, err, errlen):
 * Take the listening sockets systemd passed (socket activation); each is
 * used by the client tunnel its FileDescriptorName= names.  Returns the
 * number taken, or -1 with the reason in ${err}.
 */
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

	TAILQ_REMOVE(&t->d->tuns, t, entry);
	tun_close_listener(t);
	link_free(t->link);
	rname_free(t->target_rn);
	loop_timer_stop(&t->reap);
	if (t->st != NULL && --t->st->refs == 0)
		free(t->st);
	explicit_bzero(&t->conf.key, sizeof(t->conf.key));
	free(t);
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

void
tunnel_stream_gone(struct tun *t)
{

	tun_maybe_reap(t);
}

/* A tunnel for ${c}, in no list, counting into ${st} (NULL: its own). */
static struct tun *
tun_new(struct rsd *d, const struct conf_tunnel *c, struct tun_stats *st)
{
	struct tun *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return (NULL);
	if (st == NULL && (st = calloc(1, sizeof(*st))) == NULL) {
		free(t);
		return (NULL);
	}
	st->refs++;
	t->d = d;
	t->conf = *c;
	t->c = &t->conf;
	t->lfd = -1;
	t->st = st;
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
			    c->unix_mode, c->unix_owner, c->unix_group,
			    &pl[i].perms, err, errlen)) {
				blame(nc, c, err, errlen);
				return (-1);
			}
			pl[i].perms_set = 1;
		}
	} else if ((nt->lfd = act_take(d, c->name)) >= 0) {
		nt->activated = 1;
		sock_local_text(nt->lfd, nt->bound, sizeof(nt->bound));
	} else if ((nt->lfd = sock_listen(&c->accept, c->unix_mode,
	    c->unix_owner, c->unix_group, &nt->sf, nt->bound,
	    sizeof(nt->bound), err, errlen)) < 0) {
		blame(nc, c, err, errlen);
		return (-1);
	}
	/* Watched from the commit on; made now, as it can fail. */
	if ((nt->lw = loop_fd_add(d->lp, pl[i].from ? pl[i].from->lfd :
	    nt->lfd, 0, on_accept, nt)) == NULL ||
	    (nt->link = link_client_new(nt, nc)) == NULL) {
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
	}
	if (lc->max_streams > WIRE_STREAMS_MAX)
		lc->max_streams = WIRE_STREAMS_MAX;
	lc->ack_timeout = (uint8_t)c->ack_timeout;
	lc->retry_count = (uint8_t)c->retry_count;
}

static int
has_target(const struct conf *c)
{
	size_t i;

	for (i = 0; i < c->ntunnels; i++)
		if (c->tunnels[i].has_target)
			return (1);
	return (0);
}

/*
 * The RDMA listeners ${nc} needs, into ${nl}: those already listening on
 * the same address are taken over (d->lsn[i] becomes NULL), the others
 * made.
 */
static int
plan_rdma(struct rsd *d, const struct conf *nc, struct verbs_listener **nl,
    char *err, size_t errlen)
{
	const struct conf *oc = d->conf;
	struct verbs_link_conf lc;
	size_t i, j;

	if (!has_target(nc))
		return (0);
	listener_conf(nc, &lc);
	for (j = 0; j < nc->nlisten; j++) {
		for (i = 0; i < d->nlsn && oc != nc; i++) {
			if (d->lsn[i] != NULL && conf_addr_same(
			    &oc->listen[i].addr, &nc->listen[j].addr)) {
				nl[j] = d->lsn[i];
				d->lsn[i] = NULL;
				break;
			}
		}
		if (nl[j] != NULL)
			continue;
		nl[j] = verbs_listen(d->cm, nc->listen[j].addr.host,
		    nc->listen[j].addr.port, &lc, d, err, errlen);
		if (nl[j] == NULL)
			return (-1);
		verbs_listener_set_gate(nl[j], link_gate, d);
		log_notice("listening for RDMA links on %s",
		    nc->listen[j].addr.text);
	}
	return (0);
}

/* Undo a plan that failed part way: the daemon is as it was. */
static void
undo(struct rsd *d, const struct conf *nc, struct plan *pl,
    struct verbs_listener **nl)
{
	const struct conf *oc = d->conf;
	struct tun *nt;
	size_t i, j;

	for (i = 0; i < nc->ntunnels; i++) {
		if (pl[i].perms_set)
			(void)sock_unix_restore(nc->tunnels[i].accept.path,
			    &pl[i].from->sf, &pl[i].perms);
		/* A listener to be handed over is not nt's yet: it stays. */
		if ((nt = pl[i].nt) != NULL)
			tun_free(nt);
	}
	for (j = 0; j < nc->nlisten; j++) {
		if (nl[j] == NULL)
			continue;
		/* Give taken listeners back to where they were. */
		for (i = 0; i < d->nlsn; i++)
			if (d->lsn[i] == NULL && oc != nc && conf_addr_same(
			    &oc->listen[i].addr, &nc->listen[j].addr))
				break;
		if (i < d->nlsn)
			d->lsn[i] = nl[j];
		else
			verbs_listener_free(nl[j]);
	}
}

/* Switch to ${nl} as the RDMA listeners (nothing here can fail). */
static void
commit_rdma(struct rsd *d, const struct conf *nc, struct verbs_listener **nl)
{
	struct verbs_link_conf lc;
	size_t i;

	for (i = 0; i < d->nlsn; i++) {
		if (d->lsn[i] != NULL) {
			log_notice("no longer listening for RDMA links on %s",
			    d->conf->listen[i].addr.text);
			verbs_listener_free(d->lsn[i]);
		}
	}
	free(d->lsn);
	d->lsn = nl;
	d->nlsn = has_target(nc) ? nc->nlisten : 0;
	listener_conf(nc, &lc);
	for (i = 0; i < d->nlsn; i++)
		verbs_listener_set_conf(d->lsn[i], &lc);
	if (d->nlsn > 0)
		log_info("incoming links: sq_size %u, rq_size %u, inline_size "
		    "%u, %u streams", (unsigned)lc.sq_size,
		    (unsigned)lc.rq_size, (unsigned)lc.inline_size,
		    (unsigned)lc.max_streams);
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
	struct verbs_listener **nl;
	struct plan *pl;
	struct tun *t, *next;
	size_t i;
	int rc = -1;

	pl = calloc(nc->ntunnels + 1, sizeof(*pl));
	nl = calloc(nc->nlisten + 1, sizeof(*nl));
	if (pl == NULL || nl == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (plan_tunnels(d, nc, pl, err, errlen) ||
	    plan_rdma(d, nc, nl, err, errlen)) {
		undo(d, nc, pl, nl);
		free(nl);
		goto out;
	}

	/* The configured tunnels, in the file's order, make up the list... */
	commit_rdma(d, nc, nl);
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
	rc = 0;
out:
	free(pl);
	return (rc);
}

/**
 * tunnel_start(d, err, errlen):
 * Bind every local listener, start every client tunnel's link, and listen
 * for RDMA links, as d->conf says.  Returns 0, or -1 with the reason in
 * ${err}.
 */
int
tunnel_start(struct rsd *d, char *err, size_t errlen)
{

	if ((d->res = resolver_new(d->lp, err, errlen)) == NULL ||
	    (d->cm = verbs_cm_new(err, errlen)) == NULL)
		return (-1);
	if ((d->cm_w = loop_fd_add(d->lp, verbs_cm_fd(d->cm), EPOLLIN, on_cm,
	    d)) == NULL) {
		snprintf(err, errlen, "cannot watch the RDMA CM channel");
		return (-1);
	}
	if (tunnel_apply(d, d->conf, err, errlen))
		return (-1);
	act_warn_unused(d);
	loop_timer_init(&d->sweep, d->lp, on_sweep, d);
	loop_timer_arm(&d->sweep, 1000);
	return (0);
}

/**
 * tunnel_reload(d, nc, err, errlen):
 * Switch to configuration ${nc} (already loaded and checked): add, change
 * and remove tunnels; open streams carry on.  On success ${nc} is the
 * daemon's and 0 is returned; on error nothing changed, ${nc} is still
 * the caller's, and -1 is returned with the reason in ${err}.
 */
int
tunnel_reload(struct rsd *d, struct conf *nc, char *err, size_t errlen)
{

	if (d->draining) {
		snprintf(err, errlen, "the daemon is stopping");
		return (-1);
	}
	if (tunnel_apply(d, nc, err, errlen))
		return (-1);
	act_warn_unused(d);
	return (0);
}

/**
 * tunnel_drain(d):
 * Stop taking new streams (close every listener, tell every peer GOAWAY)
 * and let the open ones finish.
 */
void
tunnel_drain(struct rsd *d)
{
	struct tun *t;
	size_t i;

	d->draining = 1;
	TAILQ_FOREACH(t, &d->tuns, entry)
		tun_close_listener(t);
	for (i = 0; i < d->nlsn; i++)
		verbs_listener_free(d->lsn[i]);
	free(d->lsn);
	d->lsn = NULL;
	d->nlsn = 0;
	link_goaway_all(d);
}

/**
 * tunnel_streams(d):
 * How many streams are open.
 */
uint32_t
tunnel_streams(const struct rsd *d)
{
	const struct tun *t;
	uint32_t n = 0;

	TAILQ_FOREACH(t, &d->tuns, entry)
		n += t->nstreams;
	return (n);
}

/**
 * tunnel_stop(d):
 * Close every listener and link (their streams are reset) and free every
 * tunnel.
 */
void
tunnel_stop(struct rsd *d)
{
	struct tun *t;
	size_t i;

	d->stop = 1;
	loop_timer_stop(&d->sweep);
	/* Links first: resetting their streams frees the bridges. */
	while (d->links != NULL)
		link_free(d->links);
	while ((t = TAILQ_FIRST(&d->tuns)) != NULL)
		tun_free(t);
	for (i = 0; i < d->nlsn; i++)
		verbs_listener_free(d->lsn[i]);
	free(d->lsn);
	d->lsn = NULL;
	d->nlsn = 0;
	loop_fd_del(d->cm_w);
	d->cm_w = NULL;
	verbs_cm_free(d->cm);
	d->cm = NULL;
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

/**
 * tunnel_find(d, name):
 * The configured (not draining) tunnel called ${name}, or NULL.
 */
struct tun *
tunnel_find(struct rsd *d, const char *name)
{

	return (live_by_name(d, name));
}

/**
 * tunnel_find_target(d, name):
 * The target tunnel called ${name} that takes new streams, or NULL.
 */
struct tun *
tunnel_find_target(struct rsd *d, const char *name)
{
	struct tun *t;

	if (name == NULL || d->draining)
		return (NULL);
	t = live_by_name(d, name);
	return (t != NULL && t->c->has_target ? t : NULL);
}
