/*
 * notify: the systemd notify protocol (sd_notify), for Type=notify units.
 *
 * READY=1 only once every listener is bound and the RDMA listeners are
 * up; STATUS= lines a person can read ("3 tunnels, 12 streams, 2 links
 * up"), refreshed as they change; STOPPING=1 at shutdown; WATCHDOG=1 at
 * half the interval systemd asks for (WatchdogSec=).  Without
 * NOTIFY_SOCKET every call does nothing.
 */
#ifndef NOTIFY_H
#define NOTIFY_H

#include <stdint.h>

struct rsd;

/**
 * notify_ready(d):
 * Tell systemd the daemon is ready, with a first STATUS line, and start
 * the watchdog and status timers.
 */
void notify_ready(struct rsd *d);

/**
 * notify_stopping(d):
 * Tell systemd the daemon is stopping, and stop the timers.
 */
void notify_stopping(struct rsd *d);

/**
 * notify_status_text(d, buf, len):
 * The STATUS line for the daemon as it is now.
 */
void notify_status_text(const struct rsd *d, char *buf, size_t len);

/**
 * notify_reloading(d):
 * Tell systemd a reload started.
 */
void notify_reloading(struct rsd *d);

/**
 * notify_reloaded(d):
 * Tell systemd the reload is over (whether it worked or not: the daemon
 * is ready either way), with a STATUS line that says which.
 */
void notify_reloaded(struct rsd *d);

/**
 * notify_draining(d):
 * Tell systemd the daemon is stopping and waits for open streams.
 */
void notify_draining(struct rsd *d);

#endif /* !NOTIFY_H */
