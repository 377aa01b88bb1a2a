/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
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
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>

#include <netdb.h>

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "cm.h"
#include "conf.h"
#include "confread.h"
#include "ctl.h"
#include "hca.h"
#include "ident.h"
#include "link.h"
#include "log.h"
#include "loop.h"
#include "notify.h"
#include "reload.h"
#include "resolve.h"
#include "rsd.h"
#include "scrape.h"
#include "secmem.h"
#include "tunnel.h"
#include "verbs.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: rstreamd [-f] [-n] [-v] [-c FILE]\n"
	    "       rstreamd --genkey FILE\n"
	    "\n"
	    "Tunnel local TCP and Unix-socket streams over RDMA to a peer rstreamd.\n"
	    "\n"
	    "  -c, --config FILE  configuration file (default %s)\n"
	    "  -f, --foreground   stay in the foreground (it always does)\n"
	    "  -n, --check        check the configuration and exit\n"
	    "  -G, --genkey FILE  write a new identity (private key) to FILE,\n"
	    "                     which must not exist, print its public key;\n"
	    "                     FILE - prints the private key alone\n"
	    "  -v, --verbose      more log output (repeat for more)\n"
	    "  -h, --help         show this help and exit\n"
	    "  -V, --version      show the version and exit\n",
	    RSTREAMD_CONF);
}

struct sigctx {
	struct rsd *d;
	int fd;
	struct loop_timer drain;
	struct loop_job drained;	/* stop once no stream is left */
	/* Signals that need the whole daemon, for the next exclusive turn
	 * (a SIGHUP's reload reads its file first, in the turn it came in). */
	struct loop_job act;
	int term, intr, usr1;
};

/* Set (then every worker woken) when the workers are to end. */
static int workers_end;

static void *
worker_main(void *arg)
{
	struct loop *lp = arg;

	loop_bind(lp);
	while (!__atomic_load_n(&workers_end, __ATOMIC_ACQUIRE)) {
		if (loop_run_once(lp, 1000) != 0) {
			/* Its links cannot run on: no half-working daemon. */
			log_err("a worker's event loop failed: %m");
			abort();
		}
	}
	return (NULL);
}

/*
 * The loops links run on (see loop.h): with more than one worker, each
 * has its own thread, started by workers_run once everything is set up.
 */
static int
workers_new(struct rsd *d, unsigned n)
{
	size_t i;

	if (n < 2)
		return (0);
	if (loop_world_new(d->lp) != 0 ||
	    (d->workers = calloc(n, sizeof(*d->workers))) == NULL)
		return (-1);
	for (i = 0; i < n; i++) {
		if ((d->workers[i] = loop_new()) == NULL ||
		    loop_world_join(d->workers[i], d->lp) != 0) {
			loop_free(d->workers[i]);
			return (-1);
		}
		d->nworkers++;
	}
	return (0);
}

static int
workers_run(struct rsd *d, pthread_t *th)
{
	char name[16];
	size_t i;
	int e;

	for (i = 0; i < d->nworkers; i++) {
		if ((e = pthread_create(&th[i], NULL, worker_main,
		    d->workers[i])) != 0) {
			errno = e;
			return ((int)i);
		}
		/* For top -H and /proc: which thread is which worker. */
		snprintf(name, sizeof(name), "rstreamd-w%u",
		    (unsigned)(i + 1) % 1000);
		(void)pthread_setname_np(th[i], name);
	}
	return ((int)i);
}

static void
workers_join(struct rsd *d, pthread_t *th, size_t started)
{
	size_t i;

	__atomic_store_n(&workers_end, 1, __ATOMIC_RELEASE);
	for (i = 0; i < started; i++)
		loop_wake(d->workers[i]);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}

static void
on_drained(void *arg)
{
	struct sigctx *sc = arg;

	if (sc->d->draining && tunnel_streams(sc->d) == 0) {
		log_notice("every stream has finished");
		sc->d->stop = 1;
	}
}

static void
on_drain_over(void *arg)
{
	struct sigctx *sc = arg;
	uint32_t n = tunnel_streams(sc->d);

	log_notice("drain time over; closing the %u stream%s still open", n,
	    n == 1 ? "" : "s");
	sc->d->stop = 1;
}

/* SIGTERM: take no new streams, let open ones finish, then stop. */
static void
start_drain(struct sigctx *sc, const char *sig)
{
	struct rsd *d = sc->d;
	uint32_t n = tunnel_streams(d);

	if (d->draining) {
		log_notice("received %s again; stopping now", sig);
		d->stop = 1;
		return;
	}
	log_notice("received %s; taking no new streams, waiting up to %u s "
	    "for %u open stream%s", sig, (unsigned)d->conf->drain_time, n,
	    n == 1 ? "" : "s");
	tunnel_drain(d);
	notify_draining(d->conf->drain_time);
	loop_timer_arm(&sc->drain, (uint64_t)d->conf->drain_time * 1000);
	loop_job_defer(&sc->drained);
}

static void
status_line(void *arg, char *buf, size_t len)
{

	tunnel_status(arg, buf, len);
}

/* What the signals that came need of the whole daemon. */
static void
on_act(void *arg)
{
	struct sigctx *sc = arg;

	for (; sc->term > 0; sc->term--)
		start_drain(sc, "SIGTERM");
	for (; sc->intr > 0; sc->intr--)
		start_drain(sc, "SIGINT");
	if (sc->usr1)
		log_reopen();
	sc->usr1 = 0;
}

/* Anyone may signal us as often as they like: this turn stops no worker. */
static void
on_signal(void *arg, uint32_t events)
{
	struct sigctx *sc = arg;
	struct signalfd_siginfo si;

	(void)events;
	while (read(sc->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
			sc->term++;
			break;
		case SIGINT:
			sc->intr++;
			break;
		case SIGHUP:
			log_notice("received SIGHUP");
			(void)reload_start(sc->d, NULL, NULL);
			break;
		case SIGUSR1:
			sc->usr1 = 1;
			break;
		default:
			break;
		}
	}
	if (sc->term || sc->intr || sc->usr1)
		loop_job_defer(&sc->act);
}

/*
 * Every stream takes a descriptor on each side (client or target), and the
 * soft limit many systems start services with is 1024, kept low only for
 * programs that still use select(): take the hard limit (the unit sets
 * LimitNOFILE).
 */
static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		log_warn("cannot raise the descriptor limit to %llu: %s",
		    (unsigned long long)rl.rlim_max, strerror(errno));
}

/*
 * --genkey: a new identity file and its public key on stdout; or, for
 * "-", the private key alone on stdout (as rstreamctl keygen -).
 */
static int
genkey(const char *path)
{
	uint8_t pub[IDENT_KEY_LEN];
	char b64[IDENT_B64_LEN], err[1200];

	if (strcmp(path, "-") == 0) {
		if (ident_write_fd(STDOUT_FILENO, "standard output", err,
		    sizeof(err)) != 0) {
			fprintf(stderr, "rstreamd: %s\n", err);
			return (1);
		}
		return (0);
	}
	if (ident_write_new(path, pub, err, sizeof(err)) != 0) {
		fprintf(stderr, "rstreamd: %s\n", err);
		return (1);
	}
	ident_b64(pub, b64);
	printf("%s\n", b64);
	return (0);
}

/*
 * --read-conf FD: read ${path} as a reload does, for the daemon that
 * started this process (confread.h), and answer on ${fd}.  Exit 0 once
 * the answer is out, whatever it says.
 */
static int
read_conf(const char *fdtext, const char *path)
{
	struct conf *c = NULL;
	char err[1100], *end;
	long fd;
	int rc;

	fd = strtol(fdtext, &end, 10);
	if (*fdtext == '\0' || *end != '\0' || fd < 0 || fd > 1024) {
		fprintf(stderr, "rstreamd: --%s: bad descriptor '%s'\n",
		    CONFREAD_OPTION, fdtext);
		return (1);
	}
	/* It reads the keys (a reload that adds the first one included);
	 * conf_load looks the users and groups up too. */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (conf_load(path, 0, &c, err, sizeof(err)) != 0)
		c = NULL;
	rc = confread_send((int)fd, c, err);
	conf_free(c);
	return (rc != 0 ? 1 : 0);
}

/*
 * The command line into ${path}, ${check} and ${d}'s verbosity: -1 to go
 * on, else the exit status (--help, --version, --genkey, --read-conf, a
 * mistake).
 */
static int
options(int argc, char **argv, const char **path, int *check, struct rsd *d)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "check", no_argument, NULL, 'n' },
		{ "genkey", required_argument, NULL, 'G' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ CONFREAD_OPTION, required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 }
	};
	const char *reader = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "c:fnvhVG:", longopts, NULL)) !=
	    -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return (0);
		case 'V':
			printf("rstreamd %s\n", PACKAGE_VERSION);
			return (0);
		case 'c':
			*path = optarg;
			break;
		case 'f':
			break;
		case 'n':
			*check = 1;
			break;
		case 'G':
			return (genkey(optarg));
		case 'R':
			reader = optarg;
			break;
		case 'v':
			d->verbose++;
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
	if (reader != NULL)
		return (read_conf(reader, *path));
	return (-1);
}

/* -n: what the daemon would log as a warning, on stderr. */
static void
say_warning(void *arg, const char *msg)
{

	(void)arg;
	fprintf(stderr, "rstreamd: warning: %s\n", msg);
}

/*
 * -n: the host names of ${c} looked up, as nginx -t and haproxy -c do.
 * The daemon binds listen when it starts and stops if it cannot, so a
 * listen name that does not resolve is an error; peers and targets it
 * looks up again for each connection attempt and each stream, so a name
 * that does not resolve (yet) is a warning.  (source is an address,
 * never a name.)  Returns the number of errors.
 */
static int
check_names(const struct conf *c)
{
	const struct conf_tunnel *t;
	const struct conf_addr *a;
	int errors = 0, targets = 0;
	char why[256];
	size_t i;
	unsigned j;

	for (i = 0; i < c->ntunnels; i++)
		targets += c->tunnels[i].has_target;
	/* Without a target tunnel nothing listens. */
	for (i = 0; targets > 0 && i < c->nlisten; i++) {
		a = &c->listen[i].addr;
		if (resolve_now(a->host, a->port, 1, why, sizeof(why)) == 0)
			continue;
		fprintf(stderr, "rstreamd: %s:%d: listen '%s' does not "
		    "resolve: %s\n", c->file, a->line, a->text, why);
		errors++;
	}
	for (i = 0; i < c->ntunnels; i++) {
		t = &c->tunnels[i];
		for (j = 0; t->has_accept && j < t->npeers; j++) {
			a = &t->peers[j];
			if (resolve_now(a->host, a->port, 0, why,
			    sizeof(why)) != 0)
				fprintf(stderr, "rstreamd: warning: %s:%d: "
				    "tunnel %s: peer '%s' does not resolve: "
				    "%s (the daemon tries again at each "
				    "connection attempt)\n", c->file, a->line,
				    t->name, a->text, why);
		}
		a = &t->target;
		if (t->has_target && a->kind == CONF_ADDR_TCP &&
		    resolve_now(a->host, a->port, 0, why, sizeof(why)) != 0)
			fprintf(stderr, "rstreamd: warning: %s:%d: tunnel %s: "
			    "target '%s' does not resolve: %s (the daemon "
			    "tries again for each stream)\n", c->file,
			    a->line, t->name, a->text, why);
	}
	return (errors);
}

/*
 * -n: what client tunnels set that the host's RDMA devices ignore (iWARP
 * has no service levels, Soft-iWARP gives no TOS; see hca_qos).  A
 * link's device is the one its addresses resolve to as it connects,
 * which only the daemon sees (and says, then): here, only what holds on
 * the device of the source address, or else on every device the host
 * has.  Mixed devices, or none, say nothing.
 */
static void
check_qos(const struct conf *c)
{
	struct addrinfo hints, *ai = NULL;
	char names[200], on[sizeof(names) + 300];
	unsigned qos;
	size_t i;
	int n = -1;

	for (i = 0; i < c->ntunnels; i++)
		if (c->tunnels[i].has_accept && (c->tunnels[i].sz.traffic_class
		    != CONF_UNSET || c->tunnels[i].sz.service_level !=
		    CONF_UNSET))
			break;
	if (i == c->ntunnels)
		return;
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST;
	if (c->has_source && getaddrinfo(c->source.host, NULL, &hints,
	    &ai) == 0 && (n = verbs_host_qos(ai->ai_addr, names,
	    sizeof(names), &qos)) > 0)
		snprintf(on, sizeof(on), "%s, the device of source %s,", names,
		    c->source.host);
	if (ai != NULL)
		freeaddrinfo(ai);
	if (n < 0 && (n = verbs_host_qos(NULL, names, sizeof(names),
	    &qos)) > 0)
		snprintf(on, sizeof(on), n == 1 ? "the only RDMA device here, "
		    "%s," : "every RDMA device here (%s)", names);
	for (i = 0; n > 0 && i < c->ntunnels; i++)
		(void)conf_qos_warn(&c->tunnels[i], !(qos & HCA_QOS_TOS),
		    !(qos & HCA_QOS_SL), on, say_warning, NULL);
}

/*
 * Load ${path} into ${d} (its client tunnels counted in ${*nclient}), and
 * with ${check} say whether it is valid; then logging and keys.  -1 to
 * go on, else the exit status: EX_CONFIG when the configuration is at
 * fault, so that a supervisor does not start it again as it is.
 */
static int
load(const char *path, int check, struct rsd *d, size_t *nclient)
{
	char err[1024];
	size_t i;

	if (conf_load(path, 0, &d->conf, err, sizeof(err)) != 0) {
		fprintf(stderr, "rstreamd: %s\n", err);
		return (EX_CONFIG);
	}
	for (i = 0; i < d->conf->ntunnels; i++)
		*nclient += d->conf->tunnels[i].has_accept;
	if (check) {
		/* The warnings the daemon would log as it starts. */
		(void)conf_warn(d->conf, 1, say_warning, NULL);
		check_qos(d->conf);
		if (check_names(d->conf) > 0) {
			conf_free(d->conf);
			return (EX_CONFIG);
		}
		printf("rstreamd: %s: configuration is valid (%zu tunnels: "
		    "%zu client, %zu target)\n", path, d->conf->ntunnels,
		    *nclient, d->conf->ntunnels - *nclient);
		conf_free(d->conf);
		return (0);
	}
	log_init(reload_log_level(d));
	reload_no_dumps(d->conf);
	raise_nofile();
	if (auth_init() != 0) {
		fprintf(stderr, "rstreamd: cannot initialise the cryptography "
		    "(libsodium, and the AEADs that seal links)\n");
		conf_free(d->conf);
		return (1);
	}
	/* A log_file that cannot be opened does not open by trying again. */
	if (d->conf->log_file[0] != '\0' &&
	    log_file_open(d->conf->log_file, err, sizeof(err)) != 0) {
		fprintf(stderr, "rstreamd: %s\n", err);
		conf_free(d->conf);
		return (EX_CONFIG);
	}
	return (-1);
}

/*
 * When the daemon started, by both clocks: uptime is measured on the
 * monotonic one, the start time is shown on the wall clock.  Read here,
 * not from the loop's clock, which no turn has read yet.
 */
static void
start_time(struct rsd *d)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	d->started_ms = (uint64_t)ts.tv_sec * 1000 +
	    (uint64_t)ts.tv_nsec / 1000000;
	clock_gettime(CLOCK_REALTIME, &ts);
	d->started_unix_ms = (uint64_t)ts.tv_sec * 1000 +
	    (uint64_t)ts.tv_nsec / 1000000;
}

/* The daemon's loop, with the signals arriving through it (${*sw}). */
static int
loop_setup(struct rsd *d, struct sigctx *sc, struct loop_fd **sw)
{
	sigset_t mask;

	/* Signals arrive through the loop, never in the middle of work. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	memset(sc, 0, sizeof(*sc));
	sc->fd = -1;
	sc->d = d;
	if ((sc->fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0 ||
	    (d->lp = loop_new()) == NULL ||
	    (*sw = loop_fd_add(d->lp, sc->fd, EPOLLIN, on_signal, sc)) ==
	    NULL) {
		log_err("cannot set up the event loop: %m");
		return (-1);
	}
	loop_fd_share(*sw, 1);
	loop_timer_init(&sc->drain, d->lp, on_drain_over, sc);
	loop_job_init(&sc->drained, d->lp, on_drained, sc);
	loop_job_init(&sc->act, d->lp, on_act, sc);
	d->drained = &sc->drained;
	return (0);
}

/* Workers' loops (their threads in ${*th}), tunnels, the control socket. */
static int
start(struct rsd *d, pthread_t **th, size_t nclient)
{
	char err[1024], wait[48] = "";
	size_t n;

	if (workers_new(d, reload_workers(d->conf)) != 0 ||
	    (*th = calloc(d->nworkers + 1, sizeof(**th))) == NULL) {
		log_err("cannot set up the workers' event loops: %m");
		return (-1);
	}
	reload_busy_poll(d);
	if (tunnel_activation(d, err, sizeof(err)) < 0 ||
	    tunnel_start(d, err, sizeof(err)) != 0) {
		log_err("%s", err);
		return (-1);
	}
	if (d->conf->control[0] != '\0' &&
	    (d->ctl = ctl_new(d, err, sizeof(err))) == NULL) {
		log_err("%s", err);
		return (-1);
	}
	if (d->ctl != NULL)
		snprintf(d->control_path, sizeof(d->control_path), "%s",
		    ctl_path(d->ctl));
	if (d->conf->metrics_listen.kind != 0) {
		if ((d->scrape = scrape_new(d, err, sizeof(err))) == NULL) {
			log_err("%s", err);
			return (-1);
		}
		log_notice("metrics on http://%s/metrics (no authentication: "
		    "whoever reaches it reads them)",
		    scrape_bound(d->scrape) + strlen("tcp://"));
	}
	/* Ready without RDMA too: what is missing was said, and comes. */
	n = cm_listening(d);
	if (n < d->nlsn)
		snprintf(wait, sizeof(wait), " (%zu waiting for RDMA)",
		    d->nlsn - n);
	log_notice("ready: %zu tunnels (%zu client, %zu target), %zu RDMA "
	    "listeners%s, control socket %s, %zu worker%s",
	    d->conf->ntunnels, nclient, d->conf->ntunnels - nclient, n, wait,
	    d->ctl != NULL ? ctl_path(d->ctl) : "off", link_workers(d),
	    link_workers(d) == 1 ? "" : "s");
	tunnel_warn(d);
	notify_ready(d->lp, status_line, d);
	return (0);
}

/* Undo what loop_setup and start did, however far they got. */
static void
stop(struct rsd *d, struct sigctx *sc, struct loop_fd *sw, pthread_t *th,
    int nth)
{
	size_t i;

	if (th != NULL)
		workers_join(d, th, (size_t)nth);
	free(th);
	loop_job_cancel(&sc->drained);
	loop_job_cancel(&sc->act);
	loop_timer_stop(&sc->drain);
	reload_stop(d);
	scrape_free(d->scrape);
	ctl_free(d->ctl);
	tunnel_stop(d);
	loop_fd_del(sw);
	for (i = 0; i < d->nworkers; i++)
		loop_free(d->workers[i]);
	free(d->workers);
	loop_free(d->lp);
	if (sc->fd >= 0)
		close(sc->fd);
	conf_free(d->conf);
}

int
main(int argc, char **argv)
{
	const char *path = RSTREAMD_CONF;
	struct rsd d = { 0 };
	struct sigctx sc;
	struct loop_fd *sw = NULL;
	pthread_t *th = NULL;
	int check = 0, rc = 1, nth = 0;
	size_t nclient = 0;

	start_time(&d);
	/* Before anything reads a key: the configuration lives in secmem. */
	if (secmem_init() != 0) {
		fprintf(stderr, "rstreamd: cannot initialise libsodium, whose "
		    "guarded memory holds the keys\n");
		return (1);
	}
	if ((rc = options(argc, argv, &path, &check, &d)) >= 0 ||
	    (rc = load(path, check, &d, &nclient)) >= 0)
		return (rc);
	rc = 1;
	/* Each failed peer is news, up to a flood. */
	d.auth_log.allow = 5;

	if (loop_setup(&d, &sc, &sw) != 0 || start(&d, &th, nclient) != 0)
		goto out;
	/* From here on, this thread touches shared state only in its turns. */
	if ((nth = workers_run(&d, th)) < (int)d.nworkers) {
		log_err("cannot start a worker thread: %m");
		goto out;
	}
	while (!d.stop) {
		if (loop_run_once(d.lp, 1000) != 0) {
			log_err("event loop failed: %m");
			goto out;
		}
	}
	rc = 0;
	notify_stopping();
out:
	stop(&d, &sc, sw, th, nth);
	if (rc == 0)
		log_notice("stopped");
	return (rc);
}
