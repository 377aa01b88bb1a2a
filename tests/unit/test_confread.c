/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for daemon/confread: a configuration read in a real child
 * process and handed back through a real pipe, and every way the child
 * can fail (an error, an exit, a crash, a hang, nonsense on the pipe)
 * arriving as a reason while the parent's loop runs on.
 *
 * This program is its own reader: run with --read-conf FD -c FILE (as
 * confread_start runs the daemon), it reads FILE as TEST_CONFREAD_MODE
 * says and answers on FD.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libconfig.h>

#include "conf.h"
#include "confread.h"
#include "loop.h"
#include "secmem.h"
#include "tap.h"

static char dir[256];

/* ------------------------------------------------------------ the child */

static int
child(int argc, char **argv)
{
	const char *mode = getenv("TEST_CONFREAD_MODE");
	struct conf *c = NULL;
	config_t cf;
	char err[1100];
	int fd;

	if (argc != 5 || strcmp(argv[1], "--" CONFREAD_OPTION) != 0 ||
	    strcmp(argv[3], "-c") != 0)
		return (64);
	fd = atoi(argv[2]);
	if (mode == NULL)
		mode = "read";
	if (strcmp(mode, "abort") == 0)
		abort();
	if (strcmp(mode, "hang") == 0) {
		for (;;)
			pause();
	}
	if (strcmp(mode, "junk") == 0) {
		memset(err, 'x', 100);
		return (write(fd, err, 100) == 100 ? 0 : 1);
	}
	if (strcmp(mode, "env") == 0) {
		/* Say what systemd's variables the child sees, as an error. */
		snprintf(err, sizeof(err), "NOTIFY_SOCKET=%s WATCHDOG_USEC=%s "
		    "LISTEN_FDS=%s HOME=%s",
		    getenv("NOTIFY_SOCKET") ? getenv("NOTIFY_SOCKET") : "-",
		    getenv("WATCHDOG_USEC") ? getenv("WATCHDOG_USEC") : "-",
		    getenv("LISTEN_FDS") ? getenv("LISTEN_FDS") : "-",
		    getenv("HOME") ? getenv("HOME") : "-");
		return (confread_send(fd, NULL, err) ? 1 : 0);
	}
	if (strcmp(mode, "raw") == 0) {
		/* libconfig alone, without conffile's checks first. */
		config_init(&cf);
		if (config_read_file(&cf, argv[4]) != CONFIG_TRUE)
			snprintf(err, sizeof(err), "libconfig: %s",
			    config_error_text(&cf));
		else
			snprintf(err, sizeof(err), "libconfig read it");
		return (confread_send(fd, NULL, err) ? 1 : 0);
	}
	if (conf_load(argv[4], 0, &c, err, sizeof(err)) != 0)
		c = NULL;
	fd = confread_send(fd, c, err);
	conf_free(c);
	return (fd ? 1 : 0);
}

/* ------------------------------------------------------------ the parent */

struct outcome {
	int called;
	struct conf *c;
	char err[8192];
};

static void
done(void *arg, struct conf *c, const char *err)
{
	struct outcome *o = arg;

	o->called++;
	o->c = c;
	snprintf(o->err, sizeof(o->err), "%s", err);
}

/*
 * Read ${path} in a child in ${mode} with ${timeout_ms}, turning the loop
 * until the answer comes (or 60 s); also how many turns it took.
 */
static struct outcome *
read_in_child(struct loop *lp, const char *path, const char *mode,
    unsigned timeout_ms)
{
	static struct outcome o;
	struct confread *r;
	char err[1100];
	int i;

	memset(&o, 0, sizeof(o));
	setenv("TEST_CONFREAD_MODE", mode, 1);
	r = confread_start(lp, "/proc/self/exe", path, timeout_ms, done, &o,
	    err, sizeof(err));
	if (r == NULL) {
		snprintf(o.err, sizeof(o.err), "start: %s", err);
		return (&o);
	}
	for (i = 0; i < 6000 && !o.called; i++)
		(void)loop_run_once(lp, 10);
	confread_free(r);
	return (&o);
}

static const char *
put(const char *name, const char *text, mode_t mode)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) != 0 || chmod(path, mode) != 0) {
		perror(path);
		exit(1);
	}
	return (path);
}

/* No child of ours is left, running or a zombie. */
static int
no_children(void)
{

	return (waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
}

static int
same_conf(const struct conf *x, const struct conf *y)
{
	struct conf a = *x, b = *y;

	a.listen = b.listen = NULL;
	a.peers = b.peers = NULL;
	a.allow = b.allow = NULL;
	a.tunnels = b.tunnels = NULL;
	return (memcmp(&a, &b, sizeof(a)) == 0 &&
	    x->nlisten == y->nlisten && x->ntunnels == y->ntunnels &&
	    memcmp(x->listen, y->listen, x->nlisten * sizeof(*x->listen)) ==
	    0 && memcmp(x->allow, y->allow, x->nallow * sizeof(*x->allow)) ==
	    0 && memcmp(x->tunnels, y->tunnels, x->ntunnels *
	    sizeof(*x->tunnels)) == 0);
}

int
main(int argc, char **argv)
{
	struct loop *lp;
	struct outcome *o;
	struct conf *direct = NULL;
	char text[2048], err[1100];
	char good[512], bad[512], incdir[512];

	/* The reader's configuration and the answer both live in secmem. */
	if (secmem_init() != 0)
		abort();
	if (argc > 1)
		return (child(argc, argv));
	signal(SIGPIPE, SIG_IGN);
	snprintf(dir, sizeof(dir), "%s/test_confread.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL || (lp = loop_new()) == NULL) {
		perror(dir);
		return (1);
	}
	loop_bind(lp);

	put("k.key", "0123456789abcdef0123456789abcdef-a key of 40 bytes",
	    0600);
	snprintf(text, sizeof(text),
	    "listen = [ \"192.0.2.1:7471\", \"[2001:db8::1]:7472\" ];\n"
	    "allow = [ \"192.0.2.0/24\" ];\n"
	    "key_file = \"%s/k.key\";\n"
	    "tunnels = (\n"
	    "  { name = \"pg\"; accept = \"tcp://127.0.0.1:15432\";\n"
	    "    peer = [ \"192.0.2.20:7471\", \"192.0.2.21\" ];\n"
	    "    sendbuf = 65536; },\n"
	    "  { name = \"web\"; target = \"unix:/run/web.sock\"; }\n"
	    ");\n", dir);
	snprintf(good, sizeof(good), "%s", put("good.conf", text, 0644));
	if (conf_load(good, 0, &direct, err, sizeof(err)) != 0) {
		printf("Bail out! the test's own configuration: %s\n", err);
		return (1);
	}
	o = read_in_child(lp, good, "read", 10000);
	ok(o->called == 1 && o->c != NULL && o->err[0] == '\0',
	    "a good file comes back as a configuration (%s)", o->err);
	ok(o->c != NULL && same_conf(o->c, direct),
	    "... the same, field for field and array for array, as "
	    "conf_load here makes");
	ok(o->c != NULL && o->c->key.set && o->c->tunnels[1].key.set &&
	    memcmp(o->c->key.key, direct->key.key, direct->key.len) == 0,
	    "... keys included");
	conf_free(o->c);
	ok(no_children(), "... and the reader is reaped");

	snprintf(bad, sizeof(bad), "%s", put("bad.conf", "tunnels = (\n  "
	    "{ name = \"x\"; sendbuf = 12; }\n);\n", 0644));
	o = read_in_child(lp, bad, "read", 10000);
	ok(o->called == 1 && o->c == NULL && strstr(o->err, "bad.conf:2:"),
	    "a bad file comes back as its error, with file and line: %s",
	    o->err);

	snprintf(text, sizeof(text), "tunnels = ( );\n@include \"%s\"\n", dir);
	snprintf(incdir, sizeof(incdir), "%s", put("incdir.conf", text, 0644));
	o = read_in_child(lp, incdir, "raw", 10000);
	ok(o->called == 1 && o->c == NULL &&
	    strstr(o->err, "exited with status 2") &&
	    strstr(o->err, "flex scanner"),
	    "libconfig alone exits on an @include of a directory; the parent "
	    "hears why: %s", o->err);
	o = read_in_child(lp, incdir, "read", 10000);
	ok(o->called == 1 && o->c == NULL &&
	    strstr(o->err, "incdir.conf:2: @include") &&
	    strstr(o->err, "is a directory"),
	    "the reader's own checks name it first: %s", o->err);

	o = read_in_child(lp, good, "abort", 10000);
	ok(o->called == 1 && o->c == NULL &&
	    strstr(o->err, "died of signal 6"),
	    "a reader that crashes: %s", o->err);
	ok(no_children(), "... is reaped");

	o = read_in_child(lp, good, "hang", 300);
	ok(o->called == 1 && o->c == NULL &&
	    strstr(o->err, "took longer than 0 s; stopped it"),
	    "a reader that hangs is stopped at its deadline: %s", o->err);
	ok(no_children(), "... and reaped");

	o = read_in_child(lp, good, "junk", 10000);
	ok(o->called == 1 && o->c == NULL &&
	    strstr(o->err, "not one this rstreamd understands"),
	    "nonsense on the pipe: %s", o->err);

	setenv("NOTIFY_SOCKET", "/run/systemd/notify", 1);
	setenv("WATCHDOG_USEC", "30000000", 1);
	setenv("LISTEN_FDS", "2", 1);
	setenv("HOME", "/home/of/test", 1);
	o = read_in_child(lp, good, "env", 10000);
	ok(o->called == 1 && strcmp(o->err, "NOTIFY_SOCKET=- "
	    "WATCHDOG_USEC=- LISTEN_FDS=- HOME=/home/of/test") == 0,
	    "the reader never sees systemd's notify, watchdog and activation "
	    "variables, and sees the rest: %s", o->err);
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("LISTEN_FDS");

	/* Forgotten while it runs: killed, reaped, never calls back. */
	{
		struct outcome mine;
		struct confread *r;
		int i;

		memset(&mine, 0, sizeof(mine));
		setenv("TEST_CONFREAD_MODE", "hang", 1);
		r = confread_start(lp, "/proc/self/exe", good, 60000, done,
		    &mine, err, sizeof(err));
		for (i = 0; i < 20; i++)
			(void)loop_run_once(lp, 10);
		confread_free(r);
		for (i = 0; i < 20; i++)
			(void)loop_run_once(lp, 10);
		ok(r != NULL && mine.called == 0 && no_children(),
		    "a read forgotten while its reader runs: reader killed "
		    "and reaped, no callback");
	}

	{
		struct outcome mine;
		struct confread *r;

		memset(&mine, 0, sizeof(mine));
		r = confread_start(lp, "/nonexistent/rstreamd", good, 1000,
		    done, &mine, err, sizeof(err));
		ok(r == NULL && strstr(err, "cannot start the configuration "
		    "reader (/nonexistent/rstreamd)") && mine.called == 0,
		    "a reader that cannot start: %s", err);
	}
	conf_free(direct);
	loop_free(lp);
	snprintf(text, sizeof(text), "rm -rf '%s'", dir);
	if (system(text) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return (tap_done());
}
