#include "config.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bridge.h"
#include "conf.h"
#include "ctl.h"
#include "link.h"
#include "log.h"
#include "loop.h"
#include "rsd.h"
#include "sock.h"
#include "tunnel.h"

/* A client that sends nothing for this long is closed. */
#define CTL_IDLE_MS	5000
#define CTL_REQ_MAX	256
#define CTL_CONNS_MAX	16

struct ctl_conn {
	struct ctl *ctl;
	int fd;
	struct loop_fd *w;
	struct loop_timer idle;
	char req[CTL_REQ_MAX];
	size_t reqlen;
	char *out;
	size_t outlen, outoff;
	struct ctl_conn *next;
};

struct ctl {
	struct rsd *d;
	int fd;
	struct loop_fd *w;
	char path[108];
	struct sock_file sf;
	struct ctl_conn *conns;
	unsigned nconns;
};

/* ------------------------------------------------------------- output */

/* A growing text buffer; after a failed allocation it stays failed. */
struct obuf {
	char *p;
	size_t len, cap;
	int oom;
};

static void __attribute__((format(printf, 2, 3)))
ob_printf(struct obuf *o, const char *fmt, ...)
{
	va_list ap;
	size_t need;
	char *np;
	int n;

	if (o->oom)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		o->oom = 1;
		return;
	}
	need = o->len + (size_t)n + 1;
	if (need > o->cap) {
		size_t cap = o->cap ? o->cap : 1024;

		while (cap < need)
			cap *= 2;
		if ((np = realloc(o->p, cap)) == NULL) {
			o->oom = 1;
			return;
		}
		o->p = np;
		o->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	o->len += (size_t)n;
}

/* ${s} as a JSON string, quotes included. */
static void
ob_json_str(struct obuf *o, const char *s)
{
	const unsigned char *q;

	ob_printf(o, "\"");
	for (q = (const unsigned char *)s; *q != '\0'; q++) {
		if (*q == '"' || *q == '\\')
			ob_printf(o, "\\%c", *q);
		else if (*q < 0x20)
			ob_printf(o, "\\u%04x", *q);
		else
			ob_printf(o, "%c", *q);
	}
	ob_printf(o, "\"");
}

/* ${s} as a Prometheus label value, quotes included. */
static void
ob_prom_str(struct obuf *o, const char *s)
{

	ob_printf(o, "\"");
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			ob_printf(o, "\\%c", *s);
		else if (*s == '\n')
			ob_printf(o, "\\n");
		else
			ob_printf(o, "%c", *s);
	}
	ob_printf(o, "\"");
}

/*
 * A table: one set of rows, rendered either as aligned columns for people
 * or as a JSON array of objects, so the two can never disagree.  Column
 * names are the JSON keys; numeric columns are JSON numbers.
 */
#define TAB_COLS 12

struct tab {
	const char *cols[TAB_COLS];
	int ncol;
	unsigned numeric;		/* bit per column */
	char **cells;
	size_t nrows, cap;
	int oom;
};

static void
tab_init(struct tab *t, unsigned numeric, ...)
{
	va_list ap;
	const char *c;

	memset(t, 0, sizeof(*t));
	t->numeric = numeric;
	va_start(ap, numeric);
	while ((c = va_arg(ap, const char *)) != NULL && t->ncol < TAB_COLS)
		t->cols[t->ncol++] = c;
	va_end(ap);
}

/* Add a row: ${ncol} printf-formatted cells, given as format strings. */
static void
tab_row(struct tab *t, ...)
{
	va_list ap;
	char **cells;
	int i;

	if (t->oom)
		return;
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;

		cells = realloc(t->cells, cap * (size_t)t->ncol *
		    sizeof(*cells));
		if (cells == NULL) {
			t->oom = 1;
			return;
		}
		t->cells = cells;
		t->cap = cap;
	}
	cells = &t->cells[t->nrows * (size_t)t->ncol];
	va_start(ap, t);
	for (i = 0; i < t->ncol; i++) {
		const char *v = va_arg(ap, const char *);

		if ((cells[i] = strdup(v != NULL ? v : "")) == NULL)
			t->oom = 1;
	}
	va_end(ap);
	t->nrows++;
}

static void
tab_free(struct tab *t)
{
	size_t i;

	for (i = 0; i < t->nrows * (size_t)t->ncol; i++)
		free(t->cells[i]);
	free(t->cells);
}

static void
tab_text(struct obuf *o, const struct tab *t)
{
	size_t w[TAB_COLS], r, len;
	const char *v;
	int i, j;

	for (i = 0; i < t->ncol; i++)
		w[i] = strlen(t->cols[i]);
	for (r = 0; r < t->nrows; r++)
		for (i = 0; i < t->ncol; i++)
			if ((len = strlen(t->cells[r * (size_t)t->ncol +
			    (size_t)i])) > w[i])
				w[i] = len;
	for (i = 0; i < t->ncol; i++) {
		for (j = 0; t->cols[i][j] != '\0'; j++)
			ob_printf(o, "%c", t->cols[i][j] == '_' ? ' ' :
			    t->cols[i][j] - ('a' <= t->cols[i][j] &&
			    t->cols[i][j] <= 'z' ? 32 : 0));
		ob_printf(o, "%*s", i + 1 < t->ncol ?
		    (int)(w[i] - strlen(t->cols[i]) + 2) : 0, "");
	}
	ob_printf(o, "\n");
	for (r = 0; r < t->nrows; r++) {
		for (i = 0; i < t->ncol; i++) {
			v = t->cells[r * (size_t)t->ncol + (size_t)i];
			if (i + 1 == t->ncol)
				ob_printf(o, "%s", v);
			else if (t->numeric & (1u << i))
				ob_printf(o, "%*s  ", (int)w[i], v);
			else
				ob_printf(o, "%-*s  ", (int)w[i], v);
		}
		ob_printf(o, "\n");
	}
}

static void
tab_json(struct obuf *o, const struct tab *t)
{
	const char *v;
	size_t r;
	int i;

	ob_printf(o, "[");
	for (r = 0; r < t->nrows; r++) {
		ob_printf(o, "%s{", r ? "," : "");
		for (i = 0; i < t->ncol; i++) {
			v = t->cells[r * (size_t)t->ncol + (size_t)i];
			ob_printf(o, "%s", i ? "," : "");
			ob_json_str(o, t->cols[i]);
			ob_printf(o, ":");
			if ((t->numeric & (1u << i)) && v[0] != '\0' &&
			    v[strspn(v, "0123456789.")] == '\0')
				ob_printf(o, "%s", v);
			else if (t->numeric & (1u << i))
				ob_printf(o, "null");
			else
				ob_json_str(o, v);
		}
		ob_printf(o, "}");
	}
	ob_printf(o, "]");
}

/* Numbers as cells: a few at a time, each in its own small buffer. */
#define NUM(i, v) (snprintf(nb[i], sizeof(nb[i]), "%llu",		\
	(unsigned long long)(v)), nb[i])

/* ------------------------------------------------------------- tables */

/*
 * A draining tunnel whose name is configured again shares its counters
 * with the new one: show them once, under the new one.
 */
static int
counted_elsewhere(struct rsd *d, const struct tun *t)
{

	return (t->draining && tunnel_find(d, t->c->name) != NULL);
}

static const char *
tun_link_state(const struct tun *t)
{
	struct link_info li;

	if (!t->c->has_accept || t->link == NULL)
		return ("");
	link_info(t->link, &li);
	return (li.state);
}

static void
tunnels_tab(struct rsd *d, struct tab *tb)
{
	const struct tun *t;
	char nb[4][24];

	tab_init(tb, 1u << 5 | 1u << 6, "tunnel", "side", "address", "peer",
	    "state", "streams", "max_streams", "link", NULL);
	TAILQ_FOREACH(t, &d->tuns, entry)
		tab_row(tb, t->c->name, t->c->has_accept ? "client" : "target",
		    t->c->has_accept ? (t->bound[0] ? t->bound : "-") :
		    t->c->target.text,
		    t->c->has_accept && t->link ? link_peer(t->link) : "",
		    t->draining || d->draining ? "draining" : "active",
		    NUM(0, t->nstreams), NUM(1, t->c->sz.max_streams),
		    tun_link_state(t));
}

static void
streams_tab(struct rsd *d, struct tab *tb)
{
	const struct tun *t;
	const struct bridge *b;
	struct bridge_info bi;
	char nb[4][24];

	tab_init(tb, 1u << 1 | 1u << 6 | 1u << 7 | 1u << 8, "tunnel",
	    "stream", "side", "address", "peer", "state", "bytes_in",
	    "bytes_out", "age_s", NULL);
	TAILQ_FOREACH(t, &d->tuns, entry) {
		for (b = t->streams; b != NULL; b = bridge_tnext(b)) {
			bridge_info(b, &bi);
			tab_row(tb, t->c->name, NUM(0, bi.serial), bi.side,
			    bi.who, bi.peer, bi.state, NUM(1, bi.bytes_in),
			    NUM(2, bi.bytes_out), NUM(3, bi.age_ms / 1000));
		}
	}
}

static void
links_tab(struct rsd *d, struct tab *tb)
{
	const struct dlink *dl;
	struct link_info li;
	char nb[8][24];
	int s;

	tab_init(tb, 0xfc0u, "link", "direction", "peer", "tunnel", "state",
	    "device", "streams", "bytes_tx", "bytes_rx", "stall_ring",
	    "stall_msg", "stall_sq", NULL);
	for (dl = d->links; dl != NULL; dl = link_next(dl)) {
		link_info(dl, &li);
		s = li.have_stats;
		tab_row(tb, li.name, li.dir, li.peer, li.tunnel,
		    li.goaway ? "up (peer going away)" : li.state, li.device,
		    s ? NUM(0, li.st.streams_active) : "",
		    s ? NUM(1, li.st.bytes_tx) : "",
		    s ? NUM(2, li.st.bytes_rx) : "",
		    s ? NUM(3, li.st.stall_ring) : "",
		    s ? NUM(4, li.st.stall_msg) : "",
		    s ? NUM(5, li.st.stall_sq) : "");
	}
}

static void
stats_tab(struct rsd *d, struct tab *tb)
{
	const struct tun *t;
	struct link_info li;
	char nb[9][24];
	int s;

	tab_init(tb, 0x3feu, "tunnel", "bytes_in", "bytes_out", "opened",
	    "active", "refused", "limited", "denied", "failed",
	    "credit_stalls", "link", NULL);
	TAILQ_FOREACH(t, &d->tuns, entry) {
		if (counted_elsewhere(d, t))
			continue;
		s = 0;
		if (t->link != NULL) {
			link_info(t->link, &li);
			s = li.have_stats;
		}
		tab_row(tb, t->c->name, NUM(0, t->st->bytes_in),
		    NUM(1, t->st->bytes_out), NUM(2, t->st->opened),
		    NUM(3, t->st->active), NUM(4, t->st->refused),
		    NUM(5, t->st->limited), NUM(6, t->st->denied),
		    NUM(7, t->st->failed),
		    s ? NUM(8, li.st.stall_ring + li.st.stall_msg +
		    li.st.stall_sq) : "",
		    t->link != NULL ? li.state : "");
	}
}

/* ------------------------------------------------------------ commands */

static void
render(struct obuf *o, struct tab *tb, int json)
{

	if (json)
		tab_json(o, tb);
	else
		tab_text(o, tb);
	if (tb->oom)
		o->oom = 1;
	tab_free(tb);
}

static const char *
state_text(const struct rsd *d)
{

	return (d->draining ? "stopping" : "running");
}

static void
cmd_status(struct rsd *d, struct obuf *o, int json)
{
	uint64_t now = loop_now_ms();
	unsigned up, links = link_count(d, &up);
	struct tab tb;

	if (json) {
		ob_printf(o, "{\"version\":\"%s\",\"pid\":%ld,\"state\":\"%s\","
		    "\"uptime_s\":%llu,\"config\":", PACKAGE_VERSION,
		    (long)getpid(), state_text(d),
		    (unsigned long long)((now - d->started_ms) / 1000));
		ob_json_str(o, d->conf->file);
		ob_printf(o, ",\"reloads\":%u,\"reload_error\":", d->reloads);
		if (d->reload_error[0] != '\0')
			ob_json_str(o, d->reload_error);
		else
			ob_printf(o, "null");
		ob_printf(o, ",\"log\":");
		ob_json_str(o, log_destination());
		ob_printf(o, ",\"streams\":%u,\"links\":%u,\"links_up\":%u,"
		    "\"links_rejected\":%llu,\"links_evicted\":%llu,"
		    "\"auth_failures\":%llu,\"tunnels\":", tunnel_streams(d),
		    links, up, (unsigned long long)d->links_rejected,
		    (unsigned long long)d->links_evicted,
		    (unsigned long long)d->auth_failures);
		tunnels_tab(d, &tb);
		render(o, &tb, 1);
		ob_printf(o, "}\n");
		return;
	}
	ob_printf(o, "rstreamd %s, pid %ld, %s for %llu s\n", PACKAGE_VERSION,
	    (long)getpid(), state_text(d),
	    (unsigned long long)((now - d->started_ms) / 1000));
	ob_printf(o, "config: %s (%u reload%s%s)\n", d->conf->file,
	    d->reloads, d->reloads == 1 ? "" : "s",
	    d->reload_error[0] ? "; the last one FAILED" : "");
	if (d->reload_error[0] != '\0')
		ob_printf(o, "last reload failed, running the previous "
		    "configuration: %s\n", d->reload_error);
	ob_printf(o, "log: %s\n", log_destination());
	ob_printf(o, "%zu tunnel%s, %u stream%s, %u of %u link%s up\n",
	    d->conf->ntunnels, d->conf->ntunnels == 1 ? "" : "s",
	    tunnel_streams(d), tunnel_streams(d) == 1 ? "" : "s", up, links,
	    links == 1 ? "" : "s");
	ob_printf(o, "links rejected: %llu; idle links closed for room: "
	    "%llu; authentication failures: %llu\n\n",
	    (unsigned long long)d->links_rejected,
	    (unsigned long long)d->links_evicted,
	    (unsigned long long)d->auth_failures);
	tunnels_tab(d, &tb);
	render(o, &tb, 0);
}

static void
cmd_stats(struct rsd *d, struct obuf *o, int json)
{
	struct tab tb;

	stats_tab(d, &tb);
	if (json) {
		ob_printf(o, "{\"tunnels\":");
		render(o, &tb, 1);
		ob_printf(o, ",\"links\":");
		links_tab(d, &tb);
		render(o, &tb, 1);
		ob_printf(o, "}\n");
		return;
	}
	render(o, &tb, 0);
	ob_printf(o, "\n");
	links_tab(d, &tb);
	render(o, &tb, 0);
}

static void
metric_head(struct obuf *o, const char *name, const char *type,
    const char *help)
{

	ob_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void
tunnel_metric(struct rsd *d, struct obuf *o, const char *name,
    const char *type, const char *help, size_t off, int u32)
{
	const struct tun *t;
	const char *p;
	uint64_t v;

	metric_head(o, name, type, help);
	TAILQ_FOREACH(t, &d->tuns, entry) {
		if (counted_elsewhere(d, t))
			continue;
		p = (const char *)t->st + off;
		v = u32 ? *(const uint32_t *)(const void *)p :
		    *(const uint64_t *)(const void *)p;
		ob_printf(o, "%s{tunnel=", name);
		ob_prom_str(o, t->c->name);
		ob_printf(o, "} %llu\n", (unsigned long long)v);
	}
}

static void
cmd_metrics(struct rsd *d, struct obuf *o)
{
	const struct dlink *dl;
	struct link_info li;
	const struct tun *t;
	static const struct { const char *kind; size_t off; } stalls[] = {
		{ "ring", offsetof(struct engine_stats, stall_ring) },
		{ "message", offsetof(struct engine_stats, stall_msg) },
		{ "send_queue", offsetof(struct engine_stats, stall_sq) },
	};
	size_t k;

	metric_head(o, "rstreamd_info", "gauge", "Version of the running "
	    "rstreamd.");
	ob_printf(o, "rstreamd_info{version=\"%s\"} 1\n", PACKAGE_VERSION);
	metric_head(o, "rstreamd_uptime_seconds", "gauge", "Seconds since "
	    "rstreamd started.");
	ob_printf(o, "rstreamd_uptime_seconds %llu\n", (unsigned long long)
	    ((loop_now_ms() - d->started_ms) / 1000));
	metric_head(o, "rstreamd_reloads_total", "counter", "Configuration "
	    "reloads that worked.");
	ob_printf(o, "rstreamd_reloads_total %u\n", d->reloads);
	metric_head(o, "rstreamd_reload_failed", "gauge", "1 if the last "
	    "reload failed (the previous configuration is running).");
	ob_printf(o, "rstreamd_reload_failed %d\n", d->reload_error[0] != '\0');

	metric_head(o, "rstreamd_tunnel_bytes_total", "counter", "Stream "
	    "payload bytes, in from local sockets and out to them.");
	TAILQ_FOREACH(t, &d->tuns, entry) {
		if (counted_elsewhere(d, t))
			continue;
		ob_printf(o, "rstreamd_tunnel_bytes_total{tunnel=");
		ob_prom_str(o, t->c->name);
		ob_printf(o, ",direction=\"in\"} %llu\n",
		    (unsigned long long)t->st->bytes_in);
		ob_printf(o, "rstreamd_tunnel_bytes_total{tunnel=");
		ob_prom_str(o, t->c->name);
		ob_printf(o, ",direction=\"out\"} %llu\n",
		    (unsigned long long)t->st->bytes_out);
	}
	tunnel_metric(d, o, "rstreamd_tunnel_streams_opened_total", "counter",
	    "Streams opened.", offsetof(struct tun_stats, opened), 0);
	tunnel_metric(d, o, "rstreamd_tunnel_streams_active", "gauge",
	    "Streams open now.", offsetof(struct tun_stats, active), 1);
	tunnel_metric(d, o, "rstreamd_tunnel_streams_refused_total", "counter",
	    "Streams refused (no target, a limit, the peer refused).",
	    offsetof(struct tun_stats, refused), 0);
	tunnel_metric(d, o, "rstreamd_tunnel_streams_limited_total", "counter",
	    "Streams refused because a limit was reached.",
	    offsetof(struct tun_stats, limited), 0);
	tunnel_metric(d, o, "rstreamd_tunnel_streams_failed_total", "counter",
	    "Streams that ended with a reset or an error.",
	    offsetof(struct tun_stats, failed), 0);

	tunnel_metric(d, o, "rstreamd_tunnel_accept_pauses_total", "counter",
	    "Times accepting paused because the process ran out of file "
	    "descriptors.", offsetof(struct tun_stats, accept_pauses), 0);
	tunnel_metric(d, o, "rstreamd_tunnel_streams_denied_total", "counter",
	    "Streams refused because their link did not prove this tunnel's "
	    "key.", offsetof(struct tun_stats, denied), 0);
	metric_head(o, "rstreamd_links_rejected_total", "counter", "Incoming "
	    "links rejected by a limit, allow, or an invalid hello.");
	ob_printf(o, "rstreamd_links_rejected_total %llu\n",
	    (unsigned long long)d->links_rejected);
	metric_head(o, "rstreamd_links_evicted_total", "counter", "Incoming "
	    "links closed after link_idle_timeout without a stream, to make "
	    "room for a new link.");
	ob_printf(o, "rstreamd_links_evicted_total %llu\n",
	    (unsigned long long)d->links_evicted);
	metric_head(o, "rstreamd_auth_failures_total", "counter", "Links "
	    "that failed to authenticate (wrong key, none, or too late).");
	ob_printf(o, "rstreamd_auth_failures_total %llu\n",
	    (unsigned long long)d->auth_failures);

	metric_head(o, "rstreamd_link_up", "gauge", "1 if the RDMA link is "
	    "up.");
	for (dl = d->links; dl != NULL; dl = link_next(dl)) {
		link_info(dl, &li);
		ob_printf(o, "rstreamd_link_up{link=");
		ob_prom_str(o, li.name);
		ob_printf(o, ",peer=");
		ob_prom_str(o, li.peer);
		ob_printf(o, ",direction=\"%s\"} %d\n", li.dir,
		    strcmp(li.state, "up") == 0);
	}
	metric_head(o, "rstreamd_link_credit_stalls_total", "counter", "Times "
	    "work waited for credit: peer ring space, message credits or "
	    "send queue space.");
	for (dl = d->links; dl != NULL; dl = link_next(dl)) {
		link_info(dl, &li);
		if (!li.have_stats)
			continue;
		for (k = 0; k < sizeof(stalls) / sizeof(stalls[0]); k++) {
			ob_printf(o, "rstreamd_link_credit_stalls_total{link=");
			ob_prom_str(o, li.name);
			ob_printf(o, ",kind=\"%s\"} %llu\n", stalls[k].kind,
			    (unsigned long long)*(const uint64_t *)(const void *)
			    ((const char *)&li.st + stalls[k].off));
		}
	}
}

/**
 * ctl_answer(d, request, out, outlen):
 * The complete answer to ${request} (one line without its newline), in
 * a new buffer ${*out} of ${*outlen} bytes (free it).  Returns 0, or -1
 * when out of memory.
 */
int
ctl_answer(struct rsd *d, const char *request, char **out, size_t *outlen)
{
	struct obuf o = { NULL, 0, 0, 0 };
	char cmd[32], fmt[32], extra[2], err[1100];
	struct tab tb;
	int n, json;

	n = sscanf(request, "%31s %31s %1s", cmd, fmt, extra);
	json = n >= 2 && strcmp(fmt, "json") == 0;
	if (n < 1 || n > 2 || (n == 2 && !json)) {
		ob_printf(&o, "error: bad request; send COMMAND or "
		    "\"COMMAND json\"\n");
	} else if (strcmp(cmd, "status") == 0) {
		ob_printf(&o, "ok\n");
		cmd_status(d, &o, json);
	} else if (strcmp(cmd, "tunnels") == 0) {
		ob_printf(&o, "ok\n");
		tunnels_tab(d, &tb);
		render(&o, &tb, json);
	} else if (strcmp(cmd, "streams") == 0) {
		ob_printf(&o, "ok\n");
		streams_tab(d, &tb);
		render(&o, &tb, json);
	} else if (strcmp(cmd, "links") == 0) {
		ob_printf(&o, "ok\n");
		links_tab(d, &tb);
		render(&o, &tb, json);
	} else if (strcmp(cmd, "stats") == 0) {
		ob_printf(&o, "ok\n");
		cmd_stats(d, &o, json);
	} else if (strcmp(cmd, "metrics") == 0) {
		ob_printf(&o, "ok\n");
		cmd_metrics(d, &o);
	} else if (strcmp(cmd, "version") == 0) {
		ob_printf(&o, "ok\n");
		ob_printf(&o, json ? "{\"version\":\"%s\"}\n" :
		    "rstreamd %s\n", PACKAGE_VERSION);
	} else if (strcmp(cmd, "reload") == 0) {
		log_notice("reload requested on the control socket");
		if (rsd_reload(d, err, sizeof(err)) == 0) {
			ob_printf(&o, "ok\n");
			if (json)
				ob_printf(&o, "{\"reloaded\":true,"
				    "\"tunnels\":%zu}\n", d->conf->ntunnels);
			else
				ob_printf(&o, "reloaded %s: %zu tunnels\n",
				    d->conf->file, d->conf->ntunnels);
		} else {
			ob_printf(&o, "error: reload failed, still running "
			    "the previous configuration: %s\n", err);
		}
	} else {
		ob_printf(&o, "error: unknown command '%s' (try status, "
		    "tunnels, streams, links, stats, reload, metrics, version)\n",
		    cmd);
	}
	/* Tables end without a newline in JSON: end the document. */
	if (json && o.len > 0 && o.p[o.len - 1] != '\n')
		ob_printf(&o, "\n");
	if (o.oom) {
		free(o.p);
		return (-1);
	}
	*out = o.p;
	*outlen = o.len;
	return (0);
}

/* ---------------------------------------------------------- connections */

static void
conn_free(struct ctl_conn *cc)
{
	struct ctl_conn **p;

	for (p = &cc->ctl->conns; *p != NULL; p = &(*p)->next)
		if (*p == cc) {
			*p = cc->next;
			break;
		}
	cc->ctl->nconns--;
	loop_fd_del(cc->w);
	loop_timer_stop(&cc->idle);
	close(cc->fd);
	free(cc->out);
	free(cc);
}

static void
on_idle(void *arg)
{
	struct ctl_conn *cc = arg;

	conn_free(cc);
}

static void
conn_write(struct ctl_conn *cc)
{
	ssize_t n;

	while (cc->outoff < cc->outlen) {
		n = send(cc->fd, cc->out + cc->outoff, cc->outlen - cc->outoff,
		    MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			cc->outoff += (size_t)n;
			/* A slow reader that keeps reading is not idle. */
			loop_timer_arm(&cc->idle, CTL_IDLE_MS);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			loop_fd_set(cc->w, EPOLLOUT);
			return;
		}
		break;
	}
	conn_free(cc);
}

static void
on_conn(void *arg, uint32_t events)
{
	struct ctl_conn *cc = arg;
	char *nl;
	ssize_t n;

	(void)events;
	if (cc->out != NULL) {
		conn_write(cc);
		return;
	}
	n = recv(cc->fd, cc->req + cc->reqlen, sizeof(cc->req) - 1 -
	    cc->reqlen, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_free(cc);
		return;
	}
	cc->reqlen += (size_t)n;
	cc->req[cc->reqlen] = '\0';
	if ((nl = strchr(cc->req, '\n')) == NULL) {
		if (cc->reqlen < sizeof(cc->req) - 1)
			return;
		nl = cc->req + cc->reqlen;	/* too long: answer anyway */
	}
	*nl = '\0';
	if (ctl_answer(cc->ctl->d, cc->req, &cc->out, &cc->outlen)) {
		conn_free(cc);
		return;
	}
	conn_write(cc);
}

/* Close the connection waiting longest (the list is newest first). */
static void
conn_evict(struct ctl *ctl)
{
	struct ctl_conn *cc, *oldest = NULL;

	for (cc = ctl->conns; cc != NULL; cc = cc->next)
		oldest = cc;
	if (oldest != NULL)
		conn_free(oldest);
}

static void
on_listen(void *arg, uint32_t events)
{
	struct ctl *ctl = arg;
	struct ctl_conn *cc;
	int fd;

	(void)events;
	for (;;) {
		fd = accept4(ctl->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			/* Out of descriptors: rest rather than spin. */
			if (errno == EMFILE || errno == ENFILE)
				loop_fd_pause(ctl->w, 200);
			return;
		}
		/*
		 * Full: the oldest connection makes room, so clients that
		 * connect and say nothing (or never read their answer)
		 * cannot keep rstreamctl out.
		 */
		if (ctl->nconns >= CTL_CONNS_MAX)
			conn_evict(ctl);
		if (ctl->nconns >= CTL_CONNS_MAX ||
		    (cc = calloc(1, sizeof(*cc))) == NULL) {
			close(fd);
			continue;
		}
		cc->ctl = ctl;
		cc->fd = fd;
		if ((cc->w = loop_fd_add(ctl->d->lp, fd, EPOLLIN, on_conn,
		    cc)) == NULL) {
			close(fd);
			free(cc);
			continue;
		}
		loop_timer_init(&cc->idle, ctl->d->lp, on_idle, cc);
		loop_timer_arm(&cc->idle, CTL_IDLE_MS);
		cc->next = ctl->conns;
		ctl->conns = cc;
		ctl->nconns++;
	}
}

/**
 * ctl_new(d, err, errlen):
 * Listen on d->conf's control socket.  Returns the control socket, or
 * NULL with the reason in ${err}.
 */
struct ctl *
ctl_new(struct rsd *d, char *err, size_t errlen)
{
	const struct conf *c = d->conf;
	struct conf_addr a;
	char bound[160], why[512];
	struct ctl *ctl;

	if ((ctl = calloc(1, sizeof(*ctl))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	ctl->d = d;
	/* Under systemd RuntimeDirectory= made it; elsewhere, we do. */
	if (strcmp(c->control, CONF_DEFAULT_CONTROL) == 0)
		(void)mkdir("/run/rstreamd", 0755);
	memset(&a, 0, sizeof(a));
	a.kind = CONF_ADDR_UNIX;
	snprintf(a.path, sizeof(a.path), "%s", c->control);
	snprintf(a.text, sizeof(a.text), "unix:%s", c->control);
	snprintf(ctl->path, sizeof(ctl->path), "%s", c->control);
	ctl->fd = sock_listen(&a, c->control_mode, "", c->control_group,
	    &ctl->sf, bound, sizeof(bound), why, sizeof(why));
	if (ctl->fd < 0) {
		snprintf(err, errlen, "control socket: %s", why);
		free(ctl);
		return (NULL);
	}
	if ((ctl->w = loop_fd_add(d->lp, ctl->fd, EPOLLIN, on_listen,
	    ctl)) == NULL) {
		snprintf(err, errlen, "cannot watch the control socket");
		ctl_free(ctl);
		return (NULL);
	}
	return (ctl);
}

/**
 * ctl_path(ctl):
 * The path ${ctl} listens on.
 */
const char *
ctl_path(const struct ctl *ctl)
{

	return (ctl->path);
}

/**
 * ctl_free(ctl):
 * Close the control socket, its connections, and remove the socket file.
 * NULL is a no-op.
 */
void
ctl_free(struct ctl *ctl)
{

	if (ctl == NULL)
		return;
	while (ctl->conns != NULL)
		conn_free(ctl->conns);
	loop_fd_del(ctl->w);
	close(ctl->fd);
	sock_unix_unlink(ctl->path, &ctl->sf);
	free(ctl);
}
