/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * conffile: the files a configuration is read from, checked before
 * libconfig reads them.
 *
 * libconfig 1.5 trusts what it opens: it reads a directory until its
 * scanner calls exit(), waits forever on a FIFO, and takes seconds per
 * megabyte of one string (its string buffer grows quadratically).  So the
 * file and every @include in it, as libconfig will find them, are checked
 * first: each must be a regular file that can be read to its end, and all
 * of them together at most CONFFILE_MAX_BYTES.
 */
#ifndef CONFFILE_H
#define CONFFILE_H

#include <stddef.h>

/* The most a configuration may hold, with its @include files. */
#define CONFFILE_MAX_BYTES	(4u << 20)
/* libconfig's own limit on nested @include (MAX_INCLUDE_DEPTH). */
#define CONFFILE_MAX_DEPTH	10

/**
 * conffile_check(path, err, errlen):
 * Check ${path} and every file it @includes, recursively and as libconfig
 * 1.5 resolves them (relative to the working directory), without
 * blocking on any of them.  Returns 0 if libconfig may read them, else -1
 * with one message in ${err}: "FILE: cannot read: REASON" for ${path}
 * itself, "FILE:LINE: @include \"NAME\": REASON" for an included one.
 */
int conffile_check(const char *path, char *err, size_t errlen);

#endif /* !CONFFILE_H */
