/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ctl: the control socket rstreamctl talks to.
 *
 * A Unix stream socket (default /run/rstreamd/control.sock, mode 0660).
 * A request is one line, "COMMAND" or "COMMAND json" (and what ctlcmd.h
 * says may follow); the answer is "ok" or "error: REASON" on the first
 * line (check: or CTL_DOWN), then the body, then the daemon closes the
 * connection.  Commands: ctlcmd.h's status, tunnels, streams, links,
 * stats, check, reload (root and the daemon's user only, SO_PEERCRED),
 * metrics (Prometheus text format), version.  The text bodies are
 * tables for people; "json" asks for one JSON document.
 * Commands for root and the daemon's user only (ctlcmd.h) are refused to
 * others; a reload comes at least a second after the previous one over
 * the socket ended, or is refused saying when to try again.  Clients are
 * served in turns that stop no worker; only the answer itself is made in
 * an exclusive turn, but for metrics (see ctlcmd.h).
 */
#ifndef CTL_H
#define CTL_H

#include <stddef.h>

struct rsd;
struct ctl;

/**
 * ctl_new(d, err, errlen):
 * Listen on d->conf's control socket.  Returns the control socket, or
 * NULL with the reason in ${err}.
 */
struct ctl *ctl_new(struct rsd *d, char *err, size_t errlen);

/**
 * ctl_path(ctl):
 * The path ${ctl} listens on.
 */
const char *ctl_path(const struct ctl *ctl);

/**
 * ctl_free(ctl):
 * Close the control socket, its connections, and remove the socket file.
 * NULL is a no-op.
 */
void ctl_free(struct ctl *ctl);

#endif /* !CTL_H */
