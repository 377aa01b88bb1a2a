/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for daemon/conffile: the files a configuration is read from,
 * checked before libconfig sees them.  Each case is one that libconfig
 * 1.5 would exit on, hang on, or chew on for long, and one nearby that
 * must still pass.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "conffile.h"
#include "secmem.h"
#include "tap.h"

static char dir[256];
static char err[8192];

/* ${dir}/${name}, written with ${text}; its path (static, one at a time). */
static const char *
put(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) != 0) {
		perror(path);
		exit(1);
	}
	return (path);
}

static char *
in(const char *name)
{
	static char path[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
	return (path[k]);
}

/* A file that @includes ${target}; its path. */
static const char *
including(const char *name, const char *target)
{
	char text[1200];

	snprintf(text, sizeof(text), "# a comment\nlog_level = \"info\";\n"
	    "@include \"%s\"\ntunnels = ( );\n", target);
	return (put(name, text));
}

static int
has(const char *needle)
{

	return (strstr(err, needle) != NULL);
}

int
main(void)
{
	struct conf *c = NULL;
	const char *p;
	char text[2048], *big;
	size_t n;
	int i;

	if (secmem_init() != 0)
		abort();
	snprintf(dir, sizeof(dir), "%s/test_conffile.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL) {
		perror(dir);
		return (1);
	}

	/* What must pass. */
	put("plain.conf", "tunnels = ( );\n");
	ok(conffile_check(in("plain.conf"), err, sizeof(err)) == 0,
	    "a plain file passes (%s)", err);
	p = including("inc.conf", in("plain.conf"));
	ok(conffile_check(p, err, sizeof(err)) == 0,
	    "a file with a good @include passes (%s)", err);
	put("quiet.conf", "/* @include \"/nonexistent\" */\n"
	    "# @include \"/nonexistent\"\n"
	    "// @include \"/nonexistent\"\n"
	    "x = \"\n@include \\\"/nonexistent\\\"\n\";\n"
	    "y = 1; @include \"/nonexistent\"\n");
	ok(conffile_check(in("quiet.conf"), err, sizeof(err)) == 0,
	    "@include in comments, strings and mid-line is not followed, as "
	    "libconfig does not (%s)", err);
	put("empty.conf", "");
	p = including("incempty.conf", in("empty.conf"));
	ok(conffile_check(p, err, sizeof(err)) == 0,
	    "an empty @include passes (%s)", err);

	/* The configuration itself. */
	ok(conffile_check(dir, err, sizeof(err)) == -1 &&
	    has(": cannot read: is a directory"),
	    "a directory as the file: %s", err);
	ok(conffile_check(in("missing.conf"), err, sizeof(err)) == -1 &&
	    has("missing.conf: cannot read: No such file or directory"),
	    "a missing file: %s", err);
	if (mkfifo(in("fifo"), 0600) != 0)
		perror("mkfifo");
	ok(conffile_check(in("fifo"), err, sizeof(err)) == -1 &&
	    has("fifo: cannot read: is a FIFO"),
	    "a FIFO as the file, without waiting on it: %s", err);
	ok(conffile_check("/dev/zero", err, sizeof(err)) == -1 &&
	    has("/dev/zero: cannot read: is a device"),
	    "a device as the file: %s", err);

	/* Each @include, named where it is. */
	p = including("incdir.conf", dir);
	ok(conffile_check(p, err, sizeof(err)) == -1 &&
	    has("incdir.conf:3: @include \"") && has("is a directory"),
	    "an @include of a directory, with file and line: %s", err);
	p = including("incfifo.conf", in("fifo"));
	ok(conffile_check(p, err, sizeof(err)) == -1 &&
	    has("incfifo.conf:3: @include") && has("is a FIFO"),
	    "an @include of a FIFO: %s", err);
	p = including("incmissing.conf", in("missing.conf"));
	ok(conffile_check(p, err, sizeof(err)) == -1 &&
	    has("incmissing.conf:3: @include") &&
	    has("No such file or directory"),
	    "an @include of a missing file: %s", err);
	p = including("incmem.conf", "/proc/self/mem");
	ok(conffile_check(p, err, sizeof(err)) == -1 &&
	    has("incmem.conf:3: @include \"/proc/self/mem\": Input/output "
	    "error"),
	    "an @include that fails to read (EIO): %s", err);
	p = including("incnull.conf", "/dev/null");
	ok(conffile_check(p, err, sizeof(err)) == -1 && has("is a device"),
	    "an @include of /dev/null: %s", err);
	put("self.conf", "@include \"self.conf\"\n");
	if (chdir(dir) != 0)
		perror(dir);
	ok(conffile_check("self.conf", err, sizeof(err)) == -1 &&
	    has("self.conf:1: @include \"self.conf\": nested more than 10 "
	    "deep"),
	    "a file that includes itself, relative to the working directory, "
	    "as libconfig resolves it: %s", err);
	snprintf(text, sizeof(text), "a = 1;\n/* two\nlines */ b = \"x\ny\";\n"
	    "  \t@include \"%s\"\n", in("missing.conf"));
	put("lines.conf", text);
	ok(conffile_check(in("lines.conf"), err, sizeof(err)) == -1 &&
	    has("lines.conf:5: @include"),
	    "the line counts newlines in comments and strings: %s", err);
	for (i = 0; i < 3; i++) {
		char name[32], next[32];

		snprintf(name, sizeof(name), "chain%d.conf", i);
		snprintf(next, sizeof(next), "chain%d.conf", i + 1);
		including(name, i < 2 ? in(next) : dir);
	}
	ok(conffile_check(in("chain0.conf"), err, sizeof(err)) == -1 &&
	    has("chain2.conf:3: @include") && has("is a directory"),
	    "a nested @include names the file that includes it: %s", err);

	/* Size: a file at the limit passes, one byte more does not. */
	n = CONFFILE_MAX_BYTES;
	if ((big = malloc(n + 2)) == NULL)
		return (1);
	memset(big, '#', n);
	big[n - 1] = '\n';
	big[n] = '\0';
	put("big.conf", big);
	ok(conffile_check(in("big.conf"), err, sizeof(err)) == 0,
	    "a file of exactly %u MiB passes (%s)", CONFFILE_MAX_BYTES >> 20,
	    err);
	big[n] = '\n';
	big[n + 1] = '\0';
	put("huge.conf", big);
	ok(conffile_check(in("huge.conf"), err, sizeof(err)) == -1 &&
	    has("huge.conf: cannot read: more than 4 MiB"),
	    "one byte more is refused: %s", err);
	big[n - 10] = '\0';
	put("most.conf", big);
	p = including("incmost.conf", in("most.conf"));
	ok(conffile_check(p, err, sizeof(err)) == -1 &&
	    has("incmost.conf:3: @include") &&
	    has("more than 4 MiB with the files before it"),
	    "the limit counts the @include files too: %s", err);
	free(big);

	/* conf_load checks first, so libconfig never sees such a file. */
	p = including("load.conf", dir);
	ok(conf_load(p, 0, &c, err, sizeof(err)) == -1 &&
	    has("load.conf:3: @include") && has("is a directory"),
	    "conf_load refuses an @include of a directory with file and "
	    "line, and is still here: %s", err);
	conf_free(c);

	snprintf(text, sizeof(text), "rm -rf '%s'", dir);
	if (system(text) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return (tap_done());
}
