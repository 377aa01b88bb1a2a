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
#include "bridge.h"
#include "budget.h"
#include "dial.h"
#include "engine.h"
#include "engine_stream.h"
#include "link.h"
#include "log.h"
#include "loop.h"
#include "proxy.h"
#include "rsd.h"
#include "sock.h"

/* At most this many recv() calls per readiness event, for fairness. */
#define READS_PER_EVENT	4

/*
 * The bytes a stream moves each way in one turn of its worker, at most:
 * a budget, as NAPI gives a device per poll.  A bulk stream whose socket
 * and ring could move a whole ring in one turn would hold every other
 * stream of the worker, and its link's posting, for that copy; with the
 * budget a turn holds them for this much at most, and the rest moves in
 * the next turn (the sockets are watched level-triggered, so a stream
 * with more to move is ready again at once, after the others).  The
 * turns the budget ended count in budget_stops_in and _out (struct
 * tun_stats), those only: not one that an empty socket or ring, or a
 * full ring, would have ended anyway.
 */
#define TURN_BYTES	(64 * 1024)

/*
 * Rings a stream holds at once: a send and a receive ring, each with the
 * one it replaces until that one's bytes are gone (or, for a receive
 * ring, the one announced to the peer).
 */
#define BRIDGE_RINGS	4

struct bridge {
	struct tun *t;
	struct dlink *dl;
	uint64_t serial;		/* stream number in logs */
	int have_id;
	uint32_t id;
	int fd;
	struct loop_fd *w;
	/* Its ring memory: the first send and receive rings, then whatever
	   growing and shrinking them gave (see ring_alloc). */
	struct link_ring *mem[BRIDGE_RINGS];
	int server;			/* we connected to a target */
	struct dial *dial;		/* while connecting to the target */
	int rd_eof;			/* socket EOF: stream shut down */
	int wr_shut;			/* peer EOF: socket shut for writing */
	int closed;			/* engine_close/reset called */
	int suspended;			/* its link failed; waits for a resume */
	char who[400];			/* client or target address */
	char origin[ADDR_TEXT_MAX];	/* target side: the peer's client */
	uint64_t bytes_in, bytes_out;	/* as in struct tun_stats */
	uint64_t started_ms;
	uint64_t active_ms;		/* last byte either way */
	TAILQ_ENTRY(bridge) entry;	/* its tunnel's streams */
};

/* A message about stream ${b}; BLOG_BURST: once per burst of ${burst}. */
#define BABOUT(b)							\
	(&(struct log_about){ (b)->t->c->name, (b)->serial,		\
	    (b)->dl ? link_peer((b)->dl) : NULL })
#define BPREFIX		"tunnel %s stream %llu (%s, %s): "
#define BARGS(b)	(b)->t->c->name, (unsigned long long)(b)->serial, \
	    (b)->server ? "target" : "client", (b)->who
#define BLOG(level, b, fmt, ...)					\
	log_about(level, BABOUT(b), BPREFIX fmt, BARGS(b), ##__VA_ARGS__)
#define BLOG_BURST(burst, level, b, fmt, ...)				\
	log_burst_about(burst, loop_now_ms(), level, BABOUT(b),		\
	    BPREFIX fmt, BARGS(b), ##__VA_ARGS__)

static void on_fd(void *, uint32_t);

struct bridge *
bridge_first(const struct tun *t)
{

	return (TAILQ_FIRST(&t->streams));
}

struct bridge *
bridge_next(const struct bridge *b)
{

	return (TAILQ_NEXT(b, entry));
}

static struct bridge *
bridge_new(struct tun *t, int fd)
{
	struct bridge *b;

	loop_assert_exclusive();
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return (NULL);
	b->t = t;
	b->fd = fd;
	b->serial = ++t->d->next_serial;
	b->started_ms = b->active_ms = loop_now_ms();
	ST_ADD(t->st, active, 1);
	t->nstreams++;
	TAILQ_INSERT_HEAD(&t->streams, b, entry);
	return (b);
}

/* The socket is finished with: close it, with a reset if asked. */
static void
close_fd(struct bridge *b, int reset)
{

	if (b->fd < 0)
		return;
	loop_fd_del(b->w);
	b->w = NULL;
	if (reset)
		sock_close_reset(b->fd);
	else
		close(b->fd);
	b->fd = -1;
}

/* Ring memory slot ${k} goes (to the link's pool, or for good). */
static void
mem_drop(struct bridge *b, int k)
{
	struct link_ring *m = b->mem[k];

	if (m == NULL)
		return;
	budget_give(&b->t->st->pinned, link_ring_size(m));
	link_ring_free(m);
	b->mem[k] = NULL;
}

/*
 * A ring refused by a max_memory (${burst}'s), counted and said once per
 * burst; errno ENOBUFS.
 */
static void
mem_refused(struct bridge *b, struct log_burst *burst, const char *why)
{

	ST_ADD(b->t->st, ring_refusals, 1);
	log_burst_about(burst, loop_now_ms(), LOG_WARNING, BABOUT(b),
	    "tunnel %s: %s", b->t->c->name, why);
	errno = ENOBUFS;
}

/*
 * Ring memory of ${size} bytes into a free slot, or NULL after saying why
 * (max_memory refusals, errno ENOBUFS, once per burst, counted).  The
 * tunnel's budget is charged first, then the daemon's (link_ring_new): each
 * in one atomic step, so streams on several workers cannot pass either
 * together; a charge whose ring does not come is given back.
 */
static struct link_ring *
mem_get(struct bridge *b, uint32_t size, int flags)
{
	uint64_t max = conf_tunnel_max_memory(b->t->d->conf, b->t->c);
	struct link_ring *m;
	char err[200];
	int k;

	for (k = 0; k < BRIDGE_RINGS && b->mem[k] != NULL; k++)
		;
	if (k == BRIDGE_RINGS)
		return (NULL);
	if (budget_take(&b->t->st->pinned, max, size) != 0) {
		snprintf(err, sizeof(err), "max_memory of the tunnel%s: its "
		    "streams hold %llu bytes of ring memory, the limit is %llu",
		    b->t->c->sz.max_memory == CONF_MEMORY_SHARE ? " (its share "
		    "of the daemon's)" : "",
		    (unsigned long long)budget_now(&b->t->st->pinned),
		    (unsigned long long)max);
		mem_refused(b, &b->t->memory_log, err);
		return (NULL);
	}
	if ((m = link_ring_new(b->dl, size, flags, err, sizeof(err))) ==
	    NULL) {
		budget_give(&b->t->st->pinned, size);
		if (errno == ENOBUFS) {
			mem_refused(b, &b->t->d->memory_log, err);
		} else {
			BLOG(LOG_ERR, b, "%s", err);
			errno = ENOMEM;
		}
		return (NULL);
	}
	b->mem[k] = m;
	return (m);
}

/*
 * engine_mem: the engine grows or shrinks one of the stream's rings.  A
 * shrink is charged like a growth: both rings are held until the larger
 * one goes (a receive ring only once the peer's RING_AT came).
 */
static int
ring_alloc(void *arg, void *user, int rx, uint32_t size, uint32_t replaces,
    struct engine_ring *ring)
{
	struct bridge *b = user;
	struct link_ring *m;

	(void)arg;
	(void)replaces;
	if (b == NULL || (m = mem_get(b, size, rx ? LINK_RING_RX : 0)) ==
	    NULL)
		return (-1);
	link_ring_describe(m, ring);
	return (0);
}

static void
ring_free(void *arg, void *user, const struct engine_ring *ring)
{
	struct bridge *b = user;
	int k;

	(void)arg;
	for (k = 0; k < BRIDGE_RINGS; k++)
		if (b->mem[k] != NULL && b->mem[k] == ring->mem)
			mem_drop(b, k);
}

static const struct engine_mem bridge_mem = {
	.alloc = ring_alloc,
	.free = ring_free,
	.arg = NULL
};

static void
bridge_free(struct bridge *b)
{
	int k;

	loop_assert_exclusive();
	close_fd(b, 1);
	dial_free(b->dial);
	for (k = 0; k < BRIDGE_RINGS; k++)
		mem_drop(b, k);
	ST_ADD(b->t->st, active, -1);
	b->t->nstreams--;
	TAILQ_REMOVE(&b->t->streams, b, entry);
	/* A draining tunnel goes with its last stream (tunnel.c's timer). */
	if (b->t->draining && b->t->nstreams == 0)
		loop_timer_arm(&b->t->reap, 0);
	/* A stopping daemon stops with its last stream. */
	if (b->t->d->draining && b->t->d->drained != NULL)
		loop_job_defer(b->t->d->drained);
	free(b);
}

/*
 * The size a stream's ring starts at: ring_min where rings may grow (a
 * link of version 4 that does not resume), else the full size.
 */
static uint32_t
ring_start(const struct bridge *b, uint32_t full)
{
	const struct conf_sizes *sz = &b->t->c->sz;
	struct engine *e = link_engine(b->dl);

	if (sz->ring_min == 0 || sz->ring_min >= full || e == NULL ||
	    !engine_can_resize(e))
		return (full);
	return (sz->ring_min);
}

/*
 * Ring memory for a stream: send ring local, receive ring remote-write,
 * into slots 0 and 1.  -1 with errno ENOBUFS if max_memory refused it.
 */
static int
alloc_rings(struct bridge *b)
{
	const struct conf_sizes *sz = &b->t->c->sz;
	uint32_t txs = ring_start(b, sz->sendbuf), rxs = ring_start(b,
	    sz->recvbuf);
	char grow[64] = "", what[ADDR_TEXT_MAX + 16] = "opening";

	if (mem_get(b, txs, 0) == NULL)
		return (-1);
	if (mem_get(b, rxs, LINK_RING_RX) == NULL) {
		int err = errno;

		mem_drop(b, 0);
		errno = err;
		return (-1);
	}
	engine_set_mem(link_engine(b->dl), &bridge_mem);
	if (txs != sz->sendbuf || rxs != sz->recvbuf)
		snprintf(grow, sizeof(grow), ", growing up to %u and %u",
		    (unsigned)sz->sendbuf, (unsigned)sz->recvbuf);
	if (b->server)
		snprintf(what, sizeof(what), "accepted from %s", b->origin);
	BLOG(LOG_INFO, b, "%s over %s, rings: send %u, receive %u bytes%s",
	    what, link_peer(b->dl), (unsigned)txs, (unsigned)rxs, grow);
	return (0);
}

/* Let the stream's rings grow, if they started small. */
static void
ring_limits(struct bridge *b, struct engine *e)
{
	const struct conf_sizes *sz = &b->t->c->sz;

	if (link_ring_size(b->mem[0]) < sz->sendbuf ||
	    link_ring_size(b->mem[1]) < sz->recvbuf)
		(void)engine_ring_limits(e, b->id, sz->sendbuf, sz->recvbuf);
}

static void
want(struct bridge *b)
{
	uint32_t ev = 0;
	uint32_t off;
	struct engine *e;

	if (b->fd < 0 || b->w == NULL)
		return;
	if (b->have_id && (e = link_engine(b->dl)) != NULL) {
		/* Read only while the send ring has room: backpressure. */
		if (!b->rd_eof && !b->closed &&
		    engine_tx_space(e, b->id, &off) > 0)
			ev |= EPOLLIN;
		if (!b->wr_shut && engine_rx_data(e, b->id, &off) > 0)
			ev |= EPOLLOUT;
	}
	loop_fd_set(b->w, ev);
	/* Moving bytes of an open stream touches nothing but its link: it
	 * may run shared (Threads in loop.h). */
	loop_fd_share(b->w, b->have_id);
}

/* Abort: the peer sees RESET, the local socket sees a reset too. */
static void
abort_stream(struct bridge *b, uint16_t reason)
{
	struct engine *e = link_engine(b->dl);

	close_fd(b, 1);
	if (b->have_id && !b->closed && e != NULL) {
		b->closed = 1;
		engine_reset(e, b->id, reason);
	}
	ST_ADD(b->t->st, failed, 1);
}

/* Both directions are done: close the stream and the socket gracefully. */
static void
maybe_finish(struct bridge *b)
{
	struct engine *e = link_engine(b->dl);

	if (!b->rd_eof || !b->wr_shut || b->closed || e == NULL)
		return;
	b->closed = 1;
	engine_close(e, b->id);
	close_fd(b, 0);
	BLOG(LOG_DEBUG, b, "closed");
}

/* Socket -> send ring, straight into registered memory. */
static void
from_socket(struct bridge *b)
{
	struct engine *e = link_engine(b->dl);
	uint8_t *ring;
	uint32_t off, space, left = TURN_BYTES;
	ssize_t n;
	int k;

	for (k = 0; k < READS_PER_EVENT && left > 0; k++) {
		if ((space = engine_tx_space(e, b->id, &off)) == 0)
			return;		/* full: WRITABLE resumes reading */
		if (space > left)
			space = left;
		ring = (uint8_t *)(uintptr_t)engine_tx_base(e, b->id);
		n = recv(b->fd, ring + off, space, MSG_DONTWAIT);
		if (n > 0) {
			engine_tx_commit(e, b->id, (uint32_t)n);
			left -= (uint32_t)n;
			ST_ADD(b->t->st, bytes_in, (uint64_t)n);
			b->bytes_in += (uint64_t)n;
			b->active_ms = loop_now_ms();
			if ((uint32_t)n < space)
				return;
			continue;
		}
		if (n == 0) {
			b->rd_eof = 1;
			engine_shutdown(e, b->id);
			BLOG(LOG_DEBUG, b, "end of input; shutting the "
			    "stream down for writing");
			maybe_finish(b);
			return;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		BLOG(LOG_INFO, b, "read failed: %s; resetting the stream",
		    strerror(errno));
		abort_stream(b, WIRE_REASON_RESET);
		return;
	}
	/* (One more system call, only once a budget is used up.) */
	if (left == 0 && engine_tx_space(e, b->id, &off) > 0 &&
	    sock_unread(b->fd))
		ST_ADD(b->t->st, budget_stops_in, 1);
}

/* Receive ring -> socket, straight from registered memory. */
static void
to_socket(struct bridge *b)
{
	struct engine *e = link_engine(b->dl);
	uint8_t *ring;
	uint32_t off, avail, left = TURN_BYTES;
	ssize_t n;

	while (left > 0 && (avail = engine_rx_data(e, b->id, &off)) > 0) {
		if (avail > left)
			avail = left;
		ring = (uint8_t *)(uintptr_t)engine_rx_base(e, b->id);
		n = send(b->fd, ring + off, avail, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			engine_rx_consume(e, b->id, (uint32_t)n);
			left -= (uint32_t)n;
			ST_ADD(b->t->st, bytes_out, (uint64_t)n);
			b->bytes_out += (uint64_t)n;
			b->active_ms = loop_now_ms();
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == EINTR))
			return;
		BLOG(LOG_INFO, b, "write failed: %s; resetting the stream",
		    n < 0 ? strerror(errno) : "no progress");
		abort_stream(b, WIRE_REASON_RESET);
		return;
	}
	if (left == 0 && engine_rx_data(e, b->id, &off) > 0)
		ST_ADD(b->t->st, budget_stops_out, 1);
}

static void
start_io(struct bridge *b)
{

	if (b->w == NULL)
		b->w = loop_fd_add(link_loop(b->dl), b->fd, 0, on_fd, b);
	if (b->w == NULL) {
		BLOG(LOG_ERR, b, "cannot watch the socket");
		abort_stream(b, WIRE_REASON_INTERNAL);
	}
}

/*
 * Refuse the peer's stream with ${reason} (counted as ${why}) and free
 * ${b}.
 */
static void
refuse(struct bridge *b, uint16_t reason, enum tun_refusal why)
{

	engine_refuse(link_engine(b->dl), b->id, reason);
	b->have_id = 0;
	ST_REFUSE(b->t->st, why);
	bridge_free(b);
}

/* The target is connected on ${fd} (its PROXY header sent): accept. */
static void
target_connected(struct bridge *b, int fd)
{
	struct engine *e = link_engine(b->dl);
	struct engine_ring tx, rx;

	b->fd = fd;
	if ((b->w = loop_fd_add(link_loop(b->dl), fd, 0, on_fd, b)) == NULL) {
		BLOG(LOG_ERR, b, "cannot watch the target socket");
		refuse(b, WIRE_REASON_INTERNAL, TR_INTERNAL);
		return;
	}
	link_ring_describe(b->mem[0], &tx);
	link_ring_describe(b->mem[1], &rx);
	if (engine_accept(e, b->id, &tx, &rx, b) != 0) {
		refuse(b, WIRE_REASON_INTERNAL, TR_INTERNAL);
		return;
	}
	ring_limits(b, e);
	if (b->t->c->sz.resume_time > 0)
		(void)engine_keep(e, b->id);
	ST_ADD(b->t->st, opened, 1);
	want(b);
}

static void
on_fd(void *arg, uint32_t events)
{
	struct bridge *b = arg;
	struct dlink *dl = b->dl;
	int err;

	if (!b->have_id)
		return;
	if ((events & EPOLLERR) && (err = sock_connect_result(b->fd)) != 0) {
		BLOG(LOG_INFO, b, "socket error: %s; resetting the stream",
		    strerror(err));
		abort_stream(b, WIRE_REASON_RESET);
		link_mark(dl);
		return;
	}
	if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
		to_socket(b);
	if (b->fd >= 0 && (events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		from_socket(b);
	want(b);
	link_mark(dl);
}

/*
 * Tell the peer who the client is (its ORIGIN record), for a target that
 * wants a PROXY header.  Addresses that cannot be read say nothing.
 */
static void
set_origin(struct bridge *b, struct engine *e, uint32_t id)
{
	struct sockaddr_storage src, dst;
	socklen_t slen = sizeof(src), dlen = sizeof(dst);
	struct wire_origin o;

	if (getpeername(b->fd, (struct sockaddr *)&src, &slen) != 0 ||
	    getsockname(b->fd, (struct sockaddr *)&dst, &dlen) != 0)
		return;
	proxy_origin((struct sockaddr *)&src, (struct sockaddr *)&dst, &o);
	(void)engine_set_origin(e, id, &o);
}

/* Open the client's stream on the (now up) link. */
static void
open_stream(struct bridge *b)
{
	struct engine *e = link_engine(b->dl);
	struct engine_ring tx, rx;
	int id;

	if (alloc_rings(b)) {
		ST_REFUSE(b->t->st, errno == ENOBUFS ? TR_MEMORY : TR_INTERNAL);
		bridge_free(b);
		return;
	}
	link_ring_describe(b->mem[0], &tx);
	link_ring_describe(b->mem[1], &rx);
	if ((id = engine_open(e, b->t->c->name, &tx, &rx, b)) >= 0) {
		b->id = (uint32_t)id;
		ring_limits(b, e);
		if (b->t->c->sz.resume_time > 0)
			(void)engine_keep(e, (uint32_t)id);
		set_origin(b, e, (uint32_t)id);
	}
	if (id < 0) {
		BLOG(LOG_WARNING, b, "cannot open a stream (%s); closing the "
		    "client", id == ENGINE_ELIMIT ? "link stream limit" :
		    "link going away");
		if (id == ENGINE_ELIMIT) {
			ST_REFUSE(b->t->st, TR_LIMIT);
		} else {
			ST_ADD(b->t->st, failed, 1);
		}
		bridge_free(b);
		return;
	}
	b->have_id = 1;
	b->id = (uint32_t)id;
	start_io(b);
	/* Read at once: bytes wait in the ring until the peer accepts. */
	want(b);
}

struct bridge *
bridge_client(struct tun *t, int fd, struct dlink *dl)
{
	struct bridge *b;

	if ((b = bridge_new(t, fd)) == NULL) {
		sock_close_reset(fd);
		return (NULL);
	}
	b->dl = dl;
	sock_peer_text(fd, b->who, sizeof(b->who));
	return (b);
}

void
bridge_open(struct bridge *b)
{
	struct dlink *dl = b->dl;

	open_stream(b);
	link_mark(dl);
}

void
bridge_refuse_client(struct bridge *b, struct log_burst *burst,
    const char *why)
{

	if (burst != NULL)
		BLOG_BURST(burst, LOG_WARNING, b, "%s; closing the client", why);
	else
		BLOG(LOG_WARNING, b, "%s; closing the client", why);
	bridge_free(b);
}

int
bridge_waiting(const struct bridge *b)
{

	return (!b->server && !b->have_id);
}

/* A word from the dial to the target, about ${b}. */
static void
dial_say(void *arg, int level, const char *what)
{
	struct bridge *b = arg;

	BLOG(level, b, "%s", what);
}

/* The dial to the target ended: accept the stream, or refuse it. */
static void
dial_done(void *arg, const struct dial_end *end)
{
	struct bridge *b = arg;
	struct dlink *dl = b->dl;

	b->dial = NULL;
	if (end->fd >= 0) {
		target_connected(b, end->fd);
	} else {
		if (end->why != NULL)
			BLOG_BURST(&b->t->target_log, LOG_WARNING, b, "cannot "
			    "connect to target %s: %s", b->t->c->target.text,
			    end->why);
		refuse(b, end->reason, end->reason == WIRE_REASON_INTERNAL ?
		    TR_INTERNAL : TR_TARGET);
	}
	link_mark(dl);
}

static const struct dial_ops bridge_dial = {
	.say = dial_say,
	.done = dial_done
};

void
bridge_incoming(struct dlink *dl, struct tun *t, uint32_t id)
{
	struct engine *e = link_engine(dl);
	struct bridge *b;

	/* The peer's ORIGIN record came before its OPEN (see wire.h). */
	if ((b = bridge_new(t, -1)) == NULL ||
	    (b->dial = dial_new(link_loop(dl), t->c, t->target_rn,
	    engine_origin(e, id), &bridge_dial, b)) == NULL) {
		engine_refuse(e, id, WIRE_REASON_INTERNAL);
		if (b != NULL)
			bridge_free(b);
		return;
	}
	dial_set_peer(b->dial, link_peer_id(dl));
	b->dl = dl;
	b->server = 1;
	b->have_id = 1;
	b->id = id;
	snprintf(b->who, sizeof(b->who), "%s", t->c->target.text);
	proxy_origin_text(engine_origin(e, id), b->origin, sizeof(b->origin));
	/* Its events (the link failing while we connect) come to ${b}. */
	engine_set_user(e, id, b);
	/* Its rings first: a stream max_memory has no room for is refused
	 * before the target hears of it. */
	if (alloc_rings(b) != 0) {
		if (errno == ENOBUFS)
			refuse(b, WIRE_REASON_LIMIT, TR_MEMORY);
		else
			refuse(b, WIRE_REASON_INTERNAL, TR_INTERNAL);
		return;
	}
	dial_start(b->dial);
}

void
bridge_event(struct bridge *b, const struct engine_event *ev)
{

	if (ev->flags & ENGINE_EV_OPENED) {
		ST_ADD(b->t->st, opened, 1);
		BLOG(LOG_DEBUG, b, "opened");
	}
	if (ev->flags & ENGINE_EV_REFUSED) {
		BLOG_BURST(&b->t->refused_log, LOG_WARNING, b, "refused by "
		    "%s: %s", link_peer(b->dl), wire_reason_str(ev->reason));
		ST_REFUSE(b->t->st, TR_PEER);
		b->closed = 1;
		close_fd(b, 1);
	}
	if ((ev->flags & ENGINE_EV_READABLE) && b->fd >= 0)
		to_socket(b);
	if ((ev->flags & ENGINE_EV_WRITABLE) && b->fd >= 0 && !b->rd_eof)
		from_socket(b);
	if ((ev->flags & ENGINE_EV_EOF) && b->fd >= 0 && !b->wr_shut) {
		/* Every byte is out: pass the end on, keep reading. */
		shutdown(b->fd, SHUT_WR);
		b->wr_shut = 1;
		BLOG(LOG_DEBUG, b, "peer finished sending; shut the socket "
		    "down for writing");
		maybe_finish(b);
	}
	if (ev->flags & ENGINE_EV_SUSPENDED) {
		b->suspended = 1;
		ST_ADD(b->t->st, suspended, 1);
		/* Unregistered while it waits: the failed link's device may be
		 * going away, and it waits for the link's last registration. */
		link_ring_detach(b->mem[0]);
		link_ring_detach(b->mem[1]);
		BLOG(LOG_DEBUG, b, "suspended: its link failed");
	}
	if (ev->flags & ENGINE_EV_RESUMED) {
		b->suspended = 0;
		ST_ADD(b->t->st, resumes, 1);
		BLOG(LOG_DEBUG, b, "resumed over %s", link_peer(b->dl));
	}
	if (ev->flags & ENGINE_EV_RESET) {
		if (b->fd >= 0)
			BLOG(LOG_INFO, b, "reset: %s", wire_reason_str(
			    ev->reason));
		if (b->suspended)
			ST_ADD(b->t->st, resume_failures, 1);
		b->suspended = 0;
		b->closed = 1;
		close_fd(b, 1);
		ST_ADD(b->t->st, failed, 1);
	}
	if (ev->flags & ENGINE_EV_RELEASED) {
		bridge_free(b);
		return;
	}
	want(b);
}

void
bridge_info(const struct bridge *b, struct bridge_info *bi)
{
	struct engine *e = b->dl ? link_engine(b->dl) : NULL;

	memset(bi, 0, sizeof(*bi));
	bi->serial = b->serial;
	bi->side = b->server ? "target" : "client";
	bi->who = b->who;
	bi->origin = b->server ? b->origin : b->who;
	bi->peer = b->dl ? link_peer(b->dl) : "";
	bi->identity = b->dl ? link_peer_id(b->dl) : "";
	bi->bytes_in = b->bytes_in;
	bi->bytes_out = b->bytes_out;
	bi->age_ms = loop_now_ms() - b->started_ms;
	if (b->dial != NULL && dial_resolving(b->dial))
		bi->state = "resolving";
	else if (b->dial != NULL)
		bi->state = "connecting";
	else if (!b->have_id)
		bi->state = "waiting for link";
	else if (b->suspended)
		bi->state = "suspended";
	else if (b->closed)
		bi->state = "closing";
	else if (b->rd_eof && b->wr_shut)
		bi->state = "closing";
	else if (b->rd_eof)
		bi->state = "half-closed (in)";
	else if (b->wr_shut)
		bi->state = "half-closed (out)";
	else
		bi->state = "open";
	if (e != NULL && b->have_id && b->dial == NULL) {
		bi->id = b->id;
		bi->have_send = engine_stream_stats(e, b->id, &bi->send) == 0;
	}
}

int
bridge_adopt(struct bridge *b, struct dlink *dl, struct engine_ring *tx,
    struct engine_ring *rx)
{
	struct loop_fd *w;
	char err[200];

	loop_assert_exclusive();
	/* The new link may run on another worker: the socket goes with it. */
	if (b->w != NULL && link_loop(dl) != link_loop(b->dl)) {
		if ((w = loop_fd_add(link_loop(dl), b->fd, 0, on_fd, b)) ==
		    NULL) {
			BLOG(LOG_ERR, b, "cannot resume: cannot watch the "
			    "socket");
			return (-1);
		}
		loop_fd_del(b->w);
		b->w = w;
	}
	b->dl = dl;
	/* (A link that resumes streams never resized their rings.) */
	if (link_ring_move(b->mem[0], dl, err, sizeof(err)) ||
	    link_ring_move(b->mem[1], dl, err, sizeof(err))) {
		BLOG(LOG_ERR, b, "cannot resume: %s", err);
		return (-1);
	}
	link_ring_describe(b->mem[0], tx);
	link_ring_describe(b->mem[1], rx);
	return (0);
}

struct dlink *
bridge_serving(const struct bridge *b)
{

	return (b->server && b->have_id && !b->closed ? b->dl : NULL);
}

void
bridge_revoke(struct bridge *b, const char *why)
{
	struct dlink *dl = b->dl;

	loop_assert_exclusive();
	BLOG(LOG_WARNING, b, "%s; resetting the stream", why);
	/* The peer sees the reason a new stream of it would get. */
	if (b->dial != NULL)
		refuse(b, WIRE_REASON_DENIED, TR_DENIED);
	else
		abort_stream(b, WIRE_REASON_DENIED);
	link_mark(dl);
}

void
bridge_sweep(struct tun *t, uint64_t now_ms)
{
	struct bridge *b;
	uint64_t limit = (uint64_t)t->c->sz.idle_timeout * 1000;

	/* Resetting frees nothing now: the links post it at the turn's end. */
	TAILQ_FOREACH(b, &t->streams, entry) {
		if (!b->have_id || b->dial != NULL || b->closed || b->fd < 0 ||
		    now_ms - b->active_ms < limit)
			continue;
		BLOG(LOG_INFO, b, "idle for %u s; resetting the stream",
		    (unsigned)t->c->sz.idle_timeout);
		abort_stream(b, WIRE_REASON_TIMEOUT);
		link_mark(b->dl);
	}
}
