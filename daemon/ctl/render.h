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
#include <stdint.h>

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
 * render_duration(buf, len, ms):
 * ${ms} milliseconds as people read a time span, in at most two units,
 * rounded down, into ${buf} of ${len} bytes: "0s", "59s", "3m12s",
 * "2h05m", "3d04h".  Returns ${buf}.
 */
char *render_duration(char *buf, size_t len, uint64_t ms);

/**
 * render_metric_head(o, name, type, help):
 * Append a metric's # HELP and # TYPE lines.
 */
void render_metric_head(struct render_buf *o, const char *name,
    const char *type, const char *help);

/*
 * A table column, one line of a table's definition: where its cell comes
 * from in a row (a struct of the caller's) and how it is written.  The
 * JSON key is ${name}; the text heading is ${head}, or without one the
 * name upper-cased with spaces for underscores.  Text shows the default
 * columns unless asked for others (render_tab's ${pick}); JSON always
 * carries every column.
 */
enum render_kind {
	RENDER_STR,	/* a const char * (NULL: blank) */
	RENDER_NUM,	/* a uint64_t (RENDER_BLANK: blank), right-aligned */
	RENDER_NS_S,	/* a uint64_t of nanoseconds, as seconds to 3
			   decimals (RENDER_BLANK: blank), right-aligned */
	RENDER_US,	/* a uint64_t of nanoseconds, as whole
			   microseconds (RENDER_BLANK: blank) */
	RENDER_SINCE,	/* a uint64_t of milliseconds since the epoch
			   (RENDER_BLANK: blank): in JSON a UTC time,
			   "2025-03-01T12:00:05Z"; as text how long before
			   the table's now_ms, "3m12s", right-aligned */
};

/* A number that does not apply: its cell is blank (null in JSON). */
#define RENDER_BLANK	UINT64_MAX

struct render_col {
	const char *name;
	const char *head;		/* NULL: from the name */
	enum render_kind kind;
	size_t off;			/* of the value in the row */
	int wide;			/* text shows it only when asked */
};

/* A column of row type ${type}: RENDER_COL(type, field, kind, wide). */
#define RENDER_COL(type, field, kind, wide)				\
	{ #field, NULL, (kind), offsetof(type, field), (wide) }

#define RENDER_COLS_MAX	64

struct render_tab {
	const struct render_col *cols;
	int ncol;
	uint64_t now_ms;		/* the time RENDER_SINCE counts back
					   from, ms since the epoch (0 after
					   render_tab_init: set it) */
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
 * render_tab_add(t, row):
 * Add a row: each column's cell from ${row}, the struct its columns
 * describe.
 */
void render_tab_add(struct render_tab *t, const void *row);

/**
 * render_pick_check(o, pick, tabs, ntabs):
 * Whether ${pick}, the columns text should show, names only columns of
 * the ${ntabs} tables ${tabs}: NULL, "" or "table" (the default
 * columns), "wide" (every column), or names separated by commas, each a
 * heading with underscores or spaces, or a JSON key, in any case.  0, or
 * -1 with why (the unknown name, the formats, and the columns there are)
 * in ${o}.
 */
int render_pick_check(struct render_buf *o, const char *pick,
    const struct render_tab *const *tabs, int ntabs);

/**
 * render_tab(o, t, json, pick):
 * Append table ${t} to ${o}, as JSON (every column), or as text with the
 * columns ${pick} says (see render_pick_check; names not in ${t} are
 * skipped), and free it.  Returns how many columns the text has: a table
 * with none is left out, heading and all.
 */
int render_tab(struct render_buf *o, struct render_tab *t, int json,
    const char *pick);

#endif /* !RENDER_H */
