#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "link.h"
#include "log.h"
#include "loop.h"
#include "notify.h"
#include "reload.h"
#include "rsd.h"
#include "tunnel.h"

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

int
reload_config(struct rsd *d, char *err, size_t errlen)
{
	struct conf *nc = NULL;
	char file[sizeof(d->conf->file)], why[1024];
	int control_moved;

	if (d->draining) {
		snprintf(err, errlen, "not reloading: the daemon is stopping");
		return (-1);
	}
	notify_reloading();
	snprintf(file, sizeof(file), "%s", d->conf->file);
	log_notice("reloading %s", file);
	if (conf_load(file, 0, &nc, err, errlen) != 0)
		goto fail;
	control_moved = strcmp(nc->control, d->conf->control) != 0 ||
	    nc->control_mode != d->conf->control_mode ||
	    strcmp(nc->control_group, d->conf->control_group) != 0;
	/* The log file first: failing to open it fails the reload. */
	if (strcmp(nc->log_file, d->conf->log_file) != 0 &&
	    log_file_open(nc->log_file, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "%s", why);
		goto fail;
	}
	if (tunnel_reload(d, nc, err, errlen) != 0) {
		/* Back to the old log file, if it moved. */
		log_file_open(d->conf->log_file, why, sizeof(why));
		goto fail;
	}
	/* d->conf is nc now. */
	log_set_level(reload_log_level(d));
	if (control_moved)
		log_warn("the control socket settings changed; they take "
		    "effect when rstreamd restarts (still on %s)",
		    d->control_path[0] != '\0' ? d->control_path : "nothing");
	if (reload_workers(nc) != link_workers(d))
		log_warn("workers changed; that takes effect when rstreamd "
		    "restarts (still %zu)", link_workers(d));
	d->reload_error[0] = '\0';
	d->reloads++;
	d->reloaded_ms = loop_now_ms();
	log_notice("reloaded %s: %zu tunnels", file, d->conf->ntunnels);
	tunnel_warn_keys(d);
	notify_reloaded();
	return (0);

fail:
	conf_free(nc);
	snprintf(d->reload_error, sizeof(d->reload_error), "%s", err);
	log_err("reload failed, still running the previous configuration: "
	    "%s", err);
	notify_reloaded();
	return (-1);
}
