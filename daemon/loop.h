/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * loop: the daemon's event loop: epoll over file descriptors, plus timers
 * on the monotonic clock.  Level-triggered; each watched descriptor has
 * one callback and an interest mask the owner changes as its needs change
 * (reading stops while a ring is full: that is the backpressure).
 *
 * Threads: the daemon's one contract for data that several threads can
 * reach.  Every other file points here rather than restating it.
 *
 * A worker is a thread that runs one loop (rstreamd.c's workers_run; the
 * main thread runs the daemon's loop, rsd.lp: control, reloads, signals,
 * the RDMA CM).  Their loops form a world; with fewer than two workers
 * there is no world, one loop does everything and every turn is
 * exclusive.  Every object belongs to one loop, its owner loop: the one
 * its watchers, timers and jobs were made on (a link and its streams:
 * link_loop(); tunnels, listeners, control clients: rsd.lp).
 *
 * Each turn of a loop (one loop_run_once) is shared or exclusive.  A
 * shared turn runs at the same time as other loops' shared turns and may
 * touch only its own loop's objects: the data path (a link's completions,
 * its streams' sockets), and what the daemon's loop does for untrusted
 * parties (a peer's connect request, a control client, a signal), which
 * stops no worker.  An exclusive turn runs while every other loop of the
 * world waits between turns (all workers stopped), and may touch
 * anything, in any loop.  A turn is shared when every watcher with an
 * event, every job queued and every timer due was marked shared
 * (loop_fd_share, loop_job_share, loop_timer_share); work a shared turn
 * finds it cannot do (a job not marked shared, a link's stream event that
 * changes a tunnel) waits for the next turn, which is then exclusive.
 * Each loop has its own turn lock, which only a thread starting an
 * exclusive turn ever waits for.
 *
 * Every field of the daemon's shared structures (rsd.h; link_int.h's struct
 * dlink) ends with one of three labels naming what guards it, optionally
 * followed by a few words (excl: set at apply):
 *   owner   only turns of the loop that owns the object (shared or
 *           exclusive) read or write it, or an exclusive turn of another
 *           loop (the owner then waits);
 *   excl    written only in exclusive turns: any turn may read it (no
 *           writer runs alongside a shared turn);
 *   atomic  any turn, through atomics: ST_ADD (rsd.h) for counters,
 *           budget_take and budget_give (budget.h) for memory charges,
 *           __atomic loads and stores, or a lock of its own (log.h's
 *           bursts).
 * What follows from them:
 *  - the daemon's lists (links, tunnels, a tunnel's streams, listeners),
 *    its configuration, and whatever makes, frees or moves a link, a
 *    tunnel or a stream change only in exclusive turns; such functions
 *    start with loop_assert_exclusive(), and a shared turn may walk the
 *    lists to read them;
 *  - a counter that a shared turn may write counts with ST_ADD; any other
 *    is written in exclusive turns only; readers of owner fields (status,
 *    the tables) run in exclusive turns; metrics reads only excl and
 *    atomic fields, and what each link's loop publishes (linkstat.h), so
 *    it runs in a shared turn of the daemon's loop;
 *  - a limit is reserved before the work it limits (an atomic add, a
 *    check, a roll back), never checked in one turn and charged in
 *    another;
 *  - a shared turn that touches another loop's watcher, timer or job, or
 *    calls an exclusive-only function, stops the daemon (abort) rather
 *    than corrupting it.
 */
#ifndef LOOP_H
#define LOOP_H

#include <sys/queue.h>

#include <stdint.h>

#include "timerq.h"

struct loop;
struct loop_fd;

/* Called with the epoll events (EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP). */
typedef void loop_fd_cb(void *arg, uint32_t events);
typedef void loop_timer_cb(void *arg);
/* loop_fd_poll's: returns nonzero when it found work (or failed). */
typedef int loop_poll_cb(void *arg);

/*
 * A timer lives inside its owner (a link, a stream, ...): set up once with
 * loop_timer_init, then armed and stopped as often as needed.  Arming
 * never allocates, so it cannot fail.  Fields are the loop's.
 */
struct loop_timer {
	struct timerq_node node;
	struct loop *lp;
	loop_timer_cb *cb;
	void *arg;
	int shared;			/* in the loop's shared queue */
};

/**
 * loop_new():
 * Create a loop, or NULL (errno set).
 */
struct loop *loop_new(void);

/**
 * loop_free(lp):
 * Free the loop; watchers and timers must be gone.  NULL is a no-op.
 */
void loop_free(struct loop *lp);

/**
 * loop_fd_add(lp, fd, events, cb, arg):
 * Watch ${fd} for ${events}.  Returns the watcher or NULL.
 */
struct loop_fd *loop_fd_add(struct loop *lp, int fd, uint32_t events,
    loop_fd_cb *cb, void *arg);

/**
 * loop_fd_poll(w, poll, arm):
 * ${w}'s descriptor raises one event per ${arm}(arg) (a completion
 * channel: one event per request for notification), and work may queue
 * behind it without any: once ${w}'s callback has run, the loop calls
 * ${poll}(arg) in each later turn instead of asking the descriptor, and
 * only when it would sleep (see loop_busy_poll) calls ${arm}(arg), then
 * ${poll} once more in a turn of its own, for what came before the arm;
 * then it sleeps until the descriptor wakes it.  So a busy source costs
 * no system call per turn, and nothing that queued before the arm is
 * missed.  ${poll} runs as ${w}'s callback does (its owner's turns;
 * sharing as loop_fd_share says).  ${arm} may run outside any turn (with
 * the loop's turn lock held) or in a shared turn even when ${w} is not
 * shared (a busy loop arms it there, and polls it a last time in the next
 * turn, exclusive), so it touches only ${w}'s own source, and a failure it
 * meets is for the ${poll} that follows to report.
 */
void loop_fd_poll(struct loop_fd *w, loop_poll_cb *poll, loop_poll_cb *arm);

/**
 * loop_fd_kick(w):
 * Work may wait behind ${w} (of loop_fd_poll) that its descriptor will
 * not announce: its source was armed for less than what may now come.
 * The loop polls it from the next turn on, as after its callback, and
 * arms it again before it sleeps.  Call in a turn of ${w}'s loop, or in
 * another loop's exclusive turn (which wakes ${w}'s loop as it ends, as
 * for a timer armed there: it may be asleep with ${w} armed for less).
 */
void loop_fd_kick(struct loop_fd *w);

/**
 * loop_busy_poll(lp, us):
 * For ${us} microseconds after a turn with work (an event, or a poll that
 * found some), ${lp} does not sleep: it polls again at once (epoll and
 * loop_fd_poll's watchers), trading a CPU for the time a sleep and a
 * wake-up take.  0 (the default) sleeps as soon as there is no work.
 */
void loop_busy_poll(struct loop *lp, uint32_t us);

/**
 * loop_fd_set(w, events):
 * Change what ${w} waits for (0 pauses it).
 */
int loop_fd_set(struct loop_fd *w, uint32_t events);

/**
 * loop_fd_events(w):
 * What ${w} waits for now.
 */
uint32_t loop_fd_events(const struct loop_fd *w);

/**
 * loop_fd_pause(w, ms):
 * Stop watching ${w} for ${ms} milliseconds, then wait for what it waited
 * for before (a listener out of descriptors rests instead of spinning).
 * A watcher already paused stays as it is.  Returns 0, or -1 on failure.
 */
int loop_fd_pause(struct loop_fd *w, uint64_t ms);

/**
 * loop_fd_del(w):
 * Stop watching (the descriptor is not closed).  NULL is a no-op.  Safe
 * from inside any callback, including ${w}'s own.
 */
void loop_fd_del(struct loop_fd *w);

/**
 * loop_timer_init(t, lp, cb, arg):
 * Make ${t} a stopped timer of ${lp} that calls ${cb}(${arg}) when it
 * fires.
 */
void loop_timer_init(struct loop_timer *t, struct loop *lp, loop_timer_cb *cb,
    void *arg);

/**
 * loop_timer_arm(t, ms):
 * Fire ${t} once, ${ms} milliseconds from now (re-arming an armed timer
 * moves it).  Timers due at the same time fire in the order armed.
 */
void loop_timer_arm(struct loop_timer *t, uint64_t ms);

/**
 * loop_timer_stop(t):
 * Stop ${t} if it is armed.  A timer that was never initialised (all
 * zero) may be stopped too, so an owner's free path need not know.
 */
void loop_timer_stop(struct loop_timer *t);

/**
 * loop_timer_share(t, shared):
 * Whether ${t} may fire in a shared turn (see above; an armed timer keeps
 * its time).  Timers start not shared.  In an exclusive turn, due timers
 * fire earliest first, and among those due at the same time the ones not
 * shared first.
 */
void loop_timer_share(struct loop_timer *t, int shared);

/**
 * loop_timer_armed(t):
 * True while ${t} is armed (it is no longer armed in its own callback).
 */
int loop_timer_armed(const struct loop_timer *t);

/*
 * A job runs once at the end of the loop turn it was deferred in, after
 * every event and timer of that turn (so work that many handlers ask for,
 * like posting a link's work requests, is done once, and never from
 * inside one of them).  Like a timer it lives inside its owner and
 * deferring it cannot fail.  Fields are the loop's.
 */
struct loop_job {
	struct loop *lp;
	loop_timer_cb *cb;
	void *arg;
	int queued;
	int shared;
	TAILQ_ENTRY(loop_job) entry;
};

/**
 * loop_job_init(j, lp, cb, arg):
 * Make ${j} a job of ${lp} that calls ${cb}(${arg}).
 */
void loop_job_init(struct loop_job *j, struct loop *lp, loop_timer_cb *cb,
    void *arg);

/**
 * loop_job_defer(j):
 * Run ${j} at the end of this turn (once, however often it is deferred).
 * A job deferred by a job runs in the same turn, after it.
 */
void loop_job_defer(struct loop_job *j);

/**
 * loop_job_cancel(j):
 * Do not run ${j} (if it was deferred).  An all-zero job may be cancelled.
 */
void loop_job_cancel(struct loop_job *j);

/**
 * loop_now_ms():
 * The monotonic clock in milliseconds, as read once per loop turn (when
 * epoll_wait returns; first by loop_new): every handler of a turn sees the
 * same instant, and a turn costs one clock read (a system call where the
 * clock source has no vDSO path, as under emulation).
 */
uint64_t loop_now_ms(void);

/**
 * loop_now_ns():
 * The same instant as loop_now_ms, in nanoseconds (for measuring short
 * waits, such as a work request's time on the send queue).
 */
uint64_t loop_now_ns(void);

/**
 * loop_world_new(lp):
 * Make ${lp} the first loop of a new world (the thread that runs control,
 * reloads and signals).  Returns 0, or -1 (errno set).
 */
int loop_world_new(struct loop *lp);

/**
 * loop_world_join(lp, first):
 * Make ${lp} (a new loop) a loop of the world of ${first}, run by another
 * thread (see loop_bind).  Call before any thread but the first's runs.
 * Returns 0, or -1 (errno set).
 */
int loop_world_join(struct loop *lp, struct loop *first);

/**
 * loop_bind(lp):
 * The calling thread runs ${lp} from now on.
 */
void loop_bind(struct loop *lp);

/**
 * loop_wake(lp):
 * End ${lp}'s wait for events now (from any thread).
 */
void loop_wake(struct loop *lp);

/**
 * loop_fd_share(w, shared) / loop_job_share(j, shared):
 * Whether ${w}'s events and ${j} may run in a shared turn (see above).
 * Watchers and jobs start not shared.
 */
void loop_fd_share(struct loop_fd *w, int shared);
void loop_job_share(struct loop_job *j, int shared);

/**
 * loop_exclusive():
 * True unless the calling thread is in a shared turn (outside any world,
 * every turn is exclusive).
 */
int loop_exclusive(void);

/**
 * loop_assert_exclusive():
 * Abort unless the calling thread may touch anything (see Threads above):
 * the first line of every function that may only run in an exclusive
 * turn.
 */
void loop_assert_exclusive(void);

/**
 * loop_exclusive_turns(lp):
 * How many exclusive turns ${lp}'s world has taken, each stopping every
 * loop of it (0 outside a world).  Any turn may read it.
 */
uint64_t loop_exclusive_turns(const struct loop *lp);

/**
 * loop_run_once(lp, max_ms):
 * Wait up to ${max_ms} (or until the next timer; not at all if a job is
 * deferred) for events, dispatch them, then any due timers, then the
 * deferred jobs.  Returns 0, or -1 on an epoll error other than EINTR.
 */
int loop_run_once(struct loop *lp, int max_ms);

#endif /* !LOOP_H */
