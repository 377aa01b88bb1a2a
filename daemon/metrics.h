/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * metrics: the daemon's counters as Prometheus text (rstreamctl metrics):
 * the daemon's, each tunnel's and each link's, from tables of what each
 * metric reads, and the RDMA ports' own counters.
 */
#ifndef METRICS_H
#define METRICS_H

struct render_buf;
struct rsd;
struct tun;

/**
 * metrics_render(d, o):
 * Append every metric of daemon ${d} but the ports' to ${o}.  In an
 * exclusive turn.
 */
void metrics_render(struct rsd *d, struct render_buf *o);

/**
 * metrics_ports(d, o):
 * Append the counters of every RDMA port an up link of ${d} uses to
 * ${o}: sysfs reads, for a shared turn (see ctlcmd.h).  Returns 0.
 */
int metrics_ports(struct rsd *d, struct render_buf *o);

/**
 * metrics_counted_elsewhere(d, t):
 * Whether tunnel ${t} is a draining one whose name is configured again:
 * it shares its counters with the new one, which shows them.
 */
int metrics_counted_elsewhere(struct rsd *d, const struct tun *t);

#endif /* !METRICS_H */
