/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * window: how many data bytes a link keeps on its send queue, sans-I/O.
 *
 * A send queue is a FIFO: whatever a link posted goes on the wire before
 * what it posts next, so every byte queued there is a byte a newly ready
 * stream, a credit update or an open waits behind.  A link needs only
 * enough bytes outstanding to keep the wire busy until this side has
 * seen a completion and posted more: the bandwidth-delay product, where
 * the delay includes this side's own time to react.  The window measures
 * it by the link's own completions (see learn() in window.c), in epochs
 * of WINDOW_EPOCH windows delivered while data waited to be posted:
 *
 *   - an epoch in which a completion found nothing outstanding (the wire
 *     may have run dry before this side reacted) doubles the window;
 *   - if the next epoch's delivery rate is not a tenth higher, the wire
 *     was busy already and the doubling only queued: the window goes back
 *     and does not grow for WINDOW_HOLD epochs;
 *   - completions that keep finding half of it outstanding give an eighth
 *     back, down to the floor (WINDOW_MIN_CHUNKS chunks by default).
 *
 * So a busy daemon, slow to react, learns a larger window; a quick one, or
 * one whose streams are held back by ring credit, keeps a small one.
 * Without the embedder's clock there is no rate to check, and a dry wire
 * doubles the window at once.
 *
 * Why not rtt times rate, as BBR sizes TCP's window: a link that streams
 * without pause never sees its send queue empty, so every completion
 * time it measures includes the queue of its own window, and a window
 * sized from it grows with itself.  The smallest recent completion time
 * (rtt) and the largest recent delivery rate are still measured, with
 * the embedder's clock, for people to read.
 *
 * A link whose tunnel shares the device with busier tunnels of higher
 * priority may be given a smaller share of its window (window_share),
 * down to WINDOW_SHARE_MIN_CHUNKS chunks.
 *
 * Progress: a WRITE is allowed when it fits the window, or when nothing
 * is outstanding.  Whoever posts asks window_signal whether a WRITE must
 * ask for a completion: when the bytes since the last signalled one reach
 * half the window, so a full window always holds a signalled work
 * request whose completion opens it again, and when it fills the window,
 * so that the completion that empties it says so.  (The window may
 * shrink after bytes went out under a larger one; the engine then lets
 * one more WRITE through, signalled, if none that is signalled is
 * outstanding.)
 */
#ifndef WINDOW_H
#define WINDOW_H

#include <stdint.h>

#define WINDOW_CHUNK		16384	/* default largest WRITE */
#define WINDOW_MAX		(8u << 20)	/* default largest window */
#define WINDOW_MIN_CHUNKS	4
#define WINDOW_SHARE_MIN_CHUNKS	2
#define WINDOW_RTT_SPAN_NS	(10ull * 1000000000)	/* rtt_min's memory */
#define WINDOW_RATE_SPAN_NS	(1ull * 1000000000)	/* rate_max's memory */
#define WINDOW_CALM		16	/* calm completions before a shrink */
#define WINDOW_EPOCH		4	/* windows delivered per epoch */
#define WINDOW_HOLD		8	/* epochs without growth after a revert */

/* What a signalled work request remembers from when it was posted. */
struct window_mark {
	uint64_t posted;	/* clock when posted */
	uint64_t delivered;	/* bytes delivered then */
	uint64_t delivered_at;	/* clock of that delivery */
};

struct window {
	uint64_t now;		/* the embedder's clock in ns; 0: none */
	uint64_t inflight;	/* data bytes posted, not known complete */
	uint64_t unsig;		/* bytes posted since the last signalled WR */
	uint64_t delivered;	/* data bytes known complete, ever */
	uint64_t delivered_at;	/* clock when delivered last grew */
	uint64_t rtt_min, rtt_at;	/* smallest recent rtt, when seen */
	uint64_t rate_max, rate_at;	/* largest recent rate (B/s), when */
	uint64_t cap;		/* the window now */
	uint64_t learned;	/* what completions taught (see learn) */
	uint64_t reverts;	/* doublings undone: they only queued */
	unsigned calm;		/* calm completions in a row */
	/* The epoch under way: since when, delivered then, ran dry. */
	uint64_t ep_at, ep_bytes;
	int ep_starved;
	/* A doubling on trial: the window and rate before it (0: none). */
	uint64_t probe_from, probe_rate;
	unsigned hold;		/* epochs before the next doubling */
	uint64_t min, max;	/* the embedder's bounds */
	uint32_t chunk;		/* the largest WRITE */
	uint32_t share;		/* per mille of the estimate this link uses */
};

/**
 * window_init(w, chunk, min, max):
 * An empty window for WRITEs of at most ${chunk} bytes (0: WINDOW_CHUNK),
 * at least ${min} (0: WINDOW_MIN_CHUNKS chunks; never below
 * WINDOW_SHARE_MIN_CHUNKS; where it starts) and at most ${max} bytes
 * outstanding (0: WINDOW_MAX; never below ${min}).
 */
void window_init(struct window *w, uint32_t chunk, uint64_t min,
    uint64_t max);

/**
 * window_clock(w, now):
 * The embedder's monotonic clock reads ${now} ns (never 0; a clock that
 * goes back is ignored).
 */
void window_clock(struct window *w, uint64_t now);

/**
 * window_allows(w, n):
 * True if ${n} more data bytes may go on the send queue now.
 */
int window_allows(const struct window *w, uint64_t n);

/**
 * window_signal(w, n):
 * True if a WRITE of ${n} bytes posted now must ask for a completion.
 */
int window_signal(const struct window *w, uint64_t n);

/**
 * window_post(w, n, signalled, mark):
 * ${n} data bytes (0 for a SEND) went on the send queue; if
 * ${signalled}, fill ${mark} for window_sample.
 */
void window_post(struct window *w, uint64_t n, int signalled,
    struct window_mark *mark);

/**
 * window_done(w, n):
 * A work request of ${n} data bytes is known complete.
 */
void window_done(struct window *w, uint64_t n);

/**
 * window_sample(w, mark, waiting):
 * The signalled work request posted with ${mark} completed (after
 * window_done for it and all before it), while data was ${waiting} to be
 * posted (or not): learn from what is still outstanding, take its rtt and
 * delivery rate, and size the window again.
 */
void window_sample(struct window *w, const struct window_mark *mark,
    int waiting);

/**
 * window_share(w, permille):
 * Use ${permille} (1 to 1000) of the estimated window from now on.
 */
void window_share(struct window *w, uint32_t permille);

#endif /* !WINDOW_H */
