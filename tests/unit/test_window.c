/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/protocol/window: how the send window learns from completions,
 * fed by hand so each rule is seen alone.
 */
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "window.h"

/*
 * One round: ${n} bytes go out as one signalled WRITE at the clock ${*now}
 * and complete ${ns} later, while data waits; the wire ran dry (nothing
 * outstanding at the completion) if ${dry}, else a chunk is still out.
 */
static void
round_trip(struct window *w, uint64_t *now, uint64_t n, uint64_t ns, int dry)
{
	struct window_mark m;

	if (!dry)
		window_post(w, w->chunk, 0, &m);
	window_post(w, n, 1, &m);
	if (*now != 0)
		window_clock(w, *now += ns);
	window_done(w, n);
	window_sample(w, &m, 1);
	if (!dry)
		window_done(w, w->chunk);
}

/* Rounds until ${w} delivered an epoch's worth at ${rate} B/s, dry. */
static void
epoch(struct window *w, uint64_t *now, uint64_t rate)
{
	uint64_t start = w->learned, got = 0;

	while (got < WINDOW_EPOCH * start + start) {
		round_trip(w, now, start, start * 1000000000 / rate, 1);
		got += start;
	}
}

int
main(void)
{
	struct window w;
	struct window_mark m;
	uint64_t now = 1000, floor = 4 * WINDOW_CHUNK, k;

	window_init(&w, 0, 0, 0);
	ok(w.cap == floor && w.max == WINDOW_MAX,
	    "it starts at %d chunks, at most %u bytes", WINDOW_MIN_CHUNKS,
	    WINDOW_MAX);

	/* A wire that runs dry, and goes faster with a larger window. */
	window_clock(&w, now);
	epoch(&w, &now, 100000000);
	ok(w.learned == 2 * floor, "a dry epoch doubles it (%llu)",
	    (unsigned long long)w.learned);
	epoch(&w, &now, 200000000);
	ok(w.learned == 4 * floor && w.reverts == 0, "twice the rate: kept, "
	    "and doubled again (%llu)", (unsigned long long)w.learned);

	/* The wire is full: the next doubling brings no more and goes. */
	epoch(&w, &now, 200000000);
	ok(w.learned == 2 * floor && w.reverts == 1 && w.hold > 0,
	    "the same rate again: back to %llu, held (%llu)",
	    (unsigned long long)(2 * floor), (unsigned long long)w.learned);
	for (k = 0; k < WINDOW_HOLD - 1; k++)
		epoch(&w, &now, 200000000);
	ok(w.learned == 2 * floor, "no doubling while held (%llu)",
	    (unsigned long long)w.learned);

	/* Completions that find half of it out give an eighth back. */
	for (k = 0; k < WINDOW_CALM; k++) {
		window_post(&w, w.cap, 0, &m);
		window_post(&w, w.chunk, 1, &m);
		window_clock(&w, now += 1000);
		window_done(&w, w.chunk);
		window_sample(&w, &m, 1);
		window_done(&w, w.cap);
	}
	ok(w.learned == 2 * floor - 2 * floor / 8, "16 calm completions "
	    "give an eighth back (%llu)", (unsigned long long)w.learned);

	/* Held back by the application or by credit: nothing is learned. */
	k = w.learned;
	for (now = 0; now < 64; now++) {
		window_post(&w, w.chunk, 1, &m);
		window_done(&w, w.chunk);
		window_sample(&w, &m, 0);
	}
	ok(w.learned == k, "a link with nothing waiting learns nothing");

	/* No clock: no rate to check, a dry wire doubles it at once. */
	window_init(&w, 4096, 0, 1u << 20);
	now = 0;
	round_trip(&w, &now, 4096, 0, 1);
	ok(w.learned == 8 * 4096, "without a clock one dry completion "
	    "doubles it (%llu)", (unsigned long long)w.learned);
	for (k = 0; k < 16; k++)
		round_trip(&w, &now, 4096, 0, 1);
	ok(w.learned == 1u << 20 && w.cap == 1u << 20,
	    "up to the maximum and no further (%llu)",
	    (unsigned long long)w.cap);
	window_share(&w, 250);
	ok(w.cap == 256u << 10, "a share of 250 keeps a quarter (%llu)",
	    (unsigned long long)w.cap);
	window_share(&w, 1);
	ok(w.cap == 2 * 4096, "a tiny share keeps %d chunks",
	    WINDOW_SHARE_MIN_CHUNKS);

	/* The floor and the maximum hold each other. */
	window_init(&w, 65536, 1, 1);
	ok(w.min == 2 * 65536 && w.max == 2 * 65536 && w.cap == 2 * 65536,
	    "a floor below two chunks and a maximum below the floor are "
	    "raised (%llu)", (unsigned long long)w.cap);
	ok(window_allows(&w, 65536) && (window_post(&w, 200000, 0, &m),
	    !window_allows(&w, 1)), "a full window allows nothing more");
	return (tap_done());
}
