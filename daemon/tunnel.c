#include "config.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static void on_accept(void *, uint32_t);

static void
on_accept_resume(void *arg)
{
	struct tun *t = arg;

	t->accept_pause = NULL;
	loop_fd_set(t->lw, EPOLLIN);
}

static void
on_accept(void *arg, uint32_t events)
{
	struct tun *t = arg;
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
			log_warn("tunnel %s: out of file descriptors (%s); "
			    "pausing accepts for %d ms", t->c->name,
			    strerror(errno), ACCEPT_PAUSE_MS);
			loop_fd_set(t->lw, 0);
			t->accept_pause = loop_timer_add(t->d->lp,
			    ACCEPT_PAUSE_MS, on_accept_resume, t);
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

/**
 * tunnel_start(d, err, errlen):
 * Bind every local listener, start every client tunnel's link, and listen
 * for RDMA links.  Returns 0, or -1 with the reason in ${err}.
 */
int
tunnel_start(struct rsd *d, char *err, size_t errlen)
{
	const struct conf *c = d->conf;
	struct verbs_link_conf lc;
	struct tun *t;
	size_t i;
	int ntarget = 0;

	if ((d->cm = verbs_cm_new(err, errlen)) == NULL)
		return (-1);
	if ((d->cm_w = loop_fd_add(d->lp, verbs_cm_fd(d->cm), EPOLLIN, on_cm,
	    d)) == NULL) {
		snprintf(err, errlen, "cannot watch the RDMA CM channel");
		return (-1);
	}
	if ((d->tuns = calloc(c->ntunnels, sizeof(*d->tuns))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (-1);
	}
	d->ntuns = c->ntunnels;
	/* All filled in first: tunnel_stop may run after any failure. */
	for (i = 0; i < c->ntunnels; i++) {
		d->tuns[i].d = d;
		d->tuns[i].c = &c->tunnels[i];
		d->tuns[i].lfd = -1;
	}
	for (i = 0; i < c->ntunnels; i++) {
		t = &d->tuns[i];
		if (t->c->has_target) {
			ntarget++;
			log_info("tunnel %s: serving target %s", t->c->name,
			    t->c->target.text);
			continue;
		}
		t->lfd = sock_listen(&t->c->accept, t->c->unix_mode,
		    t->c->unix_owner, t->c->unix_group, t->bound,
		    sizeof(t->bound), err, errlen);
		if (t->lfd < 0)
			return (-1);
		if ((t->lw = loop_fd_add(d->lp, t->lfd, EPOLLIN, on_accept,
		    t)) == NULL) {
			snprintf(err, errlen, "cannot watch %s", t->bound);
			return (-1);
		}
		if ((t->link = link_client_start(t)) == NULL) {
			snprintf(err, errlen, "out of memory");
			return (-1);
		}
		/* Tests and scripts read the bound address from this line. */
		log_notice("tunnel %s: accepting on %s, peer %s", t->c->name,
		    t->bound, link_peer(t->link));
	}
	if (ntarget > 0) {
		listener_conf(c, &lc);
		if ((d->lsn = calloc(c->nlisten, sizeof(*d->lsn))) == NULL) {
			snprintf(err, errlen, "out of memory");
			return (-1);
		}
		for (i = 0; i < c->nlisten; i++) {
			d->lsn[i] = verbs_listen(d->cm, c->listen[i].addr.host,
			    c->listen[i].addr.port, &lc, d, err, errlen);
			if (d->lsn[i] == NULL)
				return (-1);
			d->nlsn = i + 1;
			log_notice("listening for RDMA links on %s (sq_size "
			    "%u, rq_size %u, inline_size %u)",
			    c->listen[i].addr.text, (unsigned)lc.sq_size,
			    (unsigned)lc.rq_size, (unsigned)lc.inline_size);
		}
	}
	return (0);
}

/**
 * tunnel_stop(d):
 * Close every listener and link (their streams are reset).
 */
void
tunnel_stop(struct rsd *d)
{
	size_t i;

	d->stop = 1;
	for (i = 0; i < d->ntuns; i++) {
		struct tun *t = &d->tuns[i];

		loop_fd_del(t->lw);
		loop_timer_del(t->accept_pause);
		if (t->lfd >= 0) {
			close(t->lfd);
			if (t->c->accept.kind == CONF_ADDR_UNIX)
				unlink(t->c->accept.path);
		}
	}
	while (d->links != NULL)
		link_free(d->links);
	for (i = 0; i < d->nlsn; i++)
		verbs_listener_free(d->lsn[i]);
	free(d->lsn);
	d->lsn = NULL;
	d->nlsn = 0;
	loop_fd_del(d->cm_w);
	verbs_cm_free(d->cm);
	d->cm = NULL;
	free(d->tuns);
	d->tuns = NULL;
	d->ntuns = 0;
}

/**
 * tunnel_find_target(d, name):
 * The target tunnel called ${name}, or NULL.
 */
struct tun *
tunnel_find_target(struct rsd *d, const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < d->ntuns; i++)
		if (d->tuns[i].c->has_target &&
		    strcmp(d->tuns[i].c->name, name) == 0)
			return (&d->tuns[i]);
	return (NULL);
}
