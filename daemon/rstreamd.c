/*
 * rstreamd: tunnel local TCP and Unix-socket byte streams across RDMA RC
 * connections to a peer rstreamd.
 *
 * The command line, start-up and the main loop.  rstreamd always runs in
 * the foreground (systemd, or a terminal, supervises it); -f is accepted
 * for symmetry with other daemons and keeps logging on stderr.
 */
#include "config.h"

#include <sys/epoll.h>
#include <sys/signalfd.h>

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "log.h"
#include "loop.h"
#include "notify.h"
#include "rsd.h"
#include "tunnel.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: rstreamd [-f] [-n] [-v] [-c FILE]\n"
	    "\n"
	    "Tunnel local TCP and Unix-socket streams over RDMA to a peer rstreamd.\n"
	    "\n"
	    "  -c, --config FILE  configuration file (default %s)\n"
	    "  -f, --foreground   stay in the foreground, log to stderr\n"
	    "  -n, --check        check the configuration and exit\n"
	    "  -v, --verbose      more log output (repeat for more)\n"
	    "  -h, --help         show this help and exit\n"
	    "  -V, --version      show the version and exit\n",
	    SYSCONFDIR "/rstreamd.conf");
}

struct sigctx {
	struct rsd *d;
	int fd;
};

static void
on_signal(void *arg, uint32_t events)
{
	struct sigctx *sc = arg;
	struct signalfd_siginfo si;

	(void)events;
	while (read(sc->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			log_notice("received %s; stopping",
			    si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
			sc->d->stop = 1;
			break;
		default:
			break;
		}
	}
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "check", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *path = SYSCONFDIR "/rstreamd.conf";
	struct rsd d;
	struct sigctx sc;
	struct loop_fd *sw = NULL;
	sigset_t mask;
	char err[1024];
	int c, check = 0, verbose = 0, level, rc = 1;
	size_t i, nclient = 0;

	while ((c = getopt_long(argc, argv, "c:fnvhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return (0);
		case 'V':
			printf("rstreamd %s\n", PACKAGE_VERSION);
			return (0);
		case 'c':
			path = optarg;
			break;
		case 'f':
			break;
		case 'n':
			check = 1;
			break;
		case 'v':
			verbose++;
			break;
		default:
			usage(stderr);
			return (1);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rstreamd: unexpected argument: %s\n",
		    argv[optind]);
		usage(stderr);
		return (1);
	}

	memset(&d, 0, sizeof(d));
	if (conf_load(path, &d.conf, err, sizeof(err)) != 0) {
		fprintf(stderr, "rstreamd: %s\n", err);
		return (1);
	}
	for (i = 0; i < d.conf->ntunnels; i++)
		nclient += d.conf->tunnels[i].has_accept;
	if (check) {
		printf("rstreamd: %s: configuration is valid (%zu tunnels: "
		    "%zu client, %zu target)\n", path, d.conf->ntunnels,
		    nclient, d.conf->ntunnels - nclient);
		conf_free(d.conf);
		return (0);
	}
	level = d.conf->log_level + verbose;
	log_init(level > LOG_DEBUG ? LOG_DEBUG : level);

	/* Signals arrive through the loop, never in the middle of work. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sc.d = &d;
	if ((sc.fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0 ||
	    (d.lp = loop_new()) == NULL ||
	    (sw = loop_fd_add(d.lp, sc.fd, EPOLLIN, on_signal, &sc)) == NULL) {
		log_err("cannot set up the event loop: %m");
		goto out;
	}
	if (tunnel_start(&d, err, sizeof(err)) != 0) {
		log_err("%s", err);
		goto out;
	}
	log_notice("ready: %zu tunnels (%zu client, %zu target), %zu RDMA "
	    "listeners", d.conf->ntunnels, nclient, d.conf->ntunnels - nclient,
	    d.nlsn);
	notify_ready(&d);
	while (!d.stop) {
		if (loop_run_once(d.lp, 1000) != 0) {
			log_err("event loop failed: %m");
			goto out;
		}
	}
	rc = 0;
	notify_stopping(&d);
out:
	tunnel_stop(&d);
	loop_fd_del(sw);
	loop_free(d.lp);
	if (sc.fd >= 0)
		close(sc.fd);
	conf_free(d.conf);
	if (rc == 0)
		log_notice("stopped");
	return (rc);
}
