/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * verbs_listen: listeners, and the connect requests on their channel:
 * through the gate, waiting to be taken (then a link) or refused.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>

#include <netdb.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "addr.h"
#include "verbs.h"
#include "verbs_int.h"
#include "verbs_pure.h"
#include "wire.h"

static int
resolve(const char *host, const char *port, int passive,
    struct addrinfo **res, char *err, size_t errlen)
{
	struct addrinfo hints;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = passive ? AI_PASSIVE : 0;
	if ((rc = getaddrinfo(host, port, &hints, res)) != 0) {
		say(err, errlen, "cannot resolve %s:%s: %s", host ? host : "*",
		    port, gai_strerror(rc));
		return (-1);
	}
	return (0);
}

/* Listener ${ls} on ${sa} (${where}, for messages): 0, or -1 and why. */
static int
listener_open(struct verbs_listener *ls, struct sockaddr *sa,
    const char *where, char *err, size_t errlen)
{
	int e;

	if (rdma_create_id(ls->cm->lch, &ls->id, ls, RDMA_PS_TCP)) {
		say(err, errlen, "rdma_create_id: %s", strerror(errno));
		ls->id = NULL;
		return (-1);
	}
	if (rdma_bind_addr(ls->id, sa)) {
		e = errno;
		if (e == ENODEV)
			say(err, errlen, "cannot listen for RDMA links on %s: "
			    "no RDMA device has that address (rdma link lists "
			    "the devices and their network interfaces; a "
			    "Soft-RoCE one: rdma link add rxe0 type rxe netdev "
			    "IFACE)", where);
		/* The RDMA CM guards its ports below 1024 as TCP does. */
		else if (e == EACCES)
			say(err, errlen, "cannot listen for RDMA links on %s: "
			    "%s (a port below 1024 needs CAP_NET_BIND_SERVICE: "
			    "under systemd, see \"Ports below 1024\" in "
			    "rstreamd(8))", where, strerror(e));
		else
			say(err, errlen, "cannot listen for RDMA links on %s: "
			    "%s (is there an RDMA device with that address?)",
			    where, strerror(e));
		errno = e;
		return (-1);
	}
	if (rdma_listen(ls->id, 64)) {
		say(err, errlen, "rdma_listen on %s: %s", where,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

struct verbs_listener *
verbs_listen(struct verbs_cm *cm, const char *host, const char *port,
    const struct verbs_link_conf *conf, void *user, char *err, size_t errlen)
{
	struct verbs_listener *ls;
	struct addrinfo *ai;
	char where[80];
	int e = ENOMEM;

	(void)user;
	if (cm->lch == NULL) {
		say(err, errlen, "no RDMA yet: %s", cm->why);
		errno = ENODEV;
		return (NULL);
	}
	if (resolve(host, port, 1, &ai, err, errlen)) {
		errno = EINVAL;
		return (NULL);
	}
	addr_text(ai->ai_addr, where, sizeof(where));
	if ((ls = calloc(1, sizeof(*ls))) == NULL) {
		say(err, errlen, "out of memory");
	} else {
		ls->kind = KIND_LISTENER;
		ls->cm = cm;
		ls->conf = *conf;
		if (listener_open(ls, ai->ai_addr, where, err, errlen) != 0) {
			e = errno;
			verbs_listener_free(ls);
			ls = NULL;
		}
	}
	freeaddrinfo(ai);
	if (ls == NULL)
		errno = e;
	return (ls);
}

void
verbs_listener_free(struct verbs_listener *ls)
{

	if (ls == NULL)
		return;
	if (ls->id != NULL)
		rdma_destroy_id(ls->id);
	free(ls);
}

void
verbs_listener_set_conf(struct verbs_listener *ls,
    const struct verbs_link_conf *conf)
{

	ls->conf = *conf;
}

void
verbs_listener_set_gate(struct verbs_listener *ls, verbs_gate_fn *gate,
    void *arg)
{

	ls->gate = gate;
	ls->gate_arg = arg;
}

/* Reject a connect request with a note saying ${why}, and let it go. */
static void
request_end(struct rdma_cm_id *id, uint8_t why)
{

	verbs_id_reject(id, why);
	rdma_destroy_id(id);
}

/* A connect request: through the gate, or turned away at once. */
static void
on_request(struct verbs_listener *ls, struct rdma_cm_event *cme)
{
	const struct sockaddr *psa = rdma_get_peer_addr(cme->id);
	struct verbs_request *r;
	struct wire_hello h;
	uint8_t why;
	char peer[64];
	int werr;

	addr_text(psa, peer, sizeof(peer));
	werr = wire_hello_decode(cme->param.conn.private_data,
	    cme->param.conn.private_data_len, &h);
	if (verbs_gate_ask(ls->gate, ls->gate_arg, psa, peer, werr, &h,
	    &why) != 0 || (r = calloc(1, sizeof(*r))) == NULL) {
		request_end(cme->id, why);
		return;
	}
	r->kind = KIND_REQUEST;
	r->cm = ls->cm;
	r->id = cme->id;
	r->conf = ls->conf;
	r->h = h;
	memcpy(r->hello, cme->param.conn.private_data, WIRE_HELLO_LEN);
	memcpy(r->peer, peer, sizeof(r->peer));
	if (psa != NULL && (psa->sa_family == AF_INET ||
	    psa->sa_family == AF_INET6))
		memcpy(&r->peer_sa, psa, psa->sa_family == AF_INET ?
		    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
	r->id->context = r;
	TAILQ_INSERT_TAIL(&ls->cm->reqs, r, entry);
}

static void
request_free(struct verbs_request *r)
{

	TAILQ_REMOVE(&r->cm->reqs, r, entry);
	free(r);
}

int
verbs_cm_handle_listen(struct verbs_cm *cm)
{
	struct rdma_cm_event *cme;
	struct verbs_request *r = NULL;

	if (rdma_get_cm_event(cm->lch, &cme)) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return (0);
		return (-1);
	}
	if (cme->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		on_request(cme->listen_id->context, cme);
	else if (cme->id->context != NULL &&
	    *(const int *)cme->id->context == KIND_REQUEST)
		r = cme->id->context;	/* the peer gave up on it */
	/* A listener's device gone: the devices are listed again. */
	if (cme->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		cm->sync_due = SYNC_TICKS;
	rdma_ack_cm_event(cme);
	/* Only once the event is acked: destroying waits for that. */
	if (r != NULL) {
		rdma_destroy_id(r->id);
		request_free(r);
	}
	return (1);
}

struct verbs_request *
verbs_cm_request(const struct verbs_cm *cm)
{

	return (TAILQ_FIRST(&cm->reqs));
}

int
verbs_request_lane(const struct verbs_request *r)
{

	return ((r->h.flags & WIRE_HELLO_LANE1) != 0);
}

const struct sockaddr *
verbs_request_peer(const struct verbs_request *r, const char **text,
    int *auth)
{

	*text = r->peer;
	*auth = (r->h.flags & (WIRE_HELLO_AUTH | WIRE_HELLO_IDENTITY)) != 0;
	return (r->peer_sa.ss_family != 0 ?
	    (const struct sockaddr *)&r->peer_sa : NULL);
}

void
verbs_request_refuse(struct verbs_request *r, uint8_t why)
{

	request_end(r->id, why);
	request_free(r);
}

void
verbs_request_take(struct verbs_request *r, struct verbs_ev *ev)
{
	struct verbs_cm *cm = r->cm;
	struct verbs_link *l;
	char err[200];

	memset(ev, 0, sizeof(*ev));
	memcpy(ev->peer, r->peer, sizeof(ev->peer));
	ev->peer_sa = r->peer_sa;
	ev->type = VERBS_EV_REJECTED;
	/* A link's second connection, not a link of its own. */
	if (r->h.flags & WIRE_HELLO_LANE1) {
		verbs_lane_take(r, ev);
		request_free(r);
		return;
	}
	/* From now on its events come with the links'. */
	if (rdma_migrate_id(r->id, cm->ch)) {
		snprintf(ev->why, sizeof(ev->why), "rdma_migrate_id: %s",
		    strerror(errno));
		verbs_request_refuse(r, WIRE_NOTE_REFUSED);
		return;
	}
	if ((l = verbs_link_new(cm, &r->conf, NULL)) == NULL) {
		snprintf(ev->why, sizeof(ev->why), "out of memory");
		verbs_request_refuse(r, WIRE_NOTE_REFUSED);
		return;
	}
	l->id = r->id;
	l->id->context = l;
	l->passive = 1;
	snprintf(l->peer, sizeof(l->peer), "%s", r->peer);
	l->peer_hello = r->h;
	memcpy(l->hello_peer, r->hello, WIRE_HELLO_LEN);
	l->have_peer = 1;
	ev->peer_auth = (r->h.flags & WIRE_HELLO_AUTH) != 0;
	ev->peer_ident = (r->h.flags & WIRE_HELLO_IDENTITY) != 0;
	request_free(r);
	if (verbs_link_setup(l, err, sizeof(err))) {
		verbs_id_reject(l->id, WIRE_NOTE_REFUSED);
		l->state = L_DOWN;
		verbs_link_free(l);
		snprintf(ev->why, sizeof(ev->why), "%s", err);
		return;
	}
	l->state = L_INCOMING;
	ev->type = VERBS_EV_INCOMING;
	ev->link = l;
}
