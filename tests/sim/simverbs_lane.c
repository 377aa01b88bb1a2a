/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * simverbs_lane: a simulated link's latency lane (version 8,
 * engine_lanes), as verbs_lane.c makes it: a second connection of the
 * CM, resolved once lane 0 is established, its request matched at the
 * listener's side by the peer's lane-0 nonce and address to the link
 * waiting for it (or refused with a note), its accept checked against
 * the link; the link UP once both lanes are.  Its traffic is lane 1 of
 * the link's fabric.  And the knobs that break it (simverbs.h).
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fabric.h"
#include "simverbs.h"
#include "simverbs_int.h"
#include "verbs.h"
#include "verbs_pure.h"
#include "wire.h"

/* ${l}'s own lane-1 hello into ${out}: its lane-0 hello's nonce. */
static void
lane_hello(struct verbs_link *l, uint8_t out[WIRE_HELLO_LEN])
{
	struct wire_hello h, mine;

	memset(&h, 0, sizeof(h));
	engine_lane_hello(l->e, &h);
	if (wire_hello_decode(l->conn->hello[l->side], WIRE_HELLO_LEN,
	    &mine) == WIRE_OK)
		memcpy(h.nonce, mine.nonce, sizeof(h.nonce));
	wire_hello_encode(out, &h);
}

/* Connecting link ${l}'s lane 1 is resolved: receives, then its request. */
static void
lane_resolved(struct verbs_link *l, struct verbs_ev *ev)
{
	struct verbs_listener *ls;
	struct sv_event *req;

	/* Lane 1's receives, handed out by engine_connected, go up. */
	if (verbs_link_flush(l)) {
		sv_down(l, ev, "lane 1: cannot post receives");
		return;
	}
	sv_check_posted1(l);
	lane_hello(l, l->conn->hello1[0]);
	l->lane1 = L1_CONNECTING;
	if (sv_peer_at(l->peer)->dark)
		return;
	if ((ls = sv_listener_at((const struct sockaddr *)&l->dst)) == NULL) {
		sv_down(l, ev, "lane 1: connection refused: nothing listening "
		    "at that address and port");
		return;
	}
	req = sv_post(&ls->cm->lch, SV_REQUEST, l, l->conn->hello1[0],
	    WIRE_HELLO_LEN);
	req->ls = ls;
	req->lane = 1;
}

/* Lane 1 established: a connecting side checks the accept's nonce. */
static void
lane_established(struct verbs_link *l, const struct sv_event *sev,
    struct verbs_ev *ev)
{
	struct verbs_link *o = l->conn->end[1];
	struct wire_hello h, peer0;

	if (!l->passive) {
		if (wire_hello_decode(sev->data, sev->len, &h) != WIRE_OK) {
			sv_down(l, ev, "lane 1: the peer's accept data is "
			    "invalid");
			return;
		}
		if (wire_hello_decode(l->conn->hello[1], WIRE_HELLO_LEN,
		    &peer0) != WIRE_OK || memcmp(h.nonce, peer0.nonce,
		    sizeof(h.nonce)) != 0) {
			sv_down(l, ev, "lane 1: the peer's accept names "
			    "another link");
			return;
		}
		if (engine_lane_up(l->e, &h) != 0) {
			sv_down(l, ev, engine_error(l->e));
			return;
		}
		if (o != NULL && o->lane1 == L1_ACCEPTING)
			sv_post(&o->cm->ch, SV_ESTABLISHED, o, NULL,
			    0)->lane = 1;
	}
	l->lane1 = L1_UP;
	if (l->up0 && l->state == L_UP)
		sv_up_event(l, ev);
}

/* An event of ${l}'s lane-1 connection. */
void
sv_lane_event(struct verbs_link *l, const struct sv_event *sev,
    struct verbs_ev *ev)
{
	char why[200];

	switch (sev->type) {
	case SV_RESOLVED:
		lane_resolved(l, ev);
		return;
	case SV_ESTABLISHED:
		lane_established(l, sev, ev);
		return;
	case SV_DISCONNECTED:
		sv_down(l, ev, "peer disconnected lane 1");
		return;
	default:
		snprintf(why, sizeof(why), "lane 1: %s",
		    verbs_reject_text(sev->status));
		sv_down(l, ev, why);
		return;
	}
}

/*
 * The link lane-1 request ${r} is for, as verbs_lane.c finds it: accepted
 * from the same address, its peer's lane-0 nonce the request's, waiting
 * for lane 1; NULL, with ${*dup} set when such a link has one.
 */
static struct verbs_link *
lane_match(const struct verbs_request *r, int *dup)
{
	struct verbs_link *l;

	*dup = 0;
	TAILQ_FOREACH(l, &r->cm->links, entry) {
		if (l->freed || !l->passive || l->e == NULL ||
		    !verbs_lane_for(&l->peer_hello,
		    (const struct sockaddr *)&l->src, &r->h, &r->peer_sa))
			continue;
		if (l->lane1 == L1_WAITING)
			return (l);
		*dup = 1;
	}
	return (NULL);
}

/* Lane-1 request ${r}: to its link, accepted there, or refused. */
void
sv_lane_take(struct verbs_request *r, struct verbs_ev *ev)
{
	struct verbs_link *l, *from = r->from;
	struct wire_hello h = r->h;
	int dup;

	if ((l = lane_match(r, &dup)) == NULL) {
		snprintf(ev->why, sizeof(ev->why), "%s", dup ? "a second "
		    "lane-1 connection for a link that has one" : "a lane-1 "
		    "connection that matches no link waiting for one");
		sv_request_go(r, WIRE_NOTE_REFUSED);
		return;
	}
	sv_request_go(r, -1);
	/* Lane 1's receives, handed out by engine_connected, go up. */
	if (verbs_link_flush(l) == 0)
		sv_check_posted1(l);
	/* The peer's lane-1 hello is checked before it is answered. */
	if (engine_error(l->e) != NULL || engine_lane_up(l->e, &h) != 0) {
		sv_refuse(from, NULL, WIRE_NOTE_REFUSED);
		sv_down(l, ev, engine_error(l->e));
		ev->link = l;
		return;
	}
	lane_hello(l, l->conn->hello1[1]);
	sv_post(&from->cm->ch, SV_ESTABLISHED, from, l->conn->hello1[1],
	    WIRE_HELLO_LEN)->lane = 1;
	l->lane1 = L1_ACCEPTING;
	ev->type = VERBS_EV_NONE;
	ev->link = l;
}

int
simverbs_lane_drop(const char *addr)
{
	struct verbs_cm *cm;
	struct verbs_link *l;
	struct sv_conn *c;
	int n = 0, i;

	TAILQ_FOREACH(cm, &sv_cms, entry) {
		TAILQ_FOREACH(l, &cm->links, entry) {
			if ((c = l->conn) == NULL || c->cut || l->passive ||
			    l->lane1 != L1_UP || strcmp(l->peer, addr) != 0)
				continue;
			for (i = 0; i < 2; i++)
				if (c->end[i] != NULL)
					sv_post(&c->end[i]->cm->ch,
					    SV_DISCONNECTED, c->end[i], NULL,
					    0)->lane = 1;
			n++;
		}
	}
	return (n);
}

struct verbs_link *
simverbs_lane_request(struct verbs_cm *cm, const char *dst,
    const uint8_t *nonce)
{
	struct verbs_link *l, *o, *last = NULL;
	struct verbs_listener *ls;
	struct verbs_cm *c;
	struct sockaddr_in *sin;
	struct wire_hello h, h0;
	uint8_t buf[WIRE_HELLO_LEN];
	struct sv_event *req;

	memset(&h, 0, sizeof(h));
	h.version = WIRE_VERSION;
	h.flags = WIRE_HELLO_LANE1;
	h.credits = 32;
	l = sv_link_new(cm, &(struct verbs_link_conf){ .sq_size = 1 }, NULL);
	l->forged = 1;
	snprintf(l->peer, sizeof(l->peer), "%s", dst);
	if (nonce != NULL) {
		memcpy(h.nonce, nonce, sizeof(h.nonce));
		sin = (struct sockaddr_in *)(void *)&l->src;
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(0x7f000900u | (cm->n & 0xff));
		sin->sin_port = htons(sv_next_port());
	} else {
		TAILQ_FOREACH(c, &sv_cms, entry)
			TAILQ_FOREACH(o, &c->links, entry)
				if (!o->passive && !o->forged &&
				    o->conn != NULL && o->conn->have[0] &&
				    strcmp(o->peer, dst) == 0)
					last = o;
		if (last == NULL)
			abort();
		if (wire_hello_decode(last->conn->hello[0], WIRE_HELLO_LEN,
		    &h0) != WIRE_OK)
			abort();
		memcpy(h.nonce, h0.nonce, WIRE_NONCE_LEN);
		l->src = last->src;
		l->dst = last->dst;
	}
	if (nonce != NULL) {
		struct addrinfo hints, *ai;
		char host[64], *port;

		snprintf(host, sizeof(host), "%s", dst);
		if ((port = strrchr(host, ':')) == NULL)
			abort();
		*port++ = '\0';
		memset(&hints, 0, sizeof(hints));
		hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
		hints.ai_socktype = SOCK_STREAM;
		if (getaddrinfo(host, port, &hints, &ai) != 0)
			abort();
		memcpy(&l->dst, ai->ai_addr, ai->ai_addrlen);
		freeaddrinfo(ai);
	}
	sv_att_new(l);
	sv_att_of(l)->version = h.version;
	l->state = L_CONNECTING;
	wire_hello_encode(buf, &h);
	if ((ls = sv_listener_at((const struct sockaddr *)&l->dst)) == NULL) {
		sv_reject_to(l, 8, NULL);
		return (l);
	}
	req = sv_post(&ls->cm->lch, SV_REQUEST, l, buf, WIRE_HELLO_LEN);
	req->ls = ls;
	req->lane = 1;
	return (l);
}

