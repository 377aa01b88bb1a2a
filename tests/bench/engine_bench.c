/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * engine_bench: the engine's cost per byte, through the in-memory fabric.
 *
 * The application side only commits and consumes (it does not copy), so
 * the one copy left per byte is the fabric's simulated DMA; comparing with
 * "-m" (a plain memcpy of the same bytes) shows what the engine adds.
 *
 * Usage: engine_bench -s STREAMS -w WRITE_SIZE -b MIB [-m]
 * Prints MiB/s (wall clock).  tests/bench/engine-bench runs it under
 * callgrind for repeatable instruction counts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "engine_stream.h"
#include "fabric.h"

#define RING	(256u << 10)

struct bs {
	uint8_t *tx, *rx;
	uint32_t id;
	int open;
};

static struct bs opener[64], acceptor[64];
static int naccepted;

static void
mkrings(struct fab *f, int side, struct bs *s, struct engine_ring *tx,
    struct engine_ring *rx)
{

	fab_rings(f, side, RING, RING, 5, &s->tx, &s->rx, tx, rx);
}

static void
events(struct fab *f, int i)
{
	struct engine_event ev;
	struct engine_ring tx, rx;
	struct bs *s;

	while (engine_next_event(f->side[i].e, &ev)) {
		if (ev.flags & ENGINE_EV_INCOMING) {
			s = &acceptor[naccepted++];
			mkrings(f, i, s, &tx, &rx);
			s->id = ev.stream;
			engine_accept(f->side[i].e, ev.stream, &tx, &rx, s);
		} else if (ev.flags & ENGINE_EV_OPENED) {
			((struct bs *)ev.user)->open = 1;
		}
	}
}

static void
flow(struct fab *f)
{
	int i;

	for (i = 0; i < 2; i++) {
		fab_pump(f, i);
		while (fab_deliver(f, i) > 0)
			;
	}
	for (i = 0; i < 2; i++) {
		while (fab_complete(f, i) > 0)
			;
		fab_pump(f, i);
		events(f, i);
	}
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

int
main(int argc, char **argv)
{
	struct engine_conf c;
	struct engine_ring tx, rx;
	struct fab f;
	uint64_t total, moved = 0;
	uint32_t nstreams = 1, wsize = 65536, off, n;
	int ch, k, memcpy_only = 0;
	double mib = 64, t0, t;

	while ((ch = getopt(argc, argv, "s:w:b:m")) != -1) {
		switch (ch) {
		case 's':
			nstreams = (uint32_t)atoi(optarg);
			break;
		case 'w':
			wsize = (uint32_t)atoi(optarg);
			break;
		case 'b':
			mib = atof(optarg);
			break;
		case 'm':
			memcpy_only = 1;
			break;
		default:
			return (2);
		}
	}
	if (nstreams < 1 || nstreams > 64 || wsize < 1)
		return (2);
	total = (uint64_t)(mib * 1048576);

	if (memcpy_only) {
		uint8_t *a = calloc(1, RING), *b = calloc(1, RING);

		t0 = now();
		for (moved = 0; moved < total; moved += wsize) {
			off = (uint32_t)(moved % RING);
			n = wsize < RING - off ? wsize : RING - off;
			memcpy(b + off, a + off, n);
		}
		t = now() - t0;
		printf("memcpy: %.0f MiB/s\n", mib / t);
		free(a);
		free(b);
		return (0);
	}

	memset(&c, 0, sizeof(c));
	c.sq_size = 256;
	c.rq_size = 256;
	c.max_streams = 64;
	c.inline_size = 0;
	if (fab_init(&f, &c, &c) != 0) {
		fprintf(stderr, "fab_init: %s\n", f.err);
		return (1);
	}
	for (k = 0; k < (int)nstreams; k++) {
		mkrings(&f, 0, &opener[k], &tx, &rx);
		opener[k].id = (uint32_t)engine_open(f.side[0].e, "bench", &tx,
		    &rx, &opener[k]);
	}
	flow(&f);
	flow(&f);

	t0 = now();
	while (moved < total) {
		for (k = 0; k < (int)nstreams; k++) {
			n = engine_tx_space(f.side[0].e, opener[k].id, &off);
			if (n > wsize)
				n = wsize;
			if (n > 0)
				engine_tx_commit(f.side[0].e, opener[k].id, n);
		}
		flow(&f);
		for (k = 0; k < naccepted; k++) {
			while ((n = engine_rx_data(f.side[1].e, acceptor[k].id,
			    &off)) > 0) {
				engine_rx_consume(f.side[1].e, acceptor[k].id,
				    n);
				moved += n;
			}
		}
		flow(&f);
		if (f.failed || engine_error(f.side[0].e)) {
			fprintf(stderr, "failed: %s\n", f.failed ? f.err :
			    engine_error(f.side[0].e));
			return (1);
		}
	}
	t = now() - t0;
	printf("engine: %u streams, %u-byte writes: %.0f MiB/s, "
	    "%llu WRs\n", (unsigned)nstreams, (unsigned)wsize,
	    (double)moved / 1048576 / t,
	    (unsigned long long)f.side[0].wrs_posted);
	fab_free(&f);
	for (k = 0; k < 64; k++) {
		free(opener[k].tx);
		free(opener[k].rx);
		free(acceptor[k].tx);
		free(acceptor[k].rx);
	}
	return (0);
}
