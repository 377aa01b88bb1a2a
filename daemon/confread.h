/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * confread: a configuration read in a child process, for a reload.
 *
 * A running daemon must survive whatever file it is asked to reload, and
 * keep its streams flowing while it reads: libconfig can take seconds on
 * a large file, a user or group lookup can wait on a name service, and a
 * library may crash or call exit() on input it did not expect.  So the
 * daemon starts a fresh copy of its own program (never a fork: the parent
 * has registered memory and threads) that reads and checks the file and
 * sends the result back through a pipe; the parent's loop collects it
 * without blocking.  Whatever happens to the child, the parent hears
 * either a configuration or the reason there is none.
 *
 * The result is struct conf as plain bytes, arrays after it: parent and
 * child are the same program (the parent runs /proc/self/exe), so the
 * layout is the same, and the frame says the sizes it was made with.
 */
#ifndef CONFREAD_H
#define CONFREAD_H

#include <stddef.h>

struct conf;
struct confread;
struct loop;

/* The option that makes rstreamd a reader: --read-conf FD -c FILE. */
#define CONFREAD_OPTION	"read-conf"
/* The descriptor the reader writes its result to. */
#define CONFREAD_FD	3

/*
 * What a read ends with: ${c} (the caller's to free) and ${err} "", or
 * ${c} NULL and the reason in ${err}.
 */
typedef void confread_cb(void *arg, struct conf *c, const char *err);

/**
 * confread_start(lp, exe, path, timeout_ms, cb, arg, err, errlen):
 * Run ${exe} --read-conf 3 -c ${path} with the environment minus systemd's
 * notify, watchdog and socket-activation variables, and collect its
 * answer in turns of ${lp} (shared ones: nothing here needs the whole
 * daemon).  ${cb}(${arg}, ...) is called once, from a turn of ${lp}, as
 * the last thing the read does, so it may free the read; a reader still
 * running after ${timeout_ms} is killed, and the read ends with that.
 * Returns the read, or NULL with the reason in ${err} (then ${cb} is never
 * called).
 */
struct confread *confread_start(struct loop *lp, const char *exe,
    const char *path, unsigned timeout_ms, confread_cb *cb, void *arg,
    char *err, size_t errlen);

/**
 * confread_free(r):
 * Forget ${r}: a reader still running is killed and reaped, and ${cb} is
 * not called.  NULL is a no-op.
 */
void confread_free(struct confread *r);

/**
 * confread_send(fd, c, err):
 * The reader's side: write configuration ${c}, or when ${c} is NULL the
 * error ${err}, to ${fd} as confread_start's caller expects it.  Returns
 * 0, or -1 (errno set) if it could not be written.
 */
int confread_send(int fd, const struct conf *c, const char *err);

#endif /* !CONFREAD_H */
