/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * engine: the rstream ring/credit protocol for one link, sans-I/O.
 *
 * One engine is one RDMA RC connection ("link") to a peer, carrying many
 * streams.  It never calls verbs, sockets or clocks: the embedder (the
 * verbs layer and the daemon, or the simulator) feeds it what happened and
 * takes back what to do:
 *
 *   in:   engine_clock()          the embedder's clock, once per turn
 *         engine_connected()      the link is established (peer's hello)
 *         engine_on_recv()        a SEND arrived in receive slot N
 *         engine_on_recv_imm()    an RDMA WRITE WITH IMMEDIATE arrived
 *         engine_on_send_done()   a signalled work request completed
 *         engine_fail()           the transport failed
 *         engine_open/accept/refuse/tx_commit/rx_consume/shutdown/close/
 *         reset/keepalive/goaway  what the application did
 *
 *   out:  engine_take_recvs()     receive slots to post
 *         engine_take_wrs()       work requests to post, in order
 *         engine_next_event()     stream events (opened, readable, ...)
 *
 * In what order the embedder posts, and what memory it provides: see
 * engine_io.h.  A stream's lifetime, and how streams share the send
 * queue: see engine_stream.h.
 *
 * Authentication: with engine_set_auth, the link carries no stream until
 * the peer has proved it holds the key (see rstreamd-protocol(7)).  The
 * engine exchanges the AUTH records and refuses everything else before
 * then; the embedder computes and checks the proofs (the engine does no
 * cryptography).  The initiator (the side that connected) proves first;
 * the responder answers only after checking that proof.  Until
 * engine_authenticated() is true, engine_open fails with ENGINE_EDOWN and
 * a peer's OPEN or data ends the link, so no ring address or key leaves
 * this side before the peer is known.
 *
 * Sealing (engine_set_seal): once engine_seal_tx, every SEND and data
 * WRITE this side posts is sealed with the embedder's AEAD (the engine
 * holds no key).  A SEND carries at most WIRE_MSG_SIZE - WIRE_TAG_LEN bytes
 * of records, then their tag.  A data WRITE's payload is sealed in place
 * in the send ring and goes as a plain RDMA WRITE (ENGINE_WR_WRITE), and
 * its tag follows at once as a SEND WITH IMMEDIATE (ENGINE_WR_SEND_IMM)
 * carrying the immediate a WRITE WITH IMMEDIATE would have: the receiver
 * learns of the data from the tag's arrival, which RC orders after the
 * data.  (A tag landing in the ring after its payload would be overwritten
 * by the stream's next WRITE before the receiver saw it.)  Once
 * engine_seal_rx, every SEND and WRITE that arrives is opened before
 * anything of it counts, and never in memory the fabric can write: a
 * WRITE's bytes are copied out of the receive ring (whose address and
 * rkey every WRITE's clear header shows) into the ring's private copy,
 * which the engine allocates, opened there and read from there (see
 * engine_rx_base).  One that does not verify ends the link
 * (ENGINE_ERR_FORGED), which suspends kept streams as a transport failure
 * does: the peer did nothing wrong, someone on the fabric did.  A kept
 * stream's send ring holds plaintext again once each of its WRITEs
 * finished (completed, or the link failed), since a resume sends the
 * bytes again under another link's keys, but only once no WRITE can read
 * the ring any more: the embedder stops the queue pair and says so
 * (engine_stopped), before engine_fail or, when the engine failed on its
 * own, after it.  Until then a kept stream with a WRITE outstanding at
 * the failure is suspended with those bytes still sealed, and no resume
 * takes it (engine_abandon ends it).
 *
 * Resume (protocol version 2, both sides configured with conf.resume):
 * a stream marked with engine_keep frees send-ring bytes only when the
 * peer reports them consumed.  When the transport fails (or the embedder
 * ends the link with engine_fail, or a sealed message does not open),
 * such a stream is SUSPENDED instead of reset: it stays in the failed engine, the application may still fill
 * its send ring and drain its receive ring, and its id and rings stay
 * reserved.  On a new link, the side that connects calls engine_resume
 * with the failed engine; the other side's engine asks its
 * engine_resume.find callback for the failed engine the peer names, and
 * both move the suspended streams over under their old ids (adopt
 * callback: the embedder re-registers the rings in the new link's
 * protection domain).  The two sides then exchange each stream's cursors,
 * each resends what did not arrive, and the stream is RESUMED; a stream
 * the other side no longer has is RESET.  A failed engine's streams that
 * were not moved end with engine_abandon; then it may be freed.  From
 * version 5 the other side proves the right to the streams too (find
 * gives its proof, the proved callback checks it), and the side that
 * connects names its streams and grants their rings only once that proof
 * checked out.
 *
 * Errors: a peer that breaks the protocol, or a transport failure, ends
 * the link: the engine stops emitting work requests, every stream gets
 * RESET (unless already closed by the application) and RELEASED, and
 * engine_error() names what happened.  The embedder should destroy the
 * queue pair before freeing ring memory on those RELEASED events.
 */
#ifndef ENGINE_H
#define ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "window.h"
#include "wire.h"

/*
 * This header is the link's: an engine's life, its handshake, sealing,
 * resume and memory, its events and figures.  The streams' calls, which
 * the daemon's bridge makes, are in engine_stream.h; the work requests
 * and completions the verbs layer passes are in engine_io.h.
 */

/* Queue depths the protocol works with (rq up to WIRE_CREDITS_MAX). */
#define ENGINE_SQ_MIN		4
#define ENGINE_SQ_MAX		65536
#define ENGINE_RQ_MIN		WIRE_CREDITS_MIN

struct engine;

struct engine_conf {
	uint32_t sq_size;	/* send WRs outstanding at most */
	uint32_t rq_size;	/* receives posted (initial message credits) */
	uint32_t inline_size;	/* post WRs up to this many bytes inline */
	uint32_t signal_every;	/* signal at least every Nth WR (0: sq/4) */
	uint32_t max_streams;	/* stream slots, 1 to WIRE_STREAMS_MAX */
	uint8_t *ctrl_send;	/* sq_size * WIRE_MSG_SIZE bytes */
	uint64_t ctrl_send_addr;	/* its address as the HCA sees it */
	uint32_t ctrl_send_lkey;
	uint8_t resume;		/* offer resume (hello version 2) */
	uint32_t chunk;		/* largest WRITE (0: WINDOW_CHUNK) */
	uint64_t window_max;	/* most data bytes outstanding (0: WINDOW_MAX) */
	uint64_t window_min;	/* the least (0: WINDOW_MIN_CHUNKS chunks) */
	uint8_t lanes;		/* 2: can run a latency lane (version 8);
				   see engine_lanes and engine_io.h */
	uint8_t notify;		/* the device has no immediate data (iWARP):
				   say so, and run the link without
				   (version 11; engine_notify) */
	/* With lanes: ring memory at HCA address ${addr}, for eager bytes
	 * (copied out of send rings into SENDs, and into receive rings). */
	uint8_t *(*ring_ptr)(void *arg, uint64_t addr);
	void *ring_arg;
};

/* A stream with at most this many bytes to send may send them as DATA
 * records on lane 1 (rstreamd-protocol(7), "Lanes"). */
#define ENGINE_EAGER_MAX	448

/* The daemon's default inline_size: the lane 1 SEND that carries a
 * 64-byte write (its DATA record, a CREDIT, a tag and iWARP's notice)
 * fits, so a small request's bytes travel in the work request. */
#define ENGINE_INLINE_DEFAULT	128

/* A ring: send rings use the lkey, receive rings grant the rkey. */
struct engine_ring {
	uint64_t addr;
	uint32_t size;
	uint32_t key;
	void *mem;		/* the embedder's handle (engine_mem) */
};

/*
 * Where a link's engine gets ring memory to grow and shrink streams' rings
 * (engine_set_mem, protocol version 4).
 */
struct engine_mem {
	/*
	 * Ring memory of ${size} bytes for the stream whose user pointer is
	 * ${user}: a receive ring (remote write) if ${rx}, else a send ring,
	 * to replace one of ${replaces} bytes (smaller for a shrink, which
	 * frees more than it takes).  Fill ${ring} (exactly ${size} bytes;
	 * its mem is the embedder's own handle) and return 0, or return -1 to
	 * refuse (the stream keeps the ring it has).
	 */
	int (*alloc)(void *arg, void *user, int rx, uint32_t size,
	    uint32_t replaces, struct engine_ring *ring);
	/*
	 * The engine is done with ${ring}, which alloc (or engine_open or
	 * engine_accept) gave: nothing reads or writes it any more.  Rings a
	 * stream still holds when it is RELEASED are not passed here: the
	 * embedder frees every ring it still holds for it then.
	 */
	void (*free)(void *arg, void *user, const struct engine_ring *ring);
	void *arg;
};

/*
 * How this side proves itself and checks the peer (engine_set_auth): by
 * the proofs of a pre-shared key (prove and verify), or, from version 6,
 * by a handshake of node identities (step; see rstreamd-protocol(7),
 * "Identities").  A side may have both: with step set, the key goes
 * into the handshake (the embedder's business) and no proof is sent.
 */
struct engine_auth {
	int initiator;		/* this side connected: it proves first */
	/* Fill ${proof} with this side's proof for this link. */
	void (*prove)(void *arg, uint8_t proof[WIRE_AUTH_LEN]);
	/* 0 if ${proof} is the peer's right proof for this link, else -1. */
	int (*verify)(void *arg, const uint8_t proof[WIRE_AUTH_LEN]);
	void *arg;
	/*
	 * Identity handshake: take the peer's message ${in} (${inlen}
	 * bytes; NULL for the initiator's first call, made once connected)
	 * and write this side's next message, if any, to ${out} (at most
	 * WIRE_HS_MAX bytes), its length to ${outlen} (0: none).  Return
	 * ENGINE_HS_MORE, ENGINE_HS_DONE once the peer is authenticated
	 * (this side may still have its last message in ${out}), or -1 with
	 * ${*why} saying what failed: the link fails (ENGINE_ERR_AUTH).
	 * From version 7 (engine_version) the responder's DONE carries its
	 * confirmation, and the initiator answers message 2 with
	 * ENGINE_HS_KEYS and message 3 in ${out} (it has the keys: it seals
	 * from the SEND after it), then the confirmation with DONE and no
	 * message; a step out of this order fails the link
	 * (ENGINE_ERR_LOCAL).  NULL: this side has no identity.
	 */
	int (*step)(void *arg, const uint8_t *in, size_t inlen, uint8_t *out,
	    size_t *outlen, const char **why);
	uint8_t key;		/* with step: this side also holds a key */
	uint8_t seal;		/* with step: ask for sealed records */
	uint8_t aesgcm;		/* with step: can seal with AES-GCM */
};
#define ENGINE_HS_MORE	0
#define ENGINE_HS_DONE	1
#define ENGINE_HS_KEYS	2

/*
 * The embedder's AEAD for a sealed link (engine_set_seal): one key and
 * one message counter per direction and lane (engine_lanes), all kept by
 * the embedder.  Every call is in place.  A SEND's associated data is
 * empty; a WRITE's is its immediate as 4 big-endian bytes.
 */
struct engine_seal {
	/*
	 * Seal ${len} bytes at ${buf} for lane ${lane}, tag to ${tag};
	 * return the message number used (restore needs it).  Called in
	 * the order each lane's WRs are handed out.
	 */
	uint64_t (*seal)(void *arg, unsigned lane, uint8_t *buf, uint32_t len,
	    const uint8_t *ad, size_t adlen, uint8_t tag[WIRE_TAG_LEN]);
	/* Open what came on lane ${lane}: 0, or -1 if forged (the link
	 * fails).  In each lane's receive order. */
	int (*open)(void *arg, unsigned lane, uint8_t *buf, uint32_t len,
	    const uint8_t *ad, size_t adlen, const uint8_t tag[WIRE_TAG_LEN]);
	/* Undo this side's own sealed WRITE ${n} (lane 0) in place: 0, or
	 * -1. */
	int (*restore)(void *arg, uint8_t *buf, uint32_t len,
	    const uint8_t *ad, size_t adlen, uint64_t n,
	    const uint8_t tag[WIRE_TAG_LEN]);
	/* The ring memory at HCA address ${addr}. */
	uint8_t *(*ptr)(void *arg, uint64_t addr);
	void *arg;
};

/* Stream events (flags; several may arrive at once). */
#define ENGINE_EV_OPENED	0x001	/* peer accepted our open */
#define ENGINE_EV_INCOMING	0x002	/* peer opens a stream: accept/refuse */
#define ENGINE_EV_REFUSED	0x004	/* peer refused our open (reason) */
#define ENGINE_EV_READABLE	0x008	/* new bytes in the receive ring */
#define ENGINE_EV_WRITABLE	0x010	/* space freed in the send ring */
#define ENGINE_EV_EOF		0x020	/* peer shut down; all bytes read */
#define ENGINE_EV_RESET		0x040	/* stream aborted (reason) */
#define ENGINE_EV_RELEASED	0x080	/* id gone; ring memory may be freed */
#define ENGINE_EV_SUSPENDED	0x100	/* the link failed; waits for a resume */
#define ENGINE_EV_RESUMED	0x200	/* flows again, on a new link */

struct engine_event {
	uint32_t stream;
	uint32_t flags;
	uint16_t reason;	/* REFUSED, RESET: a wire_reason */
	void *user;
};

struct engine_stats {
	uint64_t bytes_tx, bytes_rx;		/* stream payload */
	uint64_t writes, sends, recvs;		/* work requests */
	uint64_t signaled;			/* WRs posted signalled */
	uint64_t stall_ring;	/* a stream waited for peer ring credit */
	uint64_t stall_msg;	/* work waited for message credits */
	uint64_t stall_sq;	/* work waited for send queue space */
	uint64_t credit_updates;	/* CREDIT records sent */
	uint64_t msg_credit_updates;	/* MSG_CREDIT records sent */
	uint64_t streams_opened, streams_accepted, streams_refused;
	uint64_t streams_reset;
	uint64_t streams_suspended;	/* suspended when the link failed */
	uint64_t streams_resumed;	/* resumed on this link */
	uint64_t streams_not_resumed;	/* suspended, then ended instead */
	uint64_t resumes_denied;	/* resume offers refused (either side) */
	uint64_t resumed_bytes;		/* bytes written again after a resume */
	uint64_t ring_grows;		/* rings made larger */
	uint64_t ring_shrinks;		/* rings made smaller again */
	uint64_t ring_refused;		/* resizes engine_mem.alloc refused */
	uint64_t stall_window;	/* work waited for the window (engine_clock) */
	uint64_t wait_credit_ns;	/* stream time waiting for ring credit */
	uint64_t wait_sq_ns;	/* stream time ready, waiting for its turn */
	uint32_t streams_active;
	uint32_t peer_credits;		/* message credits we hold now */
	uint32_t sq_depth;	/* WRs posted, not yet known complete */
	uint64_t inflight;	/* data bytes posted, not yet known complete */
	uint64_t window;	/* the bound on inflight now */
	uint64_t rtt_ns;	/* smallest recent completion time (0: none) */
	uint64_t rate;		/* largest recent delivery rate, B/s (0: none) */
	uint32_t sealed;	/* both directions are sealed (engine_sealed) */
	uint64_t sealed_msgs;	/* messages sealed */
	uint64_t opened_msgs;	/* messages that arrived sealed and verified */
	uint64_t rx_private;	/* bytes of receive rings' private copies
				   (sealed links: engine_rx_base) */
	/* Each lane's share (engine_lanes; lane 1 is zero on one lane):
	 * WRs posted not yet known complete, data bytes among them, the
	 * peer's receives we may still use, WRs posted in all. */
	struct engine_lane_stat {
		uint32_t depth;
		uint64_t inflight;
		uint32_t credits;
		uint64_t wrs;
		uint64_t fences;	/* FENCE records sent (iWARP) */
	} lane[WIRE_LANES_MAX];
	uint32_t lanes;		/* lanes the link runs (engine_lanes) */
	uint32_t notify;	/* it runs without immediates (engine_notify) */
	uint64_t eager;		/* streams' bytes sent as DATA records, */
	uint64_t eager_bytes;	/* ... how many bytes */
	uint64_t eager_rx;	/* DATA records that arrived */
};

/* How a link's engine takes part in resumes (engine_set_resume). */
struct engine_resume {
	/*
	 * The peer asks to resume the streams it names by ${token}, proving
	 * it may with ${proof}: return the failed engine holding them, with
	 * this side's own proof in ${answer} (sent on a link of version 5
	 * or later, see engine_version), or NULL with ${*reason} (a
	 * wire_reason) to refuse.  Server side only.
	 */
	struct engine *(*find)(void *arg, const uint8_t token[WIRE_NONCE_LEN],
	    const uint8_t proof[WIRE_AUTH_LEN], uint8_t answer[WIRE_AUTH_LEN],
	    uint16_t *reason);
	/*
	 * Version 5, client side: the peer took the resume engine_resume
	 * asked for and proves its right with ${proof}.  Return 0 if it is
	 * right (the streams are named to it now), or -1: the link fails
	 * (ENGINE_ERR_AUTH) and the streams are reset.
	 */
	int (*proved)(void *arg, const uint8_t proof[WIRE_AUTH_LEN]);
	/*
	 * Suspended stream ${id} (user pointer ${user}) moves to this
	 * engine: set ${tx} and ${rx} to the same rings (same sizes and
	 * contents) registered for this link.  Return 0, or -1 to reset it.
	 */
	int (*adopt)(void *arg, uint32_t id, void *user,
	    struct engine_ring *tx, struct engine_ring *rx);
	/*
	 * find's engine gave up every stream it could: end the rest with
	 * engine_abandon and free it, once this engine's call returned.
	 */
	void (*adopted)(void *arg, struct engine *old);
	/*
	 * Version 5, client side: the peer refused the resume with
	 * ${reason} (a wire_reason), having proved nothing.  Return 1 to
	 * keep the streams: the link fails (ENGINE_ERR_LOCAL) and they are
	 * suspended again, for a new link to offer; 0 (or a NULL callback):
	 * they end with ${reason}.
	 */
	int (*denied)(void *arg, uint16_t reason);
	void *arg;
};

/* Error codes for the application-side calls. */
#define ENGINE_EINVAL	(-1)	/* bad argument, state or size */
#define ENGINE_ELIMIT	(-2)	/* no free stream slot */
#define ENGINE_EDOWN	(-3)	/* link not up, failed, or going away */

/**
 * engine_conf_check(conf):
 * Return NULL if ${conf}'s sizes are usable, else a static message saying
 * which one is not and why ("sq_size 2 is below the minimum 4").
 */
const char *engine_conf_check(const struct engine_conf *conf);

/**
 * engine_new(conf, errstr):
 * Create an engine for one link.  On error return NULL and set ${errstr}
 * to a static message.  All rq_size receive slots are ready to be taken
 * (and must be posted before connecting or accepting).
 */
struct engine *engine_new(const struct engine_conf *conf,
    const char **errstr);

/**
 * engine_free(e):
 * Free the engine.  engine_free(NULL) does nothing.
 */
void engine_free(struct engine *e);

/**
 * engine_version_cap(e, version):
 * Say at most protocol ${version} in engine_hello (default: the newest):
 * the peer's own version when answering its hello, or 2 for a connect
 * that an older peer refused.  Call before engine_hello.
 */
void engine_version_cap(struct engine *e, unsigned version);

/**
 * engine_set_auth(e, auth):
 * Require the peer to authenticate, and authenticate to it, as ${auth}
 * says (the structure is copied).  Call before engine_hello and
 * engine_connected.
 */
void engine_set_auth(struct engine *e, const struct engine_auth *auth);

/**
 * engine_authenticated(e):
 * True when the link may carry streams as far as authentication goes:
 * none was asked for, or the peer's proof checked out.
 */
int engine_authenticated(const struct engine *e);

/**
 * engine_hello(e, h):
 * Fill ${h} with this side's connect private data, except the nonce,
 * which the caller chooses.  The version is the newest both the cap and
 * the configuration allow (see wire_version_said).
 */
void engine_hello(struct engine *e, struct wire_hello *h);

/**
 * engine_lanes(e):
 * How many lanes (queue pairs) the link runs, once engine_connected has
 * read the peer's hello: 1, or 2 when the configuration asked for them
 * (engine_conf.lanes) and wire_hello_lanes agrees.  With 2, the embedder
 * creates lane 1's queue pair (on the same completion queue), posts the
 * receives engine_take_recvs hands out for it, connects it with the
 * lane-1 hello (engine_lane_hello) and, once it is established, calls
 * engine_lane_up; the engine posts nothing and opens no stream before
 * then.
 */
unsigned engine_lanes(const struct engine *e);

/**
 * engine_notify(e):
 * True once engine_connected has run if the link runs without immediate
 * data (version 11: either hello says WIRE_HELLO_NOTIFY): every data
 * WRITE is a plain ENGINE_WR_WRITE followed at once by an ENGINE_WR_SEND
 * whose notice (WIRE_NOTICE_LEN bytes) carries what the immediate would,
 * and every SEND starts with a notice; every data WRITE is signalled
 * (on iWARP a completion may only say that TCP took the bytes, and
 * Soft-iWARP sends unsignalled ones from the ring later: see
 * eng_emit).  The engine hands out neither
 * ENGINE_WR_WRITE_IMM nor ENGINE_WR_SEND_IMM, and takes neither
 * engine_on_recv_imm nor engine_on_recv_tag: everything comes to
 * engine_on_recv.
 */
int engine_notify(const struct engine *e);

/**
 * engine_lane_hello(e, h):
 * Fill ${h} with lane 1's connect private data (version, WIRE_HELLO_LANE1
 * and the receives posted on lane 1), except the nonce: the caller puts
 * its own lane-0 hello's nonce there, which ties the lane to its link.
 */
void engine_lane_hello(struct engine *e, struct wire_hello *h);

/**
 * engine_lane_up(e, peer):
 * Lane 1 is established; ${peer} is the peer's lane-1 hello (its
 * receives).  Returns 0, or -1 if the hello is not a lane-1 hello of
 * this link's version (the link failed: ENGINE_ERR_PROTOCOL).
 */
int engine_lane_up(struct engine *e, const struct wire_hello *peer);

/**
 * engine_set_seal(e, seal):
 * This link seals, with ${seal}'s AEAD (the structure is copied).  Call
 * before engine_connected; nothing is sealed before engine_seal_tx, nor
 * opened before engine_seal_rx.
 */
void engine_set_seal(struct engine *e, const struct engine_seal *seal);

/**
 * engine_seal_tx(e), engine_seal_rx(e):
 * Seal every work request handed out from now on; open every message that
 * arrives from now on.  Nothing without engine_set_seal.
 */
void engine_seal_tx(struct engine *e);
void engine_seal_rx(struct engine *e);

/**
 * engine_sealed(e):
 * True once both directions of the link are sealed.
 */
int engine_sealed(const struct engine *e);

/**
 * engine_connected(e, peer):
 * The link is established and the peer sent hello ${peer} (decoded and
 * validated by wire_hello_decode).  Work may flow from now on.  If one
 * side authenticates and the other does not, the link fails here.
 */
void engine_connected(struct engine *e, const struct wire_hello *peer);

/* What ended a link. */
enum engine_err {
	ENGINE_ERR_NONE = 0,
	ENGINE_ERR_PROTOCOL,	/* the peer broke the protocol */
	ENGINE_ERR_AUTH,	/* the peer did not prove the key, or mismatch */
	ENGINE_ERR_TRANSPORT,	/* a completion error, a disconnect, ... */
	ENGINE_ERR_LOCAL,	/* the embedder ended it (engine_fail) */
	ENGINE_ERR_FORGED	/* a sealed message failed authentication */
};

/**
 * engine_fail(e, kind, why):
 * End the link with ${why} as the error, of ${kind} (the transport failed,
 * or the embedder decided).  Does nothing if the link already failed.
 */
void engine_fail(struct engine *e, enum engine_err kind, const char *why);

/**
 * engine_stopped(e):
 * The embedder's queue pairs for ${e} are stopped, and it is sure of it:
 * no work request of the engine runs from now on.  Only then does a
 * sealed link's failure give kept streams their plaintext back: at the
 * failure if this came first, else now (a failure of the engine's own,
 * such as a message that did not open).  Until then a suspended stream
 * whose bytes are still sealed cannot be resumed.
 */
void engine_stopped(struct engine *e);

/**
 * engine_error(e):
 * Why the link ended, or NULL while it is healthy.
 */
const char *engine_error(const struct engine *e);

/**
 * engine_error_kind(e):
 * What kind of error ended the link; ENGINE_ERR_NONE while it is healthy.
 */
enum engine_err engine_error_kind(const struct engine *e);

/**
 * engine_err_name(kind):
 * A short name for ${kind} ("protocol violation", ...).
 */
const char *engine_err_name(enum engine_err kind);

/**
 * engine_next_event(e, ev):
 * Store the next stream event into ${ev} and return 1, or return 0 if
 * there is none.
 */
int engine_next_event(struct engine *e, struct engine_event *ev);

/**
 * engine_keepalive(e):
 * Send a KEEPALIVE soon, unless another SEND goes out first.
 */
void engine_keepalive(struct engine *e);

/**
 * engine_goaway(e, reason):
 * Tell the peer this side opens and accepts no new streams.
 */
void engine_goaway(struct engine *e, uint16_t reason);

/**
 * engine_peer_goaway(e):
 * True once the peer said GOAWAY (new opens fail with ENGINE_EDOWN).
 */
int engine_peer_goaway(const struct engine *e);

/**
 * engine_idle(e):
 * True when nothing is queued to send and every work request that asked
 * for a completion had it (those after the last that did never report).
 */
int engine_idle(const struct engine *e);

/**
 * engine_sends_quiet(e):
 * True when no part of the engine waits on its own work requests'
 * completions: lane 0 has none it asked for outstanding, lane 1 at most
 * ENGINE_QUIET_LANE1 SENDs, and no stream waits for its work on the
 * other lane (Q_FENCE).  Then a completion of ours changes nothing
 * until something else happens, so the caller may sleep without being
 * woken for it (a completion queue of its own, left unarmed) and take
 * it with whatever wakes it: the peer's next message, a timer.  A round
 * trip of small writes stays quiet: its request's completion no longer
 * wakes either side.  False when the link has failed.
 */
#define ENGINE_QUIET_LANE1	2
int engine_sends_quiet(const struct engine *e);

/**
 * engine_active(e):
 * How many streams hold a slot (open, opening, or ending).
 */
uint32_t engine_active(const struct engine *e);

/**
 * engine_stats(e, st):
 * Copy the link's counters into ${st}.
 */
void engine_stats(const struct engine *e, struct engine_stats *st);

/**
 * engine_clock(e, now):
 * The embedder's monotonic clock reads ${now} nanoseconds (never 0).
 * Call it once per turn, before the turn's inputs: the send window
 * (lib/protocol/window.h) and the streams' wait times are measured with it.
 * Without it waits read 0 and the window learns from completions alone.
 */
void engine_clock(struct engine *e, uint64_t now);

/**
 * engine_data_busy(e):
 * True if stream data waits to be posted, or some was posted since the
 * previous call: the link is moving data, not only control records
 * (keepalives, credits).
 */
int engine_data_busy(struct engine *e);

/**
 * engine_window_share(e, permille):
 * Keep at most ${permille} (1 to 1000) of the estimated window
 * outstanding, but never less than WINDOW_SHARE_MIN_CHUNKS chunks (a
 * link that yields to other links of its device).
 */
void engine_window_share(struct engine *e, uint32_t permille);

/**
 * engine_set_resume(e, r):
 * How ${e} adopts streams of failed engines (the structure is copied).
 */
void engine_set_resume(struct engine *e, const struct engine_resume *r);

/**
 * engine_can_resume(e):
 * True once connected if both sides offered resume.
 */
int engine_can_resume(const struct engine *e);

/**
 * engine_version(e):
 * The protocol version the link speaks once connected: the older of the
 * two hellos' (0 before).
 */
unsigned engine_version(const struct engine *e);

/**
 * engine_can_origin(e):
 * True once connected if both hellos said version 3 or later (ORIGIN
 * records).
 */
int engine_can_origin(const struct engine *e);

/**
 * engine_set_mem(e, mem):
 * How ${e} allocates and frees ring memory when it resizes rings (the
 * structure is copied).  Needed before engine_ring_limits has an effect.
 */
void engine_set_mem(struct engine *e, const struct engine_mem *mem);

/**
 * engine_can_resize(e):
 * True once connected if both hellos said version 4 and the link cannot
 * resume streams (a stream that may be resumed keeps its rings' sizes).
 */
int engine_can_resize(const struct engine *e);

/**
 * engine_resume_settled(e):
 * True once the peer can no longer ask for a failed link's streams on
 * ${e} (a RESUME comes first or never: the link cannot resume, one came,
 * one was sent, or the peer opened a stream), so receiving on ${e} calls
 * no engine_resume callback.
 */
int engine_resume_settled(const struct engine *e);

/**
 * engine_trim(e):
 * Shrink the rings of streams that carried no byte since the previous
 * call and hold none, back to the sizes they started with, and halve
 * (not below that) the receive rings whose application consumed bytes
 * since the previous call but never all that had arrived, while more
 * arrived.  Call it every few seconds; it visits every stream.
 */
void engine_trim(struct engine *e);

/**
 * engine_tick(e):
 * A period of the embedder's clock passed: call it every few seconds (the
 * engine has no clock; its deadlines count these calls).  A RING this
 * side sent that the peer has not answered by the ENGINE_RING_AT_TICKS-th
 * call after it went out ends the link (ENGINE_ERR_PROTOCOL), so that
 * both rings can go: a peer answers a RING at once and writes nothing more
 * for the stream until it does, and resetting the stream would free
 * nothing, since a stream is released only when that same peer sends its
 * terminal record.  It visits every stream.
 */
#define ENGINE_RING_AT_TICKS	3
void engine_tick(struct engine *e);

/**
 * engine_suspended(e):
 * How many streams are suspended or resuming.
 */
uint32_t engine_suspended(const struct engine *e);

/**
 * engine_resume(e, old, token, proof):
 * On the new link ${e} (up, authenticated, no stream yet), take the
 * suspended streams of failed engine ${old} and ask the peer to resume
 * them, naming them ${token} and proving the right with ${proof} (the
 * embedder's, see rstreamd-protocol(7)).  Returns how many streams moved,
 * or ENGINE_EINVAL or ENGINE_EDOWN.  Then end ${old}'s remaining streams
 * with engine_abandon and free it.  From version 5 the streams stay
 * RESUMING, unnamed, until the peer's proof checked out (the proved
 * callback; see engine_resume_proven).
 */
int engine_resume(struct engine *e, struct engine *old,
    const uint8_t token[WIRE_NONCE_LEN], const uint8_t proof[WIRE_AUTH_LEN]);

/**
 * engine_resume_pending(e):
 * How many streams of a resume on ${e} are not settled yet.
 */
uint32_t engine_resume_pending(const struct engine *e);

/**
 * engine_resume_proven(e):
 * False while this side asked for a resume on ${e} and waits for the
 * peer's proof (version 5): it neither proved the secret nor refused.
 */
int engine_resume_proven(const struct engine *e);

/**
 * engine_resume_confirmed(e):
 * Server side: true once the peer named a stream of the resume it asked
 * for on ${e}.  From version 5 a peer names its streams only after it
 * checked this side's proof, so it now holds the secret that follows the
 * one it proved.
 */
int engine_resume_confirmed(const struct engine *e);

/**
 * engine_abandon(e, reason):
 * Give up failed engine ${e}'s suspended streams: RESET with ${reason}
 * (unless closed) and RELEASED.
 */
void engine_abandon(struct engine *e, uint16_t reason);

#endif /* !ENGINE_H */
