/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <stddef.h>

#include "render.h"
#include "tables.h"

#define NCOLS(c)	((int)(sizeof(c) / sizeof(c[0])))
/* Columns text shows by default, and those only -o shows. */
#define DEF	0
#define WIDE	1

#define S(f, w)	RENDER_COL(struct tables_tunnel, f, RENDER_STR, w)
#define N(f, w)	RENDER_COL(struct tables_tunnel, f, RENDER_NUM, w)
static const struct render_col tunnel_cols[] = {
	S(tunnel, DEF), S(side, DEF), S(address, DEF), S(peer, DEF),
	S(state, DEF), N(streams, DEF), N(max_streams, WIDE), S(link, DEF),
	N(link_failures, WIDE),
	{ "link_down_since", "LINK DOWN", RENDER_SINCE,
	    offsetof(struct tables_tunnel, link_down_since), WIDE },
	/* Last: a message runs as long as it is. */
	S(link_error, DEF),
};
#undef S
#undef N

/* Nanoseconds ${f} of row ${type} as seconds ${key}, headed ${head}. */
#define WAIT(type, key, head, f, w)					\
	{ key, head, RENDER_NS_S, offsetof(type, f), w }

#define S(f, w)	RENDER_COL(struct tables_stream, f, RENDER_STR, w)
#define N(f, w)	RENDER_COL(struct tables_stream, f, RENDER_NUM, w)
#define T(k, h, f, w)	WAIT(struct tables_stream, k, h, f, w)
static const struct render_col stream_cols[] = {
	S(tunnel, DEF), N(stream, DEF), S(side, WIDE), S(address, WIDE),
	S(peer, WIDE), S(identity, WIDE), S(origin, DEF), S(state, DEF),
	N(bytes_in, DEF),
	N(bytes_out, DEF), N(queued, WIDE), N(unacked, WIDE),
	T("credit_wait_s", "CREDIT WAIT", wait_credit_ns, DEF),
	T("sq_wait_s", "SQ WAIT", wait_sq_ns, DEF), N(age_s, WIDE),
};
#undef T
#undef S
#undef N

#define S(f, w)	RENDER_COL(struct tables_link, f, RENDER_STR, w)
#define N(f, w)	RENDER_COL(struct tables_link, f, RENDER_NUM, w)
#define T(k, h, f, w)	WAIT(struct tables_link, k, h, f, w)
static const struct render_col link_cols[] = {
	S(link, WIDE), S(direction, WIDE), S(peer, DEF), S(identity, WIDE),
	S(sealing, WIDE), S(tunnel, DEF), S(state, DEF), S(device, WIDE),
	N(streams, DEF), N(bytes_tx, DEF), N(bytes_rx, DEF),
	N(sq_depth, WIDE), N(inflight, WIDE), N(lanes, WIDE), S(notify, WIDE),
	N(lane0_depth, WIDE), N(lane0_inflight, WIDE), N(lane1_depth, WIDE),
	N(lane1_inflight, WIDE), N(lane0_fences, WIDE), N(lane1_fences, WIDE),
	N(window, WIDE),
	{ "rtt_us", NULL, RENDER_US, offsetof(struct tables_link, rtt_ns),
	    WIDE },
	{ "rate", "RATE B/S", RENDER_NUM, offsetof(struct tables_link, rate),
	    WIDE },
	T("credit_wait_s", "CREDIT WAIT", wait_credit_ns, DEF),
	T("sq_wait_s", "SQ WAIT", wait_sq_ns, DEF),
	N(stall_ring, WIDE), N(stall_msg, WIDE), N(stall_sq, WIDE),
	N(stall_window, WIDE), N(cq_arms, WIDE), N(cq_arms_quiet, WIDE),
	N(ring_bytes, WIDE), N(rings_reused, WIDE), N(ctrl_bytes, WIDE),
	N(private_bytes, WIDE),
	N(suspended, WIDE), S(resume_id, WIDE), N(port, WIDE),
	S(transport, WIDE), N(gid_index, WIDE), S(gid, WIDE),
	S(peer_gid, WIDE), N(path_mtu, WIDE), N(qpn, WIDE),
	N(peer_qpn, WIDE), N(lane1_qpn, WIDE), N(lane1_peer_qpn, WIDE),
	N(worker, WIDE), N(version, WIDE),
	N(traffic_class, WIDE), N(service_level, WIDE),
	{ "rnr_timer_us", "RNR TIMER", RENDER_NUM,
	    offsetof(struct tables_link, rnr_timer), WIDE },
	N(inline_size, WIDE),
	N(priority, WIDE), N(share, WIDE),
	{ "failures", "FAILS", RENDER_NUM,
	    offsetof(struct tables_link, failures), DEF },
	N(failures_total, WIDE),
	{ "down_since", "DOWN", RENDER_SINCE,
	    offsetof(struct tables_link, down_since), DEF },
	{ "retry_wait_ms", "RETRY WAIT", RENDER_NUM,
	    offsetof(struct tables_link, retry_wait), WIDE },
	/* Last: a message runs as long as it is. */
	{ "last_error", "ERROR", RENDER_STR,
	    offsetof(struct tables_link, last_error), DEF },
};
#undef S
#undef N
#undef T

#define S(f, w)	RENDER_COL(struct tables_stat, f, RENDER_STR, w)
#define N(f, w)	RENDER_COL(struct tables_stat, f, RENDER_NUM, w)
static const struct render_col stat_cols[] = {
	S(tunnel, DEF), N(bytes_in, DEF), N(bytes_out, DEF), N(opened, DEF),
	N(active, DEF), N(refused, DEF), N(limited, WIDE), N(denied, WIDE),
	N(failed, DEF), N(credit_stalls, DEF), N(budget_stops_in, WIDE),
	N(budget_stops_out, WIDE), N(suspended, WIDE),
	N(resumes, WIDE), N(resume_failures, WIDE), N(pinned, WIDE),
	N(max_memory, WIDE), N(ring_refusals, WIDE),
	{ "completion_errors_retry_exceeded", "RETRY EXCEEDED", RENDER_NUM,
	    offsetof(struct tables_stat, retry_exceeded), WIDE },
	{ "completion_errors_rnr_retry_exceeded", "RNR EXCEEDED", RENDER_NUM,
	    offsetof(struct tables_stat, rnr_retry_exceeded), WIDE },
	{ "completion_errors_remote", "REMOTE ERRORS", RENDER_NUM,
	    offsetof(struct tables_stat, remote_errors), WIDE },
	{ "completion_errors_local", "LOCAL ERRORS", RENDER_NUM,
	    offsetof(struct tables_stat, local_errors), WIDE },
	S(link, DEF),
};
#undef S
#undef N

/* A table's columns, checked against what render keeps. */
#define INIT(t, cols) do {						\
	_Static_assert(NCOLS(cols) <= RENDER_COLS_MAX,			\
	    "more columns than RENDER_COLS_MAX");			\
	render_tab_init((t), (cols), NCOLS(cols));			\
} while (0)

void
tables_tunnels(struct render_tab *t)
{

	INIT(t, tunnel_cols);
}

void
tables_streams(struct render_tab *t)
{

	INIT(t, stream_cols);
}

void
tables_links(struct render_tab *t)
{

	INIT(t, link_cols);
}

void
tables_stats(struct render_tab *t)
{

	INIT(t, stat_cols);
}

void
tables_tunnel_down(struct render_buf *o, const struct tables_tunnel *r,
    uint64_t now_ms)
{
	char ago[32];

	render_printf(o, "tunnel %s: link to %s %s", r->tunnel,
	    r->peer != NULL && r->peer[0] != '\0' ? r->peer : "its peer",
	    r->link != NULL && r->link[0] != '\0' ? r->link : "down");
	if (r->link_down_since != RENDER_BLANK)
		render_printf(o, ", not up for %s", render_duration(ago,
		    sizeof(ago), now_ms > r->link_down_since ? now_ms -
		    r->link_down_since : 0));
	if (r->link_failures != RENDER_BLANK && r->link_failures > 0)
		render_printf(o, ", %llu failure%s in a row",
		    (unsigned long long)r->link_failures,
		    r->link_failures == 1 ? "" : "s");
	if (r->link_error != NULL && r->link_error[0] != '\0')
		render_printf(o, ": %s", r->link_error);
	render_printf(o, "\n");
}
