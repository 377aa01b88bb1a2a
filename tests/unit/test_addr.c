/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/addr: the one spelling of an address in logs, status
 * and labels, within ADDR_TEXT_MAX and cut, never overrun, in a short
 * buffer; and which addresses are the same host.
 */
#include <stdio.h>
#include <string.h>

#include "addr.h"
#include "sockaddrs.h"
#include "tap.h"

/* addr_text(sa) into a buffer of ADDR_TEXT_MAX: is it ${want}? */
static int
text_is(const struct sockaddr *sa, const char *want)
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
	struct sockaddr_in a4 = v4("192.0.2.1", 7471);
	struct sockaddr_in6 a6 = v6("2001:db8::1", 7471);
	struct sockaddr_in6 wide =
	    v6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 65535);
	struct sockaddr_un u = un("/run/rstreamd/ctl");
	struct sockaddr other;
	char buf[ADDR_TEXT_MAX + 8];

	ok(text_is(SA(a4), "192.0.2.1:7471"), "IPv4: host:port");
	ok(text_is(SA(a6), "[2001:db8::1]:7471"), "IPv6: [host]:port");
	ok(text_is(NULL, "?"), "no address: ?");
	ok(text_is(SA(u), "unix"), "a Unix socket: unix, not its path");
	memset(&other, 0, sizeof(other));
	other.sa_family = 99;
	ok(text_is(&other, "(family 99)"), "another family: its number");

	/* The widest of each kind fits ADDR_TEXT_MAX, whole. */
	ok(text_is(SA(wide),
	    "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"),
	    "the widest IPv6 address and port fit");
	other.sa_family = 65535;
	ok(text_is(&other, "(family 65535)"), "the widest family number fits");

	/* A short buffer gets the start, NUL-ended, and nothing past it. */
	memset(buf, 'x', sizeof(buf));
	addr_text(SA(a4), buf, 8);
	ok(strcmp(buf, "192.0.2") == 0 && buf[8] == 'x',
	    "cut to 8 bytes: \"%s\", the 9th untouched", buf);
	memset(buf, 'x', sizeof(buf));
	addr_text(SA(a6), buf, 1);
	ok(buf[0] == '\0' && buf[1] == 'x', "a 1-byte buffer gets the NUL");
}

static void
test_same(void)
{
	struct sockaddr_in a = v4("192.0.2.1", 7471);
	struct sockaddr_in b = v4("192.0.2.1", 7472);
	struct sockaddr_in c = v4("192.0.2.2", 7471);
	struct sockaddr_in6 x = v6("2001:db8::1", 7471);
	struct sockaddr_in6 y = v6("2001:db8::1", 7472);
	struct sockaddr_in6 z = v6("2001:db8::2", 7471);
	struct sockaddr_in6 mapped = v6("::ffff:192.0.2.1", 7471);
	struct sockaddr_un u = un("/run/rstreamd/ctl");

	ok(addr_same(SA(a), SA(a), 1) && addr_same(SA(x), SA(x), 1),
	    "an address is itself, port and all (IPv4, IPv6)");
	ok(addr_same(SA(a), SA(b), 0) && !addr_same(SA(a), SA(b), 1),
	    "IPv4: another port is the same host, not the same address");
	ok(addr_same(SA(x), SA(y), 0) && !addr_same(SA(x), SA(y), 1),
	    "IPv6: another port is the same host, not the same address");
	ok(!addr_same(SA(a), SA(c), 0) && !addr_same(SA(x), SA(z), 0),
	    "another host is not the same, ports or not");
	ok(!addr_same(SA(a), SA(mapped), 0) &&
	    !addr_same(SA(mapped), SA(a), 0),
	    "IPv4 and IPv6 are never the same, even IPv4-mapped");
	ok(!addr_same(SA(u), SA(u), 0),
	    "other families never are, not even to themselves");
}

int
main(void)
{

	test_text();
	test_same();
	return (tap_done());
}
