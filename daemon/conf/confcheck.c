/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cfg.h"
#include "conf.h"
#include "conf_int.h"

/*
 * A configuration checked as a whole, once every setting is read: what
 * no stream could live with (an error), and what is valid but likely
 * not what was meant (warnings).
 */

/* The least ring memory a stream of ${t} opens with (send and receive). */
static uint64_t
first_rings(const struct conf_tunnel *t)
{
	const struct conf_sizes *sz = &t->sz;

	/* Rings start at ring_min only where they may grow (no resume). */
	if (sz->ring_min == 0 || sz->resume_time > 0)
		return ((uint64_t)sz->sendbuf + sz->recvbuf);
	return ((uint64_t)(sz->ring_min < sz->sendbuf ? sz->ring_min :
	    sz->sendbuf) + (sz->ring_min < sz->recvbuf ? sz->ring_min :
	    sz->recvbuf));
}

int
conf_check_memory(const struct cfg *p, const struct conf *c)
{
	const struct conf_tunnel *t;
	uint64_t max, need;
	size_t i;

	for (i = 0; i < c->ntunnels; i++) {
		t = &c->tunnels[i];
		max = conf_tunnel_max_memory(c, t);
		if (max == 0 || max >= (need = first_rings(t)))
			continue;
		snprintf(p->err, p->errlen, "%s:%d: tunnel %s: max_memory "
		    "leaves it %llu bytes%s, less than one stream's first "
		    "rings (%llu bytes): no stream could open; raise "
		    "max_memory, or give the tunnel its own", p->path,
		    t->line, t->name, (unsigned long long)max,
		    t->sz.max_memory == CONF_MEMORY_SHARE ? " (its share of "
		    "the daemon's)" : "", (unsigned long long)need);
		return (-1);
	}
	return (0);
}

/* Allow entry ${a} with its host bits cleared into ${net} (text). */
static int
net_host_bits(const struct conf_net *a, char *net, size_t netlen)
{
	uint8_t addr[16];
	unsigned i, bits = a->prefix;
	int len = a->family == AF_INET ? 4 : 16, host = 0;

	memcpy(addr, a->addr, sizeof(addr));
	for (i = 0; i < (unsigned)len; i++, bits = bits > 8 ? bits - 8 : 0) {
		if (bits >= 8)
			continue;
		host |= addr[i] & (0xff >> bits);
		addr[i] &= (uint8_t)(0xff << (8 - bits));
	}
	if (!host || inet_ntop(a->family, addr, net, (socklen_t)netlen) ==
	    NULL)
		return (0);
	return (1);
}

int
conf_qos_warn(const struct conf_tunnel *t, int tos_ignored, int sl_ignored,
    const char *on, void (*fn)(void *, const char *), void *arg)
{
	char msg[CONF_WHERE_LEN + 700];
	int n = 0;

	if (!t->has_accept)
		return (0);
	if (sl_ignored && t->sz.service_level != CONF_UNSET) {
		snprintf(msg, sizeof(msg), "%s: tunnel %s: service_level %u "
		    "does nothing on iWARP, which has no service levels, and "
		    "%s is iWARP", t->qos_at.service_level, t->name,
		    (unsigned)t->sz.service_level, on);
		fn(arg, msg);
		n++;
	}
	if (tos_ignored && t->sz.traffic_class != CONF_UNSET) {
		snprintf(msg, sizeof(msg), "%s: tunnel %s: traffic_class %u "
		    "does nothing on Soft-iWARP (siw), which gives its TCP "
		    "connections no IP TOS, and %s is Soft-iWARP",
		    t->qos_at.traffic_class, t->name,
		    (unsigned)t->sz.traffic_class, on);
		fn(arg, msg);
		n++;
	}
	return (n);
}

int
conf_keyed(const struct conf *c)
{
	size_t i;

	if (c->identity.set)
		return (1);
	for (i = 0; i < c->ntunnels; i++)
		if (c->tunnels[i].key.set)
			return (1);
	return (0);
}

int
conf_warn(const struct conf *c, int keyless,
    void (*fn)(void *, const char *), void *arg)
{
	char msg[sizeof(c->file) + 700], names[300], net[INET6_ADDRSTRLEN];
	const struct conf_tunnel *first = NULL;
	size_t i, len = 0, n = 0;

	if (c->identity.file[0] != '\0' && c->npeers == 0) {
		snprintf(msg, sizeof(msg), "%s:%d: identity_file without a "
		    "peer (peers, peers_file): with an identity only listed "
		    "nodes carry streams, so none would; list the other "
		    "nodes' public keys", c->file, c->identity.line);
		fn(arg, msg);
	}
	for (i = 0; i < c->nallow; i++) {
		if (!net_host_bits(&c->allow[i], net, sizeof(net)))
			continue;
		snprintf(msg, sizeof(msg), "%s:%d: allow '%s' has host bits "
		    "set: it allows %s/%u; write that, or the address alone "
		    "for one host", c->file, c->allow[i].line, c->allow[i].text,
		    net, c->allow[i].prefix);
		fn(arg, msg);
	}
	if (!keyless)
		return (0);
	names[0] = '\0';
	for (i = 0; i < c->ntunnels; i++) {
		/* With an identity every link proves one. */
		if (c->tunnels[i].key.set || c->identity.set)
			continue;
		if (first == NULL)
			first = &c->tunnels[i];
		if (n++ < 8 && len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) -
			    len, "%s%s", n > 1 ? ", " : "", c->tunnels[i].name);
	}
	if (first == NULL)
		return (0);
	snprintf(msg, sizeof(msg), "%s:%d: links are not authenticated for "
	    "%zu tunnel%s without a key_file (%s%s): any host on the fabric "
	    "that can reach them can use them; see SECURITY in rstreamd(8)",
	    c->file, first->line, n, n == 1 ? "" : "s", names,
	    n > 8 ? ", ..." : "");
	fn(arg, msg);
	return (1);
}
