/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * link-sim: the daemon's link rooms (link, link_life, link_timers,
 * connect, resume, handshake, linkstat) and cm.c, with tunnel.c and
 * bridge.c above them, as they are, over simverbs.h (verbs.h on the
 * simulator's fabric): two daemons started by tunnel_start from
 * configuration files that conf_load reads, on one real loop with its
 * real clock, streams between real sockets; no RDMA device, no
 * libibverbs.  Each case starts a client daemon A and a serving daemon
 * B afresh, with handshake_timeout and resume_time at their least (1 s),
 * and waits for conditions, never for a time.  It checks what rstreamctl
 * shows of the links (link_info, linkstat) and the daemons' counters, on
 * both sides:
 *
 *   rotation   each attempt goes to the next peer entry, or the next
 *              address of a name (getaddrinfo, below): a dark one ends
 *              after handshake_timeout, a refusing one at once, the
 *              back-off between them doubles from LINK_BACKOFF_MIN_MS,
 *              and the link comes up on the one that answers; after a
 *              loss it goes on from the next, the back-off from its
 *              least again
 *   step-down  a peer that speaks an older version: one more attempt to
 *              that address in its version, up in it, counted, and not
 *              sticky; not below min_version, by a refusal or by an
 *              answer, counted and said; a step-down's own refusal does
 *              not step again; a busy peer is asked again as soon as a
 *              sibling link frees its connect slot, and that is no
 *              failure
 *   resume     suspended streams resume on a new link with every byte,
 *              and again on a third, each link under a token of its own
 *              (version 10), or are reset on both sides when
 *              resume_time passes without one; a new link lost before
 *              A read B's proof leaves A the old token and secret,
 *              which B still takes; a peer that never proves the resume
 *              secret
 *              fails the new link after handshake_timeout; one that
 *              refuses them before any proof (another daemon at the
 *              next address) leaves them suspended for the next
 *              address, within resume_time
 *   iwarp      devices without immediate data (iWARP; the fabric
 *              refuses them): both daemons' links run without
 *              (version 11), say so, and carry a sealed stream, which
 *              resumes on the next link when the path breaks; a peer
 *              of version 10 is not stepped down to
 *   lanes      a link of version 8 runs two lanes on both sides (one in
 *              version 7: step-down); a lane-1 request that matches no
 *              link waiting for one, or repeats a link's, is refused and
 *              counted; lane 1 lost alone fails the link, and its
 *              streams resume on the next; a daemon held to version 7
 *              (max_version), either one, gives links of one lane
 *   keys       identities and a psk: B holds 128 keys of target tunnels
 *              (and the global one, which some inherit) and A proves the
 *              last; a handshake costs each side 4 X25519 operations
 *              (x25519_count.h), whatever B holds; an identity B does not
 *              list is refused before any psk is tried; both ends seal
 *              with AES-256-GCM where the CPU has AES, else (a CPU
 *              without, as libsodium reports it) ChaCha20-Poly1305; a
 *              psk B does not hold is refused
 *   turns      in a world (the daemons' loop one of worker threads'),
 *              the identity handshake's X25519 operations run in shared
 *              turns, which stop no worker: all but the initiator's
 *              first, made as its RDMA CM event (exclusive) connects it,
 *              whether B refuses an identity it does not list or the
 *              link comes up, its peer named and sealed on both sides;
 *              a RESUME right behind message 3 (version 6, B's worker
 *              held until A is up and has offered its streams) waits
 *              for the exclusive turn that follows the handshake's, and
 *              the stream resumes with every byte
 *   revoke     a reload that takes a peer out of the peers (B's, A's) or
 *              out of a client tunnel's ends its live link at once on
 *              that side, says why, resets its streams there (suspended
 *              ones too), and the handshake refuses the peer's next
 *              link; no new stream opens; both count it.  One that takes
 *              a peer out of a target tunnel's peers resets that tunnel's
 *              streams of the peer (suspended ones too) and counts them;
 *              its links and its other tunnels' streams carry on, and
 *              new streams of that tunnel are refused
 *   aead       one CPU with AES and one without: both ends seal with
 *              ChaCha20-Poly1305, say so, and carry bytes both ways
 *   forged     a sealed WRITE an injector overwrote before its tag (A's,
 *              or B's) ends the link and suspends the stream, which
 *              resumes with every byte, LINK_FORGED_MAX times on one
 *              chain; the next time the side that found it resets it
 *   origin     on a daemon with an identity, a peer that proved a key
 *              but no identity is believed for the PROXY header's client
 *              address only with proxy_trust_key_holders
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "ident.h"
#include "link.h"
#include "linkstat.h"
#include "log.h"
#include "loop.h"
#include "rsd.h"
#include "seal.h"
#include "secmem.h"
#include "simverbs.h"
#include "tap.h"
#include "tunnel.h"
#include "x25519_count.h"

#define RUN_MS		20000		/* no case waits longer for anything */

/* The back-offs seen after each attempt (until() and note_wait). */
static uint32_t seen_wait[64];

/* The addresses: A's source, and B's (or nobody's) listeners. */
#define SRC		"127.0.2.1"
#define DARK		"127.0.1.1:7471"
#define NOBODY		"127.0.1.2:7471"
#define SERVE		"127.0.1.3:7471"

/* A name of the test's own, and the addresses it has, in turn. */
#define MULTI		"multi.link-sim.test"
#define NOBODY2		"127.0.1.4:7471"
#define NOBODY3		"127.0.1.5:7471"
static const char *const multi[] = { "127.0.1.2", "127.0.1.4", "127.0.1.3" };

/* The version one below the newest, which a talked-down attempt says. */
#define OLDER		(WIRE_VERSION - 1)

#define SIZES		"sendbuf = 65536; recvbuf = 65536; sq_size = 32; " \
			"rq_size = 32;"

static struct loop *lp;
/* test_turns: the daemons' workers, A's and B's, in lp's world; B's
 * waits while hold_b. */
static struct loop *wk[2];
static int hold_b;
static char dir[40], target[80];
static struct rsd A, B;

/* ------------------------------------------------------------ names */

typedef int gai_fn(const char *, const char *, const struct addrinfo *,
    struct addrinfo **);
static gai_fn *real_gai;

/*
 * getaddrinfo, as the daemon's resolver (resolve.c) calls it: MULTI, a
 * name under .test that no name server answers, has the addresses in
 * multi[], in that order, as a name with several records would; every
 * other name is the C library's.  (Defined here, it is the one the
 * daemon's objects linked into this program call.)
 */
int
getaddrinfo(const char *node, const char *service,
    const struct addrinfo *hints, struct addrinfo **res)
{
	struct addrinfo h = *hints, *ai, **tail = res;
	size_t i;
	int rc;

	if (node == NULL || strcmp(node, MULTI) != 0)
		return (real_gai(node, service, hints, res));
	h.ai_flags |= AI_NUMERICHOST;
	*res = NULL;
	for (i = 0; i < sizeof(multi) / sizeof(multi[0]); i++) {
		if ((rc = real_gai(multi[i], service, &h, &ai)) != 0) {
			if (*res != NULL)
				freeaddrinfo(*res);
			return (rc);
		}
		*tail = ai;
		while (*tail != NULL)
			tail = &(*tail)->ai_next;
	}
	return (0);
}

/* ------------------------------------------------------------ daemons */

/* Configuration ${name} of ${fmt} and ${ap}, loaded (and its file gone). */
static struct conf * __attribute__((format(printf, 2, 0)))
load(const char *name, const char *fmt, va_list ap)
{
	static char text[65536];
	char path[128], err[1200];
	struct conf *c;
	FILE *fp;

	vsnprintf(text, sizeof(text), fmt, ap);
	snprintf(path, sizeof(path), "%s/%s.conf", dir, name);
	if ((fp = fopen(path, "w")) == NULL || fprintf(fp, "%s\n", text) < 0 ||
	    fclose(fp) != 0)
		abort();
	if (conf_load(path, 0, &c, err, sizeof(err)) != 0) {
		printf("# %s: %s\n", name, err);
		abort();
	}
	unlink(path);
	return (c);
}

/* Start daemon ${d} from configuration ${name}, of ${fmt} and ${ap}; or,
 * ${again}, it reloads it, as SIGHUP does. */
static void __attribute__((format(printf, 4, 0)))
configure_v(struct rsd *d, int again, const char *name, const char *fmt,
    va_list ap)
{
	char err[1200];
	struct conf *c;

	if (!again) {
		memset(d, 0, sizeof(*d));
		d->lp = lp;
		/* test_turns: links on a worker each, as rstreamd's. */
		d->workers = &wk[d == &A ? 0 : 1];
		d->nworkers = wk[0] != NULL;
		/* A fresh clock for what the daemon arms as it starts. */
		(void)loop_run_once(lp, 0);
	}
	c = load(name, fmt, ap);
	if (!again)
		d->conf = c;
	if ((again ? tunnel_reload(d, c, err, sizeof(err)) :
	    tunnel_start(d, err, sizeof(err))) != 0) {
		printf("# %s: %s\n", name, err);
		abort();
	}
}

static void start(struct rsd *, const char *, const char *, ...)
    __attribute__((format(printf, 3, 4)));
static void configure(struct rsd *, int, const char *, const char *, ...)
    __attribute__((format(printf, 4, 5)));

/* Start daemon ${d} from configuration ${name}, of ${fmt}. */
static void
start(struct rsd *d, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	configure_v(d, 0, name, fmt, ap);
	va_end(ap);
}

/* The same, or ${again}: ${d} reloads it. */
static void
configure(struct rsd *d, int again, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	configure_v(d, again, name, fmt, ap);
	va_end(ap);
}

static void
stop(struct rsd *d)
{

	tunnel_stop(d);
	conf_free(d->conf);
	d->conf = NULL;
}

/* Start a case: nothing of the last one's fabric counts. */
static void
begin(const char *what)
{

	printf("# %s\n", what);
	simverbs_reset();
	memset(seen_wait, 0, sizeof(seen_wait));
}

/* End a case: both daemons go; nobody broke a rule of the fabric. */
static void
end(const char *what)
{

	ok(simverbs_error() == NULL, "%s: no rule of the fabric broken%s%s",
	    what, simverbs_error() != NULL ? ": " : "",
	    simverbs_error() != NULL ? simverbs_error() : "");
	stop(&A);
	stop(&B);
}

/*
 * The longest back-off A's links ("t" and "u") were seen waiting after
 * each attempt (by the attempts there were), as the daemon armed it:
 * turns run late on a busy host, and a wait measured by the clock only
 * ever grows.  Each turn of until() looks, so no wait a link arms goes
 * unseen: its timer fires in a later turn.
 */
static void
note_wait(void)
{
	static const char *const names[] = { "t", "u" };
	struct link_info li;
	struct tun *t;
	size_t i, n = simverbs_attempts();

	if (A.conf == NULL || n >= sizeof(seen_wait) / sizeof(seen_wait[0]))
		return;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if ((t = tunnel_find(&A, names[i])) == NULL || t->link == NULL)
			continue;
		link_info(t->link, &li);
		if (li.retry_wait_ms > seen_wait[n])
			seen_wait[n] = li.retry_wait_ms;
	}
}

/* A turn of the loop, waiting up to ${ms}; and of each worker's, if any
 * (in one thread, each turn still shared or exclusive as its own). */
static void
turn(int ms)
{
	size_t i;

	for (i = 0; i < 2; i++)
		if (wk[i] != NULL && !(i == 1 && hold_b) &&
		    loop_run_once(wk[i], 0) != 0)
			abort();
	if (loop_run_once(lp, wk[0] != NULL ? 1 : ms) != 0)
		abort();
}

/* Run the loop until ${cond}, RUN_MS at most: whether it holds. */
static int
until(int (*cond)(void))
{
	uint64_t limit = loop_now_ms() + RUN_MS;

	while (!cond() && loop_now_ms() < limit) {
		turn(10);
		note_wait();
	}
	return (cond());
}

/* ------------------------------------------------- what they show */

/* ${d}'s client tunnel ${name}'s link, described in ${li}. */
static const struct dlink *
out_link(struct rsd *d, const char *name, struct link_info *li)
{
	struct tun *t = tunnel_find(d, name);

	if (t == NULL || t->link == NULL)
		abort();
	link_info(t->link, li);
	return (t->link);
}

/* How many of ${d}'s links are incoming, and how many of those are up,
 * suspended; the last one's info in ${li}. */
static unsigned
in_links(const struct rsd *d, unsigned *up, unsigned *susp,
    struct link_info *li)
{
	const struct dlink *dl;
	struct link_info x;
	unsigned n = 0;

	*up = *susp = 0;
	memset(li, 0, sizeof(*li));
	li->name = li->peer = li->dir = li->last_error = "";
	for (dl = link_first(d); dl != NULL; dl = link_next(dl)) {
		link_info(dl, &x);
		if (strcmp(x.dir, "in") != 0)
			continue;
		n++;
		*up += x.state == LINK_UP;
		*susp += x.state == LINK_SUSPENDED;
		*li = x;
	}
	return (n);
}

static const struct tun_stats *
stats(struct rsd *d, const char *name)
{
	struct tun *t = tunnel_find(d, name);

	if (t == NULL)
		abort();
	return (t->st);
}

/* Whether ${counts} (by enum verbs_wc_error) hold one ${c} and no other. */
static int
wc_errors(const uint64_t counts[VERBS_WC_N], enum verbs_wc_error c)
{
	int k, good = 1;

	for (k = VERBS_WC_NONE + 1; k < VERBS_WC_N; k++) {
		printf("# %s %llu\n", verbs_wc_error_name(k),
		    (unsigned long long)counts[k]);
		good &= counts[k] == (k == (int)c);
	}
	return (good);
}

static const struct simverbs_attempt *
att(size_t i)
{
	static const struct simverbs_attempt none;
	const struct simverbs_attempt *a = simverbs_attempt(i);

	return (a != NULL ? a : &none);
}

/* From attempt ${i}'s end to the next one's start, in ms. */
static long long
gap(size_t i)
{

	return ((long long)att(i + 1)->start_ms - (long long)att(i)->end_ms);
}

/*
 * Whether A waited ${ms} (0: not at all) between attempt ${i} and the
 * next: as armed, and (the clock's lower bound) no sooner.
 */
static int
backed_off(size_t i, uint32_t ms)
{

	return (seen_wait[i + 1] == ms && gap(i) >= (long long)ms);
}

/* The conditions the cases wait for. */
static size_t want_n;

static int
attempts_reach(void)
{

	return (simverbs_attempts() >= want_n);
}

/* As many, the last one's hello sent (or lost). */
static int
attempts_said(void)
{

	return (simverbs_attempts() >= want_n &&
	    att(want_n - 1)->version != 0);
}

/* Run until there were ${n} attempts (and, with ${said}, the last one's
 * hello went): whether there were. */
static int
attempts(size_t n, int said)
{

	want_n = n;
	return (until(said ? attempts_said : attempts_reach));
}

static int
a_up(void)
{
	struct tun *t = tunnel_find(&A, "t");

	return (link_is_up(t->link));
}

/* A's link up, and B with exactly one incoming link, up. */
static int
both_up(void)
{
	struct link_info li;
	unsigned up, susp;

	return (a_up() && in_links(&B, &up, &susp, &li) == 1 && up == 1);
}

/* ------------------------------------------------------------ streams */

/* A non-blocking Unix socket listening at ${path}, or connected to it. */
static int
unix_socket(const char *path, int listening)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || (listening ? bind(fd, (struct sockaddr *)&sa,
	    sizeof(sa)) != 0 || listen(fd, 4) != 0 : connect(fd,
	    (struct sockaddr *)&sa, sizeof(sa)) != 0) ||
	    fcntl(fd, F_SETFL, O_NONBLOCK) != 0)
		abort();
	return (fd);
}

/* One direction of a stream: bytes of a pattern, checked as they come. */
struct flow {
	int from, to;
	uint32_t seed;
	uint64_t sent, got;
	int bad;		/* a byte out of place, or the end came */
};

static uint8_t
pattern(uint32_t seed, uint64_t off)
{
	uint64_t x = (off + seed) * 0x9e3779b97f4a7c15ull;

	return ((uint8_t)(x >> 56 ^ x >> 29));
}

/* Take what arrived at ${f}'s end; false once it cannot go on. */
static int
flow_take(struct flow *f)
{
	uint8_t buf[16384];
	ssize_t n, k;

	while ((n = recv(f->to, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		for (k = 0; k < n; k++, f->got++)
			f->bad |= buf[k] != pattern(f->seed, f->got);
	if (n == 0 || (n < 0 && errno != EAGAIN))
		f->bad = 1;
	return (!f->bad);
}

/* Put up to ${goal} bytes into ${f}'s start, as much as goes now. */
static void
flow_put(struct flow *f, uint64_t goal)
{
	uint8_t buf[16384];
	size_t k, len;
	ssize_t n;

	while (f->sent < goal) {
		len = goal - f->sent < sizeof(buf) ? goal - f->sent :
		    sizeof(buf);
		for (k = 0; k < len; k++)
			buf[k] = pattern(f->seed, f->sent + k);
		if ((n = send(f->from, buf, len, MSG_DONTWAIT |
		    MSG_NOSIGNAL)) <= 0)
			return;
		f->sent += (uint64_t)n;
	}
}

/* ${n} more bytes through flows ${a} and ${b} at once: whether every
 * byte so far arrived, in order. */
static int
carry(struct flow *a, struct flow *b, size_t n)
{
	uint64_t ga = a->sent + n, gb = b->sent + n;
	uint64_t limit = loop_now_ms() + RUN_MS;

	while ((a->got < ga || b->got < gb) && loop_now_ms() < limit) {
		flow_put(a, ga);
		flow_put(b, gb);
		if (!flow_take(a) || !flow_take(b))
			break;
		turn(5);
	}
	return (a->got == ga && b->got == gb && !a->bad && !b->bad);
}

static int tgt_lfd = -1, tgt_fd = -1, cli_fd = -1;

static int
target_came(void)
{

	if (tgt_fd < 0)
		tgt_fd = accept4(tgt_lfd, NULL, NULL, SOCK_NONBLOCK);
	return (tgt_fd >= 0);
}

/* A client of A's tunnel ${name}, its stream to B's target: flows both
 * ways. */
static int
stream_open_on(const char *name, struct flow *up, struct flow *down,
    uint32_t seed)
{
	char path[120];

	snprintf(path, sizeof(path), "%s/%s.sock", dir, name);
	cli_fd = unix_socket(path, 0);
	tgt_fd = -1;
	(void)until(target_came);
	*up = (struct flow){ cli_fd, tgt_fd, seed, 0, 0, tgt_fd < 0 };
	*down = (struct flow){ tgt_fd, cli_fd, seed + 1, 0, 0, tgt_fd < 0 };
	return (tgt_fd >= 0);
}

/* The same, on A's tunnel t. */
static int
stream_open(struct flow *up, struct flow *down, uint32_t seed)
{

	return (stream_open_on("t", up, down, seed));
}

/* The socket ${fd} ended: EOF or reset. */
static int
ended(int fd)
{
	uint8_t b[4096];
	ssize_t n;

	while ((n = recv(fd, b, sizeof(b), MSG_DONTWAIT)) > 0)
		;
	return (n == 0 || (n < 0 && errno != EAGAIN));
}

static int
ended_target(void)
{

	return (ended(tgt_fd));
}

static int
both_ended(void)
{

	return (ended(cli_fd) && ended(tgt_fd));
}

static void
stream_close(void)
{

	close(cli_fd);
	close(tgt_fd);
	cli_fd = tgt_fd = -1;
}

/* ---------------------------------------------------------- rotation */

static void
test_rotation(void)
{
	struct simverbs_peer dark = { .dark = 1 };
	struct link_info li, bi;
	struct linkstat ls;
	const struct tun_stats *st;
	unsigned up, susp;
	size_t i;

	begin("rotation: peer = [ dark, nobody, B ]");
	simverbs_peer(DARK, &dark);
	start(&B, "b", "handshake_timeout = 1; listen = \"%s\";\n"
	    "tunnels = ( { name = \"t\"; target = \"unix:%s\"; %s } );",
	    SERVE, target, SIZES);
	start(&A, "a", "handshake_timeout = 1; source = \"%s\";\n"
	    "tunnels = ( { name = \"t\"; accept = \"unix:%s/t.sock\"; "
	    "peer = [ \"%s\", \"%s\", \"%s\" ]; %s } );", SRC, dir, DARK,
	    NOBODY, SERVE, SIZES);

	ok(attempts(2, 0), "rotation: a second attempt");
	linkstat_read(out_link(&A, "t", &li), &ls);
	ok(strcmp(att(0)->dst, DARK) == 0 && att(0)->outcome ==
	    SIMVERBS_DARK && (long long)att(0)->end_ms -
	    (long long)att(0)->start_ms >= 1000, "rotation: the first attempt "
	    "went to the dark entry %s and ended after handshake_timeout "
	    "(%lld ms)", att(0)->dst, (long long)att(0)->end_ms -
	    (long long)att(0)->start_ms);
	ok(li.state == LINK_CONNECTING && li.failures == 1 &&
	    strstr(li.last_error, "connecting not finished within "
	    "handshake_timeout (1 s)") != NULL, "rotation: A shows the link "
	    "connecting again after 1 failure: %s", li.last_error);
	ok(strcmp(att(1)->dst, NOBODY) == 0 && strcmp(ls.address, NOBODY) ==
	    0, "rotation: the second attempt goes to the next entry, %s "
	    "(linkstat: %s)", att(1)->dst, ls.address);
	ok(backed_off(0, 100), "rotation: after LINK_BACKOFF_MIN_MS (%lld "
	    "ms)", gap(0));

	ok(attempts(3, 0), "rotation: a third attempt");
	out_link(&A, "t", &li);
	ok(att(1)->outcome == SIMVERBS_NOBODY && li.failures == 2 &&
	    strcmp(li.last_error, "connection refused: nothing listening at "
	    "that address and port") == 0, "rotation: the second was "
	    "refused at once: %s", li.last_error);
	ok(strcmp(att(2)->dst, SERVE) == 0 && backed_off(1, 200),
	    "rotation: the third goes to %s after a back-off twice as long "
	    "(%lld ms)", att(2)->dst, gap(1));

	ok(until(both_up), "rotation: the link comes up on the third entry");
	out_link(&A, "t", &li);
	st = stats(&A, "t");
	ok(li.state == LINK_UP && li.failures == 0 && li.failures_total == 2 &&
	    li.last_error[0] == '\0' && li.version == WIRE_VERSION &&
	    strcmp(li.peer, SERVE) == 0, "rotation: A shows it up to %s, "
	    "version %u, 0 failures in a row, %llu in all", li.peer,
	    li.version, (unsigned long long)li.failures_total);
	ok(st->link_failures == 2 && st->link_reconnects == 1, "rotation: "
	    "A's tunnel counts 2 link failures and 1 reconnect (%llu, %llu)",
	    (unsigned long long)st->link_failures,
	    (unsigned long long)st->link_reconnects);
	in_links(&B, &up, &susp, &bi);
	ok(strncmp(bi.peer, SRC ":", strlen(SRC) + 1) == 0 && bi.version ==
	    WIRE_VERSION && B.links_rejected == 0 && B.auth_failures == 0,
	    "rotation: B shows one link, from %s, version %u, nothing "
	    "rejected", bi.peer, bi.version);

	/* Lost: the next attempts go on from the next entry. */
	simverbs_peer(DARK, NULL);
	ok(simverbs_cut(SERVE) == 1, "rotation: the path to B breaks");
	ok(attempts(6, 0) && until(both_up), "rotation: the link "
	    "comes up again");
	for (i = 3; i < 6; i++)
		printf("# attempt %zu: %s, %lld ms after the last\n", i,
		    att(i)->dst, gap(i - 1));
	ok(strcmp(att(3)->dst, DARK) == 0 && strcmp(att(4)->dst, NOBODY) ==
	    0 && strcmp(att(5)->dst, SERVE) == 0 && att(3)->outcome ==
	    SIMVERBS_NOBODY, "rotation: after the loss the attempts go on "
	    "from the first entry round, not back to B: %s, %s, %s",
	    att(3)->dst, att(4)->dst, att(5)->dst);
	ok(backed_off(2, 100) && backed_off(3, 200) && backed_off(4, 400),
	    "rotation: the back-off starts again from its least and doubles "
	    "(%lld, %lld, %lld ms)", gap(2), gap(3), gap(4));
	out_link(&A, "t", &li);
	ok(li.failures_total == 5 && stats(&A, "t")->link_failures == 5 &&
	    stats(&A, "t")->link_reconnects == 2, "rotation: A counts 5 "
	    "failures and 2 reconnects in all (%llu)",
	    (unsigned long long)li.failures_total);
	ok(wc_errors(stats(&A, "t")->completion_errors, VERBS_WC_RETRY),
	    "rotation: of those, the loss alone ended on an error "
	    "completion: A's tunnel counts one, retry_exceeded");
	ok(wc_errors(B.completion_errors_in, VERBS_WC_RETRY), "rotation: B "
	    "counts its end of it among its incoming links'");
	end("rotation");
}

/* One peer entry, a name with three addresses: each attempt the next. */
static void
test_addresses(void)
{
	struct link_info li;
	struct linkstat ls;

	begin("rotation: peer = a name with [ nobody, nobody, B ]");
	start(&B, "b", "handshake_timeout = 1; listen = \"%s\";\n"
	    "tunnels = ( { name = \"t\"; target = \"unix:%s\"; %s } );",
	    SERVE, target, SIZES);
	start(&A, "a", "handshake_timeout = 1; source = \"%s\";\n"
	    "tunnels = ( { name = \"t\"; accept = \"unix:%s/t.sock\"; "
	    "peer = \"%s\"; %s } );", SRC, dir, MULTI, SIZES);
	ok(until(both_up), "addresses: the link comes up");
	linkstat_read(out_link(&A, "t", &li), &ls);
	ok(simverbs_attempts() == 3 && strcmp(att(0)->dst, NOBODY) == 0 &&
	    strcmp(att(1)->dst, NOBODY2) == 0 &&
	    strcmp(att(2)->dst, SERVE) == 0, "addresses: the attempts went "
	    "to the name's addresses in turn: %s, %s, %s", att(0)->dst,
	    att(1)->dst, att(2)->dst);
	ok(backed_off(0, 100) && backed_off(1, 200), "addresses: after the "
	    "back-off, doubling (%lld, %lld ms)", gap(0), gap(1));
	ok(strcmp(li.peer, MULTI ":7471") == 0 && strcmp(ls.address, SERVE) ==
	    0 && li.failures_total == 2, "addresses: A shows the link up to "
	    "%s at %s, after 2 failures", li.peer, ls.address);
	simverbs_cut(SERVE);
	ok(attempts(4, 0), "addresses: lost, A tries again");
	ok(strcmp(att(3)->dst, NOBODY) == 0, "addresses: from the first "
	    "address round, not the one that worked (%s)", att(3)->dst);
	ok(until(both_up), "addresses: and the link comes up again");
	end("addresses");
}

/*
 * Two entries taking turns, the name of three addresses and one address:
 * each entry goes on from its own last address, so B, the name's third,
 * is reached (one place for both skipped it for ever).
 */
static void
test_entries_addresses(void)
{
	size_t i;
	static const char *const want[] = { NOBODY, NOBODY3, NOBODY2,
	    NOBODY3, SERVE };

	begin("rotation: peer = [ a name with [ nobody, nobody, B ], "
	    "nobody ]");
	start(&B, "b", "handshake_timeout = 1; listen = \"%s\";\n"
	    "tunnels = ( { name = \"t\"; target = \"unix:%s\"; %s } );",
	    SERVE, target, SIZES);
	start(&A, "a", "handshake_timeout = 1; source = \"%s\";\n"
	    "tunnels = ( { name = \"t\"; accept = \"unix:%s/t.sock\"; "
	    "peer = [ \"%s\", \"%s\" ]; %s } );", SRC, dir, MULTI, NOBODY3,
	    SIZES);
	ok(until(both_up), "entries and addresses: the link comes up");
	for (i = 0; i < (sizeof(want) / sizeof(want[0])) && i < simverbs_attempts(); i++)
		if (strcmp(att(i)->dst, want[i]) != 0)
			break;
	ok(i == (sizeof(want) / sizeof(want[0])) && simverbs_attempts() == (sizeof(want) / sizeof(want[0])),
	    "entries and addresses: the attempts went to the name's first, "
	    "the other entry, the name's second, the other entry, the "
	    "name's third (B) (%zu of them as expected, %zu made)", i,
	    simverbs_attempts());
	end("entries and addresses");
}

/* ---------------------------------------------------------- step-down */

/* B with one target tunnel "t" on SERVE, and ${extra} in it. */
static void
start_b(const char *extra)
{

	start(&B, "b", "handshake_timeout = 1; listen = \"%s\";\n"
	    "tunnels = ( { name = \"t\"; target = \"unix:%s\"; %s %s } );",
	    SERVE, target, SIZES, extra);
}

/* A with one client tunnel "t" to SERVE, and ${extra} in it. */
static void
start_a(const char *extra)
{

	start(&A, "a", "handshake_timeout = 1; source = \"%s\";\n"
	    "tunnels = ( { name = \"t\"; accept = \"unix:%s/t.sock\"; "
	    "peer = \"%s\"; %s %s } );", SRC, dir, SERVE, SIZES, extra);
}

/* A case ${what}: B behind a host that answers as ${p}, then A. */
static void
pair(const char *what, const struct simverbs_peer *p, const char *b,
    const char *a)
{

	begin(what);
	simverbs_peer(SERVE, p);
	start_b(b);
	start_a(a);
}

static void
test_stepdown(void)
{
	struct simverbs_peer older = { .speaks = 7 };
	struct link_info li, bi;
	unsigned up, susp;

	pair("step-down: B speaks version 7 at most", &older, "", "");
	ok(until(both_up), "step-down: the link comes up");
	out_link(&A, "t", &li);
	in_links(&B, &up, &susp, &bi);
	ok(simverbs_attempts() == 2 && att(0)->version == WIRE_VERSION &&
	    att(0)->outcome == SIMVERBS_REJECTED && att(0)->note_version == 7 &&
	    att(1)->version == 7 && strcmp(att(1)->dst, att(0)->dst) == 0 &&
	    att(1)->outcome == SIMVERBS_UP, "step-down: version %u refused "
	    "with a note saying 7, then exactly one more attempt to the same "
	    "address saying 7 (%zu attempts)", WIRE_VERSION,
	    simverbs_attempts());
	ok(li.version == 7 && bi.version == 7, "step-down: up in version 7 "
	    "on both sides (A %u, B %u)", li.version, bi.version);
	/* Version 7 has no latency lane: one queue pair, as before it. */
	ok(li.st.lanes == 1 && bi.st.lanes == 1 && li.st.lane[1].wrs == 0 &&
	    bi.st.lane[1].wrs == 0, "step-down: one lane on both sides in "
	    "version 7 (A %u, B %u)", (unsigned)li.st.lanes,
	    (unsigned)bi.st.lanes);
	ok(A.stepdowns == 1 && A.stepdowns_refused == 0 &&
	    li.failures_total == 0 && stats(&A, "t")->link_failures == 0,
	    "step-down: A counts 1 step-down and no failure");
	ok(B.links_rejected == 1, "step-down: B counts the hello it could "
	    "not read as rejected (%llu)",
	    (unsigned long long)B.links_rejected);
	ok(backed_off(0, 0), "step-down: at once, "
	    "not after the back-off (%lld ms)", gap(0));

	/* Not sticky: the next link says the newest version again. */
	simverbs_peer(SERVE, NULL);
	simverbs_cut(SERVE);
	ok(attempts(3, 0) && until(both_up), "step-down: lost, the "
	    "link comes up again");
	out_link(&A, "t", &li);
	in_links(&B, &up, &susp, &bi);
	ok(att(2)->version == WIRE_VERSION && li.version == WIRE_VERSION &&
	    A.stepdowns == 1, "step-down: not sticky: the next attempt says "
	    "%u, and is up in it", WIRE_VERSION);
	ok(li.st.lanes == 2 && bi.st.lanes == 2, "step-down: and runs two "
	    "lanes again (A %u, B %u)", (unsigned)li.st.lanes,
	    (unsigned)bi.st.lanes);
	end("step-down");
}

static void
test_min_version(void)
{
	struct simverbs_peer old4 = { .speaks = 4 }, answers4 = {
		.answers = 4 };
	struct link_info li;
	char want[200];
	size_t i;
	int allnew = 1;

	pair("min_version: B speaks version 4 at most", &old4, "",
	    "min_version = 5;");
	ok(attempts(3, 1), "min_version: three attempts");
	out_link(&A, "t", &li);
	/* (The last one's answer may be on its way.) */
	for (i = 0; i < simverbs_attempts(); i++)
		allnew &= att(i)->version == WIRE_VERSION &&
		    (att(i)->note_version == 4 || i + 1 == simverbs_attempts());
	ok(allnew, "min_version: every attempt said %u, each refused with "
	    "a note saying 4: no step below min_version 5", WIRE_VERSION);
	ok(A.stepdowns == 0 && A.stepdowns_refused == 2 && li.failures == 2,
	    "min_version: A counts the refusals, not as step-downs (%llu), "
	    "and as failures (%d)", (unsigned long long)A.stepdowns_refused,
	    (int)li.failures);
	snprintf(want, sizeof(want), "the peer refused protocol version %u "
	    "and speaks 4 at most (an older rstreamd, or a forged reject); "
	    "not stepping down below min_version 5", WIRE_VERSION);
	ok(strcmp(li.last_error, want) == 0, "min_version: the error says "
	    "so: %s", li.last_error);
	ok(backed_off(1, 200), "min_version: tried again after the "
	    "back-off (%lld ms)", gap(1));
	ok(B.links_rejected >= 2, "min_version: B counts the hellos it could "
	    "not read (%llu)", (unsigned long long)B.links_rejected);
	end("min_version");

	pair("min_version: B answers in version 4", &answers4, "",
	    "min_version = 5;");
	ok(attempts(2, 0), "min_version, answer: two attempts");
	out_link(&A, "t", &li);
	ok(att(0)->version == WIRE_VERSION && att(0)->outcome == SIMVERBS_UP &&
	    A.stepdowns_refused == 1 && A.stepdowns == 0 &&
	    li.failures == 1 && strcmp(li.last_error, "the peer answered in "
	    "protocol version 4, below min_version 5") == 0,
	    "min_version, answer: connected in 4, the link went down: %s",
	    li.last_error);
	ok(stats(&A, "t")->link_reconnects == 0 &&
	    stats(&A, "t")->link_failures == 1, "min_version, answer: A's "
	    "tunnel never saw it up");
	end("min_version, answer");
}

static void
test_talked_down(void)
{
	struct simverbs_peer down = { .speaks = 1, .noted = -1 };
	struct link_info li;
	char want[200];

	pair("step-down: B refuses every hello, naming one version below",
	    &down, "", "");
	ok(attempts(5, 1), "talked down: five attempts");
	out_link(&A, "t", &li);
	ok(att(0)->version == WIRE_VERSION && att(1)->version == OLDER &&
	    att(2)->version == WIRE_VERSION && att(3)->version == OLDER &&
	    att(4)->version == WIRE_VERSION, "talked down: the attempts say "
	    "%u, %u, %u, %u, %u: a step-down's own refusal does not step "
	    "again", WIRE_VERSION, OLDER, WIRE_VERSION, OLDER, WIRE_VERSION);
	ok(backed_off(0, 0) && backed_off(1, 100) && backed_off(2, 0) &&
	    backed_off(3, 200), "talked down: step-downs at once, failures "
	    "after the back-off (%lld, %lld, %lld, %lld ms)", gap(0), gap(1),
	    gap(2), gap(3));
	snprintf(want, sizeof(want), "the peer refused protocol version %u "
	    "too, which it had asked for (a forged reject, or a peer that "
	    "changed); not stepping down twice", OLDER);
	ok(A.stepdowns == 2 && li.failures == 2 && strcmp(li.last_error,
	    want) == 0, "talked down: A counts 2 "
	    "step-downs and 2 failures, and says why it stopped: %s",
	    li.last_error);
	ok(B.links_rejected == 4, "talked down: B rejected 4 (%llu)",
	    (unsigned long long)B.links_rejected);
	end("talked down");
}

static int
two_up(void)
{

	return (link_is_up(tunnel_find(&A, "t")->link) &&
	    link_is_up(tunnel_find(&A, "u")->link));
}

static void
test_busy(void)
{
	struct link_info lt, lu;
	size_t i, busy = 0, nb = 0, first_up = 0;
	char key[120], tun[600];

	begin("busy: B takes one pending link per address");
	snprintf(key, sizeof(key), "key_file = \"%s/key\";", dir);
	snprintf(tun, sizeof(tun), "{ name = \"t\"; target = \"unix:%s\"; "
	    "%s %s }, { name = \"u\"; target = \"unix:%s\"; %s %s }",
	    target, key, SIZES, target, key, SIZES);
	start(&B, "b", "handshake_timeout = 1; listen = \"%s\"; "
	    "max_pending_per_addr = 1;\ntunnels = ( %s );", SERVE, tun);
	snprintf(tun, sizeof(tun), "{ name = \"t\"; accept = "
	    "\"unix:%s/t.sock\"; peer = \"%s\"; %s %s }, { name = \"u\"; "
	    "accept = \"unix:%s/u.sock\"; peer = \"%s\"; %s %s }", dir, SERVE,
	    key, SIZES, dir, SERVE, key, SIZES);
	start(&A, "a", "handshake_timeout = 1; source = \"%s\";\n"
	    "tunnels = ( %s );", SRC, tun);
	ok(until(two_up), "busy: both links come up");
	for (i = 0; i < simverbs_attempts(); i++) {
		if (att(i)->busy) {
			busy = i;
			nb++;
		} else if (first_up == 0 && att(i)->up_ms != 0) {
			first_up = i + 1;
		}
	}
	ok(simverbs_attempts() == 3 && nb == 1 && att(busy)->outcome ==
	    SIMVERBS_REJECTED && first_up != 0, "busy: 3 attempts, one "
	    "refused busy");
	ok(first_up != 0 && att(2)->start_ms >= att(first_up - 1)->up_ms &&
	    busy < 2, "busy: asked again once the other link was up");
	ok(busy < 2 && backed_off(busy, 0), "busy: at once "
	    "when its connect slot came free, not after a back-off (%lld "
	    "ms)", gap(busy));
	out_link(&A, "t", &lt);
	out_link(&A, "u", &lu);
	ok(lt.failures_total == 0 && lu.failures_total == 0 &&
	    stats(&A, "t")->link_failures == 0 &&
	    stats(&A, "u")->link_failures == 0 && A.stepdowns == 0,
	    "busy: no failure counted on A");
	ok(B.links_rejected == 1, "busy: B counts 1 rejected (%llu)",
	    (unsigned long long)B.links_rejected);
	end("busy");
}

/* ------------------------------------------------------------- resume */

static int
a_suspended(void)
{
	struct link_info li, bi;
	unsigned up, susp;

	out_link(&A, "t", &li);
	in_links(&B, &up, &susp, &bi);
	return (li.suspended == 1 && susp == 1);
}

static int
resumed(void)
{

	return (stats(&A, "t")->resumes == 1 &&
	    stats(&B, "t")->resumes == 1 && both_up());
}

static int
resumed2(void)
{

	return (stats(&A, "t")->resumes == 2 &&
	    stats(&B, "t")->resumes == 2 && both_up());
}

static int
timed_out(void)
{

	return (both_ended() && A.resume_timeouts == 1 &&
	    B.resume_timeouts == 1);
}

static int
proof_failed(void)
{

	return (A.auth_failures == 1 && ended(cli_fd));
}

static int
b_reset(void)
{

	return (B.resume_timeouts == 1 && ended(tgt_fd));
}

static void
test_resume(void)
{
	struct simverbs_peer dark = { .dark = 1 };
	struct flow up = { -1, -1, 0, 0, 0, 1 }, down = up;
	struct link_info li, bi;
	char token[2 * 16 + 1], extra[200];
	unsigned n, nup, susp;
	uint64_t t0;
	size_t k;

	snprintf(extra, sizeof(extra), "key_file = \"%s/key\"; resume_time = "
	    "1;", dir);
	pair("resume: resume_time = 1", NULL, extra, extra);
	ok(until(both_up), "resume: the link comes up");
	ok(stream_open(&up, &down, 7) && carry(&up, &down, 65536),
	    "resume: a stream carries 64 KiB each way");
	out_link(&A, "t", &li);
	in_links(&B, &nup, &susp, &bi);
	snprintf(token, sizeof(token), "%s", li.resume_id);
	ok(token[0] != '\0' && strcmp(bi.resume_id, token) == 0,
	    "resume: both sides name the link's streams %s", token);

	/* Bytes on their way when the path breaks. */
	flow_put(&up, up.sent + 32768);
	flow_put(&down, down.sent + 32768);
	(void)loop_run_once(lp, 0);
	ok(simverbs_cut(SERVE) == 1 && until(a_suspended), "resume: the "
	    "path breaks: the stream is suspended on both sides");
	ok(until(resumed), "resume: a new link comes up and the stream "
	    "resumes on both sides");
	n = carry(&up, &down, 65536);
	ok(n, "resume: every byte arrives, in order, once (%llu and %llu)",
	    (unsigned long long)up.got, (unsigned long long)down.got);
	out_link(&A, "t", &li);
	n = in_links(&B, &nup, &susp, &bi);
	ok(n == 1 && li.resume_id[0] != '\0' &&
	    strcmp(li.resume_id, bi.resume_id) == 0 &&
	    strcmp(li.resume_id, token) != 0, "resume: the new link carries "
	    "the chain on under a token of its own, the same on both sides "
	    "(%u incoming links, token %s, was %s)", n, bi.resume_id, token);
	/* The chain goes on from that token. */
	snprintf(token, sizeof(token), "%s", li.resume_id);
	flow_put(&up, up.sent + 16384);
	(void)loop_run_once(lp, 0);
	ok(simverbs_cut(SERVE) == 1 && until(a_suspended) &&
	    until(resumed2), "resume: lost again, the stream resumes on a "
	    "third link");
	out_link(&A, "t", &li);
	in_links(&B, &nup, &susp, &bi);
	ok(carry(&up, &down, 65536) && strcmp(li.resume_id, bi.resume_id) ==
	    0 && strcmp(li.resume_id, token) != 0, "resume: every byte "
	    "arrives, and the third link's token is its own too (%s)",
	    li.resume_id);
	ok(stats(&A, "t")->suspended == 2 && stats(&B, "t")->suspended == 2 &&
	    stats(&A, "t")->resume_failures == 0 &&
	    stats(&B, "t")->resume_failures == 0 && A.resume_timeouts == 0 &&
	    B.resume_timeouts == 0 && B.resume_refusals == 0,
	    "resume: counted suspended and resumed twice on each side, "
	    "nothing failed");

	/* No new link within resume_time: reset on both sides. */
	simverbs_peer(SERVE, &dark);
	t0 = loop_now_ms();
	simverbs_cut(SERVE);
	ok(until(timed_out), "resume: the path breaks for good: the stream "
	    "is reset on both sides");
	ok(loop_now_ms() - t0 >= 1000, "resume: not before resume_time "
	    "(%llu ms)", (unsigned long long)(loop_now_ms() - t0));
	out_link(&A, "t", &li);
	n = in_links(&B, &nup, &susp, &bi);
	ok(li.suspended == 0 && susp == 0 && stats(&A, "t")->resume_failures ==
	    1 && stats(&B, "t")->resume_failures == 1, "resume: counted as "
	    "resume failures on both sides; nothing waits (%u suspended on "
	    "B)", susp);
	for (k = simverbs_attempts(); k-- > 0; )
		if (att(k)->outcome != SIMVERBS_DARK)
			break;
	ok(k + 1 < simverbs_attempts(), "resume: the attempts meanwhile went "
	    "unanswered (%zu)", simverbs_attempts() - k - 1);
	stream_close();
	simverbs_peer(SERVE, NULL);
	ok(until(both_up), "resume: the path is back: a new link");
	out_link(&A, "t", &li);
	in_links(&B, &nup, &susp, &bi);
	ok(strcmp(li.resume_id, token) != 0 && strcmp(li.resume_id,
	    bi.resume_id) == 0, "resume: a chain of its own, %s",
	    li.resume_id);
	end("resume");
}

/*
 * A peer that never proves the secret: B stops hearing its links once
 * the streams are suspended.  Without keys (resume_without_key), so
 * that the new link is up, and offers the streams, before B would have
 * to answer anything.
 */
static void
test_proof(void)
{
	struct flow up = { -1, -1, 0, 0, 0, 1 }, down = up;
	struct link_info li;
	uint64_t t0;

	pair("resume: a peer that never proves the resume secret", NULL,
	    "resume_time = 1; resume_without_key = true;",
	    "resume_time = 1; resume_without_key = true;");
	ok(until(both_up) && stream_open(&up, &down, 9) &&
	    carry(&up, &down, 4096), "proof: a stream");
	simverbs_cut(SERVE);
	ok(until(a_suspended), "proof: the path breaks: suspended on both "
	    "sides");
	simverbs_deaf(B.cm, 1);
	ok(attempts(simverbs_attempts() + 1, 0) && until(a_up), "proof: a "
	    "new link up to a peer that hears nothing");
	t0 = loop_now_ms();
	ok(until(proof_failed), "proof: the new link fails, the stream is "
	    "reset");
	out_link(&A, "t", &li);
	ok(strcmp(li.last_error, "authentication failed: the peer did not "
	    "prove the streams' resume secret within handshake_timeout "
	    "(1 s)") == 0 && loop_now_ms() - t0 >= 1000, "proof: after "
	    "handshake_timeout (%llu ms): %s", (unsigned long long)
	    (loop_now_ms() - t0), li.last_error);
	ok(li.suspended == 0 && stats(&A, "t")->resume_failures == 1 &&
	    stats(&A, "t")->resumes == 0 && A.resume_timeouts == 0,
	    "proof: A reset it, not suspended again, no resume_time passed");
	ok(until(b_reset), "proof: B resets its side once resume_time "
	    "passed");
	ok(B.resume_refusals == 0 && stats(&B, "t")->resumes == 0 &&
	    stats(&B, "t")->resume_failures == 1, "proof: B never answered "
	    "the resume");
	simverbs_deaf(B.cm, 0);
	ok(until(both_up), "proof: B hears again: a new link");
	stream_close();
	end("proof");
}

/* A's link up, and B took its streams over: their old link went. */
static int
b_took(void)
{
	struct link_info bi;
	unsigned up, susp;

	(void)in_links(&B, &up, &susp, &bi);
	return (a_up() && up == 1 && susp == 0);
}

/*
 * A loses the new link before it read B's proof: B took the streams
 * over (a secret and, from version 10, a token of the new link's), but
 * A still holds the old ones, and asks for them on the next link under
 * the old token; B knows that one too.
 */
static void
test_proof_lost(void)
{
	struct flow up = { -1, -1, 0, 0, 0, 1 }, down = up;
	char extra[200];

	snprintf(extra, sizeof(extra), "key_file = \"%s/key\"; resume_time = "
	    "2;", dir);
	pair("resume: B's proof lost with the link", NULL, extra, extra);
	ok(until(both_up) && stream_open(&up, &down, 13) &&
	    carry(&up, &down, 16384), "proof lost: a stream");
	ok(simverbs_cut(SERVE) == 1 && until(a_suspended), "proof lost: the "
	    "path breaks: suspended on both sides");
	ok(attempts(simverbs_attempts() + 1, 0) && until(a_up), "proof lost: "
	    "a new link");
	simverbs_deaf(A.cm, 1);
	ok(until(b_took), "proof lost: B takes the streams over");
	simverbs_cut(SERVE);
	simverbs_deaf(A.cm, 0);
	ok(until(a_suspended) && until(resumed), "proof lost: that link "
	    "lost too, the next resumes the stream under the old token");
	ok(carry(&up, &down, 16384) && B.resume_refusals == 0, "proof lost: "
	    "every byte arrives, and B refused nothing (%llu)",
	    (unsigned long long)B.resume_refusals);
	stream_close();
	end("proof lost");
}

/*
 * A refusal from a peer that proved nothing: C, another daemon with the
 * same key at the tunnel's second peer entry, holds none of A's streams
 * and refuses their resume (reason 11) before any proof.  A keeps them
 * suspended and tries its next entry, B, which resumes them; with B
 * dark, C's refusals do not stretch resume_time, which still counts
 * from the suspension.
 */
static struct rsd C;

static int
a_reset(void)
{

	return (A.resume_timeouts == 1 && ended(cli_fd));
}

static void
test_denied(void)
{
	struct simverbs_peer dark = { .dark = 1 };
	struct flow up = { -1, -1, 0, 0, 0, 1 }, down = up;
	struct link_info li;
	char extra[200];
	uint64_t t0, el;
	size_t k, first;
	int toc;

	begin("resume: refused by a peer that proved nothing");
	snprintf(extra, sizeof(extra), "key_file = \"%s/key\"; resume_time = "
	    "2;", dir);
	start_b(extra);
	start(&C, "c", "handshake_timeout = 1; listen = \"%s\";\n"
	    "tunnels = ( { name = \"t\"; target = \"unix:%s\"; %s %s } );",
	    NOBODY, target, SIZES, extra);
	start(&A, "a", "handshake_timeout = 1; source = \"%s\";\n"
	    "tunnels = ( { name = \"t\"; accept = \"unix:%s/t.sock\"; "
	    "peer = [ \"%s\", \"%s\" ]; %s %s } );", SRC, dir, SERVE,
	    NOBODY, SIZES, extra);
	ok(until(both_up) && stream_open(&up, &down, 11) &&
	    carry(&up, &down, 16384), "denied: a stream A to B");
	first = simverbs_attempts();
	ok(simverbs_cut(SERVE) == 1 && until(a_suspended), "denied: the "
	    "path breaks: suspended on both sides");
	ok(until(resumed), "denied: a new link to B resumes the stream");
	for (toc = 0, k = first; k < simverbs_attempts(); k++)
		toc += strcmp(att(k)->dst, NOBODY) == 0;
	ok(toc >= 1 && C.resume_refusals >= 1 && strcmp(att(simverbs_attempts()
	    - 1)->dst, SERVE) == 0, "denied: after C refused it (%d "
	    "attempts to C, %llu refusals)", toc,
	    (unsigned long long)C.resume_refusals);
	ok(carry(&up, &down, 16384), "denied: every byte arrives, in order, "
	    "once");
	ok(stats(&A, "t")->resume_failures == 0 && A.resume_timeouts == 0,
	    "denied: A reset nothing");

	/* B dark: only C answers, and only refuses. */
	simverbs_peer(SERVE, &dark);
	t0 = loop_now_ms();
	simverbs_cut(SERVE);
	ok(until(a_reset), "denied: with B dark the stream is reset at last");
	/* (Each refusal restarting the wait would keep it for ever.) */
	el = loop_now_ms() - t0;
	ok(el >= 2000 && el < 3000, "denied: once resume_time passed since "
	    "the suspension, refusals or not (%llu ms)",
	    (unsigned long long)el);
	out_link(&A, "t", &li);
	ok(li.suspended == 0 && C.resume_refusals >= 2, "denied: nothing "
	    "waits on A (%llu refusals by C)",
	    (unsigned long long)C.resume_refusals);
	stream_close();
	simverbs_peer(SERVE, NULL);
	stop(&C);
	end("denied");
}

/* -------------------------------------------------------------- lanes */

static size_t forged_att;

/* The forged lane-1 request got its answer. */
static int
forged_answered(void)
{

	return (att(forged_att)->outcome == SIMVERBS_REJECTED ||
	    att(forged_att)->outcome == SIMVERBS_ACCEPTED);
}

/* A lane-1 request from A's CM to B, with ${nonce} (NULL: a repeat of
 * the link's own): whether B refused it with a note, and its link to A
 * stayed up. */
static int
forged_refused(const uint8_t *nonce)
{
	struct verbs_link *l;
	int ok;

	forged_att = simverbs_attempts();
	l = simverbs_lane_request(A.cm, SERVE, nonce);
	ok = until(forged_answered) && att(forged_att)->outcome ==
	    SIMVERBS_REJECTED && att(forged_att)->noted;
	/* Its answer first, then it goes, as the daemon's links do. */
	(void)loop_run_once(lp, 0);
	verbs_link_free(l);
	return (ok && both_up());
}

static void
test_lanes(void)
{
	struct flow up = { -1, -1, 0, 0, 0, 1 }, down = up;
	struct link_info li, bi;
	uint8_t nonce[16];
	char extra[200];
	unsigned nup, susp;
	int refused;

	snprintf(extra, sizeof(extra), "key_file = \"%s/key\"; resume_time = "
	    "1;", dir);
	pair("lanes: a latency lane on every link of version 8 or later", NULL, extra,
	    extra);
	ok(until(both_up) && stream_open(&up, &down, 11) &&
	    carry(&up, &down, 65536), "lanes: a stream carries 64 KiB each "
	    "way");
	out_link(&A, "t", &li);
	in_links(&B, &nup, &susp, &bi);
	ok(li.version == WIRE_VERSION && bi.version == WIRE_VERSION &&
	    li.st.lanes == 2 &&
	    bi.st.lanes == 2, "lanes: both daemons show 2 lanes (A %u, B %u)",
	    (unsigned)li.st.lanes, (unsigned)bi.st.lanes);

	/* Anyone can send a lane-1 request: it joins no link but its own. */
	memset(nonce, 0x5a, sizeof(nonce));
	refused = forged_refused(nonce);
	ok(refused && B.links_rejected == 1, "lanes: a lane-1 request that "
	    "matches no link is refused with a note and counted (%llu); the "
	    "link stays up", (unsigned long long)B.links_rejected);
	refused = forged_refused(NULL);
	ok(refused && B.links_rejected == 2, "lanes: so is one that repeats "
	    "the link's own lane 1 (%llu)",
	    (unsigned long long)B.links_rejected);
	ok(carry(&up, &down, 4096) && A.auth_failures == 0 &&
	    B.auth_failures == 0, "lanes: the stream carries on");

	/* Lane 1 lost alone: the whole link fails, and the streams resume. */
	flow_put(&up, up.sent + 32768);
	flow_put(&down, down.sent + 32768);
	(void)loop_run_once(lp, 0);
	ok(simverbs_lane_drop(SERVE) == 1 && until(a_suspended), "lanes: "
	    "lane 1 disconnected: the link fails, the stream is suspended on "
	    "both sides");
	out_link(&A, "t", &li);
	ok(strcmp(li.last_error, "peer disconnected lane 1") == 0 ||
	    li.state == LINK_UP, "lanes: A says why (unless up again): %s",
	    li.last_error);
	ok(until(resumed) && carry(&up, &down, 65536), "lanes: a new link, "
	    "the stream resumes, every byte arrives once, in order (%llu and "
	    "%llu)", (unsigned long long)up.got,
	    (unsigned long long)down.got);
	out_link(&A, "t", &li);
	in_links(&B, &nup, &susp, &bi);
	ok(li.st.lanes == 2 && bi.st.lanes == 2 && li.failures_total == 1,
	    "lanes: the new link runs 2 lanes too (A %u, B %u)",
	    (unsigned)li.st.lanes, (unsigned)bi.st.lanes);
	stream_close();
	end("lanes");
}

/* ------------------------------------------------- quiet completions */

static struct flow *q_flow;
static uint64_t q_goal;

static int
q_arrived(void)
{

	(void)flow_take(q_flow);
	return (q_flow->got >= q_goal || q_flow->bad);
}

/* ${n} round trips of 64 bytes, the client's request then the target's
 * answer: whether each arrived whole. */
static int
round_trips(struct flow *up, struct flow *down, int n)
{
	struct flow *f;
	int i, k;

	for (i = 0; i < n; i++)
		for (k = 0; k < 2; k++) {
			f = k == 0 ? up : down;
			flow_put(f, f->sent + 64);
			q_flow = f;
			q_goal = f->sent;
			if (!until(q_arrived) || f->bad)
				return (0);
		}
	return (1);
}

static int
a_down(void)
{
	struct link_info li;

	out_link(&A, "t", &li);
	return (li.state != LINK_UP);
}

/*
 * A round trip of small writes wakes each daemon once, for the message
 * that arrives: the completion of its own SEND raises nothing, as the
 * WRs' completion queue is left unarmed while the engine waits on none
 * of them (engine_sends_quiet).  Bulk, which needs its completions, still
 * gets them, and a stream that turns from small writes to bulk (its lane
 * 0 WRITEs wait for its lane-1 SENDs) does not stall; a path that breaks
 * while only small writes are in flight is still found, at the latest by
 * the next keepalive's turn.
 */
static void
test_quiet(void)
{
	struct flow up = { -1, -1, 0, 0, 0, 1 }, down = up;
	uint64_t a0, b0, a1, b1;
	const int n = 40;

	pair("quiet: no wake-up for a small write's own completion", NULL,
	    "", "");
	ok(until(both_up) && stream_open(&up, &down, 21) &&
	    round_trips(&up, &down, 4), "quiet: a stream carries round trips");
	a0 = simverbs_raises(SERVE, 0);
	b0 = simverbs_raises(SERVE, 1);
	ok(round_trips(&up, &down, n), "quiet: %d more round trips of 64 "
	    "bytes, every byte in order", n);
	a1 = simverbs_raises(SERVE, 0) - a0;
	b1 = simverbs_raises(SERVE, 1) - b0;
	/* Keepalives and their completions, and receive credit, add some. */
	ok(a1 <= (uint64_t)n * 5 / 4 && b1 <= (uint64_t)n * 5 / 4, "quiet: "
	    "each daemon woke about once a round trip for its completions (A "
	    "%llu, B %llu times for %d; twice as many if every SEND's "
	    "completion woke it)", (unsigned long long)a1,
	    (unsigned long long)b1, n);
	ok(carry(&up, &down, 262144) && round_trips(&up, &down, 4),
	    "quiet: then 256 KiB each way (small writes turning into bulk), "
	    "and round trips again");
	flow_put(&up, up.sent + 64);
	ok(simverbs_cut(SERVE) == 1 && until(a_down), "quiet: a path broken "
	    "with a small write in flight ends the link");
	stream_close();
	end("quiet");
}

/* A daemon held to version 7 (max_version): its links run one lane. */
static void
test_max_version(void)
{
	struct flow up = { -1, -1, 0, 0, 0, 1 }, down = up;
	struct link_info li, bi;
	unsigned nup, susp;
	int i;

	for (i = 0; i < 2; i++) {
		begin(i == 0 ? "lanes: B has max_version = 7" :
		    "lanes: A has max_version = 7");
		start(&B, "b", "handshake_timeout = 1; listen = \"%s\"; %s\n"
		    "tunnels = ( { name = \"t\"; target = \"unix:%s\"; %s } );",
		    SERVE, i == 0 ? "max_version = 7;" : "", target, SIZES);
		start(&A, "a", "handshake_timeout = 1; source = \"%s\"; %s\n"
		    "tunnels = ( { name = \"t\"; accept = \"unix:%s/t.sock\"; "
		    "peer = \"%s\"; %s } );", SRC, i == 1 ?
		    "max_version = 7;" : "", dir, SERVE, SIZES);
		ok(until(both_up) && stream_open(&up, &down, 13) &&
		    carry(&up, &down, 65536), "max_version: a stream carries "
		    "64 KiB each way");
		out_link(&A, "t", &li);
		in_links(&B, &nup, &susp, &bi);
		ok(simverbs_attempts() == 1 && att(0)->version == (i == 0 ?
		    WIRE_VERSION : 7u) && A.stepdowns == 0, "max_version: one attempt, "
		    "saying %u, no step-down", att(0)->version);
		ok(li.version == 7 && bi.version == 7 && li.st.lanes == 1 &&
		    bi.st.lanes == 1, "max_version: up in 7 with one lane on "
		    "both sides (A %u %u, B %u %u)", li.version,
		    (unsigned)li.st.lanes, bi.version, (unsigned)bi.st.lanes);
		stream_close();
		end("max_version");
	}
}

/* ------------------------------------------------------------ keys */

#define NKEYS		128	/* B's target tunnels with keys of their own */
#define NINHERIT	8	/* and those that inherit the global key */

static int
k_up(void)
{

	return (link_is_up(tunnel_find(&A, "k")->link));
}

static int
b_refused(void)
{

	return (B.auth_failures > 0);
}

/* ${name}'s identity file in dir, its public key in base64 to ${b64}. */
static void
make_ident(const char *name, char b64[IDENT_B64_LEN])
{
	uint8_t pub[IDENT_KEY_LEN];
	char path[80], err[200];

	snprintf(path, sizeof(path), "%s/%s.id", dir, name);
	if (ident_write_new(path, pub, err, sizeof(err)) != 0)
		abort();
	ident_b64(pub, b64);
}

/* make_ident's file for ${name} goes. */
static void
remove_ident(const char *name)
{
	char path[80];

	snprintf(path, sizeof(path), "%s/%s.id", dir, name);
	unlink(path);
}

/*
 * Start B with identity b, peers "node-a" (${peer}), the global key and
 * NKEYS + NINHERIT target tunnels; A with identity ${ida}, B as node-b,
 * and tunnel k proving key file ${akey} of dir.  The X25519 operations
 * from then until ${cond}: a single attempt's.
 */
static unsigned long
keyed_pair(const char *ida, const char *peer, const char *pubb,
    const char *akey, int (*cond)(void))
{
	static char tun[(NKEYS + NINHERIT) * 256];
	char key[80];
	size_t i, n = 0;
	unsigned long ops;

	for (i = 0; i < NKEYS + NINHERIT && n < sizeof(tun); i++) {
		key[0] = '\0';
		if (i < NKEYS)
			snprintf(key, sizeof(key), "key_file = \"%s/%zu.key\";",
			    dir, i);
		n += (size_t)snprintf(tun + n, sizeof(tun) - n, "%s{ name = "
		    "\"t%zu\"; target = \"unix:%s\"; %s %s }", i ? ", " : "",
		    i, target, SIZES, key);
	}
	if (n >= sizeof(tun))
		abort();
	start(&B, "b", "handshake_timeout = 1; listen = \"%s\"; "
	    "identity_file = \"%s/b.id\"; key_file = \"%s/key\";\n"
	    "peers = ( { name = \"node-a\"; key = \"%s\"; } );\n"
	    "tunnels = ( %s );", SERVE, dir, dir, peer, tun);
	start(&A, "a", "handshake_timeout = 1; source = \"%s\"; "
	    "identity_file = \"%s/%s.id\";\n"
	    "peers = ( { name = \"node-b\"; key = \"%s\"; } );\n"
	    "tunnels = ( { name = \"k\"; accept = \"unix:%s/k.sock\"; "
	    "peer = \"%s\"; key_file = \"%s/%s\"; %s } );", SRC, dir,
	    ida, pubb, dir, SERVE, dir, akey, SIZES);
	x25519_ops = 0;
	ok(until(cond), "keys: %s", cond == k_up ? "the link is up" :
	    "B refuses the link");
	ops = x25519_ops;
	ok(simverbs_attempts() == 1, "keys: in one attempt (%zu)",
	    simverbs_attempts());
	return (ops);
}

/*
 * libsodium's answer, unless a case says the CPU has no AES (the AEAD
 * choice then falls to ChaCha20-Poly1305 on both sides), or gives two
 * CPUs, one with AES and one without, to the two daemons of this one
 * process: then aes_turns answers the questions in turn, "1" for AES and
 * "0" for none, one a side (the initiator asks as it connects, before the
 * responder sees its request), and aes_asked counts them.
 */
static int no_aesgcm;
static const char *aes_turns;
static size_t aes_asked;

int
crypto_aead_aes256gcm_is_available(void)
{
	static int (*real)(void);

	if (aes_turns != NULL && aes_asked < strlen(aes_turns))
		return (aes_turns[aes_asked++] == '1');
	aes_asked++;
	if (no_aesgcm)
		return (0);
	if (real == NULL && (*(void **)&real = dlsym(RTLD_NEXT,
	    "crypto_aead_aes256gcm_is_available")) == NULL)
		abort();
	return (real());
}

/* A's link of tunnel ${tun} and B's incoming one: does B have one up? */
static int
link_pair(const char *tun, struct link_info *la, struct link_info *lb)
{
	unsigned up, susp;

	(void)out_link(&A, tun, la);
	(void)in_links(&B, &up, &susp, lb);
	return (up == 1);
}

/* Both ends of A's tunnel ${tun}'s link (B's only one) seal with
 * ${aead}. */
static int
both_seal(const char *tun, const char *aead)
{
	struct link_info la, lb;
	int one = link_pair(tun, &la, &lb);

	printf("# sealing: A %s, B %s\n", la.sealing ? la.sealing : "none",
	    lb.sealing ? lb.sealing : "none");
	return (one && la.sealing != NULL && lb.sealing != NULL &&
	    strcmp(la.sealing, aead) == 0 && strcmp(lb.sealing, aead) == 0);
}

static void
test_keys(void)
{
	char puba[IDENT_B64_LEN], pubb[IDENT_B64_LEN], pubx[IDENT_B64_LEN];
	char path[80], last[16];
	struct link_info li;
	unsigned long ops;
	unsigned up, susp;
	uint8_t k[32];
	int i, fd;

	make_ident("a", puba);
	make_ident("b", pubb);
	make_ident("x", pubx);
	for (i = 0; i < NKEYS; i++) {
		snprintf(path, sizeof(path), "%s/%d.key", dir, i);
		memset(k, 'A' + i % 26, sizeof(k));
		k[0] = (uint8_t)i;
		if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) < 0 ||
		    write(fd, k, sizeof(k)) != (ssize_t)sizeof(k) ||
		    close(fd) != 0)
			abort();
	}

	snprintf(last, sizeof(last), "%d.key", NKEYS - 1);
	snprintf(path, sizeof(path), "%s/stranger.key", dir);
	memset(k, 'z', sizeof(k));
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) < 0 ||
	    write(fd, k, sizeof(k)) != (ssize_t)sizeof(k) || close(fd) != 0)
		abort();

	begin("keys: A proves the last of B's 128 keys");
	ops = keyed_pair("a", puba, pubb, last, k_up);
	/* Each side: its ephemeral, then ee, es and se. */
	ok(ops == 8, "keys: 8 X25519 operations for both sides (%lu), not "
	    "one more per key B tried", ops);
	(void)in_links(&B, &up, &susp, &li);
	ok(up == 1 && strcmp(li.identity, "node-a") == 0, "keys: B has A's "
	    "link up as %s", li.identity);
	ok(both_seal("k", seal_aesgcm_available() ? "aes-256-gcm" :
	    "chacha20-poly1305"), "keys: both ends seal with AES-256-GCM "
	    "where the CPU has AES, else ChaCha20-Poly1305");
	end("keys");

	begin("keys: neither CPU has AES");
	no_aesgcm = 1;
	(void)keyed_pair("a", puba, pubb, last, k_up);
	ok(both_seal("k", "chacha20-poly1305"), "keys: both ends seal with "
	    "ChaCha20-Poly1305");
	no_aesgcm = 0;
	end("keys");

	begin("keys: A proves a key B does not hold");
	ops = keyed_pair("a", puba, pubb, "stranger.key", b_refused);
	(void)in_links(&B, &up, &susp, &li);
	ok(up == 0 && B.auth_failures == 1 && !k_up() &&
	    strstr(li.last_error, "handshake failed") != NULL,
	    "keys: B refuses it, A's link never comes up (%lu X25519 "
	    "operations): %s", ops, li.last_error);
	end("keys");

	begin("keys: an identity B does not list, with the last key");
	ops = keyed_pair("x", puba, pubb, last, b_refused);
	(void)in_links(&B, &up, &susp, &li);
	ok(ops == 8 && up == 0 && B.auth_failures == 1 &&
	    strstr(li.last_error, "is not among the peers") != NULL,
	    "keys: refused for its identity, before any psk (%lu X25519 "
	    "operations): %s", ops, li.last_error);
	end("keys");

	for (i = 0; i < NKEYS; i++) {
		snprintf(path, sizeof(path), "%s/%d.key", dir, i);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/stranger.key", dir);
	unlink(path);
	remove_ident("a");
	remove_ident("b");
	remove_ident("x");
}

/* ----------------------------------------------------------- turns */

/*
 * Start B with identity b and peers "node-a" (${puba}), A with identity
 * ${ida} (no key either side), in the world lp is; the X25519 operations
 * until ${cond}, and in ${excl} those made in exclusive turns.
 */
static unsigned long
turns_pair(const char *ida, const char *puba, const char *pubb,
    int (*cond)(void), unsigned long *excl)
{
	unsigned long ops;

	start(&B, "b", "handshake_timeout = 1; listen = \"%s\"; "
	    "identity_file = \"%s/b.id\";\n"
	    "peers = ( { name = \"node-a\"; key = \"%s\"; } );\n"
	    "tunnels = ( { name = \"k\"; target = \"unix:%s\"; "
	    "encrypt = true; %s } );", SERVE, dir, puba, target, SIZES);
	start(&A, "a", "handshake_timeout = 1; source = \"%s\"; "
	    "identity_file = \"%s/%s.id\";\n"
	    "peers = ( { name = \"node-b\"; key = \"%s\"; } );\n"
	    "tunnels = ( { name = \"k\"; accept = \"unix:%s/k.sock\"; "
	    "peer = \"%s\"; encrypt = true; %s } );", SRC, dir, ida, pubb,
	    dir, SERVE, SIZES);
	x25519_ops = x25519_excl = 0;
	x25519_turn = loop_exclusive;
	ok(until(cond), "turns: %s", cond == k_up ? "the link is up" :
	    "B refuses the link");
	x25519_turn = NULL;
	ops = x25519_ops;
	*excl = x25519_excl;
	return (ops);
}

/* B has written message 2 of A's new link (A's first operation, B's 3). */
static int
b_answered(void)
{

	return (x25519_ops >= 4);
}

/*
 * In test_turns' world, at version 6 (A's link is up after its message
 * 3, and offers its suspended streams at once): B's worker waits from
 * its message 2 until then, so that its next drain finds message 3 and
 * the RESUME behind it.
 */
static void
test_turns_resume(const char *puba, const char *pubb)
{
	struct flow up = { -1, -1, 0, 0, 0, 1 }, down = up;

	begin("turns: a RESUME right behind message 3, in a world");
	start(&B, "b", "handshake_timeout = 1; listen = \"%s\"; "
	    "identity_file = \"%s/b.id\";\n"
	    "peers = ( { name = \"node-a\"; key = \"%s\"; } );\n"
	    "tunnels = ( { name = \"t\"; target = \"unix:%s\"; "
	    "resume_time = 1; %s } );", SERVE, dir, puba, target, SIZES);
	start(&A, "a", "handshake_timeout = 1; source = \"%s\"; "
	    "max_version = 6; identity_file = \"%s/a.id\";\n"
	    "peers = ( { name = \"node-b\"; key = \"%s\"; } );\n"
	    "tunnels = ( { name = \"t\"; accept = \"unix:%s/t.sock\"; "
	    "peer = \"%s\"; resume_time = 1; %s } );", SRC, dir, pubb, dir,
	    SERVE, SIZES);
	ok(until(both_up) && stream_open(&up, &down, 21) &&
	    carry(&up, &down, 4096), "turns: a stream carries 4 KiB each way "
	    "at version 6");
	ok(simverbs_cut(SERVE) == 1 && until(a_suspended), "turns: the path "
	    "breaks: the stream is suspended on both sides");
	x25519_ops = 0;
	ok(until(b_answered), "turns: B answers the new link's message 1");
	hold_b = 1;
	ok(until(a_up), "turns: A's link is up after its message 3, B's "
	    "worker held");
	hold_b = 0;
	ok(until(resumed) && carry(&up, &down, 4096), "turns: B takes "
	    "message 3, then the RESUME in an exclusive turn: the stream "
	    "resumes, every byte arrives");
	stream_close();
	end("turns");
}

static void
test_turns(void)
{
	char puba[IDENT_B64_LEN], pubb[IDENT_B64_LEN], pubx[IDENT_B64_LEN];
	struct loop *plain = lp;
	struct link_info la, lb;
	unsigned long ops, excl;
	unsigned up, susp;

	/* A world: the daemons' loop, and a worker each. */
	if ((lp = loop_new()) == NULL || loop_world_new(lp) != 0 ||
	    (wk[0] = loop_new()) == NULL || loop_world_join(wk[0], lp) != 0 ||
	    (wk[1] = loop_new()) == NULL || loop_world_join(wk[1], lp) != 0)
		abort();
	make_ident("a", puba);
	make_ident("b", pubb);
	make_ident("x", pubx);

	begin("turns: an identity B does not list, in a world");
	ops = turns_pair("x", puba, pubb, b_refused, &excl);
	(void)in_links(&B, &up, &susp, &lb);
	ok(ops == 8 && excl == 1 && strstr(lb.last_error,
	    "is not among the peers") != NULL, "turns: of the handshake's %lu "
	    "X25519 operations %lu ran in an exclusive turn (A's first, as "
	    "it connects), none of B's: %s", ops, excl, lb.last_error);
	end("turns");

	begin("turns: a listed identity, in a world");
	ops = turns_pair("a", puba, pubb, k_up, &excl);
	(void)out_link(&A, "k", &la);
	(void)in_links(&B, &up, &susp, &lb);
	ok(ops == 8 && excl == 1, "turns: of the handshake's %lu X25519 "
	    "operations %lu ran in an exclusive turn", ops, excl);
	ok(up == 1 && strcmp(lb.identity, "node-a") == 0 &&
	    strcmp(la.identity, "node-b") == 0 && la.sealing != NULL &&
	    lb.sealing != NULL, "turns: up on both sides as node-a and "
	    "node-b, sealed (%s, %s)", la.sealing ? la.sealing : "none",
	    lb.sealing ? lb.sealing : "none");
	end("turns");

	test_turns_resume(puba, pubb);
	remove_ident("a");
	remove_ident("b");
	remove_ident("x");
	loop_free(wk[0]);
	loop_free(wk[1]);
	wk[0] = wk[1] = NULL;
	loop_free(lp);
	lp = plain;
}

/* ---------------------------------------------------------- revoke */

static char logpath[80];
static char pra[IDENT_B64_LEN], prb[IDENT_B64_LEN], prx[IDENT_B64_LEN];
static uint64_t fails_before;

/* The daemons log warnings to logpath (${on}), or back as they were. */
static void
log_to_file(int on)
{
	char err[200];

	snprintf(logpath, sizeof(logpath), "%s/log", dir);
	if (log_file_open(on ? logpath : "", err, sizeof(err)) != 0)
		abort();
	if (getenv("LINK_SIM_DEBUG") == NULL) {
		log_set_level(on ? LOG_WARNING : LOG_CRIT);
		if (!on)
			unlink(logpath);
	}
}

/* Whether a line of the daemons' log holds ${a}, then ${b}. */
static int
logged(const char *a, const char *b)
{
	char line[2048];
	const char *at;
	FILE *fp;
	int found = 0;

	if ((fp = fopen(logpath, "r")) == NULL)
		return (0);
	while (!found && fgets(line, sizeof(line), fp) != NULL)
		found = (at = strstr(line, a)) != NULL && strstr(at, b) != NULL;
	fclose(fp);
	return (found);
}

/* B with identity rb, listing a key as a name, and target tunnel t. */
#define REVOKE_B	"handshake_timeout = 1; listen = \"%s\"; "	\
	"identity_file = \"%s/rb.id\";\n"				\
	"peers = ( { name = \"%s\"; key = \"%s\"; } );\n"		\
	"tunnels = ( { name = \"t\"; target = \"unix:%s\"; %s } );"

/* A with identity ra, ${peers}, and client tunnel t with ${extra}. */
#define REVOKE_A	"handshake_timeout = 1; source = \"%s\"; "	\
	"identity_file = \"%s/ra.id\";\npeers = ( %s );\n"		\
	"tunnels = ( { name = \"t\"; accept = \"unix:%s/t.sock\"; "	\
	"peer = \"%s\"; %s %s } );"

static void
revoke_a(int again, const char *peers, const char *extra)
{

	configure(&A, again, "a", REVOKE_A, SRC, dir, peers, dir, SERVE,
	    SIZES, extra);
}

/* Both up with identities, and a stream between them carrying bytes:
 * B's tunnel t with ${b_extra}, A's peers node-b${a_peers}, its tunnel
 * t with ${a_extra}. */
static void
revoke_pair(const char *what, const char *b_extra, const char *a_peers,
    const char *a_extra, struct flow *up, struct flow *down)
{
	char peers[200], extra[200];

	begin(what);
	snprintf(peers, sizeof(peers), "{ name = \"node-b\"; key = \"%s\"; }%s",
	    prb, a_peers);
	snprintf(extra, sizeof(extra), "%s %s", SIZES, b_extra);
	configure(&B, 0, "b", REVOKE_B, SERVE, dir, "node-a", pra, target,
	    extra);
	revoke_a(0, peers, a_extra);
	ok(until(both_up) && stream_open(up, down, 7) &&
	    carry(up, down, 4096), "%s: up, a stream carries", what);
}

static int
b_ended_it(void)
{
	struct link_info li;
	unsigned up, susp;

	(void)in_links(&B, &up, &susp, &li);
	return (up == 0 && susp == 0 && logged("[node-a] ended: revoked by "
	    "a reload: the peer's identity", "is not among the peers"));
}

static int
b_susp_reset(void)
{
	struct link_info li;
	unsigned up, susp;

	(void)in_links(&B, &up, &susp, &li);
	return (susp == 0 && ended(tgt_fd) && logged("[node-a]: 1 suspended "
	    "stream reset: revoked by a reload: the peer's identity",
	    "is not among the peers"));
}

static int
b_refused_anew(void)
{

	return (B.auth_failures > fails_before);
}

static int
a_ended_it(void)
{

	return (!a_up() && logged("[node-b] went down: revoked by a reload: "
	    "the peer's identity", "is not among the peers"));
}

static int
a_ended_it_tunnel(void)
{

	return (logged("[node-b] closed: revoked by a reload: the peer is "
	    "node-b, which tunnel t does not name", "in its peers"));
}

/* A's link to B failed again, its handshake refusing B (not a reload). */
static int
a_refused_anew(void)
{
	struct link_info li;

	(void)out_link(&A, "t", &li);
	return (li.state != LINK_UP && strstr(li.last_error, "revoked") ==
	    NULL && (strstr(li.last_error, "is not among the peers") != NULL ||
	    strstr(li.last_error, "does not name in its peers") != NULL));
}

static int
cli_ended(void)
{

	return (ended(cli_fd));
}

/* A new client of A's tunnel gets no stream: closed, B's target idle. */
static int
no_new_stream(void)
{
	char path[120];
	int fd, came;

	snprintf(path, sizeof(path), "%s/t.sock", dir);
	fd = cli_fd;
	cli_fd = unix_socket(path, 0);
	tgt_fd = -1;
	came = !until(cli_ended) || target_came();
	close(cli_fd);
	if (tgt_fd >= 0)
		close(tgt_fd);
	cli_fd = fd;
	tgt_fd = -1;
	return (!came);
}

/*
 * Case ${what}: up with A's peers node-b${before} and tunnel t's
 * ${extra}; A reloads ${after} and ${extra_after}: its link ends at once
 * as ${gone} says, the next one refuses B, no new client gets a stream.
 */
static void
revoke_by_a(const char *what, const char *before, const char *extra,
    const char *after, const char *extra_after, int (*gone)(void))
{

	struct flow up, down;

	revoke_pair(what, "", before, extra, &up, &down);
	revoke_a(1, after, extra_after);
	ok(until(gone), "%s: A ends its link to B at once, and says why",
	    what);
	ok(until(a_refused_anew), "%s: A's next link refuses B", what);
	ok(no_new_stream(), "%s: a new client of A gets no stream", what);
	ok(A.links_revoked == 1 && A.streams_revoked == 1 &&
	    B.links_revoked == 0 && B.streams_revoked == 0, "%s: A counts the "
	    "link and its stream revoked (%llu, %llu), B nothing", what,
	    (unsigned long long)A.links_revoked,
	    (unsigned long long)A.streams_revoked);
	stream_close();
	end("revoke");
}

/* B with identity rb, peers node-a and node-x, target tunnels t (with
 * ${t_extra}) and u; A with identity ra, peer node-b, client tunnels t and
 * u: a link each. */
#define REVOKE_B2	"handshake_timeout = 1; listen = \"%s\"; "	\
	"identity_file = \"%s/rb.id\";\n"				\
	"peers = ( { name = \"node-a\"; key = \"%s\"; }, "		\
	"{ name = \"node-x\"; key = \"%s\"; } );\n"			\
	"tunnels = ( { name = \"t\"; target = \"unix:%s\"; " SIZES " %s }, " \
	"{ name = \"u\"; target = \"unix:%s\"; " SIZES " } );"
#define REVOKE_A2	"handshake_timeout = 1; source = \"%s\"; "	\
	"identity_file = \"%s/ra.id\";\n"				\
	"peers = ( { name = \"node-b\"; key = \"%s\"; } );\n"		\
	"tunnels = ( { name = \"t\"; accept = \"unix:%s/t.sock\"; "	\
	"peer = \"%s\"; " SIZES " %s }, "					\
	"{ name = \"u\"; accept = \"unix:%s/u.sock\"; "		\
	"peer = \"%s\"; " SIZES " } );"

static void
revoke_b2(int again, const char *t_extra)
{

	configure(&B, again, "b", REVOKE_B2, SERVE, dir, pra, prx, target,
	    t_extra, target);
}

/* A's links up, and B with exactly two incoming links, up. */
static int
both_up2(void)
{
	struct link_info li;
	unsigned up, susp;

	return (a_up() && link_is_up(tunnel_find(&A, "u")->link) &&
	    in_links(&B, &up, &susp, &li) == 2 && up == 2);
}

/* B reset t's stream and said why (it reaches A only over a link). */
static int
b_reset_t(void)
{

	return (ended(tgt_fd) && logged("tunnel t stream ", "revoked by a "
	    "reload: the peer is node-a, which the tunnel no longer names in "
	    "its peers; resetting the stream"));
}

static int
both_reset_t(void)
{

	return (b_reset_t() && ended(cli_fd));
}

/* t's stream suspended on both sides (u's has no resume_time). */
static int
t_suspended(void)
{
	struct link_info li, bi;
	unsigned up, susp;

	out_link(&A, "t", &li);
	in_links(&B, &up, &susp, &bi);
	return (li.suspended == 1 && susp == 1);
}

/*
 * Case ${what}: B's reload takes node-a out of target tunnel t's peers
 * (t's own ${t_extra} before and after), with A's stream on t open
 * (${susp}: suspended by a broken path first): B resets it at once, both
 * links stay up, u's stream carries on, and no new client of A's t gets
 * a stream.
 */
static void
revoke_tunnel(const char *what, const char *t_extra, int susp)
{
	struct simverbs_peer dark = { .dark = 1 };
	struct flow up, down, uup, udown;
	struct link_info li;
	char extra[200];
	int ucli, utgt;

	begin(what);
	snprintf(extra, sizeof(extra), "peers = [ \"node-a\" ]; %s", t_extra);
	revoke_b2(0, extra);
	configure(&A, 0, "a", REVOKE_A2, SRC, dir, prb, dir, SERVE, t_extra,
	    dir, SERVE);
	ok(until(both_up2) && stream_open_on("u", &uup, &udown, 3) &&
	    carry(&uup, &udown, 4096), "%s: up, a stream on u carries", what);
	ucli = cli_fd;
	utgt = tgt_fd;
	ok(stream_open(&up, &down, 7) && carry(&up, &down, 4096),
	    "%s: a stream on t carries", what);
	if (susp) {
		simverbs_peer(SERVE, &dark);
		ok(simverbs_cut(SERVE) == 2 && until(t_suspended), "%s: the "
		    "path breaks: t's stream is suspended on both sides",
		    what);
	}
	snprintf(extra, sizeof(extra), "peers = [ \"node-x\" ]; %s", t_extra);
	revoke_b2(1, extra);
	ok(until(susp ? b_reset_t : both_reset_t), "%s: B resets t's stream "
	    "at once%s, and says why", what, susp ? ", not after resume_time" :
	    "");
	ok(B.streams_revoked == 1 && B.links_revoked == 0 &&
	    A.streams_revoked == 0, "%s: B counts one stream revoked (%llu), "
	    "no link (%llu); A nothing", what,
	    (unsigned long long)B.streams_revoked,
	    (unsigned long long)B.links_revoked);
	if (!susp) {
		ok(both_up2() && out_link(&A, "t", &li) != NULL &&
		    li.failures_total == 0, "%s: the links stay up", what);
		ok(carry(&uup, &udown, 4096), "%s: u's stream carries on",
		    what);
		ok(no_new_stream() && a_up(), "%s: a new client of A's t gets "
		    "no stream, its link up", what);
	}
	close(ucli);
	close(utgt);
	stream_close();
	end("revoke");
}

static void
test_revoke(void)
{
	struct simverbs_peer dark = { .dark = 1 };
	struct flow up, down;
	char peers[200];

	log_to_file(1);
	make_ident("ra", pra);
	make_ident("rb", prb);
	make_ident("rx", prx);

	revoke_pair("revoke: B's reload drops A", "", "", "", &up, &down);
	fails_before = B.auth_failures;
	configure(&B, 1, "b", REVOKE_B, SERVE, dir, "node-x", prx, target,
	    SIZES);
	ok(until(b_ended_it), "revoke: B ends A's link at once, and says why");
	ok(until(ended_target), "revoke: B resets its stream (no resume "
	    "waits for a peer it no longer trusts)");
	ok(until(b_refused_anew) && !a_up(), "revoke: B refuses A's next "
	    "link");
	ok(B.links_revoked == 1 && B.streams_revoked == 1 &&
	    A.links_revoked == 0 && A.streams_revoked == 0, "revoke: B counts "
	    "the link and its stream revoked (%llu, %llu), A nothing",
	    (unsigned long long)B.links_revoked,
	    (unsigned long long)B.streams_revoked);
	stream_close();
	end("revoke");

	revoke_pair("revoke: B's reload drops A, its stream suspended",
	    "resume_time = 60;", "", "resume_time = 60;", &up, &down);
	simverbs_peer(SERVE, &dark);
	ok(simverbs_cut(SERVE) == 1 && until(a_suspended), "revoke: the path "
	    "breaks: the stream is suspended on both sides");
	configure(&B, 1, "b", REVOKE_B, SERVE, dir, "node-x", prx, target,
	    SIZES " resume_time = 60;");
	ok(until(b_susp_reset), "revoke: B resets it at once, not after "
	    "resume_time, and says why");
	ok(B.links_revoked == 1 && B.streams_revoked == 1, "revoke: B counts "
	    "the failed link and its suspended stream revoked (%llu, %llu)",
	    (unsigned long long)B.links_revoked,
	    (unsigned long long)B.streams_revoked);
	stream_close();
	end("revoke");

	snprintf(peers, sizeof(peers), "{ name = \"node-x\"; key = \"%s\"; }",
	    prx);
	revoke_by_a("revoke: A's reload drops B", "", "", peers, "",
	    a_ended_it);
	snprintf(peers, sizeof(peers), "{ name = \"node-b\"; key = \"%s\"; }, "
	    "{ name = \"node-x\"; key = \"%s\"; }", prb, prx);
	revoke_by_a("revoke: A's reload takes B out of tunnel t's peers",
	    strchr(peers, ','), "peers = [ \"node-b\" ];", peers,
	    "peers = [ \"node-x\" ];", a_ended_it_tunnel);

	revoke_tunnel("revoke: B's reload takes A out of target tunnel t's "
	    "peers", "", 0);
	revoke_tunnel("revoke: B's reload takes A out of target tunnel t's "
	    "peers, its stream suspended", "resume_time = 60;", 1);

	log_to_file(0);
	remove_ident("ra");
	remove_ident("rb");
	remove_ident("rx");
}

/* ------------------------------------------------------------ aead */

/*
 * Case ${what}: A's CPU answers ${turns}[0] for AES, B's ${turns}[1], one
 * with and one without.  Both ends must seal with ChaCha20-Poly1305 (an
 * end that chose alone would seal with what the other cannot open), show
 * it in their links tables, and carry a stream's bytes both ways.
 */
static void
aead_mixed(const char *what, const char *turns)
{
	struct flow up, down;

	aes_turns = turns;
	aes_asked = 0;
	revoke_pair(what, "", "", "", &up, &down);
	ok(aes_asked == 2 && simverbs_attempts() == 1, "%s: each side asked "
	    "its CPU once (%zu questions), in one attempt", what, aes_asked);
	ok(both_seal("t", "chacha20-poly1305"), "%s: both ends seal with "
	    "ChaCha20-Poly1305, and say so", what);
	ok(carry(&up, &down, 262144), "%s: the stream carries 256 KiB more "
	    "each way", what);
	stream_close();
	aes_turns = NULL;
	end("aead");
}

static void
test_aead(void)
{

	make_ident("ra", pra);
	make_ident("rb", prb);
	aead_mixed("aead: A's CPU has AES, B's has not", "10");
	aead_mixed("aead: B's CPU has AES, A's has not", "01");
	remove_ident("ra");
	remove_ident("rb");
}

/* ---------------------------------------------------------- iwarp */

/* Both daemons' links run without immediates, or both with. */
static int
both_notify(int want)
{
	struct link_info la, lb;

	return (link_pair("t", &la, &lb) && la.have_stats && lb.have_stats &&
	    (la.st.notify != 0) == want && (lb.st.notify != 0) == want &&
	    la.version == WIRE_VERSION && lb.version == WIRE_VERSION);
}

/* Both daemons' links sent FENCEs on lane 0 (iWARP, 2 lanes). */
static int
both_fenced(void)
{
	struct link_info la, lb;

	return (link_pair("t", &la, &lb) && la.st.lanes == 2 &&
	    lb.st.lanes == 2 && la.st.lane[0].fences > 0 &&
	    lb.st.lane[0].fences > 0);
}

/* The link runs version 11 without immediates: one lane, no fence. */
static int
one_lane_11(void)
{
	struct link_info la, lb;

	return (link_pair("t", &la, &lb) && la.version == 11 &&
	    lb.version == 11 && la.st.notify && lb.st.notify &&
	    la.st.lanes == 1 && lb.st.lanes == 1 &&
	    la.st.lane[0].fences == 0 && lb.st.lane[0].fences == 0);
}

/*
 * Devices without immediate data, as iWARP's (the fabric refuses them):
 * both daemons' links run without, say so in their up lines and links
 * tables, and a sealed stream carries both ways; a stream that can
 * resume does when the path breaks, on a link that runs the same.
 */
static int
a_stepdown_refused(void)
{

	return (A.stepdowns_refused >= 2);
}

/* Every attempt so far said the newest version. */
static int
all_newest(void)
{
	size_t i;

	for (i = 0; i < simverbs_attempts(); i++)
		if (att(i)->version != WIRE_VERSION)
			return (0);
	return (simverbs_attempts() >= 2);
}

static void
test_iwarp(void)
{
	struct flow up, down, up2 = { -1, -1, 0, 0, 0, 1 }, down2 = up2;
	struct simverbs_peer older = { .speaks = 10 };
	char extra[200];
	int refused;

	make_ident("ra", pra);
	make_ident("rb", prb);
	log_to_file(1);
	log_set_level(LOG_INFO);
	simverbs_iwarp(1);
	revoke_pair("iwarp: devices without immediates", "", "", "", &up,
	    &down);
	ok(both_notify(1) && logged("link to " SERVE " is up (device sim0, "
	    "protocol version 12, 2 lanes, no immediates,", "sealed") &&
	    logged("authenticated as node-a", "protocol version 12, 2 lanes, "
	    "no immediates)"), "iwarp: both daemons' links run without "
	    "immediates and on two lanes, and their up lines say so");
	ok(carry(&up, &down, 262144), "iwarp: the sealed stream carries 256 "
	    "KiB more each way");
	ok(both_fenced(), "iwarp: both daemons fenced lane 0 before its "
	    "streams used lane 1");
	stream_close();
	end("iwarp");

	/* A daemon held to version 11, which does not fence: one lane. */
	begin("iwarp: B has max_version = 11");
	start(&B, "b", "handshake_timeout = 1; listen = \"%s\"; "
	    "max_version = 11;\ntunnels = ( { name = \"t\"; target = "
	    "\"unix:%s\"; %s } );", SERVE, target, SIZES);
	start_a("");
	ok(until(both_up) && stream_open(&up2, &down2, 13) &&
	    carry(&up2, &down2, 65536) && one_lane_11(), "iwarp: a link of "
	    "version 11 without immediates runs one lane on both daemons, "
	    "with no fence, and carries 64 KiB each way");
	stream_close();
	end("iwarp: version 11");
	up2 = (struct flow){ -1, -1, 0, 0, 0, 1 };
	down2 = up2;
	log_to_file(0);
	remove_ident("ra");
	remove_ident("rb");

	snprintf(extra, sizeof(extra), "key_file = \"%s/key\"; resume_time = "
	    "1;", dir);
	pair("iwarp: a stream that can resume", NULL, extra, extra);
	ok(until(both_up) && stream_open(&up2, &down2, 13) &&
	    carry(&up2, &down2, 65536) && both_notify(1), "iwarp: a stream "
	    "carries 64 KiB each way, without immediates");
	flow_put(&up2, up2.sent + 32768);
	flow_put(&down2, down2.sent + 32768);
	(void)loop_run_once(lp, 0);
	ok(simverbs_cut(SERVE) == 1 && until(a_suspended), "iwarp: the path "
	    "breaks with WRITEs in flight: the stream is suspended on both "
	    "sides");
	ok(until(resumed) && carry(&up2, &down2, 65536) && both_notify(1),
	    "iwarp: it resumes on a new link without immediates, every byte "
	    "once, in order (%llu and %llu)", (unsigned long long)up2.got,
	    (unsigned long long)down2.got);
	stream_close();
	end("iwarp: resume");

	/* An older peer's note: no step-down, since below 11 nothing runs. */
	pair("iwarp: a peer of version 10", &older, "", "");
	refused = until(a_stepdown_refused) && A.stepdowns == 0 &&
	    all_newest();
	ok(refused, "iwarp: a peer that speaks 10 at most is not stepped "
	    "down to (%zu attempts, each in version %u)", simverbs_attempts(),
	    WIRE_VERSION);
	simverbs_iwarp(0);
	end("iwarp: older peer");
}

/* ---------------------------------------------------------- forged */

static unsigned forged_n;	/* WRITEs forged so far on the chain */
static int forged_side;		/* whose WRITEs: 0 A's, 1 B's */

/* The log line of the daemon that found forged WRITE forged_n. */
static int
forged_said(const char *what)
{

	return (logged(forged_side ? "[node-b] went down: sealed record "
	    "failed authentication" : "[node-a] ended: sealed record failed "
	    "authentication", what));
}

/* The peer of forged_side found forged WRITE forged_n and suspended
 * the stream, and said so; so did the other side. */
static int
forged_susp(void)
{
	char what[120];

	snprintf(what, sizeof(what), "1 stream suspended for up to 60 s (%u "
	    "of %u forged messages their chain of links survives)", forged_n,
	    LINK_FORGED_MAX);
	return (a_suspended() && forged_said(what));
}

/* Resumed on both sides, forged_n times on the chain. */
static int
forged_resumed(void)
{

	return (stats(&A, "t")->resumes == forged_n &&
	    stats(&B, "t")->resumes == forged_n && both_up());
}

/* B refused a resume. */
static int
b_refused_resume(void)
{

	return (B.resume_refusals > 0);
}

/*
 * One forged WRITE too many: the side that found it reset the stream
 * and said why.  (When B did, its refusal of A's resume proves nothing:
 * A's end waits out its resume_time.)
 */
static int
forged_reset(void)
{
	char what[120];

	snprintf(what, sizeof(what), "1 stream reset, not suspended: their "
	    "chain of links survives %u forged messages, not %u",
	    LINK_FORGED_MAX, forged_n);
	return ((forged_side ? ended(cli_fd) : ended(tgt_fd)) &&
	    forged_said(what));
}

/*
 * An injector overwrites a sealed WRITE from A (${side} 0) or B (1)
 * before its tag comes (simverbs_overwrite): the other side's open fails
 * and it ends the link, and the stream is suspended on both sides, then
 * resumes with every byte; until the chain saw LINK_FORGED_MAX such
 * ends: the next resets it.
 */
static void
forged_chain(int side)
{
	struct flow up, down, *f;
	const char *who = side ? "B" : "A", *finder = side ? "A" : "B";
	int n;

	forged_side = side;
	revoke_pair(side ? "forged: B's sealed WRITEs overwritten on the wire" :
	    "forged: A's sealed WRITEs overwritten on the wire",
	    "resume_time = 60;", "", "resume_time = 60;", &up, &down);
	f = side ? &down : &up;
	for (forged_n = 1; forged_n <= LINK_FORGED_MAX; forged_n++) {
		ok(simverbs_overwrite(SERVE, side) == 1, "forged: %u: the "
		    "next WRITE from %s is overwritten before its tag",
		    forged_n, who);
		flow_put(f, f->sent + 8192);
		ok(until(forged_susp), "forged: %u: %s's open fails, it ends "
		    "the link, says so, and the stream is suspended on both "
		    "sides", forged_n, finder);
		n = until(forged_resumed) && carry(&up, &down, 65536);
		ok(n, "forged: %u: it resumes on a new link, and every byte "
		    "arrives, in order, once (%llu and %llu)", forged_n,
		    (unsigned long long)up.got, (unsigned long long)down.got);
	}
	ok(simverbs_overwrite(SERVE, side) == 1, "forged: %u: once more",
	    forged_n);
	flow_put(f, f->sent + 8192);
	ok(until(forged_reset), "forged: %u: %s resets the stream and says "
	    "why, not suspended", forged_n, finder);
	ok((side ? A.forged : B.forged) == LINK_FORGED_MAX + 1 &&
	    (side ? B.forged : A.forged) == 0, "forged: %s counts %u forged "
	    "messages, %s none (%llu, %llu)", finder, LINK_FORGED_MAX + 1, who,
	    (unsigned long long)(side ? A.forged : B.forged),
	    (unsigned long long)(side ? B.forged : A.forged));
	if (!side)
		ok(until(b_refused_resume) && !ended(cli_fd) &&
		    A.resume_timeouts == 0, "forged: B refuses A's resume "
		    "without a proof: A's end stays suspended for its "
		    "resume_time");
	stream_close();
	end("forged");
}

static void
test_forged(void)
{

	log_to_file(1);
	make_ident("ra", pra);
	make_ident("rb", prb);
	forged_chain(0);
	forged_chain(1);
	log_to_file(0);
	remove_ident("ra");
	remove_ident("rb");
}

/* ---------------------------------------------------------- origin */

/* B with identity rb, the key, and tunnel t with proxy_protocol. */
#define ORIGIN_B	"handshake_timeout = 1; listen = \"%s\"; "	\
	"identity_file = \"%s/rb.id\";\nkey_file = \"%s/key\";\n"	\
	"peers = ( { name = \"node-a\"; key = \"%s\"; } );\n"		\
	"tunnels = ( { name = \"t\"; target = \"unix:%s\"; "		\
	"proxy_protocol = \"v2\"; encrypt = false; %s %s } );"

static int
origin_refused(void)
{

	return (logged("refused a stream: a peer without an identity is not "
	    "trusted for client addresses", "proxy_trust_key_holders"));
}

/*
 * A new client of A's tunnel: whether its stream reaches B's target, or
 * (${until_cond} not NULL) whether it has once ${until_cond} holds.
 */
static int
stream_reaches(int (*until_cond)(void))
{
	char path[120];
	int came;

	snprintf(path, sizeof(path), "%s/t.sock", dir);
	cli_fd = unix_socket(path, 0);
	tgt_fd = -1;
	came = until_cond != NULL ? !until(until_cond) || target_came() :
	    until(target_came);
	stream_close();
	return (came);
}

/*
 * B has an identity; A proves B's key but no identity.  B takes A's
 * streams on its keyed tunnel, but believes the client address A claims
 * for its PROXY header only with proxy_trust_key_holders.
 */
static void
test_origin(void)
{
	const char *what = "origin: a peer without an identity";

	log_to_file(1);
	make_ident("rb", prb);
	make_ident("ra", pra);
	begin(what);
	configure(&B, 0, "b", ORIGIN_B, SERVE, dir, dir, pra, target, SIZES,
	    "");
	start(&A, "a", "handshake_timeout = 1; source = \"%s\"; "
	    "key_file = \"%s/key\";\ntunnels = ( { name = \"t\"; accept = "
	    "\"unix:%s/t.sock\"; peer = \"%s\"; %s } );", SRC, dir, dir,
	    SERVE, SIZES);
	ok(until(a_up), "%s: its keyed link is up", what);
	ok(!stream_reaches(origin_refused), "%s: is not believed for client "
	    "addresses, and its stream is refused", what);
	configure(&B, 1, "b", ORIGIN_B, SERVE, dir, dir, pra, target, SIZES,
	    "proxy_trust_key_holders = true;");
	ok(stream_reaches(NULL), "%s: with proxy_trust_key_holders, its stream "
	    "reaches the target", what);
	end("origin");
	remove_ident("ra");
	remove_ident("rb");
	log_to_file(0);
}

int
main(void)
{
	char key[80];
	int fd;

	log_init(getenv("LINK_SIM_DEBUG") != NULL ? LOG_DEBUG : LOG_CRIT);
	*(void **)&real_gai = dlsym(RTLD_NEXT, "getaddrinfo");
	if (real_gai == NULL)
		abort();
	x25519_count_init();
	snprintf(dir, sizeof(dir), "/tmp/link-sim.XXXXXX");
	if (secmem_init() != 0 || mkdtemp(dir) == NULL ||
	    (lp = loop_new()) == NULL)
		abort();
	snprintf(target, sizeof(target), "%s/target.sock", dir);
	snprintf(key, sizeof(key), "%s/key", dir);
	if ((fd = open(key, O_WRONLY | O_CREAT | O_EXCL, 0600)) < 0 ||
	    write(fd, "0123456789abcdef0123456789abcdef", 32) != 32 ||
	    close(fd) != 0)
		abort();
	tgt_lfd = unix_socket(target, 1);

	test_rotation();
	test_addresses();
	test_entries_addresses();
	test_stepdown();
	test_min_version();
	test_talked_down();
	test_busy();
	test_resume();
	test_proof();
	test_proof_lost();
	test_denied();
	test_lanes();
	test_quiet();
	test_max_version();
	test_keys();
	test_turns();
	test_revoke();
	test_aead();
	test_iwarp();
	test_forged();
	test_origin();

	close(tgt_lfd);
	unlink(target);
	unlink(key);
	loop_free(lp);
	(void)rmdir(dir);
	return (tap_done());
}
