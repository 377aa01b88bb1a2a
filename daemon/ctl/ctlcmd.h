/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ctlcmd: the control socket's commands, in one list: the daemon answers
 * them (ctl.c), rstreamctl names, explains and completes them (its help)
 * from it.  X(name, who may use it, its first step, what its answer
 * looks like, its arguments, what it shows or does in a line, and more).
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
 * What an answer looks like: tables (as text, with the columns a request
 * picks, or JSON), text or JSON, or one form only (json changes nothing).
 */
enum ctl_out { CTL_OUT_TABLE, CTL_OUT_JSON, CTL_OUT_TEXT };

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

/*
 * A command that takes tunnels' names (its arguments say [TUNNEL...])
 * gets them as " tunnels=NAME,NAME", before any " cols=".
 */
#define CTL_TUNNELS	"tunnels="

/*
 * The first line of check's answer, instead of "ok", when a link it
 * checks is not up; the body says which, as it would after "ok".
 */
#define CTL_DOWN	"down"

/* The longest request line, its newline included. */
#define CTL_REQ_MAX	256

#define CTL_COMMANDS(X)							\
	X(status, CTL_ANYONE, none, CTL_OUT_TABLE, "",			\
	    "the daemon, its tunnels and links (the default)",		\
	    "The daemon in a few lines: its version, uptime, configuration\n" \
	    "and reloads, refusals and failures, workers and ring memory;\n" \
	    "then the tunnels table.\n")					\
	X(tunnels, CTL_ANYONE, none, CTL_OUT_TABLE, "",			\
	    "every tunnel: address, peer or target, streams, link",	\
	    "One row per tunnel: its address, its peer or target, its open\n" \
	    "streams and, for a client tunnel, the state of its link and,\n" \
	    "while it is not up, why (-o wide: since when, how often).\n") \
	X(streams, CTL_ANYONE, none, CTL_OUT_TABLE, "",			\
	    "every open stream: addresses, state, bytes, waits",	\
	    "One row per open stream: its tunnel, where it came from, its\n" \
	    "state, its bytes each way, and how long it waited for the\n" \
	    "peer's credit and for the link's send queue.\n")		\
	X(links, CTL_ANYONE, none, CTL_OUT_TABLE, "",			\
	    "every RDMA link: state, streams, bytes, waits, failures",	\
	    "One row per RDMA link: its peer, tunnel, state, streams, bytes\n" \
	    "and waits; for a link that is not up, its failures in a row,\n" \
	    "since when it has not been up, and the last error.  -o wide\n" \
	    "adds where it runs on the fabric, its send queue and counters.\n") \
	X(stats, CTL_ANYONE, none, CTL_OUT_TABLE, "",			\
	    "per-tunnel counters and per-link counters",		\
	    "Counters per tunnel (bytes, streams opened, refused, failed,\n" \
	    "credit stalls), then the links table.  -o wide adds the\n"	\
	    "limited and denied streams, the turns the per-turn budget\n"	\
	    "ended each way, suspensions and resumes, ring memory and its\n" \
	    "refusals, and completion errors by kind.\n")		\
	X(check, CTL_ANYONE, none, CTL_OUT_JSON, "[TUNNEL...]",		\
	    "exit status 0 if every client tunnel's link is up",	\
	    "Whether the link of every client tunnel, or of each TUNNEL\n" \
	    "named, is up: exit status 0 if so; else 3, and a line for each\n" \
	    "link that is not up: its state, since when, its failures and\n" \
	    "the last error.  A daemon without client tunnels (one that\n" \
	    "only serves peers) has no links of its own to check: 0.  For\n" \
	    "health checks (HEALTHCHECK, probes, ExecCondition=); with -q\n" \
	    "only the exit status speaks.\n")				\
	X(reload, CTL_ADMIN, reload, CTL_OUT_JSON, "",			\
	    "re-read the configuration (like SIGHUP) and report",	\
	    "Re-read the configuration file and apply it, as SIGHUP does;\n" \
	    "the answer comes once it is applied.  One that fails leaves\n" \
	    "the running configuration in place and says why.\n")	\
	X(metrics, CTL_ANYONE, shared, CTL_OUT_TEXT, "",			\
	    "counters in the Prometheus text format",			\
	    "Every counter and gauge in the Prometheus text format.\n")	\
	X(version, CTL_ANYONE, none, CTL_OUT_JSON, "",			\
	    "the daemon's version",					\
	    "The running daemon's version (rstreamctl -V: rstreamctl's).\n")

#endif /* !CTLCMD_H */
