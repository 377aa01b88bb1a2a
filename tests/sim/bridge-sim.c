/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * bridge-sim: the daemon's own bridge.c, compiled in as it is, carrying
 * streams between real sockets on a real loop, over two real engines
 * joined by the simulator's fabric (simlink.h stands in for link.c; no
 * verbs, no RDMA device, no libibverbs linked).
 *
 * Side A is the client daemon: a TCP client connects, its socket goes to
 * bridge_client and bridge_open as tunnel.c would hand it over.  Side B
 * is the target daemon: the peer's OPEN goes to bridge_incoming, which
 * dials the tunnel's Unix target (dial.c).  Each tunnel comes from a
 * configuration file read by conf_load, with small rings that start at
 * ring_min and grow.  Checked: every byte arrives both ways, in order
 * (counts and hashes); the client's end of input reaches the target after
 * its last byte, and the target's bytes still flow the other way after it
 * (a half-closed stream); both bridges then end cleanly, giving every
 * ring back; the counters agree.  Then a stream whose target is gone:
 * refused on both sides, the client reset.
 */
#include "config.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bridge.h"
#include "budget.h"
#include "conf.h"
#include "engine.h"
#include "fabric.h"
#include "link.h"
#include "log.h"
#include "loop.h"
#include "rsd.h"
#include "simlink.h"
#include "tap.h"
#include "wire.h"

#define A_BYTES		(3u << 20)	/* client -> target */
#define B_BYTES		(5u << 20)	/* target -> client, the second half
					   only after the client's end */
#define RUN_MS		60000		/* a stream that never ends */

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
};

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
static struct end cli, tgt;
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

	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
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
 * to A's bridge, as tunnel.c's accept would pass it.
 */
static void
client_connect(int *mine, int *bridges)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int lfd;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(lfd, 1) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl) != 0 ||
	    (*mine = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
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

/* Side ${s} from configuration ${text}: its daemon and its one tunnel. */
static int
side_init(struct side *s, const char *name, const char *text)
{
	char path[128], err[1200];

	snprintf(path, sizeof(path), "%s/%s.conf", dir, name);
	write_file(path, text);
	memset(s, 0, sizeof(*s));
	if (conf_load(path, 0, &s->conf, err, sizeof(err)) != 0) {
		printf("# %s\n", err);
		return (-1);
	}
	s->d.lp = lp;
	s->d.conf = s->conf;
	TAILQ_INIT(&s->d.tuns);
	s->t.d = &s->d;
	s->t.conf = s->conf->tunnels[0];
	s->t.c = &s->t.conf;
	s->t.st = &s->st;
	s->t.lfd = -1;
	TAILQ_INIT(&s->t.streams);
	return (0);
}

/* The engines as the daemon's links make them from the tunnels' sizes. */
static struct engine_conf
engine_conf_of(const struct side *s)
{
	const struct conf_sizes *sz = &s->t.c->sz;
	struct engine_conf c;

	memset(&c, 0, sizeof(c));
	c.sq_size = sz->sq_size;
	c.rq_size = sz->rq_size;
	c.inline_size = sz->inline_size;
	c.max_streams = sz->max_streams;
	c.resume = sz->resume_time > 0;
	return (c);
}

static const char *
failure(void)
{
	const char *why;

	if ((why = simlink_error(A.dl)) != NULL ||
	    (why = simlink_error(B.dl)) != NULL)
		return (why);
	return (NULL);
}

/* Run the loop until ${done} or a failure, for RUN_MS at most. */
static int
run(int (*done)(void))
{
	uint64_t until = loop_now_ms() + RUN_MS;

	while (!done() && failure() == NULL && loop_now_ms() < until)
		if (loop_run_once(lp, 100) != 0)
			abort();
	if (failure() != NULL)
		printf("# failed: %s\n", failure());
	return (done());
}

static int
stream_done(void)
{

	return (cli.eof && tgt.fd > 0 && tgt.eof && A.t.nstreams == 0 &&
	    B.t.nstreams == 0);
}

static void
test_stream(void)
{
	struct bridge *b;
	unsigned live;
	uint32_t max;
	int mine, theirs;

	target_listen();
	client_connect(&mine, &theirs);
	end_init(&cli, "client", mine, A_BYTES, A_BYTES, 0xc11e47);
	end_watch(&cli);
	if ((b = bridge_client(&A.t, theirs, A.dl)) == NULL)
		abort();
	bridge_open(b);
	ok(run(stream_done), "a stream opens, carries %u and %u bytes and "
	    "ends on both sides", A_BYTES, B_BYTES);
	ok(cli.err == 0 && tgt.err == 0, "no read or write failed: %s, %s",
	    strerror(cli.err), strerror(tgt.err));
	ok(tgt.got == A_BYTES && tgt.rx_hash == cli.tx_hash,
	    "client to target: %llu of %u bytes, hash %s",
	    (unsigned long long)tgt.got, A_BYTES,
	    tgt.rx_hash == cli.tx_hash ? "equal" : "differs");
	ok(cli.got == B_BYTES && cli.rx_hash == tgt.tx_hash,
	    "target to client: %llu of %u bytes, hash %s",
	    (unsigned long long)cli.got, B_BYTES,
	    cli.rx_hash == tgt.tx_hash ? "equal" : "differs");
	ok(tgt.eof && tgt.sent_at_eof < B_BYTES && cli.got == B_BYTES,
	    "half-closed: after the client's end reached the target, the "
	    "target's last %llu bytes still reached the client",
	    (unsigned long long)(B_BYTES - tgt.sent_at_eof));
	ok(A.st.opened == 1 && B.st.opened == 1 && A.st.failed == 0 &&
	    B.st.failed == 0 && A.st.refused == 0 && B.st.refused == 0,
	    "counted opened once on each side, nothing failed or refused");
	ok(A.st.bytes_in == A_BYTES && B.st.bytes_out == A_BYTES &&
	    B.st.bytes_in == B_BYTES && A.st.bytes_out == B_BYTES,
	    "byte counters agree (A in %llu out %llu, B in %llu out %llu)",
	    (unsigned long long)A.st.bytes_in,
	    (unsigned long long)A.st.bytes_out,
	    (unsigned long long)B.st.bytes_in,
	    (unsigned long long)B.st.bytes_out);
	simlink_rings(A.dl, &live, &max);
	ok(live == 0 && budget_now(&A.st.pinned) == 0, "A: every ring given "
	    "back (%u held, %llu bytes charged)", live,
	    (unsigned long long)budget_now(&A.st.pinned));
	ok(max > A.t.c->sz.ring_min, "A: rings grew from ring_min %u to %u",
	    (unsigned)A.t.c->sz.ring_min, (unsigned)max);
	simlink_rings(B.dl, &live, &max);
	ok(live == 0 && budget_now(&B.st.pinned) == 0, "B: every ring given "
	    "back (%u held, %llu bytes charged)", live,
	    (unsigned long long)budget_now(&B.st.pinned));
	loop_fd_del(cli.w);
	close(cli.fd);
	loop_fd_del(tgt.w);
	close(tgt.fd);
	target_close();
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
	ok(run(refused_done), "a stream to a target that is not there ends "
	    "on both sides");
	ok(cli.err == ECONNRESET, "the client is reset: %s",
	    strerror(cli.err));
	ok(A.st.refused == ra + 1 && B.st.refused == rb + 1,
	    "refused, counted once on each side");
	loop_fd_del(cli.w);
	close(cli.fd);
}

static void
conf_text(char *buf, size_t len, const char *side)
{
	const char *sizes = "sendbuf = 65536; recvbuf = 65536; "
	    "ring_min = 4096; sq_size = 32; rq_size = 32;";

	if (strcmp(side, "a") == 0)
		snprintf(buf, len, "tunnels = ( { name = \"t\"; accept = "
		    "\"unix:%s/client.sock\"; peer = \"127.0.0.1\"; %s } );\n",
		    dir, sizes);
	else
		snprintf(buf, len, "listen = \"127.0.0.1\";\ntunnels = ( { "
		    "name = \"t\"; target = \"unix:%s\"; %s } );\n", tgt_path,
		    sizes);
}

int
main(void)
{
	struct engine_conf ca, cb;
	char text[1024];

	log_init(getenv("BRIDGE_SIM_DEBUG") != NULL ? LOG_DEBUG :
	    LOG_ERR);
	snprintf(dir, sizeof(dir), "/tmp/bridge-sim.XXXXXX");
	if (mkdtemp(dir) == NULL || (lp = loop_new()) == NULL)
		abort();
	snprintf(tgt_path, sizeof(tgt_path), "%s/target.sock", dir);
	conf_text(text, sizeof(text), "a");
	if (side_init(&A, "a", text) != 0)
		abort();
	conf_text(text, sizeof(text), "b");
	if (side_init(&B, "b", text) != 0)
		abort();
	ca = engine_conf_of(&A);
	cb = engine_conf_of(&B);
	if (fab_init(&fabric, &ca, &cb) != 0) {
		printf("# fab_init: %s\n", fabric.err);
		abort();
	}
	A.dl = simlink_new(lp, &fabric, 0, "side B", &ops, &A);
	B.dl = simlink_new(lp, &fabric, 1, "side A", &ops, &B);
	simlink_join(A.dl, B.dl);

	test_stream();
	test_refused();

	simlink_free(A.dl);
	simlink_free(B.dl);
	fab_free(&fabric);
	conf_free(A.conf);
	conf_free(B.conf);
	loop_free(lp);
	unlink(tgt_path);
	snprintf(text, sizeof(text), "%s/a.conf", dir);
	unlink(text);
	snprintf(text, sizeof(text), "%s/b.conf", dir);
	unlink(text);
	rmdir(dir);
	return (tap_done());
}
