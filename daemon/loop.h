/*
 * loop: the daemon's event loop: epoll over file descriptors, plus timers
 * on the monotonic clock.  Level-triggered; each watched descriptor has
 * one callback and an interest mask the owner changes as its needs change
 * (reading stops while a ring is full: that is the backpressure).
 */
#ifndef LOOP_H
#define LOOP_H

#include <stdint.h>

struct loop;
struct loop_fd;
struct loop_timer;

/* Called with the epoll events (EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP). */
typedef void loop_fd_cb(void *arg, uint32_t events);
typedef void loop_timer_cb(void *arg);

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
 * loop_timer_add(lp, ms, cb, arg):
 * Call ${cb} once, ${ms} milliseconds from now.
 */
struct loop_timer *loop_timer_add(struct loop *lp, uint64_t ms,
    loop_timer_cb *cb, void *arg);

/**
 * loop_timer_del(t):
 * Cancel a timer that has not fired.  NULL is a no-op.
 */
void loop_timer_del(struct loop_timer *t);

/**
 * loop_now_ms():
 * The monotonic clock in milliseconds.
 */
uint64_t loop_now_ms(void);

/**
 * loop_run_once(lp, max_ms):
 * Wait up to ${max_ms} (or until the next timer) for events, dispatch
 * them and any due timers.  Returns 0, or -1 on an epoll error other
 * than EINTR.
 */
int loop_run_once(struct loop *lp, int max_ms);

#endif /* !LOOP_H */
