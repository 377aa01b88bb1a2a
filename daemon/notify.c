/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "log.h"
#include "loop.h"
#include "notify.h"

/* How often STATUS is refreshed (only sent when it changed). */
#define STATUS_MS	2000

static struct loop_timer status_timer, watchdog_timer;
static uint64_t watchdog_ms;
static notify_status_fn *status_fn;
static void *status_arg;
static char last_status[1400];

static void
status_now(void)
{

	if (status_fn != NULL)
		status_fn(status_arg, last_status, sizeof(last_status));
}

static void
on_status(void *arg)
{
	char buf[sizeof(last_status)];

	(void)arg;
	loop_timer_arm(&status_timer, STATUS_MS);
	status_fn(status_arg, buf, sizeof(buf));
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

void
notify_ready(struct loop *lp, notify_status_fn *status, void *arg)
{
	uint64_t usec = 0;

	status_fn = status;
	status_arg = arg;
	status_now();
	sd_notifyf(0, "READY=1\nSTATUS=%s", last_status);
	loop_timer_init(&status_timer, lp, on_status, NULL);
	loop_timer_init(&watchdog_timer, lp, on_watchdog, NULL);
	/* Neither stops a worker: status reads only what any turn may. */
	loop_timer_share(&status_timer, 1);
	loop_timer_share(&watchdog_timer, 1);
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

void
notify_reloading(void)
{
	struct timespec ts;

	/* MONOTONIC_USEC lets Type=notify-reload match the reload up. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu\n"
	    "STATUS=reloading the configuration",
	    (unsigned long long)ts.tv_sec * 1000000ULL +
	    (unsigned long long)ts.tv_nsec / 1000ULL);
}

void
notify_reloaded(void)
{

	status_now();
	sd_notifyf(0, "READY=1\nSTATUS=%s", last_status);
}

void
notify_draining(unsigned drain_s)
{

	status_now();
	/* Past TimeoutStopSec= if drain_time is longer: ask for the time. */
	sd_notifyf(0, "STOPPING=1\nSTATUS=%s\nEXTEND_TIMEOUT_USEC=%llu",
	    last_status, (unsigned long long)(drain_s + 10) * 1000000ULL);
}

void
notify_stopping(void)
{

	loop_timer_stop(&status_timer);
	loop_timer_stop(&watchdog_timer);
	sd_notify(0, "STOPPING=1\nSTATUS=stopping");
}
