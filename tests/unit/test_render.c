/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for daemon/render and daemon/tables: tables as text and as
 * JSON, the columns -o picks, escaping, times; rstreamctl's tables within
 * 120 columns with long values; a link that is not up, and check's line.
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
	    check(" table ", 1) && check("bytes_in,Bytes In,wait_s,wait", 1),
	    "the default (or table), wide, and names by heading or key are "
	    "good");
	ok(check("name,frob", 0) && check("name,,state", 0) &&
	    check("wide,name", 0) && check("bytes", 0) &&
	    check("table,name", 0) && check("yaml", 0),
	    "an unknown name, an empty one, wide or table among names, a part "
	    "of a name, an unknown format are not");
	s = table(0, "TABLE");
	ok(s != NULL && strncmp(s, "NAME       BYTES IN  STATE\n", 27) == 0,
	    "-o table: the default columns");
	free(s);
	render_tab_init(&t, cols, 4);
	render_tab_init(&u, cols, 2);
	ok(render_pick_check(&o, "frob", tp, 2) == -1 && strcmp(o.p,
	    "unknown column or format 'frob'; the formats are table, wide "
	    "and json, the columns: name, bytes_in, wait, state\n") == 0,
	    "the error names the unknown name, the formats, and lists the "
	    "columns once");
	free(o.p);
}

/* A table of times: one now, one 192 s ago, one blank. */
struct trow {
	const char *name;
	uint64_t since;
};

static const struct render_col tcols[] = {
	RENDER_COL(struct trow, name, RENDER_STR, 0),
	RENDER_COL(struct trow, since, RENDER_SINCE, 0),
};

/* 2025-03-01T12:00:05Z, in ms since the epoch. */
#define NOW_MS	1740830405000ull

static void
test_since(void)
{
	struct render_buf o = { NULL, 0, 0, 0 };
	struct render_tab t;
	struct trow r[3] = { { "a", NOW_MS }, { "b", NOW_MS - 192345 },
	    { "c", RENDER_BLANK } };
	char buf[32];
	int i;

	ok(strcmp(render_duration(buf, sizeof(buf), 0), "0s") == 0 &&
	    strcmp(render_duration(buf, sizeof(buf), 59999), "59s") == 0 &&
	    strcmp(render_duration(buf, sizeof(buf), 60000), "1m00s") == 0 &&
	    strcmp(render_duration(buf, sizeof(buf), 192345), "3m12s") == 0 &&
	    strcmp(render_duration(buf, sizeof(buf), 3599999), "59m59s") ==
	    0 && strcmp(render_duration(buf, sizeof(buf), 7500000),
	    "2h05m") == 0 && strcmp(render_duration(buf, sizeof(buf),
	    (3 * 86400 + 4 * 3600 + 59) * 1000ull), "3d04h") == 0,
	    "durations: two units at most, rounded down");
	render_tab_init(&t, tcols, 2);
	t.now_ms = NOW_MS;
	for (i = 0; i < 3; i++)
		render_tab_add(&t, &r[i]);
	render_tab(&o, &t, 0, NULL);
	diag(o.p);
	ok(o.p != NULL && strcmp(o.p,
	    "NAME  SINCE\n"
	    "a        0s\n"
	    "b     3m12s\n"
	    "c          \n") == 0,
	    "text: a time as how long before the table's now, right-aligned");
	o.len = 0;
	render_tab_init(&t, tcols, 2);
	t.now_ms = NOW_MS;
	for (i = 0; i < 3; i++)
		render_tab_add(&t, &r[i]);
	render_tab(&o, &t, 1, NULL);
	ok(o.p != NULL && strcmp(o.p,
	    "[{\"name\":\"a\",\"since\":\"2025-03-01T12:00:05Z\"},"
	    "{\"name\":\"b\",\"since\":\"2025-03-01T11:56:52Z\"},"
	    "{\"name\":\"c\",\"since\":null}]") == 0,
	    "JSON: a time in UTC, a blank one null");
	diag(o.p);
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
		    9999, 10000, "authenticating", 0, RENDER_BLANK, "" },
		{ "backup-copy", "target", "tcp://[2001:db8:1::30]:8443", "",
		    "active", 17, 10000, "", RENDER_BLANK, RENDER_BLANK, "" } };
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
	    .peer_qpn = 654321, .worker = 2, .version = 5, .failures = 0,
	    .failures_total = 123456, .down_since = RENDER_BLANK,
	    .last_error = "" };
	struct tables_link in = li;
	struct tables_stat sa = { "pg-primary", BIG, BIG, BIG, 9999, BIG, BIG,
	    BIG, BIG, BIG, BIG, BIG, BIG, BIG, BIG, BIG, BIG, BIG, BIG, BIG,
	    BIG, BIG, "authenticating" };
	char *s;

	in.link = "link from " FROM6;
	in.direction = "in";
	in.peer = FROM6;
	in.tunnel = "";
	in.failures = in.failures_total = RENDER_BLANK;
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

/* A link to a dead peer, beside an up one: why, since when, how often. */
#define WHY	"the peer rejected the connection (no listener there?)"

static void
test_down(void)
{
	struct render_buf o = { NULL, 0, 0, 0 };
	struct render_tab t;
	struct tables_link up = { .link = "tunnel pg-primary: link to " PEER6,
	    .direction = "out", .peer = PEER6, .tunnel = "pg-primary",
	    .state = "up", .streams = 10000, .bytes_tx = BIG,
	    .bytes_rx = BIG, .sq_depth = 384, .inflight = 16777216,
	    .wait_credit_ns = 12345678901234, .wait_sq_ns = 12345678901234,
	    .failures = 0, .failures_total = 7, .down_since = RENDER_BLANK,
	    .last_error = "" };
	struct tables_link dn = up;
	struct tables_tunnel tu = { "pg-primary", "client", "127.0.0.1:15432",
	    PEER6, "active", 0, 10000, "retrying", 5, NOW_MS - 192345, WHY };
	const char *e, *line;
	char *s;

	dn.state = "retrying";
	dn.tunnel = "db-replica1";
	dn.streams = dn.bytes_tx = dn.bytes_rx = dn.sq_depth = RENDER_BLANK;
	dn.inflight = dn.wait_credit_ns = dn.wait_sq_ns = RENDER_BLANK;
	/* A day of attempts, 2 s apart. */
	dn.failures = 43200;
	dn.failures_total = 43210;
	dn.down_since = NOW_MS - (86400 + 3 * 3600) * 1000ull;
	dn.retry_wait = 2000;
	dn.last_error = WHY;
	tables_links(&t);
	t.now_ms = NOW_MS;
	render_tab_add(&t, &up);
	render_tab_add(&t, &dn);
	width(&t, NULL, &s);
	e = s != NULL ? strstr(s, WHY) : NULL;
	ok(e != NULL && strstr(s, "  FAILS  DOWN   ERROR\n") != NULL &&
	    strstr(s, "  43200  1d03h  " WHY "\n") != NULL,
	    "links: the failures in a row, since when and why, by default");
	for (line = e; e != NULL && line > s && line[-1] != '\n'; line--)
		;
	ok(e != NULL && e - line < 120, "links: within 120 columns up to "
	    "the message, which is last");
	ok(s != NULL && strstr(s, "SQ DEPTH") == NULL &&
	    strstr(s, "43210") == NULL,
	    "links: the send queue and the failures in all are wide");
	free(s);
	tables_links(&t);
	t.now_ms = NOW_MS;
	render_tab_add(&t, &dn);
	width(&t, "fails,failures_total,down_since,down,error,state", &s);
	ok(s != NULL && strcmp(s,
	    "FAILS  FAILURES TOTAL  DOWN   ERROR                             "
	    "                     STATE\n"
	    "43200           43210  1d03h  " WHY "  retrying\n") == 0,
	    "links -o: the columns by heading or key");
	free(s);
	tables_links(&t);
	t.now_ms = NOW_MS;
	render_tab_add(&t, &dn);
	render_tab(&o, &t, 1, NULL);
	ok(o.p != NULL && strstr(o.p, "\"failures\":43200,"
	    "\"failures_total\":43210,\"down_since\":"
	    "\"2025-02-28T09:00:05Z\",\"retry_wait_ms\":2000,"
	    "\"last_error\":\"" WHY "\"}") != NULL,
	    "links JSON: the failures, a UTC time, the back-off, the message");
	diag(o.p);
	o.len = 0;

	tables_tunnels(&t);
	t.now_ms = NOW_MS;
	render_tab_add(&t, &tu);
	width(&t, NULL, &s);
	ok(s != NULL && strstr(s, "LINK      LINK ERROR\n") != NULL &&
	    strstr(s, "retrying  " WHY "\n") != NULL,
	    "tunnels: the link's last error by default");
	free(s);
	tables_tunnels(&t);
	t.now_ms = NOW_MS;
	render_tab_add(&t, &tu);
	width(&t, "wide", &s);
	ok(s != NULL && strstr(s, "LINK FAILURES  LINK DOWN  LINK "
	    "ERROR\n") != NULL && strstr(s, "  5      3m12s  " WHY) !=
	    NULL, "tunnels -o wide: since when, and how often");
	free(s);

	tables_tunnel_down(&o, &tu, NOW_MS);
	ok(o.p != NULL && strcmp(o.p, "tunnel pg-primary: link to " PEER6
	    " retrying, not up for 3m12s, 5 failures in a row: " WHY "\n") ==
	    0,
	    "check's line: the state, since when, the failures, why");
	diag(o.p);
	o.len = 0;
	tu.link_failures = 1;
	tables_tunnel_down(&o, &tu, NOW_MS);
	ok(strstr(o.p, ", 1 failure in a row: ") != NULL, "one failure");
	o.len = 0;
	tu.link = "connecting";
	tu.link_failures = 0;
	tu.link_error = "";
	tu.link_down_since = NOW_MS - 2000;
	tables_tunnel_down(&o, &tu, NOW_MS);
	ok(strcmp(o.p, "tunnel pg-primary: link to " PEER6 " connecting, "
	    "not up for 2s\n") == 0, "a first attempt: no failure, no error");
	free(o.p);
}

int
main(void)
{
	struct render_buf o = { NULL, 0, 0, 0 };
	char big[5000];
	size_t i;

	test_generic();
	test_since();
	test_widths();
	test_down();

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
