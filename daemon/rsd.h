/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * rsd: the running daemon's state: plain structures only, no functions,
 * so any room may include it without depending on another.  Each room's
 * functions own their part: cm.c the CM channel and the RDMA listeners,
 * link.c the links (connect.c and resume.c their parts); tunnel.c the
 * tunnels and the local listeners; bridge.c a tunnel's list of streams;
 * reload.c the life-cycle fields.
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
#include "prio.h"
#include "sock.h"
#include "verbs.h"

struct link_ops;
struct loop;
struct loop_fd;
struct cm_wait;
struct verbs_cm;
struct verbs_listener;
struct bridge;
struct dlink;
struct ctl;
struct confread;
struct scrape;
struct rname;
struct resolver;

/*
 * Every field below carries its guard, one of the labels of Threads in
 * loop.h: owner, excl or atomic.  The daemon's loop (lp) owns what has
 * an owner here.
 */

/*
 * Per-tunnel counters (bytes are stream payload).  Shared by the tunnels
 * of one name across reloads, so a changed tunnel keeps counting.  Streams
 * of one tunnel run on several workers: every counter counts with ST_ADD,
 * even in exclusive turns, so no writer needs to know which turn it is in.
 */
#define ST_ADD(st, field, n)						\
	((void)__atomic_fetch_add(&(st)->field, (n), __ATOMIC_RELAXED))

/*
 * Why a stream was refused, one reason each (the metrics' reason label,
 * metrics.c names them): a stream limit (max_streams, the link's); ring
 * memory (a max_memory); the link did not prove what the tunnel asks
 * (its key, a trusted identity, sealing); the link's protocol version
 * is below min_version; the client's address is missing or untrusted
 * (proxy_protocol); the target could not be reached; the peer refused
 * it (its own metrics say why); anything else (out of memory, a socket
 * that cannot be watched).
 */
enum tun_refusal { TR_LIMIT, TR_MEMORY, TR_DENIED, TR_VERSION, TR_ORIGIN,
    TR_TARGET, TR_PEER, TR_INTERNAL, TR_N };

/* Count a refusal of reason ${why}: the total, its reason, and its kind. */
#define ST_REFUSE(st, why) do {						\
	ST_ADD(st, refused, 1);						\
	ST_ADD(st, refusals[(why)], 1);					\
	if ((why) == TR_LIMIT || (why) == TR_MEMORY)			\
		ST_ADD(st, limited, 1);					\
	if ((why) == TR_DENIED)						\
		ST_ADD(st, denied, 1);					\
} while (0)

struct tun_stats {
	uint64_t bytes_in;	/* atomic: from local sockets into the tunnel */
	uint64_t bytes_out;	/* atomic: from the tunnel out to local
				   sockets */
	uint64_t opened, refused, failed;	/* atomic */
	uint64_t budget_stops_in;	/* atomic: turns in which a stream
				   stopped reading its socket at the turn's
				   budget (TURN_BYTES, bridge.c), the socket
				   not empty and its send ring not full */
	uint64_t budget_stops_out;	/* atomic: turns in which a stream
				   stopped writing its socket at the
				   budget, its receive ring not empty */
	uint64_t limited;	/* atomic: refusals by a limit (included in
				   refused) */
	uint64_t denied;	/* atomic: refusals: link without this
				   tunnel's key */
	uint64_t refusals[TR_N];	/* atomic: refused, by reason
					   (ST_REFUSE counts all three) */
	uint64_t link_failures;	/* atomic: a client tunnel's link's failed
				   attempts, and the times it went down */
	uint64_t link_reconnects;	/* atomic: times it came up again
					   after failing */
	uint64_t completion_errors[VERBS_WC_N];	/* atomic: times it ended
					   on an error completion, by its
					   status (verbs_link_wc_error) */
	uint64_t accept_pauses;	/* atomic: out of descriptors: accepting
				   paused */
	uint64_t suspended;	/* atomic: streams suspended by a link
				   failure */
	uint64_t resumes;	/* atomic: streams resumed on a new link */
	uint64_t resume_failures;	/* atomic: suspended streams reset
					   instead */
	uint64_t ring_refusals;	/* atomic: rings refused by max_memory, the
				   daemon's or the tunnel's (streams refused,
				   and growths and shrinks) */
	uint64_t pinned;	/* atomic: bytes of ring memory its streams
				   hold (suspended ones' too): charged with
				   budget_take against its max_memory */
	uint32_t active;	/* atomic: open streams */
	int refs;		/* excl: tunnels counting here */
};

/*
 * A configured tunnel at run time.  A reload that changes or removes a
 * tunnel marks it draining: it takes no new streams, its open streams
 * carry on (on its own link, with its own sizes), and it is freed when
 * the last one ends.
 */
struct tun {
	struct rsd *d;			/* excl */
	const struct conf_tunnel *c;	/* excl: = &conf */
	struct conf_tunnel conf;	/* excl: own copy: outlives the
					   file's */
	/* Client side: the local listener and the link to the peer. */
	int lfd;			/* excl */
	int activated;			/* excl: lfd came from systemd */
	struct sock_file sf;		/* excl: a Unix listener's socket
					   file */
	struct loop_fd *lw;		/* excl: not shared: accepts are
					   exclusive */
	char bound[160];		/* excl */
	struct dlink *link;		/* excl */
	struct rname *target_rn;	/* excl: target side, TCP: its
					   addresses */
	struct tun_stats *st;		/* excl: the pointer (fields: atomic) */
	/* Per-stream troubles, each logged once per burst. */
	struct log_burst emfile_log, limit_log, refused_log;	/* atomic */
	struct log_burst target_log, down_log, memory_log;	/* atomic */
	uint32_t nstreams;		/* excl: bridges on this tun */
	TAILQ_HEAD(bridge_list, bridge) streams;	/* excl: bridge.c's */
	int draining;			/* excl */
	int link_failed;		/* excl: its link failed since it was
					   last up */
	struct loop_timer reap;		/* owner: lp's timer */
	TAILQ_ENTRY(tun) entry;		/* excl */
};

TAILQ_HEAD(tun_list, tun);

struct rsd {
	struct loop *lp;		/* excl: control, reloads, signals, the
					   CM */
	/* Workers' loops: links (and their streams) run there, in turn.
	 * None: everything runs on lp. */
	struct loop **workers;		/* excl: set at start */
	size_t nworkers;		/* excl: set at start */
	size_t next_worker;		/* excl */
	struct conf *conf;		/* excl: swapped at apply; shared
					   turns read it too (a handshake
					   step: one configuration per
					   turn, see handshake.c's step) */
	int verbose;			/* excl: -v count, added to log_level */
	struct verbs_cm *cm;		/* excl */
	struct loop_fd *cm_w;		/* excl: the links' CM channel */
	struct loop_fd *lcm_w;		/* excl: the listeners' (shared
					   turns) */
	struct loop_job take;		/* owner: connect requests let
					   through */
	struct admit_rate *rate;	/* owner: connect requests per
					   address (the gate's) */
	struct resolver *res;		/* excl: host names, off the loop */
	struct tun_list tuns;		/* excl: configured first, then
					   draining */
	struct verbs_listener **lsn;	/* excl: NULL: not listening yet */
	size_t nlsn;			/* excl */
	/*
	 * RDMA that is not there yet (cm.c's): the RDMA CM could not be
	 * opened, or listeners wait for a device with their address; they
	 * are tried again (the timer) until they work.
	 */
	struct cm_wait *lsn_wait;	/* excl: per lsn: why not listening */
	int rdma;			/* excl: enum verbs_rdma of the last
					   try; -1 before one was needed */
	char rdma_why[400];		/* excl: what it said; "": ready */
	struct loop_timer rdma_timer;	/* owner: the next look (shared) */
	struct loop_job rdma_job;	/* owner: a try, when a look says */
	int rdma_moved;			/* owner: /dev/infiniband changed */
	uint64_t rdma_next_ms;		/* excl: the next try, at the latest */
	uint64_t rdma_backoff_ms;	/* excl */
	TAILQ_HEAD(dlink_list, dlink) links;	/* excl: every link: link.c's */
	struct dlink_list connq;	/* excl: client links waiting for a
					   connect slot (LINK_CONNECT_SLOTS):
					   connect.c's */
	const struct link_ops *in_ops;	/* excl: incoming links report here */
	void *in_arg;			/* excl */
	uint64_t next_serial;		/* excl: stream numbers, for logs */
	struct prio_table prio;		/* rows excl, stamps atomic:
					   prio.h's */
	uint64_t links_rejected;	/* atomic: a limit, allow, an invalid
					   hello (the gate counts, shared) */
	uint64_t links_evicted;		/* excl: idle links closed to make
					   room */
	uint64_t auth_failures;		/* atomic: links that failed to
					   authenticate (the gate too) */
	uint64_t links_revoked;		/* excl: links a reload ended: it no
					   longer trusts their peer */
	uint64_t streams_revoked;	/* excl: streams a reload reset for
					   that, or for their tunnel's peers */
	uint64_t forged;		/* excl: links ended by a sealed
					   message that failed to open */
	uint64_t resume_refusals;	/* excl: peers' resume offers refused */
	uint64_t resume_timeouts;	/* excl: suspended streams reset: no
					   new link */
	uint64_t stepdowns;		/* excl: client links that connected
					   again in an older version a peer
					   asked for */
	uint64_t stepdowns_refused;	/* excl: such requests below
					   min_version */
	uint64_t completion_errors_in[VERBS_WC_N];	/* excl: incoming
					   links that ended on an error
					   completion, by its status */
	/* Each kind of refusal is logged once per burst of its own. */
	struct log_burst refusal_log[ADMIT_N], auth_log;	/* atomic */
	struct log_burst deny_log, version_log, origin_log;	/* atomic */
	struct log_burst reject_log, drain_log, cm_log;	/* atomic */
	struct log_burst open_log, resume_log, memory_log;	/* atomic */
	int noauth_warned;		/* excl: said once that links lack
					   keys */
	struct loop_timer sweep;	/* owner: idle_timeout, once a second
					   (shared) */
	struct loop_job sweep_job;	/* owner: its exclusive part, when
					   due */
	struct ctl *ctl;		/* excl: set at start */
	char control_path[108];		/* excl: where the control socket is */
	struct scrape *scrape;		/* excl: set at start: metrics_listen's
					   HTTP server */
	/* Sockets systemd passed (socket activation), until a tunnel takes them. */
	int *act_fds;			/* excl */
	char **act_names;		/* excl */
	size_t nact;			/* excl */
	/* Life cycle: when it started (the monotonic clock, and the wall
	 * clock's Unix time in ms), and when a reload last worked. */
	uint64_t started_ms, reloaded_ms;	/* excl */
	uint64_t started_unix_ms;	/* excl: set at start */
	unsigned reloads;		/* excl */
	char reload_error[1100];	/* owner: last failed reload, "" if it
					   worked */
	/* A reload read and checked by a child process (reload_rd, while
	 * it runs), applied in the next exclusive turn (reload.c's), and
	 * whom to tell. */
	struct confread *reload_rd;	/* owner */
	struct loop_job reload_job;	/* owner */
	struct conf *reload_nc;		/* owner */
	void (*reload_done)(void *, int, const char *);	/* owner */
	void *reload_arg;		/* owner */
	int draining;			/* excl: SIGTERM: finishing open
					   streams */
	struct loop_job *drained;	/* excl: defer when a stream ends,
					   draining */
	int stop;			/* excl */
};

#endif /* !RSD_H */
