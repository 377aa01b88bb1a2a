/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for daemon/proxy: PROXY protocol headers, byte for byte as
 * haproxy's proxy-protocol.txt gives them.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdio.h>
#include <string.h>

#include "addr.h"
#include "proxy.h"
#include "sockaddrs.h"
#include "tap.h"

/* The signature and the 4 bytes after it. */
static int
v2_head(const uint8_t *h, uint8_t cmd, uint8_t fam, unsigned alen)
{
	static const uint8_t sig[12] = "\r\n\r\n\0\r\nQUIT\n";

	return (memcmp(h, sig, 12) == 0 && h[12] == cmd && h[13] == fam &&
	    h[14] == alen >> 8 && h[15] == (alen & 0xff));
}

int
main(void)
{
	struct sockaddr_in c4 = v4("192.168.0.1", 56324),
	    s4 = v4("192.168.0.11", 443);
	struct sockaddr_in6 c6 = v6("2001:db8::1", 40000),
	    s6 = v6("fd77::2", 5432), m6 = v6("::ffff:10.0.0.7", 1234);
	struct sockaddr_un cu = un(""), su = un("/run/pg.sock");
	uint8_t h[PROXY_HDR_MAX + 8];
	struct wire_origin o;
	char t[ADDR_TEXT_MAX];
	ssize_t n;

	n = proxy_header(1, SA(c4), SA(s4), h, sizeof(h));
	ok(n == 47 && memcmp(h, "PROXY TCP4 192.168.0.1 192.168.0.11 56324 "
	    "443\r\n", 47) == 0, "v1, TCP over IPv4: the specification's own "
	    "example");
	n = proxy_header(1, SA(c6), SA(s6), h, sizeof(h));
	ok(n == 43 && memcmp(h, "PROXY TCP6 2001:db8::1 fd77::2 40000 "
	    "5432\r\n", 43) == 0, "v1, TCP over IPv6");
	n = proxy_header(1, SA(m6), SA(s4), h, sizeof(h));
	ok(n == 43 && memcmp(h, "PROXY TCP4 10.0.0.7 192.168.0.11 1234 "
	    "443\r\n", 43) == 0, "v1: an IPv4 address mapped into IPv6 is "
	    "said as IPv4");
	n = proxy_header(1, SA(c4), SA(s6), h, sizeof(h));
	ok(n > 0 && memcmp(h, "PROXY TCP6 ::ffff:192.168.0.1 fd77::2 56324 "
	    "5432\r\n", (size_t)n) == 0, "v1: mixed families, both as IPv6");
	n = proxy_header(1, SA(cu), SA(su), h, sizeof(h));
	ok(n == 15 && memcmp(h, "PROXY UNKNOWN\r\n", 15) == 0,
	    "v1 has no Unix sockets: UNKNOWN");
	n = proxy_header(1, NULL, SA(s4), h, sizeof(h));
	ok(n == 15 && memcmp(h, "PROXY UNKNOWN\r\n", 15) == 0,
	    "v1, the client's address unknown: UNKNOWN");
	n = proxy_header(1, SA(c6), SA(s6), h, 43);
	ok(n == -1, "v1: a buffer with no room for snprintf's NUL is refused");
	n = proxy_header(1, SA(c6), SA(s6), h, 44);
	ok(n == 43, "v1: ...and one byte more is enough");

	n = proxy_header(2, SA(c4), SA(s4), h, sizeof(h));
	ok(n == 28 && v2_head(h, 0x21, 0x11, 12) && memcmp(h + 16,
	    "\xc0\xa8\x00\x01\xc0\xa8\x00\x0b\xdc\x04\x01\xbb", 12) == 0,
	    "v2, TCP over IPv4: PROXY, AF_INET/STREAM, addresses and ports in "
	    "network order");
	n = proxy_header(2, SA(c6), SA(s6), h, sizeof(h));
	ok(n == 52 && v2_head(h, 0x21, 0x21, 36) &&
	    memcmp(h + 16, &c6.sin6_addr, 16) == 0 &&
	    memcmp(h + 32, &s6.sin6_addr, 16) == 0 &&
	    memcmp(h + 48, "\x9c\x40\x15\x38", 4) == 0,
	    "v2, TCP over IPv6");
	n = proxy_header(2, SA(m6), SA(s4), h, sizeof(h));
	ok(n == 28 && v2_head(h, 0x21, 0x11, 12) &&
	    memcmp(h + 16, "\x0a\x00\x00\x07", 4) == 0,
	    "v2: an IPv4 address mapped into IPv6 is said as IPv4");
	n = proxy_header(2, SA(cu), SA(su), h, sizeof(h));
	ok(n == 232 && v2_head(h, 0x21, 0x31, 216) && h[16] == 0 &&
	    memcmp(h + 16 + 108, "/run/pg.sock", 13) == 0 &&
	    h[16 + 108 + 107] == 0, "v2, Unix stream sockets: two 108-byte "
	    "paths (an unnamed client's empty)");
	n = proxy_header(2, NULL, NULL, h, sizeof(h));
	ok(n == 16 && v2_head(h, 0x20, 0x00, 0), "v2, the addresses unknown: "
	    "LOCAL, no address block");
	n = proxy_header(2, SA(cu), SA(s4), h, sizeof(h));
	ok(n == 16 && v2_head(h, 0x20, 0x00, 0), "v2, a Unix client to a TCP "
	    "address: LOCAL");
	n = proxy_header(2, SA(c6), SA(s6), h, 51);
	ok(n == -1, "v2: a buffer one byte short is refused");
	n = proxy_header(3, SA(c4), SA(s4), h, sizeof(h));
	ok(n == -1, "an unknown version is refused");

	/* Through an ORIGIN record's form: the same bytes come out. */
	proxy_origin(SA(c4), SA(s4), &o);
	ok(o.family == WIRE_FAM_INET && o.src_port == 56324 &&
	    o.dst_port == 443 && memcmp(o.src, "\xc0\xa8\x00\x01", 4) == 0 &&
	    o.src[4] == 0, "origin of a TCP/IPv4 client");
	n = proxy_header_origin(1, &o, h, sizeof(h));
	ok(n == 47 && memcmp(h, "PROXY TCP4 192.168.0.1 192.168.0.11 56324 "
	    "443\r\n", 47) == 0, "v1 from an IPv4 origin");
	proxy_origin(SA(c6), SA(s6), &o);
	n = proxy_header_origin(2, &o, h, sizeof(h));
	ok(o.family == WIRE_FAM_INET6 && n == 52 &&
	    v2_head(h, 0x21, 0x21, 36) &&
	    memcmp(h + 16, &c6.sin6_addr, 16) == 0 &&
	    memcmp(h + 48, "\x9c\x40\x15\x38", 4) == 0, "v2 from an IPv6 origin");
	proxy_origin(SA(m6), SA(s4), &o);
	ok(o.family == WIRE_FAM_INET && memcmp(o.src, "\x0a\x00\x00\x07", 4)
	    == 0, "origin: a mapped IPv4 client is IPv4");
	proxy_origin(SA(cu), SA(su), &o);
	ok(o.family == WIRE_FAM_UNIX && o.src_port == 0 && o.src[0] == 0,
	    "origin of a Unix client: the family only");
	n = proxy_header_origin(2, &o, h, sizeof(h));
	ok(n == 232 && v2_head(h, 0x21, 0x31, 216) && h[16] == 0 &&
	    h[16 + 108] == 0, "v2 from a Unix origin: AF_UNIX, empty paths");
	n = proxy_header_origin(1, &o, h, sizeof(h));
	ok(n == 15 && memcmp(h, "PROXY UNKNOWN\r\n", 15) == 0,
	    "v1 from a Unix origin: UNKNOWN");
	n = proxy_header_origin(2, NULL, h, sizeof(h));
	ok(n == 16 && v2_head(h, 0x20, 0x00, 0), "v2 without an origin: LOCAL");
	proxy_origin(SA(cu), SA(s4), &o);
	ok(o.family == WIRE_FAM_UNSPEC, "origin of mixed Unix and TCP: "
	    "unspecified");

	/* The node's name as a TLV after the addresses. */
	proxy_origin(SA(c6), SA(s6), &o);
	n = proxy_header_origin(2, &o, h, sizeof(h));
	n = proxy_add_peer(h, (size_t)n, sizeof(h), "node-b");
	ok(n == 52 + 9 && v2_head(h, 0x21, 0x21, 36 + 9) &&
	    h[52] == PROXY_TLV_RSTREAM_PEER && h[53] == 0 && h[54] == 6 &&
	    memcmp(h + 55, "node-b", 6) == 0, "v2 with the peer's TLV");
	n = proxy_header_origin(2, NULL, h, sizeof(h));
	ok(proxy_add_peer(h, (size_t)n, sizeof(h), "") == 16 &&
	    v2_head(h, 0x20, 0x00, 0), "no peer: no TLV");
	ok(proxy_add_peer(h, (size_t)n, 16 + 8, "node-b") == -1,
	    "a TLV that does not fit is refused");
	n = proxy_header_origin(1, &o, h, sizeof(h));
	ok(proxy_add_peer(h, (size_t)n, sizeof(h), "node-b") == -1,
	    "a version 1 header takes no TLV");
	proxy_origin(SA(cu), SA(su), &o);
	n = proxy_header_origin(2, &o, h, sizeof(h));
	ok(proxy_add_peer(h, (size_t)n, sizeof(h), "n") == 232 + 4 &&
	    v2_head(h, 0x21, 0x31, 216 + 4), "the longest header with a TLV "
	    "fits PROXY_HDR_MAX");
	proxy_origin(SA(cu), SA(s4), &o);

	/* As rstreamctl and the serving side's log show it. */
	proxy_origin_text(&o, t, sizeof(t));
	ok(strcmp(t, "?") == 0, "origin text, unspecified: ?");
	proxy_origin_text(NULL, t, sizeof(t));
	ok(strcmp(t, "?") == 0, "origin text, none: ?");
	proxy_origin(SA(c4), SA(s4), &o);
	proxy_origin_text(&o, t, sizeof(t));
	ok(strcmp(t, "192.168.0.1:56324") == 0, "origin text, IPv4: %s", t);
	proxy_origin(SA(c6), SA(s6), &o);
	proxy_origin_text(&o, t, sizeof(t));
	ok(strcmp(t, "[2001:db8::1]:40000") == 0, "origin text, IPv6: %s", t);
	proxy_origin(SA(m6), SA(s4), &o);
	proxy_origin_text(&o, t, sizeof(t));
	ok(strcmp(t, "10.0.0.7:1234") == 0, "origin text, a mapped IPv4 "
	    "client: %s", t);
	proxy_origin(SA(c4), SA(s6), &o);
	proxy_origin_text(&o, t, sizeof(t));
	ok(strcmp(t, "[::ffff:192.168.0.1]:56324") == 0, "origin text, "
	    "mixed families: %s", t);
	proxy_origin(SA(cu), SA(su), &o);
	proxy_origin_text(&o, t, sizeof(t));
	ok(strcmp(t, "unix") == 0, "origin text, a Unix client: %s", t);
	o.family = WIRE_FAM_INET6;
	memset(o.src, 0xff, sizeof(o.src));
	o.src_port = 65535;
	proxy_origin_text(&o, t, sizeof(t));
	ok(strcmp(t, "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535") == 0,
	    "origin text, the longest fits in ADDR_TEXT_MAX: %s", t);
	return (tap_done());
}
