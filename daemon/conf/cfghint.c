/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <libconfig.h>

#include "cfghint.h"

static int
is_digit(char ch)
{

	return (ch >= '0' && ch <= '9');
}

/* libconfig 1.7 takes a comma after the last element; 1.5 does not. */
#if LIBCONFIG_VER_MAJOR > 1 || \
    (LIBCONFIG_VER_MAJOR == 1 && LIBCONFIG_VER_MINOR >= 7)
#define TRAILING_COMMA_OK	1
#else
#define TRAILING_COMMA_OK	0
#endif

/* Files beyond this are not read again for a hint. */
#define HINT_FILE_MAX	(16 * 1024 * 1024)
/* Nesting beyond this gives up. */
#define HINT_DEPTH	64

enum tok { T_EOF, T_NAME, T_BOOL, T_NUMBER, T_STRING, T_EQ, T_SEMI,
    T_COMMA, T_PUNCT, T_GARBAGE };

struct token {
	enum tok kind;
	const char *s;		/* its text */
	size_t len;
	int line;		/* where it starts */
	int end_line;		/* and ends: the line libconfig names */
	int glued;		/* nothing between it and the token before */
};

struct lexer {
	const char *p, *end;
	int line;
	int bol;		/* at the start of a line (for @include) */
	int open_string;	/* the first string that runs past its line
				   or to the end */
	int open_comment;	/* a comment never closed */
};

struct frame {
	char open;		/* '{', '(' or '[' */
	int line;
	unsigned id;		/* of a group, for the names in it */
};

/* A setting name seen, in group ${id} (0: the top level). */
struct seen_name {
	const char *s;
	size_t len;
	unsigned id;
	int line;
};

static int
is_name_start(char ch)
{

	return ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	    ch == '*');
}

static int
is_name_char(char ch)
{

	return (is_name_start(ch) || is_digit(ch) || ch == '-' || ch == '_');
}

static int
is_hex(char ch)
{

	return (is_digit(ch) || (ch >= 'a' && ch <= 'f') ||
	    (ch >= 'A' && ch <= 'F'));
}

/* The length of [eE][-+]?[0-9]+ at ${p}, or 0. */
static size_t
exponent_len(const char *p, const char *end)
{
	const char *q = p;

	if (q == end || (*q != 'e' && *q != 'E'))
		return (0);
	if (++q < end && (*q == '-' || *q == '+'))
		q++;
	if (q == end || !is_digit(*q))
		return (0);
	while (q < end && is_digit(*q))
		q++;
	return ((size_t)(q - p));
}

/*
 * The longest of libconfig's integer, integer64, hex, hex64 and float at
 * ${p} (flex takes the longest match), or 0 if none matches.
 */
static size_t
number_len(const char *p, const char *end)
{
	const char *q = p, *d;
	size_t best = 0, n;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
	    is_hex(p[2])) {
		for (q = p + 2; q < end && is_hex(*q); q++)
			;
		best = (size_t)(q - p);
		q = p;
	}
	if (q < end && (*q == '-' || *q == '+'))
		q++;
	for (d = q; q < end && is_digit(*q); q++)
		;
	if (q < end && *q == '.') {
		/* [0-9]*\.[0-9]*, exponent optional: "." alone is one. */
		for (q++; q < end && is_digit(*q); q++)
			;
		q += exponent_len(q, end);
	} else if (q > d && (n = exponent_len(q, end)) > 0) {
		q += n;
	} else if (q > d) {
		/* An integer, maybe an integer64 ("L" or "LL"). */
		if (q < end && *q == 'L' && ++q < end && *q == 'L')
			q++;
	} else {
		return (best);
	}
	if ((size_t)(q - p) > best)
		best = (size_t)(q - p);
	if (best > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
	    best < (size_t)(end - p) && p[best] == 'L')
		best += (best + 1 < (size_t)(end - p) && p[best + 1] == 'L') ?
		    2 : 1;
	return (best);
}

/* Skip what libconfig ignores: blanks, comments, @include lines. */
static void
lex_skip(struct lexer *lx, int *glued)
{
	const char *p, *start;
	int line;

	*glued = 1;
	while (lx->p < lx->end) {
		p = lx->p;
		if (*p == '\n') {
			lx->line++;
			lx->bol = 1;
		} else if (*p == ' ' || *p == '\t' || *p == '\r' ||
		    *p == '\f') {
			/* Blanks keep the start of a line. */
		} else if (*p == '#' || (*p == '/' && p + 1 < lx->end &&
		    p[1] == '/')) {
			while (lx->p < lx->end && *lx->p != '\n')
				lx->p++;
			*glued = 0;
			continue;
		} else if (*p == '/' && p + 1 < lx->end && p[1] == '*') {
			line = lx->line;
			for (lx->p += 2; lx->p < lx->end; lx->p++) {
				if (*lx->p == '\n')
					lx->line++;
				else if (*lx->p == '*' && lx->p + 1 < lx->end &&
				    lx->p[1] == '/')
					break;
			}
			if (lx->p >= lx->end) {
				lx->open_comment = line;
				return;
			}
			lx->p += 2;
			*glued = 0;
			continue;
		} else if (*p == '@' && lx->bol && (size_t)(lx->end - p) > 9 &&
		    strncmp(p, "@include", 8) == 0 &&
		    (p[8] == ' ' || p[8] == '\t')) {
			/* What it includes is another file's business. */
			for (start = p + 8; start < lx->end &&
			    (*start == ' ' || *start == '\t'); start++)
				;
			if (start < lx->end && *start == '"') {
				for (start++; start < lx->end && *start != '"';
				    start++)
					if (*start == '\\' && start + 1 < lx->end)
						start++;
				lx->p = start < lx->end ? start + 1 : start;
				*glued = 0;
				continue;
			}
			return;
		} else {
			return;
		}
		lx->p++;
		*glued = 0;
	}
}

/* The next token of ${lx} into ${t}. */
static void
lex_next(struct lexer *lx, struct token *t)
{
	const char *p;
	size_t n;

	lex_skip(lx, &t->glued);
	p = lx->p;
	t->s = p;
	t->line = t->end_line = lx->line;
	t->len = 1;
	lx->bol = 0;
	if (p >= lx->end || lx->open_comment) {
		t->kind = T_EOF;
		t->len = 0;
		lx->p = lx->end;
		return;
	}
	switch (*p) {
	case '"':
		for (p++; p < lx->end && *p != '"'; p++) {
			if (*p == '\\' && p + 1 < lx->end && p[1] != '\n')
				p++;
			else if (*p == '\n') {
				if (lx->open_string == 0)
					lx->open_string = t->line;
				t->end_line++;
			}
		}
		lx->line = t->end_line;
		lx->p = p;
		if (p == lx->end) {
			/* libconfig never returns it: the text ends. */
			if (lx->open_string == 0)
				lx->open_string = t->line;
			t->kind = T_EOF;
			t->s = p;
			t->len = 0;
			t->line = lx->line;
			return;
		}
		lx->p = p + 1;
		t->kind = T_STRING;
		t->len = (size_t)(lx->p - t->s);
		return;
	case '=':
	case ':':
		t->kind = T_EQ;
		break;
	case ';':
		t->kind = T_SEMI;
		break;
	case ',':
		t->kind = T_COMMA;
		break;
	case '{': case '}': case '(': case ')': case '[': case ']':
		t->kind = T_PUNCT;
		break;
	default:
		if (is_name_start(*p)) {
			for (n = 1; p + n < lx->end && is_name_char(p[n]); n++)
				;
			t->len = n;
			t->kind = (n == 4 && strncasecmp(p, "true", 4) == 0) ||
			    (n == 5 && strncasecmp(p, "false", 5) == 0) ?
			    T_BOOL : T_NAME;
		} else if ((n = number_len(p, lx->end)) > 0) {
			t->len = n;
			t->kind = T_NUMBER;
		} else {
			t->kind = T_GARBAGE;
		}
		break;
	}
	lx->p = p + t->len;
}

/* What the checker found: the token libconfig stops at and why. */
struct verdict {
	int line;		/* 0: nothing found */
	char why[400];
};

static void __attribute__((format(printf, 3, 4)))
verdict(struct verdict *v, const struct token *t, const char *fmt, ...)
{
	va_list ap;

	v->line = t->end_line;
	va_start(ap, fmt);
	vsnprintf(v->why, sizeof(v->why), fmt, ap);
	va_end(ap);
}

/* The text around ${t} as a person would call it one word. */
static int
word_len(const struct token *t, const char *end)
{
	const char *q;

	for (q = t->s; q < end && q - t->s < 60 &&
	    strchr(" \t\r\n\f;,={}()[]\"'#", *q) == NULL; q++)
		;
	return ((int)(q - t->s > 0 ? q - t->s : 1));
}

static char
closer_of(char open)
{

	return (open == '{' ? '}' : open == '(' ? ')' : ']');
}

static const char *
bracket_name(char open)
{

	return (open == '{' ? "group" : open == '(' ? "list" : "array");
}

/* A value where a value is wanted that libconfig cannot read. */
static void
bad_value(struct verdict *v, const struct token *t, const char *end)
{
	const unsigned char *u = (const unsigned char *)t->s;
	int n = word_len(t, end);

	if (*t->s == '\'')
		verdict(v, t, "strings take double quotes (\"...\"), not "
		    "single ones");
	else if (end - t->s >= 3 && u[0] == 0xe2 && u[1] == 0x80 &&
	    u[2] >= 0x98 && u[2] <= 0x9f)
		verdict(v, t, "'%.3s' is a typographic quote: strings take "
		    "plain double quotes (\")", t->s);
	else if (t->kind == T_NAME && (((size_t)n == 3 &&
	    strncasecmp(t->s, "yes", 3) == 0) || ((size_t)n == 2 &&
	    (strncasecmp(t->s, "no", 2) == 0 ||
	    strncasecmp(t->s, "on", 2) == 0)) || ((size_t)n == 3 &&
	    strncasecmp(t->s, "off", 3) == 0)))
		verdict(v, t, "'%.*s' is not a value: booleans are true or "
		    "false", n, t->s);
	else
		verdict(v, t, "'%.*s' is not quoted: strings take double "
		    "quotes, as in \"%.*s\"", n, t->s, n, t->s);
}

struct checker {
	struct lexer lx;
	struct frame stack[HINT_DEPTH];
	int depth;
	unsigned groups;		/* ids given to groups so far */
	int want_dup;			/* libconfig said "duplicate setting" */
	int dup_line;
	struct seen_name *names;
	size_t nnames, cap;
};

/* Name ${t} set in the current group: the line it was set before. */
static int
name_seen(struct checker *ck, const struct token *t)
{
	unsigned id = ck->depth > 0 ? ck->stack[ck->depth - 1].id : 0;
	struct seen_name *e;
	size_t i;

	if (t->line == ck->dup_line) {
		for (i = 0; i < ck->nnames; i++) {
			e = &ck->names[i];
			if (e->id == id && e->len == t->len &&
			    memcmp(e->s, t->s, t->len) == 0)
				return (e->line);
		}
	}
	if (ck->nnames == ck->cap) {
		ck->cap = ck->cap == 0 ? 64 : ck->cap * 2;
		if ((e = realloc(ck->names, ck->cap * sizeof(*e))) == NULL)
			return (-1);
		ck->names = e;
	}
	ck->names[ck->nnames++] = (struct seen_name){ t->s, t->len, id,
	    t->line };
	return (0);
}

enum want { W_NAME, W_EQ, W_VALUE, W_AFTER };

/*
 * A value glued to the number ${prev} before it ("10.0.0.1" reads as the
 * numbers 10.0, .0 and .1; "16M" as 16 and the name M).
 */
static void
glued_value(struct verdict *v, const struct token *prev,
    const struct token *t, const char *end)
{
	int n = (int)(t->s - prev->s) + word_len(t, end);
	const char *q = prev->s;

	while (q < prev->s + n && is_digit(*q))
		q++;
	if (q > prev->s && q < prev->s + n && is_name_start(*q))
		verdict(v, t, "'%.*s': a number takes no unit (write the "
		    "plain number)", n, prev->s);
	else
		verdict(v, t, "'%.*s' is not quoted: strings take double "
		    "quotes, as in \"%.*s\"", n, prev->s, n, prev->s);
}

/* Whether setting name ${t} is set twice (want_dup): 1 if said so. */
static int
dup_found(struct checker *ck, const struct token *t, struct verdict *v)
{
	int first;

	if (!ck->want_dup || (first = name_seen(ck, t)) == 0)
		return (0);
	if (first > 0)
		verdict(v, t, "'%.*s' is set at line %d too, in the same "
		    "group", (int)t->len, t->s, first);
	return (1);
}

/* At the end of the text in state ${w}: what is missing, if anything. */
static void
check_end(struct checker *ck, enum want w, const struct token *name,
    const struct token *t, struct verdict *v)
{
	const struct frame *top = ck->depth > 0 ?
	    &ck->stack[ck->depth - 1] : NULL;

	if (ck->want_dup)
		return;
	if (ck->lx.open_string != 0 || ck->lx.open_comment != 0)
		verdict(v, t, "the text ends in a string or comment");
	else if (top != NULL)
		verdict(v, t, "the '%c' opened at line %d is not closed",
		    top->open, top->line);
	else if (w == W_EQ)
		verdict(v, t, "'%.*s' is not followed by '=' and a value",
		    (int)name->len, name->s);
	else if (w == W_VALUE)
		verdict(v, t, "'%.*s =' has no value", (int)name->len,
		    name->s);
}

/*
 * A closing bracket that does not close the innermost open one: 1 if it
 * is one (said into ${v}).
 */
static int
bad_closer(const struct checker *ck, const struct token *t,
    struct verdict *v)
{
	const struct frame *top = ck->depth > 0 ?
	    &ck->stack[ck->depth - 1] : NULL;

	if (t->kind != T_PUNCT || strchr(")]}", *t->s) == NULL)
		return (0);
	if (top == NULL)
		verdict(v, t, "'%c' closes nothing", *t->s);
	else if (*t->s != closer_of(top->open))
		verdict(v, t, "'%c' does not close the '%c' opened at line %d",
		    *t->s, top->open, top->line);
	else
		return (0);
	return (1);
}

/*
 * Check ${ck}'s text against libconfig's grammar up to the first token it
 * cannot take, and say why into ${v}; with want_dup, find the first name
 * set twice in one group on dup_line instead.
 */
static void
check_grammar(struct checker *ck, struct verdict *v)
{
	struct token t = { T_EOF, "", 0, 0, 0, 0 }, prev, prev2, name = t;
	const struct frame *top;
	enum want w = W_NAME;
	int after_comma = 0, comma_line = 0, last_string = 0;
	char open;

	prev = prev2 = t;
	for (;; prev2 = prev, prev = t) {
		lex_next(&ck->lx, &t);
		if (t.kind == T_EOF) {
			check_end(ck, w, &name, &t, v);
			return;
		}
		if (bad_closer(ck, &t, v))
			return;
		top = ck->depth > 0 ? &ck->stack[ck->depth - 1] : NULL;
		open = top != NULL ? top->open : 0;
		switch (w) {
		case W_NAME:
			if (t.kind == T_NAME) {
				if (dup_found(ck, &t, v))
					return;
				name = t;
				w = W_EQ;
			} else if (t.kind == T_PUNCT && *t.s == '}') {
				ck->depth--;
				w = W_AFTER;
				last_string = 0;
			} else if (t.kind == T_NUMBER && t.glued &&
			    prev.kind == T_COMMA && prev.glued &&
			    prev2.kind == T_NUMBER) {
				verdict(v, &t, "numbers are written without "
				    "separators: %.*s reads as %.*s and then "
				    "%.*s", (int)(t.s + t.len - prev2.s),
				    prev2.s, (int)prev2.len, prev2.s,
				    (int)t.len, t.s);
				return;
			} else if (t.kind == T_STRING) {
				verdict(v, &t, "setting names are not quoted");
				return;
			} else {
				verdict(v, &t, "'%.*s' where a setting name "
				    "should be (NAME = VALUE;)",
				    word_len(&t, ck->lx.end), t.s);
				return;
			}
			break;
		case W_EQ:
			if (t.kind != T_EQ) {
				verdict(v, &t, "'%.*s' is not followed by '=' "
				    "(write NAME = VALUE;)", (int)name.len,
				    name.s);
				return;
			}
			w = W_VALUE;
			after_comma = 0;
			break;
		case W_VALUE:
			if (t.kind == T_STRING || t.kind == T_NUMBER ||
			    t.kind == T_BOOL) {
				w = W_AFTER;
				last_string = t.kind == T_STRING;
			} else if (t.kind == T_PUNCT &&
			    strchr("{([", *t.s) != NULL) {
				if (open == '[') {
					verdict(v, &t, "an array [ ] (line %d) "
					    "holds only strings, numbers and "
					    "booleans: groups and lists go in "
					    "a list ( )", top->line);
					return;
				}
				if (ck->depth == HINT_DEPTH)
					return;
				ck->stack[ck->depth++] = (struct frame){ *t.s,
				    t.line, *t.s == '{' ? ++ck->groups : 0 };
				w = *t.s == '{' ? W_NAME : W_VALUE;
				after_comma = 0;
			} else if (t.kind == T_PUNCT && *t.s != '}') {
				/* Closes the list or array: bad_closer. */
				if (after_comma && !TRAILING_COMMA_OK) {
					verdict(v, &t, "a comma before '%c' "
					    "(line %d): libconfig %d.%d allows "
					    "none after the last element",
					    *t.s, comma_line,
					    LIBCONFIG_VER_MAJOR,
					    LIBCONFIG_VER_MINOR);
					return;
				}
				ck->depth--;
				w = W_AFTER;
				last_string = 0;
			} else {
				if (t.kind == T_EQ && prev.kind == T_EQ)
					verdict(v, &t, "'==': a setting takes "
					    "one '=' (or ':')");
				else if (t.kind == T_NAME ||
				    t.kind == T_GARBAGE)
					bad_value(v, &t, ck->lx.end);
				else if (open == '(' || open == '[')
					verdict(v, &t, "'%.*s' where an "
					    "element of the %s opened at line "
					    "%d should be", (int)t.len, t.s,
					    bracket_name(open), top->line);
				else
					verdict(v, &t, "'%.*s =' has no value",
					    (int)name.len, name.s);
				return;
			}
			break;
		case W_AFTER:
			if (t.kind == T_STRING && last_string)
				break;		/* "a" "b" is "ab" */
			if (t.glued && prev.kind == T_NUMBER &&
			    (t.kind == T_NUMBER || t.kind == T_NAME ||
			    t.kind == T_GARBAGE)) {
				glued_value(v, &prev, &t, ck->lx.end);
				return;
			}
			if (open == '(' || open == '[') {
				if (t.kind == T_COMMA) {
					w = W_VALUE;
					after_comma = 1;
					comma_line = t.line;
				} else if (t.kind == T_PUNCT &&
				    *t.s == closer_of(open)) {
					ck->depth--;
					last_string = 0;
				} else if (t.kind == T_SEMI) {
					verdict(v, &t, "';' inside the %s "
					    "opened at line %d: its elements "
					    "are separated by ','",
					    bracket_name(open), top->line);
					return;
				} else {
					verdict(v, &t, "a ',' is missing "
					    "before this element of the %s "
					    "opened at line %d",
					    bracket_name(open), top->line);
					return;
				}
			} else if (t.kind == T_SEMI || t.kind == T_COMMA) {
				/* The end of a setting, which may also
				 * end without one. */
				w = W_NAME;
			} else if (t.kind == T_NAME) {
				if (dup_found(ck, &t, v))
					return;
				name = t;
				w = W_EQ;
			} else if (t.kind == T_PUNCT && *t.s == '}') {
				ck->depth--;
				last_string = 0;
			} else {
				verdict(v, &t, "'%.*s' after the value of "
				    "'%.*s', where ';' and the next setting "
				    "should be", word_len(&t, ck->lx.end), t.s,
				    (int)name.len, name.s);
				return;
			}
			break;
		}
	}
}

/*
 * ${file} read whole into ${*buf} (NUL added), or -1.  Only a regular file
 * of at most HINT_FILE_MAX bytes: a FIFO or a device is not opened for a
 * hint (O_NONBLOCK), let alone read.
 */
static int
slurp(const char *file, char **buf, size_t *len)
{
	struct stat st;
	size_t n = 0;
	ssize_t r;
	char *b;
	int fd;

	if ((fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)) < 0)
		return (-1);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > HINT_FILE_MAX ||
	    (b = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return (-1);
	}
	/* What it holds now, up to the size it had. */
	while (n < (size_t)st.st_size) {
		r = read(fd, b + n, (size_t)st.st_size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	b[n] = '\0';
	*buf = b;
	*len = n;
	return (0);
}

static int
hint(const char *file, int line, int dup, char *out, size_t outlen)
{
	struct checker ck;
	struct verdict v = { 0, "" };
	char *buf;
	size_t len;
	int rc = -1;

	if (line <= 0 || slurp(file, &buf, &len) != 0)
		return (-1);
	memset(&ck, 0, sizeof(ck));
	ck.lx = (struct lexer){ buf, buf + len, 1, 1, 0, 0 };
	ck.want_dup = dup;
	ck.dup_line = dup ? line : 0;
	if (!dup && len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) {
		if (line == 1) {
			snprintf(out, outlen, "the file starts with a UTF-8 "
			    "byte order mark (BOM), which libconfig cannot "
			    "read: save it without one");
			rc = 0;
		}
		goto out;
	}
	check_grammar(&ck, &v);
	if (v.line != line)
		goto out;
	if (!dup && ck.lx.open_string != 0)
		snprintf(out, outlen, "the string opened at line %d is not "
		    "closed on its line: a '\"' is missing",
		    ck.lx.open_string);
	else if (!dup && ck.lx.open_comment != 0)
		snprintf(out, outlen, "the comment opened with /* at line %d "
		    "is not closed", ck.lx.open_comment);
	else
		snprintf(out, outlen, "%s", v.why);
	rc = 0;
out:
	free(ck.names);
	free(buf);
	return (rc);
}

int
cfghint_syntax(const char *file, int line, char *out, size_t outlen)
{

	return (hint(file, line, 0, out, outlen));
}

int
cfghint_open_comment(const char *file)
{
	struct checker ck;
	struct verdict v = { 0, "" };
	char *buf;
	size_t len;

	if (slurp(file, &buf, &len) != 0)
		return (0);
	memset(&ck, 0, sizeof(ck));
	ck.lx = (struct lexer){ buf, buf + len, 1, 1, 0, 0 };
	check_grammar(&ck, &v);
	free(ck.names);
	free(buf);
	return (ck.lx.open_comment);
}

int
cfghint_duplicate(const char *file, int line, char *out, size_t outlen)
{

	return (hint(file, line, 1, out, outlen));
}
