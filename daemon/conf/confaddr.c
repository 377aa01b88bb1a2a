/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "wire.h"

#include "conf.h"
#include "conf_int.h"

/*
 * The addresses of rstreamd.conf: "tcp://HOST:PORT", "tcp://[V6]:PORT" and
 * "unix:/PATH" (accept, target) and "HOST:PORT" (peer, listen), parsed
 * into and compared as struct conf_addr; and a peer's address matched
 * against allow's prefixes, struct conf_net (see conf.h).
 */

#define ADDR_HINT	"use tcp://HOST:PORT or unix:/PATH"

static int
is_digit(char ch)
{

	return (ch >= '0' && ch <= '9');
}

/* Write a reason into ${err} for the address parsers; returns -1. */
static int __attribute__((format(printf, 3, 4)))
reason(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return (-1);
}

/*
 * Parse a decimal port.  The text is stored normalized ("07471" becomes
 * "7471") so that two spellings of one port compare equal.
 */
static int
parse_port(const char *s, int allow_port0, char out[8], char *err,
    size_t errlen)
{
	unsigned long v = 0;
	const char *q;

	if (*s == '\0')
		return (reason(err, errlen, "missing port"));
	for (q = s; *q != '\0'; q++) {
		if (!is_digit(*q))
			return (reason(err, errlen, "bad port '%s'", s));
		if (v <= 65535)
			v = v * 10 + (unsigned long)(*q - '0');
	}
	if (v > 65535)
		return (reason(err, errlen,
		    "port %s is out of range (1 to 65535)", s));
	if (v == 0 && !allow_port0)
		return (reason(err, errlen,
		    "port 0 is not allowed here; use 1 to 65535"));
	snprintf(out, 8, "%lu", v);
	return (0);
}

/*
 * Split "HOST:PORT", "[V6]:PORT", "HOST" or "[V6]" into the host (${*host},
 * ${*hlen} bytes) and the port (${*port}, NULL if none); ${*v6} says which
 * spelling it was.
 */
static int
split_hostport(const char *hp, const char **host, size_t *hlen,
    const char **port, int *v6, char *err, size_t errlen)
{
	const char *end, *colon;

	*v6 = hp[0] == '[';
	if (*v6) {
		if ((end = strchr(hp, ']')) == NULL)
			return (reason(err, errlen,
			    "missing ']' after the IPv6 address"));
		*host = hp + 1;
		*hlen = (size_t)(end - *host);
		if (end[1] == '\0')
			*port = NULL;
		else if (end[1] == ':')
			*port = end + 2;
		else
			return (reason(err, errlen,
			    "expected ':PORT' after ']', not '%s'", end + 1));
		return (0);
	}
	colon = strchr(hp, ':');
	if (colon != NULL && strchr(colon + 1, ':') != NULL)
		return (reason(err, errlen, "an IPv6 address must be "
		    "in brackets, like [::1]:PORT"));
	*host = hp;
	*hlen = colon != NULL ? (size_t)(colon - hp) : strlen(hp);
	*port = colon != NULL ? colon + 1 : NULL;
	return (0);
}

/* The bracketed host ${h}: an IPv6 address, with a zone or not. */
static int
check_v6_host(const char *h, char *err, size_t errlen)
{
	char buf[INET6_ADDRSTRLEN];
	unsigned char bin[sizeof(struct in6_addr)];
	const char *pct, *q;
	size_t hlen = strlen(h);

	/* A zone ("fe80::1%eth0") is the interface, not address. */
	if ((pct = strchr(h, '%')) != NULL) {
		for (q = pct + 1; *q != '\0'; q++)
			if (!wire_name_char(*q))
				break;
		if (pct[1] == '\0' || *q != '\0')
			return (reason(err, errlen, "bad IPv6 zone in '%s'",
			    h));
	}
	hlen = pct != NULL ? (size_t)(pct - h) : hlen;
	if (hlen >= sizeof(buf))
		return (reason(err, errlen, "bad IPv6 address '%s'", h));
	memcpy(buf, h, hlen);
	buf[hlen] = '\0';
	if (inet_pton(AF_INET6, buf, bin) != 1)
		return (reason(err, errlen, "bad IPv6 address '%s'", h));
	return (0);
}

/* The host ${h} without brackets: a name, or (all digits and dots) IPv4. */
static int
check_host(const char *h, char *err, size_t errlen)
{
	unsigned char bin[sizeof(struct in_addr)];
	const char *q;
	int dotted = 1;

	for (q = h; *q != '\0'; q++) {
		if (!wire_name_char(*q))
			return (reason(err, errlen, "bad host '%s'", h));
		if (!is_digit(*q) && *q != '.')
			dotted = 0;
	}
	/* All digits and dots is meant as IPv4, never a name. */
	if (dotted && inet_pton(AF_INET, h, bin) != 1)
		return (reason(err, errlen, "bad IPv4 address '%s'", h));
	return (0);
}

/*
 * Split "HOST:PORT", "[V6]:PORT", "HOST" or "[V6]" into ${a}->host and
 * ${a}->port.  Without a port, ${default_port} is used, or it is an error
 * if that is NULL.
 */
static int
parse_hostport(const char *hp, const char *default_port, int allow_port0,
    struct conf_addr *a, char *err, size_t errlen)
{
	const char *host = NULL, *port = NULL;
	size_t hlen = 0;
	int v6 = 0;

	if (split_hostport(hp, &host, &hlen, &port, &v6, err, errlen))
		return (-1);
	if (hlen == 0)
		return (reason(err, errlen, "missing host"));
	if (hlen >= sizeof(a->host))
		return (reason(err, errlen, "host too long (max %zu bytes)",
		    sizeof(a->host) - 1));
	memcpy(a->host, host, hlen);
	a->host[hlen] = '\0';
	if (v6 ? check_v6_host(a->host, err, errlen) :
	    check_host(a->host, err, errlen))
		return (-1);

	if (port == NULL) {
		if (default_port == NULL)
			return (reason(err, errlen, "missing port"));
		port = default_port;
	}
	return (parse_port(port, allow_port0, a->port, err, errlen));
}

/* Copy ${text} into ${a}->text, which must hold it whole. */
static int
addr_text(const char *text, struct conf_addr *a, char *err, size_t errlen)
{
	size_t len = strlen(text);

	if (len >= sizeof(a->text))
		return (reason(err, errlen, "address too long (max %zu bytes)",
		    sizeof(a->text) - 1));
	memcpy(a->text, text, len + 1);
	return (0);
}

int
conf_parse_addr(const char *text, int allow_port0, struct conf_addr *a,
    char *err, size_t errlen)
{
	const char *path, *sep;
	size_t len;

	memset(a, 0, sizeof(*a));
	if (addr_text(text, a, err, errlen))
		return (-1);

	if (strncmp(text, "unix:", 5) == 0) {
		path = text + 5;
		/* Accept the URL spelling too; "unix://run/x" stays wrong. */
		if (strncmp(path, "//", 2) == 0)
			path += 2;
		if (path[0] != '/')
			return (reason(err, errlen,
			    "unix path must be absolute"));
		if ((len = strlen(path)) >= sizeof(a->path))
			return (reason(err, errlen,
			    "unix path too long (max %zu bytes)",
			    sizeof(a->path) - 1));
		memcpy(a->path, path, len + 1);
		a->kind = CONF_ADDR_UNIX;
		return (0);
	}

	if ((sep = strstr(text, "://")) == NULL)
		return (reason(err, errlen, "missing scheme; " ADDR_HINT));
	if (sep - text != 3 || strncmp(text, "tcp", 3) != 0)
		return (reason(err, errlen, "unknown scheme '%.*s'; " ADDR_HINT,
		    (int)(sep - text), text));
	a->kind = CONF_ADDR_TCP;
	return (parse_hostport(sep + 3, NULL, allow_port0, a, err, errlen));
}

int
conf_parse_hostport(const char *text, const char *default_port,
    struct conf_addr *a, char *err, size_t errlen)
{

	memset(a, 0, sizeof(*a));
	if (addr_text(text, a, err, errlen))
		return (-1);
	if (strstr(text, "://") != NULL)
		return (reason(err, errlen, "no scheme here; write HOST:PORT"));
	a->kind = CONF_ADDR_TCP;
	return (parse_hostport(text, default_port, 0, a, err, errlen));
}

int
conf_addr_same(const struct conf_addr *x, const struct conf_addr *y)
{

	return (x->kind == y->kind && strcmp(x->host, y->host) == 0 &&
	    strcmp(x->port, y->port) == 0 && strcmp(x->path, y->path) == 0);
}

int
conf_net_match(const struct conf_net *nets, size_t n,
    const struct sockaddr *sa)
{
	const uint8_t *addr;
	size_t i;
	unsigned bits, full;
	int family;

	if (sa->sa_family == AF_INET) {
		family = AF_INET;
		addr = (const uint8_t *)
		    &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
	} else if (sa->sa_family == AF_INET6) {
		family = AF_INET6;
		addr = ((const struct sockaddr_in6 *)(const void *)sa)->
		    sin6_addr.s6_addr;
		if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)
		    (const void *)addr)) {
			family = AF_INET;
			addr += 12;
		}
	} else {
		return (0);
	}
	for (i = 0; i < n; i++) {
		if (nets[i].family != family)
			continue;
		bits = nets[i].prefix;
		full = bits / 8;
		if (memcmp(nets[i].addr, addr, full) != 0)
			continue;
		if (bits % 8 != 0 && ((nets[i].addr[full] ^ addr[full]) &
		    (uint8_t)(0xff << (8 - bits % 8))) != 0)
			continue;
		return (1);
	}
	return (0);
}
