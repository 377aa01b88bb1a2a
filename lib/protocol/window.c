/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include <string.h>

#include "window.h"

/* What the link learned it needs, and this link's share of it. */
static void
resize(struct window *w)
{
	uint64_t lo = (uint64_t)w->chunk * WINDOW_SHARE_MIN_CHUNKS;

	w->cap = w->learned * w->share / 1000;
	if (w->cap < lo)
		w->cap = lo;
}

void
window_init(struct window *w, uint32_t chunk, uint64_t min, uint64_t max)
{

	memset(w, 0, sizeof(*w));
	w->chunk = chunk != 0 ? chunk : WINDOW_CHUNK;
	w->min = min != 0 ? min : (uint64_t)w->chunk * WINDOW_MIN_CHUNKS;
	if (w->min < (uint64_t)w->chunk * WINDOW_SHARE_MIN_CHUNKS)
		w->min = (uint64_t)w->chunk * WINDOW_SHARE_MIN_CHUNKS;
	w->max = max != 0 ? max : WINDOW_MAX;
	if (w->max < w->min)
		w->max = w->min;
	w->share = 1000;
	w->learned = w->min;
	resize(w);
}

void
window_clock(struct window *w, uint64_t now)
{

	if (now > w->now)
		w->now = now;
}

int
window_allows(const struct window *w, uint64_t n)
{

	return (w->inflight == 0 || w->inflight + n <= w->cap);
}

int
window_signal(const struct window *w, uint64_t n)
{

	return (w->unsig + n >= w->cap / 2 ||
	    w->inflight + n + w->chunk > w->cap);
}


void
window_post(struct window *w, uint64_t n, int signalled,
    struct window_mark *mark)
{

	/* From an empty queue the rate is measured from now on. */
	if (w->inflight == 0)
		w->delivered_at = w->now;
	w->inflight += n;
	if (!signalled) {
		w->unsig += n;
		return;
	}
	w->unsig = 0;
	mark->posted = w->now;
	mark->delivered = w->delivered;
	mark->delivered_at = w->delivered_at;
}

void
window_done(struct window *w, uint64_t n)
{

	w->inflight -= n < w->inflight ? n : w->inflight;
	if (n == 0)
		return;
	w->delivered += n;
	w->delivered_at = w->now;
}

/* The wire may have run dry: twice the window, up to the maximum. */
static void
grow(struct window *w)
{

	w->learned = w->learned * 2 > w->max ? w->max : w->learned * 2;
}

/* A new epoch of measuring starts now. */
static void
epoch_start(struct window *w)
{

	w->ep_at = w->now;
	w->ep_bytes = w->delivered;
	w->ep_starved = 0;
}

/*
 * An epoch ends, the window having carried ${rate} bytes a second while
 * data waited all along.  After a doubling, a rate that did not grow by
 * a tenth says the wire was already busy: the doubling only queued, so
 * the window goes back and stays for WINDOW_HOLD epochs.  Otherwise an
 * epoch in which the wire ran dry doubles it (and measures again), even
 * right after a doubling that paid.
 */
static void
epoch_end(struct window *w, uint64_t rate)
{

	if (w->probe_from != 0 && rate < w->probe_rate + w->probe_rate / 10) {
		w->learned = w->probe_from;
		w->hold = WINDOW_HOLD;
		w->reverts++;
		w->probe_from = 0;
	} else if (w->ep_starved && w->hold == 0 && w->learned < w->max) {
		w->probe_from = w->learned;
		w->probe_rate = rate;
		grow(w);
	} else {
		w->probe_from = 0;
	}
	if (w->hold > 0)
		w->hold--;
	epoch_start(w);
}

/*
 * A completion came while bytes were ${waiting} to be posted (or not:
 * then the application, or ring credit, limited the link, and the epoch
 * starts again).  Nothing outstanding now means the wire may have run dry
 * before this side saw the completion and posted more.  An epoch lasts
 * until WINDOW_EPOCH windows were delivered; without a clock there is no
 * rate to check, and a dry wire doubles the window at once.  If half the
 * window was still outstanding, the wire never came near running dry;
 * after WINDOW_CALM such completions in a row the window gives back an
 * eighth, down to its floor.
 */
static void
learn(struct window *w, int waiting)
{

	if (!waiting) {
		epoch_start(w);
		return;
	}
	if (w->inflight == 0) {
		w->ep_starved = 1;
		w->calm = 0;
		if (w->now == 0)
			grow(w);
	} else if (w->inflight >= w->cap / 2 && ++w->calm >= WINDOW_CALM) {
		w->learned -= w->learned / 8;
		if (w->learned < w->min)
			w->learned = w->min;
		w->calm = 0;
	}
	if (w->now > w->ep_at && w->ep_at != 0 &&
	    w->delivered - w->ep_bytes >= WINDOW_EPOCH * w->learned)
		epoch_end(w, (uint64_t)((unsigned __int128)(w->delivered -
		    w->ep_bytes) * 1000000000u / (w->now - w->ep_at)));
	else if (w->ep_at == 0)
		epoch_start(w);
}

void
window_sample(struct window *w, const struct window_mark *mark, int waiting)
{
	uint64_t rtt, span, rate;

	learn(w, waiting);
	resize(w);
	/* Without a clock, or one read in the same instant: no sample. */
	if (w->now == 0 || mark->posted == 0 || w->now <= mark->posted)
		return;
	rtt = w->now - mark->posted;
	if (w->rtt_min == 0 || rtt <= w->rtt_min ||
	    w->now - w->rtt_at > WINDOW_RTT_SPAN_NS) {
		w->rtt_min = rtt;
		w->rtt_at = w->now;
	}
	/*
	 * The rate over the span from the delivery before this request went
	 * out to now: what the queue moved while the request waited in it.
	 */
	if (mark->delivered_at != 0 && w->delivered > mark->delivered &&
	    w->now > mark->delivered_at) {
		span = w->now - mark->delivered_at;
		rate = (uint64_t)((unsigned __int128)(w->delivered -
		    mark->delivered) * 1000000000u / span);
		if (rate >= w->rate_max ||
		    w->now - w->rate_at > WINDOW_RATE_SPAN_NS) {
			w->rate_max = rate;
			w->rate_at = w->now;
		}
	}
}

void
window_share(struct window *w, uint32_t permille)
{

	w->share = permille < 1 ? 1 : permille > 1000 ? 1000 : permille;
	resize(w);
}
