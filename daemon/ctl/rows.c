/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/queue.h>

#include <stdint.h>
#include <string.h>
#include <time.h>

#include "bridge.h"
#include "conf.h"
#include "hca.h"
#include "link.h"
#include "metrics.h"
#include "render.h"
#include "rows.h"
#include "rsd.h"
#include "tables.h"
#include "tunnel.h"
#include "verbs.h"

/* A number's cell, blank unless ${have}. */
#define NUM_IF(have, v)	((have) ? (uint64_t)(v) : RENDER_BLANK)

uint64_t
rows_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

/* Client tunnel ${t}'s link, into its row ${r}. */
static void
tun_link_row(const struct tun *t, struct tables_tunnel *r)
{
	struct link_info li;

	r->link = "";
	r->link_error = "";
	r->link_failures = r->link_down_since = RENDER_BLANK;
	if (!t->c->has_accept || t->link == NULL)
		return;
	link_info(t->link, &li);
	r->link = link_state_name(li.state);
	r->link_error = li.last_error;
	r->link_failures = NUM_IF(li.have_failures, li.failures);
	r->link_down_since = NUM_IF(li.down_since_ms != 0, li.down_since_ms);
}

void
rows_tunnel(struct rsd *d, const struct tun *t, struct tables_tunnel *r)
{
	int client = t->c->has_accept;

	memset(r, 0, sizeof(*r));
	r->tunnel = t->c->name;
	r->side = client ? "client" : "target";
	r->address = client ? (t->bound[0] ? t->bound : "-") :
	    t->c->target.text;
	r->peer = client && t->link ? link_peer(t->link) : "";
	r->state = t->draining || d->draining ? "draining" : "active";
	r->streams = t->nstreams;
	r->max_streams = t->c->sz.max_streams;
	tun_link_row(t, r);
}

void
rows_tunnels(struct rsd *d, struct render_tab *tb)
{
	const struct tun *t;
	struct tables_tunnel r;

	tables_tunnels(tb);
	tb->now_ms = rows_now_ms();
	TAILQ_FOREACH(t, &d->tuns, entry) {
		rows_tunnel(d, t, &r);
		render_tab_add(tb, &r);
	}
}

void
rows_streams(struct rsd *d, struct render_tab *tb)
{
	const struct tun *t;
	const struct bridge *b;
	struct bridge_info bi;
	struct tables_stream r;

	tables_streams(tb);
	TAILQ_FOREACH(t, &d->tuns, entry) {
		for (b = bridge_first(t); b != NULL; b = bridge_next(b)) {
			bridge_info(b, &bi);
			memset(&r, 0, sizeof(r));
			r.tunnel = t->c->name;
			r.stream = bi.serial;
			r.side = bi.side;
			r.address = bi.who;
			r.peer = bi.peer;
			r.identity = bi.identity;
			r.origin = bi.origin;
			r.state = bi.state;
			r.bytes_in = bi.bytes_in;
			r.bytes_out = bi.bytes_out;
			r.age_s = bi.age_ms / 1000;
			r.queued = NUM_IF(bi.have_send, bi.send.queued);
			r.unacked = NUM_IF(bi.have_send, bi.send.unacked);
			r.wait_credit_ns = NUM_IF(bi.have_send,
			    bi.send.wait_credit_ns);
			r.wait_sq_ns = NUM_IF(bi.have_send, bi.send.wait_sq_ns);
			render_tab_add(tb, &r);
		}
	}
}

/* Where link ${li} runs on the fabric, into ${r}. */
static void
link_row_hca(const struct link_info *li, struct tables_link *r)
{
	const struct hca_info *h = li->hca;
	/* iWARP (TCP) has no GID, and learns no peer's QP number. */
	int iw = h != NULL && h->iwarp;

	r->port = NUM_IF(h != NULL, h ? h->port : 0);
	r->transport = h != NULL ? h->transport : "";
	r->gid_index = NUM_IF(h != NULL && h->gid_index >= 0,
	    h ? h->gid_index : 0);
	r->gid = h != NULL && !iw ? h->gid : "";
	r->peer_gid = h != NULL && !iw ? h->peer_gid : "";
	r->path_mtu = NUM_IF(h != NULL && h->path_mtu > 0,
	    h ? h->path_mtu : 0);
	r->qpn = NUM_IF(h != NULL, h ? h->qpn : 0);
	r->peer_qpn = NUM_IF(h != NULL && !iw, h ? h->peer_qpn : 0);
	r->lane1_qpn = NUM_IF(h != NULL && h->lane1_qpn != 0,
	    h ? h->lane1_qpn : 0);
	r->lane1_peer_qpn = NUM_IF(h != NULL && h->lane1_qpn != 0 && !iw,
	    h ? h->lane1_peer_qpn : 0);
	r->traffic_class = NUM_IF(h != NULL && h->traffic_class >= 0,
	    h ? h->traffic_class : 0);
	r->service_level = NUM_IF(h != NULL && h->sl >= 0, h ? h->sl : 0);
	r->rnr_timer = NUM_IF(h != NULL && h->rnr_us >= 0,
	    h ? (uint64_t)h->rnr_us : 0);
	r->inline_size = NUM_IF(h != NULL, h ? h->inline_size : 0);
}

void
rows_links(struct rsd *d, struct render_tab *tb)
{
	const struct dlink *dl;
	struct link_info li;
	struct tables_link r;
	int s;

	tables_links(tb);
	tb->now_ms = rows_now_ms();
	for (dl = link_first(d); dl != NULL; dl = link_next(dl)) {
		link_info(dl, &li);
		s = li.have_stats;
		memset(&r, 0, sizeof(r));
		r.link = li.name;
		r.direction = li.dir;
		r.peer = li.peer;
		r.identity = li.identity;
		r.sealing = li.sealing != NULL ? li.sealing : "";
		r.tunnel = li.tunnel;
		r.state = li.goaway ? "up (peer going away)" :
		    link_state_name(li.state);
		r.device = li.device;
		r.streams = NUM_IF(s, li.st.streams_active);
		r.bytes_tx = NUM_IF(s, li.st.bytes_tx);
		r.bytes_rx = NUM_IF(s, li.st.bytes_rx);
		r.sq_depth = NUM_IF(s, li.st.sq_depth);
		r.inflight = NUM_IF(s, li.st.inflight);
		r.lanes = NUM_IF(s, li.st.lanes);
		r.notify = !s ? "" : li.st.notify ? "send" : "imm";
		r.lane0_depth = NUM_IF(s, li.st.lane[0].depth);
		r.lane0_inflight = NUM_IF(s, li.st.lane[0].inflight);
		r.lane1_depth = NUM_IF(s && li.st.lanes > 1,
		    li.st.lane[1].depth);
		r.lane1_inflight = NUM_IF(s && li.st.lanes > 1,
		    li.st.lane[1].inflight);
		r.lane0_fences = NUM_IF(s, li.st.lane[0].fences);
		r.lane1_fences = NUM_IF(s && li.st.lanes > 1,
		    li.st.lane[1].fences);
		r.window = NUM_IF(s, li.st.window);
		r.rtt_ns = NUM_IF(s && li.st.rtt_ns, li.st.rtt_ns);
		r.rate = NUM_IF(s && li.st.rate, li.st.rate);
		r.wait_credit_ns = NUM_IF(s, li.st.wait_credit_ns);
		r.wait_sq_ns = NUM_IF(s, li.st.wait_sq_ns);
		r.stall_ring = NUM_IF(s, li.st.stall_ring);
		r.stall_msg = NUM_IF(s, li.st.stall_msg);
		r.stall_sq = NUM_IF(s, li.st.stall_sq);
		r.stall_window = NUM_IF(s, li.st.stall_window);
		r.ring_bytes = NUM_IF(s, li.mem.pinned);
		r.rings_reused = NUM_IF(s, li.mem.reused);
		r.ctrl_bytes = NUM_IF(s, li.mem.control);
		r.cq_arms = NUM_IF(s, li.arms.arms);
		r.cq_arms_quiet = NUM_IF(s, li.arms.quiet);
		r.private_bytes = NUM_IF(s, li.st.rx_private);
		r.suspended = li.suspended;
		r.resume_id = li.resume_id;
		link_row_hca(&li, &r);
		r.worker = li.worker;
		r.version = NUM_IF(li.version, li.version);
		r.priority = NUM_IF(li.priority, li.priority);
		r.share = li.share;
		r.failures = NUM_IF(li.have_failures, li.failures);
		r.failures_total = NUM_IF(li.have_failures,
		    li.failures_total);
		r.down_since = NUM_IF(li.down_since_ms != 0, li.down_since_ms);
		r.retry_wait = NUM_IF(li.retry_wait_ms != 0, li.retry_wait_ms);
		r.last_error = li.last_error;
		render_tab_add(tb, &r);
	}
}

/* Client tunnel ${t}'s link's error completions, into its row ${r}. */
static void
stat_completion_errors(const struct tun *t, struct tables_stat *r)
{
	const uint64_t *ce = t->st->completion_errors;
	int client = t->c->has_accept;

	r->retry_exceeded = NUM_IF(client, ce[VERBS_WC_RETRY]);
	r->rnr_retry_exceeded = NUM_IF(client, ce[VERBS_WC_RNR_RETRY]);
	r->remote_errors = NUM_IF(client, ce[VERBS_WC_REMOTE]);
	r->local_errors = NUM_IF(client, ce[VERBS_WC_LOCAL]);
}

void
rows_stats(struct rsd *d, struct render_tab *tb)
{
	const struct tun *t;
	struct link_info li;
	struct tables_stat r;
	int s;

	tables_stats(tb);
	TAILQ_FOREACH(t, &d->tuns, entry) {
		if (metrics_counted_elsewhere(d, t))
			continue;
		s = 0;
		if (t->link != NULL) {
			link_info(t->link, &li);
			s = li.have_stats;
		}
		memset(&r, 0, sizeof(r));
		r.tunnel = t->c->name;
		r.bytes_in = t->st->bytes_in;
		r.bytes_out = t->st->bytes_out;
		r.opened = t->st->opened;
		r.active = t->st->active;
		r.refused = t->st->refused;
		r.limited = t->st->limited;
		r.denied = t->st->denied;
		r.failed = t->st->failed;
		r.credit_stalls = NUM_IF(s, li.st.stall_ring +
		    li.st.stall_msg + li.st.stall_sq);
		r.budget_stops_in = t->st->budget_stops_in;
		r.budget_stops_out = t->st->budget_stops_out;
		r.suspended = t->st->suspended;
		r.resumes = t->st->resumes;
		r.resume_failures = t->st->resume_failures;
		r.pinned = t->st->pinned;
		r.max_memory = conf_tunnel_max_memory(d->conf, t->c);
		r.ring_refusals = t->st->ring_refusals;
		stat_completion_errors(t, &r);
		r.link = t->link != NULL ? link_state_name(li.state) : "";
		render_tab_add(tb, &r);
	}
}
