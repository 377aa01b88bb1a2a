/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
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
	int shared;
	/* loop_fd_poll: polled in each turn after its event, until the
	 * loop would sleep (in lp->polls while polled). */
	loop_poll_cb *poll;
	loop_poll_cb *arm;
	enum { P_IDLE, P_POLLED, P_ARMED } pstate;
	uint64_t fired;			/* the turn of its last event */
	TAILQ_ENTRY(loop_fd) pentry;
};

/* The daemon's loop and its workers. */
#define WORLD_MAX	(CONF_MAX_WORKERS + 1)

/*
 * A world's loops, and the lock an exclusive turn takes first: while a
 * thread holds it (pending set), no loop starts a shared turn, and the
 * thread then takes every loop's turn lock in order.
 */
struct world {
	pthread_mutex_t excl;
	int pending;			/* atomic: an exclusive turn waits */
	uint64_t excl_turns;		/* taken so far (written under excl,
					   read by any turn: atomic) */
	size_t n;
	struct loop *loops[WORLD_MAX];
};

struct loop {
	int ep;
	struct timerq timers, stimers;	/* not shared, shared */
	TAILQ_HEAD(, loop_job) jobs;
	TAILQ_HEAD(, loop_fd) polls;	/* watchers polled each turn */
	uint64_t turns;			/* turns run so far */
	uint64_t busy_ns, work_ns;	/* loop_busy_poll's window; the last
					   turn with work */
	struct loop_fd *dead;		/* freed after dispatch */
	int dispatching;
	pthread_t owner;		/* the thread that runs it */
	/* In a world: */
	struct world *world;
	pthread_mutex_t turn;		/* held for each of its turns */
	int first;			/* the world's first loop: frees it */
	int touched;			/* changed by another loop's turn */
	uint64_t next_when;		/* the next turn, at the latest */
	int wake_fd;
	struct loop_fd *wake_w;
};

/* The clock as of this thread's turn. */
static __thread uint64_t turn_ms, turn_ns;
/* The loop this thread runs, and whether its turn is a shared one. */
static __thread struct loop *cur;
static __thread int in_shared;

static void
clock_read(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	turn_ns = (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
	turn_ms = turn_ns / 1000000;
}

uint64_t
loop_now_ms(void)
{

	return (turn_ms);
}

uint64_t
loop_now_ns(void)
{

	return (turn_ns);
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
	timerq_init(&lp->stimers);
	TAILQ_INIT(&lp->jobs);
	TAILQ_INIT(&lp->polls);
	lp->owner = pthread_self();
	lp->wake_fd = -1;
	clock_read();
	return (lp);
}

void
loop_bind(struct loop *lp)
{

	lp->owner = pthread_self();
	cur = lp;
	clock_read();
}

uint64_t
loop_exclusive_turns(const struct loop *lp)
{

	return (lp->world != NULL ? __atomic_load_n(&lp->world->excl_turns,
	    __ATOMIC_RELAXED) : 0);
}

int
loop_exclusive(void)
{

	return (!in_shared);
}

void
loop_assert_exclusive(void)
{

	if (in_shared)
		abort();
}

/*
 * Another thread's turn changed ${lp} (a timer, a job, a watcher): ${lp}
 * may sleep on an old timeout, so it is woken when that turn ends.  A
 * shared turn touches only its own loop (Threads in loop.h): anything
 * else is a race, and stops the daemon here rather than corrupting it.
 */
static void
touch(struct loop *lp)
{

	if (lp == cur || lp->world == NULL)
		return;
	if (in_shared)
		abort();
	lp->touched = 1;
}

static void
on_wake(void *arg, uint32_t events)
{
	struct loop *lp = arg;
	uint64_t v;

	(void)events;
	(void)!read(lp->wake_fd, &v, sizeof(v));
}

void
loop_wake(struct loop *lp)
{
	uint64_t one = 1;

	if (lp->wake_fd >= 0)
		(void)!write(lp->wake_fd, &one, sizeof(one));
}

/* ${lp} joins world ${w}: a turn lock and a way to wake it. */
static int
world_add(struct world *w, struct loop *lp)
{

	if (w->n == WORLD_MAX) {
		errno = EINVAL;
		return (-1);
	}
	if ((lp->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
		return (-1);
	if ((lp->wake_w = loop_fd_add(lp, lp->wake_fd, EPOLLIN, on_wake,
	    lp)) == NULL) {
		close(lp->wake_fd);
		lp->wake_fd = -1;
		return (-1);
	}
	lp->wake_w->shared = 1;
	lp->next_when = 0;
	pthread_mutex_init(&lp->turn, NULL);
	lp->world = w;
	w->loops[w->n++] = lp;
	return (0);
}

int
loop_world_new(struct loop *lp)
{
	struct world *w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return (-1);
	pthread_mutex_init(&w->excl, NULL);
	if (world_add(w, lp)) {
		pthread_mutex_destroy(&w->excl);
		free(w);
		return (-1);
	}
	lp->first = 1;
	cur = lp;
	return (0);
}

int
loop_world_join(struct loop *lp, struct loop *first)
{

	return (world_add(first->world, lp));
}

/* Take ${lp}'s turn lock for a shared turn, after any exclusive one. */
static void
lock_shared(struct loop *lp)
{
	struct world *w = lp->world;

	for (;;) {
		pthread_mutex_lock(&lp->turn);
		if (!__atomic_load_n(&w->pending, __ATOMIC_ACQUIRE))
			return;
		pthread_mutex_unlock(&lp->turn);
		pthread_mutex_lock(&w->excl);
		pthread_mutex_unlock(&w->excl);
	}
}

static void
lock_all(struct world *w)
{
	size_t i;

	pthread_mutex_lock(&w->excl);
	__atomic_fetch_add(&w->excl_turns, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&w->pending, 1, __ATOMIC_RELEASE);
	for (i = 0; i < w->n; i++)
		pthread_mutex_lock(&w->loops[i]->turn);
}

static void
unlock_all(struct world *w)
{
	struct loop *lp;
	size_t i;

	for (i = 0; i < w->n; i++) {
		lp = w->loops[i];
		pthread_mutex_unlock(&lp->turn);
		if (lp->touched) {
			lp->touched = 0;
			loop_wake(lp);
		}
	}
	__atomic_store_n(&w->pending, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&w->excl);
}

/*
 * Start a turn of ${lp} (in a world) with events ${evs}: shared if every
 * watcher with an event and every job may run shared and no timer but
 * shared ones is due, else exclusive.  Returns whether it is shared.
 */
static int
turn_begin(struct loop *lp, const struct epoll_event *evs, int n)
{
	struct timerq_node *first;
	struct loop_job *j;
	struct loop_fd *w;
	int k, shared = 1;

	lock_shared(lp);
	for (k = 0; k < n && shared; k++) {
		w = evs[k].data.ptr;
		if (!w->dead && !w->shared)
			shared = 0;
	}
	if ((first = timerq_first(&lp->timers)) != NULL &&
	    first->when <= turn_ms)
		shared = 0;
	TAILQ_FOREACH(j, &lp->jobs, entry)
		if (!j->shared)
			shared = 0;
	/* A watcher that may not run shared: its last poll (see poll_all). */
	TAILQ_FOREACH(w, &lp->polls, pentry)
		if (!w->shared && w->pstate == P_ARMED)
			shared = 0;
	if (shared)
		return (1);
	pthread_mutex_unlock(&lp->turn);
	lock_all(lp->world);
	return (0);
}

static void
turn_end(struct loop *lp, int shared)
{

	if (shared)
		pthread_mutex_unlock(&lp->turn);
	else
		unlock_all(lp->world);
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
	if (lp->wake_w != NULL) {
		loop_fd_del(lp->wake_w);
		close(lp->wake_fd);
		pthread_mutex_destroy(&lp->turn);
		if (lp->world != NULL && lp->first) {
			pthread_mutex_destroy(&lp->world->excl);
			free(lp->world);
		}
	}
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
	touch(lp);
	return (w);
}

void
loop_fd_share(struct loop_fd *w, int shared)
{

	w->shared = shared;
}

void
loop_fd_poll(struct loop_fd *w, loop_poll_cb *poll, loop_poll_cb *arm)
{

	w->poll = poll;
	w->arm = arm;
}

void
loop_busy_poll(struct loop *lp, uint32_t us)
{

	/* An exclusive turn of another loop may set it (a reload). */
	__atomic_store_n(&lp->busy_ns, (uint64_t)us * 1000, __ATOMIC_RELAXED);
	touch(lp);
}

/* ${w}'s event came: it is polled from the next turn on. */
static void
poll_start(struct loop *lp, struct loop_fd *w)
{

	w->fired = lp->turns;
	if (w->pstate == P_IDLE)
		TAILQ_INSERT_TAIL(&lp->polls, w, pentry);
	w->pstate = P_POLLED;
}

void
loop_fd_kick(struct loop_fd *w)
{

	if (w->poll == NULL || w->dead)
		return;
	/* From another thread's turn: its loop may be asleep (touch). */
	touch(w->lp);
	poll_start(w->lp, w);
}

/* ${w}'s descriptor wakes the loop again; one last poll is due. */
static void
arm_one(struct loop_fd *w)
{

	(void)w->arm(w->arg);
	w->pstate = P_ARMED;
}

/* Poll ${w}; an armed one has had its last poll. */
static void
poll_one(struct loop *lp, struct loop_fd *w)
{

	if (w->poll(w->arg) != 0)
		lp->work_ns = turn_ns;
	/* Its poll may have deleted it. */
	if (w->pstate == P_ARMED) {
		TAILQ_REMOVE(&lp->polls, w, pentry);
		w->pstate = P_IDLE;
	}
}

/*
 * Poll each polled watcher that had no event this turn (its callback
 * just took what there was); one armed before the loop slept has had its
 * last poll.  One that may not run in a shared turn is armed in it
 * instead (arming touches nothing but its own source), and its last poll
 * makes the next turn exclusive (turn_begin): a busy loop's shared turns
 * neither leave it unpolled nor all become exclusive for it.
 */
static void
poll_all(struct loop *lp, int shared)
{
	struct loop_fd *w, *next;

	for (w = TAILQ_FIRST(&lp->polls); w != NULL; w = next) {
		next = TAILQ_NEXT(w, pentry);
		if (w->fired == lp->turns)
			continue;
		if (!shared || w->shared) {
			poll_one(lp, w);
		} else if (w->pstate == P_POLLED) {
			arm_one(w);
		}
	}
}

/*
 * The end of a turn with one event at most: the loop is about to sleep,
 * most likely, so each polled watcher is armed now, in the turn, and
 * polled once more for what came before the arm, rather than asking
 * epoll first (wait_events), which would cost a system call per sleep.
 * Not within the busy-poll window, which keeps them polled.
 */
static void
poll_quiet(struct loop *lp, int n, int shared)
{
	struct loop_fd *w, *next;
	uint64_t busy = __atomic_load_n(&lp->busy_ns, __ATOMIC_RELAXED);

	if (n > 1 || (busy != 0 && turn_ns - lp->work_ns < busy))
		return;
	for (w = TAILQ_FIRST(&lp->polls); w != NULL; w = next) {
		next = TAILQ_NEXT(w, pentry);
		if (w->pstate != P_POLLED || (shared && !w->shared))
			continue;
		arm_one(w);
		poll_one(lp, w);
	}
}

/*
 * Wait up to ${wait} ms for events into ${evs}, as epoll_wait does; but
 * with polled watchers, or within the busy-poll window after the last
 * turn with work, only look: the loop sleeps only when nothing is ready
 * and the window has closed, and then each polled watcher first makes
 * its descriptor wake the loop again (arm), and this turn polls it once
 * more, for what came before the arm.
 */
static int
wait_events(struct loop *lp, struct epoll_event *evs, int wait)
{
	struct loop_fd *w;
	uint64_t ns = __atomic_load_n(&lp->busy_ns, __ATOMIC_RELAXED);
	int n, busy = ns != 0 && turn_ns - lp->work_ns < ns;

	if (wait == 0 || (TAILQ_EMPTY(&lp->polls) && !busy))
		return (epoll_wait(lp->ep, evs, 64, wait));
	if ((n = epoll_wait(lp->ep, evs, 64, 0)) != 0 || busy)
		return (n);
	/* No exclusive turn frees a watcher meanwhile. */
	if (lp->world != NULL)
		lock_shared(lp);
	TAILQ_FOREACH(w, &lp->polls, pentry) {
		if (w->pstate != P_POLLED)
			continue;
		arm_one(w);
	}
	if (lp->world != NULL)
		pthread_mutex_unlock(&lp->turn);
	return (0);
}

int
loop_fd_set(struct loop_fd *w, uint32_t events)
{
	struct epoll_event ev;

	if (w->events == events)
		return (0);
	touch(w->lp);
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
	touch(w->lp);
	loop_timer_stop(&w->pause);
	if (w->events != 0)
		epoll_ctl(w->lp->ep, EPOLL_CTL_DEL, w->fd, NULL);
	if (w->pstate != P_IDLE)
		TAILQ_REMOVE(&w->lp->polls, w, pentry);
	w->pstate = P_IDLE;
	/*
	 * Events for it may still sit in this round's array, or (another
	 * loop's) in the array its thread has yet to dispatch: only that
	 * thread frees it, after dispatching.
	 */
	w->dead = 1;
	w->next_dead = w->lp->dead;
	w->lp->dead = w;
	if (!w->lp->dispatching && pthread_equal(w->lp->owner, pthread_self()))
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
	t->shared = 0;
}

/* The queue ${t} is in when armed. */
static struct timerq *
queue_of(const struct loop_timer *t)
{

	return (t->shared ? &t->lp->stimers : &t->lp->timers);
}

void
loop_timer_arm(struct loop_timer *t, uint64_t ms)
{

	touch(t->lp);
	timerq_del(queue_of(t), &t->node);
	timerq_add(queue_of(t), &t->node, loop_now_ms() + ms);
}

void
loop_timer_stop(struct loop_timer *t)
{

	if (t->lp != NULL && t->node.queued) {
		touch(t->lp);
		timerq_del(queue_of(t), &t->node);
	}
}

void
loop_timer_share(struct loop_timer *t, int shared)
{
	uint64_t when;

	if (!t->shared == !shared)
		return;
	if (!t->node.queued) {
		t->shared = shared != 0;
		return;
	}
	touch(t->lp);
	when = t->node.when;
	timerq_del(queue_of(t), &t->node);
	t->shared = shared != 0;
	timerq_add(queue_of(t), &t->node, when);
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
	j->shared = 0;
}

void
loop_job_share(struct loop_job *j, int shared)
{

	j->shared = shared;
}

void
loop_job_defer(struct loop_job *j)
{

	if (j->queued)
		return;
	touch(j->lp);
	j->queued = 1;
	TAILQ_INSERT_TAIL(&j->lp->jobs, j, entry);
}

void
loop_job_cancel(struct loop_job *j)
{

	if (!j->queued)
		return;
	touch(j->lp);
	TAILQ_REMOVE(&j->lp->jobs, j, entry);
	j->queued = 0;
}

/* When the next turn must start at the latest: a queued job means now. */
static void
plan_wait(struct loop *lp)
{
	struct timerq_node *first;

	lp->next_when = UINT64_MAX;
	if ((first = timerq_first(&lp->timers)) != NULL)
		lp->next_when = first->when;
	if ((first = timerq_first(&lp->stimers)) != NULL &&
	    first->when < lp->next_when)
		lp->next_when = first->when;
	if (!TAILQ_EMPTY(&lp->jobs))
		lp->next_when = 0;
}

/*
 * The next timer due by now: a shared turn takes only shared ones; an
 * exclusive turn the earliest of either (ties: not shared first).
 */
static struct loop_timer *
next_due(struct loop *lp, int shared)
{
	struct timerq_node *x = timerq_first(&lp->timers),
	    *s = timerq_first(&lp->stimers), *n;

	if (shared || x == NULL || x->when > turn_ms ||
	    (s != NULL && s->when < x->when))
		n = timerq_pop(&lp->stimers, turn_ms);
	else
		n = timerq_pop(&lp->timers, turn_ms);
	if (n == NULL)
		return (NULL);
	return ((struct loop_timer *)(void *)((char *)n -
	    offsetof(struct loop_timer, node)));
}

int
loop_run_once(struct loop *lp, int max_ms)
{
	struct epoll_event evs[64];
	struct loop_timer *t;
	struct loop_job *j;
	struct loop_fd *w;
	int n, k, wait = max_ms, shared = 0;

	/*
	 * Timeouts count from the turn's clock, read when epoll_wait
	 * returned: a timer armed late in a turn fires early, and one due
	 * during it late, by at most the time that turn's handlers took.
	 * In a world, other threads may change the timers between turns:
	 * the last turn noted when the first was due (under its lock), and
	 * whoever arms an earlier one wakes the loop.
	 */
	if (lp->world == NULL)
		plan_wait(lp);
	if (lp->next_when != UINT64_MAX) {
		int64_t d = (int64_t)(lp->next_when - turn_ms);

		if (d < 0)
			d = 0;
		if (wait < 0 || d < wait)
			wait = (int)d;
	}
	n = wait_events(lp, evs, wait);
	if (n < 0 && errno != EINTR)
		return (-1);
	if (n < 0)
		n = 0;
	clock_read();
	cur = lp;
	lp->turns++;
	if (n > 0)
		lp->work_ns = turn_ns;
	if (lp->world != NULL)
		shared = turn_begin(lp, evs, n);
	in_shared = shared;
	lp->dispatching = 1;
	for (k = 0; k < n; k++) {
		w = evs[k].data.ptr;
		if (w->dead)
			continue;
		w->cb(w->arg, evs[k].events);
		if (w->poll != NULL && !w->dead)
			poll_start(lp, w);
	}
	poll_all(lp, shared);
	/*
	 * Timers due now; one armed from a callback for "now" fires in this
	 * turn too, after those already due (arming order among ties).  A
	 * shared turn had none due but shared ones: those armed in it that
	 * are not shared wait for the next.
	 */
	while ((t = next_due(lp, shared)) != NULL)
		t->cb(t->arg);
	/* A shared turn leaves the jobs it may not run for the next one. */
	j = TAILQ_FIRST(&lp->jobs);
	while (j != NULL) {
		if (shared && !j->shared) {
			j = TAILQ_NEXT(j, entry);
			continue;
		}
		TAILQ_REMOVE(&lp->jobs, j, entry);
		j->queued = 0;
		j->cb(j->arg);
		j = TAILQ_FIRST(&lp->jobs);
	}
	poll_quiet(lp, n, shared);
	lp->dispatching = 0;
	in_shared = 0;
	reap(lp);
	if (lp->world != NULL) {
		plan_wait(lp);
		turn_end(lp, shared);
	}
	return (0);
}
