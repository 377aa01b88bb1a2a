/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/addr: the one spelling of an address in logs, status
 * and labels, within ADDR_TEXT_MAX and cut, never overrun, in a short
 * buffer; and which addresses are the same host.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <string.h>

#include "addr.h"
#include "tap.h"

static struct sockaddr_in
in4(const char *host, unsigned port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, host, &a.sin_addr);
	return (a);
}

static struct sockaddr_in6
in6(const char *host, unsigned port)
{
	struct sockaddr_in6 a;

	memset(&a, 0, sizeof(a));
	a.sin6_family = AF_INET6;
	a.sin6_port = htons((uint16_t)port);
	inet_pton(AF_INET6, host, &a.sin6_addr);
	return (a);
}

/* addr_text(sa) into a buffer of ADDR_TEXT_MAX: is it ${want}? */
static int
text_is(const void *sa, const char *want)
{
	char buf[ADDR_TEXT_MAX];

	addr_text(sa, buf, sizeof(buf));
	if (strcmp(buf, want) == 0)
		return (1);
	printf("# expected \"%s\", got \"%s\"\n", want, buf);
	return (0);
}

static void
test_text(void)
{
	struct sockaddr_in a4 = in4("192.0.2.1", 7471);
	struct sockaddr_in6 a6 = in6("2001:db8::1", 7471);
	struct sockaddr_in6 wide =
	    in6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 65535);
	struct sockaddr_un un;
	struct sockaddr other;
	char buf[ADDR_TEXT_MAX + 8];

	ok(text_is(&a4, "192.0.2.1:7471"), "IPv4: host:port");
	ok(text_is(&a6, "[2001:db8::1]:7471"), "IPv6: [host]:port");
	ok(text_is(NULL, "?"), "no address: ?");
	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	strcpy(un.sun_path, "/run/rstreamd/ctl");
	ok(text_is(&un, "unix"), "a Unix socket: unix, not its path");
	memset(&other, 0, sizeof(other));
	other.sa_family = 99;
	ok(text_is(&other, "(family 99)"), "another family: its number");

	/* The widest of each kind fits ADDR_TEXT_MAX, whole. */
	ok(text_is(&wide,
	    "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"),
	    "the widest IPv6 address and port fit");
	other.sa_family = 65535;
	ok(text_is(&other, "(family 65535)"), "the widest family number fits");

	/* A short buffer gets the start, NUL-ended, and nothing past it. */
	memset(buf, 'x', sizeof(buf));
	addr_text((struct sockaddr *)&a4, buf, 8);
	ok(strcmp(buf, "192.0.2") == 0 && buf[8] == 'x',
	    "cut to 8 bytes: \"%s\", the 9th untouched", buf);
	memset(buf, 'x', sizeof(buf));
	addr_text((struct sockaddr *)&a6, buf, 1);
	ok(buf[0] == '\0' && buf[1] == 'x', "a 1-byte buffer gets the NUL");
}

static void
test_same(void)
{
	struct sockaddr_in a = in4("192.0.2.1", 7471);
	struct sockaddr_in b = in4("192.0.2.1", 7472);
	struct sockaddr_in c = in4("192.0.2.2", 7471);
	struct sockaddr_in6 x = in6("2001:db8::1", 7471);
	struct sockaddr_in6 y = in6("2001:db8::1", 7472);
	struct sockaddr_in6 z = in6("2001:db8::2", 7471);
	struct sockaddr_in6 mapped = in6("::ffff:192.0.2.1", 7471);
	struct sockaddr_un u;
	const struct sockaddr *sa = (const void *)&a, *sb = (const void *)&b;
	const struct sockaddr *sc = (const void *)&c, *sx = (const void *)&x;
	const struct sockaddr *sy = (const void *)&y, *sz = (const void *)&z;

	ok(addr_same(sa, sa, 1) && addr_same(sx, sx, 1),
	    "an address is itself, port and all (IPv4, IPv6)");
	ok(addr_same(sa, sb, 0) && !addr_same(sa, sb, 1),
	    "IPv4: another port is the same host, not the same address");
	ok(addr_same(sx, sy, 0) && !addr_same(sx, sy, 1),
	    "IPv6: another port is the same host, not the same address");
	ok(!addr_same(sa, sc, 0) && !addr_same(sx, sz, 0),
	    "another host is not the same, ports or not");
	ok(!addr_same(sa, (const void *)&mapped, 0) &&
	    !addr_same((const void *)&mapped, sa, 0),
	    "IPv4 and IPv6 are never the same, even IPv4-mapped");
	memset(&u, 0, sizeof(u));
	u.sun_family = AF_UNIX;
	ok(!addr_same((const void *)&u, (const void *)&u, 0),
	    "other families never are, not even to themselves");
}

int
main(void)
{

	test_text();
	test_same();
	return (tap_done());
}
