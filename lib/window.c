/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include <string.h>

#include "window.h"

/* The estimate, then this link's share of it. */
static void
resize(struct window *w)
{
	uint64_t est = w->max, lo;
	unsigned __int128 bdp;

	if (w->rtt_min != 0 && w->rate_max != 0) {
		bdp = (unsigned __int128)w->rate_max * w->rtt_min /
		    1000000000u * WINDOW_GAIN;
		lo = (uint64_t)w->chunk * WINDOW_MIN_CHUNKS;
		est = bdp < lo ? lo : bdp > w->max ? w->max : (uint64_t)bdp;
	}
	w->cap = est * w->share / 1000;
	lo = (uint64_t)w->chunk * WINDOW_SHARE_MIN_CHUNKS;
	if (w->cap < lo)
		w->cap = lo;
}

void
window_init(struct window *w, uint32_t chunk, uint64_t max)
{

	memset(w, 0, sizeof(*w));
	w->chunk = chunk != 0 ? chunk : WINDOW_CHUNK;
	w->max = max != 0 ? max : WINDOW_MAX;
	if (w->max < (uint64_t)w->chunk * WINDOW_MIN_CHUNKS)
		w->max = (uint64_t)w->chunk * WINDOW_MIN_CHUNKS;
	w->share = 1000;
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

	return (w->unsig + n >= w->cap / 2);
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

void
window_sample(struct window *w, const struct window_mark *mark)
{
	uint64_t rtt, span, rate;

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
	resize(w);
}

void
window_share(struct window *w, uint32_t permille)
{

	w->share = permille < 1 ? 1 : permille > 1000 ? 1000 : permille;
	resize(w);
}
