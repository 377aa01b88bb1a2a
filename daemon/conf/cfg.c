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

#include "wire.h"

#include "cfg.h"

static int
is_digit(char ch)
{

	return (ch >= '0' && ch <= '9');
}

unsigned int
cfg_where(const struct cfg *p, const config_setting_t *s, const char **file)
{
	unsigned int line = 0;

	/*
	 * Elements of arrays and the root have no line of their own; the
	 * nearest enclosing setting that has one is still the right place
	 * to send the user.
	 */
	*file = NULL;
	for (; s != NULL; s = config_setting_parent(s)) {
		if ((line = config_setting_source_line(s)) != 0) {
			*file = config_setting_source_file(s);
			break;
		}
	}
	if (*file == NULL)
		*file = p->path;
	return (line);
}

static int __attribute__((format(printf, 4, 0)))
verrat(const struct cfg *p, const config_setting_t *s, int scoped,
    const char *fmt, va_list ap)
{
	char msg[1024];
	const char *file;
	unsigned int line = cfg_where(p, s, &file);
	int use_scope = scoped && p->scope != NULL;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (line != 0)
		snprintf(p->err, p->errlen, "%s:%u: %s%s%s", file, line,
		    use_scope ? p->scope : "", use_scope ? ": " : "", msg);
	else
		snprintf(p->err, p->errlen, "%s: %s%s%s", file,
		    use_scope ? p->scope : "", use_scope ? ": " : "", msg);
	return (-1);
}

/* Report an error at ${s}, prefixed with the scope ("tunnel pg: "). */
int
cfg_err(const struct cfg *p, const config_setting_t *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verrat(p, s, 1, fmt, ap);
	va_end(ap);
	return (-1);
}

/* Report an error at ${s} whose text names its own context. */
int
cfg_err_plain(const struct cfg *p, const config_setting_t *s,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verrat(p, s, 0, fmt, ap);
	va_end(ap);
	return (-1);
}

/* Line ${line} of ${file} (malloc'd), or NULL. */
static char *
source_line(const char *file, unsigned int line)
{
	char *buf = NULL;
	size_t cap = 0;
	unsigned int n = 0;
	FILE *f;

	if ((f = fopen(file, "r")) == NULL)
		return (NULL);
	while (n < line && getline(&buf, &cap, f) != -1)
		n++;
	fclose(f);
	if (n != line) {
		free(buf);
		return (NULL);
	}
	return (buf);
}

/* A number as written: its value saturated, and its digits' 64 bits. */
struct written {
	long long w;
	unsigned long long acc;
	int neg, over;
};

/* Read "[-+]DIGITS" or "[-+]0xHEX" at ${r}; the count of digits. */
static int
written_number(const char *r, struct written *n)
{
	unsigned long long base = 10, d;
	int digits = 0;

	if ((n->neg = (*r == '-')) != 0 || *r == '+')
		r++;
	if (r[0] == '0' && (r[1] == 'x' || r[1] == 'X')) {
		base = 16;
		r += 2;
	}
	n->acc = 0;
	n->over = 0;
	for (;; r++) {
		if (is_digit(*r))
			d = (unsigned long long)(*r - '0');
		else if (base == 16 && *r >= 'a' && *r <= 'f')
			d = (unsigned long long)(*r - 'a' + 10);
		else if (base == 16 && *r >= 'A' && *r <= 'F')
			d = (unsigned long long)(*r - 'A' + 10);
		else
			break;
		digits++;
		if (n->acc > ((unsigned long long)LLONG_MAX - d) / base)
			n->over = 1;
		else
			n->acc = n->acc * base + d;
	}
	if (n->over)
		n->w = n->neg ? LLONG_MIN : LLONG_MAX;
	else
		n->w = n->neg ? -(long long)n->acc : (long long)n->acc;
	return (digits);
}

/* Where the value of "NAME = " starts if ${q} (in ${buf}) is one, or NULL. */
static const char *
assigned_at(const char *buf, const char *q, size_t namelen)
{
	const char *r;

	if (q > buf && wire_name_char(q[-1]))
		return (NULL);
	for (r = q + namelen; *r == ' ' || *r == '\t'; r++)
		;
	if (*r != '=' && *r != ':')
		return (NULL);
	for (r++; *r == ' ' || *r == '\t'; r++)
		;
	return (r);
}

/*
 * libconfig 1.5 (the one in Debian 12) reads an integer without an L
 * suffix into an int and silently wraps anything larger, so
 * "sendbuf = 4294971392" would arrive as 4096.  Look at the digits as
 * written on ${s}'s line: if they are a number that wraps to ${*v}, set
 * ${*v} to that number and return 1.  Otherwise (no wrap, or the text is
 * not found: value on another line, file gone) return 0.  Numbers beyond
 * long long saturate, which is enough to report them as too big.
 */
static int
int_unwrap(const config_setting_t *s, long long *v)
{
	const char *file = config_setting_source_file(s);
	const char *name = config_setting_name(s), *q, *r;
	unsigned int line = config_setting_source_line(s);
	struct written n;
	long long cand = 0;
	size_t namelen;
	char *buf;
	int found = 0;

	if (file == NULL || name == NULL || line == 0 ||
	    (buf = source_line(file, line)) == NULL)
		return (0);
	/* Every "NAME = number" on the line, in case a comment has one. */
	namelen = strlen(name);
	for (q = buf; (q = strstr(q, name)) != NULL; q += namelen) {
		if ((r = assigned_at(buf, q, namelen)) == NULL ||
		    written_number(r, &n) == 0)
			continue;
		if (n.w == *v) {
			found = 0;
			break;
		}
		/* libconfig keeps the low 32 bits, or -1/0 if it saturated. */
		if ((long long)(int32_t)(uint32_t)n.acc == (n.neg ? -*v : *v) ||
		    (n.over && (*v == -1 || *v == 0))) {
			if (!found)
				cand = n.w;
			found = 1;
		}
	}
	if (found)
		*v = cand;
	free(buf);
	return (found);
}

/*
 * The integer value of ${s} as written (libconfig's 32-bit wrap undone:
 * every wrapped value is outside every range this file accepts), or -1
 * if ${s} is not an integer; the caller reports that.
 */
int
cfg_int(const config_setting_t *s, long long *v)
{
	int type = config_setting_type(s);

	if (type != CONFIG_TYPE_INT && type != CONFIG_TYPE_INT64)
		return (-1);
	*v = config_setting_get_int64(s);
	if (type == CONFIG_TYPE_INT)
		int_unwrap(s, v);
	return (0);
}

/* The string value of ${s}, or NULL after reporting a type error. */
const char *
cfg_str(const struct cfg *p, const config_setting_t *s)
{

	if (config_setting_type(s) != CONFIG_TYPE_STRING) {
		cfg_err(p, s, "%s must be a string", config_setting_name(s));
		return (NULL);
	}
	return (config_setting_get_string(s));
}

/* A setting that is a string or a list of strings: how many there are. */
int
cfg_strings_count(const struct cfg *p, const config_setting_t *s, size_t *n)
{

	*n = 0;
	if (config_setting_type(s) == CONFIG_TYPE_STRING)
		*n = 1;
	else if (config_setting_is_list(s) || config_setting_is_array(s))
		*n = (size_t)config_setting_length(s);
	else
		return (cfg_err(p, s, "%s must be a string or a list of "
		    "strings", config_setting_name(s)));
	return (0);
}

/* String ${i} of such a setting (its element in ${*e}), or NULL. */
const char *
cfg_strings_get(const struct cfg *p, const config_setting_t *s, size_t i,
    const config_setting_t **e)
{

	*e = config_setting_is_aggregate(s) ?
	    config_setting_get_elem(s, (unsigned int)i) : s;
	if (config_setting_type(*e) != CONFIG_TYPE_STRING) {
		cfg_err(p, *e, "%s: each entry must be a string",
		    config_setting_name(s));
		return (NULL);
	}
	return (config_setting_get_string(*e));
}

/* An octal file mode written as a string, like "0660". */
int
cfg_mode(const struct cfg *p, const config_setting_t *s, uint32_t *out)
{
	const char *name = config_setting_name(s), *v, *q;
	unsigned long mode = 0;

	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return (cfg_err(p, s, "%s must be a string of octal "
		    "digits, like \"0660\"", name));
	v = config_setting_get_string(s);
	for (q = v; *q != '\0'; q++) {
		if (*q < '0' || *q > '7' || q - v >= 4)
			return (cfg_err(p, s, "%s '%s' is not octal "
			    "digits, like \"0660\"", name, v));
		mode = mode * 8 + (unsigned long)(*q - '0');
	}
	if (q == v)
		return (cfg_err(p, s, "%s is empty; write it like "
		    "\"0660\"", name));
	if (mode > 0777)
		return (cfg_err(p, s, "%s '%s' is above 0777", name, v));
	*out = (uint32_t)mode;
	return (0);
}

/* A string setting copied into ${out}; empty allowed if ${empty_ok}. */
int
cfg_string(const struct cfg *p, const config_setting_t *s, char *out,
    size_t outlen, int empty_ok)
{
	const char *v;
	size_t len;

	if ((v = cfg_str(p, s)) == NULL)
		return (-1);
	if ((len = strlen(v)) == 0 && !empty_ok)
		return (cfg_err(p, s, "%s is empty", config_setting_name(s)));
	if (len >= outlen)
		return (cfg_err(p, s, "%s '%s' is too long (max %zu bytes)",
		    config_setting_name(s), v, outlen - 1));
	memcpy(out, v, len + 1);
	return (0);
}

/* An absolute path (or "" where allowed). */
int
cfg_path(const struct cfg *p, const config_setting_t *s, char *out,
    size_t outlen, int empty_ok)
{

	if (cfg_string(p, s, out, outlen, empty_ok))
		return (-1);
	if (out[0] != '\0' && out[0] != '/')
		return (cfg_err(p, s, "%s '%s' is not an absolute path",
		    config_setting_name(s), out));
	return (0);
}

/* A global integer setting in [min, max], in ${unit}. */
int
cfg_uint(const struct cfg *p, const config_setting_t *s, long long min,
    long long max, const char *unit, uint32_t *out)
{
	const char *name = config_setting_name(s);
	long long v;

	if (cfg_int(s, &v))
		return (cfg_err(p, s, "%s must be an integer (%s)", name,
		    unit));
	if (v < min || v > max)
		return (cfg_err(p, s, "%s %lld is outside %lld to %lld %s",
		    name, v, min, max, unit));
	*out = (uint32_t)v;
	return (0);
}

/* A boolean setting: true or false. */
int
cfg_bool(const struct cfg *p, const config_setting_t *s, int *out)
{

	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return (cfg_err(p, s, "%s must be true or false",
		    config_setting_name(s)));
	*out = config_setting_get_bool(s) != 0;
	return (0);
}
