/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdio.h>
#include <string.h>

#include "addr.h"
#include "proxy.h"

/* Version 2's first 12 bytes: no text protocol starts like this. */
static const uint8_t v2_sig[12] = {
	0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a
};

#define V2_PROXY	0x21	/* version 2, command PROXY */
#define V2_LOCAL	0x20	/* version 2, command LOCAL */
#define V2_TCP4		0x11
#define V2_TCP6		0x21
#define V2_UNIX_STREAM	0x31
#define V2_UNIX_PATH	108

/* One end as the header carries it: IPv4, IPv6, or a Unix path. */
struct end {
	int family;			/* AF_INET, AF_INET6, AF_UNIX; 0: unknown */
	uint8_t addr[16];		/* IPv4 in the first 4 bytes */
	uint16_t port;			/* host order */
	const char *path;		/* AF_UNIX: sun_path */
};

static void
end_of(const struct sockaddr *sa, struct end *e)
{
	const struct sockaddr_in *in;
	const struct sockaddr_in6 *in6;

	memset(e, 0, sizeof(*e));
	if (sa == NULL)
		return;
	switch (sa->sa_family) {
	case AF_INET:
		in = (const struct sockaddr_in *)(const void *)sa;
		e->family = AF_INET;
		memcpy(e->addr, &in->sin_addr, 4);
		e->port = ntohs(in->sin_port);
		break;
	case AF_INET6:
		in6 = (const struct sockaddr_in6 *)(const void *)sa;
		e->port = ntohs(in6->sin6_port);
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			e->family = AF_INET;
			memcpy(e->addr, in6->sin6_addr.s6_addr + 12, 4);
		} else {
			e->family = AF_INET6;
			memcpy(e->addr, &in6->sin6_addr, 16);
		}
		break;
	case AF_UNIX:
		e->family = AF_UNIX;
		e->path = ((const struct sockaddr_un *)(const void *)sa)->
		    sun_path;
		break;
	}
}

/* An IPv4 end as IPv6 (::ffff:a.b.c.d), for a pair of mixed families. */
static void
to_v6(struct end *e)
{

	if (e->family != AF_INET)
		return;
	memmove(e->addr + 12, e->addr, 4);
	memset(e->addr, 0, 10);
	e->addr[10] = e->addr[11] = 0xff;
	e->family = AF_INET6;
}

static ssize_t
v1(const struct end *s, const struct end *d, uint8_t *out, size_t len)
{
	char sa[INET6_ADDRSTRLEN], da[INET6_ADDRSTRLEN];
	int af = s->family, n;

	if (af == AF_INET || af == AF_INET6) {
		inet_ntop(af, s->addr, sa, sizeof(sa));
		inet_ntop(af, d->addr, da, sizeof(da));
		n = snprintf((char *)out, len, "PROXY %s %s %s %u %u\r\n",
		    af == AF_INET ? "TCP4" : "TCP6", sa, da, (unsigned)s->port,
		    (unsigned)d->port);
	} else {
		n = snprintf((char *)out, len, "PROXY UNKNOWN\r\n");
	}
	/* Returned without its NUL: snprintf needed room for it. */
	if (n < 0 || (size_t)n >= len)
		return (-1);
	return (n);
}

static void
put_path(uint8_t *p, const char *path)
{

	memset(p, 0, V2_UNIX_PATH);
	if (path != NULL)
		memcpy(p, path, V2_UNIX_PATH);
}

static ssize_t
v2(const struct end *s, const struct end *d, uint8_t *out, size_t len)
{
	size_t alen;
	uint8_t *p;

	switch (s->family) {
	case AF_INET:
		alen = 12;
		break;
	case AF_INET6:
		alen = 36;
		break;
	case AF_UNIX:
		alen = 2 * V2_UNIX_PATH;
		break;
	default:
		alen = 0;
		break;
	}
	if (len < 16 + alen)
		return (-1);
	memcpy(out, v2_sig, sizeof(v2_sig));
	out[12] = alen > 0 ? V2_PROXY : V2_LOCAL;
	out[13] = s->family == AF_INET ? V2_TCP4 : s->family == AF_INET6 ?
	    V2_TCP6 : s->family == AF_UNIX ? V2_UNIX_STREAM : 0;
	out[14] = (uint8_t)(alen >> 8);
	out[15] = (uint8_t)alen;
	p = out + 16;
	if (s->family == AF_INET || s->family == AF_INET6) {
		alen = s->family == AF_INET ? 4 : 16;
		memcpy(p, s->addr, alen);
		memcpy(p + alen, d->addr, alen);
		p += 2 * alen;
		p[0] = (uint8_t)(s->port >> 8);
		p[1] = (uint8_t)s->port;
		p[2] = (uint8_t)(d->port >> 8);
		p[3] = (uint8_t)d->port;
		p += 4;
	} else if (s->family == AF_UNIX) {
		put_path(p, s->path);
		put_path(p + V2_UNIX_PATH, d->path);
		p += 2 * V2_UNIX_PATH;
	}
	return (p - out);
}

/* The two ends of a stream, in one family (or both unknown). */
static void
ends_of(const struct sockaddr *src, const struct sockaddr *dst,
    struct end *s, struct end *d)
{

	end_of(src, s);
	end_of(dst, d);
	if (s->family != d->family) {
		if ((s->family == AF_INET || s->family == AF_INET6) &&
		    (d->family == AF_INET || d->family == AF_INET6)) {
			to_v6(s);
			to_v6(d);
		} else {
			s->family = d->family = 0;
		}
	}
}

static ssize_t
header(int version, const struct end *s, const struct end *d, uint8_t *out,
    size_t len)
{

	if (version == 1)
		return (v1(s, d, out, len));
	if (version == 2)
		return (v2(s, d, out, len));
	return (-1);
}

ssize_t
proxy_header(int version, const struct sockaddr *src,
    const struct sockaddr *dst, uint8_t *out, size_t len)
{
	struct end s, d;

	ends_of(src, dst, &s, &d);
	return (header(version, &s, &d, out, len));
}

void
proxy_origin(const struct sockaddr *src, const struct sockaddr *dst,
    struct wire_origin *o)
{
	struct end s, d;
	size_t alen;

	ends_of(src, dst, &s, &d);
	memset(o, 0, sizeof(*o));
	switch (s.family) {
	case AF_INET:
	case AF_INET6:
		o->family = s.family == AF_INET ? WIRE_FAM_INET :
		    WIRE_FAM_INET6;
		alen = s.family == AF_INET ? 4 : 16;
		memcpy(o->src, s.addr, alen);
		memcpy(o->dst, d.addr, alen);
		o->src_port = s.port;
		o->dst_port = d.port;
		break;
	case AF_UNIX:
		/* Paths name files on this host: not carried. */
		o->family = WIRE_FAM_UNIX;
		break;
	}
}

ssize_t
proxy_header_origin(int version, const struct wire_origin *o, uint8_t *out,
    size_t len)
{
	struct end s, d;

	memset(&s, 0, sizeof(s));
	memset(&d, 0, sizeof(d));
	switch (o != NULL ? o->family : WIRE_FAM_UNSPEC) {
	case WIRE_FAM_INET:
	case WIRE_FAM_INET6:
		s.family = d.family = o->family == WIRE_FAM_INET ? AF_INET :
		    AF_INET6;
		memcpy(s.addr, o->src, 16);
		memcpy(d.addr, o->dst, 16);
		s.port = o->src_port;
		d.port = o->dst_port;
		break;
	case WIRE_FAM_UNIX:
		s.family = d.family = AF_UNIX;
		break;
	}
	return (header(version, &s, &d, out, len));
}

ssize_t
proxy_add_peer(uint8_t *hdr, size_t hlen, size_t cap, const char *peer)
{
	size_t n = peer != NULL ? strlen(peer) : 0, body;

	if (n == 0)
		return ((ssize_t)hlen);
	if (hlen < 16 || memcmp(hdr, v2_sig, sizeof(v2_sig)) != 0 ||
	    n > 0xffff || hlen + 3 + n > cap)
		return (-1);
	body = ((size_t)hdr[14] << 8 | hdr[15]) + 3 + n;
	if (body > 0xffff)
		return (-1);
	hdr[hlen] = PROXY_TLV_RSTREAM_PEER;
	hdr[hlen + 1] = (uint8_t)(n >> 8);
	hdr[hlen + 2] = (uint8_t)n;
	memcpy(hdr + hlen + 3, peer, n);
	hdr[14] = (uint8_t)(body >> 8);
	hdr[15] = (uint8_t)body;
	return ((ssize_t)(hlen + 3 + n));
}

void
proxy_origin_text(const struct wire_origin *o, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	switch (o != NULL ? o->family : WIRE_FAM_UNSPEC) {
	case WIRE_FAM_INET:
		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, o->src, 4);
		in->sin_port = htons(o->src_port);
		break;
	case WIRE_FAM_INET6:
		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, o->src, 16);
		in6->sin6_port = htons(o->src_port);
		break;
	case WIRE_FAM_UNIX:
		ss.ss_family = AF_UNIX;
		break;
	default:
		addr_text(NULL, buf, len);
		return;
	}
	addr_text((struct sockaddr *)&ss, buf, len);
}
