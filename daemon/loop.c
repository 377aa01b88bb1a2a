#include "config.h"

#include <sys/epoll.h>

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"
#include "timerq.h"

struct loop_fd {
	struct loop *lp;
	int fd;
	uint32_t events;
	loop_fd_cb *cb;
	void *arg;
	int dead;
	struct loop_fd *next_dead;
	struct loop_timer pause;	/* loop_fd_pause: resumes it */
	uint32_t paused_events;
};

struct loop {
	int ep;
	struct timerq timers;
	TAILQ_HEAD(, loop_job) jobs;
	struct loop_fd *dead;		/* freed after dispatch */
	int dispatching;
};

/* The clock as of this turn (one process, one loop thread). */
static uint64_t turn_ms;

static void
clock_read(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	turn_ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t
loop_now_ms(void)
{

	return (turn_ms);
}

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
	timerq_init(&lp->timers);
	TAILQ_INIT(&lp->jobs);
	clock_read();
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

void
loop_free(struct loop *lp)
{

	if (lp == NULL)
		return;
	reap(lp);
	close(lp->ep);
	free(lp);
}

static void on_unpause(void *);

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
	loop_timer_init(&w->pause, lp, on_unpause, w);
	ev.events = events;
	ev.data.ptr = w;
	if (events != 0 && epoll_ctl(lp->ep, EPOLL_CTL_ADD, fd, &ev)) {
		free(w);
		return (NULL);
	}
	return (w);
}

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

uint32_t
loop_fd_events(const struct loop_fd *w)
{

	return (w->events);
}

static void
on_unpause(void *arg)
{
	struct loop_fd *w = arg;

	loop_fd_set(w, w->paused_events);
}

int
loop_fd_pause(struct loop_fd *w, uint64_t ms)
{

	if (loop_timer_armed(&w->pause))
		return (0);
	w->paused_events = w->events;
	if (loop_fd_set(w, 0))
		return (-1);
	loop_timer_arm(&w->pause, ms);
	return (0);
}

void
loop_fd_del(struct loop_fd *w)
{

	if (w == NULL)
		return;
	loop_timer_stop(&w->pause);
	if (w->events != 0)
		epoll_ctl(w->lp->ep, EPOLL_CTL_DEL, w->fd, NULL);
	/* Events for it may still sit in this round's array: free later. */
	w->dead = 1;
	w->next_dead = w->lp->dead;
	w->lp->dead = w;
	if (!w->lp->dispatching)
		reap(w->lp);
}

void
loop_timer_init(struct loop_timer *t, struct loop *lp, loop_timer_cb *cb,
    void *arg)
{

	t->node.queued = 0;
	t->lp = lp;
	t->cb = cb;
	t->arg = arg;
}

void
loop_timer_arm(struct loop_timer *t, uint64_t ms)
{

	timerq_del(&t->lp->timers, &t->node);
	timerq_add(&t->lp->timers, &t->node, loop_now_ms() + ms);
}

void
loop_timer_stop(struct loop_timer *t)
{

	if (t->lp != NULL)
		timerq_del(&t->lp->timers, &t->node);
}

int
loop_timer_armed(const struct loop_timer *t)
{

	return (t->node.queued);
}

void
loop_job_init(struct loop_job *j, struct loop *lp, loop_timer_cb *cb,
    void *arg)
{

	j->lp = lp;
	j->cb = cb;
	j->arg = arg;
	j->queued = 0;
}

void
loop_job_defer(struct loop_job *j)
{

	if (j->queued)
		return;
	j->queued = 1;
	TAILQ_INSERT_TAIL(&j->lp->jobs, j, entry);
}

void
loop_job_cancel(struct loop_job *j)
{

	if (!j->queued)
		return;
	TAILQ_REMOVE(&j->lp->jobs, j, entry);
	j->queued = 0;
}

int
loop_run_once(struct loop *lp, int max_ms)
{
	struct epoll_event evs[64];
	struct timerq_node *first;
	struct loop_timer *t;
	struct loop_job *j;
	struct loop_fd *w;
	int n, k, wait = max_ms;

	/*
	 * Timeouts count from the turn's clock, read when epoll_wait
	 * returned: a timer armed late in a turn fires early, and one due
	 * during it late, by at most the time that turn's handlers took.
	 */
	if ((first = timerq_first(&lp->timers)) != NULL) {
		int64_t d = (int64_t)(first->when - turn_ms);

		if (d < 0)
			d = 0;
		if (wait < 0 || d < wait)
			wait = (int)d;
	}
	if (!TAILQ_EMPTY(&lp->jobs))
		wait = 0;
	n = epoll_wait(lp->ep, evs, 64, wait);
	if (n < 0 && errno != EINTR)
		return (-1);
	clock_read();
	lp->dispatching = 1;
	for (k = 0; k < n; k++) {
		w = evs[k].data.ptr;
		if (!w->dead)
			w->cb(w->arg, evs[k].events);
	}
	/*
	 * Timers due now; one armed from a callback for "now" fires in this
	 * turn too, after those already due (arming order among ties).
	 */
	while ((first = timerq_pop(&lp->timers, turn_ms)) != NULL) {
		t = (struct loop_timer *)(void *)((char *)first -
		    offsetof(struct loop_timer, node));
		t->cb(t->arg);
	}
	while ((j = TAILQ_FIRST(&lp->jobs)) != NULL) {
		TAILQ_REMOVE(&lp->jobs, j, entry);
		j->queued = 0;
		j->cb(j->arg);
	}
	lp->dispatching = 0;
	reap(lp);
	return (0);
}
