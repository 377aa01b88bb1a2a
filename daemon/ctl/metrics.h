/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * metrics: the daemon's counters as Prometheus text (version 0.0.4), for
 * rstreamctl metrics and the HTTP endpoint (scrape.h): the daemon's and
 * the process's, each tunnel's and each link's, from tables of what each
 * metric reads, and the RDMA ports' own counters.
 *
 * Rendered in any turn of the daemon's loop, a shared one included, so a
 * scrape stops no worker: it reads only excl and atomic fields (Threads
 * in loop.h) and what each link's loop publishes (linkstat.h); the ports'
 * counters are sysfs reads.
 */
#ifndef METRICS_H
#define METRICS_H

struct render_buf;
struct rsd;
struct tun;

/**
 * metrics_render(d, o):
 * Append every metric of daemon ${d} to ${o}, from any turn of its loop.
 */
void metrics_render(struct rsd *d, struct render_buf *o);

/**
 * metrics_counted_elsewhere(d, t):
 * Whether tunnel ${t} is a draining one whose name is configured again:
 * it shares its counters with the new one, which shows them.
 */
int metrics_counted_elsewhere(struct rsd *d, const struct tun *t);

#endif /* !METRICS_H */
