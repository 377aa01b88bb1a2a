/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ctlcmd: the control socket's commands, in one list: the daemon answers
 * them (ctl.c), rstreamctl names and explains them (its help) from it.
 * X(name, who may use it, its first step, what it shows or does).
 *
 * The daemon answers a command in a turn that stops every worker, as it
 * reads what they change; anything slow a command needs comes first, in
 * a turn of its own that stops none: its first step.  none: nothing;
 * shared: the whole answer, from what any turn may read (metrics.h), so
 * the workers never stop for it; reload: read and check the
 * configuration file and look its names up (the answer comes once it is
 * applied).
 */
#ifndef CTLCMD_H
#define CTLCMD_H

/*
 * Who may use a command: whoever can connect to the socket, or only root
 * and the daemon's own user, as the kernel saw the client connect
 * (SO_PEERCRED).
 */
enum ctl_who { CTL_ANYONE, CTL_ADMIN };

/*
 * A refusal that ends "try again in N s" (N in seconds, such as 0.8) may
 * be asked again after that long; rstreamctl waits and asks again.
 */
#define CTL_RETRY_IN	"try again in "

/*
 * A request asks for the columns its tables show as text (rstreamctl's
 * -o) by ending " cols=NAMES"; the names run to the end of the line.
 */
#define CTL_COLS	"cols="

/* The longest request line, its newline included. */
#define CTL_REQ_MAX	256

#define CTL_COMMANDS(X)							\
	X(status, CTL_ANYONE, none,					\
	    "the daemon, its tunnels and links (the default)")		\
	X(tunnels, CTL_ANYONE, none,					\
	    "every tunnel: address, peer or target, streams, link")	\
	X(streams, CTL_ANYONE, none,					\
	    "every open stream: addresses, state, bytes, waits")	\
	X(links, CTL_ANYONE, none,					\
	    "every RDMA link: state, streams, bytes, send queue, waits") \
	X(stats, CTL_ANYONE, none,					\
	    "per-tunnel counters and per-link counters")		\
	X(reload, CTL_ADMIN, reload,					\
	    "re-read the configuration (like SIGHUP) and report")	\
	X(metrics, CTL_ANYONE, shared,					\
	    "counters in the Prometheus text format")			\
	X(version, CTL_ANYONE, none, "the daemon's version")

#endif /* !CTLCMD_H */
