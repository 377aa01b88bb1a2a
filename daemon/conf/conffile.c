/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conffile.h"

/* One check: where the message goes, and the bytes read so far. */
struct walk {
	char *err;
	size_t errlen;
	size_t total;
};

/* Where a file was named: "" and 0 for the configuration itself. */
struct named {
	const char *from;
	unsigned line;
	const char *name;
};

static int
fail(struct walk *w, const struct named *at, const char *path,
    const char *why)
{

	if (at->from == NULL)
		snprintf(w->err, w->errlen, "%s: cannot read: %s", path, why);
	else
		snprintf(w->err, w->errlen, "%s:%u: @include \"%s\": %s",
		    at->from, at->line, at->name, why);
	return (-1);
}

/* Why a file of mode ${mode} is not one libconfig may read, or NULL. */
static const char *
not_regular(mode_t mode)
{

	if (S_ISREG(mode))
		return (NULL);
	if (S_ISDIR(mode))
		return ("is a directory, not a file");
	if (S_ISFIFO(mode))
		return ("is a FIFO, not a file (reading it would wait for a "
		    "writer)");
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return ("is a device, not a file");
	if (S_ISSOCK(mode))
		return ("is a socket, not a file");
	return ("is not a regular file");
}

/*
 * The whole of ${path} into a new buffer (${*len} bytes, NUL after
 * them), counted into ${w}'s total: NULL after reporting why not.
 */
static char *
slurp(struct walk *w, const struct named *at, const char *path, size_t *len)
{
	char why[200], *buf = NULL;
	const char *bad;
	struct stat st;
	size_t room, n = 0;
	ssize_t r;
	int fd;

	/* Never open what is not a file: a FIFO or a tape would answer. */
	if (stat(path, &st) != 0) {
		fail(w, at, path, strerror(errno));
		return (NULL);
	}
	if ((bad = not_regular(st.st_mode)) != NULL) {
		fail(w, at, path, bad);
		return (NULL);
	}
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) <
	    0) {
		fail(w, at, path, strerror(errno));
		return (NULL);
	}
	/* Swapped for something else since stat()? */
	if (fstat(fd, &st) != 0 || (bad = not_regular(st.st_mode)) != NULL) {
		fail(w, at, path, bad != NULL ? bad : strerror(errno));
		goto out;
	}
	room = CONFFILE_MAX_BYTES - w->total;
	if ((buf = malloc(room + 2)) == NULL) {
		fail(w, at, path, strerror(errno));
		goto out;
	}
	/* Read to the end, whatever st_size said (/proc files say 0). */
	while (n <= room) {
		if ((r = read(fd, buf + n, room + 1 - n)) == 0)
			break;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			fail(w, at, path, strerror(errno));
			free(buf);
			buf = NULL;
			goto out;
		}
		n += (size_t)r;
	}
	if (n > room) {
		snprintf(why, sizeof(why), "more than %u MiB%s; rstreamd "
		    "reads configurations of up to %u MiB", CONFFILE_MAX_BYTES >>
		    20, w->total > 0 ? " with the files before it" : "",
		    CONFFILE_MAX_BYTES >> 20);
		fail(w, at, path, why);
		free(buf);
		buf = NULL;
		goto out;
	}
	buf[n] = '\0';
	w->total += n;
	*len = n;
out:
	close(fd);
	return (buf);
}

static int check(struct walk *w, const struct named *at, const char *path,
    unsigned depth);

/*
 * If ${b}[${i}...] (at the start of a line) is libconfig's
 * `[ \t]*@include[ \t]+"`, the offset just past the quote; else 0.
 */
static size_t
include_at(const char *b, size_t len, size_t i)
{
	static const char kw[] = "@include";
	size_t j = i;

	while (j < len && (b[j] == ' ' || b[j] == '\t'))
		j++;
	if (len - j < sizeof(kw) - 1 || memcmp(b + j, kw, sizeof(kw) - 1))
		return (0);
	j += sizeof(kw) - 1;
	if (j >= len || (b[j] != ' ' && b[j] != '\t'))
		return (0);
	while (j < len && (b[j] == ' ' || b[j] == '\t'))
		j++;
	return (j < len && b[j] == '"' ? j + 1 : 0);
}

/*
 * The @include whose name starts at ${b}[${*i}]: its name unescaped as
 * libconfig's INCLUDE state does (only \\ and \"), checked; ${*i} moves
 * past its closing quote, ${*line} past its newlines.
 */
static int
follow(struct walk *w, const char *path, const char *b, size_t len,
    size_t *i, unsigned *line, unsigned depth)
{
	struct named at = { path, *line, NULL };
	char name[4096], why[80];
	size_t j = *i, n = 0;

	for (; j < len && b[j] != '"'; j++) {
		if (b[j] == '\\' && j + 1 < len &&
		    (b[j + 1] == '\\' || b[j + 1] == '"'))
			j++;
		if (b[j] == '\n')
			(*line)++;
		if (n + 1 < sizeof(name))
			name[n++] = b[j];
	}
	name[n] = '\0';
	at.name = name;
	if (j >= len) {
		/* libconfig says so itself (an unterminated @include). */
		*i = len;
		return (0);
	}
	*i = j + 1;
	if (depth >= CONFFILE_MAX_DEPTH) {
		snprintf(why, sizeof(why), "nested more than %u deep (does a "
		    "file include itself?)", CONFFILE_MAX_DEPTH);
		return (fail(w, &at, name, why));
	}
	return (check(w, &at, name, depth + 1));
}

/*
 * Scan ${b} as libconfig's scanner would, outside comments and strings,
 * for @include lines, and check each file they name.
 */
static int
scan(struct walk *w, const char *path, const char *b, size_t len,
    unsigned depth)
{
	unsigned line = 1;
	size_t i = 0, k;

	while (i < len) {
		if ((i == 0 || b[i - 1] == '\n') &&
		    (k = include_at(b, len, i)) != 0) {
			i = k;
			if (follow(w, path, b, len, &i, &line, depth))
				return (-1);
			continue;
		}
		if (b[i] == '\n') {
			line++;
			i++;
		} else if (b[i] == '/' && i + 1 < len && b[i + 1] == '*') {
			for (i += 2; i < len; i++) {
				if (b[i] == '*' && i + 1 < len &&
				    b[i + 1] == '/') {
					i += 2;
					break;
				}
				line += b[i] == '\n';
			}
		} else if (b[i] == '#' ||
		    (b[i] == '/' && i + 1 < len && b[i + 1] == '/')) {
			while (i < len && b[i] != '\n')
				i++;
		} else if (b[i] == '"') {
			for (i++; i < len && b[i] != '"'; i++) {
				if (b[i] == '\\' && i + 1 < len &&
				    (b[i + 1] == '"' || b[i + 1] == '\\'))
					i++;
				line += b[i] == '\n';
			}
			i++;
		} else {
			i++;
		}
	}
	return (0);
}

static int
check(struct walk *w, const struct named *at, const char *path,
    unsigned depth)
{
	size_t len;
	char *b;
	int rc;

	if ((b = slurp(w, at, path, &len)) == NULL)
		return (-1);
	rc = scan(w, path, b, len, depth);
	free(b);
	return (rc);
}

int
conffile_check(const char *path, char *err, size_t errlen)
{
	struct walk w = { err, errlen, 0 };
	struct named top = { NULL, 0, NULL };

	return (check(&w, &top, path, 0));
}
