/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdio.h>
#include <string.h>

#include "addr.h"
#include "link.h"
#include "link_int.h"
#include "linkstat.h"

/* Published figure ${k} of ${dl} (link_pub). */
static uint64_t
pub(const struct dlink *dl, enum link_pub k)
{

	return (__atomic_load_n(&dl->pub[k], __ATOMIC_RELAXED));
}

/* An address without its port: "192.0.2.1", "2001:db8::1". */
static void
host_only(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
	struct in_addr v4;

	buf[0] = '\0';
	if (ss->ss_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr,
		    buf, (socklen_t)len);
	} else if (ss->ss_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		memcpy(&v4, &s6->sin6_addr.s6_addr[12], sizeof(v4));
		inet_ntop(AF_INET, &v4, buf, (socklen_t)len);
	} else if (ss->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &s6->sin6_addr, buf, (socklen_t)len);
	}
}

/* A client link's peer setting as written: its entries joined by ",". */
static void
peer_setting(const struct conf_tunnel *c, char *buf, size_t len)
{
	size_t n = 0;
	unsigned i;
	int k;

	buf[0] = '\0';
	for (i = 0; i < c->npeers && n < len; i++) {
		k = snprintf(buf + n, len - n, "%s%s", i > 0 ? "," : "",
		    c->peers[i].text);
		if (k < 0)
			break;
		n += (size_t)k;
	}
}

void
linkstat_read(const struct dlink *dl, struct linkstat *ls)
{

	memset(ls, 0, sizeof(*ls));
	ls->up = dl->state == D_UP;
	ls->identity = link_peer_id(dl);
	ls->sealing = link_sealing(dl);
	ls->hca = link_hca(dl);
	if (dl->c != NULL) {
		ls->tunnel = dl->c->name;
		ls->direction = "out";
		peer_setting(dl->c, ls->peer, sizeof(ls->peer));
		/* The address it tries, or last tried. */
		if (dl->dst.ss_family != 0)
			addr_text((const struct sockaddr *)&dl->dst,
			    ls->address, sizeof(ls->address));
	} else {
		ls->tunnel = "";
		ls->direction = "in";
		if (ls->identity[0] != '\0')
			snprintf(ls->peer, sizeof(ls->peer), "%s",
			    ls->identity);
		else
			host_only(&dl->peer_sa, ls->peer, sizeof(ls->peer));
		addr_text((const struct sockaddr *)&dl->peer_sa, ls->address,
		    sizeof(ls->address));
	}
	if (!ls->up)
		return;
	ls->stall_ring = pub(dl, LP_STALL_RING);
	ls->stall_msg = pub(dl, LP_STALL_MSG);
	ls->stall_sq = pub(dl, LP_STALL_SQ);
	ls->ring_grows = pub(dl, LP_RING_GROWS);
	ls->ring_shrinks = pub(dl, LP_RING_SHRINKS);
	ls->ring_refused = pub(dl, LP_RING_REFUSED);
	ls->sq_depth = pub(dl, LP_SQ_DEPTH);
	ls->inflight = pub(dl, LP_INFLIGHT);
	ls->window = pub(dl, LP_WINDOW);
	ls->wait_credit_ns = pub(dl, LP_WAIT_CREDIT_NS);
	ls->wait_sq_ns = pub(dl, LP_WAIT_SQ_NS);
	ls->rtt_ns = pub(dl, LP_RTT_NS);
	ls->version = pub(dl, LP_VERSION);
	ls->pinned = pub(dl, LP_PINNED);
	ls->pooled = pub(dl, LP_POOLED);
	ls->control = pub(dl, LP_CONTROL);
	ls->registered = pub(dl, LP_REGISTERED);
	ls->reused = pub(dl, LP_REUSED);
	ls->lanes = pub(dl, LP_LANES);
	ls->lane_depth[0] = pub(dl, LP_LANE0_DEPTH);
	ls->lane_inflight[0] = pub(dl, LP_LANE0_INFLIGHT);
	ls->lane_depth[1] = pub(dl, LP_LANE1_DEPTH);
	ls->lane_inflight[1] = pub(dl, LP_LANE1_INFLIGHT);
	ls->lane_fences[0] = pub(dl, LP_LANE0_FENCES);
	ls->lane_fences[1] = pub(dl, LP_LANE1_FENCES);
}
