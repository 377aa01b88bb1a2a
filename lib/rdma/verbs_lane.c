/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * verbs_lane: a link's latency lane (protocol version 8, engine_lanes):
 * a second RDMA CM connection to the same peer, whose queue pair shares
 * the link's protection domain and completion queue.  Two connections
 * rather than anything only InfiniBand has, so iWARP runs it too.
 *
 * The connecting side starts it once lane 0 is established and the
 * engine says two lanes: the same peer address from the same local
 * address, so the same device (a lane elsewhere fails the link).  Its
 * hello says LANE1 with our lane-0 hello's nonce; the accepting side
 * finds the link by that nonce and the peer's address among those
 * waiting for a lane 1, and answers with its own lane-1 hello (its own
 * lane-0 nonce), which the connecting side checks against the link.
 * Either lane's end ends the link.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "engine.h"
#include "hca.h"
#include "verbs.h"
#include "verbs_int.h"
#include "verbs_pure.h"
#include "wire.h"

void
verbs_src_of(struct rdma_cm_id *id, struct sockaddr_storage *src)
{
	const struct sockaddr *sa = rdma_get_local_addr(id);

	memset(src, 0, sizeof(*src));
	memcpy(src, sa, sa->sa_family == AF_INET6 ?
	    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
	if (src->ss_family == AF_INET6)
		((struct sockaddr_in6 *)(void *)src)->sin6_port = 0;
	else
		((struct sockaddr_in *)(void *)src)->sin_port = 0;
}

int
verbs_path_give(struct verbs_link *l, struct rdma_cm_id *id,
    const struct rdma_cm_id *from, char *err, size_t errlen)
{
	const struct ibv_sa_path_rec *r = from->route.path_rec;
	struct ibv_path_data pd;
	struct ibv_path_record *w = &pd.path;

	if (from->route.num_paths < 1 || r == NULL) {
		say(err, errlen, "service_level: the RDMA CM resolved no path");
		return (-1);
	}
	memset(&pd, 0, sizeof(pd));
	pd.flags = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY |
	    IBV_PATH_FLAG_BIDIRECTIONAL;
	w->dgid = r->dgid;
	w->sgid = r->sgid;
	w->dlid = r->dlid;
	w->slid = r->slid;
	w->flowlabel_hoplimit = htobe32(be32toh(r->flow_label) << 8 |
	    r->hop_limit);
	w->tclass = r->traffic_class;
	w->reversible_numpath = (uint8_t)((r->reversible ? 0x80 : 0) | 1);
	w->pkey = r->pkey;
	w->qosclass_sl = htobe16((uint16_t)(l->conf.sl & 0xf));
	/* Selector 2: exactly this MTU, rate and lifetime. */
	w->mtu = (uint8_t)(2 << 6 | (r->mtu & 0x3f));
	w->rate = (uint8_t)(2 << 6 | (r->rate & 0x3f));
	w->packetlifetime = (uint8_t)(2 << 6 | (r->packet_life_time & 0x3f));
	w->preference = r->preference;
	if (rdma_set_option(id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &pd,
	    sizeof(pd))) {
		say(err, errlen, "cannot set the service level %u: %s",
		    (unsigned)l->conf.sl, strerror(errno));
		return (-1);
	}
	return (0);
}

int
verbs_lane_start(struct verbs_link *l, char *err, size_t errlen)
{
	struct sockaddr_storage src;

	if (rdma_create_id(l->cm->ch, &l->id1, l, RDMA_PS_TCP)) {
		l->id1 = NULL;
		say(err, errlen, "lane 1: rdma_create_id: %s", strerror(errno));
		return (-1);
	}
	l->lane1 = L1_RESOLVING;
	verbs_src_of(l->id, &src);
	if ((l->conf.tos_set && rdma_set_option(l->id1, RDMA_OPTION_ID,
	    RDMA_OPTION_ID_TOS, &l->conf.tos, sizeof(l->conf.tos))) ||
	    rdma_resolve_addr(l->id1, (struct sockaddr *)&src,
	    rdma_get_peer_addr(l->id), VERBS_RESOLVE_MS)) {
		say(err, errlen, "lane 1: cannot resolve an RDMA path to %s: "
		    "%s", l->peer, strerror(errno));
		return (-1);
	}
	return (0);
}

/* Lane 1's queue pair on ${l}'s device, with every receive posted. */
static int
lane_qp(struct verbs_link *l, struct rdma_cm_id *id, char *err,
    size_t errlen)
{
	uint8_t t = l->conf.ack_timeout ? l->conf.ack_timeout :
	    VERBS_ACK_TIMEOUT;

	if (id->verbs != l->ctx) {
		say(err, errlen, "lane 1 is on device %s, lane 0 on %s: both "
		    "must run on one", id->verbs != NULL ?
		    ibv_get_device_name(id->verbs->device) : "?", l->device);
		return (-1);
	}
	if (verbs_qp_new(l, id, err, errlen))
		return (-1);
	/* A dead peer is noticed on either lane in the same time. */
	(void)rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
	    &t, sizeof(t));
	/*
	 * Every receive is up before its connect or accept (DESIGN): those
	 * that waited for the queue pair, and those still in the engine.
	 */
	if (verbs_post_pend1(l) || verbs_link_flush(l)) {
		say(err, errlen, "lane 1: cannot post receives: %s",
		    engine_error(l->e));
		return (-1);
	}
	return (0);
}

/* Lane 1's route is known: its queue pair, then its connect. */
static void
lane_connect(struct verbs_link *l, struct verbs_ev *ev)
{
	uint8_t hello[WIRE_HELLO_LEN];
	struct rdma_conn_param p;
	char err[200];

	if (lane_qp(l, l->id1, err, sizeof(err))) {
		verbs_vl_down(l, ev, err);
		return;
	}
	verbs_lane_param(l, hello, &p);
	if (rdma_connect(l->id1, &p)) {
		snprintf(err, sizeof(err), "lane 1: rdma_connect: %s",
		    strerror(errno));
		verbs_vl_down(l, ev, err);
		return;
	}
	l->lane1 = L1_CONNECTING;
}

/*
 * Lane 1 is established: a connecting side reads the peer's lane-1
 * hello, which must carry the peer's lane-0 nonce.  Returns 1 when up.
 */
static int
lane_established(struct verbs_link *l, const struct rdma_cm_event *cme,
    struct verbs_ev *ev)
{
	struct wire_hello h, peer0;
	char err[200];
	int werr;

	if (!l->passive) {
		if ((werr = wire_hello_decode(cme->param.conn.private_data,
		    cme->param.conn.private_data_len, &h)) != WIRE_OK) {
			snprintf(err, sizeof(err), "lane 1: the peer's accept "
			    "data is invalid: %s", wire_strerror(werr));
			verbs_vl_down(l, ev, err);
			return (0);
		}
		if (wire_hello_decode(l->hello_peer, WIRE_HELLO_LEN, &peer0) !=
		    WIRE_OK || memcmp(h.nonce, peer0.nonce,
		    sizeof(h.nonce)) != 0) {
			verbs_vl_down(l, ev, "lane 1: the peer's accept names "
			    "another link");
			return (0);
		}
		if (engine_lane_up(l->e, &h) != 0) {
			verbs_vl_down(l, ev, engine_error(l->e));
			return (0);
		}
	}
	l->lane1 = L1_UP;
	/* As lane 0's (see on_established in verbs_event.c). */
	if (!verbs_iwarp(l->id1))
		(void)ibv_modify_qp(l->id1->qp, &(struct ibv_qp_attr){
		    .min_rnr_timer = VERBS_MIN_RNR_TIMER },
		    IBV_QP_MIN_RNR_TIMER);
	if (l->have_hca)
		hca_describe_lane1(l->id1, &l->hca);
	return (1);
}

int
verbs_lane_event(struct verbs_link *l, struct rdma_cm_event *cme,
    struct verbs_ev *ev)
{
	char err[200];

	switch (cme->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (l->id1->verbs != l->ctx)
			break;		/* lane_qp says so, at once */
		if (l->conf.sl_set && (l->qos & HCA_QOS_SL)) {
			/* Lane 0's path, with its SL (verbs_link_conf). */
			if (verbs_path_give(l, l->id1, l->id, err,
			    sizeof(err)))
				verbs_vl_down(l, ev, err);
		} else if (rdma_resolve_route(l->id1, VERBS_RESOLVE_MS)) {
			verbs_vl_down(l, ev, "lane 1: cannot resolve a route");
		}
		return (0);
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		lane_connect(l, ev);
		return (0);
	case RDMA_CM_EVENT_ESTABLISHED:
		return (lane_established(l, cme, ev));
	case RDMA_CM_EVENT_ADDR_ERROR:
		verbs_vl_down(l, ev, "lane 1: address resolution failed");
		return (0);
	case RDMA_CM_EVENT_ROUTE_ERROR:
		verbs_vl_down(l, ev, "lane 1: route resolution failed");
		return (0);
	case RDMA_CM_EVENT_UNREACHABLE:
		verbs_vl_down(l, ev, "lane 1: peer unreachable");
		return (0);
	case RDMA_CM_EVENT_CONNECT_ERROR:
		verbs_vl_down(l, ev, "lane 1: connection failed");
		return (0);
	case RDMA_CM_EVENT_REJECTED:
		snprintf(err, sizeof(err), "lane 1: %s",
		    verbs_reject_text(verbs_reject_reason(l, cme)));
		verbs_vl_down(l, ev, err);
		return (0);
	case RDMA_CM_EVENT_DISCONNECTED:
		verbs_vl_down(l, ev, "peer disconnected lane 1");
		return (0);
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		verbs_vl_down(l, ev, "RDMA device removed");
		return (0);
	default:
		return (0);
	}
	/* Resolved on another device. */
	(void)lane_qp(l, l->id1, err, sizeof(err));
	verbs_vl_down(l, ev, err);
	return (0);
}

/* Reject lane-1 request ${r}: REJECTED in ${ev} saying ${why}. */
static void
lane_refuse(struct verbs_request *r, struct verbs_ev *ev, const char *why)
{

	verbs_id_reject(r->id, WIRE_NOTE_REFUSED);
	rdma_destroy_id(r->id);
	r->id = NULL;
	ev->type = VERBS_EV_REJECTED;
	snprintf(ev->why, sizeof(ev->why), "%s", why);
}

/*
 * The link lane-1 request ${r} is for: one accepted from the same
 * address whose peer's lane-0 hello had this nonce, waiting for its
 * lane 1; NULL, and ${*dup} set when such a link has one already.
 */
static struct verbs_link *
lane_match(struct verbs_request *r, int *dup)
{
	struct verbs_link *l;

	*dup = 0;
	TAILQ_FOREACH(l, &r->cm->links, lentry) {
		if (l->freed || l->dying || !l->passive || l->e == NULL ||
		    l->id == NULL || !verbs_lane_for(&l->peer_hello,
		    rdma_get_peer_addr(l->id), &r->h, &r->peer_sa))
			continue;
		if (l->lane1 == L1_WAITING)
			return (l);
		*dup = 1;
	}
	return (NULL);
}

void
verbs_lane_take(struct verbs_request *r, struct verbs_ev *ev)
{
	uint8_t hello[WIRE_HELLO_LEN];
	struct rdma_conn_param p;
	struct verbs_link *l;
	char err[200];
	int dup;

	if ((l = lane_match(r, &dup)) == NULL) {
		lane_refuse(r, ev, dup ? "a second lane-1 connection for a "
		    "link that has one" : "a lane-1 connection that matches "
		    "no link waiting for one");
		return;
	}
	if (rdma_migrate_id(r->id, l->cm->ch)) {
		snprintf(err, sizeof(err), "lane 1: rdma_migrate_id: %s",
		    strerror(errno));
		lane_refuse(r, ev, err);
		verbs_vl_down(l, ev, err);
		return;
	}
	/* The link's now: its events and its queue pair. */
	l->id1 = r->id;
	l->id1->context = l;
	r->id = NULL;
	/* The peer's lane-1 hello is checked before it is answered. */
	err[0] = '\0';
	if (lane_qp(l, l->id1, err, sizeof(err)) == 0 &&
	    engine_lane_up(l->e, &r->h) != 0)
		snprintf(err, sizeof(err), "%s", engine_error(l->e));
	if (err[0] != '\0') {
		/* Its queue pair and cm_id go with the link's. */
		verbs_id_reject(l->id1, WIRE_NOTE_REFUSED);
		verbs_vl_down(l, ev, err);
		return;
	}
	verbs_lane_param(l, hello, &p);
	/*
	 * As lane 0's accept: the peer may send on the lane as soon as it
	 * sees this, before our ESTABLISHED event.
	 */
	if (rdma_accept(l->id1, &p)) {
		snprintf(err, sizeof(err), "lane 1: rdma_accept: %s",
		    strerror(errno));
		verbs_vl_down(l, ev, err);
		return;
	}
	l->lane1 = L1_ACCEPTING;
	ev->type = VERBS_EV_NONE;
	ev->link = l;
}
