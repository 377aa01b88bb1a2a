/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for daemon/render and daemon/tables: tables as text and as
 * JSON, the columns -o picks, escaping; rstreamctl's tables within 120
 * columns with long values.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "tables.h"
#include "tap.h"

/* Print ${s} as TAP comments, a line at a time. */
static void
diag(const char *s)
{
	size_t n;

	for (; s != NULL && *s != '\0'; s += n + (s[n] == '\n')) {
		n = strcspn(s, "\n");
		printf("# %.*s\n", (int)n, s);
	}
}

struct row {
	const char *name;
	uint64_t bytes_in, wait_ns;
	const char *state;
};

static const struct render_col cols[] = {
	RENDER_COL(struct row, name, RENDER_STR, 0),
	RENDER_COL(struct row, bytes_in, RENDER_NUM, 0),
	{ "wait_s", "WAIT", RENDER_NS_S, offsetof(struct row, wait_ns), 1 },
	RENDER_COL(struct row, state, RENDER_STR, 0),
};

/* Render a two-row table as text (columns ${pick}) or JSON. */
static char *
table(int json, const char *pick)
{
	struct render_buf o = { NULL, 0, 0, 0 };
	struct render_tab t;
	struct row r1 = { "a", 5, 1234567890, "up" };
	struct row r2 = { "long\"name", RENDER_BLANK, RENDER_BLANK, NULL };

	render_tab_init(&t, cols, 4);
	render_tab_add(&t, &r1);
	render_tab_add(&t, &r2);
	render_tab(&o, &t, json, pick);
	return (o.oom ? NULL : o.p);
}

/* Whether ${pick} is found good (${good}) or not for the table. */
static int
check(const char *pick, int good)
{
	struct render_buf o = { NULL, 0, 0, 0 };
	struct render_tab t;
	const struct render_tab *tp = &t;
	int rc;

	render_tab_init(&t, cols, 4);
	rc = render_pick_check(&o, pick, &tp, 1);
	if (rc != 0)
		diag(o.p);
	free(o.p);
	return (good ? rc == 0 : rc == -1);
}

static void
test_generic(void)
{
	struct render_buf o = { NULL, 0, 0, 0 };
	struct render_tab t, u;
	const struct render_tab *tp[2] = { &t, &u };
	char *s;

	s = table(0, NULL);
	ok(s != NULL && strcmp(s,
	    "NAME       BYTES IN  STATE\n"
	    "a                 5  up\n"
	    "long\"name            \n") == 0,
	    "text: headings from the names, numbers right-aligned, the last "
	    "column unpadded, a wide-only column left out");
	free(s);
	s = table(0, "wide");
	ok(s != NULL && strcmp(s,
	    "NAME       BYTES IN  WAIT   STATE\n"
	    "a                 5  1.234  up\n"
	    "long\"name                   \n") == 0,
	    "-o wide: every column, a heading of its own, nanoseconds as "
	    "seconds");
	free(s);
	s = table(0, " State , WAIT,bytes in,state");
	ok(s != NULL && strcmp(s,
	    "STATE  WAIT   BYTES IN\n"
	    "up     1.234         5\n"
	    "                      \n") == 0,
	    "-o names: those columns in that order, by heading or key, any "
	    "case, spaces or underscores, once each");
	free(s);
	s = table(1, "state");
	ok(s != NULL && strcmp(s,
	    "[{\"name\":\"a\",\"bytes_in\":5,\"wait_s\":1.234,"
	    "\"state\":\"up\"},"
	    "{\"name\":\"long\\\"name\",\"bytes_in\":null,\"wait_s\":null,"
	    "\"state\":\"\"}]")
	    == 0, "JSON: every column whatever -o says, numbers as numbers, a "
	    "blank number as null, strings escaped");
	free(s);

	ok(check(NULL, 1) && check("", 1) && check("WIDE", 1) &&
	    check("bytes_in,Bytes In,wait_s,wait", 1),
	    "the default, wide, and names by heading or key are good");
	ok(check("name,frob", 0) && check("name,,state", 0) &&
	    check("wide,name", 0) && check("bytes", 0),
	    "an unknown name, an empty one, wide among names, a part of a "
	    "name are not");
	render_tab_init(&t, cols, 4);
	render_tab_init(&u, cols, 2);
	ok(render_pick_check(&o, "frob", tp, 2) == -1 && strcmp(o.p,
	    "unknown column 'frob'; the columns are: name, bytes_in, wait, "
	    "state (or wide)\n") == 0,
	    "the error names the unknown column and lists the good ones once");
	free(o.p);
}

/* The longest line of ${s}. */
static size_t
longest(const char *s)
{
	size_t n, max = 0;

	for (; *s != '\0'; s += n + (s[n] == '\n')) {
		n = strcspn(s, "\n");
		if (n > max)
			max = n;
	}
	return (max);
}

/* Render ${t}, with rows added, as text with ${pick}; its longest line. */
static size_t
width(struct render_tab *t, const char *pick, char **out)
{
	struct render_buf o = { NULL, 0, 0, 0 };
	size_t w;

	render_tab(&o, t, 0, pick);
	w = o.p != NULL ? longest(o.p) : 0;
	diag(o.p);
	if (out != NULL)
		*out = o.p;
	else
		free(o.p);
	return (w);
}

/* Long but likely values: IPv6 peers, 10-digit counts, long states. */
#define PEER6	"[2001:db8:1::20]:7471"
#define FROM6	"[2001:db8:1::10]:54321"
#define BIG	4294967296ull

static void
test_widths(void)
{
	struct render_tab t;
	struct tables_tunnel tu[2] = {
		{ "pg-primary", "client", "127.0.0.1:15432", PEER6, "draining",
		    9999, 10000, "authenticating" },
		{ "backup-copy", "target", "tcp://[2001:db8:1::30]:8443", "",
		    "active", 17, 10000, "" } };
	struct tables_stream st = { .tunnel = "pg-primary", .stream = 123456,
	    .side = "target", .address = "tcp://[2001:db8:1::30]:8443",
	    .peer = FROM6, .origin = "[2001:db8:1::77]:54321",
	    .state = "half-closed (out)", .bytes_in = BIG, .bytes_out = BIG,
	    .age_s = 86400, .queued = 262144, .unacked = 262144,
	    .wait_credit_ns = 12345678901234, .wait_sq_ns = 12345678901234 };
	struct tables_link li = { .link = "tunnel pg-primary: link to " PEER6,
	    .direction = "out", .peer = PEER6, .tunnel = "pg-primary",
	    .state = "up", .device = "mlx5_0", .streams = 10000,
	    .bytes_tx = BIG, .bytes_rx = BIG, .sq_depth = 384,
	    .inflight = 16777216, .window = 16777216, .rtt_ns = 123456,
	    .rate = 12500000000, .wait_credit_ns = 12345678901234,
	    .wait_sq_ns = 12345678901234, .stall_ring = BIG, .stall_msg = BIG,
	    .stall_sq = BIG, .stall_window = BIG, .ring_bytes = BIG,
	    .rings_reused = 1000, .ctrl_bytes = 1 << 20, .suspended = 0,
	    .resume_id = "0123456789abcdef0123456789abcdef", .port = 1,
	    .transport = "RoCEv2", .gid_index = 3, .gid = "2001:db8:1::10",
	    .peer_gid = "2001:db8:1::20", .path_mtu = 4096, .qpn = 123456,
	    .peer_qpn = 654321, .worker = 2, .version = 5 };
	struct tables_link in = li;
	struct tables_stat sa = { "pg-primary", BIG, BIG, BIG, 9999, BIG, BIG,
	    BIG, BIG, BIG, BIG, BIG, BIG, BIG, BIG, BIG, "authenticating" };
	char *s;

	in.link = "link from " FROM6;
	in.direction = "in";
	in.peer = FROM6;
	in.tunnel = "";
	tables_tunnels(&t);
	render_tab_add(&t, &tu[0]);
	render_tab_add(&t, &tu[1]);
	ok(width(&t, NULL, NULL) < 120, "tunnels: within 120 columns");
	tables_streams(&t);
	render_tab_add(&t, &st);
	ok(width(&t, NULL, NULL) < 120, "streams: within 120 columns");
	tables_links(&t);
	render_tab_add(&t, &li);
	render_tab_add(&t, &in);
	ok(width(&t, NULL, NULL) < 120, "links: within 120 columns");
	tables_stats(&t);
	render_tab_add(&t, &sa);
	ok(width(&t, NULL, NULL) < 120, "stats: within 120 columns");

	tables_links(&t);
	render_tab_add(&t, &li);
	ok(width(&t, "wide", &s) > 200 && strstr(s, " PEER QPN ") != NULL &&
	    strstr(s, "  123  ") != NULL && strstr(s, "  12500000000  ") !=
	    NULL && strstr(s, "mlx5_0") != NULL,
	    "links -o wide: every column, rtt in microseconds");
	free(s);
	tables_links(&t);
	render_tab_add(&t, &li);
	ok(width(&t, "peer,gid", &s) > 0 && strcmp(s,
	    "PEER                   GID\n"
	    PEER6 "  2001:db8:1::10\n") == 0, "links -o peer,gid");
	free(s);
}

int
main(void)
{
	struct render_buf o = { NULL, 0, 0, 0 };
	char big[5000];
	size_t i;

	test_generic();
	test_widths();

	render_json_str(&o, "tab\there \\ \x01");
	ok(o.p != NULL && strcmp(o.p, "\"tab\\u0009here \\\\ \\u0001\"") == 0,
	    "JSON strings escape control characters and backslashes");
	o.len = 0;
	render_prom_str(&o, "a\"b\\c\nd");
	ok(strcmp(o.p, "\"a\\\"b\\\\c\\nd\"") == 0,
	    "Prometheus label values escape quotes, backslashes, newlines");
	o.len = 0;
	render_metric_head(&o, "m_total", "counter", "Things.");
	ok(strcmp(o.p, "# HELP m_total Things.\n# TYPE m_total counter\n") ==
	    0, "a metric's head");
	o.len = 0;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (i = 0; i < 100; i++)
		render_printf(&o, "%s", big);
	ok(!o.oom && o.len == 100 * (sizeof(big) - 1) &&
	    strlen(o.p) == o.len, "the buffer grows past its first size");
	free(o.p);
	return (tap_done());
}
