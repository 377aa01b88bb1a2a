/*
 * rsd: the running daemon's state, shared by tunnel.c (local listeners and
 * targets), link.c (RDMA links to peers) and bridge.c (one socket <-> one
 * stream).  Plain structures only; each file's functions own their part.
 */
#ifndef RSD_H
#define RSD_H

#include <stdint.h>

#include "conf.h"

struct loop;
struct loop_fd;
struct loop_timer;
struct verbs_cm;
struct verbs_listener;
struct verbs_link;
struct verbs_mem;
struct bridge;
struct dlink;

/* Per-tunnel counters (bytes are stream payload). */
struct tun_stats {
	uint64_t bytes_in;	/* from local sockets into the tunnel */
	uint64_t bytes_out;	/* from the tunnel out to local sockets */
	uint64_t opened, refused, failed;
	uint32_t active;
};

/* A configured tunnel at run time. */
struct tun {
	struct rsd *d;
	const struct conf_tunnel *c;
	/* Client side: the local listener and the link to the peer. */
	int lfd;
	struct loop_fd *lw;
	struct loop_timer *accept_pause;	/* EMFILE back-off */
	char bound[160];
	struct dlink *link;
	struct tun_stats st;
};

struct rsd {
	struct loop *lp;
	struct conf *conf;
	struct verbs_cm *cm;
	struct loop_fd *cm_w;
	struct tun *tuns;
	size_t ntuns;
	struct verbs_listener **lsn;
	size_t nlsn;
	struct dlink *links;		/* every link, client and incoming */
	uint64_t next_serial;		/* stream numbers, for logs */
	int stop;
};

#endif /* !RSD_H */
