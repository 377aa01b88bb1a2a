/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "conf.h"
#include "hca.h"
#include "link.h"
#include "loop.h"
#include "metrics.h"
#include "render.h"
#include "rsd.h"
#include "tunnel.h"

#define NITEMS(a)	((int)(sizeof(a) / sizeof(a[0])))

/*
 * A draining tunnel whose name is configured again shares its counters
 * with the new one: show them once, under the new one.
 */
int
metrics_counted_elsewhere(struct rsd *d, const struct tun *t)
{

	return (t->draining && tunnel_find(d, t->c->name) != NULL);
}

/* Where a tunnel metric's value comes from (the table says 0 or 1). */
enum tm_kind {
	TM_U64 = 0,	/* a uint64_t in struct tun_stats */
	TM_U32 = 1,	/* a uint32_t there */
	TM_MAX_MEMORY	/* the tunnel's max_memory, in bytes */
};

static void
tunnel_metric(struct rsd *d, struct render_buf *o, const char *name,
    const char *type, const char *help, size_t off, enum tm_kind kind)
{
	const struct tun *t;
	const char *p;
	uint64_t v;

	render_metric_head(o, name, type, help);
	TAILQ_FOREACH(t, &d->tuns, entry) {
		if (metrics_counted_elsewhere(d, t))
			continue;
		p = (const char *)t->st + off;
		v = kind == TM_MAX_MEMORY ? conf_tunnel_max_memory(d->conf,
		    t->c) : kind == TM_U32 ? *(const uint32_t *)(const void *)p :
		    *(const uint64_t *)(const void *)p;
		render_printf(o, "%s{tunnel=", name);
		render_prom_str(o, t->c->name);
		render_printf(o, "} %llu\n", (unsigned long long)v);
	}
}

static void
daemon_metric(struct render_buf *o, const char *name, const char *type,
    const char *help, unsigned long long v)
{

	render_metric_head(o, name, type, help);
	render_printf(o, "%s %llu\n", name, v);
}

/* One labelled value of a link metric: a uint64_t in struct link_info. */
struct link_col {
	const char *value;
	size_t off;
};

/*
 * Metric ${name}, one sample per link that is up and per column: label
 * link="...", and ${label}="value".
 */
static void
link_metric(struct rsd *d, struct render_buf *o, const char *name,
    const char *type, const char *help, const char *label,
    const struct link_col *cols, size_t ncols)
{
	const struct dlink *dl;
	struct link_info li;
	size_t k;

	render_metric_head(o, name, type, help);
	for (dl = link_first(d); dl != NULL; dl = link_next(dl)) {
		link_info(dl, &li);
		if (!li.have_stats)
			continue;
		for (k = 0; k < ncols; k++) {
			render_printf(o, "%s{link=", name);
			render_prom_str(o, li.name);
			render_printf(o, ",%s=\"%s\"} %llu\n", label,
			    cols[k].value, (unsigned long long)
			    *(const uint64_t *)(const void *)
			    ((const char *)&li + cols[k].off));
		}
	}
}

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

/* A label of a number that may be unknown (-1: empty). */
static void
fabric_label(struct render_buf *o, const char *name, int v)
{

	if (v >= 0)
		render_printf(o, ",%s=\"%d\"", name, v);
	else
		render_printf(o, ",%s=\"\"", name);
}

/* Where each link runs on the fabric. */
static void
fabric_metrics(struct rsd *d, struct render_buf *o)
{
	const struct dlink *dl;
	struct link_info li;
	const struct hca_info *h;

	render_metric_head(o, "rstreamd_link_fabric_info", "gauge", "Where "
	    "an up link runs: device, port, transport, GID, path MTU, "
	    "QP numbers, traffic class and service level (always 1).");
	for (dl = link_first(d); dl != NULL; dl = link_next(dl)) {
		link_info(dl, &li);
		if ((h = li.hca) == NULL)
			continue;
		render_printf(o, "rstreamd_link_fabric_info{link=");
		render_prom_str(o, li.name);
		render_printf(o, ",device=");
		render_prom_str(o, h->device);
		render_printf(o, ",port=\"%u\",transport=\"%s\",gid_index="
		    "\"%d\",gid=\"%s\",peer_gid=\"%s\",path_mtu=\"%u\","
		    "qpn=\"%u\",peer_qpn=\"%u\"", h->port, h->transport,
		    h->gid_index, h->gid, h->peer_gid, h->path_mtu,
		    (unsigned)h->qpn, (unsigned)h->peer_qpn);
		fabric_label(o, "traffic_class", h->traffic_class);
		fabric_label(o, "service_level", h->sl);
		render_printf(o, "} 1\n");
	}
}

/* Who each identity link's peer is, and whether its records are sealed. */
static void
identity_metrics(struct rsd *d, struct render_buf *o)
{
	const struct dlink *dl;
	struct link_info li;

	render_metric_head(o, "rstreamd_link_peer_info", "gauge", "The "
	    "identity an up link's peer proved, and the AEAD sealing its "
	    "records (\"\": in clear) (always 1).");
	for (dl = link_first(d); dl != NULL; dl = link_next(dl)) {
		link_info(dl, &li);
		if (li.state != LINK_UP || li.identity[0] == '\0')
			continue;
		render_printf(o, "rstreamd_link_peer_info{link=");
		render_prom_str(o, li.name);
		render_printf(o, ",peer=");
		render_prom_str(o, li.identity);
		render_printf(o, ",sealing=");
		render_prom_str(o, li.sealing != NULL ? li.sealing : "");
		render_printf(o, "} 1\n");
	}
}

/*
 * The adapter's own counters of every port a link uses (retransmissions,
 * sequence and access errors): a fabric problem shows there before it
 * ends a link.  Dozens of sysfs files per port: this is metrics' first
 * step (ctlcmd.h), in a turn that stops no worker, reading of the links
 * only where they run, which never changes once they are up.
 */
int
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
	return (0);
}

/* The per-tunnel metrics of struct tun_stats, in the order they show. */
static const struct tunnel_metric_def {
	const char *name, *type, *help;
	size_t off;			/* in struct tun_stats */
	enum tm_kind kind;
} tunnel_metrics[] = {
	{ "rstreamd_tunnel_streams_opened_total", "counter",
	    "Streams opened.", offsetof(struct tun_stats, opened), 0 },
	{ "rstreamd_tunnel_streams_active", "gauge",
	    "Streams open now.", offsetof(struct tun_stats, active), 1 },
	{ "rstreamd_tunnel_streams_refused_total", "counter",
	    "Streams refused (no target, a limit, the peer refused).",
	    offsetof(struct tun_stats, refused), 0 },
	{ "rstreamd_tunnel_streams_limited_total", "counter",
	    "Streams refused because a limit was reached.",
	    offsetof(struct tun_stats, limited), 0 },
	{ "rstreamd_tunnel_streams_failed_total", "counter",
	    "Streams that ended with a reset or an error.",
	    offsetof(struct tun_stats, failed), 0 },
	{ "rstreamd_tunnel_accept_pauses_total", "counter",
	    "Times accepting paused because the process ran out of "
	    "file descriptors.",
	    offsetof(struct tun_stats, accept_pauses), 0 },
	{ "rstreamd_tunnel_streams_denied_total", "counter",
	    "Streams refused because their link did not prove this "
	    "tunnel's key.", offsetof(struct tun_stats, denied), 0 },
	{ "rstreamd_tunnel_streams_suspended_total", "counter",
	    "Streams suspended because their link failed.",
	    offsetof(struct tun_stats, suspended), 0 },
	{ "rstreamd_tunnel_streams_resumed_total", "counter",
	    "Suspended streams resumed on a new link.",
	    offsetof(struct tun_stats, resumes), 0 },
	{ "rstreamd_tunnel_resume_failures_total", "counter",
	    "Suspended streams reset instead of resumed.",
	    offsetof(struct tun_stats, resume_failures), 0 },
	{ "rstreamd_tunnel_ring_bytes", "gauge",
	    "Ring memory the tunnel's streams hold (their rings grow "
	    "with traffic and shrink when idle).",
	    offsetof(struct tun_stats, pinned), 0 },
	{ "rstreamd_tunnel_ring_bytes_max", "gauge",
	    "The tunnel's max_memory in bytes (its own, or its share of "
	    "the daemon's); 0: no limit of its own.", 0,
	    TM_MAX_MEMORY },
	{ "rstreamd_tunnel_ring_refusals_total", "counter",
	    "Rings refused because max_memory (the daemon's or the "
	    "tunnel's) was reached: streams refused, and rings that "
	    "could not grow or shrink.",
	    offsetof(struct tun_stats, ring_refusals), 0 },
};

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

static const struct link_col stalls[] = {
	{ "ring", offsetof(struct link_info, st.stall_ring) },
	{ "message", offsetof(struct link_info, st.stall_msg) },
	{ "send_queue", offsetof(struct link_info, st.stall_sq) },
}, ring_bytes[] = {
	{ "pinned", offsetof(struct link_info, mem.pinned) },
	{ "pooled", offsetof(struct link_info, mem.pooled) },
	{ "control", offsetof(struct link_info, mem.control) },
}, rings[] = {
	{ "registered", offsetof(struct link_info, mem.registered) },
	{ "reused", offsetof(struct link_info, mem.reused) },
}, resizes[] = {
	{ "grow", offsetof(struct link_info, st.ring_grows) },
	{ "shrink", offsetof(struct link_info, st.ring_shrinks) },
	{ "refused", offsetof(struct link_info, st.ring_refused) },
};

/* The labelled per-link metrics (link_metric), in the order they show. */
static const struct link_metric_def {
	const char *name, *type, *help, *label;
	const struct link_col *cols;
	size_t ncols;
} link_metrics[] = {
#define COLS(c)	c, sizeof(c) / sizeof(c[0])
	{ "rstreamd_link_credit_stalls_total", "counter",
	    "Times work waited for credit: peer ring space, message credits "
	    "or send queue space.", "kind", COLS(stalls) },
	{ "rstreamd_link_ring_bytes", "gauge",
	    "Ring memory registered on the link: all of it (streams' rings "
	    "and the pool), the pool's part, and apart from them its control "
	    "buffers.", "kind", COLS(ring_bytes) },
	{ "rstreamd_link_rings_total", "counter",
	    "Rings streams took: newly registered, or reused from the "
	    "link's pool.", "how", COLS(rings) },
	{ "rstreamd_link_ring_resizes_total", "counter",
	    "Streams' rings grown with traffic, shrunk back when idle, and "
	    "resizes refused (a max_memory: a growth, or the smaller ring "
	    "of a shrink).", "kind", COLS(resizes) },
#undef COLS
};

/* How a link value (link_values[]) reads. */
enum lv_kind {
	LV_U32,		/* a uint32_t */
	LV_U64,		/* a uint64_t */
	LV_NS_S		/* a uint64_t of nanoseconds, shown in seconds */
};

/*
 * The per-link metrics with no label but the link's, in the order they
 * show: the send queue and the streams' waits, where head-of-line
 * blocking shows (engine_stats).
 */
static const struct link_value_def {
	const char *name, *type, *help;
	size_t off;			/* in struct link_info */
	enum lv_kind kind;
} link_values[] = {
	{ "rstreamd_link_sq_depth", "gauge", "Work requests on the link's "
	    "send queue: posted, not yet known complete.",
	    offsetof(struct link_info, st.sq_depth), LV_U32 },
	{ "rstreamd_link_inflight_bytes", "gauge", "Stream bytes posted on "
	    "the send queue, not yet known complete.",
	    offsetof(struct link_info, st.inflight), LV_U64 },
	{ "rstreamd_link_window_bytes", "gauge", "The bound on in-flight "
	    "bytes now, from the link's round trip and delivery rate.",
	    offsetof(struct link_info, st.window), LV_U64 },
	{ "rstreamd_link_credit_wait_seconds_total", "counter", "Time the "
	    "link's streams had data but waited for ring credit from the "
	    "peer.", offsetof(struct link_info, st.wait_credit_ns), LV_NS_S },
	{ "rstreamd_link_sq_wait_seconds_total", "counter", "Time the link's "
	    "streams had data and credit but waited for their turn on the "
	    "send queue.", offsetof(struct link_info, st.wait_sq_ns),
	    LV_NS_S },
};

/* Metric ${m}: one sample per link that is up. */
static void
link_value(struct rsd *d, struct render_buf *o,
    const struct link_value_def *m)
{
	const struct dlink *dl;
	struct link_info li;
	const void *p;
	uint64_t v;
	uint32_t v32;

	render_metric_head(o, m->name, m->type, m->help);
	for (dl = link_first(d); dl != NULL; dl = link_next(dl)) {
		link_info(dl, &li);
		if (!li.have_stats)
			continue;
		p = (const char *)&li + m->off;
		if (m->kind == LV_U32) {
			memcpy(&v32, p, sizeof(v32));
			v = v32;
		} else {
			memcpy(&v, p, sizeof(v));
		}
		render_printf(o, "%s{link=", m->name);
		render_prom_str(o, li.name);
		if (m->kind == LV_NS_S)
			render_printf(o, "} %llu.%09llu\n",
			    (unsigned long long)(v / 1000000000),
			    (unsigned long long)(v % 1000000000));
		else
			render_printf(o, "} %llu\n", (unsigned long long)v);
	}
}

/* What the daemon is: version, uptime, reloads, exclusive turns. */
static void
metrics_daemon(struct rsd *d, struct render_buf *o)
{

	render_metric_head(o, "rstreamd_info", "gauge", "Version of the "
	    "running rstreamd.");
	render_printf(o, "rstreamd_info{version=\"%s\"} 1\n",
	    PACKAGE_VERSION);
	daemon_metric(o, "rstreamd_uptime_seconds", "gauge", "Seconds since "
	    "rstreamd started.", (loop_now_ms() - d->started_ms) / 1000);
	daemon_metric(o, "rstreamd_reloads_total", "counter", "Configuration "
	    "reloads that worked.", d->reloads);
	daemon_metric(o, "rstreamd_reload_failed", "gauge", "1 if the last "
	    "reload failed (the previous configuration is running).",
	    d->reload_error[0] != '\0');
	daemon_metric(o, "rstreamd_exclusive_turns_total", "counter", "Turns "
	    "that stopped every worker thread (setting links and streams up "
	    "and down, answering control requests); 0 with one thread.",
	    loop_exclusive_turns(d->lp));
}

/* Each tunnel's bytes both ways, then tunnel_metrics[]. */
static void
metrics_tunnels(struct rsd *d, struct render_buf *o)
{
	const struct tunnel_metric_def *m;
	const struct tun *t;

	render_metric_head(o, "rstreamd_tunnel_bytes_total", "counter",
	    "Stream payload bytes, in from local sockets and out to them.");
	TAILQ_FOREACH(t, &d->tuns, entry) {
		if (metrics_counted_elsewhere(d, t))
			continue;
		render_printf(o, "rstreamd_tunnel_bytes_total{tunnel=");
		render_prom_str(o, t->c->name);
		render_printf(o, ",direction=\"in\"} %llu\n",
		    (unsigned long long)t->st->bytes_in);
		render_printf(o, "rstreamd_tunnel_bytes_total{tunnel=");
		render_prom_str(o, t->c->name);
		render_printf(o, ",direction=\"out\"} %llu\n",
		    (unsigned long long)t->st->bytes_out);
	}
	for (m = tunnel_metrics; m < tunnel_metrics + NITEMS(tunnel_metrics);
	    m++)
		tunnel_metric(d, o, m->name, m->type, m->help, m->off,
		    m->kind);
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
		    *(const uint64_t *)(const void *)((const char *)d +
		    m->off));
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

/* Each link: up or not, its version, then link_metrics[]. */
static void
metrics_links(struct rsd *d, struct render_buf *o)
{
	const struct link_metric_def *m;
	const struct link_value_def *v;
	const struct dlink *dl;
	struct link_info li;

	render_metric_head(o, "rstreamd_link_up", "gauge", "1 if the RDMA "
	    "link is up.");
	for (dl = link_first(d); dl != NULL; dl = link_next(dl)) {
		link_info(dl, &li);
		render_printf(o, "rstreamd_link_up{link=");
		render_prom_str(o, li.name);
		render_printf(o, ",peer=");
		render_prom_str(o, li.peer);
		render_printf(o, ",direction=\"%s\"} %d\n", li.dir,
		    li.state == LINK_UP);
	}
	render_metric_head(o, "rstreamd_link_protocol_version", "gauge",
	    "The protocol version a connected link speaks.");
	for (dl = link_first(d); dl != NULL; dl = link_next(dl)) {
		link_info(dl, &li);
		if (li.version == 0)
			continue;
		render_printf(o, "rstreamd_link_protocol_version{link=");
		render_prom_str(o, li.name);
		render_printf(o, ",peer=");
		render_prom_str(o, li.peer);
		render_printf(o, ",direction=\"%s\"} %u\n", li.dir,
		    li.version);
	}
	for (m = link_metrics; m < link_metrics + NITEMS(link_metrics); m++)
		link_metric(d, o, m->name, m->type, m->help, m->label,
		    m->cols, m->ncols);
	for (v = link_values; v < link_values + NITEMS(link_values); v++)
		link_value(d, o, v);
}

void
metrics_render(struct rsd *d, struct render_buf *o)
{

	metrics_daemon(d, o);
	metrics_tunnels(d, o);
	metrics_counters(d, o);
	metrics_links(d, o);
	fabric_metrics(d, o);
	identity_metrics(d, o);
}
