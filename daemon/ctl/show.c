/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/queue.h>

#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "cm.h"
#include "conf.h"
#include "link.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"
#include "render.h"
#include "rows.h"
#include "rsd.h"
#include "show.h"
#include "tables.h"
#include "tunnel.h"
#include "verbs.h"

/* What status says about the daemon, in both forms. */
struct status {
	unsigned long long uptime_s;
	unsigned links, up;
	const char *state;
	const char *rdma;		/* cm_rdma's */
	char rdma_why[600];
	struct verbs_cm_mem cmm;
	struct render_tab tb;		/* the tunnels */
};

/*
 * Links from peers that ended on an error completion, by status: a JSON
 * object's members, or a line of text.
 */
static void
status_completion_errors(struct rsd *d, struct render_buf *o, int json)
{
	int c;

	render_printf(o, json ? ",\"completion_errors_in\":{" : "links from "
	    "peers ended by errors:");
	for (c = VERBS_WC_NONE + 1; c < VERBS_WC_N; c++)
		render_printf(o, json ? "%s\"%s\":%llu" : "%s %s %llu",
		    c == VERBS_WC_NONE + 1 ? "" : json ? "," : ";",
		    verbs_wc_error_name(c),
		    (unsigned long long)d->completion_errors_in[c]);
	render_printf(o, json ? "}" : "\n");
}

static void
status_json(struct rsd *d, struct render_buf *o, struct status *st)
{

	render_printf(o, "{\"version\":\"%s\",\"pid\":%ld,"
	    "\"state\":\"%s\",\"uptime_s\":%llu,\"config\":",
	    PACKAGE_VERSION, (long)getpid(), st->state, st->uptime_s);
	render_json_str(o, d->conf->file);
	render_printf(o, ",\"reloads\":%u,\"reload_error\":", d->reloads);
	if (d->reload_error[0] != '\0')
		render_json_str(o, d->reload_error);
	else
		render_printf(o, "null");
	render_printf(o, ",\"log\":");
	render_json_str(o, log_destination());
	render_printf(o, ",\"rdma\":\"%s\",\"rdma_problem\":", st->rdma);
	if (st->rdma_why[0] != '\0')
		render_json_str(o, st->rdma_why);
	else
		render_printf(o, "null");
	render_printf(o, ",\"streams\":%u,\"links\":%u,"
	    "\"links_up\":%u,\"links_rejected\":%llu,"
	    "\"links_evicted\":%llu,\"auth_failures\":%llu,"
	    "\"links_revoked\":%llu,\"streams_revoked\":%llu,"
	    "\"forged_messages\":%llu,\"resume_refusals\":%llu,\"resume_timeouts\":%llu,"
	    "\"stepdowns\":%llu,\"stepdowns_refused\":%llu,"
	    "\"ring_bytes\":%llu,\"control_bytes\":%llu,"
	    "\"suspended_bytes\":%llu,\"max_memory\":%llu,"
	    "\"workers\":%zu", tunnel_streams(d), st->links,
	    st->up, (unsigned long long)d->links_rejected,
	    (unsigned long long)d->links_evicted,
	    (unsigned long long)d->auth_failures,
	    (unsigned long long)d->links_revoked,
	    (unsigned long long)d->streams_revoked,
	    (unsigned long long)d->forged,
	    (unsigned long long)d->resume_refusals,
	    (unsigned long long)d->resume_timeouts,
	    (unsigned long long)d->stepdowns,
	    (unsigned long long)d->stepdowns_refused,
	    (unsigned long long)st->cmm.total,
	    (unsigned long long)st->cmm.control,
	    (unsigned long long)st->cmm.detached,
	    (unsigned long long)conf_max_memory_bytes(d->conf),
	    link_workers(d));
	status_completion_errors(d, o, 1);
	render_printf(o, ",\"tunnels\":");
	render_tab(o, &st->tb, 1, NULL);
	render_printf(o, "}");
}

static void
status_text(struct rsd *d, struct render_buf *o, struct status *st,
    const char *cols)
{
	char line[1400];

	render_printf(o, "rstreamd %s, pid %ld, %s for %llu s\n",
	    PACKAGE_VERSION, (long)getpid(), st->state, st->uptime_s);
	render_printf(o, "config: %s (%u reload%s%s)\n", d->conf->file,
	    d->reloads, d->reloads == 1 ? "" : "s",
	    d->reload_error[0] ? "; the last one FAILED" : "");
	if (d->reload_error[0] != '\0')
		render_printf(o, "last reload failed, running the previous "
		    "configuration: %s\n", d->reload_error);
	render_printf(o, "log: %s\n", log_destination());
	render_printf(o, "rdma: %s\n", st->rdma_why[0] != '\0' ?
	    st->rdma_why : st->rdma);
	/* The same sentence as systemd's STATUS=, but for what RDMA lacks
	 * (above) and a failed reload. */
	tunnel_status(d, line, sizeof(line));
	line[strcspn(line, ";")] = '\0';
	render_printf(o, "%s\n", line);
	render_printf(o, "links rejected: %llu; idle links closed for room: "
	    "%llu; authentication failures: %llu\nresumes refused: %llu; "
	    "suspended streams timed out: %llu; forged messages: %llu\n",
	    (unsigned long long)d->links_rejected,
	    (unsigned long long)d->links_evicted,
	    (unsigned long long)d->auth_failures,
	    (unsigned long long)d->resume_refusals,
	    (unsigned long long)d->resume_timeouts,
	    (unsigned long long)d->forged);
	render_printf(o, "revoked by reloads: %llu link%s, %llu stream%s\n",
	    (unsigned long long)d->links_revoked, d->links_revoked == 1 ?
	    "" : "s", (unsigned long long)d->streams_revoked,
	    d->streams_revoked == 1 ? "" : "s");
	render_printf(o, "protocol step-downs: %llu; refused below "
	    "min_version: %llu\n", (unsigned long long)d->stepdowns,
	    (unsigned long long)d->stepdowns_refused);
	status_completion_errors(d, o, 0);
	render_printf(o, "workers: %zu\n", link_workers(d));
	if (d->conf->max_memory != 0)
		render_printf(o, "ring memory: %llu of %llu bytes (max_memory)",
		    (unsigned long long)st->cmm.total,
		    (unsigned long long)conf_max_memory_bytes(d->conf));
	else
		render_printf(o, "ring memory: %llu bytes",
		    (unsigned long long)st->cmm.total);
	render_printf(o, "; links' control buffers %llu, suspended streams' "
	    "rings %llu\n\n", (unsigned long long)st->cmm.control,
	    (unsigned long long)st->cmm.detached);
	render_tab(o, &st->tb, 0, cols);
}

typedef void tab_init_fn(struct render_tab *);

/*
 * Whether ${cols} names only columns of the tables ${init} (and ${init2},
 * if not NULL) make; if not, why goes into ${o}.
 */
static int
cols_ok(struct render_buf *o, const char *cols, tab_init_fn *init,
    tab_init_fn *init2)
{
	struct render_tab tb[2];
	const struct render_tab *tp[2] = { &tb[0], &tb[1] };

	init(&tb[0]);
	if (init2 != NULL)
		init2(&tb[1]);
	return (render_pick_check(o, cols, tp, init2 != NULL ? 2 : 1) == 0);
}

int
show_status(struct rsd *d, struct render_buf *o, const struct show_req *rq)
{
	struct status st;

	if (!cols_ok(o, rq->cols, tables_tunnels, NULL))
		return (-1);
	st.uptime_s = (unsigned long long)((loop_now_ms() - d->started_ms) /
	    1000);
	st.links = link_count(d, &st.up);
	st.state = d->draining ? "stopping" : "running";
	st.rdma = cm_rdma(d, st.rdma_why, sizeof(st.rdma_why));
	link_mem(d, &st.cmm);
	rows_tunnels(d, &st.tb);
	if (rq->json)
		status_json(d, o, &st);
	else
		status_text(d, o, &st, rq->cols);
	return (0);
}

/* A command whose answer is one table, made by ${init}, built by ${build}. */
static int
one_table(struct rsd *d, struct render_buf *o, const struct show_req *rq,
    tab_init_fn *init, void (*build)(struct rsd *, struct render_tab *))
{
	struct render_tab tb;

	if (!cols_ok(o, rq->cols, init, NULL))
		return (-1);
	build(d, &tb);
	render_tab(o, &tb, rq->json, rq->cols);
	return (0);
}

int
show_tunnels(struct rsd *d, struct render_buf *o, const struct show_req *rq)
{

	return (one_table(d, o, rq, tables_tunnels, rows_tunnels));
}

int
show_streams(struct rsd *d, struct render_buf *o, const struct show_req *rq)
{

	return (one_table(d, o, rq, tables_streams, rows_streams));
}

int
show_links(struct rsd *d, struct render_buf *o, const struct show_req *rq)
{

	return (one_table(d, o, rq, tables_links, rows_links));
}

/* Two tables; -o picks from either, and one with none of them is left out. */
int
show_stats(struct rsd *d, struct render_buf *o, const struct show_req *rq)
{
	struct render_tab tb;
	int json = rq->json, n;

	if (!cols_ok(o, rq->cols, tables_stats, tables_links))
		return (-1);
	rows_stats(d, &tb);
	render_printf(o, json ? "{\"tunnels\":" : "");
	n = render_tab(o, &tb, json, rq->cols);
	render_printf(o, json ? ",\"links\":" : n > 0 ? "\n" : "");
	rows_links(d, &tb);
	render_tab(o, &tb, json, rq->cols);
	render_printf(o, json ? "}" : "");
	return (0);
}

/*
 * Whether tunnel ${t} is one check looks at: an active client tunnel,
 * named in ${names} ("a,b") unless that is NULL.
 */
static int
check_wants(const struct tun *t, const char *names)
{
	const char *p = names;
	size_t n, len = strlen(t->c->name);

	if (!t->c->has_accept || t->draining)
		return (0);
	if (names == NULL)
		return (1);
	for (; *p != '\0'; p += n + (p[n] == ',')) {
		n = strcspn(p, ",");
		if (n == len && strncmp(p, t->c->name, n) == 0)
			return (1);
	}
	return (0);
}

/*
 * Whether each tunnel of ${names} ("a,b") is an active client tunnel; if
 * not, why goes into ${o}.
 */
static int
check_names(struct rsd *d, struct render_buf *o, const char *names)
{
	const struct tun *t;
	const char *p;
	size_t n;
	int found, target;

	for (p = names; p != NULL && *p != '\0'; p += n + (p[n] == ',')) {
		n = strcspn(p, ",");
		found = target = 0;
		TAILQ_FOREACH(t, &d->tuns, entry)
			if (strlen(t->c->name) == n &&
			    strncmp(p, t->c->name, n) == 0 && !t->draining) {
				found = 1;
				target = !t->c->has_accept;
			}
		if (found && !target)
			continue;
		if (target)
			render_printf(o, "tunnel %.*s is a target tunnel: its "
			    "links are its peers', it has none of its own to "
			    "check\n", (int)n, p);
		else
			render_printf(o, "no tunnel called '%.*s' (check "
			    "takes client tunnels' names)\n", (int)n, p);
		return (0);
	}
	return (1);
}

/*
 * Whether every client tunnel's link (or each named one's) is up: "ok",
 * or CTL_DOWN and a line for each that is not.  A daemon that only serves
 * has none to check: its incoming links are its peers' to keep up.
 */
int
show_check(struct rsd *d, struct render_buf *o, const struct show_req *rq)
{
	const struct tun *t;
	struct render_tab tb;
	struct tables_tunnel r;
	unsigned n = 0, down = 0;

	if (!check_names(d, o, rq->tunnels))
		return (-1);
	tables_tunnels(&tb);
	tb.now_ms = rows_now_ms();
	TAILQ_FOREACH(t, &d->tuns, entry) {
		if (!check_wants(t, rq->tunnels))
			continue;
		rows_tunnel(d, t, &r);
		n++;
		if (d->draining || t->link == NULL || !link_is_up(t->link)) {
			down++;
			if (!rq->json)
				tables_tunnel_down(o, &r, tb.now_ms);
		}
		if (rq->json)
			render_tab_add(&tb, &r);
	}
	if (rq->json) {
		render_printf(o, "{\"up\":%s,\"stopping\":%s,\"checked\":%u,"
		    "\"down\":%u,\"tunnels\":", down == 0 && !d->draining ?
		    "true" : "false", d->draining ? "true" : "false", n, down);
		render_tab(o, &tb, 1, NULL);
		render_printf(o, "}");
	} else {
		if (d->draining)
			render_printf(o, "the daemon is stopping\n");
		else if (n == 0)
			render_printf(o, "no client tunnels: no link of this "
			    "daemon's own to check\n");
		else if (down == 0)
			render_printf(o, "every link is up (%u tunnel%s)\n", n,
			    n == 1 ? "" : "s");
	}
	return (down > 0 || d->draining ? 1 : 0);
}

int
show_reload(struct rsd *d, struct render_buf *o, const struct show_req *rq)
{

	if (rq->json)
		render_printf(o, "{\"reloaded\":true,\"tunnels\":%zu}",
		    d->conf->ntunnels);
	else
		render_printf(o, "reloaded %s: %zu tunnels\n", d->conf->file,
		    d->conf->ntunnels);
	return (0);
}

int
show_metrics(struct rsd *d, struct render_buf *o, const struct show_req *rq)
{

	(void)rq;
	metrics_render(d, o);
	return (0);
}

int
show_version(struct rsd *d, struct render_buf *o, const struct show_req *rq)
{

	(void)d;
	render_printf(o, rq->json ? "{\"version\":\"%s\"}" : "rstreamd %s\n",
	    PACKAGE_VERSION);
	return (0);
}
