/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/prctl.h>
#include <sys/resource.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "confread.h"
#include "link.h"
#include "log.h"
#include "loop.h"
#include "notify.h"
#include "reload.h"
#include "rsd.h"
#include "scrape.h"
#include "tunnel.h"

/*
 * The reader is this very program, whatever has been installed over its
 * file since it started.  It gets a minute: libconfig needs seconds for
 * the largest file conffile lets through, and the name service for a
 * user or group may be slow.
 */
#define READER_EXE	"/proc/self/exe"
#define READER_MS	60000

void
reload_no_dumps(const struct conf *c)
{
	static const struct rlimit none = { 0, 0 };

	/* secmem keeps the configuration out of a core, but a sealed link's
	 * keys live in OpenSSL's ordinary heap. */
	if (!conf_keyed(c))
		return;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 ||
	    setrlimit(RLIMIT_CORE, &none) != 0)
		log_warn("cannot turn core dumps off, which could hold keys: "
		    "%s", strerror(errno));
}

int
reload_log_level(const struct rsd *d)
{
	int level = d->conf->log_level + d->verbose;

	return (level > LOG_DEBUG ? LOG_DEBUG : level);
}

unsigned
reload_workers(const struct conf *c)
{
	long n;

	if (c->workers != 0)
		return (c->workers);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		return (1);
	return (n > CONF_MAX_WORKERS ? CONF_MAX_WORKERS : (unsigned)n);
}

void
reload_busy_poll(struct rsd *d)
{
	size_t i;

	loop_busy_poll(d->lp, d->conf->busy_poll);
	for (i = 0; i < d->nworkers; i++)
		loop_busy_poll(d->workers[i], d->conf->busy_poll);
}

/* A reload that failed: the running configuration stays, and says so. */
static void
failed(struct rsd *d, struct conf *nc, const char *err)
{

	conf_free(nc);
	snprintf(d->reload_error, sizeof(d->reload_error), "%s", err);
	log_err("reload failed, still running the previous configuration: "
	    "%s", err);
	notify_reloaded();
}

/* Tell whoever asked how it went (once), then forget them. */
static void
report(struct rsd *d, int rc, const char *err)
{
	void (*done)(void *, int, const char *) = d->reload_done;

	d->reload_done = NULL;
	if (done != NULL)
		done(d->reload_arg, rc, err);
}

/*
 * The second half, in an exclusive turn: switch to the configuration the
 * first half read.  Nothing here reads a file but the log file it may
 * open, or asks the name service.
 */
static void
on_apply(void *arg)
{
	struct rsd *d = arg;
	struct conf *nc = d->reload_nc;
	char file[sizeof(d->conf->file)], err[1100], why[1024];
	int control_moved, metrics_moved;

	loop_assert_exclusive();
	d->reload_nc = NULL;
	if (nc == NULL)
		return;
	if (d->draining) {
		snprintf(err, sizeof(err), "not reloading: the daemon is "
		    "stopping");
		failed(d, nc, err);
		report(d, RELOAD_APPLY_FAILED, err);
		return;
	}
	snprintf(file, sizeof(file), "%s", d->conf->file);
	control_moved = strcmp(nc->control, d->conf->control) != 0 ||
	    nc->control_mode != d->conf->control_mode ||
	    strcmp(nc->control_group, d->conf->control_group) != 0;
	metrics_moved = !conf_addr_same(&nc->metrics_listen,
	    &d->conf->metrics_listen);
	/* The log file first: failing to open it fails the reload. */
	if (strcmp(nc->log_file, d->conf->log_file) != 0 &&
	    log_file_open(nc->log_file, why, sizeof(why)) != 0) {
		failed(d, nc, why);
		report(d, RELOAD_APPLY_FAILED, why);
		return;
	}
	reload_no_dumps(nc);
	if (tunnel_reload(d, nc, err, sizeof(err)) != 0) {
		/* Back to the old log file, if it moved. */
		log_file_open(d->conf->log_file, why, sizeof(why));
		failed(d, nc, err);
		report(d, RELOAD_APPLY_FAILED, err);
		return;
	}
	/* d->conf is nc now. */
	log_set_level(reload_log_level(d));
	reload_busy_poll(d);
	if (control_moved)
		log_warn("the control socket settings changed; they take "
		    "effect when rstreamd restarts (still on %s)",
		    d->control_path[0] != '\0' ? d->control_path : "nothing");
	if (metrics_moved)
		log_warn("metrics_listen changed; that takes effect when "
		    "rstreamd restarts (still %s)", d->scrape != NULL ?
		    scrape_bound(d->scrape) : "nothing");
	if (reload_workers(nc) != link_workers(d))
		log_warn("workers changed; that takes effect when rstreamd "
		    "restarts (still %zu)", link_workers(d));
	d->reload_error[0] = '\0';
	d->reloads++;
	d->reloaded_ms = loop_now_ms();
	log_notice("reloaded %s: %zu tunnels", file, d->conf->ntunnels);
	tunnel_warn(d);
	notify_reloaded();
	report(d, RELOAD_OK, "");
}

/* The reader's answer, in a shared turn: applied in the next exclusive one. */
static void
on_read(void *arg, struct conf *nc, const char *err)
{
	struct rsd *d = arg;

	confread_free(d->reload_rd);
	d->reload_rd = NULL;
	if (nc == NULL) {
		failed(d, NULL, err);
		report(d, RELOAD_UNREAD, err);
		return;
	}
	if (d->reload_job.cb == NULL)
		loop_job_init(&d->reload_job, d->lp, on_apply, d);
	d->reload_nc = nc;
	loop_job_defer(&d->reload_job);
}

int
reload_start(struct rsd *d, void (*done)(void *, int, const char *),
    void *arg)
{
	char err[1100];

	if (reload_busy(d) || d->draining) {
		snprintf(err, sizeof(err), "not reloading: %s",
		    d->draining ? "the daemon is stopping" :
		    "a reload is already under way");
		log_notice("%s", err);
		if (done != NULL)
			done(arg, RELOAD_UNREAD, err);
		return (-1);
	}
	notify_reloading();
	log_notice("reloading %s", d->conf->file);
	/* Read by another process: whatever the file does, it does there. */
	if ((d->reload_rd = confread_start(d->lp, READER_EXE, d->conf->file,
	    READER_MS, on_read, d, err, sizeof(err))) == NULL) {
		failed(d, NULL, err);
		if (done != NULL)
			done(arg, RELOAD_UNREAD, err);
		return (-1);
	}
	d->reload_done = done;
	d->reload_arg = arg;
	return (0);
}

void
reload_forget(struct rsd *d, void *arg)
{

	if (d->reload_arg == arg)
		d->reload_done = NULL;
}

int
reload_busy(const struct rsd *d)
{

	return (d->reload_rd != NULL || d->reload_nc != NULL);
}

void
reload_stop(struct rsd *d)
{

	confread_free(d->reload_rd);
	d->reload_rd = NULL;
	loop_job_cancel(&d->reload_job);
	conf_free(d->reload_nc);
	d->reload_nc = NULL;
	d->reload_done = NULL;
}
