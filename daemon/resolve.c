/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loop.h"
#include "resolve.h"

/* One lookup: filled in by the caller, answered by the worker. */
struct job {
	struct rname *owner;		/* NULL once the rname is gone */
	char host[256], port[8];
	int passive;
	int gai;			/* getaddrinfo's result */
	int sys_errno;			/* with EAI_SYSTEM */
	struct resolve_addrs addrs;
	TAILQ_ENTRY(job) entry;
};

TAILQ_HEAD(job_list, job);

struct resolver {
	struct loop *lp;
	int efd;
	struct loop_fd *w;
	pthread_t th;
	int started;
	/* Shared with the worker, under mu. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job_list todo, done;
	int stop;
};

struct rname {
	struct resolver *r;
	char host[256], port[8];
	int passive;
	int numeric;			/* resolved for good */
	int have;			/* addrs is an answer */
	struct resolve_addrs addrs;
	uint64_t fresh_until;
	struct job *job;		/* lookup under way */
	int failed;			/* the last lookup failed, nothing known */
	uint64_t retry_at;
	char err[400];
	char text[300];
	TAILQ_HEAD(, rname_waiter) waiters;
};

static int
lookup(const char *host, const char *port, int passive, int numeric,
    struct resolve_addrs *out, int *sys_errno)
{
	struct addrinfo hints, *ai, *p;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0) |
	    (numeric ? AI_NUMERICHOST : 0);
	if ((rc = getaddrinfo(host != NULL && host[0] != '\0' ? host : NULL,
	    port, &hints, &ai)) != 0) {
		*sys_errno = errno;
		return (rc);
	}
	out->n = 0;
	for (p = ai; p != NULL && out->n < RESOLVE_MAX; p = p->ai_next) {
		if (p->ai_addrlen > sizeof(out->a[0]))
			continue;
		memcpy(&out->a[out->n], p->ai_addr, p->ai_addrlen);
		out->len[out->n++] = p->ai_addrlen;
	}
	freeaddrinfo(ai);
	return (out->n > 0 ? 0 : EAI_NONAME);
}

static void *
worker(void *arg)
{
	struct resolver *r = arg;
	struct job *j;

	pthread_mutex_lock(&r->mu);
	for (;;) {
		while (!r->stop && TAILQ_EMPTY(&r->todo))
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->stop)
			break;
		j = TAILQ_FIRST(&r->todo);
		TAILQ_REMOVE(&r->todo, j, entry);
		pthread_mutex_unlock(&r->mu);
		j->gai = lookup(j->host, j->port, j->passive, 0, &j->addrs,
		    &j->sys_errno);
		pthread_mutex_lock(&r->mu);
		TAILQ_INSERT_TAIL(&r->done, j, entry);
		(void)eventfd_write(r->efd, 1);
	}
	pthread_mutex_unlock(&r->mu);
	return (NULL);
}

/* Answers are in: apply each to its name and wake its waiters. */
static void
on_done(void *arg, uint32_t events)
{
	struct resolver *r = arg;
	struct job_list done = TAILQ_HEAD_INITIALIZER(done);
	struct rname_waiter *w;
	struct rname *n;
	struct job *j;
	eventfd_t v;

	(void)events;
	(void)eventfd_read(r->efd, &v);
	pthread_mutex_lock(&r->mu);
	TAILQ_CONCAT(&done, &r->done, entry);
	pthread_mutex_unlock(&r->mu);
	while ((j = TAILQ_FIRST(&done)) != NULL) {
		TAILQ_REMOVE(&done, j, entry);
		if ((n = j->owner) == NULL) {
			free(j);
			continue;
		}
		n->job = NULL;
		if (j->gai == 0) {
			n->addrs = j->addrs;
			n->have = 1;
			n->failed = 0;
			n->fresh_until = loop_now_ms() + RESOLVE_FRESH_MS;
		} else {
			snprintf(n->err, sizeof(n->err), "cannot resolve %s: "
			    "%s", n->text, j->gai == EAI_SYSTEM ?
			    strerror(j->sys_errno) : gai_strerror(j->gai));
			/* A name that stops resolving keeps its last answer. */
			if (n->have) {
				n->fresh_until = loop_now_ms() +
				    RESOLVE_RETRY_MS;
			} else {
				n->failed = 1;
				n->retry_at = loop_now_ms() + RESOLVE_RETRY_MS;
			}
		}
		free(j);
		/* Waiters must not free the name (see resolve.h). */
		while ((w = TAILQ_FIRST(&n->waiters)) != NULL) {
			TAILQ_REMOVE(&n->waiters, w, entry);
			w->n = NULL;
			w->cb(w->arg);
		}
	}
}

struct resolver *
resolver_new(struct loop *lp, char *err, size_t errlen)
{
	struct resolver *r;
	sigset_t all, old;
	int e;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	r->lp = lp;
	TAILQ_INIT(&r->todo);
	TAILQ_INIT(&r->done);
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	if ((r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
	    (r->w = loop_fd_add(lp, r->efd, EPOLLIN, on_done, r)) == NULL) {
		snprintf(err, errlen, "cannot set up the resolver: %s",
		    strerror(errno));
		goto fail;
	}
	/* Signals belong to the loop's signalfd: the worker takes none. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&r->th, NULL, worker, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		snprintf(err, errlen, "cannot start the resolver thread: %s",
		    strerror(e));
		goto fail;
	}
	r->started = 1;
	return (r);

fail:
	resolver_free(r);
	return (NULL);
}

void
resolver_free(struct resolver *r)
{
	struct job *j;

	if (r == NULL)
		return;
	if (r->started) {
		pthread_mutex_lock(&r->mu);
		r->stop = 1;
		pthread_cond_signal(&r->cv);
		pthread_mutex_unlock(&r->mu);
		/* A lookup under way ends within the resolver's own time-out. */
		pthread_join(r->th, NULL);
	}
	while ((j = TAILQ_FIRST(&r->todo)) != NULL) {
		TAILQ_REMOVE(&r->todo, j, entry);
		free(j);
	}
	while ((j = TAILQ_FIRST(&r->done)) != NULL) {
		TAILQ_REMOVE(&r->done, j, entry);
		free(j);
	}
	loop_fd_del(r->w);
	if (r->efd >= 0)
		close(r->efd);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

struct rname *
rname_new(struct resolver *r, const char *host, const char *port,
    int passive)
{
	struct rname *n;
	int e;

	if ((n = calloc(1, sizeof(*n))) == NULL)
		return (NULL);
	n->r = r;
	snprintf(n->host, sizeof(n->host), "%s", host != NULL ? host : "");
	snprintf(n->port, sizeof(n->port), "%s", port);
	n->passive = passive;
	snprintf(n->text, sizeof(n->text), strchr(n->host, ':') != NULL ?
	    "[%s]:%s" : "%s:%s", n->host[0] != '\0' ? n->host : "*",
	    n->port);
	TAILQ_INIT(&n->waiters);
	/* A numeric host needs no lookup: it never waits for one. */
	if (lookup(n->host, n->port, passive, 1, &n->addrs, &e) == 0)
		n->numeric = n->have = 1;
	return (n);
}

void
rname_free(struct rname *n)
{
	struct rname_waiter *w;

	if (n == NULL)
		return;
	if (n->job != NULL) {
		/* Still queued: drop it; with the worker: it is freed later. */
		pthread_mutex_lock(&n->r->mu);
		n->job->owner = NULL;
		pthread_mutex_unlock(&n->r->mu);
	}
	while ((w = TAILQ_FIRST(&n->waiters)) != NULL) {
		TAILQ_REMOVE(&n->waiters, w, entry);
		w->n = NULL;
	}
	free(n);
}

/* Queue a lookup of ${n}; -1 when out of memory. */
static int
start(struct rname *n)
{
	struct resolver *r = n->r;
	struct job *j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return (-1);
	j->owner = n;
	memcpy(j->host, n->host, sizeof(j->host));
	memcpy(j->port, n->port, sizeof(j->port));
	j->passive = n->passive;
	pthread_mutex_lock(&r->mu);
	TAILQ_INSERT_TAIL(&r->todo, j, entry);
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	n->job = j;
	return (0);
}

int
rname_get(struct rname *n, const struct resolve_addrs **out,
    const char **err)
{
	uint64_t now;

	if (n->have) {
		*out = &n->addrs;
		if (!n->numeric && n->job == NULL &&
		    loop_now_ms() >= n->fresh_until)
			(void)start(n);		/* the old answer serves */
		return (1);
	}
	if (n->job != NULL)
		return (0);
	now = loop_now_ms();
	if (n->failed && now < n->retry_at) {
		*err = n->err;
		return (-1);
	}
	if (start(n) != 0) {
		snprintf(n->err, sizeof(n->err), "cannot resolve %s: out of "
		    "memory", n->text);
		*err = n->err;
		return (-1);
	}
	return (0);
}

void
rname_wait(struct rname *n, struct rname_waiter *w, resolve_cb *cb,
    void *arg)
{

	w->n = n;
	w->cb = cb;
	w->arg = arg;
	TAILQ_INSERT_TAIL(&n->waiters, w, entry);
}

void
rname_unwait(struct rname_waiter *w)
{

	if (w->n == NULL)
		return;
	TAILQ_REMOVE(&w->n->waiters, w, entry);
	w->n = NULL;
}

int
resolve_now(const char *host, const char *port, int passive, char *err,
    size_t errlen)
{
	struct resolve_addrs addrs;
	int rc, sys_errno = 0;

	if ((rc = lookup(host, port, passive, 0, &addrs, &sys_errno)) == 0)
		return (0);
	snprintf(err, errlen, "%s", rc == EAI_SYSTEM ? strerror(sys_errno) :
	    gai_strerror(rc));
	return (-1);
}

const char *
rname_text(const struct rname *n)
{

	return (n->text);
}
