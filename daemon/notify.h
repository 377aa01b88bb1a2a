/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * notify: the systemd notify protocol (sd_notify), for Type=notify units.
 *
 * READY=1 only once every listener is bound and the RDMA listeners are
 * up; STATUS= lines a person can read ("3 tunnels, 12 streams, 2 of 2
 * links up"), refreshed as they change; RELOADING=1 and READY=1 around a
 * reload; STOPPING=1 at shutdown; WATCHDOG=1 at half the interval systemd
 * asks for (WatchdogSec=).  Without NOTIFY_SOCKET every call does nothing.
 * What STATUS says comes from the caller (notify_ready's ${status}).
 */
#ifndef NOTIFY_H
#define NOTIFY_H

#include <stddef.h>
#include <stdint.h>

struct loop;

/*
 * Write the STATUS line for the daemon as it is now into ${buf}; called
 * in shared turns of the loop given to notify_ready too, so it may read
 * only what any turn may (loop.h).
 */
typedef void notify_status_fn(void *arg, char *buf, size_t len);

/**
 * notify_ready(lp, status, arg):
 * Tell systemd the daemon is ready, with a first STATUS line from
 * ${status}(${arg}, ...), and start the watchdog and status timers on
 * ${lp}.
 */
void notify_ready(struct loop *lp, notify_status_fn *status, void *arg);

/**
 * notify_reloading():
 * Tell systemd a reload started.
 */
void notify_reloading(void);

/**
 * notify_reloaded():
 * Tell systemd the reload is over (whether it worked or not: the daemon
 * is ready either way), with a STATUS line that says which.
 */
void notify_reloaded(void);

/**
 * notify_draining(drain_s):
 * Tell systemd the daemon is stopping and waits up to ${drain_s} seconds
 * for open streams (asking for that much more time to stop).
 */
void notify_draining(unsigned drain_s);

/**
 * notify_stopping():
 * Tell systemd the daemon is stopping, and stop the timers.
 */
void notify_stopping(void);

#endif /* !NOTIFY_H */
