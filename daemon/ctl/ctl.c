/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "ctl.h"
#include "ctlcmd.h"
#include "log.h"
#include "loop.h"
#include "reload.h"
#include "render.h"
#include "rsd.h"
#include "show.h"
#include "sock.h"

/* A client that sends nothing for this long is closed. */
#define CTL_IDLE_MS	5000
/*
 * A reload over the socket comes at least this long after the previous
 * one that was applied: applying one stops every worker for a turn while
 * it rebuilds listeners, so a client asking in a loop must not keep the
 * daemon there.  A reload whose file fails to read costs no such turn.
 */
#define CTL_RELOAD_GAP_MS	1000
#define CTL_CONNS_MAX	16

/*
 * A client.  Its socket and timer run in shared turns of the daemon's
 * loop (a client, or a hundred asking in a loop, stop no worker); a
 * command's first step runs there too (ctlcmd.h), and only the answer
 * itself is rendered in an exclusive turn (the run job), unless the
 * first step made it.
 */
struct ctl_conn {
	struct ctl *ctl;
	int fd;
	long uid;			/* the client's (SO_PEERCRED); -1: unknown */
	struct loop_fd *w;
	struct loop_timer idle;
	struct loop_job run;
	char req[CTL_REQ_MAX];
	size_t reqlen;
	int asked;			/* a request came: no more reading */
	int cmd, json, rc;		/* the command, and how it went */
	char cols[CTL_REQ_MAX];		/* the columns asked for */
	int has_cols;
	char tunnels[CTL_REQ_MAX];	/* the tunnels named, "a,b" */
	int has_tunnels;
	struct render_buf body;
	char *out;
	size_t outlen, outoff;
	TAILQ_ENTRY(ctl_conn) entry;
};

struct ctl {
	struct rsd *d;
	int fd;
	struct loop_fd *w;
	char path[108];
	struct sock_file sf;
	TAILQ_HEAD(ctl_conn_list, ctl_conn) conns;	/* newest first */
	unsigned nconns;
	int reloaded;			/* reload_end_ms says when */
	uint64_t reload_end_ms;		/* the last reload over the socket ended */
	/* Refusals, each kind logged once per burst: a client not allowed
	   the command, a reload too soon after the last. */
	struct log_burst who_log, soon_log;
};

/* ------------------------------------------------------------ commands */

/* The monotonic clock now (a reload outlasts the turn's reading). */
static uint64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

/*
 * Whether a reload may start now (see CTL_RELOAD_GAP_MS); if not, the
 * refusal, with when to ask again, goes into ${o}.
 */
static int
reload_due(struct ctl *ctl, struct render_buf *o)
{
	uint64_t now = mono_ms(), since;

	if (ctl != NULL && reload_busy(ctl->d)) {
		/* Its file is still being read: ask again when it is done. */
		render_printf(o, "reload refused: the previous one is still "
		    "under way; " CTL_RETRY_IN "%.1f s\n",
		    (double)CTL_RELOAD_GAP_MS / 1000);
		log_burst_about(&ctl->soon_log, loop_now_ms(), LOG_NOTICE,
		    NULL, "control socket: reload refused: the previous one "
		    "is still under way");
		return (0);
	}
	if (ctl == NULL || !ctl->reloaded ||
	    (since = now - ctl->reload_end_ms) >= CTL_RELOAD_GAP_MS)
		return (1);
	render_printf(o, "reload refused: the previous one ended %.1f s ago, "
	    "and reloads over the control socket come at least %.0f s "
	    "apart; " CTL_RETRY_IN "%.1f s\n", (double)since / 1000,
	    (double)CTL_RELOAD_GAP_MS / 1000,
	    (double)(CTL_RELOAD_GAP_MS - since) / 1000);
	log_burst_about(&ctl->soon_log, loop_now_ms(), LOG_NOTICE, NULL,
	    "control socket: reload refused: %.1f s after the previous one",
	    (double)since / 1000);
	return (0);
}

/* A command's first step (ctlcmd.h): 0, go on; 1, the answer comes
 * later; -1, answer now (cc->rc and the body say how it went). */
typedef int first_fn(struct ctl_conn *cc);
static first_fn first_shared, first_reload;
#define first_none NULL

static const struct ctl_cmd {
	const char *name;
	enum ctl_who who;
	first_fn *first;
	show_fn *fn;
	int args;			/* it takes tunnels' names */
} cmds[] = {
#define X(name, who, first, out, args, help, more)			\
	{ #name, who, first_##first, show_##name, (args)[0] != '\0' },
	CTL_COMMANDS(X)
#undef X
};

/*
 * May client ${uid} use command ${c}?  If not, the refusal goes into ${o}
 * and the log (once per burst).
 */
static int
allowed(struct rsd *d, const struct ctl_cmd *c, long uid,
    struct render_buf *o)
{
	long self = (long)geteuid();

	if (c->who == CTL_ANYONE || uid == 0 || uid == self)
		return (1);
	render_printf(o, "%s is only for root and rstreamd's own user "
	    "(uid %ld); this client is ", c->name, self);
	if (uid < 0)
		render_printf(o, "of unknown uid\n");
	else
		render_printf(o, "uid %ld\n", uid);
	if (d->ctl != NULL)
		log_burst_about(&d->ctl->who_log, loop_now_ms(),
		    LOG_WARNING, NULL, "control socket: %s refused to uid %ld "
		    "(only root and uid %ld may)", c->name, uid, self);
	return (0);
}

/* ---------------------------------------------------------- connections */

static void
conn_free(struct ctl_conn *cc)
{

	reload_forget(cc->ctl->d, cc);
	TAILQ_REMOVE(&cc->ctl->conns, cc, entry);
	cc->ctl->nconns--;
	loop_fd_del(cc->w);
	loop_timer_stop(&cc->idle);
	loop_job_cancel(&cc->run);
	close(cc->fd);
	free(cc->body.p);
	free(cc->out);
	free(cc);
}

static void
on_idle(void *arg)
{
	struct ctl_conn *cc = arg;

	conn_free(cc);
}

static void
conn_write(struct ctl_conn *cc)
{
	ssize_t n;

	while (cc->outoff < cc->outlen) {
		n = send(cc->fd, cc->out + cc->outoff, cc->outlen - cc->outoff,
		    MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			cc->outoff += (size_t)n;
			/* A slow reader that keeps reading is not idle. */
			loop_timer_arm(&cc->idle, CTL_IDLE_MS);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			loop_fd_set(cc->w, EPOLLOUT);
			return;
		}
		break;
	}
	conn_free(cc);
}

/*
 * The answer, as cc->rc says: "ok" and the body (and a JSON document's
 * newline), or "error: " and why.  May free ${cc}.
 */
static void
conn_answer(struct ctl_conn *cc)
{
	struct render_buf o = { NULL, 0, 0, 0 };

	render_printf(&o, "%s", cc->rc == 0 ? "ok\n" : cc->rc > 0 ?
	    CTL_DOWN "\n" : "error: ");
	if (cc->body.len > 0)
		render_printf(&o, "%s", cc->body.p);
	if (cc->rc >= 0 && cc->json)
		render_printf(&o, "\n");
	if (o.oom || cc->body.oom) {
		free(o.p);
		conn_free(cc);
		return;
	}
	cc->out = o.p;
	cc->outlen = o.len;
	loop_timer_arm(&cc->idle, CTL_IDLE_MS);
	conn_write(cc);
}

/* The exclusive turn: the command reads the daemon and answers. */
static void
on_run(void *arg)
{
	struct ctl_conn *cc = arg;
	struct show_req rq = { cc->json, cc->has_cols ? cc->cols : NULL,
	    cc->has_tunnels ? cc->tunnels : NULL };

	cc->rc = cmds[cc->cmd].fn(cc->ctl->d, &cc->body, &rq);
	conn_answer(cc);
}

/* The whole answer, in this turn that stops no worker. */
static int
first_shared(struct ctl_conn *cc)
{
	struct show_req rq = { cc->json, cc->has_cols ? cc->cols : NULL,
	    cc->has_tunnels ? cc->tunnels : NULL };

	cc->rc = cmds[cc->cmd].fn(cc->ctl->d, &cc->body, &rq);
	return (-1);
}

/* The reload is applied (or failed): its answer. */
static void
reloaded(void *arg, int rc, const char *err)
{
	struct ctl_conn *cc = arg;
	struct show_req rq = { cc->json, NULL, NULL };

	/* Only an apply stops the daemon for a moment; a read costs it
	 * nothing (another process does it). */
	if (rc != RELOAD_UNREAD) {
		cc->ctl->reloaded = 1;
		cc->ctl->reload_end_ms = mono_ms();
	}
	if (rc != 0) {
		render_printf(&cc->body, "reload failed, still running the "
		    "previous configuration: %s\n", err);
		cc->rc = -1;
	} else {
		cc->rc = show_reload(cc->ctl->d, &cc->body, &rq);
	}
	conn_answer(cc);
}

static int
first_reload(struct ctl_conn *cc)
{

	if (!reload_due(cc->ctl, &cc->body))
		return (-1);
	log_notice("reload requested on the control socket");
	(void)reload_start(cc->ctl->d, reloaded, cc);
	return (1);
}

/*
 * Request line cc->req: COMMAND, then " json", " tunnels=NAMES" (names
 * separated by commas) and " cols=NAMES" (the rest of the line), each
 * optional, into ${cmd} (${len} bytes) and ${cc}.  0, or -1 if it is no
 * such line.
 */
static int
parse_request(struct ctl_conn *cc, char *cmd, size_t len)
{
	const char *p = cc->req;
	size_t n = strcspn(p, " ");

	if (n == 0 || n >= len)
		return (-1);
	memcpy(cmd, p, n);
	cmd[n] = '\0';
	p += n;
	if (strncmp(p, " json", 5) == 0 && (p[5] == '\0' || p[5] == ' ')) {
		cc->json = 1;
		p += 5;
	}
	if (strncmp(p, " " CTL_TUNNELS, strlen(CTL_TUNNELS) + 1) == 0) {
		p += strlen(CTL_TUNNELS) + 1;
		n = strcspn(p, " ");
		if (n == 0)
			return (-1);
		memcpy(cc->tunnels, p, n);
		cc->tunnels[n] = '\0';
		cc->has_tunnels = 1;
		p += n;
	}
	if (strncmp(p, " " CTL_COLS, strlen(CTL_COLS) + 1) == 0) {
		snprintf(cc->cols, sizeof(cc->cols), "%s",
		    p + strlen(CTL_COLS) + 1);
		cc->has_cols = 1;
		return (0);
	}
	return (*p == '\0' ? 0 : -1);
}

/*
 * A request came (in a shared turn): refused at once, or its first step
 * now and its answer then or in the next exclusive turn.  May free
 * ${cc}.
 */
static void
conn_request(struct ctl_conn *cc)
{
	struct rsd *d = cc->ctl->d;
	char cmd[32];
	size_t k, ncmds = sizeof(cmds) / sizeof(cmds[0]);
	int n, bad;

	cc->asked = 1;
	loop_fd_set(cc->w, 0);
	/* The answer is owed now, however long it takes (a reload's file
	 * may be slow to read): the client is idle only if it stops
	 * reading it (conn_answer). */
	loop_timer_stop(&cc->idle);
	cc->rc = -1;
	bad = parse_request(cc, cmd, sizeof(cmd));
	for (k = 0; !bad && k < ncmds; k++)
		if (strcmp(cmd, cmds[k].name) == 0)
			break;
	if (bad) {
		render_printf(&cc->body, "bad request; send COMMAND, then "
		    "optionally \" json\", \" " CTL_TUNNELS "NAMES\" and "
		    "\" " CTL_COLS "NAMES\", in that order\n");
	} else if (k < ncmds && cc->has_tunnels && !cmds[k].args) {
		render_printf(&cc->body, "%s takes no tunnel names\n", cmd);
	} else if (k == ncmds) {
		render_printf(&cc->body, "unknown command '%s' (try", cmd);
		for (k = 0; k < ncmds; k++)
			render_printf(&cc->body, "%s %s", k ? "," : "",
			    cmds[k].name);
		render_printf(&cc->body, ")\n");
	} else if (allowed(d, &cmds[k], cc->uid, &cc->body)) {
		cc->cmd = (int)k;
		n = cmds[k].first != NULL ? cmds[k].first(cc) : 0;
		if (n > 0)
			return;
		if (n == 0) {
			loop_job_defer(&cc->run);
			return;
		}
	}
	conn_answer(cc);
}

static void
on_conn(void *arg, uint32_t events)
{
	struct ctl_conn *cc = arg;
	char *nl;
	ssize_t n;

	(void)events;
	if (cc->out != NULL) {
		conn_write(cc);
		return;
	}
	if (cc->asked)
		return;
	n = recv(cc->fd, cc->req + cc->reqlen, sizeof(cc->req) - 1 -
	    cc->reqlen, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_free(cc);
		return;
	}
	cc->reqlen += (size_t)n;
	cc->req[cc->reqlen] = '\0';
	if ((nl = strchr(cc->req, '\n')) == NULL) {
		if (cc->reqlen < sizeof(cc->req) - 1)
			return;
		nl = cc->req + cc->reqlen;	/* too long: answer anyway */
	}
	*nl = '\0';
	conn_request(cc);
}

/* Close the connection waiting longest (the list is newest first). */
static void
conn_evict(struct ctl *ctl)
{

	if (!TAILQ_EMPTY(&ctl->conns))
		conn_free(TAILQ_LAST(&ctl->conns, ctl_conn_list));
}

static void
on_listen(void *arg, uint32_t events)
{
	struct ctl *ctl = arg;
	struct ctl_conn *cc;
	uid_t uid;
	int fd;

	(void)events;
	for (;;) {
		if ((fd = sock_accept(ctl->fd, ctl->w)) < 0)
			return;
		/*
		 * Full: the oldest connection makes room, so clients that
		 * connect and say nothing (or never read their answer)
		 * cannot keep rstreamctl out.
		 */
		if (ctl->nconns >= CTL_CONNS_MAX)
			conn_evict(ctl);
		if (ctl->nconns >= CTL_CONNS_MAX ||
		    (cc = calloc(1, sizeof(*cc))) == NULL) {
			close(fd);
			continue;
		}
		cc->ctl = ctl;
		cc->fd = fd;
		cc->uid = sock_peer_uid(fd, &uid) == 0 ? (long)uid : -1;
		if ((cc->w = loop_fd_add(ctl->d->lp, fd, EPOLLIN, on_conn,
		    cc)) == NULL) {
			close(fd);
			free(cc);
			continue;
		}
		loop_fd_share(cc->w, 1);
		loop_timer_init(&cc->idle, ctl->d->lp, on_idle, cc);
		loop_timer_share(&cc->idle, 1);
		loop_timer_arm(&cc->idle, CTL_IDLE_MS);
		loop_job_init(&cc->run, ctl->d->lp, on_run, cc);
		TAILQ_INSERT_HEAD(&ctl->conns, cc, entry);
		ctl->nconns++;
	}
}

struct ctl *
ctl_new(struct rsd *d, char *err, size_t errlen)
{
	const struct conf *c = d->conf;
	struct conf_addr a;
	struct sock_ids ids;
	char bound[160], why[512];
	struct ctl *ctl;

	if ((ctl = calloc(1, sizeof(*ctl))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	ctl->d = d;
	TAILQ_INIT(&ctl->conns);
	/* Under systemd RuntimeDirectory= made it; elsewhere, we do. */
	if (strcmp(c->control, CONF_DEFAULT_CONTROL) == 0)
		(void)mkdir("/run/rstreamd", 0755);
	memset(&a, 0, sizeof(a));
	a.kind = CONF_ADDR_UNIX;
	snprintf(a.path, sizeof(a.path), "%s", c->control);
	snprintf(a.text, sizeof(a.text), "unix:%s", c->control);
	snprintf(ctl->path, sizeof(ctl->path), "%s", c->control);
	ctl->fd = sock_ids("", c->control_group, &ids, why, sizeof(why)) ?
	    -1 : sock_listen(&a, c->control_mode, &ids, &ctl->sf, bound,
	    sizeof(bound), why, sizeof(why));
	if (ctl->fd < 0) {
		snprintf(err, errlen, "control socket: %s", why);
		free(ctl);
		return (NULL);
	}
	if ((ctl->w = loop_fd_add(d->lp, ctl->fd, EPOLLIN, on_listen,
	    ctl)) == NULL) {
		snprintf(err, errlen, "cannot watch the control socket");
		ctl_free(ctl);
		return (NULL);
	}
	loop_fd_share(ctl->w, 1);
	return (ctl);
}

const char *
ctl_path(const struct ctl *ctl)
{

	return (ctl->path);
}

void
ctl_free(struct ctl *ctl)
{

	if (ctl == NULL)
		return;
	while (!TAILQ_EMPTY(&ctl->conns))
		conn_free(TAILQ_FIRST(&ctl->conns));
	loop_fd_del(ctl->w);
	close(ctl->fd);
	sock_unix_unlink(ctl->path, &ctl->sf);
	free(ctl);
}
