/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * swarm: many TCP streams at once, for the scale test and benchmark.
 *
 *   swarm serve PORT
 *	An echo server on 127.0.0.1:PORT for any number of connections (one
 *	epoll loop): what arrives goes back; a client's end of input is
 *	answered with the end of output once everything was echoed.
 *
 *   swarm open PORTS N BYTES GO
 *	Open N streams to 127.0.0.1, spread over PORTS (comma-separated)
 *	in turn, at most 256 connecting at once.  Each sends BYTES bytes of
 *	its own pattern and checks that exactly those come back.  Prints
 *	"opened N streams in S s (R per second), every byte checked", then
 *	holds them all open and measures, while they are: one more stream's
 *	time from connect to its first 64 bytes back ("one more stream: X
 *	ms"), and 64-byte round trips on one of the open streams ("round
 *	trip with N open: median X us, p99 Y us").  Then it prints "holding"
 *	and waits until the file GO exists, sends each stream another BYTES,
 *	checks their echo, shuts every stream down and waits for each end:
 *	"closed N streams in S s, every byte checked".  Exits 0 if all went
 *	well, 1 (saying why) otherwise.
 *
 * Not a test by itself: the e2e test and the benchmark read its lines.
 */
#define _GNU_SOURCE		/* accept4 */
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNECTING	256
#define BUFSZ		65536

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

static void
die(const char *what)
{

	fprintf(stderr, "swarm: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void __attribute__((format(printf, 1, 2)))
fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "swarm: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

/* As many descriptors as the hard limit allows. */
static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static struct sockaddr_in
local(int port)
{
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return (sin);
}

/* ---------------------------------------------------------------- serve */

struct echo {
	int fd;
	char buf[BUFSZ];
	size_t len;		/* read, not yet written back */
	int eof;
};

static void
echo_want(int ep, struct echo *c)
{
	struct epoll_event ev;

	ev.events = (c->len < sizeof(c->buf) && !c->eof ? EPOLLIN : 0) |
	    (c->len > 0 ? EPOLLOUT : 0);
	ev.data.ptr = c;
	epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
}

static void
echo_io(int ep, struct echo *c)
{
	ssize_t n;

	if (c->len > 0) {
		n = send(c->fd, c->buf, c->len, MSG_NOSIGNAL);
		if (n > 0) {
			memmove(c->buf, c->buf + n, c->len - (size_t)n);
			c->len -= (size_t)n;
		} else if (n < 0 && errno != EAGAIN) {
			goto gone;
		}
	}
	if (!c->eof && c->len < sizeof(c->buf)) {
		n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
		if (n > 0)
			c->len += (size_t)n;
		else if (n == 0)
			c->eof = 1;
		else if (errno != EAGAIN)
			goto gone;
	}
	if (c->eof && c->len == 0) {
		shutdown(c->fd, SHUT_WR);
		goto gone;
	}
	echo_want(ep, c);
	return;
gone:
	close(c->fd);
	free(c);
}

static void __attribute__((noreturn))
serve(int port)
{
	struct sockaddr_in sin = local(port);
	struct epoll_event ev, evs[256];
	struct echo *c;
	int ls, ep, fd, n, i, one = 1;

	if ((ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) < 0)
		die("socket");
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(ls, 4096))
		die("listen");
	if ((ep = epoll_create1(0)) < 0)
		die("epoll_create1");
	ev.events = EPOLLIN;
	ev.data.ptr = NULL;
	epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
	for (;;) {
		if ((n = epoll_wait(ep, evs, 256, -1)) < 0 && errno != EINTR)
			die("epoll_wait");
		for (i = 0; i < n; i++) {
			if (evs[i].data.ptr != NULL) {
				echo_io(ep, evs[i].data.ptr);
				continue;
			}
			while ((fd = accept4(ls, NULL, NULL,
			    SOCK_NONBLOCK)) >= 0) {
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
				    sizeof(one));
				if ((c = calloc(1, sizeof(*c))) == NULL)
					die("calloc");
				c->fd = fd;
				ev.events = EPOLLIN;
				ev.data.ptr = c;
				epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
			}
		}
	}
}

/* ---------------------------------------------------------------- open */

struct strm {
	int fd;
	uint32_t idx;
	uint64_t sent, got;	/* pattern bytes sent, echoed back */
	uint64_t target;	/* bytes to have sent (and back) */
	int connected, shut, done;
};

static uint8_t
pat(uint32_t idx, uint64_t pos)
{

	return ((uint8_t)(idx * 131 + pos * 7 + (pos >> 8)));
}

/*
 * Move every stream until each got ${target} bytes back (and, with
 * ${shut}, saw its end after shutting down); returns the time it took.
 */
static double
drive(int ep, struct strm *s, uint32_t n, uint64_t target, int shut)
{
	struct epoll_event ev, evs[256];
	uint8_t buf[BUFSZ];
	uint32_t left = n, k, j;
	double t0 = now_s();
	struct strm *c;
	ssize_t r;
	size_t want;
	int m, i, err;
	socklen_t el;

	for (k = 0; k < n; k++) {
		s[k].target = target;
		s[k].done = 0;
		ev.events = EPOLLIN | EPOLLOUT;
		ev.data.ptr = &s[k];
		epoll_ctl(ep, EPOLL_CTL_MOD, s[k].fd, &ev);
	}
	while (left > 0) {
		if ((m = epoll_wait(ep, evs, 256, 120000)) <= 0)
			fail("no progress for 120 s, %lu of %lu streams "
			    "unfinished", (unsigned long)left, (unsigned long)n);
		for (i = 0; i < m; i++) {
			c = evs[i].data.ptr;
			if (c->done)
				continue;
			if (!c->connected) {
				el = sizeof(err);
				if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR,
				    &err, &el) || err != 0)
					fail("stream %lu: connect failed "
					    "(error %d)", (unsigned long)c->idx,
					    err);
				c->connected = 1;
			}
			while (c->sent < c->target) {
				want = c->target - c->sent < sizeof(buf) ?
				    c->target - c->sent : sizeof(buf);
				for (j = 0; j < want; j++)
					buf[j] = pat(c->idx, c->sent + j);
				if ((r = send(c->fd, buf, want,
				    MSG_NOSIGNAL)) <= 0)
					break;
				c->sent += (uint64_t)r;
			}
			if (c->sent == c->target && shut && !c->shut) {
				shutdown(c->fd, SHUT_WR);
				c->shut = 1;
			}
			while ((r = recv(c->fd, buf, sizeof(buf), 0)) > 0) {
				for (j = 0; j < (uint32_t)r; j++)
					if (buf[j] != pat(c->idx, c->got + j))
						fail("stream %lu: byte %llu is "
						    "wrong", (unsigned long)c->idx,
						    (unsigned long long)(c->got + j));
				c->got += (uint64_t)r;
				if (c->got > c->target)
					fail("stream %lu: more bytes back "
					    "than sent (%llu)", (unsigned long)c->idx,
					    (unsigned long long)c->got);
			}
			if (r == 0 && (!shut || c->got < c->target))
				fail("stream %lu: ended after %llu bytes",
				    (unsigned long)c->idx,
				    (unsigned long long)c->got);
			if (r < 0 && errno != EAGAIN)
				fail("stream %lu: reset after %llu bytes",
				    (unsigned long)c->idx,
				    (unsigned long long)c->got);
			if (c->got == c->target && (!shut || r == 0)) {
				c->done = 1;
				left--;
				ev.events = 0;
				ev.data.ptr = c;
				epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
			} else if (c->sent == c->target) {
				ev.events = EPOLLIN;
				ev.data.ptr = c;
				epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
			}
		}
	}
	return (now_s() - t0);
}

static int
dial(int port, int nonblock)
{
	struct sockaddr_in sin = local(port);
	int fd, one = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM | (nonblock ? SOCK_NONBLOCK :
	    0), 0)) < 0)
		die("socket");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 &&
	    errno != EINPROGRESS)
		die("connect");
	return (fd);
}

/* Exactly ${n} bytes, blocking. */
static void
full(int fd, uint8_t *buf, size_t n, int in)
{
	ssize_t r;
	size_t done = 0;

	while (done < n) {
		r = in ? recv(fd, buf + done, n - done, 0) :
		    send(fd, buf + done, n - done, MSG_NOSIGNAL);
		if (r <= 0)
			die(in ? "recv (one more stream)" :
			    "send (one more stream)");
		done += (size_t)r;
	}
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

/* While all are open: one more stream, and round trips on an open one. */
static void
probe(int port, int fd)
{
	uint8_t req[64], back[64];
	double t0, rt[200];
	int nfd, i, fl;

	memset(req, 'x', sizeof(req));
	t0 = now_s();
	nfd = dial(port, 0);
	full(nfd, req, sizeof(req), 0);
	full(nfd, back, sizeof(back), 1);
	printf("one more stream: %.2f ms from connect to its 64 bytes back\n",
	    (now_s() - t0) * 1e3);
	close(nfd);
	fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	for (i = 0; i < 200; i++) {
		t0 = now_s();
		full(fd, req, sizeof(req), 0);
		full(fd, back, sizeof(back), 1);
		rt[i] = (now_s() - t0) * 1e6;
	}
	fcntl(fd, F_SETFL, fl);
	qsort(rt, 200, sizeof(rt[0]), cmp);
	printf("round trip of 64 bytes with all open: median %.0f us, p99 "
	    "%.0f us\n", rt[100], rt[198]);
}

static int
open_many(const char *ports_s, uint32_t n, uint64_t bytes, const char *go)
{
	int ports[1024], np = 0, ep;
	char *copy, *tok, *save = NULL;
	struct strm *s;
	struct epoll_event ev;
	struct stat st;
	uint32_t k, batch;
	double t, topen = 0;

	if ((copy = strdup(ports_s)) == NULL)
		die("strdup");
	for (tok = strtok_r(copy, ",", &save); tok != NULL && np < 1024;
	    tok = strtok_r(NULL, ",", &save))
		ports[np++] = atoi(tok);
	free(copy);
	if (np == 0 || n == 0 || bytes == 0)
		fail("nothing to do (%d ports, %lu streams)", np,
		    (unsigned long)n);
	if ((s = calloc(n, sizeof(*s))) == NULL)
		die("calloc");
	if ((ep = epoll_create1(0)) < 0)
		die("epoll_create1");
	/* Open in batches, each batch carrying its bytes both ways. */
	for (k = 0; k < n; k += batch) {
		batch = n - k < MAX_CONNECTING ? n - k : MAX_CONNECTING;
		for (uint32_t j = k; j < k + batch; j++) {
			s[j].idx = j;
			s[j].fd = dial(ports[j % (uint32_t)np], 1);
			ev.events = 0;
			ev.data.ptr = &s[j];
			if (epoll_ctl(ep, EPOLL_CTL_ADD, s[j].fd, &ev))
				die("epoll_ctl");
		}
		topen += drive(ep, s + k, batch, bytes, 0);
	}
	printf("opened %lu streams in %.2f s (%.0f per second), every byte "
	    "checked\n", (unsigned long)n, topen, n / topen);
	probe(ports[0], s[0].fd);
	printf("holding\n");
	fflush(stdout);
	while (stat(go, &st) != 0)
		usleep(100000);
	t = drive(ep, s, n, 2 * bytes, 1);
	printf("closed %lu streams in %.2f s, every byte checked\n",
	    (unsigned long)n, t);
	return (0);
}

int
main(int argc, char **argv)
{

	setvbuf(stdout, NULL, _IOLBF, 0);
	raise_nofile();
	if (argc == 3 && strcmp(argv[1], "serve") == 0)
		serve(atoi(argv[2]));
	if (argc == 6 && strcmp(argv[1], "open") == 0)
		return (open_many(argv[2], (uint32_t)strtoul(argv[3], NULL, 10),
		    strtoull(argv[4], NULL, 10), argv[5]));
	fprintf(stderr, "usage: swarm serve PORT\n"
	    "       swarm open PORTS N BYTES GO\n");
	return (2);
}
