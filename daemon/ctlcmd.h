/*
 * ctlcmd: the control socket's commands, in one list: the daemon answers
 * them (ctl.c), rstreamctl names and explains them (its help) from it.
 * X(name, what it shows or does).
 */
#ifndef CTLCMD_H
#define CTLCMD_H

#define CTL_COMMANDS(X)							\
	X(status, "the daemon, its tunnels and links (the default)")	\
	X(tunnels, "every tunnel: address, peer or target, streams, link") \
	X(streams, "every open stream: addresses, state, bytes")	\
	X(links, "every RDMA link: state, streams, bytes, credit stalls") \
	X(stats, "per-tunnel counters and per-link counters")		\
	X(reload, "re-read the configuration (like SIGHUP) and report")	\
	X(metrics, "counters in the Prometheus text format")		\
	X(version, "the daemon's version")

#endif /* !CTLCMD_H */
