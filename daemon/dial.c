/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addr.h"
#include "conf.h"
#include "dial.h"
#include "log.h"
#include "loop.h"
#include "proxy.h"
#include "resolve.h"
#include "sock.h"
#include "wire.h"

struct dial {
	struct loop *lp;
	const struct conf_tunnel *c;
	struct rname *rn;		/* TCP: the target's name */
	const struct dial_ops *ops;
	void *arg;
	int tcp;			/* a TCP target (else Unix) */
	int fd;				/* the attempt under way, or -1 */
	struct loop_fd *w;
	struct loop_timer timer;	/* this attempt's share of the time */
	struct rname_waiter rw;		/* the name is being looked up */
	struct resolve_addrs addrs;	/* as resolved when the stream came */
	size_t next;			/* the address to try next */
	uint64_t deadline;		/* connect_timeout runs out */
	int err;			/* the last attempt's errno */
	int refused;			/* every attempt so far was refused */
	int has_origin;
	struct wire_origin origin;	/* the client, for the PROXY header */
	char peer[WIRE_NAME_MAX + 1];	/* the node, for a v2 header's TLV */
	uint8_t *pp;			/* PROXY header bytes the target has
					   not taken yet (rarely any) */
	size_t pp_len;
};

static void try_next(struct dial *);

/*
 * The dial is over: hand ${fd} over (connected) or say why it failed,
 * once, after freeing ${d}.
 */
static void
finish(struct dial *d, int fd, uint16_t reason, const char *why)
{
	const struct dial_ops *ops = d->ops;
	void *arg = d->arg;
	struct dial_end end = { fd, reason, why };

	if (fd >= 0) {
		loop_fd_del(d->w);
		d->w = NULL;
		d->fd = -1;
	}
	dial_free(d);
	ops->done(arg, &end);
}

/* Every address failed: refuse the stream with what the last one said. */
static void
failed(struct dial *d, int err, const char *why)
{
	int refused = d->tcp ? d->refused : err == ECONNREFUSED;

	finish(d, -1, refused ? WIRE_REASON_TARGET_REFUSED :
	    err == ETIMEDOUT ? WIRE_REASON_TIMEOUT :
	    WIRE_REASON_TARGET_UNREACHABLE, why != NULL ? why : strerror(err));
}

/*
 * Write the PROXY header the tunnel asks for, with the client the peer's
 * ORIGIN named (or "unknown"), before the stream is accepted.  Returns 0
 * when it is written, 1 while the target has not taken all of it (the
 * rest waits in ${d}->pp, connect_timeout bounding it), or -1 when it
 * failed (${d} is over).
 */
static int
proxy_send(struct dial *d)
{
	uint8_t hdr[PROXY_HDR_MAX];
	const uint8_t *p = d->pp;
	size_t len = d->pp_len;
	ssize_t n;

	if (p == NULL) {
		n = proxy_header_origin(d->c->proxy_protocol, d->has_origin ?
		    &d->origin : NULL, hdr, sizeof(hdr));
		if (n >= 0 && d->c->proxy_protocol == 2)
			n = proxy_add_peer(hdr, (size_t)n, sizeof(hdr),
			    d->peer);
		if (n < 0) {
			failed(d, EINVAL, "cannot make the PROXY header");
			return (-1);
		}
		p = hdr;
		len = (size_t)n;
	}
	n = send(d->fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		n = 0;
	if (n < 0) {
		char why[128];

		snprintf(why, sizeof(why), "writing the PROXY header: %s",
		    strerror(errno));
		failed(d, errno, why);
		return (-1);
	}
	if ((size_t)n == len) {
		free(d->pp);
		d->pp = NULL;
		return (0);
	}
	if (d->pp == NULL) {
		if ((d->pp = malloc(len - (size_t)n)) == NULL) {
			failed(d, ENOMEM, NULL);
			return (-1);
		}
		memcpy(d->pp, p + n, len - (size_t)n);
	} else {
		memmove(d->pp, d->pp + n, len - (size_t)n);
	}
	d->pp_len = len - (size_t)n;
	return (1);
}

/* The target is connected: done, once its PROXY header is out. */
static void
connected(struct dial *d)
{

	if (d->c->proxy_protocol != 0 && proxy_send(d) != 0)
		return;
	finish(d, d->fd, 0, NULL);
}

/* Connecting to the target's address ${i} failed with ${err}. */
static void
attempt_failed(struct dial *d, size_t i, int err)
{
	char who[80], what[600];

	addr_text((struct sockaddr *)&d->addrs.a[i], who, sizeof(who));
	snprintf(what, sizeof(what), "target %s at %s: %s", d->c->target.text,
	    who, strerror(err));
	d->ops->say(d->arg, LOG_DEBUG, what);
	d->err = err;
	d->refused &= err == ECONNREFUSED;
}

/* This address did not answer in its share of the time: the next one. */
static void
retry(struct dial *d, int err)
{

	if (d->fd >= 0) {
		loop_fd_del(d->w);
		d->w = NULL;
		close(d->fd);
		d->fd = -1;
	}
	/* A header cut short on that connection starts over on the next. */
	free(d->pp);
	d->pp = NULL;
	attempt_failed(d, d->next - 1, err);
	try_next(d);
}

static void
on_fd(void *arg, uint32_t events)
{
	struct dial *d = arg;
	int err;

	(void)events;
	/* Connected, with a PROXY header still going out: send it. */
	if (d->pp == NULL && (err = sock_connect_result(d->fd)) != 0)
		retry(d, err);
	else
		connected(d);
}

/* Take socket ${fd} and watch it; -1 when it cannot be (${d} is over). */
static int
watch(struct dial *d, int fd, uint32_t events)
{

	d->fd = fd;
	if ((d->w = loop_fd_add(d->lp, fd, events, on_fd, d)) == NULL) {
		d->ops->say(d->arg, LOG_ERR, "cannot watch the target socket");
		finish(d, -1, WIRE_REASON_INTERNAL, NULL);
		return (-1);
	}
	return (0);
}

static void
on_resolved(void *arg)
{

	try_next(arg);
}

/*
 * Start connecting to the target's next address, skipping those that
 * fail at once; when none is left, fail.
 */
static void
try_next(struct dial *d)
{
	const struct resolve_addrs *ra;
	const char *why;
	uint64_t now, left;
	size_t i;
	int fd;

	if (!d->tcp) {
		/* Unix connects finish at once; EAGAIN is a full backlog. */
		if ((fd = sock_connect_unix(d->c->target.path)) < 0) {
			failed(d, errno, NULL);
			return;
		}
		if (watch(d, fd, 0) == 0)
			connected(d);
		return;
	}
	if (d->addrs.n == 0) {
		switch (rname_get(d->rn, &ra, &why)) {
		case 0:
			rname_wait(d->rn, &d->rw, on_resolved, d);
			return;
		case -1:
			d->refused = 0;
			failed(d, EHOSTUNREACH, why);
			return;
		}
		d->addrs = *ra;
	}
	while ((i = d->next) < d->addrs.n) {
		d->next++;
		if ((fd = sock_connect_addr((struct sockaddr *)&d->addrs.a[i],
		    d->addrs.len[i])) < 0) {
			attempt_failed(d, i, errno);
			continue;
		}
		if (watch(d, fd, EPOLLOUT) != 0)
			return;
		/* A black hole must not eat the time the others need. */
		now = loop_now_ms();
		left = d->deadline > now ? d->deadline - now : 0;
		loop_timer_arm(&d->timer, left / (d->addrs.n - i));
		return;
	}
	failed(d, d->err, NULL);
}

/* An address did not answer in its time; past connect_timeout, fail. */
static void
on_timeout(void *arg)
{
	struct dial *d = arg;
	char why[64];

	if (d->tcp && d->next < d->addrs.n && loop_now_ms() < d->deadline) {
		retry(d, ETIMEDOUT);
		return;
	}
	snprintf(why, sizeof(why), "no answer in %u s",
	    (unsigned)d->c->sz.connect_timeout);
	d->refused = 0;
	failed(d, ETIMEDOUT, why);
}

struct dial *
dial_new(struct loop *lp, const struct conf_tunnel *c, struct rname *rn,
    const struct wire_origin *origin, const struct dial_ops *ops, void *arg)
{
	struct dial *d;

	if ((d = calloc(1, sizeof(*d))) == NULL)
		return (NULL);
	d->lp = lp;
	d->c = c;
	d->rn = rn;
	d->ops = ops;
	d->arg = arg;
	d->tcp = c->target.kind == CONF_ADDR_TCP;
	d->fd = -1;
	if (origin != NULL) {
		d->origin = *origin;
		d->has_origin = 1;
	}
	loop_timer_init(&d->timer, lp, on_timeout, d);
	return (d);
}

void
dial_set_peer(struct dial *d, const char *peer)
{

	snprintf(d->peer, sizeof(d->peer), "%s", peer != NULL ? peer : "");
}

void
dial_start(struct dial *d)
{
	uint64_t ms = (uint64_t)d->c->sz.connect_timeout * 1000;

	loop_timer_arm(&d->timer, ms);
	d->deadline = loop_now_ms() + ms;
	d->refused = 1;
	try_next(d);
}

void
dial_free(struct dial *d)
{

	if (d == NULL)
		return;
	if (d->fd >= 0) {
		loop_fd_del(d->w);
		sock_close_reset(d->fd);
	}
	loop_timer_stop(&d->timer);
	rname_unwait(&d->rw);
	free(d->pp);
	free(d);
}

int
dial_resolving(const struct dial *d)
{

	return (d->rw.n != NULL);
}
