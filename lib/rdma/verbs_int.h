/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * verbs_int: the verbs files' own header (nothing else includes it): the
 * objects behind verbs.h's opaque types, and what the files share.
 * Everyone else knows them through verbs.h, which a verbs file includes
 * before this one: this header does not include it, since
 * tests/layers.sh sees verbs.c and verbs.h as one module and would see
 * verbs.c -> verbs_int.h -> verbs.h as a loop.
 *
 *   verbs_pure.c    what they decide without a device: the engine, the
 *                   hello, a reject read, an error completion's class
 *                   (its own header, verbs_pure.h, since the
 *                   simulator's stand-in shares it)
 *   verbs.c         helpers; the machine's RDMA devices (why the RDMA CM
 *                   is missing, the device list the channel holds)
 *   verbs_mem.c     ring memory: charged, registered, pooled; the link's
 *                   last step (it goes with its last ring)
 *   verbs_data.c    the data path: posting, completions, stopping
 *   verbs_link.c    a link set up, connected or accepted, freed
 *   verbs_lane.c    a link's latency lane (version 8): its second
 *                   cm_id and queue pair, connected or accepted
 *   verbs_listen.c  listeners, and the requests their gate lets through
 *   verbs_event.c   the links' CM events
 *   verbs_cm.c      the CM channels: open, tick, free
 *
 * A file calls only files listed above it, so no two call each other in
 * a loop.
 */
#ifndef VERBS_INT_H
#define VERBS_INT_H

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "engine.h"
#include "engine_io.h"
#include "hca.h"
#include "wire.h"

struct verbs_cm {
	struct rdma_event_channel *ch;
	/* Listeners' own channel: connect requests, which anyone can send,
	 * are gated there without touching any link (see verbs.h). */
	struct rdma_event_channel *lch;
	TAILQ_HEAD(, verbs_request) reqs;	/* let through, not yet taken */
	/*
	 * Memory counted against the cap (0: none), over all links: rings,
	 * registered or detached (a suspended stream's), pooled or in use,
	 * and the links' control buffers; of which the last two, apart.
	 * Charged (budget_take) before it is mapped or registered.  Atomic:
	 * links on other threads charge at once.
	 */
	uint64_t pinned, max_pinned;
	uint64_t control, detached;
	/* Links freed while accepting, waiting to disconnect (see below). */
	TAILQ_HEAD(, verbs_link) dying;
	/* Every link whose protection domain still exists. */
	TAILQ_HEAD(, verbs_link) links;
	/*
	 * A hold on every device's context (rdma_get_devices).  librdmacm
	 * keeps a device open until it lists the devices again and finds it
	 * gone, and the kernel cannot finish removing a device any process
	 * still has open; then it closes it with the last cm_id on it, which
	 * may be before a link's PD, CQ and MRs there are gone.  So we hold
	 * every device, list them again when they may have changed, and let
	 * a removed one go only once no link has anything on it (see
	 * verbs_devices_sync).
	 */
	struct ibv_context **held;
	/*
	 * Listing the devices is costly (sysfs, netlink: a socket and
	 * descriptors come and go), so it is done only when due: for a few
	 * ticks after /dev/infiniband changed (a device's node comes or goes
	 * before the kernel waits for its last user) or a cm_id reported its
	 * device removed, and until a removed device is let go.
	 */
	int sync_due;
	struct stat dev_dir;
	/* verbs_cm_moved's last look at /dev/infiniband. */
	struct stat moved_dir;
	/* Why the channels are not open (see verbs_cm_open); "" once they
	 * are. */
	char why[400];
};

/* Ticks to list the devices again after a sign that they changed. */
#define SYNC_TICKS 3

/* CM ids' context is a listener, a link or a request: the first member
 * says which. */
enum { KIND_LISTENER = 1, KIND_LINK = 2, KIND_REQUEST = 3 };

struct verbs_listener {
	int kind;
	struct verbs_cm *cm;
	struct rdma_cm_id *id;
	struct verbs_link_conf conf;
	verbs_gate_fn *gate;
	void *gate_arg;
};

/* A connect request the gate let through, on the listeners' channel. */
struct verbs_request {
	int kind;
	struct verbs_cm *cm;
	struct rdma_cm_id *id;
	struct verbs_link_conf conf;	/* its listener's */
	struct wire_hello h;
	uint8_t hello[WIRE_HELLO_LEN];	/* as sent */
	char peer[64];
	struct sockaddr_storage peer_sa;
	TAILQ_ENTRY(verbs_request) entry;
};

/* Lane 1's progress (struct verbs_link.lane1): engine_lanes says 2. */
enum {
	L1_NONE,	/* one lane (or not known yet) */
	L1_RESOLVING,	/* active: resolving its address and route */
	L1_CONNECTING,	/* active: connect sent */
	L1_WAITING,	/* passive: waiting for the peer's lane-1 request */
	L1_ACCEPTING,	/* passive: accept sent */
	L1_UP
};

enum {
	L_RESOLVING,	/* active: resolving address and route */
	L_CONNECTING,	/* active: connect sent */
	L_INCOMING,	/* passive: waiting for verbs_accept/reject */
	L_ACCEPTING,	/* passive: accept sent */
	L_UP,
	L_DOWN
};

struct verbs_link {
	int kind;
	struct verbs_cm *cm;
	struct rdma_cm_id *id;
	struct verbs_link_conf conf;
	int state;
	int passive;
	void *user;

	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	/*
	 * Two completion queues on the one channel: receives (cq), which
	 * is armed whenever the loop sleeps, and the work requests' own
	 * completions (scq), armed only when the engine waits on them
	 * (engine_sends_quiet): a small write's completion would otherwise
	 * wake the daemon for nothing once per round trip.
	 */
	struct ibv_cq *cq;
	struct ibv_cq *scq;
	int scq_armed;			/* an event of scq's may still come */
	struct verbs_arm_stats arms;	/* atomic: others read them */
	int have_qp;
	/*
	 * Lane 1 (version 8, engine_lanes): a second RDMA CM connection to
	 * the same peer, its queue pair in the same protection domain on the
	 * same completion queues (sized for both lanes).  Its receives,
	 * handed out by the engine before its queue pair exists, wait in
	 * pend1.  The UP event waits for both lanes (up0: lane 0 was
	 * established).
	 */
	struct rdma_cm_id *id1;
	int have_qp1;
	int lane1;
	int up0;
	uint32_t *pend1;
	uint32_t npend1;
	uint8_t *ctrl_send;
	struct ibv_mr *ctrl_send_mr;
	uint8_t *recv_buf;
	struct ibv_mr *recv_mr;
	uint64_t ctrl_bytes;	/* both, as charged to cm->pinned */
	struct engine *e;
	struct wire_hello peer_hello;	/* passive: from the request */
	/* Both sides' connect private data, as sent (see verbs_link_hellos). */
	uint8_t hello_mine[WIRE_HELLO_LEN], hello_peer[WIRE_HELLO_LEN];
	int have_mine, have_peer;
	/* What each outstanding send WR was, by lane * sq_size + wr_id %
	 * sq_size: for errors. */
	struct engine_wr *posted;
	/* The first error completion's class (verbs_link_wc_error). */
	enum verbs_wc_error wc_error;

	int nmems;		/* ring memory still registered (pooled too) */
	TAILQ_HEAD(, verbs_mem) pool;	/* freed rings kept, newest first */
	uint64_t pool_bytes;
	struct verbs_mem_stats ms;
	int freed;		/* verbs_link_free was called */
	int dying;		/* freed, its cm_id kept until it can disconnect */
	int dying_ticks;	/* verbs_cm_tick calls left before it goes */
	TAILQ_ENTRY(verbs_link) dentry;
	struct ibv_context *ctx;	/* where its PD is; NULL: none yet */
	TAILQ_ENTRY(verbs_link) lentry;	/* in cm->links */
	char peer[64];
	char device[32];
	struct hca_info hca;	/* with have_hca: read once it is up */
	int have_hca;
	/* With conf.sl_set: the cm_id that resolves the route whose path,
	 * with the SL, the link's id takes (see verbs_link_conf). */
	struct rdma_cm_id *probe;
	/* Connecting, once its address is resolved: its device is iWARP,
	 * and what it honours of conf's tos and sl (hca_qos). */
	int iwarp;
	unsigned qos;
};

struct verbs_mem {
	struct verbs_cm *cm;	/* charged to it from mapping to unmapping */
	struct verbs_link *link;
	uint8_t *buf;
	size_t size;
	struct ibv_mr *mr;
	int remote;
	int detached;		/* left its link's registration (suspended) */
	int idle;		/* pooled: trims since it was freed */
	TAILQ_ENTRY(verbs_mem) pentry;
};

/**
 * say(err, errlen, fmt, ...):
 * Print ${fmt} into ${err} (${errlen} bytes) for the caller to read;
 * nothing when ${err} is NULL or ${errlen} 0.
 */
static inline void
say(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline void
say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- verbs.c */

/**
 * verbs_reg_failed(err, errlen, device, what, size):
 * Registering ${size} bytes of ${what} on ${device} failed: say why into
 * ${err} (from errno), with the likely cause.
 */
void verbs_reg_failed(char *err, size_t errlen, const char *device,
    const char *what, size_t size);

/**
 * verbs_nonblock(fd):
 * Make ${fd} non-blocking.  Returns 0, or -1.
 */
int verbs_nonblock(int fd);

/*
 * Whether ${id}'s device is an iWARP one: no immediate data (the link
 * runs without, engine_notify), and no RNR.
 */
int verbs_iwarp(const struct rdma_cm_id *id);

/**
 * verbs_rdma_missing(e, why, len):
 * Why the RDMA CM could not be opened (librdmacm failed with ${e}), and
 * what to do about it, into ${why}.
 */
enum verbs_rdma verbs_rdma_missing(int e, char *why, size_t len);

/**
 * verbs_devices_changed(cm):
 * True when /dev/infiniband changed since ${cm} last looked.
 */
int verbs_devices_changed(struct verbs_cm *cm);

/**
 * verbs_devices_sync(cm):
 * Hold the devices listed now instead of ${cm}'s old list.  Returns 1, or
 * 0 when a link still has something on a device that is gone.
 */
int verbs_devices_sync(struct verbs_cm *cm);

/* ---- verbs_mem.c */

/**
 * verbs_link_destroy(l):
 * Free ${l} itself and its protection domain: once it was freed and its
 * ring memory and cm_id are gone.
 */
void verbs_link_destroy(struct verbs_link *l);

/**
 * verbs_pool_drain(l, only_stale):
 * Free ${l}'s pooled rings; with ${only_stale}, count a trim and free only
 * those idle for VERBS_POOL_IDLE_TRIMS of them.
 */
void verbs_pool_drain(struct verbs_link *l, int only_stale);

/**
 * verbs_pinned_now(cm), verbs_max_now(cm):
 * The memory counted against ${cm}'s cap now, and the cap.
 */
uint64_t verbs_pinned_now(const struct verbs_cm *cm);
uint64_t verbs_max_now(const struct verbs_cm *cm);

/**
 * verbs_charge(l, size, own_only):
 * Charge ${size} bytes of ${l}'s to the cap, emptying pools (only ${l}'s
 * with ${own_only}) to make room.  Returns 0, or -1 when there is none.
 */
int verbs_charge(struct verbs_link *l, uint64_t size, int own_only);

/* ---- verbs_data.c */

/**
 * verbs_transport_fail(l, why):
 * ${l}'s transport failed for ${why}: its queue pairs stop, then its
 * engine fails.
 */
void verbs_transport_fail(struct verbs_link *l, const char *why);

/**
 * verbs_post_pend1(l):
 * Post the lane-1 receives that waited for lane 1's queue pair.
 * Returns 0, or -1 (the transport failed).
 */
int verbs_post_pend1(struct verbs_link *l);

/* ---- verbs_link.c */

/* IB CM reject reasons (verbs_reject_text, verbs_refused): nothing
 * listens at that service id (address and port); a consumer's reject. */
#define VERBS_REJ_NO_LISTENER	8
#define VERBS_REJ_CONSUMER	28

/**
 * verbs_reject_reason(l, cme):
 * The IB CM reason of REJECTED event ${cme} of connecting link ${l}'s
 * (either lane's), as verbs_reject_text and verbs_refused read it, on
 * any fabric: on iWARP, an MPA reject that carries a refusal note is a
 * consumer's; a TCP connection refused, no listener.
 */
int verbs_reject_reason(const struct verbs_link *l,
    const struct rdma_cm_event *cme);

/**
 * verbs_link_new(cm, conf, user):
 * A new link of ${cm} with ${conf} and ${user}, with no cm_id yet, or
 * NULL when out of memory.
 */
struct verbs_link *verbs_link_new(struct verbs_cm *cm,
    const struct verbs_link_conf *conf, void *user);

/**
 * verbs_link_setup(l, err, errlen):
 * Give ${l} its queues, buffers and engine on its cm_id's device, every
 * receive posted.  Returns 0, or -1 and why (verbs_link_free frees what
 * was made).
 */
int verbs_link_setup(struct verbs_link *l, char *err, size_t errlen);

/**
 * verbs_id_reject(id, why):
 * Reject the connect request on ${id} with a refusal note saying ${why}.
 */
void verbs_id_reject(struct rdma_cm_id *id, uint8_t why);

/**
 * verbs_conn_param(l, p):
 * ${l}'s connect or accept parameters, with its hello, into ${p}.
 * Returns 0, or -1 when no random nonce is available yet.
 */
int verbs_conn_param(struct verbs_link *l, struct rdma_conn_param *p);

/**
 * verbs_lane_param(l, hello, p):
 * ${l}'s lane-1 connect or accept parameters, with its lane-1 hello
 * encoded into ${hello} (its nonce: our lane-0 hello's), into ${p}.
 */
void verbs_lane_param(struct verbs_link *l, uint8_t hello[WIRE_HELLO_LEN],
    struct rdma_conn_param *p);

/**
 * verbs_qp_new(l, id, err, errlen):
 * An RC queue pair for ${l} on ${id}, in its protection domain, both
 * queues on its completion queue.  Returns 0, or -1 and why.
 */
int verbs_qp_new(struct verbs_link *l, struct rdma_cm_id *id, char *err,
    size_t errlen);

/**
 * verbs_vl_down(l, ev, why):
 * ${l} is down for ${why}: its engine fails (its queue pairs stop), a
 * DOWN event in ${ev}, whose why is the engine's (${why}, or a failure
 * of the engine's before it).
 */
void verbs_vl_down(struct verbs_link *l, struct verbs_ev *ev,
    const char *why);

/* ---- verbs_lane.c */

/**
 * verbs_src_of(id, src):
 * ${id}'s local address with port 0, into ${src}: where another cm_id
 * to the same peer starts from.
 */
void verbs_src_of(struct rdma_cm_id *id, struct sockaddr_storage *src);

/**
 * verbs_path_give(l, id, from, err, errlen):
 * ${id} takes the path ${from} resolved, with ${l}'s service level
 * (verbs_link_conf.sl); the RDMA CM then reports its route resolved.
 * Returns 0, or -1 and why.
 */
int verbs_path_give(struct verbs_link *l, struct rdma_cm_id *id,
    const struct rdma_cm_id *from, char *err, size_t errlen);

/**
 * verbs_lane_start(l, err, errlen):
 * Connecting link ${l}'s lane 0 is established and its engine runs two
 * lanes: resolve lane 1's address (the same peer, from the same local
 * address).  Returns 0, or -1 and why.
 */
int verbs_lane_start(struct verbs_link *l, char *err, size_t errlen);

/**
 * verbs_lane_event(l, cme, ev):
 * An RDMA CM event of ${l}'s lane-1 cm_id: its progress, or the link
 * DOWN in ${ev}.  Returns 1 when lane 1 just came up.
 */
int verbs_lane_event(struct verbs_link *l, struct rdma_cm_event *cme,
    struct verbs_ev *ev);

/**
 * verbs_lane_take(r, ev):
 * Lane-1 connect request ${r}: its cm_id goes to the link waiting for it
 * (the same peer address, the peer's lane-0 nonce) and is accepted
 * there; or it is rejected with a refusal note and destroyed, REJECTED
 * in ${ev} saying why, or the link DOWN in ${ev} when it cannot run the
 * lane it asked for.  The caller frees ${r}.
 */
void verbs_lane_take(struct verbs_request *r, struct verbs_ev *ev);


/**
 * verbs_dying_end(l):
 * Dying link ${l}'s cm_id goes now; the link too once its memory has.
 */
void verbs_dying_end(struct verbs_link *l);

#endif /* !VERBS_INT_H */
