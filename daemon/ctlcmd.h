/*
 * ctlcmd: the control socket's commands, in one list: the daemon answers
 * them (ctl.c), rstreamctl names and explains them (its help) from it.
 * X(name, who may use it, what it shows or does).
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

#define CTL_COMMANDS(X)							\
	X(status, CTL_ANYONE,						\
	    "the daemon, its tunnels and links (the default)")		\
	X(tunnels, CTL_ANYONE,						\
	    "every tunnel: address, peer or target, streams, link")	\
	X(streams, CTL_ANYONE, "every open stream: addresses, state, bytes") \
	X(links, CTL_ANYONE,						\
	    "every RDMA link: state, streams, bytes, credit stalls")	\
	X(stats, CTL_ANYONE, "per-tunnel counters and per-link counters") \
	X(reload, CTL_ADMIN,						\
	    "re-read the configuration (like SIGHUP) and report")	\
	X(metrics, CTL_ANYONE, "counters in the Prometheus text format") \
	X(version, CTL_ANYONE, "the daemon's version")

#endif /* !CTLCMD_H */
