/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/epoll.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "confread.h"
#include "loop.h"
#include "secmem.h"

extern char **environ;

/* The answer's first bytes: what it is and the layout it was made with. */
struct head {
	char magic[8];
	uint32_t sizes[5];	/* conf, listen, peer, net, tunnel */
	uint32_t ok;		/* 1: a configuration follows, 0: an error */
	uint64_t len;		/* bytes after this head */
};

static const char magic[8] = "rsdconf\001";
/* No configuration comes near this; a reader that says more is broken. */
#define ANSWER_MAX	((uint64_t)1 << 30)
/* What the reader says on stderr that is kept for the message. */
#define TEXT_MAX	512
/* How often to look for the reader's exit once its pipes have closed. */
#define REAP_MS		10

struct confread {
	struct loop *lp;
	pid_t pid;			/* -1: reaped */
	int status;			/* waitpid's, once reaped */
	int out, err;			/* read ends; -1: closed */
	struct loop_fd *out_w, *err_w;
	struct loop_timer deadline, reap;
	unsigned timeout_ms;
	int killed;			/* by the deadline */
	uint8_t *buf;			/* secmem: it may hold keys */
	size_t len, cap;
	int too_long;			/* said more than ANSWER_MAX */
	char text[TEXT_MAX];
	size_t ntext;
	char path[4096];
	confread_cb *cb;
	void *arg;
};

static void
set_sizes(struct head *h)
{

	memcpy(h->magic, magic, sizeof(magic));
	h->sizes[0] = sizeof(struct conf);
	h->sizes[1] = sizeof(struct conf_listen);
	h->sizes[2] = sizeof(struct conf_peer);
	h->sizes[3] = sizeof(struct conf_net);
	h->sizes[4] = sizeof(struct conf_tunnel);
}

/* ---------------------------------------------------------- the reader */

static int
write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	ssize_t r;

	while (n > 0) {
		if ((r = write(fd, b, n)) < 0) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
		b += r;
		n -= (size_t)r;
	}
	return (0);
}

int
confread_send(int fd, const struct conf *c, const char *err)
{
	struct head h;

	memset(&h, 0, sizeof(h));
	set_sizes(&h);
	if (c == NULL) {
		h.len = strlen(err);
		return (write_all(fd, &h, sizeof(h)) ||
		    write_all(fd, err, (size_t)h.len) ? -1 : 0);
	}
	h.ok = 1;
	h.len = sizeof(*c) + c->nlisten * sizeof(*c->listen) +
	    c->npeers * sizeof(*c->peers) + c->nallow * sizeof(*c->allow) +
	    c->ntunnels * sizeof(*c->tunnels);
	return (write_all(fd, &h, sizeof(h)) || write_all(fd, c, sizeof(*c)) ||
	    write_all(fd, c->listen, c->nlisten * sizeof(*c->listen)) ||
	    write_all(fd, c->peers, c->npeers * sizeof(*c->peers)) ||
	    write_all(fd, c->allow, c->nallow * sizeof(*c->allow)) ||
	    write_all(fd, c->tunnels, c->ntunnels * sizeof(*c->tunnels)) ?
	    -1 : 0);
}

/* ---------------------------------------------------------- the parent */

/*
 * ${n} elements of ${size} bytes from ${*p} (${*left} bytes remain) into
 * new memory from ${alloc}, as conf_free releases them (conf.h); NULL
 * when ${n} is 0 or on failure, which ${*bad} then says.
 */
static void *
take(const uint8_t **p, size_t *left, size_t n, size_t size,
    void *(*alloc)(size_t), int *bad)
{
	void *a;

	if (n == 0)
		return (NULL);
	if (n > *left / size) {
		*bad = 1;
		return (NULL);
	}
	if ((a = alloc(n * size)) == NULL) {
		*bad = 1;
		return (NULL);
	}
	memcpy(a, *p, n * size);
	*p += n * size;
	*left -= n * size;
	return (a);
}

/* The configuration in the answer, or NULL with the reason in ${err}. */
static struct conf *
unpack(const struct confread *r, char *err, size_t errlen)
{
	struct head h, want;
	const uint8_t *p = r->buf + sizeof(h);
	size_t left;
	struct conf *c;
	int bad = 0;

	memset(&want, 0, sizeof(want));
	set_sizes(&want);
	if (r->len < sizeof(h)) {
		snprintf(err, errlen, "the configuration reader gave no "
		    "answer");
		return (NULL);
	}
	memcpy(&h, r->buf, sizeof(h));
	if (memcmp(h.magic, want.magic, sizeof(h.magic)) != 0 ||
	    memcmp(h.sizes, want.sizes, sizeof(h.sizes)) != 0 ||
	    h.len != r->len - sizeof(h)) {
		snprintf(err, errlen, "the configuration reader's answer is "
		    "not one this rstreamd understands");
		return (NULL);
	}
	left = (size_t)h.len;
	if (!h.ok) {
		snprintf(err, errlen, "%.*s", (int)left, (const char *)p);
		return (NULL);
	}
	if (left < sizeof(*c) || (c = secmem_alloc(sizeof(*c))) == NULL) {
		snprintf(err, errlen, "the configuration reader's answer is "
		    "%s", left < sizeof(*c) ? "short" : "too large for memory");
		return (NULL);
	}
	memcpy(c, p, sizeof(*c));
	p += sizeof(*c);
	left -= sizeof(*c);
	/* Its pointers were the reader's: none may be freed. */
	c->listen = NULL;
	c->peers = NULL;
	c->allow = NULL;
	c->tunnels = NULL;
	c->listen = take(&p, &left, c->nlisten, sizeof(*c->listen), malloc,
	    &bad);
	c->peers = take(&p, &left, c->npeers, sizeof(*c->peers), malloc,
	    &bad);
	c->allow = take(&p, &left, c->nallow, sizeof(*c->allow), malloc,
	    &bad);
	c->tunnels = take(&p, &left, c->ntunnels, sizeof(*c->tunnels),
	    secmem_alloc, &bad);
	if (bad || left != 0) {
		snprintf(err, errlen, "the configuration reader's answer does "
		    "not add up (or memory ran out)");
		conf_free(c);
		return (NULL);
	}
	return (c);
}

/* The last line of what the reader said on stderr, for a message. */
static const char *
last_words(struct confread *r, char *buf, size_t len)
{
	char *s = r->text, *nl;
	size_t n = r->ntext;

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	s[n] = '\0';
	if ((nl = strrchr(s, '\n')) != NULL)
		s = nl + 1;
	if (*s == '\0')
		return ("");
	snprintf(buf, len, ": \"%s\"", s);
	return (buf);
}

/* The end: what the reader's exit and answer say, to the callback. */
static void
finish(struct confread *r)
{
	confread_cb *cb = r->cb;
	struct conf *c = NULL;
	char err[sizeof(r->path) + TEXT_MAX + 200], said[TEXT_MAX + 8];
	int st = r->status;

	err[0] = '\0';
	if (r->killed) {
		snprintf(err, sizeof(err), "reading %s took longer than %u s; "
		    "stopped it", r->path, r->timeout_ms / 1000);
	} else if (r->too_long) {
		/* Checked before its death: it dies of the closed pipe. */
		snprintf(err, sizeof(err), "the configuration reader's answer "
		    "is larger than %llu bytes",
		    (unsigned long long)ANSWER_MAX);
	} else if (WIFSIGNALED(st)) {
		snprintf(err, sizeof(err), "the configuration reader died of "
		    "signal %d (%s) reading %s%s", WTERMSIG(st),
		    strsignal(WTERMSIG(st)), r->path,
		    last_words(r, said, sizeof(said)));
	} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(err, sizeof(err), "the configuration reader exited "
		    "with status %d reading %s%s", WEXITSTATUS(st), r->path,
		    last_words(r, said, sizeof(said)));
	} else {
		c = unpack(r, err, sizeof(err));
	}
	secmem_free(r->buf);
	r->buf = NULL;
	r->len = r->cap = 0;
	r->cb = NULL;
	/* Last: the callback may free ${r}. */
	cb(r->arg, c, c != NULL ? "" : err);
}

/* Reap the reader once both pipes have closed; it is on its way out. */
static void
on_reap(void *arg)
{
	struct confread *r = arg;
	pid_t p;

	if (r->out >= 0 || r->err >= 0 || r->pid < 0)
		return;
	if ((p = waitpid(r->pid, &r->status, WNOHANG)) == 0) {
		loop_timer_arm(&r->reap, REAP_MS);
		return;
	}
	if (p < 0)
		r->status = 0x7f00;	/* gone already: exit status 127 */
	r->pid = -1;
	loop_timer_stop(&r->deadline);
	finish(r);
}

static void
close_pipe(int *fd, struct loop_fd **w)
{

	loop_fd_del(*w);
	*w = NULL;
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Room for at least ${more} bytes in the answer's buffer. */
static int
grow(struct confread *r, size_t more)
{
	size_t cap = r->cap > 0 ? r->cap : 65536;
	uint8_t *b;

	if (r->cap - r->len >= more)
		return (0);
	while (cap - r->len < more)
		cap *= 2;
	if ((b = secmem_alloc(cap)) == NULL)
		return (-1);
	if (r->len > 0)
		memcpy(b, r->buf, r->len);
	secmem_free(r->buf);
	r->buf = b;
	r->cap = cap;
	return (0);
}

/* The answer: ${n} more bytes of it, or -1 once it is too long. */
static int
keep_out(struct confread *r, const char *b, size_t n)
{

	if (r->len + n > ANSWER_MAX || grow(r, n) != 0) {
		r->too_long = 1;
		return (-1);
	}
	memcpy(r->buf + r->len, b, n);
	r->len += n;
	return (0);
}

/* Stderr: its last TEXT_MAX - 1 bytes, where the last line says why. */
static int
keep_err(struct confread *r, const char *b, size_t n)
{
	size_t room = sizeof(r->text) - 1, drop;

	if (n >= room) {
		memcpy(r->text, b + n - room, room);
		r->ntext = room;
		return (0);
	}
	if (r->ntext + n > room) {
		drop = r->ntext + n - room;
		memmove(r->text, r->text + drop, r->ntext - drop);
		r->ntext -= drop;
	}
	memcpy(r->text + r->ntext, b, n);
	r->ntext += n;
	return (0);
}

/*
 * Read pipe ${*fd} until it would block, into ${keep}; at its end (or
 * when ${keep} wants no more: the reader then dies of the closed pipe)
 * close it, and reap the reader once both are closed.
 */
static void
drain(struct confread *r, int *fd, struct loop_fd **w,
    int (*keep)(struct confread *, const char *, size_t))
{
	char b[65536];
	ssize_t n;

	for (;;) {
		if ((n = read(*fd, b, sizeof(b))) > 0) {
			if (keep(r, b, (size_t)n) != 0)
				break;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		break;
	}
	close_pipe(fd, w);
	on_reap(r);
}

static void
on_out(void *arg, uint32_t events)
{
	struct confread *r = arg;

	(void)events;
	drain(r, &r->out, &r->out_w, keep_out);
}

static void
on_err(void *arg, uint32_t events)
{
	struct confread *r = arg;

	(void)events;
	drain(r, &r->err, &r->err_w, keep_err);
}

static void
on_deadline(void *arg)
{
	struct confread *r = arg;

	if (r->pid > 0 && kill(r->pid, SIGKILL) == 0)
		r->killed = 1;
}

/* The environment minus what tells a process it is systemd's service. */
static char **
child_env(void)
{
	static const char *const drop[] = { "NOTIFY_SOCKET=",
	    "WATCHDOG_USEC=", "WATCHDOG_PID=", "LISTEN_FDS=", "LISTEN_PID=",
	    "LISTEN_FDNAMES=" };
	size_t n = 0, i, k;
	char **env;

	while (environ != NULL && environ[n] != NULL)
		n++;
	if ((env = calloc(n + 1, sizeof(*env))) == NULL)
		return (NULL);
	for (i = k = 0; i < n; i++) {
		size_t j;

		for (j = 0; j < sizeof(drop) / sizeof(drop[0]); j++)
			if (strncmp(environ[i], drop[j], strlen(drop[j])) == 0)
				break;
		if (j == sizeof(drop) / sizeof(drop[0]))
			env[k++] = environ[i];
	}
	return (env);
}

/* Start the reader on ${outw} (its answer) and ${errw} (stderr). */
static int
spawn(struct confread *r, const char *exe, int outw, int errw)
{
	char fdtext[16], opt[32];
	char *argv[] = { "rstreamd", opt, fdtext, "-c", r->path, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	char **env;
	int e;

	snprintf(opt, sizeof(opt), "--%s", CONFREAD_OPTION);
	snprintf(fdtext, sizeof(fdtext), "%d", CONFREAD_FD);
	if ((env = child_env()) == NULL)
		return (errno);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	/* stdout too: a scanner may print stray input there. */
	if ((e = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null",
	    O_RDONLY, 0)) == 0 &&
	    (e = posix_spawn_file_actions_adddup2(&fa, errw, 1)) == 0 &&
	    (e = posix_spawn_file_actions_adddup2(&fa, errw, 2)) == 0 &&
	    (e = posix_spawn_file_actions_adddup2(&fa, outw, CONFREAD_FD)) ==
	    0 &&
	    (e = posix_spawnattr_setsigmask(&at, &none)) == 0 &&
	    (e = posix_spawnattr_setsigdefault(&at, &all)) == 0 &&
	    (e = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF)) == 0)
		e = posix_spawn(&r->pid, exe, &fa, &at, argv, env);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	return (e);
}

struct confread *
confread_start(struct loop *lp, const char *exe, const char *path,
    unsigned timeout_ms, confread_cb *cb, void *arg, char *err,
    size_t errlen)
{
	struct confread *r;
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, e;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		snprintf(err, errlen, "cannot read %s: %s", path,
		    strerror(errno));
		return (NULL);
	}
	r->lp = lp;
	r->pid = -1;
	r->out = r->err = -1;
	r->timeout_ms = timeout_ms;
	r->cb = cb;
	r->arg = arg;
	snprintf(r->path, sizeof(r->path), "%s", path);
	loop_timer_init(&r->deadline, lp, on_deadline, r);
	loop_timer_init(&r->reap, lp, on_reap, r);
	loop_timer_share(&r->deadline, 1);
	loop_timer_share(&r->reap, 1);
	if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0 ||
	    fcntl(po[0], F_SETFL, O_NONBLOCK) != 0 ||
	    fcntl(pe[0], F_SETFL, O_NONBLOCK) != 0) {
		e = errno;
		goto fail;
	}
	r->out = po[0];
	r->err = pe[0];
	po[0] = pe[0] = -1;
	if ((r->out_w = loop_fd_add(lp, r->out, EPOLLIN, on_out, r)) ==
	    NULL || (r->err_w = loop_fd_add(lp, r->err, EPOLLIN, on_err, r)) ==
	    NULL) {
		e = errno;
		goto fail;
	}
	loop_fd_share(r->out_w, 1);
	loop_fd_share(r->err_w, 1);
	if ((e = spawn(r, exe, po[1], pe[1])) != 0) {
		r->pid = -1;
		goto fail;
	}
	close(po[1]);
	close(pe[1]);
	loop_timer_arm(&r->deadline, timeout_ms);
	return (r);
fail:
	snprintf(err, errlen, "cannot start the configuration reader (%s): "
	    "%s", exe, strerror(e));
	for (e = 0; e < 2; e++) {
		if (po[e] >= 0)
			close(po[e]);
		if (pe[e] >= 0)
			close(pe[e]);
	}
	confread_free(r);
	return (NULL);
}

void
confread_free(struct confread *r)
{

	if (r == NULL)
		return;
	if (r->pid > 0) {
		(void)kill(r->pid, SIGKILL);
		while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	close_pipe(&r->out, &r->out_w);
	close_pipe(&r->err, &r->err_w);
	loop_timer_stop(&r->deadline);
	loop_timer_stop(&r->reap);
	secmem_free(r->buf);
	free(r);
}
