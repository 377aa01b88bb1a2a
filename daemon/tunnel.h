/*
 * tunnel: the daemon's tunnels at run time: local listeners for client
 * tunnels (each with its link to the peer), and the RDMA listeners that
 * serve target tunnels.
 */
#ifndef TUNNEL_H
#define TUNNEL_H

struct rsd;
struct tun;

/**
 * tunnel_start(d, err, errlen):
 * Bind every local listener, start every client tunnel's link, and listen
 * for RDMA links.  Returns 0, or -1 with the reason in ${err}.
 */
int tunnel_start(struct rsd *d, char *err, size_t errlen);

/**
 * tunnel_stop(d):
 * Close every listener and link (their streams are reset).
 */
void tunnel_stop(struct rsd *d);

/**
 * tunnel_find_target(d, name):
 * The target tunnel called ${name}, or NULL.
 */
struct tun *tunnel_find_target(struct rsd *d, const char *name);

#endif /* !TUNNEL_H */
