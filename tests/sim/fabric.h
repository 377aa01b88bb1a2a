/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * fabric: two rstream engines joined by an in-memory RC "wire".
 *
 * It behaves like the hardware where it matters to the protocol: each
 * direction of each lane (queue pair; two when the engines run a latency
 * lane, engine_lanes) executes work requests in posting order, the two
 * lanes' in any interleaving; a WRITE reads the
 * sender's memory when it executes (not when it is posted, unless
 * inline) and lands only inside a registered receive region with the
 * right rkey; every WRITE WITH IMM and SEND consumes the receiver's
 * oldest receive posted on its lane, and finding none is an RNR error;
 * completions of both lanes queue up per side (one completion queue)
 * and are fed back when the caller says so.  The caller
 * decides the interleaving (the simulator at random, unit tests by hand).
 *
 * A link can be lost and replaced (fab_relink): the failed engines go to
 * the caller, who keeps them for a resume, and two new engines connect
 * over the same fabric.  Regions registered for remote writes belong to
 * the link, as memory regions belong to a link's protection domain: after
 * the loss they are stale, a WRITE naming their old rkey is a violation,
 * and a stream moving to the new link gets its receive ring registered
 * again under a new rkey (fab_mr_rereg, from the engine's adopt callback).
 *
 * Ownership: the fabric owns the current engines, the control send and
 * receive areas, the region table and everything in flight; the caller
 * owns the ring memory (fab_rings allocates it for the caller), the
 * engines fab_relink hands over, and those it attached (fab_attach) with
 * their control send areas.
 */
#ifndef FABRIC_H
#define FABRIC_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "engine_io.h"
#include "seal.h"

struct fab_wr {
	struct engine_wr wr;
	uint8_t *inl;		/* its bytes at post time (inline, or iWARP) */
	uint64_t n;		/* its number on its lane, from 0 */
};

struct fab_cqe {
	int kind;		/* FAB_CQE_* */
	uint32_t slot;
	uint32_t imm;
	uint32_t len;
	uint64_t wr_id;
	uint8_t lane;		/* FAB_CQE_SEND: the WR's lane */
	uint64_t n;		/* and its number there (fab_wr.n) */
};
#define FAB_CQE_RECV		1
#define FAB_CQE_RECV_IMM	2
#define FAB_CQE_SEND		3
#define FAB_CQE_RECV_TAG	4	/* SEND WITH IMM: a sealed WRITE's tag */

struct fab_mr {
	uint64_t addr;
	uint64_t len;
	uint32_t rkey;
	int stale;		/* registered for an earlier link */
};

/* One lane's queue pair at one side. */
struct fab_lane {
	uint32_t *posted;		/* receive slots, FIFO */
	size_t posted_head, posted_n;
	uint64_t outstanding;		/* send WRs not yet completed */
	uint64_t completed_upto;	/* WRs up to here completed */
	struct fab_wr *wire;		/* in flight towards the other side */
	size_t wire_head, wire_n, wire_cap;
	uint64_t posted_wrs;		/* WRs posted on it, this link */
};

struct fab_side {
	struct engine *e;
	struct engine_conf conf;
	uint8_t *ctrl_send;		/* conf.lanes (at least 1) areas */
	uint8_t *recv_buf;		/* conf.lanes * rq_size slots */
	/* Lane 0's queue pair, also by the names of the one-lane fabric. */
	union {
		struct fab_lane lane0;
		struct {
			uint32_t *posted;
			size_t posted_head, posted_n;
			uint64_t outstanding;
			uint64_t completed_upto;
			struct fab_wr *wire;
			size_t wire_head, wire_n, wire_cap;
			uint64_t posted_wrs;
		};
	};
	struct fab_lane lane1;		/* the latency lane's (engine_lanes) */
	struct fab_cqe *cq;
	size_t cq_head, cq_n, cq_cap;
	struct fab_mr *mrs;
	size_t nmr, mr_cap;
	uint64_t max_outstanding;	/* high-water mark, for tests */
	uint64_t wrs_posted, sends_posted, writes_posted;
	uint64_t max_wr_len;
	/* Kept to make the engines of the next link alike. */
	struct engine_auth auth;
	int has_auth;
	struct engine_resume res;
	int has_res;
	struct engine_mem mem;
	int has_mem;
	unsigned version_cap;		/* engine_version_cap (0: none) */
	uint8_t nonce[WIRE_NONCE_LEN];	/* this side's hello nonce, this link */
	/* Link losses: WRs executed unseen, WRs and completions dropped. */
	uint64_t wrs_landed_unseen, wrs_lost, cqes_lost;
	/*
	 * Sealing (fab_seal): lib/crypto/seal's two directions of this link,
	 * under keys of its own; rekeys: boundaries (SEAL_REKEY_EVERY) both
	 * directions crossed on this side's earlier links.
	 */
	struct seal_pair seal;
	uint64_t rekeys;
	struct fab *owner;		/* for the sealing callbacks */
	/* fab_init_seal: the embedder's own sealing, set on every engine. */
	struct engine_seal seal_ops;
	int has_seal_ops;
	/* Flip bit tamper - 1 of the next message this side delivers (0: none). */
	uint32_t tamper;
	/* fab_attach: the engine is the caller's, and so is ctrl_send. */
	int lent;
	/* Its queue pair would not stop (a failing modify_qp): fab_relink
	 * does not say engine_stopped for it. */
	int unstopped;
	/*
	 * An injector that reads the wire overwrites the next plain WRITE
	 * (sealed data) this side delivers, as it lands, with ${overwrite}
	 * of its bytes flipped (fab_inject_write at the address and rkey its
	 * header shows), before its tag follows.  0: none.
	 */
	uint32_t overwrite;
};

struct fab {
	struct fab_side side[2];
	int sealed;			/* fab_seal: every link seals */
	/* Immediates are refused (iWARP): an engine_conf.notify makes it. */
	int no_imm;
	enum seal_aead aead;		/* with this AEAD */
	uint64_t seal_from;		/* both directions' first count */
	unsigned links;			/* links made so far (1 after fab_init) */
	int failed;			/* the fabric itself saw a violation */
	char err[256];
	/*
	 * A hash (FNV-1a) of what this fabric carried and fed back: each
	 * hello, each executed work request (its kind, length, immediate
	 * and bytes), each completion, and each engine error it led to.
	 * Addresses and keys are left out, so two builds that behave the
	 * same give the same hash (fab_trace adds the caller's own).
	 */
	uint64_t trace;
	/* Which lane fab_deliver takes when both have work (xorshift). */
	uint64_t lane_rng;
	/*
	 * fab_seal: the first 8 bytes of keystream of every message of 8
	 * bytes or more sealed on any link (an open-addressing set; 0 marks
	 * a free place): one seen twice is a key and nonce used twice,
	 * whichever way it came about, and a violation.
	 */
	uint64_t *ks;
	size_t ks_n, ks_cap;
	uint64_t ks_zero;		/* a keystream of 8 zero bytes, seen */
};

/**
 * fab_trace(f, p, n):
 * Add ${n} bytes at ${p} to f->trace.
 */
void fab_trace(struct fab *f, const void *p, size_t n);

/**
 * fab_init(f, a, b):
 * Create both engines with configurations ${a} and ${b} (their control
 * buffers are allocated here), post the initial receives, exchange hellos
 * and connect; and when they run two lanes (engine_lanes), post lane 1's
 * receives, exchange lane-1 hellos and bring it up (engine_lane_up).
 * Returns 0, or -1 with f->err set.
 */
int fab_init(struct fab *f, const struct engine_conf *a,
    const struct engine_conf *b);

/**
 * fab_init_auth(f, a, b, auth_a, auth_b):
 * fab_init, with engine_set_auth(${auth_a}) on side 0 and ${auth_b} on
 * side 1 where they are not NULL.  Side 0 is the initiator.
 */
int fab_init_auth(struct fab *f, const struct engine_conf *a,
    const struct engine_conf *b, const struct engine_auth *auth_a,
    const struct engine_auth *auth_b);

/**
 * fab_init_cap(f, a, b, cap_a, cap_b):
 * fab_init, with each side's hello capped at protocol version ${cap_a}
 * and ${cap_b} (0: the newest), as an older peer's would be.
 */
int fab_init_cap(struct fab *f, const struct engine_conf *a,
    const struct engine_conf *b, unsigned cap_a, unsigned cap_b);

/**
 * fab_init_seal(f, a, b, auth_a, auth_b, seal_a, seal_b, cap):
 * fab_init_auth, with engine_set_seal(${seal_a}) and ${seal_b} on the
 * sides' engines before they connect (where not NULL): sealing is the
 * handshake's to start (engine_auth's step), with the caller's keys.
 * Both hellos are capped at protocol version ${cap} (0: the newest).
 */
int fab_init_seal(struct fab *f, const struct engine_conf *a,
    const struct engine_conf *b, const struct engine_auth *auth_a,
    const struct engine_auth *auth_b, const struct engine_seal *seal_a,
    const struct engine_seal *seal_b, unsigned cap);

/**
 * fab_seal(f):
 * Seal this link (nothing went yet) and every later one from its first
 * message, with lib/crypto/seal's ChaCha20-Poly1305 under keys of each link's
 * own: engine_set_seal, engine_seal_tx and engine_seal_rx on both sides.
 * A sealed data WRITE is a plain WRITE, which takes no receive and
 * completes nothing at the receiver, then its tag's SEND WITH IMM.
 */
void fab_seal(struct fab *f);

/**
 * fab_seal_at(f, aead, from):
 * fab_seal with ${aead} (SEAL_AESGCM only where seal_aesgcm_available()),
 * both directions of every link counting their messages from ${from}
 * (seal_dir_set_count_for_test at both ends): just below a multiple of
 * SEAL_REKEY_EVERY, a link soon renews its keys.
 */
void fab_seal_at(struct fab *f, enum seal_aead aead, uint64_t from);

/**
 * fab_rekeys(f):
 * The rekey boundaries the sealing directions crossed over every link so
 * far, counted at both ends of each (a direction whose sender and
 * receiver both crossed one counts 2).
 */
uint64_t fab_rekeys(const struct fab *f);

/**
 * fab_attach(f, i, c, e):
 * Side ${i} of fabric ${f} (zeroed first, like the other side, or made
 * by fab_attach) runs the caller's engine ${e}, made with configuration
 * ${c}, whose control send area is the caller's too: the fabric
 * allocates the side's receive area and queue, and fab_free leaves ${e}
 * to the caller.  No hello is exchanged and nothing is connected: the
 * caller does that, as the RDMA CM would (tests/sim/simverbs.c), and
 * clears f->side[i].e before it frees ${e}.  Returns 0, or -1 with
 * f->err set.
 */
int fab_attach(struct fab *f, int i, const struct engine_conf *c,
    struct engine *e);

/**
 * fab_free(f):
 * Free both engines (not those of fab_attach) and everything the fabric
 * allocated.
 */
void fab_free(struct fab *f);

/**
 * fab_pump(f, i):
 * Post what side ${i}'s engine wants posted (receives, then work
 * requests), checking the send queue depth and work request limits.
 * Returns the number of work requests posted, or -1 on a violation.
 */
int fab_pump(struct fab *f, int i);

/**
 * fab_deliver(f, i):
 * Execute the oldest work request in flight from side ${i} at the other
 * side.  Returns 1 if one was executed, 0 if none was in flight, -1 on a
 * violation (RNR, a WRITE outside any region).
 */
int fab_deliver(struct fab *f, int i);

/**
 * fab_deliver_lane(f, i, lane):
 * fab_deliver, from lane ${lane} (0 or 1) of side ${i}.  fab_deliver
 * takes the lane that has work, or either at random (f->lane_rng) when
 * both have.
 */
int fab_deliver_lane(struct fab *f, int i, int lane);

/**
 * fab_complete(f, i):
 * Feed side ${i}'s oldest completion to its engine.  Returns 1 if one
 * was fed, 0 if none was queued; the engine's own verdict is in
 * engine_error().
 */
int fab_complete(struct fab *f, int i);

/**
 * fab_inject(f, i, kind, buf, len, imm):
 * Hostile input: deliver to side ${i} a SEND of ${len} bytes from ${buf}
 * (kind FAB_CQE_RECV), a SEND WITH IMM ${imm} of them (FAB_CQE_RECV_TAG),
 * or a WRITE WITH IMM completion with ${imm} and ${len}
 * (FAB_CQE_RECV_IMM), consuming a posted receive as the hardware
 * would, and feed it to the engine at once.
 */
int fab_inject(struct fab *f, int i, int kind, const uint8_t *buf,
    uint32_t len, uint32_t imm);

/**
 * fab_inject_write(f, i, addr, rkey, buf, len):
 * Hostile input from one who read a WRITE's clear header: a plain RDMA
 * WRITE (no immediate: side ${i}'s engine learns nothing of it) of
 * ${len} bytes from ${buf} at ${addr}, which lands as the HCA would let
 * it, inside a region of the current link that ${rkey} opens.  Returns
 * 0 if it landed, -1 if no such region holds it.
 */
int fab_inject_write(struct fab *f, int i, uint64_t addr, uint32_t rkey,
    const uint8_t *buf, uint32_t len);

/**
 * fab_mr_add(f, i, addr, len, rkey) / fab_mr_del(f, i, addr):
 * Register / deregister a region side ${i} exposes to remote writes.
 */
int fab_mr_add(struct fab *f, int i, uint64_t addr, uint64_t len,
    uint32_t rkey);
void fab_mr_del(struct fab *f, int i, uint64_t addr);

/**
 * fab_rings(f, i, txsz, rxsz, rkey, txbuf, rxbuf, tx, rx):
 * Allocate a stream's send and receive rings on side ${i} (zeroed; they
 * abort the program when memory runs out), register the receive ring for
 * remote writes with ${rkey}, and describe both for the engine.
 */
void fab_rings(struct fab *f, int i, uint32_t txsz, uint32_t rxsz,
    uint32_t rkey, uint8_t **txbuf, uint8_t **rxbuf, struct engine_ring *tx,
    struct engine_ring *rx);

/**
 * fab_set_resume(f, i, r):
 * engine_set_resume(${r}) on side ${i}'s engine, and on the engines of
 * every later link (the structure is copied).
 */
void fab_set_resume(struct fab *f, int i, const struct engine_resume *r);

/**
 * fab_set_mem(f, i, mem):
 * engine_set_mem(${mem}) on side ${i}'s engine, and on the engines of
 * every later link (the structure is copied).
 */
void fab_set_mem(struct fab *f, int i, const struct engine_mem *mem);

/**
 * fab_break(f, deliver):
 * The link is lost: the first half of fab_relink without the engines.
 * Up to ${deliver[i]} of the work requests in flight from side ${i}
 * execute at the other side, unseen; everything else in flight and every
 * queued completion is dropped, the queue pairs' receives and send
 * queues with them, and every registered region becomes stale.  The
 * engines are not told: the caller fails them.  Returns 0, or -1 with
 * f->err set (a delivered WRITE broke a rule).
 */
int fab_break(struct fab *f, const size_t deliver[2]);

/**
 * fab_relink(f, deliver, old):
 * The link is lost and a new one replaces it.  First up to
 * ${deliver[i]} of the work requests in flight from side ${i} execute at
 * the other side (data lands, SENDs fill receive buffers), but neither
 * their completions nor any other queued completion reaches an engine;
 * everything else in flight is dropped.  Both engines fail with
 * ENGINE_ERR_TRANSPORT (unless they already failed) and are stored in
 * ${old[i]}: the caller owns them from now on (it drains their events,
 * ends what was not resumed with engine_abandon and frees them).  Every
 * registered region becomes stale.  Then new engines are made with the
 * configurations of fab_init plus conf.resume, the same authentication,
 * resume and ring memory callbacks, and new nonces; they post their
 * receives and connect, and side 0 is again the initiator.  The control
 * send and receive areas are reused: a failed engine never writes its
 * send area.
 * Returns 0, or -1 with f->err set (a delivered WRITE broke a rule, or a
 * new engine could not be made; then ${old} is still filled in).
 */
int fab_relink(struct fab *f, const size_t deliver[2], struct engine *old[2]);

/**
 * fab_mr_rereg(f, i, addr, rkey):
 * Register side ${i}'s region at ${addr} for the current link under
 * ${rkey}; its earlier rkey stops working.  Returns 0, or -1 if no region
 * starts at ${addr}.
 */
int fab_mr_rereg(struct fab *f, int i, uint64_t addr, uint32_t rkey);

/**
 * fab_busy(f):
 * True while anything is in flight or waiting in a completion queue.
 */
int fab_busy(const struct fab *f);

#endif /* !FABRIC_H */
