/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * sim: two rstream engines joined by the in-memory fabric, driven at
 * random from a seed, with every invariant checked on every run:
 *
 *  - each stream's bytes arrive exactly and in order, both directions;
 *  - end-of-stream comes only after all bytes, and only for streams that
 *    were shut down; resets and refusals only where the plan has them;
 *  - no deadlock, with queue depths at the protocol minimum and 4 KiB
 *    rings; the run ends with every stream released and both engines idle;
 *  - never more receives consumed than posted (the fabric reports RNR);
 *    send queues never overflow; no WRITE lands outside a receive ring;
 *  - a misbehaving peer ends the link with a protocol violation, and the
 *    bytes delivered before it stay correct;
 *  - with link losses (the "resume" configuration, or -l for all): the
 *    link breaks at random points, some WRs in flight landing unseen, and
 *    a new link resumes the streams both sides kept.  A kept open stream
 *    is suspended, never reset, by the loss; the others are reset.  Every
 *    byte still arrives exactly once, in order; the application keeps
 *    reading and writing suspended streams; and when a resume runs
 *    undisturbed (no second loss before it settles, no refusal), every
 *    stream suspended on both sides is resumed on both.  Runs where losses
 *    pile up, a resume is refused or never offered, or an adoption fails
 *    may lose streams, but only with a resume reason and only streams
 *    that were suspended; they are counted.  From version 5 (three runs
 *    in four; the others are capped at version 4) each link of a chain
 *    has a resume secret of its own, derived from the one before (a
 *    stand-in for auth.c's ratchet): both sides must prove the secret
 *    they hold and derive the same next one, however the losses fall
 *    (a run fails if one side's proof does not match the other's); a
 *    many-seed run fails if no chain ever moved on.
 *  - ring resizes (protocol version 4, on links that cannot resume): half
 *    the streams start with 4 KiB rings that may grow to a random limit;
 *    both sides trim at random points, so shrinks race data in flight,
 *    and a slow reader's full ring halves under unread bytes;
 *    ring memory comes from callbacks that sometimes refuse.  The
 *    application reads and writes wherever the engine says its rings are
 *    now, which must be a ring the stream holds; a receive ring the
 *    engine gives back is deregistered and freed at once, so a late WRITE
 *    into it is caught; every byte is still checked.  A many-seed run
 *    fails if resizable streams never grew, never shrank or never
 *    halved a receive ring.
 *  - sealing: half the runs seal their links (lib/seal, the daemon's own
 *    sealing, new keys on every link; AES-256-GCM in half of them where
 *    the CPU has it, else ChaCha20-Poly1305), and every invariant above
 *    holds the same; a resume sends kept bytes again under the new link's
 *    keys.  Half the sealed runs count their messages from just below a
 *    rekey boundary (SEAL_REKEY_EVERY), so that their keys are renewed
 *    mid-run, with WRITEs outstanding and kept bytes restored across it.
 *    A run that ends with its link up has every message sealed at one end
 *    opened at the other, on each lane; and no keystream (key and nonce)
 *    is used twice on any lane of any link of a run (fabric.c, ks_add).  In the faults configuration a sealed run's
 *    fault is a bit the wire flips in one message: the link must end with
 *    the seal error.  A many-seed run fails if no run sealed, none sealed
 *    with either AEAD (where both exist), none crossed a rekey boundary,
 *    or none was tampered with.
 *  - iWARP: a run in four that reaches version 11 runs on a fabric that
 *    refuses immediates (one engine in two says its device has none,
 *    and either hello rules): data WRITEs are announced by the SEND
 *    after them, and every invariant above holds the same.  That fabric
 *    completes a WR when it is posted, as iWARP does once TCP took its
 *    bytes, and delivers it later, in any interleaving with the other
 *    lane.  A link of two lanes there (version 12) fences every lane
 *    switch: FENCE records on the old lane, answered by FENCED.  A
 *    many-seed run fails if none ran so, or none of those sealed; and,
 *    with the lanes configurations, if none ran two lanes, or no fence
 *    went on either lane.
 *
 * Usage: sim [-c CONFIG] [-s SEED] [-n COUNT] [-l] [-v] [-H]
 * Without -s it runs COUNT seeds of each configuration (or of CONFIG) and
 * prints TAP; a failing seed is printed with the command that replays it.
 * -H prints, per configuration, a hash of everything its runs put on the
 * wire, fed back and reported (fabric.h's trace): a change meant to keep
 * the engine's behaviour (a refactor) must keep every hash.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include <signal.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "engine.h"
#include "engine_io.h"
#include "engine_stream.h"
#include "fabric.h"
#include "ring.h"
#include "seal.h"
#include "wire.h"

struct config {
	const char *name;
	const char *desc;
	unsigned seeds;
	uint32_t sq_min, sq_max, rq_min, rq_max;
	uint32_t ring_min_log, ring_max_log;
	uint32_t max_streams;
	uint32_t streams_max;		/* streams opened per run, at most */
	uint64_t bytes_max;		/* per direction per stream */
	int faults;
	unsigned losses;		/* link losses per run, at most */
	int lanes;			/* engine_conf.lanes (2: a latency lane) */
};

static const struct config configs[] = {
	{ "tiny", "queue depths at the minimum (4), 4 KiB rings",
	    400, 4, 4, 4, 4, 12, 12, 4, 8, 48 << 10, 0, 0, 0 },
	{ "mixed", "random depths 4-64, rings 4-64 KiB, stream limit 16",
	    400, 4, 64, 4, 64, 12, 16, 16, 24, 128 << 10, 0, 0, 0 },
	{ "bulk", "deep queues, rings up to 1 MiB, MiBs per stream",
	    40, 64, 256, 64, 256, 16, 20, 8, 4, 3 << 20, 0, 0, 0 },
	{ "faults", "a hostile peer injects invalid input mid-transfer",
	    200, 4, 32, 4, 32, 12, 15, 16, 12, 64 << 10, 1, 0, 0 },
	{ "resume", "the link is lost at random points and streams resume",
	    300, 4, 32, 4, 32, 12, 15, 16, 12, 64 << 10, 0, 3, 0 },
	{ "lanes", "two lanes (version 8), random depths, rings 4-64 KiB",
	    400, 4, 64, 4, 64, 12, 16, 16, 24, 128 << 10, 0, 0, 2 },
	{ "lanes-resume", "two lanes, the link lost at random points",
	    300, 4, 32, 4, 32, 12, 15, 16, 12, 64 << 10, 0, 3, 2 },
};
#define NCONFIGS (sizeof(configs) / sizeof(configs[0]))

#define MAXLOSS	8	/* link losses per run, at most (-l included) */
#define MAXOLD	8	/* failed engines a side holds at once */

static int verbose;
static int all_lose;		/* -l: link losses in every configuration */
static int show_trace;		/* -H: print each configuration's trace */
static uint64_t trace_all;	/* the runs' fab traces, folded (-H) */
static uint64_t total_bytes, total_streams, total_eofs;
static uint64_t total_losses, total_susp, total_resumed, total_lost;
static uint64_t total_strict, total_unseen, total_ratchets;
static uint64_t total_rs, total_grows, total_shrinks, total_refused;
static uint64_t all_rs, all_grows, all_shrinks, all_refused;
static uint64_t total_halves, all_halves;
static uint64_t all_losses, all_ratchets;
static uint64_t all_wstalls, all_wsmall;	/* window stalls; small windows */
static uint64_t all_sealed, all_tampered;	/* sealed runs; caught flips */
static uint64_t all_iwarp, all_iwarp_sealed;	/* runs without immediates */
static uint64_t all_iwarp_lanes;	/* ... of two lanes */
static uint64_t all_fences[2];		/* FENCEs sent, per lane */
static uint64_t all_aesgcm, all_near;	/* of them: AES-GCM; near a rekey */
static uint64_t all_rekeyed;			/* of those: crossed it */

/* A sealed run near a rekey boundary starts this many messages before. */
#define NEAR_REKEY	256

#define SEAL_ERR	"sealed record failed authentication (tampered or " \
	"injected)"

/* Resizable streams start with rings of this many bytes. */
#define RS_START	4096
/* Rings a stream holds at once: send, old send, receive, old, announced. */
#define MAXRINGS	8

/* ---------------------------------------------------------------- rng */

static uint64_t
splitmix(uint64_t x)
{

	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return (x ^ (x >> 31));
}

struct rng {
	uint64_t s;
};

static uint64_t
rnd(struct rng *r)
{

	r->s = splitmix(r->s);
	return (r->s);
}

static uint64_t
below(struct rng *r, uint64_t n)
{

	return (n ? rnd(r) % n : 0);
}

/* The byte at position ${p} of the stream keyed ${key}. */
static uint8_t
gen(uint64_t key, uint64_t p)
{

	return ((uint8_t)(splitmix(key ^ (p >> 3) * 0x100000001b3ULL) >>
	    (8 * (p & 7))));
}

/* ---------------------------------------------------------------- plans */

/* What happens to a stream, derived from its serial on both sides. */
enum { P_NORMAL, P_OPENER_RESETS, P_ACCEPTOR_RESETS, P_REFUSED };

struct plan {
	int kind;
	uint64_t bytes[2];	/* [0]: opener->acceptor, [1]: back */
	uint64_t reset_at;	/* bytes the resetting side sends first */
	uint32_t ring_log[2][2];	/* [side role][0 tx, 1 rx] */
	int slow_reader[2];
	int keep[2];		/* [side role]: engine_keep (resume runs) */
};

static void
make_plan(const struct config *c, uint64_t seed, uint64_t serial,
    struct plan *p)
{
	struct rng r = { splitmix(seed * 1000003 + serial) };
	uint64_t k = below(&r, 100);
	int i, j;

	memset(p, 0, sizeof(*p));
	p->kind = k < 80 ? P_NORMAL : k < 88 ? P_OPENER_RESETS :
	    k < 95 ? P_ACCEPTOR_RESETS : P_REFUSED;
	for (i = 0; i < 2; i++) {
		/* Some streams are empty one way, to test bare half-close. */
		p->bytes[i] = below(&r, 8) == 0 ? 0 : below(&r, c->bytes_max + 1);
		p->slow_reader[i] = below(&r, 6) == 0;
		for (j = 0; j < 2; j++)
			p->ring_log[i][j] = c->ring_min_log +
			    (uint32_t)below(&r, c->ring_max_log -
			    c->ring_min_log + 1);
	}
	p->reset_at = below(&r, (p->bytes[0] < p->bytes[1] ?
	    p->bytes[0] : p->bytes[1]) + 1);
	/* Drawn last: the plans of runs without losses stay as they were. */
	for (i = 0; i < 2; i++)
		p->keep[i] = below(&r, 10) != 0;
}

/* ---------------------------------------------------------------- state */

/* A ring a stream holds: the first two, or one the engine asked for. */
struct sring {
	uint8_t *p;
	uint32_t size;
	uint32_t key;		/* a receive ring's rkey */
	int rx;			/* a receive ring (registered) */
};

struct astream {
	uint64_t serial;
	int opener;		/* this side opened it */
	struct plan plan;
	/*
	 * Every ring it holds; all are freed when it is RELEASED.  Which of
	 * them it reads and writes now, only the engine says (engine_tx_base,
	 * engine_rx_base): rings resize under the application.
	 */
	struct sring ring[MAXRINGS];
	int nring;
	uint32_t tx_max, rx_max;	/* resizable up to these; 0: fixed */
	uint64_t tx_total, tx_done, rx_expect, rx_got;
	int shut, opened, eof, closed, reset_seen, refused;
	/* Where it lives now: a stream moves with a resume. */
	struct engine *e;
	uint32_t id;
	size_t idx;		/* in its side's all[] */
	int expect_susp;	/* at the loss: must be suspended, not reset */
	int suspended;		/* SUSPENDED seen, RESUMED not yet */
	int susp_loss;		/* the last loss that suspended it, or -1 */
};

/* Does the plan have this side (or the peer) reset the stream? */
static int
i_reset(const struct astream *a)
{

	return (a->plan.kind == (a->opener ? P_OPENER_RESETS :
	    P_ACCEPTOR_RESETS));
}

static int
peer_resets(const struct astream *a)
{

	return (a->plan.kind == (a->opener ? P_ACCEPTOR_RESETS :
	    P_OPENER_RESETS));
}

/* A resume secret's length (auth.c's). */
#define SECRET	32

/* A failed engine a side keeps for a resume. */
struct oldeng {
	struct engine *e;
	uint8_t token[WIRE_NONCE_LEN];	/* the resume chain it belongs to */
	uint8_t sec[SECRET], prev[SECRET];	/* and its secrets (has_prev) */
	int has_prev;
	int loss;			/* the loss that made it */
	uint64_t deadline;		/* step to give up at (resume_time) */
	int abandon;			/* give up after this step */
	uint16_t reason;		/* ... with this reason */
};

struct run;

struct side {
	struct run *R;
	int i;
	struct astream **all;	/* every stream the application holds */
	size_t n, cap;
	uint64_t next_serial;	/* streams this side opens: serial*2+side */
	uint32_t opens_left;
	struct oldeng old[MAXOLD];
	int nold;
	struct engine *src;	/* adopt moves streams from this engine */
	/*
	 * Side 0: the token of its resume chain (it names the streams it
	 * suspends).  Side 1: the token its current engine answers to.
	 */
	uint8_t token[WIRE_NONCE_LEN];
	/*
	 * The chain's secret (side 0), or the current engine's (side 1),
	 * which keeps the one it replaced until the peer named a stream.
	 */
	uint8_t sec[SECRET], prev[SECRET];
	int has_prev;
	unsigned denied_link;	/* side 0: link whose refusal was seen */
	uint64_t resume_at;	/* side 0: step to offer the resume at */
	uint64_t allocs, refused;	/* engine_mem: rings given, refused */
	uint64_t halves;	/* of them, receive rings halved (not to the
				   start) */
};

/* One link loss and what became of its resume. */
struct loss {
	int strict;	/* undisturbed: every stream suspended both ways resumes */
	int settled;	/* its resume is over */
	int deny;	/* side 1 refuses the resume */
	int noresume;	/* side 0 does not offer one */
};

/* Per stream serial: the loss that last suspended it, by side. */
struct fate {
	int susp[2];
};

struct run {
	const struct config *c;
	uint64_t seed;
	struct rng r;
	/*
	 * Resizing's own draws (which streams, their limits, refusals,
	 * trims): runs on links that cannot resize stay as they were.
	 */
	struct rng rz;
	int resizing;		/* the link can resize rings */
	/*
	 * The scheduler's own draws (chunk, window, clock, shares,
	 * weights): its own stream of them, so the rest stay as they were.
	 */
	struct rng rw;
	uint64_t now;		/* the engines' clock, ns */
	uint64_t win_most[2];	/* each side's largest window */
	struct fab f;
	struct side side[2];
	int failed;
	char err[512];
	int link_dead;
	int sealed;		/* the links seal (fab_seal_at) */
	uint64_t seal_from;	/* from this message number on */
	uint32_t next_rkey;
	int progressed;
	uint64_t step;
	/* Link losses. */
	unsigned nloss, loss_max;
	int messy;		/* losses may come before a resume settled */
	int v4;			/* both sides capped at version 4: no ratchet */
	int iwarp;		/* no immediates: fab.no_imm, engine_notify */
	uint64_t next_loss;
	uint64_t stall_from;	/* the dying link delivers little from here */
	struct loss loss[MAXLOSS];
	struct fate *fate;
	size_t nfate;
	int at_loss;		/* draining the engines that just failed */
	uint64_t fault_at;	/* faults: the peer turns hostile from here */
};

static int rfail(struct run *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static int
rfail(struct run *R, const char *fmt, ...)
{
	va_list ap;

	if (R->failed)
		return (-1);
	va_start(ap, fmt);
	vsnprintf(R->err, sizeof(R->err), fmt, ap);
	va_end(ap);
	R->failed = 1;
	return (-1);
}

static uint64_t
dirkey(uint64_t serial, int dir)
{

	return (splitmix(serial * 2 + (uint64_t)dir + 0x5eed));
}

static int
losing(const struct run *R)
{

	return (R->loss_max > 0);
}

static struct fate *
fate(struct run *R, uint64_t serial)
{

	if (serial >= R->nfate)
		abort();
	return (&R->fate[serial]);
}

static void
side_add(struct side *S, struct astream *a)
{

	if (S->n == S->cap) {
		S->cap = S->cap ? S->cap * 2 : 16;
		if ((S->all = realloc(S->all, S->cap * sizeof(*S->all))) ==
		    NULL)
			abort();
	}
	a->idx = S->n;
	S->all[S->n++] = a;
}

static void
side_del(struct side *S, struct astream *a)
{

	S->all[a->idx] = S->all[--S->n];
	S->all[a->idx]->idx = a->idx;
}

/* The stream side ${i}'s application holds as ${id} of ${e}, or NULL. */
static struct astream *
side_find(struct side *S, const struct engine *e, uint32_t id)
{
	size_t k;

	for (k = 0; k < S->n; k++)
		if (S->all[k]->e == e && S->all[k]->id == id)
			return (S->all[k]);
	return (NULL);
}


/*
 * Ring memory comes from an arena at a fixed address, handed out in
 * order and never reused within a run: the ring addresses the engines
 * put on the wire are the same on every run of a seed, whatever else the
 * process allocates, so the trace (-H) can hash them.  Pages between
 * rings are never mapped (an overrun faults); nor are a freed ring's, so
 * that touching it (an engine's copy into or out of a released ring, a
 * WRITE from a freed send ring) faults too, where the daemon might read
 * or write memory it no longer owns without a word; arena_fault says
 * which run did it.
 */
#define ARENA_BASE	((uintptr_t)0x5a0000000000ull)
#define ARENA_SIZE	((size_t)1 << 38)
#define ARENA_PAGE	((size_t)4096)

static uint8_t *arena;
static size_t arena_used;

/* The run under way, for arena_fault. */
static const char *run_config_name;
static uint64_t run_seed;

static size_t
arena_round(size_t size)
{

	return ((size + ARENA_PAGE - 1) & ~(ARENA_PAGE - 1));
}

static void *
arena_alloc(size_t size)
{
	size_t n = arena_round(size);
	uint8_t *p;

	if (arena == NULL) {
		arena = mmap((void *)ARENA_BASE, ARENA_SIZE, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
		    MAP_FIXED_NOREPLACE, -1, 0);
		if (arena == MAP_FAILED) {
			arena = NULL;
			return (NULL);
		}
		if ((uintptr_t)arena != ARENA_BASE && show_trace)
			printf("# the ring arena is not at its fixed address: "
			    "traces vary from run to run\n");
	}
	if (n > ARENA_SIZE - ARENA_PAGE - arena_used)
		return (NULL);
	p = arena + arena_used;
	if (mprotect(p, n, PROT_READ | PROT_WRITE) != 0)
		return (NULL);
	arena_used += n + ARENA_PAGE;		/* and a guard page */
	return (p);
}

static void
arena_free(void *p, size_t size)
{
	size_t n = arena_round(size);

	(void)madvise(p, n, MADV_DONTNEED);
	(void)mprotect(p, n, PROT_NONE);
}

/* SIGSEGV's handling before arena_fault_catch (a sanitizer's, or none). */
static struct sigaction arena_prev;

/*
 * A fault in the arena: ring memory touched outside a live ring.  Say
 * which run (on stderr, unbuffered); then, for any fault, hand the signal
 * back to whoever had it before (a sanitizer then prints the stack), as
 * the faulting instruction runs again.
 */
static void
arena_fault(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr, base = (uintptr_t)arena;
	char msg[320];
	int n;

	(void)uc;
	(void)sigaction(sig, &arena_prev, NULL);
	if (arena == NULL || a < base || a - base >= ARENA_SIZE)
		return;
	n = snprintf(msg, sizeof(msg), "Bail out! %s seed %llu touched ring "
	    "memory at arena + 0x%llx, outside any live ring (freed, or "
	    "between rings)\n#   replay: tests/sim/sim -c %s -s %llu%s -v\n",
	    run_config_name, (unsigned long long)run_seed,
	    (unsigned long long)(a - base), run_config_name,
	    (unsigned long long)run_seed, all_lose ? " -l" : "");
	if (n > 0)
		(void)write(STDERR_FILENO, msg, (size_t)n < sizeof(msg) ?
		    (size_t)n : sizeof(msg) - 1);
}

static void
arena_fault_catch(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = arena_fault;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGSEGV, &sa, &arena_prev);
}

/* A run is over, its rings freed: the next run's start where it did. */
static void
arena_reset(void)
{

	if (arena != NULL && arena_used > 0) {
		(void)madvise(arena, arena_used, MADV_DONTNEED);
		(void)mprotect(arena, arena_used, PROT_NONE);
	}
	arena_used = 0;
}

/* A new ring of ${size} bytes for stream ${a} of side ${i}. */
static struct sring *
sring_new(struct run *R, int i, struct astream *a, int rx, uint32_t size)
{
	struct sring *g;

	if (a->nring == MAXRINGS) {
		rfail(R, "side %d stream s%llu: a ring more than the %d it "
		    "may hold", i, (unsigned long long)a->serial, MAXRINGS);
		return (NULL);
	}
	g = &a->ring[a->nring];
	memset(g, 0, sizeof(*g));
	if ((g->p = arena_alloc(size)) == NULL) {
		rfail(R, "out of memory");
		return (NULL);
	}
	g->size = size;
	g->rx = rx;
	if (rx) {
		/* Poison: a byte the peer never wrote shows as a mismatch. */
		memset(g->p, 0xa5, size);
		g->key = R->next_rkey++;
		fab_mr_add(&R->f, i, (uint64_t)(uintptr_t)g->p, size, g->key);
	}
	a->nring++;
	return (g);
}

/* Ring ${k} of stream ${a} of side ${i} goes. */
static void
sring_free(struct run *R, int i, struct astream *a, int k)
{
	struct sring *g = &a->ring[k];

	if (g->rx)
		fab_mr_del(&R->f, i, (uint64_t)(uintptr_t)g->p);
	/* A touch of it from now on faults (arena_fault). */
	arena_free(g->p, g->size);
	*g = a->ring[--a->nring];
}

/* Which of ${a}'s rings of direction ${rx} starts at ${addr}: -1 if none. */
static int
sring_find(const struct astream *a, uint64_t addr, int rx)
{
	int k;

	for (k = 0; k < a->nring; k++)
		if ((uint64_t)(uintptr_t)a->ring[k].p == addr &&
		    a->ring[k].rx == rx)
			return (k);
	return (-1);
}

/* Describe ring ${g} for the engine. */
static void
sring_desc(const struct sring *g, struct engine_ring *r)
{

	r->addr = (uint64_t)(uintptr_t)g->p;
	r->size = g->size;
	r->key = g->rx ? g->key : 0;
	r->mem = g->p;
}

/*
 * The first rings of side ${i}'s stream ${a}: sizes from the plan, or
 * small ones if it resizes.
 */
static int
alloc_rings(struct run *R, int i, struct astream *a, uint32_t txlog,
    uint32_t rxlog)
{
	uint32_t txsz = 1u << txlog, rxsz = 1u << rxlog;

	if (a->tx_max != 0)
		txsz = rxsz = RS_START;
	if (sring_new(R, i, a, 0, txsz) == NULL ||
	    sring_new(R, i, a, 1, rxsz) == NULL)
		return (-1);
	return (0);
}

/* Every ring the stream still holds goes (it was RELEASED, or never was). */
static void
free_rings(struct run *R, int i, struct astream *a)
{

	while (a->nring > 0)
		sring_free(R, i, a, a->nring - 1);
}

/*
 * Where the ${n} bytes at offset ${off} of the ring at ${base} are: the
 * engine's answer must be one of ${a}'s rings of that direction, and the
 * bytes inside it.  NULL (and the run fails) if not.
 */
static uint8_t *
sring_at(struct run *R, int i, struct astream *a, int rx, uint64_t base,
    uint32_t off, uint32_t n)
{
	int k = sring_find(a, base, rx);

	if (k < 0 || off > a->ring[k].size || n > a->ring[k].size - off) {
		rfail(R, "side %d stream s%llu: the engine's %s ring at 0x%llx "
		    "(%u bytes at %u) is not one the stream holds", i,
		    (unsigned long long)a->serial, rx ? "receive" : "send",
		    (unsigned long long)base, (unsigned)n, (unsigned)off);
		return (NULL);
	}
	return (a->ring[k].p + off);
}

/*
 * Where the ${n} bytes at offset ${off} that ${a} reads are: in one of
 * its receive rings, or on a sealed link in the engine's private copy of
 * one (engine_rx_base), which is no ring the stream holds.
 */
static uint8_t *
rx_at(struct run *R, int i, struct astream *a, uint64_t base, uint32_t off,
    uint32_t n)
{

	if (sring_find(a, base, 1) < 0 && engine_sealed(a->e))
		return ((uint8_t *)(uintptr_t)base + off);
	return (sring_at(R, i, a, 1, base, off, n));
}

/* The rings the engine uses for ${a} now must be ones it holds. */
static int
check_rings(struct run *R, int i, struct astream *a)
{
	struct engine_ring tx, rx;
	int t, r;

	if (engine_rings(a->e, a->id, &tx, &rx) != 0)
		return (rfail(R, "side %d stream s%llu: engine_rings failed",
		    i, (unsigned long long)a->serial));
	t = sring_find(a, tx.addr, 0);
	r = sring_find(a, rx.addr, 1);
	if (t < 0 || a->ring[t].size != tx.size || r < 0 ||
	    a->ring[r].size != rx.size || a->ring[r].key != rx.key)
		return (rfail(R, "side %d stream s%llu: the engine uses rings "
		    "it does not hold (send 0x%llx %u, receive 0x%llx %u)", i,
		    (unsigned long long)a->serial, (unsigned long long)tx.addr,
		    (unsigned)tx.size, (unsigned long long)rx.addr,
		    (unsigned)rx.size));
	if (a->tx_max == 0 ? a->nring != 2 : tx.size < RS_START ||
	    tx.size > a->tx_max || rx.size < RS_START || rx.size > a->rx_max)
		return (rfail(R, "side %d stream s%llu: rings of %u and %u "
		    "bytes (%d held), outside its limits", i,
		    (unsigned long long)a->serial, (unsigned)tx.size,
		    (unsigned)rx.size, a->nring));
	return (0);
}

/*
 * Does side ${i}'s new stream ${a} on ${e} resize its rings?  On a link
 * that can, half the streams do, starting small, up to limits from 8 KiB
 * to 256 KiB (32 KiB in the faults configuration, whose oversized WRITE
 * must stay within WIRE_WRITE_MAX).
 */
static void
pick_limits(struct run *R, struct engine *e, struct astream *a)
{
	uint64_t top = R->c->faults ? 15 : 18;

	if (!engine_can_resize(e) || below(&R->rz, 2) != 0)
		return;
	a->tx_max = 1u << (13 + below(&R->rz, top - 12));
	a->rx_max = 1u << (13 + below(&R->rz, top - 12));
}

static struct astream *
astream_new(uint64_t serial)
{
	struct astream *a;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		abort();
	a->serial = serial;
	a->susp_loss = -1;
	return (a);
}

/* ---------------------------------------------------------------- memory */

/* Side ${S}'s stream ${a}, which asks the engine_mem callbacks: checked. */
static int
mem_stream(struct side *S, struct astream *a, const char *what)
{
	struct run *R = S->R;

	if (a == NULL || side_find(S, a->e, a->id) != a ||
	    a->e != R->f.side[S->i].e)
		return (rfail(R, "side %d: ring %s for a stream the "
		    "application does not hold on this link", S->i, what));
	if (a->tx_max == 0)
		return (rfail(R, "side %d stream s%llu: ring %s, but it has no "
		    "limits to resize within", S->i,
		    (unsigned long long)a->serial, what));
	return (0);
}

/*
 * Ring memory for a resize: a double of the ring it replaces up to the
 * stream's limit, back to the start, or (a receive ring whose reader
 * lags) a half not below the start; refused now and then, as memory may
 * run out.
 */
static int
cb_alloc(void *arg, void *user, int rx, uint32_t size, uint32_t replaces,
    struct engine_ring *ring)
{
	struct side *S = arg;
	struct run *R = S->R;
	struct astream *a = user;
	struct engine_ring cur[2];
	struct sring *g;

	if (mem_stream(S, a, "asked for"))
		return (-1);
	if (engine_rings(a->e, a->id, &cur[0], &cur[1]) != 0 ||
	    replaces != cur[rx].size ||
	    (size != 2 * replaces && (size != RS_START || replaces <= size) &&
	    (!rx || 2 * size != replaces || size < RS_START)) ||
	    size > (rx ? a->rx_max : a->tx_max))
		return (rfail(R, "side %d stream s%llu: a %u-byte %s ring to "
		    "replace one of %u (limit %u)", S->i,
		    (unsigned long long)a->serial, (unsigned)size,
		    rx ? "receive" : "send", (unsigned)replaces,
		    (unsigned)(rx ? a->rx_max : a->tx_max)));
	if (below(&R->rz, 8) == 0) {
		S->refused++;
		return (-1);
	}
	if ((g = sring_new(R, S->i, a, rx, size)) == NULL)
		return (-1);
	sring_desc(g, ring);
	S->allocs++;
	S->halves += rx && 2 * size == replaces && size > RS_START;
	if (verbose)
		printf("# side %d stream s%llu: new %s ring of %u for one of "
		    "%u\n", S->i, (unsigned long long)a->serial,
		    rx ? "receive" : "send", (unsigned)size,
		    (unsigned)replaces);
	return (0);
}

/* The engine is done with a ring: it goes at once. */
static void
cb_free(void *arg, void *user, const struct engine_ring *ring)
{
	struct side *S = arg;
	struct run *R = S->R;
	struct astream *a = user;
	int k;

	if (mem_stream(S, a, "given back"))
		return;
	for (k = 0; k < a->nring; k++)
		if (a->ring[k].p == ring->mem &&
		    (uint64_t)(uintptr_t)a->ring[k].p == ring->addr &&
		    a->ring[k].size == ring->size)
			break;
	if (k == a->nring) {
		rfail(R, "side %d stream s%llu: the engine gives back a ring "
		    "at 0x%llx it does not hold (or twice)", S->i,
		    (unsigned long long)a->serial,
		    (unsigned long long)ring->addr);
		return;
	}
	if (verbose)
		printf("# side %d stream s%llu: %s ring of %u given back\n",
		    S->i, (unsigned long long)a->serial,
		    a->ring[k].rx ? "receive" : "send", (unsigned)ring->size);
	sring_free(R, S->i, a, k);
}

/* ---------------------------------------------------------------- events */

/*
 * The origin stream ${serial} is opened with: every third none, the rest
 * IPv4 or IPv6 made of the serial, so the acceptor can check it whole.
 */
static int
sim_origin(unsigned long long serial, struct wire_origin *o)
{
	size_t k;

	memset(o, 0, sizeof(*o));
	if (serial % 3 == 0)
		return (0);
	o->family = serial % 3 == 1 ? WIRE_FAM_INET : WIRE_FAM_INET6;
	for (k = 0; k < (o->family == WIRE_FAM_INET ? 4u : 16u); k++) {
		o->src[k] = (uint8_t)(serial >> (k % 8 * 8));
		o->dst[k] = (uint8_t)(k + 1);
	}
	o->src_port = (uint16_t)serial;
	o->dst_port = (uint16_t)(serial >> 16);
	return (1);
}

static int
on_incoming(struct run *R, int i, uint32_t id)
{
	struct wire_origin want;
	const struct wire_origin *got;
	struct side *S = &R->side[i];
	struct engine *e = R->f.side[i].e;
	struct astream *a;
	struct engine_ring tx, rx;
	const char *name = engine_tunnel(e, id);
	unsigned long long serial;

	if (name == NULL || sscanf(name, "s%llu", &serial) != 1)
		return (rfail(R, "side %d: INCOMING with bad name", i));
	if (side_find(S, e, id) != NULL)
		return (rfail(R, "side %d: INCOMING on live id %u", i,
		    (unsigned)id));
	/* Both fabric sides speak version 3: every ORIGIN arrives whole. */
	got = engine_origin(e, id);
	if (sim_origin(serial, &want) ? got == NULL ||
	    memcmp(got, &want, sizeof(want)) != 0 : got != NULL)
		return (rfail(R, "side %d: s%llu arrived with the wrong "
		    "origin", i, serial));
	a = astream_new(serial);
	make_plan(R->c, R->seed, serial, &a->plan);
	if (a->plan.kind == P_REFUSED) {
		free(a);
		return (engine_refuse(e, id, WIRE_REASON_NO_TUNNEL) == 0 ? 0 :
		    rfail(R, "engine_refuse failed"));
	}
	pick_limits(R, e, a);
	if (alloc_rings(R, i, a, a->plan.ring_log[1][0],
	    a->plan.ring_log[1][1])) {
		free_rings(R, i, a);
		free(a);
		return (-1);
	}
	a->tx_total = a->plan.bytes[1];
	a->rx_expect = a->plan.bytes[0];
	a->opened = 1;
	a->e = e;
	a->id = id;
	side_add(S, a);
	sring_desc(&a->ring[0], &tx);
	sring_desc(&a->ring[1], &rx);
	if (engine_accept(e, id, &tx, &rx, a) != 0)
		return (rfail(R, "engine_accept failed"));
	if (a->tx_max != 0 &&
	    engine_ring_limits(e, id, a->tx_max, a->rx_max) != 0)
		return (rfail(R, "engine_ring_limits after accept failed"));
	if (losing(R) && a->plan.keep[1] && engine_keep(e, id) != 0)
		return (rfail(R, "engine_keep after accept failed"));
	if (below(&R->rw, 2) == 0 && engine_set_weight(e, id,
	    1 + (uint32_t)below(&R->rw, ENGINE_WEIGHT_MAX)) != 0)
		return (rfail(R, "engine_set_weight after accept failed"));
	return (0);
}

/* The reasons a stream ends with when its resume did not happen. */
static int
resume_reason(uint16_t reason)
{

	return (reason == WIRE_REASON_NOT_RESUMED ||
	    reason == WIRE_REASON_LINK_LOST || reason == WIRE_REASON_DENIED ||
	    reason == WIRE_REASON_INTERNAL);
}

/* Is this RESET one the run allows? */
static int
reset_ok(struct run *R, int i, struct astream *a, uint16_t reason)
{
	struct fate *F;
	int L;

	if (peer_resets(a) || R->link_dead)
		return (0);
	if (R->at_loss && reason == WIRE_REASON_RESET && !a->expect_susp)
		return (0);
	if (!losing(R) || !resume_reason(reason))
		return (rfail(R, "side %d stream s%llu: unexpected RESET (%s)",
		    i, (unsigned long long)a->serial, wire_reason_str(reason)));
	if ((L = a->susp_loss) < 0)
		return (rfail(R, "side %d stream s%llu: RESET (%s) but it was "
		    "never suspended", i, (unsigned long long)a->serial,
		    wire_reason_str(reason)));
	F = fate(R, a->serial);
	if (R->loss[L].strict && F->susp[1 - i] == L)
		return (rfail(R, "side %d stream s%llu: suspended on both "
		    "sides at loss %d, whose resume was undisturbed, but "
		    "reset (%s)", i, (unsigned long long)a->serial, L,
		    wire_reason_str(reason)));
	total_lost++;
	return (0);
}

static int
drain_events(struct run *R, int i, struct engine *e)
{
	struct side *S = &R->side[i];
	struct engine_event ev;
	struct astream *a;

	while (engine_next_event(e, &ev)) {
		uint64_t t[4] = { (uint64_t)i, ev.stream, ev.flags, ev.reason };

		fab_trace(&R->f, t, sizeof(t));
		if (ev.flags & ENGINE_EV_INCOMING) {
			/* Offered and gone with the link before a decision. */
			if (e != R->f.side[i].e &&
			    (ev.flags & ENGINE_EV_RELEASED))
				continue;
			if (e != R->f.side[i].e)
				return (rfail(R, "side %d: INCOMING from a "
				    "failed engine", i));
			if (on_incoming(R, i, ev.stream))
				return (-1);
			R->progressed = 1;
			continue;
		}
		a = ev.user;
		if (verbose)
			printf("# side %d stream %u (s%lld)%s: events 0x%x "
			    "reason %u\n", i, (unsigned)ev.stream,
			    a ? (long long)a->serial : -1LL,
			    e == R->f.side[i].e ? "" : " (failed engine)",
			    (unsigned)ev.flags, (unsigned)ev.reason);
		if (a == NULL || a->e != e || a->id != ev.stream)
			return (rfail(R, "side %d: event 0x%x for unused "
			    "stream %u", i, (unsigned)ev.flags,
			    (unsigned)ev.stream));
		R->progressed = 1;
		if (ev.flags & ENGINE_EV_OPENED)
			a->opened = 1;
		if (ev.flags & ENGINE_EV_REFUSED) {
			if (a->plan.kind != P_REFUSED &&
			    ev.reason != WIRE_REASON_LIMIT)
				return (rfail(R, "side %d stream s%llu "
				    "refused (%s) against its plan", i,
				    (unsigned long long)a->serial,
				    wire_reason_str(ev.reason)));
			a->refused = 1;
		}
		if (ev.flags & ENGINE_EV_SUSPENDED) {
			/* (Again, for one still resuming when lost again.) */
			if (!R->at_loss || !a->expect_susp)
				return (rfail(R, "side %d stream s%llu: "
				    "SUSPENDED out of place", i,
				    (unsigned long long)a->serial));
			a->suspended = 1;
		}
		if (ev.flags & ENGINE_EV_RESUMED) {
			if (!a->suspended || e != R->f.side[i].e)
				return (rfail(R, "side %d stream s%llu: "
				    "RESUMED but not suspended", i,
				    (unsigned long long)a->serial));
			a->suspended = 0;
			total_resumed++;
		}
		if (ev.flags & ENGINE_EV_EOF) {
			if (a->rx_got != a->rx_expect)
				return (rfail(R, "side %d stream s%llu: EOF "
				    "after %llu of %llu bytes", i,
				    (unsigned long long)a->serial,
				    (unsigned long long)a->rx_got,
				    (unsigned long long)a->rx_expect));
			if (a->eof || a->reset_seen)
				return (rfail(R, "side %d stream s%llu: EOF "
				    "twice or after reset", i,
				    (unsigned long long)a->serial));
			a->eof = 1;
		}
		if (ev.flags & ENGINE_EV_RESET) {
			if (reset_ok(R, i, a, ev.reason))
				return (-1);
			a->reset_seen = 1;
		}
		if (ev.flags & ENGINE_EV_RELEASED) {
			int done = a->refused || a->reset_seen ||
			    (a->closed && (a->eof || a->plan.kind !=
			    P_NORMAL));

			if (!done && !R->link_dead)
				return (rfail(R, "side %d stream s%llu "
				    "released before it finished", i,
				    (unsigned long long)a->serial));
			total_bytes += a->rx_got;
			total_streams++;
			total_eofs += a->eof;
			total_rs += a->tx_max != 0;
			/* The rings the engine did not give back go now. */
			free_rings(R, i, a);
			side_del(S, a);
			free(a);
		}
	}
	return (0);
}

/* Drain every engine of side ${i}: the current one and the failed ones. */
static int
drain_side(struct run *R, int i)
{
	struct side *S = &R->side[i];
	int k;

	if (drain_events(R, i, R->f.side[i].e))
		return (-1);
	for (k = 0; k < S->nold; k++)
		if (drain_events(R, i, S->old[k].e))
			return (-1);
	return (0);
}

/* ---------------------------------------------------------------- actions */

static int
open_stream(struct run *R, int i)
{
	struct side *S = &R->side[i];
	struct engine *e = R->f.side[i].e;
	struct engine_ring tx, rx;
	struct astream *a;
	char name[32];
	struct wire_origin origin;
	uint64_t serial = S->next_serial * 2 + (uint64_t)i;
	int id;

	a = astream_new(serial);
	make_plan(R->c, R->seed, serial, &a->plan);
	pick_limits(R, e, a);
	if (alloc_rings(R, i, a, a->plan.ring_log[0][0],
	    a->plan.ring_log[0][1])) {
		free_rings(R, i, a);
		free(a);
		return (-1);
	}
	a->opener = 1;
	a->tx_total = a->plan.bytes[0];
	a->rx_expect = a->plan.bytes[1];
	sring_desc(&a->ring[0], &tx);
	sring_desc(&a->ring[1], &rx);
	snprintf(name, sizeof(name), "s%llu", (unsigned long long)serial);
	id = engine_open(e, name, &tx, &rx, a);
	if (id < 0) {
		free_rings(R, i, a);
		free(a);
		if (id == ENGINE_ELIMIT)
			return (0);	/* try again later */
		return (rfail(R, "side %d: engine_open failed: %d", i, id));
	}
	if (side_find(S, e, (uint32_t)id) != NULL)
		return (rfail(R, "side %d: stream id %d reused while live",
		    i, id));
	a->e = e;
	a->id = (uint32_t)id;
	side_add(S, a);
	if (sim_origin(serial, &origin) &&
	    engine_set_origin(e, a->id, &origin) != 0)
		return (rfail(R, "engine_set_origin after open failed"));
	if (losing(R) && a->plan.keep[0] && engine_keep(e, a->id) != 0)
		return (rfail(R, "engine_keep after open failed"));
	if (below(&R->rw, 2) == 0 && engine_set_weight(e, a->id,
	    1 + (uint32_t)below(&R->rw, ENGINE_WEIGHT_MAX)) != 0)
		return (rfail(R, "engine_set_weight after open failed"));
	if (a->tx_max != 0 &&
	    engine_ring_limits(e, a->id, a->tx_max, a->rx_max) != 0)
		return (rfail(R, "engine_ring_limits after open failed"));
	if (verbose) {
		printf("# side %d opens stream %d as s%llu (plan %d, %llu/%llu "
		    "bytes", i, id, (unsigned long long)serial, a->plan.kind,
		    (unsigned long long)a->plan.bytes[0],
		    (unsigned long long)a->plan.bytes[1]);
		if (a->tx_max != 0)
			printf(", rings may grow to %u/%u", (unsigned)a->tx_max,
			    (unsigned)a->rx_max);
		printf(")\n");
	}
	S->next_serial++;
	S->opens_left--;
	R->progressed = 1;
	return (0);
}

/* Does this side reset this stream now? */
static int
resets_now(const struct astream *a)
{

	return (i_reset(a) && a->tx_done >= a->plan.reset_at);
}

/*
 * The application's turn on stream ${a}, wherever it lives: a suspended
 * stream in a failed engine is read, written, shut down, closed and reset
 * as any other.
 */
static int
act_stream(struct run *R, int i, struct astream *a)
{
	struct engine *e = a->e;
	uint32_t id = a->id;
	uint64_t key_tx = dirkey(a->serial, a->opener ? 0 : 1);
	uint64_t key_rx = dirkey(a->serial, a->opener ? 1 : 0);
	uint32_t off, n, k, want;
	uint8_t *p;

	if (a->closed || a->refused)
		return (0);
	if (check_rings(R, i, a))
		return (-1);
	if (a->reset_seen) {
		/* The peer reset it: the application closes its side. */
		a->closed = 1;
		R->progressed = 1;
		return (engine_close(e, id) == 0 ? 0 :
		    rfail(R, "engine_close after reset failed"));
	}
	if (resets_now(a)) {
		a->closed = 1;
		R->progressed = 1;
		return (engine_reset(e, id, WIRE_REASON_RESET) == 0 ? 0 :
		    rfail(R, "engine_reset failed"));
	}

	/* Write. */
	if (a->tx_done < a->tx_total && below(&R->r, 2) == 0) {
		n = engine_tx_space(e, id, &off);
		want = (uint32_t)below(&R->r, below(&R->r, 4) == 0 ?
		    65536 * 2 : 4096) + 1;
		if (n > want)
			n = want;
		if (n > a->tx_total - a->tx_done)
			n = (uint32_t)(a->tx_total - a->tx_done);
		if (i_reset(a) && a->tx_done + n > a->plan.reset_at)
			n = (uint32_t)(a->plan.reset_at - a->tx_done);
		if (n > 0) {
			/* (engine_tx_space may have given a new ring.) */
			if ((p = sring_at(R, i, a, 0, engine_tx_base(e, id),
			    off, n)) == NULL)
				return (-1);
			for (k = 0; k < n; k++)
				p[k] = gen(key_tx, a->tx_done + k);
			if (engine_tx_commit(e, id, n) != 0)
				return (rfail(R, "engine_tx_commit failed"));
			a->tx_done += n;
			R->progressed = 1;
		}
	}
	/* The socket's EOF comes when it comes: not always with the bytes. */
	if (a->tx_done == a->tx_total && !a->shut && !i_reset(a) &&
	    (!losing(R) || below(&R->r, 3) == 0)) {
		a->shut = 1;
		R->progressed = 1;
		if (engine_shutdown(e, id) != 0)
			return (rfail(R, "engine_shutdown failed"));
	}

	/* Read (slow readers only now and then). */
	if (!a->plan.slow_reader[a->opener ? 0 : 1] || below(&R->r, 20) == 0) {
		n = engine_rx_data(e, id, &off);
		want = (uint32_t)below(&R->r, 16384) + 1;
		if (n > want)
			n = want;
		p = NULL;
		if (n > 0 && (p = rx_at(R, i, a, engine_rx_base(e, id), off,
		    n)) == NULL)
			return (-1);
		for (k = 0; k < n; k++) {
			if (p[k] != gen(key_rx, a->rx_got + k))
				return (rfail(R, "side %d stream s%llu: byte "
				    "%llu is wrong", i,
				    (unsigned long long)a->serial,
				    (unsigned long long)(a->rx_got + k)));
		}
		if (n > 0) {
			if (a->rx_got + n > a->rx_expect)
				return (rfail(R, "side %d stream s%llu: more "
				    "bytes than were sent", i,
				    (unsigned long long)a->serial));
			/* Scribble: the engine must not hand this out again. */
			memset(p, 0x5a, n);
			if (engine_rx_consume(e, id, n) != 0)
				return (rfail(R, "engine_rx_consume failed"));
			a->rx_got += n;
			R->progressed = 1;
		}
	}

	/* Close once both directions are done. */
	if (a->shut && a->eof && (!losing(R) || below(&R->r, 2) == 0)) {
		a->closed = 1;
		R->progressed = 1;
		if (engine_close(e, id) != 0)
			return (rfail(R, "engine_close failed"));
	}
	return (0);
}

static int
app_step(struct run *R, int i)
{
	struct side *S = &R->side[i];
	size_t k, tries;

	/*
	 * Nothing opens while streams may still come back: side 1 until the
	 * resume took what it could, side 0 until it offered the resume
	 * (engine_resume wants a link with no stream yet).
	 */
	if (S->opens_left > 0 && !R->link_dead && S->nold == 0 &&
	    below(&R->r, 8) == 0)
		return (open_stream(R, i));
	if (S->n == 0)
		return (0);
	for (tries = 0; tries < 8; tries++) {
		k = (size_t)below(&R->r, S->n);
		if (!S->all[k]->closed)
			return (act_stream(R, i, S->all[k]));
	}
	for (k = 0; k < S->n; k++)
		if (!S->all[k]->closed)
			return (act_stream(R, i, S->all[k]));
	return (0);
}

/* ---------------------------------------------------------------- faults */

/*
 * A sealed run's fault: the wire flips one bit of the next message side
 * 1 sent (side 0 has no other completion waiting), and side 0 takes its
 * completion.  The link must end with the seal error.
 */
static int
tamper_fault(struct run *R)
{
	struct fab_side *s = &R->f.side[1];
	const char *why;
	int data;

	s->tamper = 1 + (uint32_t)below(&R->r, 8 * WIRE_MSG_SIZE);
	/* A data WRITE is opened when its tag comes: deliver that too. */
	data = s->wire[s->wire_head].wr.op == ENGINE_WR_WRITE;
	if (fab_pump(&R->f, 1) < 0 || fab_deliver(&R->f, 1) < 0 ||
	    (data && fab_deliver(&R->f, 1) < 0))
		return (rfail(R, "fabric: %s", R->f.err));
	while (engine_error(R->f.side[0].e) == NULL &&
	    fab_complete(&R->f, 0) > 0)
		;
	if ((why = engine_error(R->f.side[0].e)) == NULL)
		return (rfail(R, "a flipped bit did not end the link"));
	if (strcmp(why, SEAL_ERR) != 0)
		return (rfail(R, "a flipped bit: unexpected error: %s", why));
	all_tampered++;
	R->link_dead = 1;
	engine_stopped(R->f.side[1].e);
	engine_fail(R->f.side[1].e, ENGINE_ERR_TRANSPORT, "peer disconnected");
	return (0);
}

static int
inject_fault(struct run *R)
{
	struct side *S = &R->side[0];
	struct astream *a, *target = NULL;
	struct engine_ring tx, rx;
	uint8_t buf[64];
	struct wire_rec r;
	size_t k, n;
	int kind = (int)(R->seed % 6);

	/* The lowest id, as the fault always picked. */
	for (k = 0; k < S->n; k++) {
		a = S->all[k];
		if (a->opened && !a->closed && !a->reset_seen &&
		    (target == NULL || a->id < target->id))
			target = a;
	}
	if (R->sealed)
		return (tamper_fault(R));
	if (target == NULL && (kind == 1 || kind == 2))
		kind = 0;
	memset(&r, 0, sizeof(r));
	switch (kind) {
	case 0:		/* data for a stream that does not exist */
		fab_inject(&R->f, 0, FAB_CQE_RECV_IMM, NULL, 100,
		    wire_imm_encode(WIRE_STREAMS_MAX - 1, 100));
		break;
	case 1:		/* data beyond the free space of the ring */
		if (engine_rings(target->e, target->id, &tx, &rx) != 0)
			return (rfail(R, "fault 1: engine_rings failed"));
		n = rx.size + 1;
		fab_inject(&R->f, 0, FAB_CQE_RECV_IMM, NULL, (uint32_t)n,
		    wire_imm_encode(target->id, (uint32_t)n));
		break;
	case 2:		/* ring credit beyond what was sent */
		r.type = WIRE_CREDIT;
		r.stream = target->id;
		r.cursor = (uint64_t)1 << 40;
		n = wire_rec_encode(buf, sizeof(buf), &r);
		fab_inject(&R->f, 0, FAB_CQE_RECV, buf, (uint32_t)n, 0);
		break;
	case 3:		/* garbage control record */
		buf[0] = 0xee;
		buf[1] = 2;
		fab_inject(&R->f, 0, FAB_CQE_RECV, buf, 2, 0);
		break;
	case 4:		/* truncated OPEN */
		buf[0] = WIRE_OPEN;
		buf[1] = 40;
		memset(buf + 2, 0, 8);
		fab_inject(&R->f, 0, FAB_CQE_RECV, buf, 10, 0);
		break;
	case 5:		/* message credit beyond the receive queue */
		r.type = WIRE_MSG_CREDIT;
		r.cursor = (uint64_t)1 << 50;
		n = wire_rec_encode(buf, sizeof(buf), &r);
		fab_inject(&R->f, 0, FAB_CQE_RECV, buf, (uint32_t)n, 0);
		break;
	}
	if (R->f.failed)
		return (rfail(R, "fabric: %s", R->f.err));
	if (engine_error(R->f.side[0].e) == NULL)
		return (rfail(R, "fault %d did not end the link", kind));
	if (strstr(engine_error(R->f.side[0].e), "protocol violation") == NULL)
		return (rfail(R, "fault %d: unexpected error: %s", kind,
		    engine_error(R->f.side[0].e)));
	if (verbose)
		printf("# fault %d: %s\n", kind, engine_error(R->f.side[0].e));
	/* The QP goes down with it: the other side sees its link fail. */
	R->link_dead = 1;
	engine_stopped(R->f.side[1].e);
	engine_fail(R->f.side[1].e, ENGINE_ERR_TRANSPORT, "peer disconnected");
	return (0);
}

/* ---------------------------------------------------------------- resume */

/*
 * Stand-ins for auth.c's derivations, bound to the current link's nonces
 * as they are to its hellos: the sim checks that both sides keep in step,
 * not the cryptography.
 */
enum { D_FIRST = 1, D_NEXT, D_INITIATOR, D_RESPONDER, D_V2 };

static void
derive(const struct run *R, const uint8_t *from, int what,
    uint8_t out[SECRET])
{
	uint64_t h = splitmix((uint64_t)what);
	int i, k;

	for (k = 0; from != NULL && k < SECRET; k++)
		h = splitmix(h ^ from[k]);
	for (i = 0; i < 2; i++)
		for (k = 0; k < WIRE_NONCE_LEN; k++)
			h = splitmix(h ^ R->f.side[i].nonce[k] ^
			    (uint64_t)(i + 1) << 8);
	for (k = 0; k < SECRET; k += 8) {
		h = splitmix(h);
		memcpy(out + k, &h, 8);
	}
}

/* Side ${i} starts a chain of its own on the current link. */
static void
new_chain(struct run *R, int i)
{
	struct side *S = &R->side[i];

	memcpy(S->token, R->f.side[1].nonce, WIRE_NONCE_LEN);
	derive(R, NULL, D_FIRST, S->sec);
	S->has_prev = 0;
}

/* Side ${role}'s proof of ${sec} on the current link (0: initiator). */
static void
proof_of(const struct run *R, const uint8_t sec[SECRET], int role,
    uint8_t proof[WIRE_AUTH_LEN])
{

	derive(R, sec, role ? D_RESPONDER : R->v4 ? D_V2 : D_INITIATOR, proof);
}

static int
cb_adopt(void *arg, uint32_t id, void *user, struct engine_ring *tx,
    struct engine_ring *rx)
{
	struct side *S = arg;
	struct run *R = S->R;
	struct astream *a = user;
	int t = -1, r = -1;

	if (a != NULL) {
		t = sring_find(a, tx->addr, 0);
		r = sring_find(a, rx->addr, 1);
	}
	if (a == NULL || a->e != S->src || a->id != id || t < 0 || r < 0 ||
	    a->ring[t].size != tx->size || a->ring[r].size != rx->size) {
		rfail(R, "side %d: adopt of stream %u with the wrong user or "
		    "rings", S->i, (unsigned)id);
		return (-1);
	}
	/* It is in the new engine now, even if it ends there at once. */
	a->e = R->f.side[S->i].e;
	/* A messy run sometimes fails to register the rings again. */
	if (R->messy && below(&R->r, 25) == 0) {
		R->loss[R->nloss - 1].strict = 0;
		if (a->susp_loss >= 0)
			R->loss[a->susp_loss].strict = 0;
		return (-1);
	}
	a->ring[r].key = R->next_rkey++;
	if (fab_mr_rereg(&R->f, S->i, rx->addr, a->ring[r].key) != 0) {
		rfail(R, "side %d: the ring to adopt was not registered",
		    S->i);
		return (-1);
	}
	rx->key = a->ring[r].key;
	tx->key = 0x100 + R->nloss;
	return (0);
}

static void
give_up_all(struct side *S, const struct engine *but, uint16_t reason)
{
	int k;

	for (k = 0; k < S->nold; k++)
		if (S->old[k].e != but && !S->old[k].abandon) {
			S->old[k].abandon = 1;
			S->old[k].reason = reason;
		}
}

static struct engine *
cb_find(void *arg, const uint8_t token[WIRE_NONCE_LEN],
    const uint8_t proof[WIRE_AUTH_LEN], uint8_t answer[WIRE_AUTH_LEN],
    uint16_t *reason)
{
	struct side *S = arg;
	struct run *R = S->R;
	uint8_t want[WIRE_AUTH_LEN];
	const uint8_t *sec;
	int k;

	/*
	 * The peer names one chain from now on: the failed engines of any
	 * other can never come back (the daemon lets them time out).
	 */
	if (R->nloss > 0 && R->loss[R->nloss - 1].deny) {
		give_up_all(S, NULL, WIRE_REASON_LINK_LOST);
		*reason = WIRE_REASON_DENIED;
		return (NULL);
	}
	for (k = S->nold - 1; k >= 0; k--)
		if (!S->old[k].abandon &&
		    memcmp(S->old[k].token, token, WIRE_NONCE_LEN) == 0)
			break;
	if (k < 0) {
		give_up_all(S, NULL, WIRE_REASON_LINK_LOST);
		*reason = WIRE_REASON_NOT_RESUMED;
		return (NULL);
	}
	/* Side 0 holds the chain's secret, or the one it replaced. */
	sec = S->old[k].sec;
	proof_of(R, sec, 0, want);
	if (memcmp(want, proof, WIRE_AUTH_LEN) != 0 && S->old[k].has_prev) {
		sec = S->old[k].prev;
		proof_of(R, sec, 0, want);
	}
	if (memcmp(want, proof, WIRE_AUTH_LEN) != 0) {
		rfail(R, "find: side 0's proof matches neither secret side 1 "
		    "holds for the chain: the sides are out of step");
		*reason = WIRE_REASON_DENIED;
		return (NULL);
	}
	give_up_all(S, S->old[k].e, WIRE_REASON_LINK_LOST);
	/* The new link carries on the chain (cb_adopted: its secret). */
	memcpy(S->token, token, WIRE_NONCE_LEN);
	memcpy(S->prev, sec, SECRET);
	proof_of(R, sec, 1, answer);
	S->src = S->old[k].e;
	return (S->old[k].e);
}

static void
cb_adopted(void *arg, struct engine *old)
{
	struct side *S = arg;
	int k;

	/* Version 5: a secret of its own; below, the chain's. */
	S->has_prev = !S->R->v4;
	if (S->has_prev)
		derive(S->R, S->prev, D_NEXT, S->sec);
	else
		memcpy(S->sec, S->prev, SECRET);
	for (k = 0; k < S->nold; k++)
		if (S->old[k].e == old) {
			S->old[k].abandon = 1;
			S->old[k].reason = WIRE_REASON_NOT_RESUMED;
			return;
		}
	rfail(S->R, "adopted: an engine side 1 does not hold");
}

/* Side 0: side 1 took the resume and proves the chain's secret. */
static int
cb_proved(void *arg, const uint8_t proof[WIRE_AUTH_LEN])
{
	struct side *S = arg;
	struct run *R = S->R;
	uint8_t want[WIRE_AUTH_LEN];

	if (R->v4)
		return (rfail(R, "side 0: a RESUME_PROOF at version 4"));
	proof_of(R, S->sec, 1, want);
	if (memcmp(want, proof, WIRE_AUTH_LEN) != 0)
		return (rfail(R, "side 0: side 1's proof does not match the "
		    "chain's secret: the sides are out of step"));
	derive(R, S->sec, D_NEXT, S->sec);
	total_ratchets++;
	return (0);
}

/* End failed engine ${e}'s streams with ${reason}, drain it and free it. */
static int
drop_engine(struct run *R, int i, struct engine *e, uint16_t reason)
{
	struct side *S = &R->side[i];
	size_t k;

	engine_abandon(e, reason);
	if (drain_events(R, i, e))
		return (-1);
	for (k = 0; k < S->n; k++)
		if (S->all[k]->e == e)
			return (rfail(R, "side %d stream s%llu outlives its "
			    "abandoned engine", i,
			    (unsigned long long)S->all[k]->serial));
	if (engine_active(e) != 0)
		return (rfail(R, "side %d: an abandoned engine still holds "
		    "%u streams", i, (unsigned)engine_active(e)));
	engine_free(e);
	return (0);
}

/* Side 1 gives up the failed engines it no longer waits for. */
static int
drop_old(struct run *R)
{
	struct side *S = &R->side[1];
	struct oldeng o;
	int k;

	for (k = 0; k < S->nold; k++) {
		if (!S->old[k].abandon && R->step < S->old[k].deadline)
			continue;
		o = S->old[k];
		S->old[k] = S->old[--S->nold];
		k--;
		if (drop_engine(R, 1, o.e, o.abandon ? o.reason :
		    WIRE_REASON_LINK_LOST))
			return (-1);
		R->progressed = 1;
	}
	return (0);
}

/* Nothing in flight on either lane or waiting to complete, either way. */
static int
quiet(const struct fab *f)
{

	return (!fab_busy(f));
}

/* Is the last loss's resume over?  Then the next may be undisturbed. */
static int
settled(struct run *R)
{
	struct loss *L;

	if (R->nloss == 0)
		return (1);
	L = &R->loss[R->nloss - 1];
	if (!L->settled && R->side[0].nold == 0 && R->side[1].nold == 0 &&
	    engine_resume_pending(R->f.side[0].e) == 0 &&
	    engine_resume_pending(R->f.side[1].e) == 0)
		L->settled = 1;
	return (L->settled);
}

/* Side 1's resume settled and the peer named streams: prev goes. */
static void
confirmed(struct run *R)
{
	struct engine *e = R->f.side[1].e;

	if (engine_resume_pending(e) == 0 && engine_resume_confirmed(e))
		R->side[1].has_prev = 0;
}

/* Side 0 saw its offer refused: its streams start a new chain. */
static void
check_denied(struct run *R)
{
	struct engine_stats st;

	if (R->side[0].denied_link == R->f.links)
		return;
	engine_stats(R->f.side[0].e, &st);
	if (st.resumes_denied > 0) {
		new_chain(R, 0);
		R->side[0].denied_link = R->f.links;
	}
}

/*
 * The link breaks: some WRs in flight land unseen, both engines fail,
 * and a new link comes up.  Side 0 offers the resume at once; side 1
 * keeps its failed engine until the offer comes (or it gives up).
 */
static int
lose_link(struct run *R)
{
	struct engine *old[2];
	struct loss *L;
	size_t deliver[2], k;
	struct astream *a;
	int i, n, prev = (int)R->nloss - 1;

	if (R->nloss == MAXLOSS)
		return (0);
	if (prev >= 0 && !settled(R)) {
		/* Disturbed: its failed engines may wait in vain now. */
		R->loss[prev].strict = 0;
		for (i = 0; i < R->side[1].nold; i++)
			if (R->side[1].old[i].deadline == UINT64_MAX)
				R->side[1].old[i].deadline = R->step + 500 +
				    below(&R->r, 5000);
	}
	/* Lost again before side 0 offered the resume: those streams end. */
	if (R->side[0].nold > 0) {
		R->side[0].nold = 0;
		if (drop_engine(R, 0, R->side[0].old[0].e,
		    WIRE_REASON_LINK_LOST))
			return (-1);
	}
	L = &R->loss[R->nloss];
	memset(L, 0, sizeof(*L));
	L->deny = R->messy && below(&R->r, 6) == 0;
	L->noresume = R->messy && below(&R->r, 8) == 0;
	L->strict = !L->deny && !L->noresume && settled(R);
	R->nloss++;
	total_losses++;
	total_strict += L->strict;

	/* What must survive: kept streams the application still uses. */
	for (i = 0; i < 2; i++) {
		struct side *S = &R->side[i];

		for (k = 0; k < S->n; k++) {
			a = S->all[k];
			a->expect_susp = a->e == R->f.side[i].e &&
			    engine_kept(a->e, a->id) && a->opened &&
			    !a->closed && !a->reset_seen && !a->refused;
		}
		deliver[i] = (size_t)below(&R->r, R->f.side[i].wire_n + 1);
	}
	total_unseen += deliver[0] + deliver[1];
	/* Now and then one side's embedder notices first (and stops its
	 * queue pair first, as the daemon does). */
	if (below(&R->r, 4) == 0) {
		i = (int)below(&R->r, 2);
		engine_stopped(R->f.side[i].e);
		engine_fail(R->f.side[i].e, ENGINE_ERR_LOCAL, "ended here");
	}
	if (verbose)
		printf("# loss %u at step %llu (%s): %zu and %zu WRs land "
		    "unseen\n", R->nloss - 1, (unsigned long long)R->step,
		    L->strict ? "undisturbed" : "messy", deliver[0],
		    deliver[1]);
	if (fab_relink(&R->f, deliver, old) != 0) {
		for (i = 0; i < 2; i++)
			if (old[i] != NULL && R->side[i].nold < MAXOLD)
				R->side[i].old[R->side[i].nold++].e = old[i];
		return (rfail(R, "fabric: %s", R->f.err));
	}
	R->at_loss = 1;
	for (i = 0; i < 2; i++) {
		struct side *S = &R->side[i];

		if (S->nold == MAXOLD) {
			/* Too many: the oldest goes, as a timeout would. */
			if (drop_engine(R, i, S->old[0].e,
			    WIRE_REASON_LINK_LOST))
				return (-1);
			S->old[0] = S->old[--S->nold];
		}
		memset(&S->old[S->nold], 0, sizeof(S->old[0]));
		S->old[S->nold].e = old[i];
		S->old[S->nold].loss = (int)R->nloss - 1;
		S->old[S->nold].deadline = L->strict ? UINT64_MAX :
		    R->step + 500 + below(&R->r, 5000);
		memcpy(S->old[S->nold].token, S->token, WIRE_NONCE_LEN);
		memcpy(S->old[S->nold].sec, S->sec, SECRET);
		memcpy(S->old[S->nold].prev, S->prev, SECRET);
		S->old[S->nold].has_prev = S->has_prev;
		S->nold++;
		if (drain_events(R, i, old[i]))
			return (-1);
		for (k = 0; k < S->n; k++) {
			a = S->all[k];
			if (a->e != old[i])
				continue;
			n = engine_tunnel(old[i], a->id) != NULL;
			/* (A closed stream waits if its last word may be lost.) */
			if (!a->closed && a->expect_susp != n)
				return (rfail(R, "side %d stream s%llu: %s "
				    "by the loss", i,
				    (unsigned long long)a->serial, n ?
				    "suspended, but it was not kept" :
				    "kept, but not suspended"));
			if (!a->closed && n != a->suspended)
				return (rfail(R, "side %d stream s%llu: "
				    "suspended without SUSPENDED", i,
				    (unsigned long long)a->serial));
			if (n) {
				a->susp_loss = (int)R->nloss - 1;
				fate(R, a->serial)->susp[i] = a->susp_loss;
				total_susp++;
			}
		}
	}
	R->at_loss = 0;
	new_chain(R, 1);

	R->side[0].resume_at = R->step + (below(&R->r, 3) == 0 ? 0 :
	    below(&R->r, 300));
	R->progressed = 1;
	return (0);
}

/*
 * Side 0, on the new link, offers the resume of its failed engine's
 * streams (unless the run has it not), then is done with that engine.
 */
static int
offer_resume(struct run *R)
{
	struct side *S = &R->side[0];
	struct engine *old = S->old[0].e;
	uint8_t proof[WIRE_AUTH_LEN];
	size_t k;
	int n, moved;

	if (R->loss[S->old[0].loss].noresume) {
		new_chain(R, 0);
	} else {
		S->src = old;
		proof_of(R, S->sec, 0, proof);
		n = engine_resume(R->f.side[0].e, old, S->token, proof);
		moved = 0;
		for (k = 0; k < S->n; k++)
			moved += S->all[k]->e == R->f.side[0].e;
		if (n < 0 || n != moved)
			return (rfail(R, "engine_resume returned %d, %d "
			    "streams moved", n, moved));
	}
	S->nold = 0;
	R->progressed = 1;
	return (drop_engine(R, 0, old, WIRE_REASON_NOT_RESUMED));
}

/* When the next loss comes, and how long the link dies before it. */
static void
next_loss(struct run *R)
{

	R->next_loss = R->step + 50 + below(&R->r, 4000);
	/* Now and then a messy run loses the link again in the midst of the
	 * resume, where the sides' secrets move on. */
	if (R->messy && R->nloss > 0 && below(&R->r, 3) == 0)
		R->next_loss = R->side[0].resume_at + below(&R->r, 60);
	R->stall_from = R->next_loss - below(&R->r, 40);
}

/* ---------------------------------------------------------------- run */

static int
finished(struct run *R)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (R->side[i].n != 0 || R->side[i].nold != 0)
			return (0);
		if (R->side[i].opens_left != 0 && !R->link_dead)
			return (0);
	}
	if (R->link_dead)
		return (1);
	return (!fab_busy(&R->f) && engine_idle(R->f.side[0].e) &&
	    engine_idle(R->f.side[1].e));
}

/* A failed run's streams, as the engine that holds each sees them (-v). */
static void
print_streams(const struct run *R)
{
	char b[ENGINE_FLAGS_STR_LEN];
	const struct astream *a;
	size_t m;
	int i, j, held;

	for (i = 0; i < 2; i++)
		for (m = 0; m < R->side[i].n; m++) {
			a = R->side[i].all[m];
			held = a->e == R->f.side[i].e;
			for (j = 0; j < R->side[i].nold; j++)
				held |= a->e == R->side[i].old[j].e;
			if (held && a->e != NULL)
				printf("# side %d s%llu (stream %u): %s\n", i,
				    (unsigned long long)a->serial,
				    (unsigned)a->id,
				    engine_stream_flags_str(a->e, a->id, b,
				    sizeof(b)));
		}
}

/*
 * The scheduler's settings for side ${i}: chunks from 512 bytes to the
 * largest WRITE, windows from their floor up (0: the defaults).
 */
static void
sched_conf(struct run *R, int i, struct engine_conf *ec)
{
	static const uint32_t chunks[] = { 0, 512, 4096, WIRE_WRITE_MAX };
	static const uint64_t wins[] = { 0, 1, 65536, 1u << 20 };
	static const uint64_t mins[] = { 0, 0, 1, 256u << 10 };
	uint32_t chunk;
	uint64_t lo;

	ec->chunk = chunks[below(&R->rw, 4)];
	ec->window_max = wins[below(&R->rw, 4)];
	ec->window_min = mins[below(&R->rw, 4)];
	chunk = ec->chunk ? ec->chunk : WINDOW_CHUNK;
	lo = ec->window_min ? ec->window_min : (uint64_t)chunk *
	    WINDOW_MIN_CHUNKS;
	if (lo < (uint64_t)chunk * WINDOW_SHARE_MIN_CHUNKS)
		lo = (uint64_t)chunk * WINDOW_SHARE_MIN_CHUNKS;
	R->win_most[i] = ec->window_max ? ec->window_max : WINDOW_MAX;
	if (R->win_most[i] < lo)
		R->win_most[i] = lo;
	R->win_most[i] += chunk;	/* one WRITE past a shrunken window */
}

/*
 * Time passes at random speeds (so the window's estimates swing), and now
 * and then a side's link yields part of its window, as the daemon's does
 * to busier tunnels of higher priority.
 */
static void
sched_step(struct run *R)
{
	int i;

	R->now += 1 + below(&R->rw, 4) * below(&R->rw, 20000);
	for (i = 0; i < 2; i++) {
		engine_clock(R->f.side[i].e, R->now);
		if (below(&R->rw, 512) == 0)
			engine_window_share(R->f.side[i].e,
			    below(&R->rw, 4) == 0 ? 1000 :
			    1 + (uint32_t)below(&R->rw, 1000));
	}
}

/* The window holds what it says, and says no more than it may. */
static int
sched_check(struct run *R, int i)
{
	struct engine_stats st;

	engine_stats(R->f.side[i].e, &st);
	if (st.inflight > R->win_most[i] || st.window > R->win_most[i])
		return (rfail(R, "side %d: %llu bytes outstanding, window "
		    "%llu, beyond the largest %llu", i,
		    (unsigned long long)st.inflight,
		    (unsigned long long)st.window,
		    (unsigned long long)R->win_most[i]));
	if (st.window + 2 * WINDOW_CHUNK < R->win_most[i])
		all_wsmall++;
	if (st.sq_depth > R->f.side[i].conf.sq_size)
		return (rfail(R, "side %d: send queue depth %u above %u", i,
		    st.sq_depth, R->f.side[i].conf.sq_size));
	return (0);
}

/* ---------------------------------------------------------------- sealing */

/*
 * Seal the run's links, as the draw ${x} says: AES-256-GCM or
 * ChaCha20-Poly1305, and the messages counted from 0 or from just below
 * the first, second or third rekey boundary.
 */
static void
seal_run(struct run *R, uint64_t x)
{
	enum seal_aead a = SEAL_CHACHAPOLY;

	if (((x >> 1) & 1) && seal_aesgcm_available()) {
		a = SEAL_AESGCM;
		all_aesgcm++;
	}
	if ((x >> 2) & 1) {
		R->seal_from = SEAL_REKEY_EVERY * (1 + (x >> 8) % 3) - 1 -
		    (x >> 16) % NEAR_REKEY;
		all_near++;
	}
	fab_seal_at(&R->f, a, R->seal_from);
	all_sealed++;
}

/*
 * What the engines of the last link say they sealed and opened is what
 * lib/seal counted; and did the run's keys cross a rekey boundary?
 */
static int
seal_check(struct run *R)
{
	struct engine_stats st;
	uint64_t tx, rx;
	unsigned l;
	int i;

	for (i = 0; i < 2; i++) {
		for (tx = rx = 0, l = 0; l < SEAL_LANES; l++) {
			tx += seal_dir_count(&R->f.side[i].seal.tx[l]) -
			    R->seal_from;
			rx += seal_dir_count(&R->f.side[i].seal.rx[l]) -
			    R->seal_from;
		}
		engine_stats(R->f.side[i].e, &st);
		if (st.sealed_msgs != tx || st.opened_msgs != rx)
			return (rfail(R, "side %d sealed %llu and opened %llu "
			    "messages, but its AEAD counted %llu and %llu on "
			    "its lanes", i,
			    (unsigned long long)st.sealed_msgs,
			    (unsigned long long)st.opened_msgs,
			    (unsigned long long)tx, (unsigned long long)rx));
	}
	if (fab_rekeys(&R->f) > 0)
		all_rekeyed++;
	return (0);
}

/* ---------------------------------------------------------------- setup */

/* A run of configuration ${c} from ${seed}: its draws seeded, no link yet. */
static struct run *
run_new(const struct config *c, uint64_t seed)
{
	struct run *R = calloc(1, sizeof(*R));

	if (R == NULL)
		abort();
	R->c = c;
	R->seed = seed;
	R->r.s = splitmix(seed);
	R->rz.s = splitmix(seed ^ 0x7e512eULL);
	R->rw.s = splitmix(seed ^ 0x5c4ed0ULL);
	R->next_rkey = 0x100;
	return (R);
}

/* Side ${i}'s engine settings, and how many streams it opens. */
static void
side_conf(struct run *R, int i, struct engine_conf *ec)
{
	const struct config *c = R->c;

	memset(ec, 0, sizeof(*ec));
	ec->sq_size = c->sq_min + (uint32_t)below(&R->r,
	    c->sq_max - c->sq_min + 1);
	ec->rq_size = c->rq_min + (uint32_t)below(&R->r,
	    c->rq_max - c->rq_min + 1);
	ec->inline_size = (uint32_t)below(&R->r, 3) * 128;
	ec->signal_every = (uint32_t)below(&R->r, 8);
	ec->max_streams = c->max_streams;
	ec->lanes = (uint8_t)c->lanes;
	sched_conf(R, i, ec);
	R->side[i].R = R;
	R->side[i].i = i;
	R->side[i].opens_left = 1 + (uint32_t)below(&R->r, c->streams_max);
}

/*
 * When the hostile peer strikes (faults), or how many times and how the
 * link is lost (losses; then both engines ${ec} can resume).
 */
static void
plan_faults(struct run *R, struct engine_conf ec[2])
{
	const struct config *c = R->c;
	size_t j;
	int i;

	if (c->faults)
		R->fault_at = 200 + below(&R->r, 3000);
	R->loss_max = c->faults ? 0 : c->losses ? c->losses : all_lose ? 2 : 0;
	R->stall_from = UINT64_MAX;
	if (losing(R)) {
		/* Drawn after the rest: runs without losses stay the same. */
		R->loss_max = 1 + (unsigned)below(&R->r, R->loss_max);
		R->messy = below(&R->r, 4) == 0;
		R->v4 = below(&R->r, 4) == 0;
		next_loss(R);
		for (i = 0; i < 2; i++)
			ec[i].resume = 1;
	}
	R->nfate = 2 * ((size_t)c->streams_max + 2);
	if ((R->fate = calloc(R->nfate, sizeof(*R->fate))) == NULL)
		abort();
	for (j = 0; j < R->nfate; j++)
		R->fate[j].susp[0] = R->fate[j].susp[1] = -1;
}

/*
 * The first link, engines ${ec}: sealed or not, resume and ring memory
 * hooked up; it can resize rings exactly when it cannot resume.
 */
static int
start_link(struct run *R, const struct engine_conf ec[2])
{
	struct engine_resume er;
	struct engine_mem em;
	int i;

	if (fab_init_cap(&R->f, &ec[0], &ec[1], R->v4 ? 4 : 0,
	    R->v4 ? 4 : 0))
		return (rfail(R, "fabric: %s", R->f.err));
	/* Its own draw: runs stay the same but for the sealing. */
	if ((R->sealed = (splitmix(R->seed ^ 0x5ea1edULL) & 1) != 0))
		seal_run(R, splitmix(R->seed ^ 0x5ea1edULL));
	if (losing(R)) {
		for (i = 0; i < 2; i++) {
			er.find = i == 1 ? cb_find : NULL;
			er.proved = i == 0 ? cb_proved : NULL;
			er.adopt = cb_adopt;
			er.adopted = cb_adopted;
			er.denied = NULL;
			er.arg = &R->side[i];
			fab_set_resume(&R->f, i, &er);
		}
		new_chain(R, 0);
		new_chain(R, 1);
	}
	/* Every engine gets ring memory (links that can resume never ask). */
	for (i = 0; i < 2; i++) {
		em.alloc = cb_alloc;
		em.free = cb_free;
		em.arg = &R->side[i];
		fab_set_mem(&R->f, i, &em);
	}
	R->resizing = engine_can_resize(R->f.side[0].e) &&
	    engine_can_resize(R->f.side[1].e);
	if (engine_can_resize(R->f.side[0].e) == losing(R))
		return (rfail(R, "the link can%s resize rings, but it can%s "
		    "resume", losing(R) ? "" : "not", losing(R) ? "" : "not"));
	return (0);
}

/* Everything a run starts with; -1 if the link could not start. */
static int
run_setup(struct run *R)
{
	struct engine_conf ec[2];
	int i;

	uint64_t x = splitmix(R->seed ^ 0x1a4bULL);

	for (i = 0; i < 2; i++)
		side_conf(R, i, &ec[i]);
	plan_faults(R, ec);
	/*
	 * A run in four (of those that reach version 11) is on iWARP: the
	 * fabric refuses immediates, and completes a WR when it takes it.
	 * Its own draw, so the rest stay the same; one device in two says
	 * so, since either hello rules.  Its links of two lanes (version 12)
	 * fence their lane switches: a stream moves once the peer answered
	 * a FENCE on the old lane.
	 */
	if (!R->v4 && (x & 3) == 0) {
		R->iwarp = 1;
		ec[0].notify = 1;
		ec[1].notify = (uint8_t)(x >> 2 & 1);
		all_iwarp++;
	}
	if (start_link(R, ec))
		return (-1);
	for (i = 0; i < 2; i++)
		if (engine_notify(R->f.side[i].e) != R->iwarp)
			return (rfail(R, "side %d runs %s immediates on a "
			    "fabric %s them", i, R->iwarp ? "with" : "without",
			    R->iwarp ? "without" : "with"));
	if (R->iwarp && R->sealed)
		all_iwarp_sealed++;
	if (R->iwarp && engine_lanes(R->f.side[0].e) > 1)
		all_iwarp_lanes++;
	return (0);
}

/* ---------------------------------------------------------------- steps */

/* Is it time for the hostile peer (faults) to inject its fault? */
static int
fault_due(const struct run *R)
{

	return (R->c->faults && !R->link_dead && R->step >= R->fault_at &&
	    R->side[0].n > 0 && R->f.side[0].posted_n > 0 &&
	    (!R->sealed || (R->f.side[1].wire_n > 0 &&
	    R->f.side[0].cq_n == 0)));
}

/* Is it time to lose the link? */
static int
loss_due(struct run *R)
{

	return (R->nloss < R->loss_max && R->step >= R->next_loss &&
	    R->side[0].n + R->side[1].n > 0 && (R->messy || settled(R)));
}

/*
 * One thing happens, as the draw ${k} (0 to 99) says unless a fault, a
 * loss or a resume is due: a side's work requests land or complete, the
 * link stalls, or the application acts.  1 if the run must stop.
 */
static int
act(struct run *R, uint64_t k)
{

	if (fault_due(R)) {
		if (inject_fault(R))
			return (1);
		R->progressed = 1;
	} else if (loss_due(R)) {
		if (lose_link(R))
			return (1);
		next_loss(R);
	} else if (R->side[0].nold > 0 && R->step >= R->side[0].resume_at) {
		if (offer_resume(R))
			return (1);
	} else if (k < 50 && R->step >= R->stall_from &&
	    R->nloss < R->loss_max && below(&R->r, 4) != 0) {
		/* A dying link: work requests pile up unexecuted. */
		R->progressed = 0;
	} else if (k < 25) {
		R->progressed = fab_deliver(&R->f, 0) > 0;
	} else if (k < 50) {
		R->progressed = fab_deliver(&R->f, 1) > 0;
	} else if (k < 60) {
		R->progressed = fab_complete(&R->f, 0) > 0;
	} else if (k < 70) {
		R->progressed = fab_complete(&R->f, 1) > 0;
	} else {
		if (app_step(R, (int)below(&R->r, 2)))
			return (1);
	}
	return (0);
}

/*
 * Now and then a side trims, wherever the streams are; twice in a row,
 * every grown ring with nothing to read or write just then shrinks,
 * however much is in flight.
 */
static void
trim_some(struct run *R)
{
	int i;

	if (R->resizing && below(&R->rz, 32) == 0) {
		i = (int)below(&R->rz, 2);
		engine_trim(R->f.side[i].e);
		if (below(&R->rz, 4) == 0)
			engine_trim(R->f.side[i].e);
	}
}

/*
 * Each side in turn: its link still up (unless the run ended it), its
 * posted work onto the fabric, its window within bounds, its events
 * handled.  The run failed if not.
 */
static void
pump_sides(struct run *R)
{
	const char *why;
	int i;

	for (i = 0; i < 2; i++) {
		why = engine_error(R->f.side[i].e);
		if (why != NULL && !R->link_dead) {
			rfail(R, "side %d link failed: %s", i, why);
			return;
		}
		if (fab_pump(&R->f, i) < 0) {
			rfail(R, "fabric: %s", R->f.err);
			return;
		}
		if (sched_check(R, i) || drain_side(R, i))
			return;
	}
}

/*
 * The daemon's side of a loss: failed engines given up, a refusal seen,
 * a confirmed resume's old secret dropped, a settled resume noted.
 */
static int
tend_resumes(struct run *R)
{

	if (drop_old(R))
		return (-1);
	check_denied(R);
	confirmed(R);
	(void)settled(R);
	return (0);
}

/*
 * Step ${R->step}: time passes, one thing happens, the sides pump and
 * are checked.  1 if the run must stop (failed, finished, or stuck:
 * nothing moved for ${*idle} steps).
 */
static int
run_step(struct run *R, uint64_t *idle)
{
	uint64_t k = below(&R->r, 100);

	R->progressed = 0;
	sched_step(R);
	if (act(R, k))
		return (1);
	trim_some(R);
	if (R->f.failed) {
		rfail(R, "fabric: %s", R->f.err);
		return (1);
	}
	pump_sides(R);
	if (R->failed)
		return (1);
	/*
	 * With nothing in flight either way, a period of the daemon's
	 * clock may as well have passed: a RING must have its answer by
	 * now, or the RING_AT deadline ends the link.
	 */
	if (R->resizing && !R->link_dead && quiet(&R->f)) {
		engine_tick(R->f.side[0].e);
		engine_tick(R->f.side[1].e);
	}
	if (losing(R) && tend_resumes(R))
		return (1);
	if (finished(R))
		return (1);
	*idle = R->progressed ? 0 : *idle + 1;
	if (*idle > 20000) {
		rfail(R, "deadlock: nothing can move (side 0: %zu streams, "
		    "side 1: %zu streams and %d failed engines, in flight "
		    "%zu/%zu)", R->side[0].n, R->side[1].n, R->side[1].nold,
		    R->f.side[0].wire_n, R->f.side[1].wire_n);
		return (1);
	}
	return (0);
}

/* Step until the run stops, or the step limit. */
static void
run_steps(struct run *R)
{
	uint64_t step, idle = 0;

	for (step = 0; step < 20000000 && !R->failed; step++) {
		R->step = step;
		if (run_step(R, &idle))
			break;
	}
}

/* ---------------------------------------------------------------- outcome */

/*
 * Side ${i}'s ring resizes are those its ring memory saw (on the first
 * link only: the next ones resume), and they count toward the totals.
 */
static void
count_resizes(struct run *R, int i)
{
	struct engine_stats st;

	engine_stats(R->f.side[i].e, &st);
	if (st.ring_grows + st.ring_shrinks != R->side[i].allocs ||
	    st.ring_refused != R->side[i].refused)
		rfail(R, "side %d: %llu growths and %llu shrinks, %llu "
		    "refused, but %llu rings given, %llu refused", i,
		    (unsigned long long)st.ring_grows,
		    (unsigned long long)st.ring_shrinks,
		    (unsigned long long)st.ring_refused,
		    (unsigned long long)R->side[i].allocs,
		    (unsigned long long)R->side[i].refused);
	total_grows += st.ring_grows;
	all_fences[0] += st.lane[0].fences;
	all_fences[1] += st.lane[1].fences;
	all_wstalls += st.stall_window;
	total_shrinks += st.ring_shrinks;
	total_halves += R->side[i].halves;
	total_refused += st.ring_refused;
}

/* What must hold once the steps are over. */
static void
run_checks(struct run *R)
{
	struct engine_stats st;
	int i;

	if (!R->failed && !finished(R))
		rfail(R, "did not finish within the step limit");
	if (!R->failed && R->sealed)
		(void)seal_check(R);
	if (!R->failed && !R->link_dead) {
		for (i = 0; i < 2; i++) {
			engine_stats(R->f.side[i].e, &st);
			if (st.streams_active != 0)
				rfail(R, "side %d: %u streams still active",
				    i, (unsigned)st.streams_active);
			else if (st.rx_private != 0)
				rfail(R, "side %d: %llu bytes of private ring "
				    "copies counted with no stream left", i,
				    (unsigned long long)st.rx_private);
		}
	}
	for (i = 0; i < 2 && !R->failed && R->f.links == 1; i++)
		count_resizes(R, i);
}

/*
 * The run's outcome (0, or -1 and why in ${err}), its trace folded into
 * the configuration's, and everything it held freed.
 */
static int
run_end(struct run *R, char *err, size_t errlen)
{
	int i, j, rc = 0;
	size_t m;

	if (R->failed && verbose)
		print_streams(R);
	if (R->failed) {
		snprintf(err, errlen, "%s", R->err);
		rc = -1;
	}
	for (i = 0; i < 2; i++) {
		for (m = 0; m < R->side[i].n; m++) {
			free_rings(R, i, R->side[i].all[m]);
			free(R->side[i].all[m]);
		}
		free(R->side[i].all);
		for (j = 0; j < R->side[i].nold; j++)
			engine_free(R->side[i].old[j].e);
	}
	free(R->fate);
	/* The run's trace, and whether it passed, into the config's. */
	fab_trace(&R->f, &rc, sizeof(rc));
	trace_all = (trace_all ^ R->f.trace) * 0x100000001b3ull;
	fab_free(&R->f);
	free(R);
	arena_reset();
	return (rc);
}

/* One run of configuration ${c} from ${seed}: 0, or -1 and why in ${err}. */
static int
run_one(const struct config *c, uint64_t seed, char *err, size_t errlen)
{
	struct run *R = run_new(c, seed);

	run_config_name = c->name;
	run_seed = seed;
	if (run_setup(R) == 0) {
		run_steps(R);
		run_checks(R);
	}
	return (run_end(R, err, errlen));
}

/* ---------------------------------------------------------------- main */

/* The command line. */
struct opts {
	const char *only;	/* -c: this configuration only */
	uint64_t seed;		/* -s: this seed only (have_seed) */
	int have_seed;
	uint64_t count;		/* -n: seeds per configuration (0: its own) */
};

/* Read the command line into ${o} (and the flags): -1 if it is wrong. */
static int
parse_opts(int argc, char **argv, struct opts *o)
{
	int ch;

	memset(o, 0, sizeof(*o));
	while ((ch = getopt(argc, argv, "c:s:n:lvH")) != -1) {
		switch (ch) {
		case 'c':
			o->only = optarg;
			break;
		case 's':
			o->seed = strtoull(optarg, NULL, 0);
			o->have_seed = 1;
			break;
		case 'n':
			o->count = strtoull(optarg, NULL, 0);
			break;
		case 'l':
			all_lose = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'H':
			show_trace = 1;
			break;
		default:
			fprintf(stderr, "usage: sim [-c CONFIG] [-s SEED] "
			    "[-n COUNT] [-l] [-v] [-H]\n");
			return (-1);
		}
	}
	return (0);
}

/* Configuration ${c}'s trace (-H), which starts again. */
static void
print_trace(const struct config *c)
{

	if (show_trace)
		printf("# trace %s %016llx\n", c->name,
		    (unsigned long long)trace_all);
	trace_all = 0;
}

/* -s: configuration ${c}'s run from ${seed}, as TAP line ${++*t}. */
static int
replay_seed(const struct config *c, uint64_t seed, int *t)
{
	char err[512];
	int rc = run_one(c, seed, err, sizeof(err));

	printf("%s %d - %s seed %llu%s%s\n", rc ? "not ok" : "ok", ++*t,
	    c->name, (unsigned long long)seed, rc ? ": " : "",
	    rc ? err : "");
	print_trace(c);
	return (rc != 0);
}

/* Seeds 1 to ${n} of ${c}: how many failed (the first five say why). */
static uint64_t
run_seeds(const struct config *c, uint64_t n)
{
	uint64_t s, failures = 0;
	char err[512];

	for (s = 1; s <= n; s++) {
		if (run_one(c, s, err, sizeof(err)) != 0) {
			if (failures++ < 5)
				printf("# %s seed %llu failed: %s\n"
				    "#   replay: tests/sim/sim -c %s "
				    "-s %llu%s -v\n", c->name,
				    (unsigned long long)s, err,
				    c->name, (unsigned long long)s,
				    all_lose ? " -l" : "");
		}
	}
	return (failures);
}

/* ${c}'s TAP line ${++*t}: ${n} seeds, ${failures} failed, since ${t0}. */
static void
config_line(const struct config *c, uint64_t n, uint64_t failures,
    clock_t t0, int *t)
{
	char extra[256], rs[160];

	extra[0] = '\0';
	if (total_losses > 0)
		snprintf(extra, sizeof(extra), "; %llu link losses "
		    "(%llu undisturbed), %llu WRs landed unseen, "
		    "%llu stream ends suspended, %llu resumed, %llu "
		    "not resumed, %llu secrets moved on",
		    (unsigned long long)total_losses,
		    (unsigned long long)total_strict,
		    (unsigned long long)total_unseen,
		    (unsigned long long)total_susp,
		    (unsigned long long)total_resumed,
		    (unsigned long long)total_lost,
		    (unsigned long long)total_ratchets);
	rs[0] = '\0';
	if (total_rs > 0)
		snprintf(rs, sizeof(rs), "; %llu resizable stream "
		    "ends, %llu ring growths, %llu shrinks (%llu halved "
		    "for a lagging reader), %llu refused",
		    (unsigned long long)total_rs,
		    (unsigned long long)total_grows,
		    (unsigned long long)total_shrinks,
		    (unsigned long long)total_halves,
		    (unsigned long long)total_refused);
	printf("%s %d - %s: %s: %llu seeds, %llu failed "
	    "(%llu stream ends, %llu EOFs, %.1f MiB verified%s%s, "
	    "%.1f s)\n",
	    failures ? "not ok" : "ok", ++*t, c->name, c->desc,
	    (unsigned long long)n, (unsigned long long)failures,
	    (unsigned long long)total_streams,
	    (unsigned long long)total_eofs,
	    (double)total_bytes / 1048576, extra, rs,
	    (double)(clock() - t0) / CLOCKS_PER_SEC);
}

/* A configuration's totals into the whole run's, and start again. */
static void
fold_totals(void)
{

	all_rs += total_rs;
	all_grows += total_grows;
	all_shrinks += total_shrinks;
	all_halves += total_halves;
	all_refused += total_refused;
	all_losses += total_losses;
	all_ratchets += total_ratchets;
	total_bytes = total_streams = total_eofs = 0;
	total_losses = total_susp = total_resumed = total_lost = 0;
	total_strict = total_unseen = total_ratchets = 0;
	total_rs = total_grows = total_shrinks = total_refused = 0;
	total_halves = 0;
}

/* ${count} seeds of ${c} (0: its own number), as TAP line ${++*t}. */
static int
run_config(const struct config *c, uint64_t count, int *t)
{
	uint64_t n = count ? count : c->seeds, failures;
	clock_t t0 = clock();

	failures = run_seeds(c, n);
	config_line(c, n, failures, t0, t);
	fold_totals();
	print_trace(c);
	fflush(stdout);
	return (failures != 0);
}

/*
 * Resizing must have happened, both ways, and receive rings halved under
 * slow readers, wherever it could: a change that stopped rings growing or
 * shrinking would otherwise pass unseen.  (One seed may well do neither.)
 */
static int
seen_resizes(int *t)
{
	int none = all_rs > 0 && (all_grows == 0 || all_shrinks == 0 ||
	    all_halves == 0);

	printf("%s %d - ring resizes: %llu resizable stream ends, %llu "
	    "growths, %llu shrinks (%llu halved for a lagging reader), %llu "
	    "refused%s\n",
	    none ? "not ok" : "ok", ++*t, (unsigned long long)all_rs,
	    (unsigned long long)all_grows,
	    (unsigned long long)all_shrinks,
	    (unsigned long long)all_halves,
	    (unsigned long long)all_refused, all_rs == 0 ?
	    " (no run's link could resize)" : "");
	return (none);
}

/* Likewise chains moving on to a secret of their own. */
static int
seen_ratchets(int *t)
{
	int none = all_losses > 0 && all_ratchets == 0;

	printf("%s %d - resume secrets: %llu link losses, %llu secrets "
	    "moved on%s\n", none ? "not ok" : "ok", ++*t,
	    (unsigned long long)all_losses,
	    (unsigned long long)all_ratchets, all_losses == 0 ?
	    " (no run lost its link)" : "");
	return (none);
}

/* And the window must have shrunk, and held data back. */
static int
seen_window(int *t)
{
	int none = all_wstalls == 0 || all_wsmall == 0;

	printf("%s %d - send window: %llu stalls on a full window, "
	    "%llu turns under a window below its largest\n",
	    none ? "not ok" : "ok", ++*t,
	    (unsigned long long)all_wstalls,
	    (unsigned long long)all_wsmall);
	return (none);
}

/*
 * Sealed runs, with either AEAD where both exist, keys renewed mid-run,
 * and a flipped bit caught where faults ran (all configurations, or
 * ${only} that one).
 */
static int
seen_sealing(const char *only, int *t)
{
	int none = all_sealed == 0 || all_rekeyed == 0 ||
	    (seal_aesgcm_available() && (all_aesgcm == 0 ||
	    all_aesgcm == all_sealed)) || (all_tampered == 0 &&
	    (only == NULL || strcmp(only, "faults") == 0));

	printf("%s %d - sealing: %llu sealed runs (%llu with "
	    "AES-256-GCM; %llu of %llu that started near a rekey "
	    "boundary crossed it), %llu flipped bits caught\n",
	    none ? "not ok" : "ok", ++*t,
	    (unsigned long long)all_sealed,
	    (unsigned long long)all_aesgcm,
	    (unsigned long long)all_rekeyed,
	    (unsigned long long)all_near,
	    (unsigned long long)all_tampered);
	return (none);
}

/*
 * The arena's own check: a child frees a ring and reads it.  It must not
 * live to exit 0, and arena_fault must have said so; under a sanitizer,
 * which then reports and exits 1, as without one, killed by SIGSEGV.
 */
static int
seen_fault(int *t)
{
	char out[1024];
	size_t len = 0;
	ssize_t k;
	int fd[2], st = 0, said, bad;
	pid_t pid;
	uint8_t *p;

	if (pipe(fd) != 0 || (pid = fork()) < 0)
		abort();
	if (pid == 0) {
		(void)dup2(fd[1], STDERR_FILENO);
		run_config_name = "fault-check";
		if ((p = arena_alloc(ARENA_PAGE)) == NULL)
			_exit(2);
		arena_free(p, ARENA_PAGE);
		(void)*(volatile uint8_t *)p;
		_exit(0);
	}
	(void)close(fd[1]);
	while (len < sizeof(out) - 1 &&
	    (k = read(fd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)k;
	out[len] = '\0';
	(void)close(fd[0]);
	(void)waitpid(pid, &st, 0);
	said = strstr(out, "touched ring memory") != NULL;
	bad = !said || (WIFEXITED(st) && WEXITSTATUS(st) == 0);
	printf("%s %d - a freed ring's memory faults when touched, and the "
	    "fault names the run (%s)\n", bad ? "not ok" : "ok", ++*t,
	    WIFSIGNALED(st) ? "killed by its signal" : said ?
	    "reported, then exited" : "it was not caught");
	return (bad);
}

/* Runs on a fabric without immediates, sealed ones among them, and
 * (where the configurations run two lanes) fenced ones. */
static int
seen_iwarp(const char *only, int *t)
{
	int lanes = only == NULL || strncmp(only, "lanes", 5) == 0;
	int none = all_iwarp == 0 || all_iwarp_sealed == 0 ||
	    (lanes && (all_iwarp_lanes == 0 || all_fences[0] == 0 ||
	    all_fences[1] == 0));

	printf("%s %d - iWARP: %llu runs without immediates, %llu of them "
	    "sealed, %llu of two lanes; FENCEs %llu on lane 0, %llu on "
	    "lane 1\n", none ? "not ok" : "ok", ++*t,
	    (unsigned long long)all_iwarp,
	    (unsigned long long)all_iwarp_sealed,
	    (unsigned long long)all_iwarp_lanes,
	    (unsigned long long)all_fences[0],
	    (unsigned long long)all_fences[1]);
	return (none);
}

int
main(int argc, char **argv)
{
	const struct config *c;
	struct opts o;
	int t = 0, bad = 0;
	size_t ci;

	if (sodium_init() < 0)
		return (2);
	if (parse_opts(argc, argv, &o) != 0)
		return (2);
	arena_fault_catch();
	for (ci = 0; ci < NCONFIGS; ci++) {
		c = &configs[ci];
		if (o.only != NULL && strcmp(o.only, c->name) != 0)
			continue;
		if (o.have_seed)
			bad |= replay_seed(c, o.seed, &t);
		else
			bad |= run_config(c, o.count, &t);
	}
	/* What the many seeds together must have reached. */
	if (!o.have_seed) {
		bad |= seen_resizes(&t);
		bad |= seen_ratchets(&t);
		bad |= seen_window(&t);
		bad |= seen_sealing(o.only, &t);
		bad |= seen_iwarp(o.only, &t);
		bad |= seen_fault(&t);
	}
	printf("1..%d\n", t);
	return (bad ? 1 : 0);
}
