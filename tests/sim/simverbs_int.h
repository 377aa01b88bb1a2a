/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * simverbs_int: the simverbs files' own header: the objects behind
 * verbs.h's opaque types as the simulation makes them, and the calls the
 * files share.  Lowest first; a file calls only the one listed above it:
 *
 *   simverbs_data.c  the data path, ring memory, a link's end, the
 *                    fabric's errors
 *   simverbs_cm.c    what the CM's files share: what a test sets and
 *                    reads (simverbs.h), the channels, refusals, links
 *                    made, set up and downed, listeners found
 *   simverbs_lane.c  a link's latency lane, its second connection
 *   simverbs.c       the CM: connecting, listening, accepting, links
 *                    freed
 */
#ifndef SIMVERBS_INT_H
#define SIMVERBS_INT_H

#include <sys/queue.h>
#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>

#include "fabric.h"
#include "hca.h"
#include "verbs.h"
#include "wire.h"

/* The CM's events, on the links' channel or the listeners'. */
enum sv_type {
	SV_RESOLVED,		/* a connecting link's route is known */
	SV_ESTABLISHED,		/* with the accepting side's hello, if any */
	SV_REJECTED,		/* with IB CM reason status, and a note */
	SV_DISCONNECTED,
	SV_REQUEST,		/* listeners': a connect request, its hello */
	SV_GAVE_UP		/* listeners': a connecting side went */
};

struct sv_event {
	enum sv_type type;
	int lane;			/* 1: of a link's lane-1 connection */
	struct verbs_link *l;		/* whose; a request's connecting link */
	struct verbs_listener *ls;	/* SV_REQUEST: where it arrived */
	int status;
	uint8_t data[WIRE_HELLO_LEN];	/* a hello or a refusal note */
	size_t len;
	TAILQ_ENTRY(sv_event) entry;
};

struct sv_chan {
	int fd;				/* -1 until verbs_cm_open */
	TAILQ_HEAD(, sv_event) q;
};

struct verbs_cm {
	struct sv_chan ch, lch;
	TAILQ_HEAD(, verbs_request) reqs;
	TAILQ_HEAD(, verbs_link) links;
	uint64_t pinned, max_pinned, control, detached;
	int moved_said;
	int deaf;
	unsigned n;			/* its default source: 127.0.9.n */
	TAILQ_ENTRY(verbs_cm) entry;
};

struct verbs_listener {
	struct verbs_cm *cm;
	struct sockaddr_storage sa;
	struct verbs_link_conf conf;
	verbs_gate_fn *gate;
	void *gate_arg;
	TAILQ_ENTRY(verbs_listener) entry;
};

struct verbs_request {
	struct verbs_cm *cm;
	int lane;			/* a lane-1 request (LANE1 hello) */
	struct verbs_link *from;	/* NULL: it gave up */
	struct verbs_link_conf conf;	/* its listener's */
	struct wire_hello h;
	char peer[64];
	struct sockaddr_storage peer_sa;
	TAILQ_ENTRY(verbs_request) entry;
};

/* One RC connection: a fabric whose side 0 connects and side 1 accepts. */
struct sv_conn {
	struct fab f;
	struct verbs_link *end[2];	/* NULL: not yet, or freed */
	int refs;			/* links that still hold it */
	int cut;			/* its path broke */
	/* Both hellos as sent, the connecting side's first. */
	uint8_t hello[2][WIRE_HELLO_LEN];
	int have[2];
	/* Lane 1's second connection: its hellos, likewise. */
	uint8_t hello1[2][WIRE_HELLO_LEN];
};

enum { L_RESOLVING, L_CONNECTING, L_INCOMING, L_ACCEPTING, L_UP, L_DOWN };

/* Lane 1's progress, as verbs_int.h's. */
enum { L1_NONE, L1_RESOLVING, L1_CONNECTING, L1_WAITING, L1_ACCEPTING,
	L1_UP };

struct verbs_link {
	struct verbs_cm *cm;
	struct verbs_link_conf conf;
	int iwarp;		/* set up when simverbs_iwarp was on */
	int state;
	int passive;
	void *user;
	struct sv_conn *conn;
	int side;			/* its side of conn->f */
	uint8_t *ctrl_send;
	uint64_t ctrl_bytes;		/* as charged to cm->pinned */
	struct engine *e;
	struct wire_hello peer_hello;	/* passive: from the request */
	int efd;			/* its completion channel, or -1 */
	int armed;			/* for a receive's completion */
	int armed_send;			/* and for a WR's, or an error */
	uint64_t raises;		/* times its channel was raised */
	struct verbs_arm_stats arms;
	const char *werr;		/* an error completion waits: why */
	enum verbs_wc_error werr_class;	/* and its class */
	enum verbs_wc_error wc_error;	/* verbs_link_wc_error's */
	int stopped, freed, nmems;
	struct sockaddr_storage dst, src;
	char peer[64];
	char device[32];
	uint32_t qpn;
	struct hca_info hca;
	int have_hca;
	struct verbs_mem_stats ms;
	long att;			/* its attempt; -1: incoming */
	/* Lane 1 (engine_lanes): its progress; lane 0 established. */
	int lane1, up0;
	int forged;			/* simverbs_lane_request's: no engine */
	TAILQ_ENTRY(verbs_link) entry;	/* in cm->links */
};

struct verbs_mem {
	struct verbs_cm *cm;		/* charged to it */
	struct verbs_link *link;	/* NULL: detached */
	uint8_t *buf;
	uint32_t size;
	int remote;
	uint32_t key;
};

/* ---- simverbs_data.c */

/**
 * sv_error(fmt, ...):
 * Someone broke a rule of the fabric: the first such, for
 * simverbs_error.  sv_error_clear forgets it.
 */
void sv_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sv_error_clear(void);

/**
 * sv_zalloc(n):
 * ${n} bytes, zeroed; out of memory aborts.
 */
void *sv_zalloc(size_t n);

/**
 * sv_notify(l):
 * Raise ${l}'s completion channel if it is armed and has a completion or
 * an error waiting (and its CM is not deaf).
 */
void sv_notify(struct verbs_link *l);

/**
 * sv_wc_error(l, c, why):
 * An error completion of class ${c} waits for ${l}, saying ${why} (the
 * first stands); its channel is raised.
 */
void sv_wc_error(struct verbs_link *l, enum verbs_wc_error c,
    const char *why);

/**
 * sv_transport_fail(l, why):
 * ${l}'s queue pair stops, then its engine (if any) fails for ${why}.
 */
void sv_transport_fail(struct verbs_link *l, const char *why);

/**
 * sv_destroy(l):
 * Freed link ${l} goes with its last ring, and its hold on its
 * connection (the connection with the last hold).
 */
void sv_destroy(struct verbs_link *l);

/* ---- simverbs_cm.c */

/* Every CM of the process, and every listener, on the one fabric. */
TAILQ_HEAD(sv_cms, verbs_cm);
TAILQ_HEAD(sv_listeners, verbs_listener);
extern struct sv_cms sv_cms;
/* simverbs_iwarp: new links' devices have no immediate data. */
extern int sv_iwarp;
extern struct sv_listeners sv_listeners;

/**
 * sv_next_port():
 * The next source port a connection takes, in turn.
 */
uint16_t sv_next_port(void);

/**
 * sv_peer_at(addr):
 * How the host at ${addr} answers (simverbs_peer; a plain host's).
 */
const struct simverbs_peer *sv_peer_at(const char *addr);

/**
 * sv_att_of(l) / sv_att_new(l):
 * ${l}'s attempt (NULL: an incoming link); connecting link ${l} makes an
 * attempt, from now.
 */
struct simverbs_attempt *sv_att_of(const struct verbs_link *l);
void sv_att_new(struct verbs_link *l);

/**
 * sv_chan_pop(c) / sv_post(c, type, l, data, len) /
 * sv_chan_purge(c, l, ls, gone):
 * The oldest event of channel ${c}, or NULL; an event of ${type} for
 * link ${l} (with ${len} bytes of ${data}) sent to ${c}, returned for
 * the caller to fill in; the events for ${l} (or at listener ${ls}) gone
 * from ${c} unanswered, each given to ${gone} (NULL: none) first.
 */
struct sv_event *sv_chan_pop(struct sv_chan *c);
struct sv_event *sv_post(struct sv_chan *c, enum sv_type type,
    struct verbs_link *l, const void *data, size_t len);
void sv_chan_purge(struct sv_chan *c, const struct verbs_link *l,
    const struct verbs_listener *ls, void (*gone)(struct sv_event *));

/**
 * sv_reject_to(l, status, note):
 * Connecting link ${l}'s request is rejected with IB CM reason ${status}
 * and ${note} (NULL: none), as its attempt records; a link connecting
 * its lane 1 gets it as lane 1's.
 */
void sv_reject_to(struct verbs_link *l, int status,
    const struct wire_note *note);

/**
 * sv_refuse(from, hello, why):
 * A listener's refusal of connecting link ${from}'s hello (byte 4 of
 * ${hello}, NULL: none, its version) for ${why}: the note its address's
 * host says.
 */
void sv_refuse(struct verbs_link *from, const uint8_t *hello, uint8_t why);

/**
 * sv_request_orphaned(ev):
 * A request event a listener's end leaves unanswered: the kernel
 * rejects it, without a note.
 */
void sv_request_orphaned(struct sv_event *ev);

/**
 * sv_request_go(r, why):
 * Request ${r} goes, its connecting side refused for ${why} first (enum
 * wire_note_why; -1: not).
 */
void sv_request_go(struct verbs_request *r, int why);

/**
 * sv_requests_abandon(l):
 * Connecting link ${l} goes: its requests go from every listener.
 */
void sv_requests_abandon(struct verbs_link *l);

/**
 * sv_link_new(cm, conf, user):
 * A new link of ${cm}.
 */
struct verbs_link *sv_link_new(struct verbs_cm *cm,
    const struct verbs_link_conf *conf, void *user);

/**
 * sv_setup(l, err, errlen):
 * ${l}'s queues on side ${l->side} of its connection: its completion
 * channel, control buffers (charged), engine, every receive posted.
 * Returns 0, or -1 and why.
 */
int sv_setup(struct verbs_link *l, char *err, size_t errlen);

/**
 * sv_check_posted(l) / sv_check_posted1(l):
 * Every receive of ${l}'s lane 0 (lane 1) is up before its connect and
 * accept (DESIGN), or sv_error says so.
 */
void sv_check_posted(const struct verbs_link *l);
void sv_check_posted1(const struct verbs_link *l);

/**
 * sv_down(l, ev, why) / sv_up_event(l, ev):
 * ${l} is down for ${why}: a DOWN event in ${ev}.  Both lanes (or the one
 * the link runs) are up: an UP event in ${ev}, and what waited goes.
 */
void sv_down(struct verbs_link *l, struct verbs_ev *ev, const char *why);
void sv_up_event(struct verbs_link *l, struct verbs_ev *ev);

/**
 * sv_listener_at(sa):
 * The listener that takes requests to ${sa}, or NULL.
 */
struct verbs_listener *sv_listener_at(const struct sockaddr *sa);

/* ---- simverbs_lane.c */

/**
 * sv_lane_event(l, sev, ev):
 * An event of ${l}'s lane-1 connection: its progress, or ${l} UP or DOWN
 * in ${ev}.
 */
void sv_lane_event(struct verbs_link *l, const struct sv_event *sev,
    struct verbs_ev *ev);

/**
 * sv_lane_take(r, ev):
 * Lane-1 request ${r}: to the link waiting for it, accepted there (NONE
 * in ${ev}), or refused (REJECTED, saying why; or the link DOWN).  ${r}
 * goes.
 */
void sv_lane_take(struct verbs_request *r, struct verbs_ev *ev);

#endif /* !SIMVERBS_INT_H */
