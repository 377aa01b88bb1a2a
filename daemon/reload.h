/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * reload: re-reading the configuration file and applying it, on SIGHUP
 * and rstreamctl reload: read (and names looked up) where the workers run
 * on, applied in an exclusive turn.
 */
#ifndef RELOAD_H
#define RELOAD_H

#include <stddef.h>

struct conf;
struct rsd;

/* How a reload ended, for reload_start's ${done}. */
#define RELOAD_OK		0
#define RELOAD_UNREAD		(-1)	/* before the apply: the file, or
					   another reload under way */
#define RELOAD_APPLY_FAILED	(-2)	/* in the apply's exclusive turn */

/**
 * reload_start(d, done, arg):
 * Re-read and check the configuration file, and look up the users and
 * groups it names, in a child process (confread.h), telling systemd
 * RELOADING=1; the daemon's loop runs on meanwhile, and no file can stop
 * it.  Then apply the result in the next exclusive turn, telling
 * READY=1.  ${done}(${arg}, rc, err), if not NULL, is called once with
 * the outcome (RELOAD_OK, or RELOAD_UNREAD or RELOAD_APPLY_FAILED and
 * the reason): from here when the reader cannot start or a reload is
 * already under way, else from a later turn.  A failed reload keeps the
 * previous configuration running, and the STATUS line says so until a
 * reload works.  Returns 0 if the outcome is to come, else -1.
 */
int reload_start(struct rsd *d, void (*done)(void *, int, const char *),
    void *arg);

/**
 * reload_forget(d, arg):
 * ${arg} goes away: a reload under way for it calls no ${done}.
 */
void reload_forget(struct rsd *d, void *arg);

/**
 * reload_busy(d):
 * Nonzero while a reload started by reload_start has not yet ended.
 */
int reload_busy(const struct rsd *d);

/**
 * reload_stop(d):
 * The daemon stops: a reload not yet applied is dropped.
 */
void reload_stop(struct rsd *d);

/**
 * reload_workers(c):
 * How many threads carry links under configuration ${c}: its workers
 * setting, or one per online CPU.  1 means the daemon's one thread does
 * everything.
 */
unsigned reload_workers(const struct conf *c);

/**
 * reload_busy_poll(d):
 * Every loop of daemon ${d} (its own and its workers') busy-polls as
 * d->conf's busy_poll says (loop_busy_poll).  At start, and at each
 * reload (an exclusive turn).
 */
void reload_busy_poll(struct rsd *d);

/**
 * reload_no_dumps(c):
 * If ${c} holds a key (conf_keyed), the process dumps no core from now
 * on, and other processes of its user may not trace it or read its
 * /proc files (PR_SET_DUMPABLE 0, and RLIMIT_CORE 0 for systems that
 * dump even such a process, fs.suid_dumpable = 2).  At start, and at
 * each reload, before the keys of ${c} are used.  Never undone.
 */
void reload_no_dumps(const struct conf *c);

/**
 * reload_log_level(d):
 * The log level d->conf and -v ask for.
 */
int reload_log_level(const struct rsd *d);

#endif /* !RELOAD_H */
