/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * linkstat: a link as metrics reads it, from a shared turn of the
 * daemon's loop while the link's own worker runs (Threads in loop.h):
 * the link's excl fields (its tunnel, peer, state, device), and the
 * figures of its engine and ring memory, which are its loop's alone, as
 * that loop last published them.  The loop publishes after every flush
 * (a few relaxed stores: no lock, nothing a worker waits for; see
 * link_int.h's link_pub), so the figures are at most one turn of the
 * link behind, and a scrape neither stops a worker nor reads an engine
 * another thread is changing.  Each figure is exact; taken together,
 * they may come from two flushes.
 */
#ifndef LINKSTAT_H
#define LINKSTAT_H

#include <stdint.h>

struct dlink;
struct hca_info;

/* Longest peer label, with its NUL: a longer list is cut short. */
#define LINKSTAT_PEER_MAX	512

/* A link, for metrics. */
struct linkstat {
	const char *tunnel;		/* a client link's tunnel; "" */
	const char *direction;		/* "out" (a client link) or "in" */
	/*
	 * Whom it links to, as stable as the configuration: a client
	 * link's peer setting as written (a list: its entries joined by
	 * ","); an incoming link's peer's identity (its name in peers)
	 * once proved, else its address without the port.
	 */
	char peer[LINKSTAT_PEER_MAX];
	char address[64];		/* the address it connects to (or last
					   tried), or its peer's, port
					   included; "" */
	int up;
	const struct hca_info *hca;	/* where it runs; NULL unless up */
	const char *identity;		/* the peer's proved identity; "" */
	const char *sealing;		/* its AEAD; NULL: in clear */
	/* With up, as its loop last published them: engine_stats' and
	 * verbs_mem_stats' figures of these names, and its version. */
	uint64_t stall_ring, stall_msg, stall_sq;
	uint64_t ring_grows, ring_shrinks, ring_refused;
	uint64_t sq_depth, inflight, window;
	uint64_t wait_credit_ns, wait_sq_ns, rtt_ns, version;
	uint64_t pinned, pooled, control, registered, reused;
	/* Its lanes (engine_lanes), and each one's work requests and data
	 * bytes posted, not yet known complete, and FENCEs sent
	 * (engine_stats' lane[]). */
	uint64_t lanes, lane_depth[2], lane_inflight[2], lane_fences[2];
};

/**
 * linkstat_read(dl, ls):
 * Describe ${dl} in ${ls}, from any turn of the daemon's loop.  ${ls}
 * points into ${dl} and its tunnel's configuration: it holds until the
 * next exclusive turn.
 */
void linkstat_read(const struct dlink *dl, struct linkstat *ls);

#endif /* !LINKSTAT_H */
