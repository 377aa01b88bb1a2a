/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * show: what each control command (ctlcmd.h) answers, from the running
 * daemon: status, the tables (rows.h), check, and the few lines of
 * reload, metrics and version.  The control socket (ctl.c) reads the
 * request, decides who may ask and when a reload may run, and sends the
 * answer; the commands only write it.
 */
#ifndef SHOW_H
#define SHOW_H

struct render_buf;
struct rsd;

/* What a request asks for besides its command. */
struct show_req {
	int json;
	const char *cols;	/* the columns its tables show as text
				   (render_pick_check); NULL: default */
	const char *tunnels;	/* the tunnels named, "a,b"; NULL: none */
};

/*
 * Each command writes its body into ${o}; it returns 0 ("ok"), 1 (check:
 * CTL_DOWN), or -1 when the body is the reason it failed ("error: ...").
 * The commands without tables ignore rq->cols, as metrics ignores json.
 */
typedef int show_fn(struct rsd *d, struct render_buf *o,
    const struct show_req *rq);

/**
 * show_status, show_tunnels, show_streams, show_links, show_stats,
 * show_check, show_metrics, show_version:
 * The answers of ctlcmd.h's commands of those names, as it says.
 * show_metrics may run in a shared turn (metrics.h); the others read
 * what only an exclusive turn may.
 */
show_fn show_status, show_tunnels, show_streams, show_links, show_stats,
    show_check, show_metrics, show_version;

/**
 * show_reload:
 * The answer of a reload that was applied: the file and its tunnels.
 */
show_fn show_reload;

#endif /* !SHOW_H */
