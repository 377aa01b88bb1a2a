#include "config.h"

#include <sys/epoll.h>

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"

struct loop_fd {
	struct loop *lp;
	int fd;
	uint32_t events;
	loop_fd_cb *cb;
	void *arg;
	int dead;
	struct loop_fd *next_dead;
	struct loop_timer *pause;	/* loop_fd_pause: resumes it */
	uint32_t paused_events;
};

struct loop_timer {
	struct loop *lp;
	uint64_t when;
	loop_timer_cb *cb;
	void *arg;
	struct loop_timer *next;
};

struct loop {
	int ep;
	struct loop_timer *timers;	/* sorted by when */
	struct loop_fd *dead;		/* freed after dispatch */
	int dispatching;
};

/**
 * loop_now_ms():
 * The monotonic clock in milliseconds.
 */
uint64_t
loop_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

/**
 * loop_new():
 * Create a loop, or NULL (errno set).
 */
struct loop *
loop_new(void)
{
	struct loop *lp;

	if ((lp = calloc(1, sizeof(*lp))) == NULL)
		return (NULL);
	if ((lp->ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		free(lp);
		return (NULL);
	}
	return (lp);
}

static void
reap(struct loop *lp)
{
	struct loop_fd *w;

	while ((w = lp->dead) != NULL) {
		lp->dead = w->next_dead;
		free(w);
	}
}

/**
 * loop_free(lp):
 * Free the loop; watchers and timers must be gone.  NULL is a no-op.
 */
void
loop_free(struct loop *lp)
{
	struct loop_timer *t;

	if (lp == NULL)
		return;
	reap(lp);
	while ((t = lp->timers) != NULL) {
		lp->timers = t->next;
		free(t);
	}
	close(lp->ep);
	free(lp);
}

/**
 * loop_fd_add(lp, fd, events, cb, arg):
 * Watch ${fd} for ${events}.  Returns the watcher or NULL.
 */
struct loop_fd *
loop_fd_add(struct loop *lp, int fd, uint32_t events, loop_fd_cb *cb,
    void *arg)
{
	struct epoll_event ev;
	struct loop_fd *w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return (NULL);
	w->lp = lp;
	w->fd = fd;
	w->events = events;
	w->cb = cb;
	w->arg = arg;
	ev.events = events;
	ev.data.ptr = w;
	if (events != 0 && epoll_ctl(lp->ep, EPOLL_CTL_ADD, fd, &ev)) {
		free(w);
		return (NULL);
	}
	return (w);
}

/**
 * loop_fd_set(w, events):
 * Change what ${w} waits for (0 pauses it).
 */
int
loop_fd_set(struct loop_fd *w, uint32_t events)
{
	struct epoll_event ev;

	if (w->events == events)
		return (0);
	ev.events = events;
	ev.data.ptr = w;
	/*
	 * epoll reports HUP and ERR even with an empty mask, which would wake
	 * a paused watcher for ever: a paused one leaves the set instead.
	 */
	if (events == 0) {
		if (epoll_ctl(w->lp->ep, EPOLL_CTL_DEL, w->fd, NULL))
			return (-1);
	} else if (epoll_ctl(w->lp->ep, w->events == 0 ? EPOLL_CTL_ADD :
	    EPOLL_CTL_MOD, w->fd, &ev)) {
		return (-1);
	}
	w->events = events;
	return (0);
}

/**
 * loop_fd_events(w):
 * What ${w} waits for now.
 */
uint32_t
loop_fd_events(const struct loop_fd *w)
{

	return (w->events);
}

static void
on_unpause(void *arg)
{
	struct loop_fd *w = arg;

	w->pause = NULL;
	loop_fd_set(w, w->paused_events);
}

/**
 * loop_fd_pause(w, ms):
 * Stop watching ${w} for ${ms} milliseconds, then wait for what it waited
 * for before (a listener out of descriptors rests instead of spinning).
 * A watcher already paused stays as it is.  Returns 0, or -1 on failure.
 */
int
loop_fd_pause(struct loop_fd *w, uint64_t ms)
{

	if (w->pause != NULL)
		return (0);
	w->paused_events = w->events;
	if (loop_fd_set(w, 0))
		return (-1);
	if ((w->pause = loop_timer_add(w->lp, ms, on_unpause, w)) == NULL) {
		loop_fd_set(w, w->paused_events);
		return (-1);
	}
	return (0);
}

/**
 * loop_fd_del(w):
 * Stop watching (the descriptor is not closed).  NULL is a no-op.  Safe
 * from inside any callback, including ${w}'s own.
 */
void
loop_fd_del(struct loop_fd *w)
{

	if (w == NULL)
		return;
	loop_timer_del(w->pause);
	w->pause = NULL;
	if (w->events != 0)
		epoll_ctl(w->lp->ep, EPOLL_CTL_DEL, w->fd, NULL);
	/* Events for it may still sit in this round's array: free later. */
	w->dead = 1;
	w->next_dead = w->lp->dead;
	w->lp->dead = w;
	if (!w->lp->dispatching)
		reap(w->lp);
}

/**
 * loop_timer_add(lp, ms, cb, arg):
 * Call ${cb} once, ${ms} milliseconds from now.
 */
struct loop_timer *
loop_timer_add(struct loop *lp, uint64_t ms, loop_timer_cb *cb, void *arg)
{
	struct loop_timer *t, **p;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return (NULL);
	t->lp = lp;
	t->when = loop_now_ms() + ms;
	t->cb = cb;
	t->arg = arg;
	for (p = &lp->timers; *p != NULL && (*p)->when <= t->when;
	    p = &(*p)->next)
		;
	t->next = *p;
	*p = t;
	return (t);
}

/**
 * loop_timer_del(t):
 * Cancel a timer that has not fired.  NULL is a no-op.
 */
void
loop_timer_del(struct loop_timer *t)
{
	struct loop_timer **p;

	if (t == NULL)
		return;
	for (p = &t->lp->timers; *p != NULL; p = &(*p)->next) {
		if (*p == t) {
			*p = t->next;
			free(t);
			return;
		}
	}
}

/**
 * loop_run_once(lp, max_ms):
 * Wait up to ${max_ms} (or until the next timer) for events, dispatch
 * them and any due timers.  Returns 0, or -1 on an epoll error other
 * than EINTR.
 */
int
loop_run_once(struct loop *lp, int max_ms)
{
	struct epoll_event evs[64];
	struct loop_fd *w;
	struct loop_timer *t;
	uint64_t now = loop_now_ms();
	int n, k, wait = max_ms;

	if (lp->timers != NULL) {
		int64_t d = (int64_t)(lp->timers->when - now);

		if (d < 0)
			d = 0;
		if (wait < 0 || d < wait)
			wait = (int)d;
	}
	n = epoll_wait(lp->ep, evs, 64, wait);
	if (n < 0 && errno != EINTR)
		return (-1);
	lp->dispatching = 1;
	for (k = 0; k < n; k++) {
		w = evs[k].data.ptr;
		if (!w->dead)
			w->cb(w->arg, evs[k].events);
	}
	now = loop_now_ms();
	while ((t = lp->timers) != NULL && t->when <= now) {
		lp->timers = t->next;
		t->cb(t->arg);
		free(t);
	}
	lp->dispatching = 0;
	reap(lp);
	return (0);
}
