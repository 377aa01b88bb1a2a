/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/epoll.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "http.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"
#include "render.h"
#include "rsd.h"
#include "scrape.h"
#include "sock.h"

/* What a connection does, and what its timer waits for. */
enum sc_state {
	SC_READING,	/* its request's head, within SCRAPE_REQ_MS */
	SC_WRITING,	/* the answer, read within SCRAPE_ANSWER_MS */
	SC_LINGERING	/* answered: the client's end, SC_LINGER_MS at most */
};

/*
 * Closing a socket with unread bytes sends a reset, which may overtake
 * the end of the answer; so the answer's end is followed by reading
 * what the client still sends until it closes, for this long at most.
 */
#define SC_LINGER_MS	2000

/* A client: its socket and timer run in shared turns of the loop. */
struct sc_conn {
	struct scrape *s;
	int fd;
	struct loop_fd *w;
	struct loop_timer tmo;
	enum sc_state state;
	char req[SCRAPE_REQ_MAX];
	size_t reqlen;
	struct render_buf out;
	size_t outoff;
	TAILQ_ENTRY(sc_conn) entry;
};

struct scrape {
	struct rsd *d;
	int fd;
	struct loop_fd *w;
	char bound[160];
	TAILQ_HEAD(sc_list, sc_conn) conns;	/* newest first */
	unsigned nconns;
	struct log_burst full_log;	/* connections turned away */
};

static void
conn_free(struct sc_conn *c)
{

	TAILQ_REMOVE(&c->s->conns, c, entry);
	c->s->nconns--;
	loop_fd_del(c->w);
	loop_timer_stop(&c->tmo);
	close(c->fd);
	free(c->out.p);
	free(c);
}

static void
on_timeout(void *arg)
{

	conn_free(arg);
}

/* The answer is out: wait for the client's end (see SC_LINGER_MS). */
static void
linger(struct sc_conn *c)
{

	c->state = SC_LINGERING;
	free(c->out.p);
	memset(&c->out, 0, sizeof(c->out));
	if (shutdown(c->fd, SHUT_WR) != 0 || loop_fd_set(c->w, EPOLLIN) != 0) {
		conn_free(c);
		return;
	}
	loop_timer_arm(&c->tmo, SC_LINGER_MS);
}

/* Send what the socket takes; the rest when it is writable.  May free. */
static void
conn_write(struct sc_conn *c)
{
	ssize_t n;

	while (c->outoff < c->out.len) {
		n = send(c->fd, c->out.p + c->outoff, c->out.len - c->outoff,
		    MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			c->outoff += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (loop_fd_set(c->w, EPOLLOUT) != 0)
				conn_free(c);
			return;
		}
		conn_free(c);
		return;
	}
	linger(c);
}

/*
 * Answer with ${status}: the metrics for a GET that asked for them (the
 * head alone for HEAD), else the status as text.  May free ${c}.
 */
static void
conn_answer(struct sc_conn *c, enum http_status status, int head)
{
	struct render_buf body = { NULL, 0, 0, 0 };
	struct render_buf *o = &c->out;

	c->state = SC_WRITING;
	loop_timer_arm(&c->tmo, SCRAPE_ANSWER_MS);
	if (status == HTTP_OK)
		metrics_render(c->s->d, &body);
	else
		render_printf(&body, "%d %s\n", http_status_code(status),
		    http_status_text(status));
	render_printf(o, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n%s\r\n",
	    http_status_code(status), http_status_text(status),
	    status == HTTP_OK ? "text/plain; version=0.0.4; charset=utf-8" :
	    "text/plain; charset=utf-8", body.len,
	    status == HTTP_BAD_METHOD ? "Allow: GET, HEAD\r\n" : "");
	if (!head && body.len > 0)
		render_printf(o, "%s", body.p);
	if (o->oom || body.oom) {
		free(body.p);
		conn_free(c);
		return;
	}
	free(body.p);
	conn_write(c);
}

static void
on_conn(void *arg, uint32_t events)
{
	struct sc_conn *c = arg;
	struct http_req req;
	char spare[512];
	size_t end;
	ssize_t n;

	(void)events;
	if (c->state == SC_WRITING) {
		conn_write(c);
		return;
	}
	if (c->state == SC_LINGERING) {
		n = recv(c->fd, spare, sizeof(spare), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			conn_free(c);
		return;
	}
	n = recv(c->fd, c->req + c->reqlen, sizeof(c->req) - c->reqlen,
	    MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_free(c);
		return;
	}
	c->reqlen += (size_t)n;
	if ((end = http_head_end(c->req, c->reqlen)) > 0) {
		http_parse(c->req, end, "/metrics", &req);
		conn_answer(c, req.status, req.head);
	} else if (c->reqlen == sizeof(c->req)) {
		conn_answer(c, HTTP_TOO_LARGE, 0);
	}
}

/*
 * Room for one more: the oldest connection still sending its request
 * goes (clients that connect and say nothing cannot keep Prometheus
 * out); none: 0.
 */
static int
make_room(struct scrape *s)
{
	struct sc_conn *c;

	TAILQ_FOREACH_REVERSE(c, &s->conns, sc_list, entry) {
		if (c->state == SC_READING) {
			conn_free(c);
			return (1);
		}
	}
	return (0);
}

static void
on_listen(void *arg, uint32_t events)
{
	struct scrape *s = arg;
	struct sc_conn *c;
	int fd;

	(void)events;
	for (;;) {
		if ((fd = sock_accept(s->fd, s->w)) < 0)
			return;
		if (s->nconns >= SCRAPE_CONNS_MAX && !make_room(s)) {
			log_burst_about(&s->full_log, loop_now_ms(),
			    LOG_WARNING, NULL, "metrics: %u scrapes are being "
			    "answered already; closing a new connection",
			    s->nconns);
			close(fd);
			continue;
		}
		if ((c = calloc(1, sizeof(*c))) == NULL) {
			close(fd);
			continue;
		}
		c->s = s;
		c->fd = fd;
		if ((c->w = loop_fd_add(s->d->lp, fd, EPOLLIN, on_conn, c)) ==
		    NULL) {
			close(fd);
			free(c);
			continue;
		}
		loop_fd_share(c->w, 1);
		loop_timer_init(&c->tmo, s->d->lp, on_timeout, c);
		loop_timer_share(&c->tmo, 1);
		loop_timer_arm(&c->tmo, SCRAPE_REQ_MS);
		TAILQ_INSERT_HEAD(&s->conns, c, entry);
		s->nconns++;
	}
}

struct scrape *
scrape_new(struct rsd *d, char *err, size_t errlen)
{
	struct sock_file sf;
	struct sock_ids ids = { (uid_t)-1, (gid_t)-1 };
	char why[512];
	struct scrape *s;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	s->d = d;
	TAILQ_INIT(&s->conns);
	if ((s->fd = sock_listen(&d->conf->metrics_listen, 0, &ids, &sf,
	    s->bound, sizeof(s->bound), why, sizeof(why))) < 0) {
		snprintf(err, errlen, "metrics_listen: %s", why);
		free(s);
		return (NULL);
	}
	if ((s->w = loop_fd_add(d->lp, s->fd, EPOLLIN, on_listen, s)) ==
	    NULL) {
		snprintf(err, errlen, "metrics_listen: cannot watch the "
		    "socket");
		scrape_free(s);
		return (NULL);
	}
	loop_fd_share(s->w, 1);
	return (s);
}

const char *
scrape_bound(const struct scrape *s)
{

	return (s->bound);
}

void
scrape_free(struct scrape *s)
{

	if (s == NULL)
		return;
	while (!TAILQ_EMPTY(&s->conns))
		conn_free(TAILQ_FIRST(&s->conns));
	loop_fd_del(s->w);
	close(s->fd);
	free(s);
}
