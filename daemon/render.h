/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * render: what rstreamctl shows, as text: a growing buffer, tables that
 * render either as aligned columns for people or as a JSON array of
 * objects (so the two can never disagree), and the escaping JSON strings
 * and Prometheus label values need.  Pure: no daemon state, no I/O.
 */
#ifndef RENDER_H
#define RENDER_H

#include <stddef.h>

/* A growing text buffer; after a failed allocation it stays failed. */
struct render_buf {
	char *p;
	size_t len, cap;
	int oom;
};

/**
 * render_printf(o, fmt, ...):
 * Append to ${o}.
 */
void render_printf(struct render_buf *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * render_json_str(o, s) / render_prom_str(o, s):
 * Append ${s} as a JSON string, or as a Prometheus label value, quotes
 * included.
 */
void render_json_str(struct render_buf *o, const char *s);
void render_prom_str(struct render_buf *o, const char *s);

/**
 * render_metric_head(o, name, type, help):
 * Append a metric's # HELP and # TYPE lines.
 */
void render_metric_head(struct render_buf *o, const char *name,
    const char *type, const char *help);

/* A table column: its name is the JSON key (and, upper-cased with spaces
 * for underscores, the text heading); a numeric one is a JSON number and
 * right-aligned. */
struct render_col {
	const char *name;
	int numeric;
};

#define RENDER_COLS_MAX	32

struct render_tab {
	const struct render_col *cols;
	int ncol;
	char **cells;
	size_t nrows, cap;
	int oom;
};

/**
 * render_tab_init(t, cols, ncol):
 * An empty table with the ${ncol} columns ${cols} (kept, not copied).
 */
void render_tab_init(struct render_tab *t, const struct render_col *cols,
    int ncol);

/**
 * render_tab_row(t, ...):
 * Add a row: one string per column (NULL is "").  A numeric column's
 * cell that is not a number renders as null in JSON (a blank: no value).
 */
void render_tab_row(struct render_tab *t, ...);

/**
 * render_tab(o, t, json):
 * Append table ${t} to ${o}, as text or as JSON, and free it.
 */
void render_tab(struct render_buf *o, struct render_tab *t, int json);

#endif /* !RENDER_H */
