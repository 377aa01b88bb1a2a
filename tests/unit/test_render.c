/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Unit tests for daemon/render: tables as text and as JSON, escaping. */
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "tap.h"

static const struct render_col cols[] = {
	{ "name", 0 }, { "bytes_in", 1 }, { "state", 0 }
};

/* Render a two-row table as text or JSON into a new string. */
static char *
table(int json)
{
	struct render_buf o = { NULL, 0, 0, 0 };
	struct render_tab t;

	render_tab_init(&t, cols, 3);
	render_tab_row(&t, "a", "5", "up");
	render_tab_row(&t, "long\"name", "", NULL);
	render_tab(&o, &t, json);
	return (o.oom ? NULL : o.p);
}

int
main(void)
{
	struct render_buf o = { NULL, 0, 0, 0 };
	char *s, big[5000];
	size_t i;

	s = table(0);
	ok(s != NULL && strcmp(s,
	    "NAME       BYTES IN  STATE\n"
	    "a                 5  up\n"
	    "long\"name            \n") == 0,
	    "text: headings from the names, numbers right-aligned, the last "
	    "column unpadded");
	free(s);
	s = table(1);
	ok(s != NULL && strcmp(s,
	    "[{\"name\":\"a\",\"bytes_in\":5,\"state\":\"up\"},"
	    "{\"name\":\"long\\\"name\",\"bytes_in\":null,\"state\":\"\"}]")
	    == 0, "JSON: the same rows, numbers as numbers, a blank number "
	    "as null, strings escaped");
	free(s);

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
