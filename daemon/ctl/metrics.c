/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "hca.h"
#include "link.h"
#include "linkstat.h"
#include "loop.h"
#include "metrics.h"
#include "procstat.h"
#include "render.h"
#include "rsd.h"
#include "tunnel.h"
#include "verbs.h"

#define NITEMS(a)	((int)(sizeof(a) / sizeof(a[0])))

/*
 * Everything here runs in any turn of the daemon's loop (metrics.h): it
 * reads excl fields as they are, and atomic ones with atomic loads.
 */
static uint64_t
ld64(const uint64_t *p)
{

	return (__atomic_load_n(p, __ATOMIC_RELAXED));
}

/* Seconds to the millisecond, from milliseconds. */
static void
ms_as_s(struct render_buf *o, uint64_t ms)
{

	render_printf(o, "%llu.%03llu", (unsigned long long)(ms / 1000),
	    (unsigned long long)(ms % 1000));
}

/* Seconds to the nanosecond, from nanoseconds. */
static void
ns_as_s(struct render_buf *o, uint64_t ns)
{

	render_printf(o, "%llu.%09llu", (unsigned long long)(ns / 1000000000),
	    (unsigned long long)(ns % 1000000000));
}

/*
 * A draining tunnel whose name is configured again shares its counters
 * with the new one: show them once, under the new one.
 */
int
metrics_counted_elsewhere(struct rsd *d, const struct tun *t)
{

	return (t->draining && tunnel_find(d, t->c->name) != NULL);
}

/* ------------------------------------------------------------- tunnels */

/* Where a tunnel metric's value comes from. */
enum tm_kind {
	TM_U64,		/* a uint64_t in struct tun_stats */
	TM_U32,		/* a uint32_t there */
	TM_MAX_MEMORY	/* the tunnel's max_memory, in bytes */
};

/* The per-tunnel metrics of struct tun_stats, in the order they show. */
static const struct tunnel_metric_def {
	const char *name, *type, *help;
	size_t off;			/* in struct tun_stats */
	enum tm_kind kind;
} tunnel_metrics[] = {
	{ "rstreamd_tunnel_streams_opened_total", "counter",
	    "Streams opened.", offsetof(struct tun_stats, opened), TM_U64 },
	{ "rstreamd_tunnel_streams_active", "gauge",
	    "Streams open now.", offsetof(struct tun_stats, active), TM_U32 },
	{ "rstreamd_tunnel_streams_failed_total", "counter",
	    "Streams that ended with a reset or an error.",
	    offsetof(struct tun_stats, failed), TM_U64 },
	{ "rstreamd_tunnel_accept_pauses_total", "counter",
	    "Times accepting paused because the process ran out of "
	    "file descriptors.",
	    offsetof(struct tun_stats, accept_pauses), TM_U64 },
	{ "rstreamd_tunnel_streams_suspended_total", "counter",
	    "Streams suspended because their link failed.",
	    offsetof(struct tun_stats, suspended), TM_U64 },
	{ "rstreamd_tunnel_streams_resumed_total", "counter",
	    "Suspended streams resumed on a new link.",
	    offsetof(struct tun_stats, resumes), TM_U64 },
	{ "rstreamd_tunnel_resume_failures_total", "counter",
	    "Suspended streams reset instead of resumed.",
	    offsetof(struct tun_stats, resume_failures), TM_U64 },
	{ "rstreamd_tunnel_ring_bytes", "gauge",
	    "Ring memory the tunnel's streams hold (their rings grow "
	    "with traffic and shrink when idle).",
	    offsetof(struct tun_stats, pinned), TM_U64 },
	{ "rstreamd_tunnel_ring_bytes_max", "gauge",
	    "The tunnel's max_memory in bytes (its own, or its share of "
	    "the daemon's); 0: no limit of its own.", 0, TM_MAX_MEMORY },
	{ "rstreamd_tunnel_ring_refusals_total", "counter",
	    "Rings refused because max_memory (the daemon's or the "
	    "tunnel's) was reached: streams refused, and rings that "
	    "could not grow or shrink.",
	    offsetof(struct tun_stats, ring_refusals), TM_U64 },
	{ "rstreamd_tunnel_link_failures_total", "counter",
	    "A client tunnel's link: attempts to connect that failed, and "
	    "times it went down.", offsetof(struct tun_stats, link_failures),
	    TM_U64 },
	{ "rstreamd_tunnel_link_reconnects_total", "counter",
	    "A client tunnel's link: times it came up again after failing.",
	    offsetof(struct tun_stats, link_reconnects), TM_U64 },
};

/* The reason label of rstreamd_stream_refusals_total (enum tun_refusal). */
static const char *const refusal_names[TR_N] = {
	[TR_LIMIT] = "limit",
	[TR_MEMORY] = "memory",
	[TR_DENIED] = "denied",
	[TR_VERSION] = "version",
	[TR_ORIGIN] = "origin",
	[TR_TARGET] = "target",
	[TR_PEER] = "peer",
	[TR_INTERNAL] = "internal",
};

static void
tunnel_metric(struct rsd *d, struct render_buf *o,
    const struct tunnel_metric_def *m)
{
	const struct tun *t;
	const char *p;
	uint64_t v;

	render_metric_head(o, m->name, m->type, m->help);
	TAILQ_FOREACH(t, &d->tuns, entry) {
		if (metrics_counted_elsewhere(d, t))
			continue;
		p = (const char *)t->st + m->off;
		if (m->kind == TM_MAX_MEMORY)
			v = conf_tunnel_max_memory(d->conf, t->c);
		else if (m->kind == TM_U32)
			v = __atomic_load_n((const uint32_t *)(const void *)p,
			    __ATOMIC_RELAXED);
		else
			v = ld64((const uint64_t *)(const void *)p);
		render_printf(o, "%s{tunnel=", m->name);
		render_prom_str(o, t->c->name);
		render_printf(o, "} %llu\n", (unsigned long long)v);
	}
}

/*
 * The per-tunnel counters of struct tun_stats kept for both directions:
 * in from local sockets, out to them.
 */
static const struct tunnel_dir_metric_def {
	const char *name, *help;
	size_t off[2];			/* in struct tun_stats: in, out */
} tunnel_dir_metrics[] = {
	{ "rstreamd_tunnel_bytes_total",
	    "Stream payload bytes, in from local sockets and out to them.",
	    { offsetof(struct tun_stats, bytes_in),
	    offsetof(struct tun_stats, bytes_out) } },
	{ "rstreamd_tunnel_budget_stops_total",
	    "Turns in which a stream stopped reading its local socket (in) "
	    "or writing it (out) with more to move, because it had moved "
	    "the bytes one turn of its worker allows, so that the worker's "
	    "other streams go first.",
	    { offsetof(struct tun_stats, budget_stops_in),
	    offsetof(struct tun_stats, budget_stops_out) } },
};

static void
tunnel_dir_metric(struct rsd *d, struct render_buf *o,
    const struct tunnel_dir_metric_def *m)
{
	static const char *const dirs[2] = { "in", "out" };
	const struct tun *t;
	const char *p;
	int k;

	render_metric_head(o, m->name, "counter", m->help);
	TAILQ_FOREACH(t, &d->tuns, entry) {
		if (metrics_counted_elsewhere(d, t))
			continue;
		p = (const char *)t->st;
		for (k = 0; k < 2; k++) {
			render_printf(o, "%s{tunnel=", m->name);
			render_prom_str(o, t->c->name);
			render_printf(o, ",direction=\"%s\"} %llu\n", dirs[k],
			    (unsigned long long)ld64((const uint64_t *)
			    (const void *)(p + m->off[k])));
		}
	}
}

/*
 * Each tunnel's counters both ways (tunnel_dir_metrics[]), its refusals
 * by reason, tunnel_metrics[].
 */
static void
metrics_tunnels(struct rsd *d, struct render_buf *o)
{
	const struct tunnel_dir_metric_def *dm;
	const struct tunnel_metric_def *m;
	const struct tun *t;
	int r;

	for (dm = tunnel_dir_metrics; dm < tunnel_dir_metrics +
	    NITEMS(tunnel_dir_metrics); dm++)
		tunnel_dir_metric(d, o, dm);
	render_metric_head(o, "rstreamd_stream_refusals_total", "counter",
	    "Streams refused, each once, by reason: limit (max_streams), "
	    "memory (max_memory), denied (the link lacks the key or "
	    "identity the tunnel asks for, or sealing), version (below "
	    "min_version), origin (proxy_protocol without a trusted client "
	    "address), target (unreachable), peer (the peer refused it), "
	    "internal.");
	TAILQ_FOREACH(t, &d->tuns, entry) {
		if (metrics_counted_elsewhere(d, t))
			continue;
		for (r = 0; r < TR_N; r++) {
			render_printf(o, "rstreamd_stream_refusals_total"
			    "{tunnel=");
			render_prom_str(o, t->c->name);
			render_printf(o, ",reason=\"%s\"} %llu\n",
			    refusal_names[r], (unsigned long long)
			    ld64(&t->st->refusals[r]));
		}
	}
	for (m = tunnel_metrics; m < tunnel_metrics + NITEMS(tunnel_metrics);
	    m++)
		tunnel_metric(d, o, m);
}

/* One direction's rstreamd_link_completion_errors_total, by status. */
static void
completion_errors(struct render_buf *o, const char *tunnel, const char *dir,
    const uint64_t counts[VERBS_WC_N])
{
	int c;

	for (c = VERBS_WC_NONE + 1; c < VERBS_WC_N; c++) {
		render_printf(o, "rstreamd_link_completion_errors_total"
		    "{tunnel=");
		render_prom_str(o, tunnel);
		render_printf(o, ",direction=\"%s\",status=\"%s\"} %llu\n",
		    dir, verbs_wc_error_name(c), (unsigned long long)
		    ld64(&counts[c]));
	}
}

/*
 * Links that ended on an error completion: each client tunnel's, then
 * the daemon's incoming ones; every status, 0 included.
 */
static void
metrics_completion_errors(struct rsd *d, struct render_buf *o)
{
	const struct tun *t;

	render_metric_head(o, "rstreamd_link_completion_errors_total",
	    "counter", "Links that ended on an error completion, by its "
	    "status: retry_exceeded (the peer stopped acknowledging: a dark "
	    "path, a dead host), rnr_retry_exceeded (the peer had no receive "
	    "posted), remote (the peer's adapter refused a work request), "
	    "local; a client tunnel's link (direction out), and links from "
	    "peers (direction in, tunnel empty).");
	TAILQ_FOREACH(t, &d->tuns, entry)
		if (t->c->has_accept && !metrics_counted_elsewhere(d, t))
			completion_errors(o, t->c->name, "out",
			    t->st->completion_errors);
	completion_errors(o, "", "in", d->completion_errors_in);
}

/* ------------------------------------------------------------- daemon */

static void
daemon_metric(struct render_buf *o, const char *name, const char *type,
    const char *help, unsigned long long v)
{

	render_metric_head(o, name, type, help);
	render_printf(o, "%s %llu\n", name, v);
}

/* The daemon's own counters: uint64_t fields of struct rsd. */
static const struct daemon_counter {
	const char *name, *help;
	size_t off;			/* in struct rsd */
} daemon_counters[] = {
	{ "rstreamd_links_rejected_total",
	    "Incoming links rejected by a limit, allow, or an invalid hello.",
	    offsetof(struct rsd, links_rejected) },
	{ "rstreamd_links_evicted_total",
	    "Incoming links closed after link_idle_timeout without a stream, "
	    "to make room for a new link.", offsetof(struct rsd,
	    links_evicted) },
	{ "rstreamd_auth_failures_total", "Links "
	    "that failed to authenticate (wrong key, none, or too late; or "
	    "whose peer did not prove a resume's secret).",
	    offsetof(struct rsd, auth_failures) },
	{ "rstreamd_links_revoked_total",
	    "Links a reload ended because it no longer trusts their peer's "
	    "identity (not among the peers, or not among a client tunnel's), "
	    "live ones and ones whose streams waited suspended.",
	    offsetof(struct rsd, links_revoked) },
	{ "rstreamd_streams_revoked_total",
	    "Streams a reload reset because it no longer trusts their peer: "
	    "those of the links it ended, and those of target tunnels whose "
	    "peers no longer name it.", offsetof(struct rsd,
	    streams_revoked) },
	{ "rstreamd_forged_messages_total",
	    "Links ended by a sealed message that failed to open (tampered "
	    "with or injected on the fabric): their streams suspended, or "
	    "reset past the chain's cap.", offsetof(struct rsd, forged) },
	{ "rstreamd_resume_refusals_total",
	    "Peers' offers to resume streams refused (unknown streams, a "
	    "wrong proof, another key).", offsetof(struct rsd,
	    resume_refusals) },
	{ "rstreamd_resume_timeouts_total",
	    "Suspended streams reset because no new link came within "
	    "resume_time.", offsetof(struct rsd, resume_timeouts) },
	{ "rstreamd_link_stepdowns_total",
	    "Client links that connected again in an older protocol version "
	    "because a peer refused the newer one.", offsetof(struct rsd,
	    stepdowns) },
	{ "rstreamd_link_stepdowns_refused_total",
	    "Peers' refusals that asked for a protocol version below the "
	    "tunnel's min_version (an older peer, or a forged reject).",
	    offsetof(struct rsd, stepdowns_refused) },
};

/* What the daemon is: version, uptime, reloads, exclusive turns. */
static void
metrics_daemon(struct rsd *d, struct render_buf *o)
{
	uint64_t ok_ms;

	render_metric_head(o, "rstreamd_info", "gauge", "Version of the "
	    "running rstreamd.");
	render_printf(o, "rstreamd_info{version=\"%s\"} 1\n",
	    PACKAGE_VERSION);
	daemon_metric(o, "rstreamd_uptime_seconds", "gauge", "Seconds since "
	    "rstreamd started.", (loop_now_ms() - d->started_ms) / 1000);
	daemon_metric(o, "rstreamd_reloads_total", "counter", "Configuration "
	    "reloads that worked.", d->reloads);
	daemon_metric(o, "rstreamd_config_last_reload_successful", "gauge",
	    "0 if the last reload failed (the previous configuration is "
	    "running), else 1.", d->reload_error[0] == '\0');
	/* The wall clock of the last that worked (the start, if none). */
	ok_ms = d->started_unix_ms + (d->reloads > 0 ? d->reloaded_ms -
	    d->started_ms : 0);
	render_metric_head(o, "rstreamd_config_last_reload_success_timestamp_"
	    "seconds", "gauge", "When the configuration was last loaded "
	    "successfully (at start, or a reload), in seconds since the "
	    "epoch.");
	render_printf(o, "rstreamd_config_last_reload_success_timestamp_"
	    "seconds ");
	ms_as_s(o, ok_ms);
	render_printf(o, "\n");
	daemon_metric(o, "rstreamd_exclusive_turns_total", "counter", "Turns "
	    "that stopped every worker thread (setting links and streams up "
	    "and down, answering control requests); 0 with one thread.",
	    loop_exclusive_turns(d->lp));
}

/* daemon_counters[], then the memory counted against max_memory. */
static void
metrics_counters(struct rsd *d, struct render_buf *o)
{
	const struct daemon_counter *m;
	struct verbs_cm_mem cmm;

	for (m = daemon_counters; m < daemon_counters +
	    NITEMS(daemon_counters); m++)
		daemon_metric(o, m->name, "counter", m->help,
		    ld64((const uint64_t *)(const void *)((const char *)d +
		    m->off)));
	link_mem(d, &cmm);
	daemon_metric(o, "rstreamd_ring_bytes", "gauge", "Memory counted "
	    "against max_memory over all links: streams' rings (suspended "
	    "ones' too), the pools, and the links' control buffers.",
	    cmm.total);
	daemon_metric(o, "rstreamd_control_bytes", "gauge", "Of which the "
	    "links' control buffers.", cmm.control);
	daemon_metric(o, "rstreamd_suspended_ring_bytes", "gauge", "Of which "
	    "the rings of suspended streams (not registered).", cmm.detached);
	daemon_metric(o, "rstreamd_ring_bytes_max", "gauge", "max_memory in "
	    "bytes; 0: no limit.",
	    (unsigned long long)conf_max_memory_bytes(d->conf));
}

/* The process, as Prometheus client libraries describe theirs. */
static void
metrics_process(struct rsd *d, struct render_buf *o)
{
	struct procstat ps;

	procstat_read(&ps);
	render_metric_head(o, "process_start_time_seconds", "gauge", "Start "
	    "time of the process since the epoch in seconds.");
	render_printf(o, "process_start_time_seconds ");
	ms_as_s(o, d->started_unix_ms);
	render_printf(o, "\n");
	if (ps.have_stat) {
		render_metric_head(o, "process_cpu_seconds_total", "counter",
		    "Total user and system CPU time spent in seconds.");
		render_printf(o, "process_cpu_seconds_total ");
		ms_as_s(o, ps.cpu_ms);
		render_printf(o, "\n");
		daemon_metric(o, "process_resident_memory_bytes", "gauge",
		    "Resident memory size in bytes.", ps.rss);
		daemon_metric(o, "process_virtual_memory_bytes", "gauge",
		    "Virtual memory size in bytes.", ps.vsize);
	}
	if (ps.have_fds)
		daemon_metric(o, "process_open_fds", "gauge", "Number of open "
		    "file descriptors.", ps.open_fds);
	if (ps.have_max_fds)
		daemon_metric(o, "process_max_fds", "gauge", "Maximum number "
		    "of open file descriptors.", ps.max_fds);
}

/* --------------------------------------------------------------- links */

/*
 * Link series are labelled {tunnel, peer, direction} (see linkstat.h),
 * which outlive reconnects.  Links that share them add up into one
 * sample: a peer's several links to the serving side (one per client
 * tunnel of the peer), or a changed tunnel's old link that still carries
 * its streams beside the new one.  The serving side shows its links
 * once they are up (before, the peer's identity is not known).  The info
 * metrics have a sample per link.
 */
struct lrows {
	struct linkstat *r;
	size_t n;
};

static int
key_cmp(const void *x, const void *y)
{
	const struct linkstat *a = x, *b = y;
	int c;

	if ((c = strcmp(a->tunnel, b->tunnel)) != 0 ||
	    (c = strcmp(a->peer, b->peer)) != 0)
		return (c);
	return (strcmp(a->direction, b->direction));
}

/* Every link to show, sorted by their labels; 0, or -1 out of memory. */
static int
lrows_get(struct rsd *d, struct lrows *L)
{
	const struct dlink *dl;
	size_t n = 0;

	L->n = 0;
	L->r = NULL;
	for (dl = link_first(d); dl != NULL; dl = link_next(dl))
		n++;
	if (n == 0)
		return (0);
	if ((L->r = calloc(n, sizeof(*L->r))) == NULL)
		return (-1);
	for (dl = link_first(d); dl != NULL; dl = link_next(dl)) {
		linkstat_read(dl, &L->r[L->n]);
		if (L->r[L->n].up || strcmp(L->r[L->n].direction, "out") == 0)
			L->n++;
	}
	qsort(L->r, L->n, sizeof(*L->r), key_cmp);
	return (0);
}

/* The end of the group of rows with row ${i}'s labels. */
static size_t
group_end(const struct lrows *L, size_t i)
{
	size_t j;

	for (j = i + 1; j < L->n && key_cmp(&L->r[i], &L->r[j]) == 0; j++)
		;
	return (j);
}

/* ${name}{tunnel="...",peer="...",direction="..." (no closing brace). */
static void
key_labels(struct render_buf *o, const char *name, const struct linkstat *ls)
{

	render_printf(o, "%s{tunnel=", name);
	render_prom_str(o, ls->tunnel);
	render_printf(o, ",peer=");
	render_prom_str(o, ls->peer);
	render_printf(o, ",direction=\"%s\"", ls->direction);
}

/* How a group's values of one figure combine. */
enum lv_how {
	LV_SUM,		/* added up (counters, queue depths, bytes) */
	LV_MIN,		/* the smallest that is not 0 (a version) */
	LV_MAX		/* the largest (a round trip) */
};

/* The figure at ${off} over the up links of rows [i, j); ${*have} 0: none. */
static uint64_t
group_value(const struct lrows *L, size_t i, size_t j, size_t off,
    enum lv_how how, int *have)
{
	uint64_t v = 0, x;

	*have = 0;
	for (; i < j; i++) {
		if (!L->r[i].up)
			continue;
		memcpy(&x, (const char *)&L->r[i] + off, sizeof(x));
		if (how == LV_SUM) {
			v += x;
			*have = 1;
		} else if (x != 0 && (!*have || (how == LV_MIN ? x < v :
		    x > v))) {
			v = x;
			*have = 1;
		}
	}
	return (v);
}

/* How a link value shows. */
enum lv_show {
	LV_N,		/* a number */
	LV_NS_S		/* nanoseconds, shown in seconds */
};

#define LSV(f)	offsetof(struct linkstat, f)

/*
 * The per-link figures, in the order they show: with a label of their
 * own (kind, how) when ${label} is set, one sample per value of it.
 */
static const struct link_value_def {
	const char *name, *type, *help;
	const char *label, *value;	/* NULL: none */
	size_t off;			/* of a uint64_t in struct linkstat */
	enum lv_how how;
	enum lv_show show;
} link_values[] = {
	{ "rstreamd_link_protocol_version", "gauge", "The protocol version "
	    "an up link speaks (the oldest, of several).", NULL, NULL,
	    LSV(version), LV_MIN, LV_N },
	{ "rstreamd_link_rtt_seconds", "gauge", "The link's round trip: "
	    "the shortest time over the last 10 s from posting a work "
	    "request (a keepalive every 2 s, at least) to its completion, "
	    "which comes when the peer's adapter acknowledged it (the "
	    "longest, of several links).", NULL, NULL, LSV(rtt_ns), LV_MAX,
	    LV_NS_S },
#define STALLS	"rstreamd_link_credit_stalls_total", "counter", "Times work " \
	    "waited for credit: peer ring space, message credits or send " \
	    "queue space.", "kind"
	{ STALLS, "ring", LSV(stall_ring), LV_SUM, LV_N },
	{ STALLS, "message", LSV(stall_msg), LV_SUM, LV_N },
	{ STALLS, "send_queue", LSV(stall_sq), LV_SUM, LV_N },
#undef STALLS
#define RING	"rstreamd_link_ring_bytes", "gauge", "Ring memory registered " \
	    "on the link: all of it (streams' rings and the pool), the " \
	    "pool's part, and apart from them its control buffers.", "kind"
	{ RING, "pinned", LSV(pinned), LV_SUM, LV_N },
	{ RING, "pooled", LSV(pooled), LV_SUM, LV_N },
	{ RING, "control", LSV(control), LV_SUM, LV_N },
#undef RING
#define RINGS	"rstreamd_link_rings_total", "counter", "Rings streams took: " \
	    "newly registered, or reused from the link's pool.", "how"
	{ RINGS, "registered", LSV(registered), LV_SUM, LV_N },
	{ RINGS, "reused", LSV(reused), LV_SUM, LV_N },
#undef RINGS
#define RESIZES	"rstreamd_link_ring_resizes_total", "counter", "Streams' " \
	    "rings grown with traffic, shrunk back when idle, and resizes " \
	    "refused (a max_memory: a growth, or the smaller ring of a " \
	    "shrink).", "kind"
	{ RESIZES, "grow", LSV(ring_grows), LV_SUM, LV_N },
	{ RESIZES, "shrink", LSV(ring_shrinks), LV_SUM, LV_N },
	{ RESIZES, "refused", LSV(ring_refused), LV_SUM, LV_N },
#undef RESIZES
	{ "rstreamd_link_sq_depth", "gauge", "Work requests on the link's "
	    "send queue: posted, not yet known complete.", NULL, NULL,
	    LSV(sq_depth), LV_SUM, LV_N },
	{ "rstreamd_link_inflight_bytes", "gauge", "Stream bytes posted on "
	    "the send queue, not yet known complete.", NULL, NULL,
	    LSV(inflight), LV_SUM, LV_N },
	{ "rstreamd_link_lanes", "gauge", "The lanes (queue pairs) an up "
	    "link runs: 2 with a latency lane (protocol version 8; 9 when "
	    "sealed, 12 on iWARP), else 1 (the fewest, of several).", NULL,
	    NULL, LSV(lanes), LV_MIN, LV_N },
#define LDEPTH	"rstreamd_link_lane_sq_depth", "gauge", "Work requests on " \
	    "each lane's send queue: posted, not yet known complete.", "lane"
	{ LDEPTH, "0", LSV(lane_depth[0]), LV_SUM, LV_N },
	{ LDEPTH, "1", LSV(lane_depth[1]), LV_SUM, LV_N },
#undef LDEPTH
#define LBYTES	"rstreamd_link_lane_inflight_bytes", "gauge", "Stream " \
	    "bytes posted on each lane's send queue, not yet known " \
	    "complete.", "lane"
	{ LBYTES, "0", LSV(lane_inflight[0]), LV_SUM, LV_N },
	{ LBYTES, "1", LSV(lane_inflight[1]), LV_SUM, LV_N },
#undef LBYTES
#define LFENCES	"rstreamd_link_lane_fences_total", "counter", "FENCE " \
	    "records sent on each lane: on iWARP, a stream moves to the " \
	    "other lane once the peer answered one.", "lane"
	{ LFENCES, "0", LSV(lane_fences[0]), LV_SUM, LV_N },
	{ LFENCES, "1", LSV(lane_fences[1]), LV_SUM, LV_N },
#undef LFENCES
	{ "rstreamd_link_window_bytes", "gauge", "The bound on in-flight "
	    "bytes now, from the link's round trip and delivery rate.", NULL,
	    NULL, LSV(window), LV_SUM, LV_N },
	{ "rstreamd_link_credit_wait_seconds_total", "counter", "Time the "
	    "link's streams had data but waited for ring credit from the "
	    "peer.", NULL, NULL, LSV(wait_credit_ns), LV_SUM, LV_NS_S },
	{ "rstreamd_link_sq_wait_seconds_total", "counter", "Time the link's "
	    "streams had data and credit but waited for their turn on the "
	    "send queue.", NULL, NULL, LSV(wait_sq_ns), LV_SUM, LV_NS_S },
};

/* link_values[] from ${m} on that share its name: one family. */
static const struct link_value_def *
link_family(const struct lrows *L, struct render_buf *o,
    const struct link_value_def *m)
{
	const struct link_value_def *f, *end = link_values +
	    NITEMS(link_values);
	size_t i, j;
	uint64_t v;
	int have;

	render_metric_head(o, m->name, m->type, m->help);
	for (i = 0; i < L->n; i = j) {
		j = group_end(L, i);
		for (f = m; f < end && strcmp(f->name, m->name) == 0; f++) {
			v = group_value(L, i, j, f->off, f->how, &have);
			if (!have)
				continue;
			key_labels(o, f->name, &L->r[i]);
			if (f->label != NULL)
				render_printf(o, ",%s=\"%s\"", f->label,
				    f->value);
			render_printf(o, "} ");
			if (f->show == LV_NS_S)
				ns_as_s(o, v);
			else
				render_printf(o, "%llu", (unsigned long long)v);
			render_printf(o, "\n");
		}
	}
	for (f = m; f < end && strcmp(f->name, m->name) == 0; f++)
		;
	return (f);
}

/*
 * Info lines, one per link, may repeat (two links that say the same,
 * such as an old and a new link of a tunnel, both trying the same
 * address): each distinct line once, as Prometheus wants.
 */
struct lines {
	char **v;
	size_t n;
	int oom;
};

static int
str_cmp(const void *x, const void *y)
{

	return (strcmp(*(char *const *)x, *(char *const *)y));
}

/* Take ${b}'s text as a line of ${ls}. */
static void
lines_add(struct lines *ls, struct render_buf *b)
{

	if (b->oom || b->p == NULL) {
		ls->oom = 1;
		free(b->p);
	} else {
		ls->v[ls->n++] = b->p;
	}
	memset(b, 0, sizeof(*b));
}

static void
lines_put(struct render_buf *o, struct lines *ls)
{
	size_t i;

	if (ls->oom)
		o->oom = 1;
	qsort(ls->v, ls->n, sizeof(*ls->v), str_cmp);
	/* Equal lines (two links with one peer's labels) show once. */
	for (i = 0; !ls->oom && i < ls->n; i++)
		if (i == 0 || strcmp(ls->v[i], ls->v[i - 1]) != 0)
			render_printf(o, "%s", ls->v[i]);
	for (i = 0; i < ls->n; i++)
		free(ls->v[i]);
	free(ls->v);
}

/* A label of a number that may be unknown (-1: empty). */
static void
num_label(struct render_buf *o, const char *name, int v)
{

	if (v >= 0)
		render_printf(o, ",%s=\"%d\"", name, v);
	else
		render_printf(o, ",%s=\"\"", name);
}

/* The info metric ${which} of link ${ls} into ${b}; 0 if it has none. */
enum info { INFO_LINK, INFO_FABRIC, INFO_PEER };

static int
info_line(struct render_buf *b, enum info which, const struct linkstat *ls)
{
	const struct hca_info *h = ls->hca;

	switch (which) {
	case INFO_LINK:
		key_labels(b, "rstreamd_link_info", ls);
		render_printf(b, ",address=");
		render_prom_str(b, ls->address);
		render_printf(b, ",device=");
		render_prom_str(b, h != NULL ? h->device : "");
		if (h != NULL)
			render_printf(b, ",port=\"%u\",qpn=\"%u\"", h->port,
			    (unsigned)h->qpn);
		else
			render_printf(b, ",port=\"\",qpn=\"\"");
		break;
	case INFO_FABRIC:
		if (h == NULL)
			return (0);
		key_labels(b, "rstreamd_link_fabric_info", ls);
		render_printf(b, ",device=");
		render_prom_str(b, h->device);
		render_printf(b, ",port=\"%u\",transport=\"%s\",gid_index="
		    "\"%d\",gid=\"%s\",peer_gid=\"%s\",path_mtu=\"%u\","
		    "qpn=\"%u\",peer_qpn=\"%u\"", h->port, h->transport,
		    h->gid_index, h->gid, h->peer_gid, h->path_mtu,
		    (unsigned)h->qpn, (unsigned)h->peer_qpn);
		num_label(b, "traffic_class", h->traffic_class);
		num_label(b, "service_level", h->sl);
		break;
	case INFO_PEER:
		if (!ls->up || ls->identity[0] == '\0')
			return (0);
		key_labels(b, "rstreamd_link_peer_info", ls);
		render_printf(b, ",identity=");
		render_prom_str(b, ls->identity);
		render_printf(b, ",sealing=");
		render_prom_str(b, ls->sealing != NULL ? ls->sealing : "");
		break;
	}
	render_printf(b, "} 1\n");
	return (1);
}

static void
info_family(const struct lrows *L, struct render_buf *o, enum info which)
{
	static const char *const heads[][2] = {
		[INFO_LINK] = { "rstreamd_link_info", "Where a link connects "
		    "or connected from (address), and, while it is up, its "
		    "device, port and QP number (always 1)." },
		[INFO_FABRIC] = { "rstreamd_link_fabric_info", "Where an up "
		    "link runs: device, port, transport, GID, path MTU, QP "
		    "numbers, traffic class and service level (always 1)." },
		[INFO_PEER] = { "rstreamd_link_peer_info", "The identity an "
		    "up link's peer proved, and the AEAD sealing its records "
		    "(\"\": in clear) (always 1)." },
	};
	struct render_buf b = { NULL, 0, 0, 0 };
	struct lines ls = { NULL, 0, 0 };
	size_t i;

	render_metric_head(o, heads[which][0], "gauge", heads[which][1]);
	if (L->n == 0)
		return;
	if ((ls.v = calloc(L->n, sizeof(*ls.v))) == NULL) {
		o->oom = 1;
		return;
	}
	for (i = 0; i < L->n; i++) {
		if (info_line(&b, which, &L->r[i]))
			lines_add(&ls, &b);
		free(b.p);
		memset(&b, 0, sizeof(b));
	}
	lines_put(o, &ls);
}

/* rstreamd_link_up, then link_values[], then the info metrics. */
static void
metrics_links(struct rsd *d, struct render_buf *o)
{
	const struct link_value_def *m;
	struct lrows L;
	size_t i, j, k, up;

	if (lrows_get(d, &L) != 0) {
		o->oom = 1;
		return;
	}
	render_metric_head(o, "rstreamd_link_up", "gauge", "How many of the "
	    "links with these labels are up: 1 or 0 for a client tunnel's "
	    "link; on the serving side, a peer's links that are up.");
	for (i = 0; i < L.n; i = j) {
		j = group_end(&L, i);
		for (k = i, up = 0; k < j; k++)
			up += L.r[k].up != 0;
		key_labels(o, "rstreamd_link_up", &L.r[i]);
		render_printf(o, "} %zu\n", up);
	}
	for (m = link_values; m < link_values + NITEMS(link_values);)
		m = link_family(&L, o, m);
	info_family(&L, o, INFO_LINK);
	info_family(&L, o, INFO_FABRIC);
	info_family(&L, o, INFO_PEER);
	free(L.r);
}

/* ---------------------------------------------------------------- ports */

/* One port counter: rstreamd_rdma_port_counter{device,port,set,counter}. */
struct port_ctx {
	struct render_buf *o;
	const struct hca_info *h;
};

static void
port_counter(void *arg, const char *dir, const char *name, uint64_t value)
{
	struct port_ctx *pc = arg;

	render_printf(pc->o, "rstreamd_rdma_port_counter{device=");
	render_prom_str(pc->o, pc->h->device);
	render_printf(pc->o, ",port=\"%u\",set=\"%s\",counter=", pc->h->port,
	    dir);
	render_prom_str(pc->o, name);
	render_printf(pc->o, "} %llu\n", (unsigned long long)value);
}

/*
 * The adapter's own counters of every port a link uses (retransmissions,
 * sequence and access errors): a fabric problem shows there before it
 * ends a link.  Dozens of sysfs files per port.
 */
static void
metrics_ports(struct rsd *d, struct render_buf *o)
{
	const struct dlink *dl;
	struct port_ctx pc;
	const struct hca_info *ports[32];
	int k, nports = 0;

	render_metric_head(o, "rstreamd_rdma_port_counter", "untyped", "The "
	    "RDMA adapter's counters of each port an up link uses, as its "
	    "driver publishes them (set: counters or hw_counters).");
	pc.o = o;
	/* Each port once, however many links share it (few ports do). */
	for (dl = link_first(d); dl != NULL; dl = link_next(dl)) {
		if ((pc.h = link_hca(dl)) == NULL)
			continue;
		for (k = 0; k < nports; k++)
			if (ports[k]->port == pc.h->port &&
			    strcmp(ports[k]->device, pc.h->device) == 0)
				break;
		if (k < nports || nports == NITEMS(ports))
			continue;
		ports[nports++] = pc.h;
		(void)hca_port_counters(NULL, pc.h->device, pc.h->port,
		    port_counter, &pc);
	}
}

void
metrics_render(struct rsd *d, struct render_buf *o)
{

	metrics_daemon(d, o);
	metrics_process(d, o);
	metrics_tunnels(d, o);
	metrics_counters(d, o);
	metrics_completion_errors(d, o);
	metrics_links(d, o);
	metrics_ports(d, o);
}
