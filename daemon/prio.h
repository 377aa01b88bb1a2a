/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * prio: tunnels' priorities on a shared device.
 *
 * Each tunnel's link is its own queue pair, and a device (with the wire
 * behind it and the workers that feed it) serves its queue pairs in turn:
 * a bulk link with a deep send queue makes every packet of a latency
 * tunnel's link wait behind its own.  So a link whose tunnel has a lower
 * priority than another tunnel on the same device that carried bytes in
 * the last PRIO_SPAN_MS keeps a share of its send window in proportion,
 * priority / highest (engine_window_share, per mille), and the full window
 * once the higher tunnel has been quiet that long.  Tunnels of equal
 * priority (the default) never restrain each other.
 *
 * A table per daemon: one row per device (PRIO_DEVS at most; links on
 * further devices are never restrained), one stamp per priority.  Rows
 * are added in exclusive turns; stamps are atomic, so links on any worker
 * may mark and read them in their own turns.
 */
#ifndef PRIO_H
#define PRIO_H

#include <stdint.h>

#define PRIO_LOWEST	1
#define PRIO_HIGHEST	16
#define PRIO_DEFAULT	4
#define PRIO_DEVS	8
#define PRIO_SPAN_MS	200
#define PRIO_NAME_LEN	64

struct prio_table {
	struct prio_dev {
		char name[PRIO_NAME_LEN];	/* excl: set when added */
		/* When a link of each priority last had work: atomic. */
		uint64_t seen[PRIO_HIGHEST + 1];
		/* The highest priority ever marked (0: none), so that a
		   link looks only at the stamps above its own that can be
		   set: none, while every tunnel has the default.  Atomic;
		   it only grows. */
		unsigned top;
	} dev[PRIO_DEVS];
	unsigned ndev;			/* excl */
};

/**
 * prio_dev(t, device):
 * The row of ${device} (a verbs device name) in ${t}, added if new; -1 if
 * the table is full.  Exclusive turns only.
 */
int prio_dev(struct prio_table *t, const char *device);

/**
 * prio_share(t, dev, prio, busy, now_ms):
 * A link of priority ${prio} on row ${dev} (-1: none) has work outstanding
 * if ${busy}: mark it at ${now_ms}, and return the share of its window it
 * may use, in per mille (1000: all).
 */
uint32_t prio_share(struct prio_table *t, int dev, unsigned prio, int busy,
    uint64_t now_ms);

#endif /* !PRIO_H */
