/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "render.h"

void
render_printf(struct render_buf *o, const char *fmt, ...)
{
	va_list ap;
	size_t need, cap;
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
		for (cap = o->cap ? o->cap : 1024; cap < need; cap *= 2)
			;
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

void
render_json_str(struct render_buf *o, const char *s)
{
	const unsigned char *q;

	render_printf(o, "\"");
	for (q = (const unsigned char *)s; *q != '\0'; q++) {
		if (*q == '"' || *q == '\\')
			render_printf(o, "\\%c", *q);
		else if (*q < 0x20)
			render_printf(o, "\\u%04x", *q);
		else
			render_printf(o, "%c", *q);
	}
	render_printf(o, "\"");
}

void
render_prom_str(struct render_buf *o, const char *s)
{

	render_printf(o, "\"");
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			render_printf(o, "\\%c", *s);
		else if (*s == '\n')
			render_printf(o, "\\n");
		else
			render_printf(o, "%c", *s);
	}
	render_printf(o, "\"");
}

char *
render_duration(char *buf, size_t len, uint64_t ms)
{
	unsigned long long s = ms / 1000;

	if (s < 60)
		snprintf(buf, len, "%llus", s);
	else if (s < 3600)
		snprintf(buf, len, "%llum%02llus", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%lluh%02llum", s / 3600, s / 60 % 60);
	else
		snprintf(buf, len, "%llud%02lluh", s / 86400, s / 3600 % 24);
	return (buf);
}

void
render_metric_head(struct render_buf *o, const char *name, const char *type,
    const char *help)
{

	render_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
	    type);
}

void
render_tab_init(struct render_tab *t, const struct render_col *cols,
    int ncol)
{

	memset(t, 0, sizeof(*t));
	t->cols = cols;
	t->ncol = ncol < RENDER_COLS_MAX ? ncol : RENDER_COLS_MAX;
}

/* Column ${c}'s cell of ${row}, into ${buf} of ${len} bytes. */
static const char *
col_cell(const struct render_col *c, const void *row, char *buf, size_t len)
{
	const char *p = (const char *)row + c->off, *str;
	uint64_t v;

	if (c->kind == RENDER_STR) {
		memcpy(&str, p, sizeof(str));
		return (str != NULL ? str : "");
	}
	memcpy(&v, p, sizeof(v));
	if (v == RENDER_BLANK)
		return ("");
	if (c->kind == RENDER_US)
		snprintf(buf, len, "%llu", (unsigned long long)(v / 1000));
	else if (c->kind == RENDER_NS_S)
		snprintf(buf, len, "%llu.%03llu",
		    (unsigned long long)(v / 1000000000),
		    (unsigned long long)(v / 1000000 % 1000));
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
	return (buf);
}

void
render_tab_add(struct render_tab *t, const void *row)
{
	char **cells, num[32];
	int i;

	if (t->oom)
		return;
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;

		if ((cells = realloc(t->cells, cap * (size_t)t->ncol *
		    sizeof(*cells))) == NULL) {
			t->oom = 1;
			return;
		}
		t->cells = cells;
		t->cap = cap;
	}
	cells = &t->cells[t->nrows * (size_t)t->ncol];
	for (i = 0; i < t->ncol; i++)
		if ((cells[i] = strdup(col_cell(&t->cols[i], row, num,
		    sizeof(num)))) == NULL)
			t->oom = 1;
	t->nrows++;
}

static const char *
cell(const struct render_tab *t, size_t r, int i)
{

	return (t->cells[r * (size_t)t->ncol + (size_t)i]);
}

static int
numeric(const struct render_col *c)
{

	return (c->kind != RENDER_STR);
}

/*
 * Column ${i}'s cell of row ${r} as text shows it, using ${buf}: a time
 * counts back from the table's now.
 */
static const char *
text_cell(const struct render_tab *t, size_t r, int i, char *buf, size_t len)
{
	const char *v = cell(t, r, i);
	uint64_t at;

	if (t->cols[i].kind != RENDER_SINCE || v[0] == '\0')
		return (v);
	at = strtoull(v, NULL, 10);
	return (render_duration(buf, len, t->now_ms > at ? t->now_ms - at :
	    0));
}

/* Column ${c}'s cell ${v} into JSON: a number, a time, a string, null. */
static void
json_cell(struct render_buf *o, const struct render_col *c, const char *v)
{
	time_t secs;
	struct tm tm;
	char when[32];

	if (numeric(c) && v[0] == '\0') {
		render_printf(o, "null");
	} else if (c->kind == RENDER_SINCE) {
		secs = (time_t)(strtoull(v, NULL, 10) / 1000);
		if (gmtime_r(&secs, &tm) == NULL ||
		    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
			render_printf(o, "null");
		else
			render_json_str(o, when);
	} else if (numeric(c)) {
		render_printf(o, "%s", v);
	} else {
		render_json_str(o, v);
	}
}

/* Column ${c}'s heading, into ${buf}. */
static const char *
heading(const struct render_col *c, char *buf, size_t len)
{
	size_t j;

	if (c->head != NULL)
		return (c->head);
	for (j = 0; c->name[j] != '\0' && j + 1 < len; j++)
		buf[j] = c->name[j] == '_' ? ' ' : (char)toupper(
		    (unsigned char)c->name[j]);
	buf[j] = '\0';
	return (buf);
}

/* Whether ${a} (${n} bytes) names ${b}: any case, '_' for ' '. */
static int
same_name(const char *a, size_t n, const char *b)
{
	size_t j;
	int x, y;

	for (j = 0; j < n; j++) {
		x = tolower((unsigned char)a[j]);
		y = tolower((unsigned char)b[j]);
		if (b[j] == '\0' || (x != y && !((x == ' ' || x == '_') &&
		    (y == ' ' || y == '_'))))
			return (0);
	}
	return (b[n] == '\0');
}

/* The column of ${t} that ${name} (${n} bytes) names, or -1. */
static int
find_col(const struct render_tab *t, const char *name, size_t n)
{
	char h[64];
	int i;

	for (i = 0; i < t->ncol; i++)
		if (same_name(name, n, t->cols[i].name) || same_name(name, n,
		    heading(&t->cols[i], h, sizeof(h))))
			return (i);
	return (-1);
}

/* The next name of pick list ${*p}, spaces around it trimmed. */
static const char *
next_name(const char **p, size_t *n)
{
	const char *s = *p, *e;

	while (*s == ' ')
		s++;
	e = s + strcspn(s, ",");
	*p = *e == ',' ? e + 1 : e;
	while (e > s && e[-1] == ' ')
		e--;
	*n = (size_t)(e - s);
	return (s);
}

/* Whether ${pick} is "${word}", spaces around it aside, in any case. */
static int
is_word(const char *pick, const char *word)
{
	size_t n = strlen(word);

	pick += strspn(pick, " ");
	return (strncasecmp(pick, word, n) == 0 &&
	    pick[n + strspn(pick + n, " ")] == '\0');
}

static int
is_default(const char *pick)
{

	return (pick == NULL || pick[strspn(pick, " ")] == '\0' ||
	    is_word(pick, "table"));
}

static int
is_wide(const char *pick)
{

	return (is_word(pick, "wide"));
}

int
render_pick_check(struct render_buf *o, const char *pick,
    const struct render_tab *const *tabs, int ntabs)
{
	const char *p = pick, *name;
	char h[64], g[64];
	size_t n;
	int k, i, j, seen;

	if (is_default(pick) || is_wide(pick))
		return (0);
	while (*p != '\0') {
		name = next_name(&p, &n);
		for (k = 0; k < ntabs && find_col(tabs[k], name, n) < 0; k++)
			;
		if (k < ntabs)
			continue;
		render_printf(o, "unknown column or format '%.*s'; the "
		    "formats are table, wide and json, the columns", (int)n,
		    name);
		for (k = 0, seen = 0; k < ntabs; k++)
			for (i = 0; i < tabs[k]->ncol; i++) {
				snprintf(h, sizeof(h), "%s", heading(
				    &tabs[k]->cols[i], g, sizeof(g)));
				/* Once each, as the first table has it. */
				for (j = 0; j < k && find_col(tabs[j], h,
				    strlen(h)) < 0; j++)
					;
				if (j < k)
					continue;
				for (j = 0; h[j] != '\0'; j++)
					h[j] = h[j] == ' ' ? '_' :
					    (char)tolower((unsigned char)h[j]);
				render_printf(o, "%s %s", seen++ ? "," : ":",
				    h);
			}
		render_printf(o, "\n");
		return (-1);
	}
	return (0);
}

/* The columns text shows of ${t}, in order, into ${idx}; their number. */
static int
pick_cols(const struct render_tab *t, const char *pick, int *idx)
{
	const char *p = pick, *name;
	size_t n;
	int i, j, k = 0;

	if (is_default(pick) || is_wide(pick)) {
		for (i = 0; i < t->ncol; i++)
			if (!t->cols[i].wide || !is_default(pick))
				idx[k++] = i;
		return (k);
	}
	while (*p != '\0' && k < t->ncol) {
		name = next_name(&p, &n);
		if ((i = find_col(t, name, n)) < 0)
			continue;
		for (j = 0; j < k && idx[j] != i; j++)
			;
		if (j == k)
			idx[k++] = i;
	}
	return (k);
}

static int
tab_text(struct render_buf *o, const struct render_tab *t, const char *pick)
{
	size_t w[RENDER_COLS_MAX], r, len;
	char h[64], buf[64];
	const char *v;
	int idx[RENDER_COLS_MAX], n, i, c;

	if ((n = pick_cols(t, pick, idx)) == 0)
		return (0);
	for (i = 0; i < n; i++)
		w[i] = strlen(heading(&t->cols[idx[i]], h, sizeof(h)));
	for (r = 0; r < t->nrows; r++)
		for (i = 0; i < n; i++)
			if ((len = strlen(text_cell(t, r, idx[i], buf,
			    sizeof(buf)))) > w[i])
				w[i] = len;
	for (i = 0; i < n; i++) {
		c = idx[i];
		if (i + 1 == n)
			render_printf(o, "%s", heading(&t->cols[c], h,
			    sizeof(h)));
		else
			render_printf(o, "%-*s  ", (int)w[i],
			    heading(&t->cols[c], h, sizeof(h)));
	}
	render_printf(o, "\n");
	for (r = 0; r < t->nrows; r++) {
		for (i = 0; i < n; i++) {
			c = idx[i];
			v = text_cell(t, r, c, buf, sizeof(buf));
			if (i + 1 == n && !numeric(&t->cols[c]))
				render_printf(o, "%s", v);
			else
				render_printf(o, numeric(&t->cols[c]) ?
				    "%*s%s" : "%-*s%s", (int)w[i], v,
				    i + 1 < n ? "  " : "");
		}
		render_printf(o, "\n");
	}
	return (n);
}

static void
tab_json(struct render_buf *o, const struct render_tab *t)
{
	const char *v;
	size_t r;
	int i;

	render_printf(o, "[");
	for (r = 0; r < t->nrows; r++) {
		render_printf(o, "%s{", r ? "," : "");
		for (i = 0; i < t->ncol; i++) {
			v = cell(t, r, i);
			render_printf(o, "%s", i ? "," : "");
			render_json_str(o, t->cols[i].name);
			render_printf(o, ":");
			json_cell(o, &t->cols[i], v);
		}
		render_printf(o, "}");
	}
	render_printf(o, "]");
}

int
render_tab(struct render_buf *o, struct render_tab *t, int json,
    const char *pick)
{
	size_t i;
	int n = 0;

	if (json)
		tab_json(o, t);
	else
		n = tab_text(o, t, pick);
	if (t->oom)
		o->oom = 1;
	for (i = 0; i < t->nrows * (size_t)t->ncol; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
	return (n);
}
