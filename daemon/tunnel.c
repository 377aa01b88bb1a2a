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

static void
on_cm(void *arg, uint32_t events)
{
	struct rsd *d = arg;
	struct verbs_ev ev;
	int k;

	(void)events;
	for (k = 0; k < 64; k++) {
		if (verbs_cm_handle(d->cm, &ev) <= 0)
			return;
		link_cm_event(d, &ev);
	}
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
}

/* Once a second: streams idle past their tunnel's idle_timeout end. */
static void
on_sweep(void *arg)
{
	struct rsd *d = arg;
	struct tun *t;
	uint64_t now = loop_now_ms();

	loop_timer_arm(&d->sweep, 1000);
	for (t = d->tuns; t != NULL; t = t->next)
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

/* Stop accepting: close the listener (a socket from systemd goes back). */
static void
tun_close_listener(struct tun *t)
{

	tun_unwatch(t);
	if (t->lfd < 0)
		return;
	if (t->activated) {
		act_put(t->d, t->lfd);
	} else {
		close(t->lfd);
		if (t->c->accept.kind == CONF_ADDR_UNIX)
			unlink(t->c->accept.path);
	}
	t->lfd = -1;
	t->activated = 0;
}

static int
tun_watch(struct tun *t)
{

	t->lw = loop_fd_add(t->d->lp, t->lfd, EPOLLIN, on_accept, t);
	return (t->lw == NULL ? -1 : 0);
}

static void
tun_free(struct tun *t)
{
	struct tun **p;

	for (p = &t->d->tuns; *p != NULL; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
	tun_close_listener(t);
	link_free(t->link);
	loop_timer_stop(&t->reap);
	if (t->st != NULL && --t->st->refs == 0)
		free(t->st);
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

/**
 * tunnel_stream_gone(t):
 * A stream of ${t} ended (bridge_free calls this).
 */
void
tunnel_stream_gone(struct tun *t)
{

	tun_maybe_reap(t);
}

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
	return (t);
}

/* The running, not draining, tunnel called ${name}. */
static struct tun *
live_by_name(struct rsd *d, const char *name)
{
	struct tun *t;

	for (t = d->tuns; t != NULL; t = t->next)
		if (!t->draining && strcmp(t->c->name, name) == 0)
			return (t);
	return (NULL);
}

/* The running client tunnel listening on ${a}. */
static struct tun *
live_by_accept(struct rsd *d, const struct conf_addr *a)
{
	struct tun *t;

	for (t = d->tuns; t != NULL; t = t->next)
		if (!t->draining && t->lfd >= 0 && t->c->has_accept &&
		    conf_addr_same(&t->c->accept, a))
			return (t);
	return (NULL);
}

/* What applying a configuration does with each of its tunnels. */
struct plan {
	struct tun *keep;	/* unchanged: the running tunnel stays */
	struct tun *from;	/* takes over this tunnel's listener */
	int lfd;		/* or this new one */
	int activated;
	char bound[160];
};

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

static int
same_listen(const struct conf_listen *x, const struct conf_listen *y)
{

	return (conf_addr_same(&x->addr, &y->addr));
}

/*
 * Make the running daemon match ${nc}.  Everything that can fail (binding
 * listeners) is done first; if anything fails it is all undone and the
 * daemon runs on as it was.  Then, with nothing left to fail: unchanged
 * tunnels stay as they are; changed and removed ones drain; new ones
 * start.  A changed tunnel's listener is handed over, never closed, so
 * no client is turned away during a reload.
 */
static int
tunnel_apply(struct rsd *d, struct conf *nc, char *err, size_t errlen)
{
	struct conf *oc = d->conf == nc ? NULL : d->conf;
	struct verbs_listener **nl = NULL;
	struct verbs_link_conf lc;
	struct plan *pl = NULL;
	struct tun *t, *old, *head = NULL, **tail = &head, *nt;
	struct tun **retiring = NULL;
	const struct conf_tunnel *c;
	size_t i, j, ntarget = 0, nold = 0, nretiring = 0;
	int same_source, rc = -1;

	same_source = oc == NULL || (oc->has_source == nc->has_source &&
	    (!nc->has_source || conf_addr_same(&oc->source, &nc->source)));
	if ((pl = calloc(nc->ntunnels + 1, sizeof(*pl))) == NULL ||
	    (nl = calloc(nc->nlisten + 1, sizeof(*nl))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (i = 0; i < nc->ntunnels; i++)
		pl[i].lfd = -1;

	/* 1. Everything that can fail. */
	for (i = 0; i < nc->ntunnels; i++) {
		c = &nc->tunnels[i];
		ntarget += c->has_target;
		old = live_by_name(d, c->name);
		if (old != NULL && conf_tunnel_same(old->c, c) &&
		    (!c->has_accept || same_source))
			pl[i].keep = old;
	}
	for (i = 0; i < nc->ntunnels; i++) {
		c = &nc->tunnels[i];
		if (pl[i].keep != NULL || !c->has_accept)
			continue;
		/* Port 0 may be written twice: hand each listener over once. */
		t = live_by_accept(d, &c->accept);
		for (j = 0; t != NULL && j < nc->ntunnels; j++)
			if (pl[j].keep == t || pl[j].from == t)
				t = NULL;
		if ((pl[i].from = t) != NULL)
			continue;
		if ((pl[i].lfd = act_take(d, c->name)) >= 0) {
			pl[i].activated = 1;
			sock_local_text(pl[i].lfd, pl[i].bound,
			    sizeof(pl[i].bound));
			continue;
		}
		pl[i].lfd = sock_listen(&c->accept, c->unix_mode,
		    c->unix_owner, c->unix_group, pl[i].bound,
		    sizeof(pl[i].bound), err, errlen);
		if (pl[i].lfd < 0) {
			/* The message says what; say which tunnel. */
			char why[1024];

			snprintf(why, sizeof(why), "%s", err);
			snprintf(err, errlen, "%s:%d: tunnel %s: %s", nc->file,
			    c->line, c->name, why);
			goto fail;
		}
	}
	listener_conf(nc, &lc);
	for (j = 0; ntarget > 0 && j < nc->nlisten; j++) {
		for (i = 0; i < d->nlsn; i++) {
			if (d->lsn[i] != NULL && oc != NULL &&
			    same_listen(&oc->listen[i], &nc->listen[j])) {
				nl[j] = d->lsn[i];
				d->lsn[i] = NULL;	/* taken */
				break;
			}
		}
		if (nl[j] != NULL)
			continue;
		nl[j] = verbs_listen(d->cm, nc->listen[j].addr.host,
		    nc->listen[j].addr.port, &lc, d, err, errlen);
		if (nl[j] == NULL)
			goto fail;
		verbs_listener_set_gate(nl[j], link_gate, d);
		log_notice("listening for RDMA links on %s",
		    nc->listen[j].addr.text);
	}

	for (t = d->tuns; t != NULL; t = t->next)
		nold++;
	if ((retiring = calloc(nold + 1, sizeof(*retiring))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}

	/* 2. Nothing below fails in a way that needs undoing. */
	for (i = 0; i < d->nlsn; i++) {
		if (d->lsn[i] != NULL) {
			log_notice("no longer listening for RDMA links on %s",
			    oc->listen[i].addr.text);
			verbs_listener_free(d->lsn[i]);
		}
	}
	free(d->lsn);
	d->lsn = nl;
	d->nlsn = ntarget > 0 ? nc->nlisten : 0;
	nl = NULL;
	for (i = 0; i < d->nlsn; i++)
		verbs_listener_set_conf(d->lsn[i], &lc);
	if (d->nlsn > 0)
		log_info("incoming links: sq_size %u, rq_size %u, inline_size "
		    "%u, %u streams", (unsigned)lc.sq_size,
		    (unsigned)lc.rq_size, (unsigned)lc.inline_size,
		    (unsigned)lc.max_streams);

	/* Tunnels that are not kept drain; their listeners may move first. */
	for (t = d->tuns; t != NULL; t = t->next) {
		for (i = 0; i < nc->ntunnels && pl[i].keep != t; i++)
			;
		if (!t->draining && i == nc->ntunnels) {
			t->draining = 1;
			retiring[nretiring++] = t;
		}
	}
	for (i = 0; i < nc->ntunnels; i++) {
		c = &nc->tunnels[i];
		if ((nt = pl[i].keep) != NULL) {
			*tail = nt;
			tail = &nt->next;
			continue;
		}
		/* A changed tunnel keeps counting where the old one was. */
		for (j = 0, old = NULL; j < nretiring; j++)
			if (strcmp(retiring[j]->c->name, c->name) == 0)
				old = retiring[j];
		if ((nt = tun_new(d, c, old ? old->st : NULL)) == NULL) {
			/* Cannot happen in practice; say so if it does. */
			log_err("tunnel %s: out of memory; not started",
			    c->name);
			if (pl[i].lfd >= 0)
				close(pl[i].lfd);
			continue;
		}
		*tail = nt;
		tail = &nt->next;
		if (c->has_target) {
			log_info("tunnel %s: serving target %s", c->name,
			    c->target.text);
			continue;
		}
		if ((t = pl[i].from) != NULL) {
			tun_unwatch(t);
			nt->lfd = t->lfd;
			nt->activated = t->activated;
			memcpy(nt->bound, t->bound, sizeof(nt->bound));
			t->lfd = -1;
			t->activated = 0;
			if (c->accept.kind == CONF_ADDR_UNIX &&
			    sock_unix_perms(c->accept.path, c->unix_mode,
			    c->unix_owner, c->unix_group, err, errlen))
				log_warn("tunnel %s: %s", c->name, err);
		} else {
			nt->lfd = pl[i].lfd;
			nt->activated = pl[i].activated;
			memcpy(nt->bound, pl[i].bound, sizeof(nt->bound));
		}
		if (tun_watch(nt))
			log_err("tunnel %s: cannot watch %s", c->name,
			    nt->bound);
		nt->link = link_client_start(nt);
		/* Tests and scripts read the bound address from this line. */
		log_notice("tunnel %s: accepting on %s%s, peer %s", c->name,
		    nt->bound, nt->activated ? " (socket from systemd)" : "",
		    nt->link ? link_peer(nt->link) : "?");
	}
	/* The draining ones follow the configured ones until they are gone. */
	while ((t = d->tuns) != NULL) {
		d->tuns = t->next;
		for (i = 0; i < nc->ntunnels && pl[i].keep != t; i++)
			;
		if (i < nc->ntunnels)
			continue;
		*tail = t;
		tail = &t->next;
	}
	*tail = NULL;
	d->tuns = head;
	for (j = 0; j < nretiring; j++)
		tun_retire(retiring[j], live_by_name(d,
		    retiring[j]->c->name) ? "configuration changed" :
		    "removed from the configuration");
	free(retiring);
	if (oc != NULL)
		conf_free(oc);
	d->conf = nc;
	rc = 0;
	free(pl);
	return (rc);

fail:
	for (i = 0; pl != NULL && i < nc->ntunnels; i++) {
		if (pl[i].lfd < 0)
			continue;
		if (pl[i].activated) {
			act_put(d, pl[i].lfd);
		} else {
			close(pl[i].lfd);
			if (nc->tunnels[i].accept.kind == CONF_ADDR_UNIX)
				unlink(nc->tunnels[i].accept.path);
		}
	}
	for (j = 0; nl != NULL && j < nc->nlisten; j++) {
		if (nl[j] == NULL)
			continue;
		/* Give taken listeners back to where they were. */
		for (i = 0; i < d->nlsn; i++)
			if (d->lsn[i] == NULL && oc != NULL &&
			    same_listen(&oc->listen[i], &nc->listen[j]))
				break;
		if (i < d->nlsn)
			d->lsn[i] = nl[j];
		else
			verbs_listener_free(nl[j]);
	}
	free(nl);
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

	if ((d->cm = verbs_cm_new(err, errlen)) == NULL)
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
	for (t = d->tuns; t != NULL; t = t->next)
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

	for (t = d->tuns; t != NULL; t = t->next)
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
	size_t i;

	d->stop = 1;
	loop_timer_stop(&d->sweep);
	/* Links first: resetting their streams frees the bridges. */
	while (d->links != NULL)
		link_free(d->links);
	while (d->tuns != NULL)
		tun_free(d->tuns);
	for (i = 0; i < d->nlsn; i++)
		verbs_listener_free(d->lsn[i]);
	free(d->lsn);
	d->lsn = NULL;
	d->nlsn = 0;
	loop_fd_del(d->cm_w);
	d->cm_w = NULL;
	verbs_cm_free(d->cm);
	d->cm = NULL;
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
