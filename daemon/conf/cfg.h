/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * cfg: one libconfig setting at a time, as conf.c reads rstreamd.conf:
 * typed values (integers as written, with libconfig 1.5's 32-bit wrap
 * undone), strings, paths, file modes, and errors that name the file and
 * line at fault; and why libconfig found a file's syntax wrong.  What the
 * settings mean is conf.c's.
 */
#ifndef CFG_H
#define CFG_H

#include <stddef.h>
#include <stdint.h>

#include <libconfig.h>

/* State of one conf_load(): where errors go and what they are about. */
struct cfg {
	const char *path;	/* as given to conf_load() */
	char *err;
	size_t errlen;
	const char *scope;	/* "tunnel pg", "defaults", or NULL */
	int flags;		/* CONF_* */
};

/**
 * cfg_err(p, s, fmt, ...) / cfg_err_plain(p, s, fmt, ...):
 * Write "FILE:LINE: SCOPE: message" about setting ${s} into ${p}->err
 * (the line of the nearest setting around ${s} that has one; none: the
 * file alone).  cfg_err_plain leaves the scope out, for a message that
 * names its own context.  Both return -1.
 */
int cfg_err(const struct cfg *p, const config_setting_t *s,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int cfg_err_plain(const struct cfg *p, const config_setting_t *s,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/**
 * cfg_where(p, s, file):
 * Where setting ${s} is: its file into ${*file} (${p}->path if libconfig
 * knows none) and its line, that of the nearest setting around it that
 * has one; 0 if none has.
 */
unsigned int cfg_where(const struct cfg *p, const config_setting_t *s,
    const char **file);

/**
 * cfg_int(s, v):
 * The integer value of ${s} as written into ${*v} (libconfig's 32-bit
 * wrap undone: every wrapped value is outside every range rstreamd
 * accepts), or -1 if ${s} is not an integer; the caller reports that.
 */
int cfg_int(const config_setting_t *s, long long *v);

/**
 * cfg_str(p, s):
 * The string value of ${s}, or NULL after reporting a type error.
 */
const char *cfg_str(const struct cfg *p, const config_setting_t *s);

/**
 * cfg_strings_count(p, s, n) / cfg_strings_get(p, s, i, e):
 * A setting that is a string or a list of strings: how many there are
 * (-1 after reporting that it is neither), and string ${i} (its element
 * in ${*e}), or NULL after reporting one that is not a string.
 */
int cfg_strings_count(const struct cfg *p, const config_setting_t *s,
    size_t *n);
const char *cfg_strings_get(const struct cfg *p, const config_setting_t *s,
    size_t i, const config_setting_t **e);

/**
 * cfg_mode(p, s, out):
 * An octal file mode written as a string, like "0660", up to 0777.
 */
int cfg_mode(const struct cfg *p, const config_setting_t *s, uint32_t *out);

/**
 * cfg_string(p, s, out, outlen, empty_ok) / cfg_path(...):
 * A string setting copied into ${out} (${outlen} bytes with the NUL);
 * empty allowed if ${empty_ok}.  cfg_path also wants it absolute.
 */
int cfg_string(const struct cfg *p, const config_setting_t *s, char *out,
    size_t outlen, int empty_ok);
int cfg_path(const struct cfg *p, const config_setting_t *s, char *out,
    size_t outlen, int empty_ok);

/**
 * cfg_uint(p, s, min, max, unit, out):
 * A global integer setting in [${min}, ${max}], in ${unit}.
 */
int cfg_uint(const struct cfg *p, const config_setting_t *s, long long min,
    long long max, const char *unit, uint32_t *out);

/**
 * cfg_bool(p, s, out):
 * A boolean setting: true or false.
 */
int cfg_bool(const struct cfg *p, const config_setting_t *s, int *out);

#endif /* !CFG_H */
