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
#include "engine.h"
#include "link.h"
#include "log.h"
#include "loop.h"
#include "proxy.h"
#include "resolve.h"
#include "rsd.h"
#include "sock.h"
#include "verbs.h"

/* At most this many recv() calls per readiness event, for fairness. */
#define READS_PER_EVENT	4

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
	struct verbs_mem *mem[BRIDGE_RINGS];
	int server;			/* we connected to a target */
	int connecting;			/* target connect in progress */
	int rd_eof;			/* socket EOF: stream shut down */
	int wr_shut;			/* peer EOF: socket shut for writing */
	int closed;			/* engine_close/reset called */
	int suspended;			/* its link failed; waits for a resume */
	char who[400];			/* client or target address */
	char origin[ADDR_TEXT_MAX];	/* target side: the peer's client */
	uint64_t bytes_in, bytes_out;	/* as in struct tun_stats */
	uint64_t started_ms;
	uint64_t active_ms;		/* last byte either way */
	struct loop_timer ctimer;	/* target connect_timeout */
	struct tconn *tc;		/* while connecting to the target */
	uint8_t *pp;			/* PROXY header bytes the target has
					   not taken yet (rarely any) */
	size_t pp_len;
	TAILQ_ENTRY(bridge) entry;	/* its tunnel's streams */
};

/*
 * Connecting to a TCP target: its addresses (as resolved when the stream
 * came), tried in turn, each getting an even share of the time left of
 * connect_timeout.
 */
struct tconn {
	struct rname_waiter rw;		/* the name is being looked up */
	struct resolve_addrs addrs;
	size_t next;			/* the address to try next */
	uint64_t deadline;		/* connect_timeout runs out */
	int err;			/* the last attempt's errno */
	int refused;			/* every attempt so far was refused */
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
	struct verbs_mem *m = b->mem[k];

	if (m == NULL)
		return;
	budget_give(&b->t->st->pinned, verbs_mem_size(m));
	verbs_mem_free(m);
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
 * tunnel's budget is charged first, then the daemon's (in verbs): each
 * in one atomic step, so streams on several workers cannot pass either
 * together; a charge whose ring does not come is given back.
 */
static struct verbs_mem *
mem_get(struct bridge *b, uint32_t size, int flags)
{
	uint64_t max = conf_tunnel_max_memory(b->t->d->conf, b->t->c);
	struct verbs_mem *m;
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
	/* Other links' pools are other workers' (Threads in loop.h). */
	if (!loop_exclusive())
		flags |= VERBS_MEM_OWNPOOL;
	if ((m = verbs_mem_new(link_verbs(b->dl), size, flags, err,
	    sizeof(err))) == NULL) {
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
	struct verbs_mem *m;

	(void)arg;
	(void)replaces;
	if (b == NULL || (m = mem_get(b, size, rx ? VERBS_MEM_REMOTE : 0)) ==
	    NULL)
		return (-1);
	verbs_mem_ring(m, ring);
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
	loop_timer_stop(&b->ctimer);
	if (b->tc != NULL) {
		rname_unwait(&b->tc->rw);
		free(b->tc);
	}
	free(b->pp);
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
	if (mem_get(b, rxs, VERBS_MEM_REMOTE) == NULL) {
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

	if (verbs_mem_size(b->mem[0]) < sz->sendbuf ||
	    verbs_mem_size(b->mem[1]) < sz->recvbuf)
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
	if (b->connecting) {
		ev = EPOLLOUT;
	} else if (b->have_id && (e = link_engine(b->dl)) != NULL) {
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
	loop_fd_share(b->w, !b->connecting && b->have_id);
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
	uint32_t off, space;
	ssize_t n;
	int k;

	for (k = 0; k < READS_PER_EVENT; k++) {
		if ((space = engine_tx_space(e, b->id, &off)) == 0)
			return;		/* full: WRITABLE resumes reading */
		ring = (uint8_t *)(uintptr_t)engine_tx_base(e, b->id);
		n = recv(b->fd, ring + off, space, MSG_DONTWAIT);
		if (n > 0) {
			engine_tx_commit(e, b->id, (uint32_t)n);
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
}

/* Receive ring -> socket, straight from registered memory. */
static void
to_socket(struct bridge *b)
{
	struct engine *e = link_engine(b->dl);
	uint8_t *ring;
	uint32_t off, avail;
	ssize_t n;

	while ((avail = engine_rx_data(e, b->id, &off)) > 0) {
		ring = (uint8_t *)(uintptr_t)engine_rx_base(e, b->id);
		n = send(b->fd, ring + off, avail, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			engine_rx_consume(e, b->id, (uint32_t)n);
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

/* The target connect is over, whichever way it went. */
static void
connect_done(struct bridge *b)
{

	b->connecting = 0;
	loop_timer_stop(&b->ctimer);
	if (b->tc != NULL) {
		rname_unwait(&b->tc->rw);
		free(b->tc);
		b->tc = NULL;
	}
}

/* Refuse the peer's stream with ${reason} and free ${b}. */
static void
refuse(struct bridge *b, uint16_t reason)
{

	engine_refuse(link_engine(b->dl), b->id, reason);
	b->have_id = 0;
	ST_ADD(b->t->st, refused, 1);
	bridge_free(b);
}

/* Every address failed: refuse the stream with what the last one said. */
static void
target_failed(struct bridge *b, int err, const char *why)
{
	int refused = b->tc != NULL ? b->tc->refused : err == ECONNREFUSED;

	BLOG_BURST(&b->t->target_log, LOG_WARNING, b, "cannot connect to "
	    "target %s: %s", b->t->c->target.text, why != NULL ? why :
	    strerror(err));
	connect_done(b);
	refuse(b, refused ? WIRE_REASON_TARGET_REFUSED :
	    err == ETIMEDOUT ? WIRE_REASON_TIMEOUT :
	    WIRE_REASON_TARGET_UNREACHABLE);
}

/*
 * Write the PROXY header the tunnel asks for, with the client the peer's
 * ORIGIN named (or "unknown"), before the stream is accepted: no byte of
 * the stream can reach the target before it.  Returns 0 when it is
 * written, 1 while the target has not taken all of it (the rest waits in
 * ${b}->pp: the socket stays "connecting" and connect_timeout bounds it),
 * or -1 when it failed (the stream is refused and ${b} freed).
 */
static int
proxy_send(struct bridge *b)
{
	uint8_t hdr[PROXY_HDR_MAX];
	const uint8_t *p = b->pp;
	size_t len = b->pp_len;
	ssize_t n;

	if (p == NULL) {
		n = proxy_header_origin(b->t->c->proxy_protocol,
		    engine_origin(link_engine(b->dl), b->id), hdr, sizeof(hdr));
		if (n < 0) {
			target_failed(b, EINVAL, "cannot make the PROXY header");
			return (-1);
		}
		p = hdr;
		len = (size_t)n;
	}
	n = send(b->fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		n = 0;
	if (n < 0) {
		char why[128];

		snprintf(why, sizeof(why), "writing the PROXY header: %s",
		    strerror(errno));
		target_failed(b, errno, why);
		return (-1);
	}
	if ((size_t)n == len) {
		free(b->pp);
		b->pp = NULL;
		return (0);
	}
	if (b->pp == NULL) {
		if ((b->pp = malloc(len - (size_t)n)) == NULL) {
			target_failed(b, ENOMEM, NULL);
			return (-1);
		}
		memcpy(b->pp, p + n, len - (size_t)n);
	} else {
		memmove(b->pp, b->pp + n, len - (size_t)n);
	}
	b->pp_len = len - (size_t)n;
	return (1);
}

/* The target is connected: accept the stream (after its PROXY header). */
static void
target_connected(struct bridge *b)
{
	struct engine *e = link_engine(b->dl);
	struct engine_ring tx, rx;

	if (b->t->c->proxy_protocol != 0 && proxy_send(b) != 0)
		return;
	connect_done(b);
	verbs_mem_ring(b->mem[0], &tx);
	verbs_mem_ring(b->mem[1], &rx);
	if (engine_accept(e, b->id, &tx, &rx, b) != 0) {
		refuse(b, WIRE_REASON_INTERNAL);
		return;
	}
	ring_limits(b, e);
	if (b->t->c->sz.resume_time > 0)
		(void)engine_keep(e, b->id);
	ST_ADD(b->t->st, opened, 1);
	want(b);
}

static void on_target_resolved(void *);

/* Connecting to the target's address ${i} failed with ${err}. */
static void
attempt_failed(struct bridge *b, size_t i, int err)
{
	char who[80];

	addr_text((struct sockaddr *)&b->tc->addrs.a[i], who,
	    sizeof(who));
	BLOG(LOG_DEBUG, b, "target %s at %s: %s", b->t->c->target.text, who,
	    strerror(err));
	b->tc->err = err;
	b->tc->refused &= err == ECONNREFUSED;
}

/* Take target socket ${fd} and watch it; on failure refuse (frees ${b}). */
static int
watch_target(struct bridge *b, int fd, uint32_t events)
{

	b->fd = fd;
	if ((b->w = loop_fd_add(link_loop(b->dl), fd, events, on_fd, b)) ==
	    NULL) {
		BLOG(LOG_ERR, b, "cannot watch the target socket");
		connect_done(b);
		refuse(b, WIRE_REASON_INTERNAL);
		return (-1);
	}
	return (0);
}

/*
 * Start connecting to the target's next address, skipping those that
 * fail at once; when none is left, refuse.  May free ${b}.
 */
static void
target_next(struct bridge *b)
{
	const struct conf_tunnel *c = b->t->c;
	const struct resolve_addrs *ra;
	struct tconn *tc = b->tc;
	const char *why;
	uint64_t now, left;
	size_t i;
	int fd;

	if (c->target.kind == CONF_ADDR_UNIX) {
		/* Unix connects finish at once; EAGAIN is a full backlog. */
		if ((fd = sock_connect_unix(c->target.path)) < 0) {
			target_failed(b, errno, NULL);
			return;
		}
		if (watch_target(b, fd, 0) == 0)
			target_connected(b);
		return;
	}
	if (tc->addrs.n == 0) {
		switch (rname_get(b->t->target_rn, &ra, &why)) {
		case 0:
			rname_wait(b->t->target_rn, &tc->rw, on_target_resolved,
			    b);
			return;
		case -1:
			tc->refused = 0;
			target_failed(b, EHOSTUNREACH, why);
			return;
		}
		tc->addrs = *ra;
	}
	while ((i = tc->next) < tc->addrs.n) {
		tc->next++;
		if ((fd = sock_connect_addr((struct sockaddr *)&tc->addrs.a[i],
		    tc->addrs.len[i])) < 0) {
			attempt_failed(b, i, errno);
			continue;
		}
		if (watch_target(b, fd, EPOLLOUT) != 0)
			return;
		/* A black hole must not eat the time the others need. */
		now = loop_now_ms();
		left = tc->deadline > now ? tc->deadline - now : 0;
		loop_timer_arm(&b->ctimer, left / (tc->addrs.n - i));
		return;
	}
	target_failed(b, tc->err, NULL);
}

static void
on_target_resolved(void *arg)
{
	struct bridge *b = arg;
	struct dlink *dl = b->dl;

	target_next(b);
	link_mark(dl);
}

/* This address did not answer in its share of the time: the next one. */
static void
target_retry(struct bridge *b, int err)
{

	close_fd(b, 0);
	/* A header cut short on that connection starts over on the next. */
	free(b->pp);
	b->pp = NULL;
	attempt_failed(b, b->tc->next - 1, err);
	target_next(b);
}

static void
on_fd(void *arg, uint32_t events)
{
	struct bridge *b = arg;
	struct dlink *dl = b->dl;
	int err;

	if (b->connecting) {
		/* Connected, with a PROXY header still going out: send it. */
		if (b->pp == NULL && (err = sock_connect_result(b->fd)) != 0)
			target_retry(b, err);
		else
			target_connected(b);
		link_mark(dl);
		return;
	}
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
		ST_ADD(b->t->st, refused, 1);
		if (errno == ENOBUFS)
			ST_ADD(b->t->st, limited, 1);
		bridge_free(b);
		return;
	}
	verbs_mem_ring(b->mem[0], &tx);
	verbs_mem_ring(b->mem[1], &rx);
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
			ST_ADD(b->t->st, refused, 1);
			ST_ADD(b->t->st, limited, 1);
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

/* An address did not answer in its time; past connect_timeout, refuse. */
static void
on_connect_timeout(void *arg)
{
	struct bridge *b = arg;
	struct dlink *dl = b->dl;

	if (!b->connecting || link_engine(dl) == NULL)
		return;
	if (b->tc != NULL && b->tc->next < b->tc->addrs.n &&
	    loop_now_ms() < b->tc->deadline) {
		target_retry(b, ETIMEDOUT);
	} else {
		char why[64];

		snprintf(why, sizeof(why), "no answer in %u s",
		    (unsigned)b->t->c->sz.connect_timeout);
		if (b->tc != NULL)
			b->tc->refused = 0;
		target_failed(b, ETIMEDOUT, why);
	}
	link_mark(dl);
}

void
bridge_incoming(struct dlink *dl, struct tun *t, uint32_t id)
{
	struct engine *e = link_engine(dl);
	struct bridge *b;

	if ((b = bridge_new(t, -1)) == NULL ||
	    (t->c->target.kind == CONF_ADDR_TCP &&
	    (b->tc = calloc(1, sizeof(*b->tc))) == NULL)) {
		engine_refuse(e, id, WIRE_REASON_INTERNAL);
		if (b != NULL)
			bridge_free(b);
		return;
	}
	b->dl = dl;
	b->server = 1;
	b->have_id = 1;
	b->id = id;
	b->connecting = 1;
	snprintf(b->who, sizeof(b->who), "%s", t->c->target.text);
	/* The peer's ORIGIN record came before its OPEN (see wire.h). */
	proxy_origin_text(engine_origin(e, id), b->origin, sizeof(b->origin));
	loop_timer_init(&b->ctimer, link_loop(dl), on_connect_timeout, b);
	loop_timer_arm(&b->ctimer, (uint64_t)t->c->sz.connect_timeout * 1000);
	if (b->tc != NULL) {
		b->tc->deadline = loop_now_ms() +
		    (uint64_t)t->c->sz.connect_timeout * 1000;
		b->tc->refused = 1;
	}
	/* Its events (the link failing while we connect) come to ${b}. */
	engine_set_user(e, id, b);
	/* Its rings first: a stream max_memory has no room for is refused
	 * before the target hears of it. */
	if (alloc_rings(b) != 0) {
		if (errno == ENOBUFS)
			ST_ADD(t->st, limited, 1);
		refuse(b, errno == ENOBUFS ? WIRE_REASON_LIMIT :
		    WIRE_REASON_INTERNAL);
		return;
	}
	target_next(b);
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
		ST_ADD(b->t->st, refused, 1);
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
		verbs_mem_detach(b->mem[0]);
		verbs_mem_detach(b->mem[1]);
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
	bi->bytes_in = b->bytes_in;
	bi->bytes_out = b->bytes_out;
	bi->age_ms = loop_now_ms() - b->started_ms;
	if (b->connecting && b->tc != NULL && b->tc->rw.n != NULL)
		bi->state = "resolving";
	else if (b->connecting)
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
	if (e != NULL && b->have_id && !b->connecting)
		bi->id = b->id;
}

int
bridge_adopt(struct bridge *b, struct dlink *dl, struct engine_ring *tx,
    struct engine_ring *rx)
{
	struct verbs_link *vl = link_verbs(dl);
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
	loop_timer_stop(&b->ctimer);
	loop_timer_init(&b->ctimer, link_loop(dl), on_connect_timeout, b);
	b->dl = dl;
	/* (A link that resumes streams never resized their rings.) */
	if (vl == NULL || verbs_mem_move(b->mem[0], vl, err, sizeof(err)) ||
	    verbs_mem_move(b->mem[1], vl, err, sizeof(err))) {
		BLOG(LOG_ERR, b, "cannot resume: %s", vl == NULL ?
		    "no link" : err);
		return (-1);
	}
	verbs_mem_ring(b->mem[0], tx);
	verbs_mem_ring(b->mem[1], rx);
	return (0);
}

void
bridge_sweep(struct tun *t, uint64_t now_ms)
{
	struct bridge *b;
	uint64_t limit = (uint64_t)t->c->sz.idle_timeout * 1000;

	/* Resetting frees nothing now: the links post it at the turn's end. */
	TAILQ_FOREACH(b, &t->streams, entry) {
		if (!b->have_id || b->connecting || b->closed || b->fd < 0 ||
		    now_ms - b->active_ms < limit)
			continue;
		BLOG(LOG_INFO, b, "idle for %u s; resetting the stream",
		    (unsigned)t->c->sz.idle_timeout);
		abort_stream(b, WIRE_REASON_TIMEOUT);
		link_mark(b->dl);
	}
}
