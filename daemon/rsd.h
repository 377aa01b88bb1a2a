/*
 * rsd: the running daemon's state, shared by tunnel.c (local listeners,
 * targets, reload and drain), link.c (RDMA links to peers), bridge.c (one
 * socket <-> one stream), ctl.c (the control socket) and notify.c.  Plain
 * structures only; each file's functions own their part.
 */
#ifndef RSD_H
#define RSD_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "link.h"
#include "log.h"
#include "loop.h"
#include "sock.h"

struct loop;
struct loop_fd;
struct verbs_cm;
struct verbs_listener;
struct bridge;
struct dlink;
struct ctl;
struct rname;
struct resolver;

/*
 * Per-tunnel counters (bytes are stream payload).  Shared by the tunnels
 * of one name across reloads, so a changed tunnel keeps counting.
 */
struct tun_stats {
	uint64_t bytes_in;	/* from local sockets into the tunnel */
	uint64_t bytes_out;	/* from the tunnel out to local sockets */
	uint64_t opened, refused, failed;
	uint64_t limited;	/* refusals by a limit (included in refused) */
	uint64_t denied;	/* refusals: link without this tunnel's key */
	uint64_t accept_pauses;	/* out of descriptors: accepting paused */
	uint32_t active;
	int refs;
};

/*
 * A configured tunnel at run time.  A reload that changes or removes a
 * tunnel marks it draining: it takes no new streams, its open streams
 * carry on (on its own link, with its own sizes), and it is freed when
 * the last one ends.
 */
struct tun {
	struct rsd *d;
	const struct conf_tunnel *c;	/* = &conf */
	struct conf_tunnel conf;	/* own copy: outlives the file's */
	/* Client side: the local listener and the link to the peer. */
	int lfd;
	int activated;			/* lfd came from systemd */
	struct sock_file sf;		/* a Unix listener's socket file */
	struct loop_fd *lw;
	char bound[160];
	struct dlink *link;
	struct rname *target_rn;	/* target side, TCP: its addresses */
	struct tun_stats *st;
	/* Per-stream troubles, each logged once per burst. */
	struct log_burst emfile_log, limit_log, refused_log, target_log;
	struct log_burst down_log;
	uint32_t nstreams;		/* bridges on this tun */
	struct bridge *streams;		/* list, for rstreamctl streams */
	int draining;
	struct loop_timer reap;
	TAILQ_ENTRY(tun) entry;
};

TAILQ_HEAD(tun_list, tun);

struct rsd {
	struct loop *lp;
	struct conf *conf;
	int verbose;			/* -v count, added to log_level */
	struct verbs_cm *cm;
	struct loop_fd *cm_w;
	struct resolver *res;		/* host names, off the loop */
	struct tun_list tuns;		/* configured first, then draining */
	struct verbs_listener **lsn;
	size_t nlsn;
	struct dlink *links;		/* every link, client and incoming */
	uint64_t next_serial;		/* stream numbers, for logs */
	uint64_t links_rejected;	/* a limit, allow, an invalid hello */
	uint64_t links_evicted;		/* idle links closed to make room */
	uint64_t auth_failures;		/* links that failed to authenticate */
	/* Each kind of refusal is logged once per burst of its own. */
	struct log_burst refusal_log[LINK_REFUSAL_N], auth_log, deny_log;
	struct log_burst cm_log;
	int noauth_warned;		/* said once that links lack keys */
	struct loop_timer sweep;	/* idle_timeout, once a second */
	struct ctl *ctl;
	/* Sockets systemd passed (socket activation), until a tunnel takes them. */
	int *act_fds;
	char **act_names;
	size_t nact;
	/* Life cycle. */
	uint64_t started_ms, reloaded_ms;
	unsigned reloads;
	char reload_error[1100];	/* last failed reload, "" if it worked */
	int draining;			/* SIGTERM: finishing open streams */
	int stop;
};

/**
 * rsd_reload(d, err, errlen):
 * Re-read the configuration file and apply it (SIGHUP, rstreamctl
 * reload), telling systemd RELOADING=1 then READY=1.  Returns 0, or -1
 * with the reason in ${err}: the previous configuration keeps running,
 * and the STATUS line says so until a reload works.
 */
int rsd_reload(struct rsd *d, char *err, size_t errlen);

/**
 * rsd_warn_keys(d):
 * Warn, once in the daemon's life, if some tunnel has no key_file: its
 * links are not authenticated.
 */
void rsd_warn_keys(struct rsd *d);

/**
 * rsd_log_level(d):
 * The log level d->conf and -v ask for.
 */
int rsd_log_level(const struct rsd *d);

#endif /* !RSD_H */
