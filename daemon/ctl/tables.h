/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * tables: the columns of rstreamctl's tables, one line each (render.h):
 * each table is a row struct of plain values, which the control socket
 * fills from the daemon, and its columns, which say what text shows by
 * default (what an operator acts on, within 120 columns) and what only
 * with -o wide.  Pure: no daemon state, so the widths are unit-tested.
 */
#ifndef TABLES_H
#define TABLES_H

#include <stdint.h>

#include "render.h"

/* A number's cells are RENDER_BLANK where it does not apply. */
struct tables_tunnel {
	const char *tunnel, *side, *address, *peer, *state;
	uint64_t streams, max_streams;
	const char *link;
	/* A client tunnel's link while it is not up (as tables_link's
	 * failures, down_since, last_error). */
	uint64_t link_failures, link_down_since;
	const char *link_error;
};

struct tables_stream {
	const char *tunnel;
	uint64_t stream;
	const char *side, *address, *peer, *origin, *state;
	const char *identity;		/* the link's peer's, "" none */
	uint64_t bytes_in, bytes_out, age_s;
	/* Its sending side (engine_stream_stats): bytes not yet written,
	   bytes written and not yet consumed, and its waits. */
	uint64_t queued, unacked, wait_credit_ns, wait_sq_ns;
};

struct tables_link {
	const char *link, *direction, *peer, *tunnel, *state, *device;
	/* The identity the peer proved ("": none) and the AEAD that seals
	   the link ("": in clear). */
	const char *identity, *sealing;
	uint64_t streams, bytes_tx, bytes_rx;
	/* Its send queue (engine_stats): work requests and data bytes
	   posted, the window, the estimates it comes from (0: none yet),
	   and the streams' waits. */
	uint64_t sq_depth, inflight, window, rtt_ns, rate;
	uint64_t wait_credit_ns, wait_sq_ns;
	uint64_t stall_ring, stall_msg, stall_sq, stall_window;
	uint64_t ring_bytes, rings_reused, ctrl_bytes, suspended;
	uint64_t cq_arms, cq_arms_quiet;
	uint64_t private_bytes;	/* sealed: receive rings' private copies */
	const char *resume_id;
	uint64_t port;
	const char *transport;
	uint64_t gid_index;
	const char *gid, *peer_gid;
	uint64_t path_mtu, qpn, peer_qpn, worker, version;
	uint64_t lane1_qpn, lane1_peer_qpn;	/* blank: one lane */
	uint64_t traffic_class, service_level, priority, share;
	uint64_t rnr_timer;		/* us */
	uint64_t inline_size;		/* bytes a WR carries inline */
	/* Its lanes (queue pairs), and each one's work requests and data
	   bytes posted, not yet known complete (blank: not up, or a lane it
	   does not run). */
	uint64_t lanes, lane0_depth, lane0_inflight;
	/* How a WRITE's data is announced: "imm" (WRITE WITH IMMEDIATE) or
	   "send" (iWARP: a SEND after it); blank: not up. */
	const char *notify;
	uint64_t lane1_depth, lane1_inflight;
	/* FENCEs each lane sent (iWARP; blank as above). */
	uint64_t lane0_fences, lane1_fences;
	/* While it is not up: a client link's failures since it was last up
	 * and in all, since when (ms since the epoch), and why the last
	 * attempt failed (or the link ended); retrying, the back-off before
	 * the next attempt (ms). */
	uint64_t failures, failures_total, down_since, retry_wait;
	const char *last_error;
};

struct tables_stat {
	const char *tunnel;
	uint64_t bytes_in, bytes_out, opened, active, refused, limited;
	uint64_t denied, failed, credit_stalls, budget_stops_in;
	uint64_t budget_stops_out, suspended, resumes;
	uint64_t resume_failures, pinned, max_memory, ring_refusals;
	/* A client tunnel's link: times it ended on an error completion,
	   by status (blank: a target tunnel). */
	uint64_t retry_exceeded, rnr_retry_exceeded, remote_errors;
	uint64_t local_errors;
	const char *link;
};

/**
 * tables_tunnels(t) / tables_streams(t) / tables_links(t) /
 * tables_stats(t):
 * Make ${t} an empty table of tunnels, streams, links or tunnels'
 * counters; its rows are struct tables_tunnel, tables_stream,
 * tables_link or tables_stat (render_tab_add).
 */
void tables_tunnels(struct render_tab *t);
void tables_streams(struct render_tab *t);
void tables_links(struct render_tab *t);
void tables_stats(struct render_tab *t);

/**
 * tables_tunnel_down(o, r, now_ms):
 * Append one line about client tunnel ${r}, whose link is not up, as
 * rstreamctl check says it: "tunnel pg: link to 192.0.2.20:7471
 * retrying, not up for 3m12s, 5 failures in a row: REASON".  ${now_ms}
 * is the time, ms since the epoch, its link_down_since counts back from.
 */
void tables_tunnel_down(struct render_buf *o, const struct tables_tunnel *r,
    uint64_t now_ms);

#endif /* !TABLES_H */
