/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void
render_tab_row(struct render_tab *t, ...)
{
	va_list ap;
	char **cells;
	const char *v;
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
	va_start(ap, t);
	for (i = 0; i < t->ncol; i++) {
		v = va_arg(ap, const char *);
		if ((cells[i] = strdup(v != NULL ? v : "")) == NULL)
			t->oom = 1;
	}
	va_end(ap);
	t->nrows++;
}

static const char *
cell(const struct render_tab *t, size_t r, int i)
{

	return (t->cells[r * (size_t)t->ncol + (size_t)i]);
}

static void
tab_text(struct render_buf *o, const struct render_tab *t)
{
	size_t w[RENDER_COLS_MAX], r, len;
	const char *name;
	int i, j;

	for (i = 0; i < t->ncol; i++)
		w[i] = strlen(t->cols[i].name);
	for (r = 0; r < t->nrows; r++)
		for (i = 0; i < t->ncol; i++)
			if ((len = strlen(cell(t, r, i))) > w[i])
				w[i] = len;
	for (i = 0; i < t->ncol; i++) {
		name = t->cols[i].name;
		for (j = 0; name[j] != '\0'; j++)
			render_printf(o, "%c", name[j] == '_' ? ' ' :
			    name[j] - ('a' <= name[j] && name[j] <= 'z' ?
			    32 : 0));
		render_printf(o, "%*s", i + 1 < t->ncol ?
		    (int)(w[i] - strlen(name) + 2) : 0, "");
	}
	render_printf(o, "\n");
	for (r = 0; r < t->nrows; r++) {
		for (i = 0; i < t->ncol; i++) {
			if (i + 1 == t->ncol)
				render_printf(o, "%s", cell(t, r, i));
			else if (t->cols[i].numeric)
				render_printf(o, "%*s  ", (int)w[i],
				    cell(t, r, i));
			else
				render_printf(o, "%-*s  ", (int)w[i],
				    cell(t, r, i));
		}
		render_printf(o, "\n");
	}
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
			if (t->cols[i].numeric && v[0] != '\0' &&
			    v[strspn(v, "0123456789.")] == '\0')
				render_printf(o, "%s", v);
			else if (t->cols[i].numeric)
				render_printf(o, "null");
			else
				render_json_str(o, v);
		}
		render_printf(o, "}");
	}
	render_printf(o, "]");
}

void
render_tab(struct render_buf *o, struct render_tab *t, int json)
{
	size_t i;

	if (json)
		tab_json(o, t);
	else
		tab_text(o, t);
	if (t->oom)
		o->oom = 1;
	for (i = 0; i < t->nrows * (size_t)t->ncol; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}
