/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * verbs_event: the links' RDMA CM events: a connecting link through
 * address and route resolution (and the probe that gives it an SL) to
 * connected; established, rejected, disconnected; a dying link's end.
 * Its lane 1's events go to verbs_lane.c; the link is UP once both
 * lanes are.
 */
#include "config.h"

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

/*
 * The link's address is resolved and it wants an SL of its own: resolve
 * the same route on a probe id (same addresses and TOS), whose path goes
 * to the link with the SL (probe_resolved).  Returns 0, or -1 and why.
 */
static int
probe_start(struct verbs_link *l, char *err, size_t errlen)
{
	struct sockaddr_storage src;

	/* The link's id holds its port: the probe takes another. */
	verbs_src_of(l->id, &src);
	if (rdma_create_id(l->cm->ch, &l->probe, l, RDMA_PS_TCP)) {
		l->probe = NULL;
		say(err, errlen, "service_level: rdma_create_id: %s",
		    strerror(errno));
		return (-1);
	}
	if ((l->conf.tos_set && rdma_set_option(l->probe, RDMA_OPTION_ID,
	    RDMA_OPTION_ID_TOS, &l->conf.tos, sizeof(l->conf.tos))) ||
	    rdma_resolve_addr(l->probe, (struct sockaddr *)&src,
	    rdma_get_peer_addr(l->id), VERBS_RESOLVE_MS)) {
		say(err, errlen, "service_level: cannot resolve the route: %s",
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/* An event of ${l}'s probe (see probe_start). */
static void
on_probe_event(struct verbs_link *l, struct rdma_cm_event *cme,
    struct verbs_ev *ev)
{
	char err[200];

	switch (cme->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(l->probe, VERBS_RESOLVE_MS))
			verbs_vl_down(l, ev, "service_level: cannot resolve "
			    "a route");
		return;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		/* Its path, with the SL, goes to the link's id, which the
		 * RDMA CM then reports as ROUTE_RESOLVED. */
		if (verbs_path_give(l, l->id, l->probe, err, sizeof(err)))
			verbs_vl_down(l, ev, err);
		return;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		verbs_vl_down(l, ev, "service_level: route resolution failed");
		return;
	default:
		return;
	}
}

/* The route to the peer is known: set the link up, then connect. */
static void
on_route_resolved(struct verbs_link *l, struct verbs_ev *ev)
{
	struct rdma_conn_param p;
	char err[200];

	/* Its events were all acked: the probe may go. */
	if (l->probe != NULL) {
		rdma_destroy_id(l->probe);
		l->probe = NULL;
	}
	if (verbs_link_setup(l, err, sizeof(err))) {
		verbs_vl_down(l, ev, err);
		return;
	}
	if (verbs_conn_param(l, &p)) {
		verbs_vl_down(l, ev, "no random numbers available yet");
		return;
	}
	if (rdma_connect(l->id, &p)) {
		/* Soft-iWARP connects its TCP socket within the call: nobody
		 * listening fails it here, not with an event. */
		if (errno == ECONNREFUSED && l->iwarp)
			snprintf(err, sizeof(err), "%s",
			    verbs_reject_text(VERBS_REJ_NO_LISTENER));
		else
			snprintf(err, sizeof(err), "rdma_connect: %s",
			    strerror(errno));
		verbs_vl_down(l, ev, err);
		return;
	}
	l->state = L_CONNECTING;
}

/*
 * The link's address is resolved, so its device is known: resolve the
 * route (through a probe for an SL of its own, where there are SLs), and
 * say which device it is and what it honours of the link's traffic
 * class and SL (the owner warns about what it ignores).
 */
static void
on_addr_resolved(struct verbs_link *l, struct verbs_ev *ev)
{
	char err[200];

	l->iwarp = verbs_iwarp(l->id);
	l->qos = l->id->verbs != NULL ? hca_qos(l->id->verbs) : 0;
	if (l->conf.sl_set && (l->qos & HCA_QOS_SL)) {
		if (probe_start(l, err, sizeof(err))) {
			verbs_vl_down(l, ev, err);
			return;
		}
	} else if (rdma_resolve_route(l->id, VERBS_RESOLVE_MS)) {
		verbs_vl_down(l, ev, "cannot resolve a route");
		return;
	}
	if (l->id->verbs == NULL)
		return;
	ev->type = VERBS_EV_DEVICE;
	snprintf(ev->device, sizeof(ev->device), "%s",
	    ibv_get_device_name(l->id->verbs->device));
	ev->qos = l->qos;
}

/* Both lanes are up (or the one the link runs): UP, and what waited goes. */
static void
up_event(struct verbs_link *l, struct verbs_ev *ev)
{

	ev->type = VERBS_EV_UP;
	if (verbs_link_flush(l))
		verbs_vl_down(l, ev, engine_error(l->e));
}

/*
 * Lane 0 is established: up, once a connecting side read the hello and
 * a link of two lanes has its lane 1 (verbs_lane.c) up too.
 */
static void
on_established(struct verbs_link *l, const struct rdma_cm_event *cme,
    struct verbs_ev *ev)
{
	struct wire_hello h;
	char err[200];
	int werr;

	if (!l->passive && (werr = wire_hello_decode(
	    cme->param.conn.private_data, cme->param.conn.private_data_len,
	    &h)) != WIRE_OK) {
		snprintf(err, sizeof(err), "peer's accept data is invalid: %s",
		    wire_strerror(werr));
		verbs_vl_down(l, ev, err);
		rdma_disconnect(l->id);
		return;
	}
	if (!l->passive) {
		memcpy(l->hello_peer, cme->param.conn.private_data,
		    WIRE_HELLO_LEN);
		l->have_peer = 1;
		engine_connected(l->e, &h);
	}
	l->state = L_UP;
	l->up0 = 1;
	/*
	 * The CM leaves the queue pair's RNR timer at 0 (655 ms); a driver
	 * that will not change it keeps that, and hca_describe shows what it
	 * is.  Receives are posted before connecting, so nothing before this
	 * could meet an empty receive queue.  iWARP has no RNR: a SEND
	 * with no receive posted ends the connection.
	 */
	if (!verbs_iwarp(l->id))
		(void)ibv_modify_qp(l->id->qp, &(struct ibv_qp_attr){
		    .min_rnr_timer = VERBS_MIN_RNR_TIMER },
		    IBV_QP_MIN_RNR_TIMER);
	/* What a query cannot tell shows as unknown. */
	(void)hca_describe(l->id, &l->hca);
	l->hca.inline_size = l->conf.inline_size;
	l->have_hca = 1;
	if (!l->passive && engine_error(l->e) == NULL &&
	    engine_lanes(l->e) > 1) {
		if (verbs_lane_start(l, err, sizeof(err)))
			verbs_vl_down(l, ev, err);
		return;
	}
	/* An accepted link of two lanes waits for its lane 1 too. */
	if (l->lane1 != L1_NONE && l->lane1 != L1_UP)
		return;
	up_event(l, ev);
}

static void
on_link_event(struct verbs_link *l, struct rdma_cm_event *cme,
    struct verbs_ev *ev)
{
	int reason;

	ev->link = l;
	snprintf(ev->peer, sizeof(ev->peer), "%s", l->peer);
	if (l->id1 != NULL && cme->id == l->id1) {
		if (verbs_lane_event(l, cme, ev) == 1 && l->up0 &&
		    l->state == L_UP)
			up_event(l, ev);
		return;
	}
	if (cme->id != l->id) {
		on_probe_event(l, cme, ev);
		return;
	}
	switch (cme->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		on_addr_resolved(l, ev);
		return;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		on_route_resolved(l, ev);
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
		on_established(l, cme, ev);
		return;
	case RDMA_CM_EVENT_ADDR_ERROR:
		verbs_vl_down(l, ev, "address resolution failed (no RDMA "
		    "device reaches the peer?)");
		return;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		verbs_vl_down(l, ev, "route resolution failed");
		return;
	case RDMA_CM_EVENT_UNREACHABLE:
		verbs_vl_down(l, ev, "peer unreachable");
		return;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		verbs_vl_down(l, ev, "connection failed");
		return;
	case RDMA_CM_EVENT_REJECTED:
		reason = verbs_reject_reason(l, cme);
		verbs_vl_down(l, ev, verbs_reject_text(reason));
		verbs_refused(ev, reason, l->have_mine ? l->hello_mine :
		    NULL, cme->param.conn.private_data,
		    cme->param.conn.private_data_len);
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
		verbs_vl_down(l, ev, "peer disconnected");
		return;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		verbs_vl_down(l, ev, "RDMA device removed");
		return;
	default:
		return;		/* TIMEWAIT_EXIT, ADDR_CHANGE, ...: nothing */
	}
}

/*
 * An event for a dying link: once the connection is established the peer
 * can be told it ended; any other end means there is nobody to tell.
 * Returns 1 when its cm_id may go.
 */
static int
on_dying_event(struct verbs_link *l, struct rdma_cm_event *cme)
{

	switch (cme->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		rdma_disconnect(l->id);
		return (1);
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return (1);
	default:
		return (0);
	}
}

int
verbs_cm_handle(struct verbs_cm *cm, struct verbs_ev *ev)
{
	struct rdma_cm_event *cme;
	struct verbs_link *l = NULL;
	int end = 0;

	memset(ev, 0, sizeof(*ev));
	if (rdma_get_cm_event(cm->ch, &cme)) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return (0);
		return (-1);
	}
	if (cme->id->context != NULL &&
	    *(const int *)cme->id->context == KIND_LINK) {
		l = cme->id->context;
		if (l->dying)
			end = on_dying_event(l, cme);
		else
			on_link_event(l, cme, ev);
	}
	/* A link's device gone: the devices are listed again (see held). */
	if (cme->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		cm->sync_due = SYNC_TICKS;
	rdma_ack_cm_event(cme);
	/* Only once the event is acked: destroying waits for that. */
	if (end)
		verbs_dying_end(l);
	return (1);
}
