/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * engine_io: the engine as the transport drives it (lib/rdma/verbs, the
 * simulator's fabric): the work requests it hands out to post, the
 * receive slots to post again, and the completions fed back to it.  What
 * the rest of the engine is, see engine.h. *
 * After any input the embedder must, in this order: post every receive
 * engine_take_recvs() hands out, then post the work requests
 * engine_take_wrs() hands out (calling it until it returns fewer than it
 * was asked for), then drain engine_next_event().  Receives are counted
 * as posted when they are taken, and credit updates sent after that count
 * them, so posting them late could let the peer overrun the queue.
 *
 * Memory: the embedder provides every buffer.  Ring memory is described
 * by address and key only (the engine never touches it; the WRs it emits
 * name it).  The control send area (lanes * sq_size * WIRE_MSG_SIZE
 * bytes, lanes as engine_conf.lanes asks, at least 1) is the one buffer
 * the engine writes: lane L's SEND number s uses slot L * sq_size +
 * s % sq_size.  Receive slot i is the WIRE_MSG_SIZE bytes at
 * i * WIRE_MSG_SIZE in the embedder's receive area (lanes * rq_size
 * slots).
 *
 * Lanes (engine_lanes): a link of two lanes has two queue pairs, each
 * with sq_size send and rq_size receive entries, on one completion queue
 * sized for both.  Every WR names its lane; receive slots below rq_size
 * are lane 0's, the rest lane 1's (engine_slot_lane), and are posted on
 * that lane's queue pair.  Completions of both lanes go to
 * engine_on_send_done and engine_on_recv* as they come: the engine reads
 * the lane from the wr_id and the slot.
 */
#ifndef ENGINE_IO_H
#define ENGINE_IO_H

#include <stdint.h>

/* Its types are engine.h's; it does not include it (one module). */
struct engine;

enum engine_wr_op {
	ENGINE_WR_SEND = 1,
	ENGINE_WR_WRITE_IMM = 2,
	ENGINE_WR_WRITE = 3,	/* sealed data: RDMA WRITE, no immediate */
	ENGINE_WR_SEND_IMM = 4	/* its tag: SEND WITH IMMEDIATE (imm) */
};

/* A wr_id's lane is its bit 62 (below: the lane's sequence number; bit
 * 63 is the embedder's, to tell its receives' wr_ids apart). */
#define ENGINE_WR_LANE_SHIFT	62

struct engine_wr {
	uint64_t wr_id;		/* lane and sequence number: engine_on_send_done's */
	uint8_t op;
	uint8_t signaled;	/* ask for a completion */
	uint8_t inlined;	/* len <= inline_size: post with IBV_SEND_INLINE */
	uint8_t lane;		/* the queue pair to post it on: 0 or 1 */
	uint32_t len;
	uint64_t local_addr;
	uint32_t lkey;
	uint64_t remote_addr;	/* WRITE_IMM only */
	uint32_t rkey;		/* WRITE_IMM only */
	uint32_t imm;		/* WRITE_IMM, SEND_IMM; host order */
};

/**
 * engine_on_recv(e, slot, buf, len):
 * A SEND of ${len} bytes arrived in receive slot ${slot}, whose bytes are
 * at ${buf}.  Returns 0, or -1 if it ended the link (see engine_error).
 */
int engine_on_recv(struct engine *e, uint32_t slot, const uint8_t *buf,
    uint32_t len);

/**
 * engine_on_recv_imm(e, slot, imm, len):
 * An RDMA WRITE WITH IMMEDIATE of ${len} bytes, immediate ${imm} (host
 * order), completed receive slot ${slot}.  Returns 0 or -1 as above.
 */
int engine_on_recv_imm(struct engine *e, uint32_t slot, uint32_t imm,
    uint32_t len);

/**
 * engine_on_recv_tag(e, slot, imm, buf, len):
 * A SEND WITH IMMEDIATE ${imm} (host order) of ${len} bytes, at ${buf},
 * completed receive slot ${slot}: on a sealed link, the tag of the data
 * WRITE ${imm} names, which landed before it.  Returns 0 or -1 as above.
 */
int engine_on_recv_tag(struct engine *e, uint32_t slot, uint32_t imm,
    const uint8_t *buf, uint32_t len);

/**
 * engine_on_send_done(e, wr_id):
 * The signalled work request ${wr_id} completed successfully, and so did
 * every one posted before it on its lane.  Returns 0 or -1 as above.
 */
int engine_on_send_done(struct engine *e, uint64_t wr_id);

/**
 * engine_slot_lane(e, slot):
 * The lane whose queue pair receive slot ${slot} is posted on.
 */
unsigned engine_slot_lane(const struct engine *e, uint32_t slot);

/**
 * engine_take_recvs(e, slots, max):
 * Store up to ${max} receive slot numbers to post into ${slots}; return
 * how many.
 */
int engine_take_recvs(struct engine *e, uint32_t *slots, int max);

/**
 * engine_take_wrs(e, wrs, max):
 * Store up to ${max} work requests to post, in order, into ${wrs}; return
 * how many.  Call again while it returns ${max}.
 */
int engine_take_wrs(struct engine *e, struct engine_wr *wrs, int max);

#endif /* !ENGINE_IO_H */
