/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * verbs: the rstream engine on real RDMA (libibverbs and librdmacm).
 *
 * The only code that includes <infiniband/verbs.h> and <rdma/rdma_cma.h>.
 * It owns, per link: one protection domain, one completion queue with its
 * completion channel, one RC queue pair per lane (two on a link of
 * protocol version 8 or later, see engine_lanes: the second, the latency
 * lane, is a second RDMA CM connection to the same peer; a link is UP
 * once both are established, and either one's end ends it), the
 * registered control buffers and the engine; it posts what the engine
 * asks for (receives first, then chains of send work requests with one
 * ibv_post_send per lane) and feeds completions back in batches.
 * Everything is non-blocking and driven by three kinds of file descriptor
 * the caller's event loop waits on: the RDMA CM event channels, the
 * links' (verbs_cm_fd) and the listeners' (verbs_cm_listen_fd), and each
 * link's completion channel (verbs_link_fd).
 *
 * Dead peers: links use an ACK timeout of 14 (4.096 us * 2^14, about
 * 67 ms) and 7 transport retries unless configured otherwise, so once a
 * packet is outstanding a peer that stopped answering is declared dead
 * within about 0.6 s (providers may stretch each wait up to 4x, so at most
 * about 2.2 s).  RNR retry is
 * 7 (retry for ever), a safety net only: the engine never sends without a
 * posted receive.  So that the net costs little if it is ever used, a
 * queue pair asks its peer to wait VERBS_MIN_RNR_TIMER before sending
 * again after a receiver-not-ready NAK, not the CM's default (0, which
 * means 655 ms: one underrun would stall the sender that long without a
 * word).  The daemon's keepalives make sure a packet is
 * outstanding on an otherwise idle link.
 *
 * Memory: send rings are registered for local access only; receive rings
 * for local and remote write; nothing is ever registered for remote read
 * or atomics.  Ring memory belongs to the link's protection domain and is
 * deregistered when freed; a link and its memory may be freed in either
 * order.  Rings hold tenants' bytes, and so do the control buffers on
 * a link of two lanes (DATA records): core dumps leave both out
 * (MADV_DONTDUMP).
 *
 * Failing half-way: setting a link up (its protection domain, completion
 * channel and queue, queue pair, control buffers charged and registered,
 * engine, every receive posted; done by verbs_request_take for an
 * incoming link and once the route is resolved for a connecting one)
 * stops at the first step that fails and leaves in the link what the
 * steps before it made.  verbs_link_free frees any part of a link, so
 * such a link goes like any other: a connecting one's DOWN event says
 * why, and verbs_request_take rejects and frees its own.  Every other
 * constructor here that fails gives back all it took before returning.
 */
#ifndef VERBS_H
#define VERBS_H

#include <stddef.h>
#include <stdint.h>

#include <sys/socket.h>

#include "engine.h"

/* See the comment above: the default ACK timeout exponent and transport
 * retries (verbs_link_conf may set others), and RNR retries. */
#define VERBS_ACK_TIMEOUT	14
#define VERBS_RETRY_COUNT	7
#define VERBS_RNR_RETRY		7
/* The RNR NAK timer a queue pair announces, set once it is established:
 * code 12 is 0.64 ms (IB's table; hca_rnr_us). */
#define VERBS_MIN_RNR_TIMER	12
/* Address and route resolution time-outs, in milliseconds. */
#define VERBS_RESOLVE_MS	2000
/* verbs_cm_tick calls a link freed while accepting waits to disconnect. */
#define VERBS_TEARDOWN_TICKS	5

struct verbs_cm;
struct verbs_listener;
struct verbs_link;
struct verbs_mem;
struct verbs_request;
struct hca_info;

struct verbs_link_conf {
	uint32_t sq_size;
	uint32_t rq_size;
	uint32_t inline_size;
	uint32_t max_streams;
	uint32_t signal_every;	/* 0: engine default */
	uint8_t ack_timeout;	/* 0: VERBS_ACK_TIMEOUT */
	uint8_t retry_count;	/* 0: VERBS_RETRY_COUNT */
	/* Registered ring memory kept for reuse when freed (bytes; 0: none). */
	uint64_t pool_bytes;
	/* Offer stream resume to the peer (protocol version 2). */
	uint8_t resume;
	/* The newest protocol version to say, connecting, or to answer in,
	 * accepting (0: the newest; an accepting side answers in the peer's
	 * if it is older). */
	uint8_t version_max;
	/* Connecting side: authenticate the link (copied; NULL: do not),
	 * and with what to seal it if the handshake says so (NULL: never). */
	const struct engine_auth *auth;
	const struct engine_seal *seal;
	/*
	 * Connecting side, with tos_set: the IP TOS byte the RDMA CM gives
	 * the link's route (RDMA_OPTION_ID_TOS, before it is resolved): on
	 * RoCE v2 the DSCP/ECN byte of every packet and the GRH traffic
	 * class; on IB the QoS class of the path query, which the subnet
	 * manager may map to a service level.  Unset: the RDMA CM's default.
	 * With sl_set: the service level of the link's path (the QPs'
	 * ah_attr.sl); on RoCE, where the NIC maps it to the frames' 802.1p
	 * priority, it replaces the one the RDMA CM derives from the TOS.
	 * librdmacm takes a path of one's own only instead of resolving
	 * one (RDMA_OPTION_IB_PATH), so a second cm_id resolves the route
	 * and its path, but for the SL, becomes the link's.  The accepting
	 * side takes both from the connect request: they are the same at
	 * both ends.  iWARP has no SL, and a link there connects without
	 * one; its TOS is its TCP connection's, which Soft-iWARP ignores
	 * (hca_qos): VERBS_EV_DEVICE says what the link's device honours.
	 */
	uint8_t tos_set, tos;
	uint8_t sl_set, sl;
};

enum verbs_ev_type {
	VERBS_EV_NONE = 0,	/* handled internally; nothing to do */
	VERBS_EV_INCOMING,	/* a peer connects: verbs_accept or _reject */
	VERBS_EV_REJECTED,	/* a connect request could not be taken */
	VERBS_EV_UP,		/* link established: streams may open */
	VERBS_EV_DOWN,		/* link failed or ended: free it */
	VERBS_EV_DEVICE		/* a connecting link's address resolved:
				   its device is known, nothing to do */
};

struct verbs_ev {
	int type;
	struct verbs_link *link;	/* INCOMING, UP, DOWN, DEVICE */
	char peer[64];			/* peer address, for logs */
	struct sockaddr_storage peer_sa;	/* INCOMING: the same */
	int peer_auth;			/* INCOMING: the peer authenticates */
	int peer_ident;			/* INCOMING: the peer has an identity */
	char why[200];			/* REJECTED, DOWN: what happened */
	int peer_version;		/* DOWN: the peer refused our version
					   and speaks at most this one (see
					   verbs_link_conf.version_max); or 0 */
	int peer_busy;			/* DOWN: the peer refused it for now:
					   too many of our links still
					   connecting (WIRE_NOTE_BUSY) */
	char device[32];		/* DEVICE: the link's device */
	unsigned qos;			/* DEVICE: what it honours of the
					   link's tos and sl (HCA_QOS_*,
					   hca_qos) */
};

/*
 * What verbs_cm_open found: the RDMA CM open, or what is missing.  A
 * host may have no RDMA yet (rdma_ucm loaded later, a Soft-RoCE device
 * added after boot), and each of these passes when what is missing
 * comes, without a restart.
 */
enum verbs_rdma {
	VERBS_RDMA_READY = 0,	/* the RDMA CM is open */
	VERBS_RDMA_NO_UCM,	/* rdma_ucm is not loaded */
	VERBS_RDMA_NO_NODE,	/* it is, but /dev/infiniband/rdma_cm is not
				   here (a sandbox made before it existed) */
	VERBS_RDMA_NO_DEVICE,	/* no RDMA device libibverbs can use */
	VERBS_RDMA_DENIED,	/* /dev/infiniband/rdma_cm may not be opened */
	VERBS_RDMA_FAILED,	/* any other error */
	VERBS_RDMA_N
};

/**
 * verbs_rdma_name(r):
 * "ready", "no-rdma-ucm", "no-rdma-cm-node", "no-device", "denied",
 * "failed"; "?" for a value out of range.
 */
const char *verbs_rdma_name(enum verbs_rdma r);

/**
 * verbs_host_qos(src, names, len, qos):
 * For a configuration check, which opens no CM channel of its own: what
 * the RDMA device that local address ${src} is on honours of a link's
 * tos and sl (HCA_QOS_*, hca_qos) into ${*qos}, and its name into
 * ${names}; with ${src} NULL, what any of the host's devices honours
 * (the union), and their names, comma-separated.  Returns how many
 * devices that is, or -1 when there is none (no device has ${src}) or
 * the RDMA CM cannot say.
 */
int verbs_host_qos(const struct sockaddr *src, char *names, size_t len,
    unsigned *qos);

/**
 * verbs_cm_new(err, errlen):
 * The state every listener and link shares, without its RDMA CM event
 * channels: verbs_cm_open opens them.  Nothing of RDMA is touched (no
 * device, no file), so a daemon that needs no RDMA need not have any.
 * NULL only when out of memory.
 */
struct verbs_cm *verbs_cm_new(char *err, size_t errlen);

/**
 * verbs_cm_open(cm, why, whylen):
 * Open ${cm}'s RDMA CM event channels (nothing to do once they are).
 * Returns VERBS_RDMA_READY, or what is missing with, in ${why}, a
 * sentence that says so and what to do about it ("rdma_ucm is not loaded
 * (modprobe rdma_ucm)"); then nothing is left open, and it may be called
 * again at any time: librdmacm and libibverbs find modules and devices
 * that appeared since.  Until it succeeds, verbs_listen and
 * verbs_connect fail (errno ENODEV) saying that sentence, and
 * verbs_cm_fd and verbs_cm_listen_fd are -1.
 */
enum verbs_rdma verbs_cm_open(struct verbs_cm *cm, char *why,
    size_t whylen);

/**
 * verbs_cm_is_open(cm):
 * Whether verbs_cm_open succeeded.
 */
int verbs_cm_is_open(const struct verbs_cm *cm);

/**
 * verbs_cm_moved(cm):
 * Whether /dev/infiniband changed since the last call (the first call
 * says yes): rdma_cm appeared (rdma_ucm was loaded), or a device's
 * uverbs node came or went.  One stat, no descriptor: for a caller that
 * waits for RDMA, to try again at once rather than at the end of its
 * back-off.  A change it cannot see (an address added to a device's
 * interface) is for that back-off.
 */
int verbs_cm_moved(struct verbs_cm *cm);

/**
 * verbs_cm_free(cm):
 * Destroy the channel (after every listener and link).  NULL is a no-op.
 */
void verbs_cm_free(struct verbs_cm *cm);

/**
 * verbs_cm_tick(cm):
 * Call about once a second: a link freed while it was still being
 * accepted keeps its RDMA CM id until it is established, so that it can
 * be disconnected and the peer learns the link ended, or until
 * VERBS_TEARDOWN_TICKS calls have passed.  And a device that is being
 * removed is let go of once no link has anything left on it (the kernel
 * waits for that to finish removing it).
 */
void verbs_cm_tick(struct verbs_cm *cm);

/**
 * verbs_cm_tick_due(cm):
 * Whether verbs_cm_tick has anything to do: links waiting to disconnect,
 * or devices to list again (a stat of /dev/infiniband tells).  It touches
 * only the channel's bookkeeping, not the links, so it may run while they
 * run on other threads.
 */
int verbs_cm_tick_due(struct verbs_cm *cm);

/**
 * verbs_cm_set_max_pinned(cm, bytes):
 * Hold no more than ${bytes} of memory for the links of ${cm} (0: no
 * limit): streams' rings, registered or detached (verbs_mem_detach), the
 * links' pools, and each link's control buffers (sq_size + rq_size
 * messages for each of the two lanes it may run).  Each is charged
 * before it is mapped or registered, in one atomic step with the check,
 * so links on several threads cannot pass the limit together; and given
 * back when it is freed.  A link whose control buffers do not fit fails
 * to set up (ENOBUFS; an incoming one is rejected).
 */
void verbs_cm_set_max_pinned(struct verbs_cm *cm, uint64_t bytes);

/**
 * verbs_cm_pinned(cm):
 * The bytes counted against the limit now, over all links of ${cm}.
 */
uint64_t verbs_cm_pinned(const struct verbs_cm *cm);

/* What verbs_cm_pinned counts, and two parts of it. */
struct verbs_cm_mem {
	uint64_t total;		/* all of it */
	uint64_t control;	/* the links' control buffers */
	uint64_t detached;	/* suspended streams' rings (not registered) */
};

/**
 * verbs_cm_mem(cm, cmm):
 * ${cm}'s memory figures into ${*cmm}.
 */
void verbs_cm_mem(const struct verbs_cm *cm, struct verbs_cm_mem *cmm);

/**
 * verbs_cm_fd(cm):
 * The channel's file descriptor (non-blocking): readable when
 * verbs_cm_handle has an event to process.
 */
int verbs_cm_fd(const struct verbs_cm *cm);

/**
 * verbs_cm_handle(cm, ev):
 * Process one RDMA CM event, if any, and describe its outcome in ${ev}.
 * Returns 1 if an event was processed (${ev}->type may still be NONE),
 * 0 if none was pending, -1 on a channel error.
 */
int verbs_cm_handle(struct verbs_cm *cm, struct verbs_ev *ev);

/**
 * verbs_cm_listen_fd(cm):
 * The listeners' channel's file descriptor (non-blocking): readable when
 * verbs_cm_handle_listen has an event to process.
 */
int verbs_cm_listen_fd(const struct verbs_cm *cm);

/**
 * verbs_cm_handle_listen(cm):
 * Process one event of the listeners' channel: a connect request is
 * asked about at its listener's gate (see verbs_gate_fn) and rejected at
 * once, or kept for verbs_cm_request; a request kept that its peer gave
 * up on goes.  Nothing else is touched: no link, no queue, no memory of
 * a link's, so this may run while links run on other threads.  Returns
 * 1 if an event was processed, 0 if none was pending, -1 on a channel
 * error.
 */
int verbs_cm_handle_listen(struct verbs_cm *cm);

/**
 * verbs_cm_request(cm):
 * The oldest connect request the gate let through, or NULL.  The caller
 * ends it with verbs_request_take or verbs_request_refuse.
 */
struct verbs_request *verbs_cm_request(const struct verbs_cm *cm);

/**
 * verbs_request_peer(r, text, auth):
 * Who asks: the peer's socket address (NULL if unknown), its text in
 * ${*text}, and in ${*auth} whether its hello says it authenticates (by
 * a key or an identity).
 */
const struct sockaddr *verbs_request_peer(const struct verbs_request *r,
    const char **text, int *auth);

/**
 * verbs_request_lane(r):
 * Whether ${r} is a link's lane-1 connection (protocol version 8), not a
 * link of its own: verbs_request_take gives it to the link accepted from
 * that peer that waits for it, and the admission limits do not count it.
 */
int verbs_request_lane(const struct verbs_request *r);

/**
 * verbs_request_take(r, ev):
 * Make connect request ${r} a link (queues, buffers, engine, every
 * receive posted), its events from now on on the links' channel: ${ev}
 * is then an INCOMING event (verbs_accept or verbs_reject follows), or a
 * REJECTED one saying why it could not be made.  A lane-1 request
 * (verbs_request_lane) joins its link instead: ${ev} is then NONE, or
 * REJECTED when no link waits for it (it is refused with a note), or
 * DOWN for the link when it cannot run the lane.  Frees ${r}.
 */
void verbs_request_take(struct verbs_request *r, struct verbs_ev *ev);

/**
 * verbs_request_refuse(r, why):
 * Reject connect request ${r} with a refusal note saying ${why} (enum
 * wire_note_why), and free it.
 */
void verbs_request_refuse(struct verbs_request *r, uint8_t why);

/**
 * verbs_listen(cm, host, port, conf, user, err, errlen):
 * Listen for links on ${host}:${port}; incoming links get queues and an
 * engine configured by ${conf}.  ${user} is not read (nothing asked for it
 * back; it goes with its callers' next change).  NULL with the reason in
 * ${err} and errno: ENODEV when no RDMA device has that address (yet),
 * or the RDMA CM is not open; EADDRNOTAVAIL when no interface of this
 * host has it.
 */
struct verbs_listener *verbs_listen(struct verbs_cm *cm, const char *host,
    const char *port, const struct verbs_link_conf *conf, void *user,
    char *err, size_t errlen);

/*
 * A listener's gate: asked about every connect request before any queue,
 * buffer or engine is made for it, with the peer's address (as a socket
 * address and as text) and its hello, or NULL and why not when the hello
 * is invalid (such a request is rejected whatever the gate says).  It
 * runs in verbs_cm_handle_listen, alongside the links' threads.  Returns
 * 0 to let the request through (verbs_cm_request has it), or -1 to
 * reject it at once with a refusal note that says ${*why} (enum
 * wire_note_why; WIRE_NOTE_REFUSED unless the gate sets it); the gate
 * reports and counts the rejection itself.
 */
typedef int verbs_gate_fn(void *arg, const struct sockaddr *peer,
    const char *peer_text, const struct wire_hello *hello,
    const char *invalid, uint8_t *why);

/**
 * verbs_listener_set_gate(l, gate, arg):
 * Ask ${gate} (with ${arg}) about each connect request ${l} receives.
 */
void verbs_listener_set_gate(struct verbs_listener *l, verbs_gate_fn *gate,
    void *arg);

/**
 * verbs_listener_free(l):
 * Stop listening.  NULL is a no-op.
 */
void verbs_listener_free(struct verbs_listener *l);

/**
 * verbs_listener_set_conf(l, conf):
 * Links accepted from now on get ${conf} (a reload changed the sizes).
 */
void verbs_listener_set_conf(struct verbs_listener *l,
    const struct verbs_link_conf *conf);

/**
 * verbs_connect(cm, dst, src, conf, user, err, errlen):
 * Start connecting a link to the peer at ${dst} (an IPv4 or IPv6 socket
 * address with its port), from local address ${src} (NULL: chosen by
 * routing).  No name is looked up here.  Progress arrives as UP or DOWN
 * events for the returned link.
 */
struct verbs_link *verbs_connect(struct verbs_cm *cm,
    const struct sockaddr *dst, const struct sockaddr *src,
    const struct verbs_link_conf *conf, void *user, char *err, size_t errlen);

/**
 * verbs_accept(link) / verbs_reject(link):
 * Answer an INCOMING link.  After verbs_reject, free the link.  To
 * authenticate it, call engine_set_auth on its engine before accepting.
 */
int verbs_accept(struct verbs_link *link);
void verbs_reject(struct verbs_link *link);

/**
 * verbs_link_free(link):
 * Tear the link down (if still connected) and free it; the peer is told
 * (see verbs_cm_tick for a link freed while being accepted).  Ring memory
 * of the link stays valid until verbs_mem_free.  NULL is a no-op.
 */
void verbs_link_free(struct verbs_link *link);

/**
 * verbs_link_stop(link):
 * Move the queue pairs to the error state at once: no work request runs
 * after this, so ring memory may be released safely.  Returns 0, and
 * tells the link's engine (engine_stopped), when every queue pair took
 * it; -1 when one did not (ibv_modify_qp failed): then the engine's kept
 * streams with a sealed WRITE outstanding are reset at its failure rather
 * than given plaintext a WRITE could still read.
 */
int verbs_link_stop(struct verbs_link *link);

/**
 * verbs_link_fd(link):
 * The completion channel's file descriptor (non-blocking), or -1 before
 * the link has queues.
 */
int verbs_link_fd(const struct verbs_link *link);

/**
 * verbs_link_poll(link):
 * The completion channel's descriptor is readable: consume its event and
 * poll every completion into the engine, as verbs_link_drain does.  The
 * CQ is left unarmed: no event comes for later completions until
 * verbs_link_arm, so the caller drains in each later turn and arms only
 * before it sleeps (then drains once more: what landed before the arm
 * raised no event).  Then, once the engine's events are handled,
 * verbs_link_flush posts what they and the completions queued.
 */
int verbs_link_poll(struct verbs_link *link);

/**
 * verbs_link_drain(link):
 * Poll every completion into the engine, without the channel's event.
 * Returns how many, or -1 if the link failed (engine_error says why);
 * then the queue pair is already stopped (verbs_link_stop), so the
 * engine's RELEASED events may free ring memory.  The completion that
 * authenticates the link (engine_authenticated) is the last of its
 * drain: what came after it waits in the CQ for the next drain, so the
 * caller sees the link authenticated before anything authentication
 * lets in (a RESUME, whose callbacks reach other links) reaches the
 * engine, and may run the handshake where it may not run those.
 */
int verbs_link_drain(struct verbs_link *link);

/**
 * verbs_link_arm(link):
 * Ask for an event on the completion channel at the next completion (a
 * new link's CQ starts armed): the next receive's always, and the next
 * of the link's own work requests' (or an error's) only while its engine
 * waits on them (engine_sends_quiet): a small write's completion then
 * wakes nobody, and is taken with whatever does.  Returns 0, or -1 if
 * the link failed.
 */
int verbs_link_arm(struct verbs_link *link);

/* How often a link's completion channel was armed, as its worker went
 * to sleep (verbs_link_arm). */
struct verbs_arm_stats {
	uint64_t arms;
	uint64_t quiet;		/* of which for receives alone */
};

/**
 * verbs_link_arm_stats(link, as):
 * ${link}'s arm counts into ${*as}.
 */
void verbs_link_arm_stats(const struct verbs_link *link,
    struct verbs_arm_stats *as);

/**
 * verbs_link_wants_poll(link):
 * True when work was posted since the last arm that its engine will wait
 * on, and no event will announce its completion: the caller polls the
 * link until it would sleep, and arms it then (loop_fd_kick).
 */
int verbs_link_wants_poll(const struct verbs_link *link);

/**
 * verbs_link_flush(link):
 * Post the receives and work requests the engine has ready.  Call after
 * any application call into the engine.  Returns 0, or -1 as above, the
 * queue pair stopped.
 */
int verbs_link_flush(struct verbs_link *link);

/**
 * verbs_link_engine(link):
 * The link's engine (NULL until the link has queues).
 */
struct engine *verbs_link_engine(const struct verbs_link *link);

/**
 * verbs_link_user(link) / verbs_link_set_user(link, user):
 * The caller's pointer for this link.
 */
void *verbs_link_user(const struct verbs_link *link);
void verbs_link_set_user(struct verbs_link *link, void *user);

/**
 * verbs_link_hellos(link, out):
 * Store the connect private data both sides sent, the connecting side's
 * first (2 * WIRE_HELLO_LEN bytes), into ${out}: what authentication
 * binds the link to.  Returns 0, or -1 before both are known.
 */
int verbs_link_hellos(const struct verbs_link *link,
    uint8_t out[2 * WIRE_HELLO_LEN]);

/**
 * verbs_link_peer(link):
 * The peer's address as text, for logs.
 */
const char *verbs_link_peer(const struct verbs_link *link);

/**
 * verbs_link_device(link):
 * The RDMA device the link runs on ("rxe0"), or "?".
 */
const char *verbs_link_device(const struct verbs_link *link);

/**
 * verbs_link_iwarp(link):
 * Whether the link's device, once it has one, is an iWARP one: no
 * immediate data, so no link below protocol version 11 (engine_notify).
 */
int verbs_link_iwarp(const struct verbs_link *link);

/**
 * verbs_link_hca(link):
 * The device, port, GID, transport, path MTU and QP numbers the link
 * uses, read when it came up; NULL before.
 */
const struct hca_info *verbs_link_hca(const struct verbs_link *link);

/*
 * The error completion that ended a link, by its status: the first one
 * (those that follow are flushes, its consequence).  Verbs counts
 * retries and RNR NAKs per port, not per queue pair, so this is what a
 * link can say of its own: why its transport gave up.
 */
enum verbs_wc_error {
	VERBS_WC_NONE = 0,	/* it did not end on an error completion */
	VERBS_WC_RETRY,		/* transport retries exceeded: the peer
				   stopped acknowledging (a dark path, a
				   dead host) */
	VERBS_WC_RNR_RETRY,	/* RNR retries exceeded: the peer had no
				   receive posted */
	VERBS_WC_REMOTE,	/* the peer's adapter refused a work request
				   (access, invalid request, operation) */
	VERBS_WC_LOCAL,		/* this side's: a local error, a bad
				   response, a fatal or unknown status */
	VERBS_WC_N
};

/**
 * verbs_wc_error_name(c):
 * "none", "retry_exceeded", "rnr_retry_exceeded", "remote", "local";
 * "?" for a value out of range.
 */
const char *verbs_wc_error_name(enum verbs_wc_error c);

/**
 * verbs_link_wc_error(link):
 * The error completion that ended ${link}, by its status; VERBS_WC_NONE
 * while none did (it runs, or it ended otherwise).
 */
enum verbs_wc_error verbs_link_wc_error(const struct verbs_link *link);

/* verbs_mem_new flags. */
#define VERBS_MEM_REMOTE	0x01	/* remote write: a receive ring */
#define VERBS_MEM_OWNPOOL	0x04	/* drop no other link's pool */

/**
 * verbs_mem_new(link, size, flags, err, errlen):
 * Ring memory of ${size} bytes in ${link}'s protection domain: local
 * access only, or, with VERBS_MEM_REMOTE, local and remote write (a
 * receive ring).  Taken from the link's pool of freed rings of that size
 * and kind when it has one (no mmap, no registration: its keys are the old
 * ones), else allocated and registered.  A receive ring from the pool
 * is zeroed first (no byte of its last stream stays in it); a send ring
 * keeps its old bytes, which no stream ever reads or sends.  New memory
 * is charged to the channel's limit (verbs_cm_set_max_pinned) first;
 * without room the link's pool is dropped, and if that is not enough the
 * call fails with errno ENOBUFS (a ring that replaces a bigger one too:
 * both are held until the old one goes).  Other links' pools are dropped
 * too unless VERBS_MEM_OWNPOOL (they may be in use by another thread).
 * Links are not thread-safe, but the charge is: threads may allocate at
 * once on different links (how the daemon's workers do: Threads in
 * daemon/loop.h).
 */
struct verbs_mem *verbs_mem_new(struct verbs_link *link, uint32_t size,
    int flags, char *err, size_t errlen);

/**
 * verbs_mem_free(m):
 * Give ring memory ${m} up: into its link's pool while the link lives and
 * the pool has room (conf.pool_bytes), else deregistered and unmapped
 * (memory that belongs to no link, see verbs_mem_detach, is unmapped).
 * The caller guarantees that no work request can still touch it: the
 * stream was released (the peer's last record about it arrived after its
 * last WRITE, an RC QP delivers in order), or the QP was stopped.
 * NULL is a no-op.
 */
void verbs_mem_free(struct verbs_mem *m);

/**
 * verbs_mem_detach(m):
 * Ring memory ${m} leaves its link: its registration goes (no key to it
 * works any more) and its bytes stay, still charged to the channel's
 * limit (see verbs_cm_mem).  A suspended stream's rings do this,
 * so that the failed link's protection domain, and with it the device's
 * context, can go (a device being removed waits for that).  Only after
 * the link's QP was stopped.  NULL is a no-op.
 */
void verbs_mem_detach(struct verbs_mem *m);

/**
 * verbs_mem_move(m, link, err, errlen):
 * Register ring memory ${m} in ${link}'s protection domain (a resumed
 * stream's rings, same address and contents; a registration it still
 * had, and with it the old keys, is gone first).  Returns 0, or -1 with
 * the reason in ${err}; then ${m} belongs to no link, its bytes intact,
 * and the stream must end (verbs_mem_free frees it).
 */
int verbs_mem_move(struct verbs_mem *m, struct verbs_link *link, char *err,
    size_t errlen);

/**
 * verbs_link_take_engine(link):
 * Take ${link}'s engine: verbs_link_free no longer frees it (a failed
 * link's suspended streams wait in it for a resume).  Only after
 * verbs_link_stop.
 */
struct engine *verbs_link_take_engine(struct verbs_link *link);

/**
 * verbs_link_pool_trim(link):
 * Free the pooled rings that no stream took over the last
 * VERBS_POOL_IDLE_TRIMS calls: a caller calling it every 2 s frees a ring
 * after 8 to 10 s unused, so an idle link's pool empties and a burst of
 * short streams keeps reusing its rings.
 */
#define VERBS_POOL_IDLE_TRIMS	5
void verbs_link_pool_trim(struct verbs_link *link);

/* A link's ring memory. */
struct verbs_mem_stats {
	uint64_t pinned;	/* bytes registered: streams' rings and pool */
	uint64_t pooled;	/* of which in the pool */
	uint64_t control;	/* its control buffers (not in pinned) */
	uint64_t registered;	/* rings registered, ever */
	uint64_t reused;	/* rings taken from the pool, ever */
};

/**
 * verbs_link_mem_stats(link, ms):
 * ${link}'s ring memory figures into ${*ms}.
 */
void verbs_link_mem_stats(const struct verbs_link *link,
    struct verbs_mem_stats *ms);

/**
 * verbs_mem_buf(m):
 * The memory's address in this process.
 */
uint8_t *verbs_mem_buf(const struct verbs_mem *m);

/**
 * verbs_mem_size(m):
 * The size of ring memory ${m} in bytes; 0 for NULL.
 */
uint32_t verbs_mem_size(const struct verbs_mem *m);

/**
 * verbs_mem_ring(m, ring):
 * Describe the memory as an engine ring: address, size, the lkey (local
 * memory) or rkey (remote-writable memory), and ${m} itself as its mem.
 */
void verbs_mem_ring(const struct verbs_mem *m, struct engine_ring *ring);

#endif /* !VERBS_H */
