/*
 * rsd: the running daemon's state: plain structures only, no functions,
 * so any room may include it without depending on another.  Each room's
 * functions own their part: cm.c the CM channel and the RDMA listeners,
 * link.c the links; tunnel.c the tunnels and the local listeners; bridge.c a
 * tunnel's list of streams; reload.c the life-cycle fields.
 */
#ifndef RSD_H
#define RSD_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include "admit.h"
#include "conf.h"
#include "log.h"
#include "loop.h"
#include "sock.h"

struct link_ops;
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
 * of one name across reloads, so a changed tunnel keeps counting.  Streams
 * of one tunnel may run on several workers at once: they count with
 * ST_ADD (an atomic add, no lock), and readers run in exclusive turns.
 */
#define ST_ADD(st, field, n)						\
	((void)__atomic_fetch_add(&(st)->field, (n), __ATOMIC_RELAXED))
struct tun_stats {
	uint64_t bytes_in;	/* from local sockets into the tunnel */
	uint64_t bytes_out;	/* from the tunnel out to local sockets */
	uint64_t opened, refused, failed;
	uint64_t limited;	/* refusals by a limit (included in refused) */
	uint64_t denied;	/* refusals: link without this tunnel's key */
	uint64_t accept_pauses;	/* out of descriptors: accepting paused */
	uint64_t suspended;	/* streams suspended by a link failure */
	uint64_t resumes;	/* streams resumed on a new link */
	uint64_t resume_failures;	/* suspended streams reset instead */
	uint64_t ring_refusals;	/* rings refused by max_memory, the daemon's
				   or the tunnel's (streams refused, and
				   growths and shrinks) */
	uint64_t pinned;	/* bytes of ring memory its streams hold
				   (suspended ones' too): charged with
				   budget_take against its max_memory */
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
	struct log_burst down_log, memory_log;
	uint32_t nstreams;		/* bridges on this tun */
	TAILQ_HEAD(bridge_list, bridge) streams;	/* bridge.c's */
	int draining;
	struct loop_timer reap;
	TAILQ_ENTRY(tun) entry;
};

TAILQ_HEAD(tun_list, tun);

struct rsd {
	struct loop *lp;		/* control, reloads, signals, the CM */
	/* Workers' loops: links (and their streams) run there, in turn.
	 * None: everything runs on lp. */
	struct loop **workers;
	size_t nworkers;
	size_t next_worker;
	struct conf *conf;
	int verbose;			/* -v count, added to log_level */
	struct verbs_cm *cm;
	struct loop_fd *cm_w;		/* the links' CM channel */
	struct loop_fd *lcm_w;		/* the listeners' (shared turns) */
	struct loop_job take;		/* connect requests let through */
	struct admit_rate *rate;	/* connect requests per address */
	struct resolver *res;		/* host names, off the loop */
	struct tun_list tuns;		/* configured first, then draining */
	struct verbs_listener **lsn;
	size_t nlsn;
	TAILQ_HEAD(dlink_list, dlink) links;	/* every link: link.c's */
	struct dlink_list connq;	/* client links waiting for a connect
					   slot (LINK_CONNECT_SLOTS): link.c's */
	const struct link_ops *in_ops;	/* incoming links report here */
	void *in_arg;
	uint64_t next_serial;		/* stream numbers, for logs */
	uint64_t links_rejected;	/* a limit, allow, an invalid hello */
	uint64_t links_evicted;		/* idle links closed to make room */
	uint64_t auth_failures;		/* links that failed to authenticate */
	uint64_t resume_refusals;	/* peers' resume offers refused */
	uint64_t resume_timeouts;	/* suspended streams reset: no new link */
	uint64_t stepdowns;		/* client links that connected again in
					   an older version a peer asked for */
	uint64_t stepdowns_refused;	/* such requests below min_version */
	/* Each kind of refusal is logged once per burst of its own. */
	struct log_burst refusal_log[ADMIT_N], auth_log, deny_log;
	struct log_burst version_log, origin_log, reject_log, drain_log;
	struct log_burst cm_log, open_log, resume_log, memory_log;
	int noauth_warned;		/* said once that links lack keys */
	struct loop_timer sweep;	/* idle_timeout, once a second */
	struct loop_job sweep_job;	/* its exclusive part, when due */
	struct ctl *ctl;
	char control_path[108];		/* where the control socket is */
	/* Sockets systemd passed (socket activation), until a tunnel takes them. */
	int *act_fds;
	char **act_names;
	size_t nact;
	/* Life cycle. */
	uint64_t started_ms, reloaded_ms;
	unsigned reloads;
	char reload_error[1100];	/* last failed reload, "" if it worked */
	/* A reload read and checked, applied in the next exclusive turn
	 * (reload.c's), and whom to tell. */
	struct loop_job reload_job;
	struct conf *reload_nc;
	void (*reload_done)(void *, int, const char *);
	void *reload_arg;
	int draining;			/* SIGTERM: finishing open streams */
	struct loop_job *drained;	/* defer when a stream ends, draining */
	int stop;
};

#endif /* !RSD_H */
