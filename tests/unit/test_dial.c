/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for daemon/dial, on a real loop and real sockets, with no
 * link or engine: a dial hands over its connected socket with the PROXY
 * header already written, byte for byte; a target that is not there or
 * refuses ends it with the reason its stream is refused with, said once;
 * a dial given up on never reports.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "dial.h"
#include "loop.h"
#include "loopback.h"
#include "proxy.h"
#include "resolve.h"
#include "tap.h"
#include "wire.h"

static struct {
	int done, says;
	struct dial_end end;
	char why[256];
} got;

static void
on_say(void *arg, int level, const char *what)
{

	(void)arg;
	(void)level;
	(void)what;
	got.says++;
}

static void
on_done(void *arg, const struct dial_end *end)
{

	(void)arg;
	got.done++;
	got.end = *end;
	snprintf(got.why, sizeof(got.why), "%s", end->why != NULL ? end->why :
	    "(null)");
}

static const struct dial_ops ops = { on_say, on_done };

static struct loop *lp;
static struct resolver *res;

/* Dial ${c} (origin ${o}) and run the loop until it reports, or 2 s. */
static void
dial(const struct conf_tunnel *c, struct rname *rn,
    const struct wire_origin *o)
{
	struct dial *d;
	int i;

	memset(&got, 0, sizeof(got));
	if ((d = dial_new(lp, c, rn, o, &ops, NULL)) == NULL)
		abort();
	dial_start(d);
	for (i = 0; i < 200 && got.done == 0; i++)
		(void)loop_run_once(lp, 10);
}

/* What the target read first: ${len} bytes equal to ${want}? */
static int
header_is(int lfd, const uint8_t *want, size_t len)
{
	struct timeval tv = { 1, 0 };	/* a header that never comes */
	uint8_t buf[PROXY_HDR_MAX];
	ssize_t n;
	int fd;

	if ((fd = accept(lfd, NULL, NULL)) < 0)
		return (0);
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(fd, buf, sizeof(buf), 0);
	close(fd);
	return (n == (ssize_t)len && memcmp(buf, want, len) == 0);
}

static int
unix_listener(const char *path, int listening)
{
	struct sockaddr_un sa;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    (listening && listen(fd, 8) != 0))
		abort();
	return (fd);
}

/* A TCP listener on 127.0.0.1, its port in ${port}; or, closed, none. */
static int
tcp_listener(char *port, size_t len, int keep)
{
	struct sockaddr_in sa;
	int fd = loopback_listen(8, &sa);

	snprintf(port, len, "%u", (unsigned)ntohs(sa.sin_port));
	if (!keep) {
		close(fd);
		return (-1);
	}
	return (fd);
}

static void
test_unix(struct conf_tunnel *c, const char *path)
{
	uint8_t want[PROXY_HDR_MAX];
	ssize_t wl;
	int lfd;

	c->target.kind = CONF_ADDR_UNIX;
	snprintf(c->target.path, sizeof(c->target.path), "%s", path);
	c->proxy_protocol = 1;
	lfd = unix_listener(path, 1);
	dial(c, NULL, NULL);
	wl = proxy_header_origin(1, NULL, want, sizeof(want));
	ok(got.done == 1 && got.end.fd >= 0 && got.says == 0,
	    "a Unix target: connected, reported once, nothing said");
	ok(wl > 0 && header_is(lfd, want, (size_t)wl),
	    "its PROXY v1 header (unknown client) came first, byte for byte");
	if (got.end.fd >= 0)
		close(got.end.fd);
	close(lfd);

	lfd = unix_listener(path, 0);
	dial(c, NULL, NULL);
	ok(got.done == 1 && got.end.fd < 0 &&
	    got.end.reason == WIRE_REASON_TARGET_REFUSED &&
	    strcmp(got.why, strerror(ECONNREFUSED)) == 0,
	    "a Unix target nobody accepts on is refused: %s", got.why);
	close(lfd);
	unlink(path);
	dial(c, NULL, NULL);
	ok(got.done == 1 && got.end.fd < 0 &&
	    got.end.reason == WIRE_REASON_TARGET_UNREACHABLE &&
	    strcmp(got.why, strerror(ENOENT)) == 0,
	    "a Unix target that is not there is unreachable: %s", got.why);
}

static void
test_tcp(struct conf_tunnel *c)
{
	uint8_t want[PROXY_HDR_MAX];
	struct wire_origin o;
	struct rname *rn;
	struct dial *d;
	char port[8];
	ssize_t wl;
	int lfd, i;

	memset(&o, 0, sizeof(o));
	o.family = WIRE_FAM_INET;
	o.src[0] = 192, o.src[1] = 0, o.src[2] = 2, o.src[3] = 7;
	o.dst[0] = 198, o.dst[1] = 51, o.dst[2] = 100, o.dst[3] = 9;
	o.src_port = 40000;
	o.dst_port = 5432;
	c->target.kind = CONF_ADDR_TCP;
	c->proxy_protocol = 2;
	lfd = tcp_listener(port, sizeof(port), 1);
	if ((rn = rname_new(res, "127.0.0.1", port, 0)) == NULL)
		abort();
	dial(c, rn, &o);
	wl = proxy_header_origin(2, &o, want, sizeof(want));
	ok(got.done == 1 && got.end.fd >= 0 && got.says == 0,
	    "a TCP target: connected, reported once, nothing said");
	ok(wl > 0 && header_is(lfd, want, (size_t)wl),
	    "its PROXY v2 header (the client ORIGIN named) came first");
	if (got.end.fd >= 0)
		close(got.end.fd);

	/* Given up on before it ends: no report, ever. */
	memset(&got, 0, sizeof(got));
	if ((d = dial_new(lp, c, rn, &o, &ops, NULL)) == NULL)
		abort();
	dial_start(d);
	dial_free(d);
	for (i = 0; i < 20; i++)
		(void)loop_run_once(lp, 10);
	ok(got.done == 0, "a dial given up on never reports");
	close(lfd);
	rname_free(rn);

	(void)tcp_listener(port, sizeof(port), 0);
	if ((rn = rname_new(res, "127.0.0.1", port, 0)) == NULL)
		abort();
	dial(c, rn, &o);
	ok(got.done == 1 && got.end.fd < 0 &&
	    got.end.reason == WIRE_REASON_TARGET_REFUSED && got.says == 1,
	    "a TCP port nobody listens on: refused, its address said once: "
	    "%s", got.why);
	rname_free(rn);
}

int
main(void)
{
	struct conf_tunnel c;
	char path[64], err[200];

	if ((lp = loop_new()) == NULL ||
	    (res = resolver_new(lp, err, sizeof(err))) == NULL)
		abort();
	(void)loop_run_once(lp, 0);
	memset(&c, 0, sizeof(c));
	c.sz.connect_timeout = 2;
	snprintf(c.target.text, sizeof(c.target.text), "the target");
	snprintf(path, sizeof(path), "/tmp/test_dial.%d", (int)getpid());
	test_unix(&c, path);
	test_tcp(&c);
	resolver_free(res);
	loop_free(lp);
	return (tap_done());
}
