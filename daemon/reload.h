/*
 * reload: re-reading the configuration file and applying it, on SIGHUP
 * and rstreamctl reload.
 */
#ifndef RELOAD_H
#define RELOAD_H

#include <stddef.h>

struct conf;
struct rsd;

/**
 * reload_config(d, err, errlen):
 * Re-read the configuration file and apply it, telling systemd
 * RELOADING=1 then READY=1.  Returns 0, or -1 with the reason in ${err}:
 * the previous configuration keeps running, and the STATUS line says so
 * until a reload works.
 */
int reload_config(struct rsd *d, char *err, size_t errlen);

/**
 * reload_workers(c):
 * How many threads carry links under configuration ${c}: its workers
 * setting, or one per online CPU.  1 means the daemon's one thread does
 * everything.
 */
unsigned reload_workers(const struct conf *c);

/**
 * reload_log_level(d):
 * The log level d->conf and -v ask for.
 */
int reload_log_level(const struct rsd *d);

#endif /* !RELOAD_H */
