/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * engine_stream: a link's streams, as the application side uses them
 * (the daemon's bridge, and the link for the streams no tunnel takes):
 * open, accept or refuse, write into the send ring and commit, read from
 * the receive ring and consume, shut down, close, reset; and what a
 * stream keeps for a resume.  What the rest of the engine is, see
 * engine.h. *
 * Stream lifetime: a stream id is valid from engine_open() (or the
 * INCOMING event) until the RELEASED event; after RELEASED the id is
 * reused and the embedder may free the stream's ring memory.  Until then
 * the memory must stay registered, even after engine_close().
 *
 * Scheduling (nothing of it is on the wire): many streams share one send
 * queue, which the hardware runs in order, so what engine_take_wrs hands
 * out decides who waits for whom.  Control records go first, always.
 * Data is cut into chunks (conf.chunk, WINDOW_CHUNK by default) and taken
 * by deficit round robin in bytes over the streams ready to send: each
 * turn of a stream may write chunk * weight bytes (engine_set_weight), so
 * a stream that becomes ready waits for at most one quantum of each
 * stream ahead of it; and a stream that had nothing to send (a request,
 * a reply) is served before the streams that keep the link busy.  The
 * data bytes outstanding on the send queue are bounded by a window that
 * the link learns from its own completions (lib/protocol/window.h: large enough
 * that the wire does not run dry before this side reacts, and at least a
 * few chunks), not by the rings: what is posted beyond what keeps the
 * wire busy would only be a queue for the next stream's bytes, or a
 * credit, to wait behind.  The streams' wait times, and the rtt and rate
 * shown beside the window, need the embedder's clock (engine_clock).
 */
#ifndef ENGINE_STREAM_H
#define ENGINE_STREAM_H

#include <stddef.h>
#include <stdint.h>

/* Its types are engine.h's; it does not include it (one module). */
struct engine;
struct engine_ring;
struct wire_origin;

/* One stream's sending side (engine_stream_stats). */
struct engine_stream_stats {
	uint64_t queued;	/* committed, not yet written */
	uint64_t unacked;	/* written, not yet reported consumed */
	uint64_t wait_credit_ns;	/* time it waited for ring credit */
	uint64_t wait_sq_ns;	/* time it was ready but not yet posted */
};

/**
 * engine_open(e, tunnel, tx, rx, user):
 * Open a stream on tunnel ${tunnel} with send ring ${tx} and receive
 * ring ${rx} (power-of-two sizes, see ring_size_check); ${user} comes
 * back in its events.  Returns the stream id, or ENGINE_EINVAL,
 * ENGINE_ELIMIT or ENGINE_EDOWN.  Bytes may be committed to the send ring
 * at once; they flow after the OPENED event.
 */
int engine_open(struct engine *e, const char *tunnel,
    const struct engine_ring *tx, const struct engine_ring *rx, void *user);

/**
 * engine_tunnel(e, id):
 * The tunnel name of stream ${id} (for an INCOMING stream, what the peer
 * asked for), or NULL if ${id} is not a live stream.
 */
const char *engine_tunnel(const struct engine *e, uint32_t id);

/**
 * engine_set_user(e, id, user):
 * Set INCOMING stream ${id}'s user pointer before it is accepted, so its
 * events (a RESET while the application decides) carry ${user}.  Returns
 * 0 or ENGINE_EINVAL.
 */
int engine_set_user(struct engine *e, uint32_t id, void *user);

/**
 * engine_accept(e, id, tx, rx, user):
 * Accept INCOMING stream ${id} with these rings.  Returns 0 or
 * ENGINE_EINVAL.
 */
int engine_accept(struct engine *e, uint32_t id, const struct engine_ring *tx,
    const struct engine_ring *rx, void *user);

/**
 * engine_refuse(e, id, reason):
 * Refuse INCOMING stream ${id}; the id is gone when this returns.
 */
int engine_refuse(struct engine *e, uint32_t id, uint16_t reason);

/**
 * engine_tx_space(e, id, off):
 * Contiguous free bytes in stream ${id}'s send ring, starting at offset
 * ${*off}.  Zero when the ring is full (a WRITABLE event follows when space
 * frees up) or the stream can no longer send.
 */
uint32_t engine_tx_space(struct engine *e, uint32_t id, uint32_t *off);

/**
 * engine_tx_commit(e, id, n):
 * The application put ${n} bytes into the space engine_tx_space gave.
 */
int engine_tx_commit(struct engine *e, uint32_t id, uint32_t n);

/**
 * engine_rx_data(e, id, off):
 * Contiguous readable bytes in stream ${id}'s receive ring, starting at
 * offset ${*off}.
 */
uint32_t engine_rx_data(struct engine *e, uint32_t id, uint32_t *off);

/**
 * engine_rx_consume(e, id, n):
 * The application took ${n} bytes of what engine_rx_data gave.
 */
int engine_rx_consume(struct engine *e, uint32_t id, uint32_t n);

/**
 * engine_shutdown(e, id):
 * No more bytes will be committed; the peer sees end-of-stream after the
 * last one.  The other direction keeps flowing.
 */
int engine_shutdown(struct engine *e, uint32_t id);

/**
 * engine_close(e, id):
 * The application is done with stream ${id}.  If the peer's end-of-stream
 * was delivered, this is a graceful close (implying engine_shutdown: bytes
 * already committed are still delivered); otherwise it is a reset.  No
 * events but RELEASED follow.
 */
int engine_close(struct engine *e, uint32_t id);

/**
 * engine_reset(e, id, reason):
 * Abort stream ${id}: unsent bytes are dropped and the peer sees RESET
 * with ${reason}.  No events but RELEASED follow.
 */
int engine_reset(struct engine *e, uint32_t id, uint16_t reason);

/**
 * engine_stream_stats(e, id, st):
 * Copy stream ${id}'s sending figures into ${st}, the wait it is in now
 * included.  Returns 0, or -1 if ${id} is not a live stream.
 */
int engine_stream_stats(const struct engine *e, uint32_t id,
    struct engine_stream_stats *st);

/**
 * engine_set_weight(e, id, weight):
 * Stream ${id} gets ${weight} (1 to ENGINE_WEIGHT_MAX; 1 when opened)
 * times the bytes of a weight-1 stream each round of the scheduler.
 * Returns 0 or ENGINE_EINVAL.
 */
#define ENGINE_WEIGHT_MAX	16
int engine_set_weight(struct engine *e, uint32_t id, uint32_t weight);

/**
 * engine_stream_flags_str(e, id, buf, size):
 * Write stream ${id}'s state and flags into ${buf} of ${size} bytes, for
 * debug logs and test failures: the state, then its flags joined by '|'
 * ("OPEN APP_SHUT|SHUT_SENT|PEER_MAPPED|HAS_RINGS"), "?" if ${id} is no
 * slot of ${e}.  The names are the engine's own (engine_stream.c); a
 * buffer of ENGINE_FLAGS_STR_LEN bytes holds any of them whole.  Returns
 * ${buf}.
 */
#define ENGINE_FLAGS_STR_LEN	192
const char *engine_stream_flags_str(const struct engine *e, uint32_t id,
    char *buf, size_t size);

/**
 * engine_set_origin(e, id, origin):
 * Tell the peer, in an ORIGIN record before stream ${id}'s OPEN, who
 * opened it (copied).  Sent only on a version-3 link (engine_can_origin);
 * call right after engine_open.  Returns 0 or ENGINE_EINVAL.
 */
int engine_set_origin(struct engine *e, uint32_t id,
    const struct wire_origin *origin);

/**
 * engine_origin(e, id):
 * Stream ${id}'s origin: for a stream the peer opened, what its ORIGIN
 * said; for one opened here, what engine_set_origin gave.  NULL if none
 * (or it said nothing: WIRE_FAM_UNSPEC).
 */
const struct wire_origin *engine_origin(const struct engine *e, uint32_t id);

/**
 * engine_ring_limits(e, id, tx_max, rx_max):
 * Let stream ${id}'s rings grow with its traffic, the send ring up to
 * ${tx_max} and the receive ring up to ${rx_max} bytes (powers of two),
 * and shrink back to the sizes it was opened or accepted with once it is
 * idle, a receive ring also while its reader lags (engine_trim).  Call
 * right after engine_open or engine_accept, on a link where
 * engine_can_resize is true.  Returns 0 or ENGINE_EINVAL.
 *
 * A receive ring grows when the peer used all the credit it had twice
 * over since the last resize and the application consumed every byte that
 * had arrived at least once meanwhile (the ring, not the reader, held it
 * back); a send ring grows when the application found it full twice over
 * while the peer's ring had room.  Each growth doubles the ring; engine_mem's
 * alloc may refuse it (counted in ring_refused).  A receive ring changes
 * in two steps: this side announces the new ring (RING), the peer says
 * from which byte on it writes there (RING_AT), and the old ring goes once
 * the application read its last byte.  A send ring changes at once; the
 * old one goes when its last WRITE completed.
 */
int engine_ring_limits(struct engine *e, uint32_t id, uint32_t tx_max,
    uint32_t rx_max);

/**
 * engine_tx_base(e, id), engine_rx_base(e, id):
 * The address the offset engine_tx_space (engine_rx_data) just gave is
 * relative to: the ring the application writes (reads) now.  0 if ${id}
 * is not a live stream.  Once sealed bytes came for the receive ring
 * (engine_seal_rx), the application reads them from the ring's private
 * copy, which the engine holds and no RDMA can write: engine_rx_base is
 * then its address in this process, not ring memory, valid until the
 * next call into the engine.
 */
uint64_t engine_tx_base(const struct engine *e, uint32_t id);
uint64_t engine_rx_base(const struct engine *e, uint32_t id);

/**
 * engine_rings(e, id, tx, rx):
 * Stream ${id}'s current send and receive rings (the ones new bytes go
 * into); -1 if it is not a live stream.
 */
int engine_rings(const struct engine *e, uint32_t id, struct engine_ring *tx,
    struct engine_ring *rx);

/**
 * engine_keep(e, id):
 * Keep stream ${id}'s bytes until the peer consumed them, so it can be
 * suspended and resumed.  Call right after engine_open or engine_accept.
 * It takes effect if the link can resume and the send ring is at least a
 * quarter of the peer's receive ring (see engine_kept).  Returns 0 or
 * ENGINE_EINVAL.
 */
int engine_keep(struct engine *e, uint32_t id);

/**
 * engine_kept(e, id):
 * True if stream ${id} keeps its bytes (engine_keep took effect).
 */
int engine_kept(const struct engine *e, uint32_t id);

/**
 * engine_abandon_stream(e, id, reason):
 * Give up failed engine ${e}'s suspended stream ${id} alone, as
 * engine_abandon does.  Returns 0, or ENGINE_EINVAL if it is not a
 * suspended stream of ${e}.
 */
int engine_abandon_stream(struct engine *e, uint32_t id, uint16_t reason);

#endif /* !ENGINE_STREAM_H */
