/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * tunnel: policy.  The configured tunnels at run time: their local
 * listeners (bound, or passed by systemd), stream admission for both sides
 * (one rule: a tunnel that takes new streams, the link's key for keyed
 * tunnels, room under max_streams), clients waiting for their link,
 * counters, applying a new configuration without dropping open streams,
 * and draining before a stop.  It owns each client tunnel's link and hears
 * from links through struct link_ops.
 */
#ifndef TUNNEL_H
#define TUNNEL_H

#include <stddef.h>
#include <stdint.h>

struct conf;
struct rsd;
struct tun;

/**
 * tunnel_activation(d, err, errlen):
 * Take the listening sockets systemd passed (socket activation); each is
 * used by the client tunnel its FileDescriptorName= names.  Returns the
 * number taken, or -1 with the reason in ${err}.
 */
int tunnel_activation(struct rsd *d, char *err, size_t errlen);

/**
 * tunnel_start(d, err, errlen):
 * Bind every local listener, start every client tunnel's link, and listen
 * for RDMA links, as d->conf says.  Returns 0, or -1 with the reason in
 * ${err}.
 */
int tunnel_start(struct rsd *d, char *err, size_t errlen);

/**
 * tunnel_reload(d, nc, err, errlen):
 * Switch to configuration ${nc} (already loaded and checked: conf_load
 * looked its users and groups up): add, change and remove tunnels; open
 * streams carry on, but for those of links whose peer's identity ${nc}
 * no longer trusts, which end (link_revoke), and those of target tunnels
 * whose peers no longer name their peer, which are reset while their
 * links stay up; both counted (links_revoked, streams_revoked).
 * Everything that can fail is done first, and undone if anything fails.
 * On success ${nc} is the daemon's and 0 is returned; on error nothing
 * changed, ${nc} is still the caller's, and -1 is returned with the
 * reason in ${err}.
 */
int tunnel_reload(struct rsd *d, struct conf *nc, char *err, size_t errlen);

/**
 * tunnel_drain(d):
 * Stop taking new streams (close every listener, tell every peer GOAWAY,
 * close the clients still waiting for a link) and let the open ones
 * finish.
 */
void tunnel_drain(struct rsd *d);

/**
 * tunnel_streams(d):
 * How many streams are open (waiting clients included).
 */
uint32_t tunnel_streams(const struct rsd *d);

/**
 * tunnel_stop(d):
 * Close every listener and link (their streams are reset) and free every
 * tunnel.
 */
void tunnel_stop(struct rsd *d);

/**
 * tunnel_find(d, name):
 * The configured (not draining) tunnel called ${name}, or NULL.
 */
struct tun *tunnel_find(struct rsd *d, const char *name);

/**
 * tunnel_find_target(d, name):
 * The target tunnel called ${name} that takes new streams, or NULL.
 */
struct tun *tunnel_find_target(struct rsd *d, const char *name);

/**
 * tunnel_status(d, buf, len):
 * One line on the daemon as it is now, for systemd's STATUS= and
 * rstreamctl status: "1 tunnel, 3 streams, 1 of 1 link up", then what
 * RDMA lacks ("; no RDMA yet: ...", see cm_rdma) and a failed reload's
 * reason, each after a "; "; or "stopping: waiting for N streams to
 * finish".
 */
void tunnel_status(const struct rsd *d, char *buf, size_t len);

/**
 * tunnel_warn(d):
 * Log what conf_warn finds in d->conf; that some tunnel's links are not
 * authenticated (no key_file, no identity) only once in the daemon's
 * life.
 */
void tunnel_warn(struct rsd *d);

#endif /* !TUNNEL_H */
