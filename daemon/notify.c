#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "link.h"
#include "log.h"
#include "loop.h"
#include "notify.h"
#include "rsd.h"
#include "tunnel.h"

/* How often STATUS is refreshed (only sent when it changed). */
#define STATUS_MS	2000

static struct loop_timer status_timer, watchdog_timer;
static uint64_t watchdog_ms;
static char last_status[1400];

/**
 * notify_status_text(d, buf, len):
 * The STATUS line for the daemon as it is now.
 */
void
notify_status_text(const struct rsd *d, char *buf, size_t len)
{
	unsigned streams = tunnel_streams(d), up, links = link_count(d, &up);
	size_t ntuns = d->conf->ntunnels;
	int n;

	if (d->draining) {
		snprintf(buf, len, "stopping: waiting for %u stream%s to "
		    "finish", streams, streams == 1 ? "" : "s");
		return;
	}
	n = snprintf(buf, len, "%zu tunnel%s, %u stream%s, %u of %u link%s "
	    "up", ntuns, ntuns == 1 ? "" : "s", streams,
	    streams == 1 ? "" : "s", up, links, links == 1 ? "" : "s");
	/* A failed reload is news until the next one works. */
	if (d->reload_error[0] != '\0' && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "; reload failed, running "
		    "the previous configuration: %s", d->reload_error);
}

static void
on_status(void *arg)
{
	struct rsd *d = arg;
	char buf[sizeof(last_status)];

	loop_timer_arm(&status_timer, STATUS_MS);
	notify_status_text(d, buf, sizeof(buf));
	if (strcmp(buf, last_status) != 0) {
		strcpy(last_status, buf);
		sd_notifyf(0, "STATUS=%s", buf);
	}
}

static void
on_watchdog(void *arg)
{

	(void)arg;
	loop_timer_arm(&watchdog_timer, watchdog_ms);
	sd_notify(0, "WATCHDOG=1");
}

/**
 * notify_ready(d):
 * Tell systemd the daemon is ready, with a first STATUS line, and start
 * the watchdog and status timers.
 */
void
notify_ready(struct rsd *d)
{
	uint64_t usec = 0;

	notify_status_text(d, last_status, sizeof(last_status));
	sd_notifyf(0, "READY=1\nSTATUS=%s", last_status);
	loop_timer_init(&status_timer, d->lp, on_status, d);
	loop_timer_init(&watchdog_timer, d->lp, on_watchdog, d);
	loop_timer_arm(&status_timer, STATUS_MS);
	/* Half the interval: a late loop round must not look like a hang. */
	if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
		watchdog_ms = usec / 2000 > 0 ? usec / 2000 : 1;
		log_info("systemd watchdog: WATCHDOG=1 every %llu ms",
		    (unsigned long long)watchdog_ms);
		sd_notify(0, "WATCHDOG=1");
		loop_timer_arm(&watchdog_timer, watchdog_ms);
	}
}

/**
 * notify_reloading(d):
 * Tell systemd a reload started.
 */
void
notify_reloading(struct rsd *d)
{

	struct timespec ts;

	(void)d;
	/* MONOTONIC_USEC lets Type=notify-reload match the reload up. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu\n"
	    "STATUS=reloading the configuration",
	    (unsigned long long)ts.tv_sec * 1000000ULL +
	    (unsigned long long)ts.tv_nsec / 1000ULL);
}

/**
 * notify_reloaded(d):
 * Tell systemd the reload is over (whether it worked or not: the daemon
 * is ready either way), with a STATUS line that says which.
 */
void
notify_reloaded(struct rsd *d)
{

	notify_status_text(d, last_status, sizeof(last_status));
	sd_notifyf(0, "READY=1\nSTATUS=%s", last_status);
}

/**
 * notify_draining(d):
 * Tell systemd the daemon is stopping and waits for open streams.
 */
void
notify_draining(struct rsd *d)
{

	notify_status_text(d, last_status, sizeof(last_status));
	/* Past TimeoutStopSec= if drain_time is longer: ask for the time. */
	sd_notifyf(0, "STOPPING=1\nSTATUS=%s\nEXTEND_TIMEOUT_USEC=%llu",
	    last_status, (unsigned long long)(d->conf->drain_time + 10) *
	    1000000ULL);
}

/**
 * notify_stopping(d):
 * Tell systemd the daemon is stopping, and stop the timers.
 */
void
notify_stopping(struct rsd *d)
{

	(void)d;
	loop_timer_stop(&status_timer);
	loop_timer_stop(&watchdog_timer);
	sd_notify(0, "STOPPING=1\nSTATUS=stopping");
}
