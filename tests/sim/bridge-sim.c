/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * bridge-sim: the daemon's own bridge.c and tunnel.c, compiled in as they
 * are, carrying streams between real sockets on a real loop, over two
 * real engines joined by the simulator's fabric (simlink.h stands in for
 * link.c and cm.c; no verbs, no RDMA device, no libibverbs linked).
 *
 * Side A is the client daemon, side B the target daemon; each tunnel
 * comes from a configuration file read by conf_load, with small rings
 * that start at ring_min and grow.  First bridge.c alone: a loopback TCP
 * client's socket goes to bridge_client and bridge_open as tunnel.c would
 * hand it over, and the peer's OPEN to bridge_incoming, which dials the
 * tunnel's Unix target (dial.c).  Then the same through tunnel.c: two
 * daemons started by tunnel_start, a client of A's tunnel listener, B's
 * admission.  Checked each time: every byte arrives both ways, in order
 * (counts and hashes); the client's end of input reaches the target after
 * its last byte, and the target's bytes still flow the other way after it
 * (a half-closed stream); both bridges then end cleanly, giving every
 * ring back; the counters agree.  And a stream whose target is gone:
 * refused on both sides, the client reset.
 *
 * Then the budget of a stream's turn (TURN_BYTES in bridge.c): with
 * rings of 1 MiB, sockets that hold more than a budget stop turns at the
 * budget, counted each way on each side (budget_stops_in and _out); with
 * rings of 64 KiB, a turn that moves a budget fills or empties its ring,
 * and one that reads the client's last 64 KiB empties its socket: neither
 * is counted.
 */
#include "config.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bridge.h"
#include "budget.h"
#include "conf.h"
#include "engine.h"
#include "engine_stream.h"
#include "fabric.h"
#include "link.h"
#include "log.h"
#include "loop.h"
#include "loopback.h"
#include "rsd.h"
#include "secmem.h"
#include "simlink.h"
#include "tap.h"
#include "tunnel.h"
#include "wire.h"

#define A_BYTES		(3u << 20)	/* client -> target */
#define B_BYTES		(5u << 20)	/* target -> client, the second half
					   only after the client's end */
#define RUN_MS		60000		/* a stream that never ends */
#define TURN_BYTES	65536		/* bridge.c's */

/* The tunnels' sizes: rings from ring_min up to 64 KiB; of 64 KiB; of
   1 MiB. */
#define QUEUES		"sq_size = 32; rq_size = 32;"
#define GROWING		"sendbuf = 65536; recvbuf = 65536; ring_min = 4096; " \
			QUEUES
#define FIXED_64K	"sendbuf = 65536; recvbuf = 65536; ring_min = 0; " \
			QUEUES
#define FIXED_1M	"sendbuf = 1048576; recvbuf = 1048576; ring_min = 0; " \
			QUEUES

/* One of the test's own sockets: the client's, or the target's. */
struct end {
	const char *name;
	int fd;
	struct loop_fd *w;
	uint64_t total;			/* bytes to send */
	uint64_t hold;			/* send no more until the peer's end */
	uint64_t sent, got;
	uint64_t rng;			/* what it sends */
	uint64_t tx_hash, rx_hash;	/* FNV-1a of what it sent, got */
	uint8_t buf[65536];
	size_t off, len;
	int shut;			/* all sent: shut down for writing */
	int eof;			/* the other side's end came */
	int err;			/* errno of a failed read or write */
	uint64_t sent_at_eof;
	uint64_t gulp;			/* end_gulp when it was made */
};

/*
 * With end_gulp, an end reads nothing while fewer bytes than that are
 * on their way to it over the link (read from the other end's socket,
 * not yet written to its own), unless the other end has sent them all:
 * the bridge writing to it finds its socket full, and its receive ring
 * fills meanwhile; then it reads all there is.  0: an end reads whatever
 * comes.
 */
static uint64_t end_gulp;

/* One daemon: its configuration, its tunnel and its link. */
struct side {
	struct rsd d;
	struct tun t;
	struct tun_stats st;
	struct conf *conf;
	struct dlink *dl;
};

static struct loop *lp;
static struct fab fabric;
static struct side A, B;
static int tgt_lfd = -1;
static struct loop_fd *tgt_lw;
static char dir[40], tgt_path[64];

static uint64_t
fnv(uint64_t h, const uint8_t *p, size_t n)
{

	while (n-- > 0)
		h = (h ^ *p++) * 0x100000001b3ull;
	return (h);
}

static uint64_t
rnd(uint64_t *s)
{

	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (*s);
}

static void
end_init(struct end *e, const char *name, int fd, uint64_t total,
    uint64_t hold, uint64_t seed)
{

	memset(e, 0, sizeof(*e));
	e->name = name;
	e->fd = fd;
	e->total = total;
	e->hold = hold;
	e->rng = seed;
	e->tx_hash = e->rx_hash = 0xcbf29ce484222325ull;
	e->gulp = end_gulp;
}

static struct end cli, tgt;
/* The tunnels the streams run on: the client's and the target's. */
static struct tun *ta, *tb;

/* Whether ${e} reads now (end_gulp). */
static int
end_gulps(const struct end *e)
{
	const struct end *src = e == &cli ? &tgt : &cli;
	const struct tun *in = e == &cli ? tb : ta, *out = e == &cli ? ta : tb;

	return (e->gulp == 0 || src->name == NULL || src->sent == src->total ||
	    in->st->bytes_in - out->st->bytes_out >= e->gulp);
}

static void
end_read(struct end *e)
{
	uint8_t b[32768];
	ssize_t n;

	while (!e->eof) {
		n = recv(e->fd, b, sizeof(b), MSG_DONTWAIT);
		if (n > 0) {
			e->rx_hash = fnv(e->rx_hash, b, (size_t)n);
			e->got += (uint64_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n < 0)
			e->err = errno;
		e->eof = 1;
		e->sent_at_eof = e->sent;
		e->hold = e->total;	/* the peer's end releases it */
	}
}

static void
end_write(struct end *e)
{
	uint64_t limit = e->hold < e->total ? e->hold : e->total;
	size_t k;
	ssize_t n;

	while (e->sent < limit && !e->err) {
		if (e->off == e->len) {
			/* Writes of every size, 1 byte to 64 KiB. */
			e->len = 1 + rnd(&e->rng) % sizeof(e->buf);
			if (e->len > limit - e->sent)
				e->len = (size_t)(limit - e->sent);
			for (k = 0; k < e->len; k++)
				e->buf[k] = (uint8_t)(rnd(&e->rng) >> 24);
			e->off = 0;
		}
		n = send(e->fd, e->buf + e->off, e->len - e->off,
		    MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				e->err = errno;
			return;
		}
		e->tx_hash = fnv(e->tx_hash, e->buf + e->off, (size_t)n);
		e->off += (size_t)n;
		e->sent += (uint64_t)n;
	}
	if (e->sent == e->total && !e->shut) {
		shutdown(e->fd, SHUT_WR);
		e->shut = 1;
	}
}

static void
end_want(struct end *e)
{
	uint32_t ev = 0;

	if (!e->eof)
		ev |= EPOLLIN;
	if (!e->shut && !e->err && e->sent < e->hold)
		ev |= EPOLLOUT;
	(void)loop_fd_set(e->w, ev);
}

static void
on_end(void *arg, uint32_t events)
{
	struct end *e = arg;

	if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && end_gulps(e))
		end_read(e);
	if (events & EPOLLOUT)
		end_write(e);
	end_want(e);
}

static void
end_watch(struct end *e)
{

	if ((e->w = loop_fd_add(lp, e->fd, EPOLLIN | EPOLLOUT, on_end, e)) ==
	    NULL)
		abort();
}

static void
end_close(struct end *e)
{

	loop_fd_del(e->w);
	close(e->fd);
}

/* The target: B's dial connects here; the test's target end is born. */
static void
on_target(void *arg, uint32_t events)
{
	int fd;

	(void)arg;
	(void)events;
	if ((fd = accept4(tgt_lfd, NULL, NULL, SOCK_NONBLOCK)) < 0)
		return;
	end_init(&tgt, "target", fd, B_BYTES, B_BYTES / 2, 0x7e57ab1e);
	end_watch(&tgt);
}

static void
target_listen(void)
{
	struct sockaddr_un sa;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", tgt_path);
	if ((tgt_lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0)) < 0 ||
	    bind(tgt_lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(tgt_lfd, 8) != 0 ||
	    (tgt_lw = loop_fd_add(lp, tgt_lfd, EPOLLIN, on_target, NULL)) ==
	    NULL)
		abort();
}

static void
target_close(void)
{

	loop_fd_del(tgt_lw);
	close(tgt_lfd);
	unlink(tgt_path);
}

/*
 * A client connects over loopback TCP (so its address travels in the
 * stream's ORIGIN record): the test keeps one socket, and the other goes
 * to A's bridge, as tunnel.c's accept would pass it.  With end_gulp, a
 * Unix socket pair instead: a loopback TCP connection's buffers grow to
 * hold MiBs of the stream, and gulps would wait long to fill them.
 */
static void
client_connect(int *mine, int *bridges)
{
	struct sockaddr_in sa;
	int lfd, sv[2];

	if (end_gulp > 0) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 ||
		    fcntl(sv[1], F_SETFL, O_NONBLOCK) != 0)
			abort();
		*mine = sv[0];
		*bridges = sv[1];
		return;
	}
	lfd = loopback_listen(1, &sa);
	if ((*mine = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    connect(*mine, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    (*bridges = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) < 0)
		abort();
	close(lfd);
}

/* tunnel.c's stream_arrives, without admission: a tunnel of this name. */
static void
on_incoming(void *arg, struct dlink *dl, uint32_t id, const char *name)
{
	struct side *s = arg;

	if (s->conf->tunnels[0].has_target && strcmp(name, s->t.c->name) == 0)
		bridge_incoming(dl, &s->t, id);
	else
		engine_refuse(link_engine(dl), id, WIRE_REASON_NO_TUNNEL);
}

/* tunnel.c's stream_event. */
static void
on_event(void *arg, struct dlink *dl, const struct engine_event *ev)
{

	(void)arg;
	(void)dl;
	bridge_event(ev->user, ev);
}

static const struct link_ops ops = {
	.incoming = on_incoming,
	.event = on_event
};

static void
write_file(const char *path, const char *text)
{
	FILE *fp;

	if ((fp = fopen(path, "w")) == NULL || fputs(text, fp) == EOF ||
	    fclose(fp) != 0)
		abort();
}

/*
 * Configuration ${name} ("a": the client's, "b": the target's), its
 * tunnel with ${sizes}.
 */
static struct conf *
conf_of(const char *name, const char *sizes)
{
	char path[128], text[1024], err[1200];
	struct conf *c;

	if (strcmp(name, "a") == 0)
		snprintf(text, sizeof(text), "tunnels = ( { name = \"t\"; "
		    "accept = \"unix:%s/client.sock\"; peer = \"127.0.0.1\"; "
		    "%s } );\n", dir, sizes);
	else
		snprintf(text, sizeof(text), "listen = \"127.0.0.1\";\n"
		    "tunnels = ( { name = \"t\"; target = \"unix:%s\"; %s } );"
		    "\n", tgt_path, sizes);
	snprintf(path, sizeof(path), "%s/%s.conf", dir, name);
	write_file(path, text);
	if (conf_load(path, 0, &c, err, sizeof(err)) != 0) {
		printf("# %s\n", err);
		abort();
	}
	unlink(path);
	return (c);
}

/*
 * Side ${s}, for bridge.c alone: a daemon with one tunnel, by hand, of
 * ${sizes}.
 */
static void
side_init(struct side *s, const char *name, const char *sizes)
{

	memset(s, 0, sizeof(*s));
	s->conf = conf_of(name, sizes);
	s->d.lp = lp;
	s->d.conf = s->conf;
	TAILQ_INIT(&s->d.tuns);
	s->t.d = &s->d;
	s->t.conf = s->conf->tunnels[0];
	s->t.c = &s->t.conf;
	s->t.st = &s->st;
	s->t.lfd = -1;
	TAILQ_INIT(&s->t.streams);
}

/* The engines as the daemon's links make them from the tunnels' sizes. */
static struct engine_conf
engine_conf_of(const struct conf *cf)
{
	const struct conf_sizes *sz = &cf->tunnels[0].sz;
	struct engine_conf c;

	memset(&c, 0, sizeof(c));
	c.sq_size = sz->sq_size;
	c.rq_size = sz->rq_size;
	c.inline_size = sz->inline_size;
	c.max_streams = sz->max_streams;
	c.resume = sz->resume_time > 0;
	return (c);
}

/* Two engines joined on fabric ${f}, made as configurations say. */
static void
fabric_init(struct fab *f, const struct conf *a, const struct conf *b)
{
	struct engine_conf ca = engine_conf_of(a), cb = engine_conf_of(b);

	if (fab_init(f, &ca, &cb) != 0) {
		printf("# fab_init: %s\n", f->err);
		abort();
	}
}

/* Run the loop until ${done} or a failure, for RUN_MS at most. */
static int
run(int (*done)(void))
{
	uint64_t until = loop_now_ms() + RUN_MS;

	while (!done() && simlink_error() == NULL && loop_now_ms() < until)
		if (loop_run_once(lp, 100) != 0)
			abort();
	if (simlink_error() != NULL)
		printf("# failed: %s\n", simlink_error());
	return (done());
}

static int
stream_done(void)
{

	return (cli.eof && tgt.name != NULL && tgt.eof && ta->nstreams == 0 &&
	    tb->nstreams == 0);
}

/*
 * The first stream of tunnels ${ta} and ${tb}, from client end ${cli} to
 * the target: run it to its end, check it (${via} says how it was made),
 * and close the test's ends.
 */
static void
stream_check(const char *via)
{
	uint64_t a_bytes = cli.total;
	unsigned live;
	uint32_t max;

	ok(run(stream_done), "%s: a stream opens, carries %llu and %u bytes "
	    "and ends on both sides", via, (unsigned long long)a_bytes,
	    B_BYTES);
	ok(cli.err == 0 && tgt.err == 0, "%s: no read or write failed: %s, %s",
	    via, strerror(cli.err), strerror(tgt.err));
	ok(tgt.got == a_bytes && tgt.rx_hash == cli.tx_hash,
	    "%s: client to target: %llu of %llu bytes, hash %s", via,
	    (unsigned long long)tgt.got, (unsigned long long)a_bytes,
	    tgt.rx_hash == cli.tx_hash ? "equal" : "differs");
	ok(cli.got == B_BYTES && cli.rx_hash == tgt.tx_hash,
	    "%s: target to client: %llu of %u bytes, hash %s", via,
	    (unsigned long long)cli.got, B_BYTES,
	    cli.rx_hash == tgt.tx_hash ? "equal" : "differs");
	ok(tgt.eof && tgt.sent_at_eof < B_BYTES && cli.got == B_BYTES,
	    "%s: half-closed: after the client's end reached the target, the "
	    "target's last %llu bytes still reached the client", via,
	    (unsigned long long)(B_BYTES - tgt.sent_at_eof));
	ok(ta->st->opened == 1 && tb->st->opened == 1 &&
	    ta->st->failed == 0 && tb->st->failed == 0 &&
	    ta->st->refused == 0 && tb->st->refused == 0,
	    "%s: counted opened once on each side, nothing failed or refused",
	    via);
	ok(ta->st->bytes_in == a_bytes && tb->st->bytes_out == a_bytes &&
	    tb->st->bytes_in == B_BYTES && ta->st->bytes_out == B_BYTES,
	    "%s: byte counters agree (A in %llu out %llu, B in %llu out %llu)",
	    via, (unsigned long long)ta->st->bytes_in,
	    (unsigned long long)ta->st->bytes_out,
	    (unsigned long long)tb->st->bytes_in,
	    (unsigned long long)tb->st->bytes_out);
	simlink_rings(&live, &max);
	ok(live == 0 && budget_now(&ta->st->pinned) == 0 &&
	    budget_now(&tb->st->pinned) == 0, "%s: every ring given back (%u "
	    "held, %llu and %llu bytes charged)", via, live,
	    (unsigned long long)budget_now(&ta->st->pinned),
	    (unsigned long long)budget_now(&tb->st->pinned));
	end_close(&cli);
	if (tgt.name != NULL)
		end_close(&tgt);
	memset(&tgt, 0, sizeof(tgt));
}

/*
 * Sides A and B for bridge.c alone, their tunnels of ${sizes}, on a
 * fabric of their own, with their counters from 0.
 */
static void
sides_init(const char *sizes)
{

	side_init(&A, "a", sizes);
	side_init(&B, "b", sizes);
	fabric_init(&fabric, A.conf, B.conf);
	A.dl = simlink_new(lp, &fabric, 0, "side B", &ops, &A);
	B.dl = simlink_new(lp, &fabric, 1, "side A", &ops, &B);
	simlink_join(A.dl, B.dl);
	ta = &A.t;
	tb = &B.t;
}

static void
sides_free(void)
{

	simlink_free(A.dl);
	simlink_free(B.dl);
	fab_free(&fabric);
	conf_free(A.conf);
	conf_free(B.conf);
}

/*
 * A stream through bridge_client and bridge_open: the client sends
 * ${total} bytes (all of them into its socket before the stream opens,
 * if ${before}), the target B_BYTES; checked as stream_check does.
 */
static void
bridge_stream(const char *via, uint64_t total, int before)
{
	struct bridge *b;
	int mine, theirs;

	target_listen();
	client_connect(&mine, &theirs);
	end_init(&cli, "client", mine, total, total, 0xc11e47);
	if (before) {
		end_write(&cli);
		if (cli.sent != total)
			printf("# only %llu of %llu bytes went into the "
			    "client's socket\n", (unsigned long long)cli.sent,
			    (unsigned long long)total);
	}
	end_watch(&cli);
	if ((b = bridge_client(&A.t, theirs, A.dl)) == NULL)
		abort();
	bridge_open(b);
	stream_check(via);
	target_close();
}

/* bridge.c alone: streams handed to bridge_client and bridge_open. */
static void
test_stream(void)
{
	unsigned live;
	uint32_t max;

	bridge_stream("bridge", A_BYTES, 0);
	simlink_rings(&live, &max);
	ok(max > A.t.c->sz.ring_min, "bridge: rings grew from ring_min %u to "
	    "%u", (unsigned)A.t.c->sz.ring_min, (unsigned)max);
}

static int
refused_done(void)
{

	return (cli.eof && A.t.nstreams == 0 && B.t.nstreams == 0);
}

/* The target is gone: B refuses the stream, A resets its client. */
static void
test_refused(void)
{
	uint64_t ra = A.st.refused, rb = B.st.refused;
	struct bridge *b;
	int mine, theirs;

	client_connect(&mine, &theirs);
	end_init(&cli, "client", mine, 100, 100, 0xdead);
	end_watch(&cli);
	if ((b = bridge_client(&A.t, theirs, A.dl)) == NULL)
		abort();
	bridge_open(b);
	ok(run(refused_done), "bridge: a stream to a target that is not there "
	    "ends on both sides");
	ok(cli.err == ECONNRESET, "bridge: the client is reset: %s",
	    strerror(cli.err));
	ok(A.st.refused == ra + 1 && B.st.refused == rb + 1,
	    "bridge: refused, counted once on each side");
	end_close(&cli);
}

/* Side ${s}'s budget stops, in and out, for a test's name. */
#define STOPS(s)	(unsigned long long)(s).st.budget_stops_in,	\
			(unsigned long long)(s).st.budget_stops_out

/*
 * Rings of 1 MiB: the bulk of each way stops turns at the budget, counted
 * on the side that reads it from a socket (in) and on the one that writes
 * it to a socket (out; the ends read in gulps, end_gulp, so that the
 * receive ring fills while the socket is full, and the socket then takes
 * more than a budget).  A client that sends exactly one budget and ends
 * stops nothing: its turn moved 64 KiB and left the socket empty.
 */
static void
test_budget(void)
{

	end_gulp = 4 * TURN_BYTES;
	sides_init(FIXED_1M);
	bridge_stream("budget, 64 KiB from the client", TURN_BYTES, 1);
	ok(A.st.budget_stops_in == 0 && B.st.budget_stops_out == 0,
	    "budget: 64 KiB from the client, then its end: no turn counted "
	    "(A in %llu out %llu, B in %llu out %llu)", STOPS(A), STOPS(B));
	ok(B.st.budget_stops_in > 0 && A.st.budget_stops_out > 0,
	    "budget: %u bytes from the target through rings of 1 MiB: turns "
	    "stopped at the budget on both sides (B in %llu, A out %llu)",
	    B_BYTES, (unsigned long long)B.st.budget_stops_in,
	    (unsigned long long)A.st.budget_stops_out);
	sides_free();

	sides_init(FIXED_1M);
	bridge_stream("budget, 3 MiB from the client", A_BYTES, 0);
	ok(A.st.budget_stops_in > 0 && B.st.budget_stops_out > 0,
	    "budget: %u bytes from the client through rings of 1 MiB: turns "
	    "stopped at the budget on both sides (A in %llu, B out %llu)",
	    A_BYTES, (unsigned long long)A.st.budget_stops_in,
	    (unsigned long long)B.st.budget_stops_out);
	sides_free();
	end_gulp = 0;
}

/*
 * Rings of 64 KiB, one budget: a turn that moves a budget fills the send
 * ring or empties the receive ring, which would have ended it anyway.
 */
static void
test_budget_small_rings(void)
{

	sides_init(FIXED_64K);
	bridge_stream("budget, rings of 64 KiB", A_BYTES, 0);
	ok(A.st.budget_stops_in == 0 && A.st.budget_stops_out == 0 &&
	    B.st.budget_stops_in == 0 && B.st.budget_stops_out == 0,
	    "budget: rings of 64 KiB: no turn counted (A in %llu out %llu, "
	    "B in %llu out %llu)", STOPS(A), STOPS(B));
	sides_free();
}

/* A client of tunnel.c's listener: connected to A's accept address. */
static int
client_of(const struct tun *t)
{
	struct sockaddr_un sa;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", t->c->accept.path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		abort();
	return (fd);
}

static int
tunnel_up(void)
{

	return (link_is_up(ta->link));
}

/*
 * tunnel.c too: two daemons started by tunnel_start from their
 * configurations, a client of A's tunnel listener, B's admission.
 */
static void
test_tunnel(void)
{
	static struct fab f;
	struct rsd da, db;
	char err[1200];

	memset(&da, 0, sizeof(da));
	memset(&db, 0, sizeof(db));
	da.lp = db.lp = lp;
	da.conf = conf_of("a", GROWING);
	db.conf = conf_of("b", GROWING);
	fabric_init(&f, da.conf, db.conf);
	simlink_fabric(&f);
	if (tunnel_start(&db, err, sizeof(err)) != 0 ||
	    tunnel_start(&da, err, sizeof(err)) != 0) {
		printf("# tunnel_start: %s\n", err);
		abort();
	}
	ta = tunnel_find(&da, "t");
	tb = tunnel_find(&db, "t");
	ok(ta != NULL && tb != NULL && run(tunnel_up), "tunnel: both daemons "
	    "start, and A's link comes up");
	target_listen();
	end_init(&cli, "client", client_of(ta), A_BYTES, A_BYTES, 0xc11e48);
	end_watch(&cli);
	stream_check("tunnel");
	ok(tunnel_streams(&da) == 0 && tunnel_streams(&db) == 0,
	    "tunnel: no stream left on either daemon");
	tunnel_stop(&da);
	tunnel_stop(&db);
	target_close();
	fab_free(&f);
	conf_free(da.conf);
	conf_free(db.conf);
}

int
main(void)
{

	log_init(getenv("BRIDGE_SIM_DEBUG") != NULL ? LOG_DEBUG :
	    LOG_ERR);
	snprintf(dir, sizeof(dir), "/tmp/bridge-sim.XXXXXX");
	if (secmem_init() != 0 || mkdtemp(dir) == NULL ||
	    (lp = loop_new()) == NULL)
		abort();
	snprintf(tgt_path, sizeof(tgt_path), "%s/target.sock", dir);
	sides_init(GROWING);
	test_stream();
	test_refused();
	sides_free();
	test_budget();
	test_budget_small_rings();

	test_tunnel();

	loop_free(lp);
	rmdir(dir);
	return (tap_done());
}
