#include "config.h"

#include <stdio.h>
#include <string.h>

#include "conf.h"
#include "ctl.h"
#include "log.h"
#include "loop.h"
#include "notify.h"
#include "rsd.h"
#include "tunnel.h"

/**
 * rsd_log_level(d):
 * The log level d->conf and -v ask for.
 */
int
rsd_log_level(const struct rsd *d)
{
	int level = d->conf->log_level + d->verbose;

	return (level > LOG_DEBUG ? LOG_DEBUG : level);
}

/**
 * rsd_reload(d, err, errlen):
 * Re-read the configuration file and apply it (SIGHUP, rstreamctl
 * reload), telling systemd RELOADING=1 then READY=1.  Returns 0, or -1
 * with the reason in ${err}: the previous configuration keeps running,
 * and the STATUS line says so until a reload works.
 */
int
rsd_reload(struct rsd *d, char *err, size_t errlen)
{
	struct conf *nc = NULL;
	char file[sizeof(d->conf->file)], why[1024];
	int control_moved;

	if (d->draining) {
		snprintf(err, errlen, "not reloading: the daemon is stopping");
		return (-1);
	}
	notify_reloading(d);
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
	log_set_level(rsd_log_level(d));
	if (control_moved)
		log_warn("the control socket settings changed; they take "
		    "effect when rstreamd restarts (still on %s)",
		    d->ctl != NULL ? ctl_path(d->ctl) : "nothing");
	d->reload_error[0] = '\0';
	d->reloads++;
	d->reloaded_ms = loop_now_ms();
	log_notice("reloaded %s: %zu tunnels", file, d->conf->ntunnels);
	rsd_warn_keys(d);
	notify_reloaded(d);
	return (0);

fail:
	conf_free(nc);
	snprintf(d->reload_error, sizeof(d->reload_error), "%s", err);
	log_err("reload failed, still running the previous configuration: "
	    "%s", err);
	notify_reloaded(d);
	return (-1);
}

/**
 * rsd_warn_keys(d):
 * Warn, once in the daemon's life, if some tunnel has no key_file: its
 * links are not authenticated.
 */
void
rsd_warn_keys(struct rsd *d)
{
	char names[300];
	size_t i, len = 0, n = 0;

	if (d->noauth_warned)
		return;
	names[0] = '\0';
	for (i = 0; i < d->conf->ntunnels; i++) {
		if (d->conf->tunnels[i].key.set)
			continue;
		if (n++ < 8 && len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) -
			    len, "%s%s", n > 1 ? ", " : "",
			    d->conf->tunnels[i].name);
	}
	if (n == 0)
		return;
	d->noauth_warned = 1;
	log_warn("links are not authenticated for %zu tunnel%s without a "
	    "key_file (%s%s): any host on the fabric that can reach them "
	    "can use them; see SECURITY in rstreamd(8)", n, n == 1 ? "" : "s",
	    names, n > 8 ? ", ..." : "");
}
