/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * engine_seeds: the engine fuzzer's seed corpus (tests/fuzz/corpus/engine,
 * written by make-corpus.py) replayed through fuzz_engine.c's own harness,
 * without libFuzzer, checking that each seed gets where its name says: a
 * seed written to drive the engine into a path (an incoming OPEN, a
 * server-side resume, a ring that grows...) must not end at an early
 * protocol violation, and must show what that path does (the events, the
 * counts); a seed written to break the protocol must end the link at the
 * operation that breaks it, with that error.  A seed that fuzzing starts
 * from but that stops short leaves the fuzzer to find its way there.
 *
 * Usage: engine_seeds [CORPUS_DIR]  (TAP; the source tree's by default)
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fuzz_engine.h"
#include "seal.h"
#include "tap.h"

#define EV(name)	ENGINE_EV_##name

/* Keys crossed a rekey boundary: this side's sealing, its opening. */
#define REKEY_TX	1
#define REKEY_RX	2

/*
 * What a seed must reach.  A field left zero asks nothing, but for
 * ${fails}: zero, the link never fails.  Counts are at least so much.
 */
struct want {
	const char *seed;
	const char *what;	/* the path, as the TAP line says it */
	int fails;		/* the link fails at this operation (1: the
				   input's first after the mode byte) */
	const char *error;	/* ... with an error that begins so */
	uint32_t events;	/* ENGINE_EV_* seen, every one */
	uint64_t opened, accepted, resumed, not_resumed, denied;
	uint64_t grows, shrinks, refused;	/* ring resizes */
	uint64_t rx, tx;	/* stream payload bytes */
	uint64_t eager, eager_rx;	/* DATA records sent, arrived (lanes) */
	int notify;		/* the link runs without immediates */
	uint64_t fences;	/* FENCEs sent, both lanes */
	int origins;		/* INCOMING streams with an ORIGIN */
	int adopted;		/* the failed engine was taken over */
	int hs_done;		/* the identity handshake is done */
	int sealed;		/* the link seals */
	int rekey;		/* REKEY_* */
	unsigned version;	/* the link's version */
};

#define VIOLATION	"protocol violation: "
#define AUTH_FAILED	"authentication failed: "
#define SEAL_FAILED	"sealed record failed authentication"

static const struct want wants[] = {
	{ "open-ok", "our OPENs answered", .events = EV(OPENED), .opened = 2 },
	{ "data", "data both ways on opened streams",
	    .events = EV(OPENED) | EV(READABLE), .rx = 4196, .tx = 300 },
	{ "shutdown-close", "the peer shuts down, then both close",
	    .events = EV(OPENED) | EV(READABLE) | EV(EOF) | EV(RELEASED),
	    .rx = 10 },
	{ "incoming", "an incoming OPEN accepted, data read",
	    .events = EV(INCOMING) | EV(READABLE), .accepted = 1, .rx = 50 },
	{ "incoming-origin", "an incoming OPEN with ORIGIN accepted",
	    .events = EV(INCOMING) | EV(READABLE), .accepted = 1, .origins = 1,
	    .rx = 50 },
	{ "reset", "resets both ways",
	    .events = EV(OPENED) | EV(RESET) | EV(RELEASED) },

	{ "resume-client", "our resume taken and proved, data both ways",
	    .events = EV(RESUMED) | EV(READABLE), .resumed = 3, .rx = 50,
	    .tx = 700 },
	{ "resume-client-gone", "our resume answered with GONE streams",
	    .events = EV(RESUMED) | EV(RELEASED), .resumed = 1,
	    .not_resumed = 2 },
	{ "resume-client-wrong-proof", "the peer's RESUME_PROOF is wrong",
	    .fails = 1, .error = AUTH_FAILED "the peer's RESUME_PROOF is "
	    "wrong" },
	{ "resume-client-v4", "our resume taken at version 4",
	    .events = EV(RESUMED) | EV(READABLE), .resumed = 3, .rx = 50,
	    .version = 4 },
	{ "resume-client-denied", "our resume refused",
	    .events = EV(RELEASED), .denied = 1, .not_resumed = 3 },
	{ "resume-server", "the peer's resume taken, then a new OPEN",
	    .events = EV(RESUMED) | EV(READABLE) | EV(INCOMING), .adopted = 1,
	    .resumed = 3, .accepted = 1, .rx = 20, .tx = 100 },
	{ "resume-server-split", "names in three SENDs, our OPEN after",
	    .events = EV(RESUMED), .adopted = 1, .resumed = 3, .opened = 1,
	    .tx = 300 },
	{ "resume-server-v4", "the peer's resume taken at version 4",
	    .events = EV(RESUMED) | EV(READABLE), .adopted = 1, .resumed = 3,
	    .rx = 20, .version = 4 },
	{ "resume-server-adopt-fails", "one stream cannot be adopted",
	    .events = EV(RESUMED) | EV(RESET), .adopted = 1, .resumed = 2 },
	{ "resume-refused", "the peer's resume refused, then its OPEN",
	    .events = EV(INCOMING), .denied = 1, .accepted = 1 },
	{ "resume-refused-v4", "the same at version 4, names unheard",
	    .events = EV(INCOMING), .denied = 1, .accepted = 1, .version = 4 },

	{ "ring-peer", "the peer's ring grows, then our send ring",
	    .events = EV(OPENED) | EV(WRITABLE), .grows = 1, .tx = 12288 },
	{ "ring-tx-old", "our send ring grows, shrinks with a WRITE out",
	    .grows = 1, .shrinks = 1, .tx = 28776 },
	{ "ring-tx-idle", "our send ring grows, shrinks idle",
	    .grows = 1, .shrinks = 1, .tx = 28876 },
	{ "ring-grow", "our receive ring grows and shrinks",
	    .events = EV(READABLE), .grows = 1, .shrinks = 1, .rx = 20580 },
	{ "ring-shrink-race", "a shrink races the peer's data",
	    .events = EV(READABLE), .grows = 1, .shrinks = 1, .rx = 16288 },
	{ "ring-refused", "a growth refused, then allowed",
	    .events = EV(READABLE), .grows = 1, .refused = 1, .rx = 16384 },
	{ "ring-at-unasked", "a RING_AT nobody asked for",
	    .fails = 2, .error = VIOLATION "RING_AT for stream 0 in a state" },
	{ "ring-at-wrong", "a RING_AT at the wrong cursor",
	    .fails = 6, .error = VIOLATION "RING_AT for stream 0 at 5000" },
	{ "ring-twice", "a second RING before our RING_AT",
	    .fails = 2, .error = VIOLATION "RING for stream 0 in a state" },
	{ "ring-after-reset", "a RING after our RESET is old news",
	    .events = EV(OPENED) | EV(RELEASED) },

	{ "sealed-data", "data both ways, sealed",
	    .events = EV(READABLE), .sealed = 1, .rx = 4396, .tx = 300 },
	{ "sealed-tamper-data", "a flipped bit in sealed data",
	    .fails = 4, .error = SEAL_FAILED, .rx = 100 },
	{ "sealed-tamper-send", "a flipped bit in a sealed SEND",
	    .fails = 3, .error = SEAL_FAILED },
	{ "sealed-resume-client", "our resume on a sealed link",
	    .events = EV(RESUMED), .sealed = 1, .resumed = 3, .rx = 50,
	    .tx = 700 },
	{ "sealed-rekey", "keys renewed both ways mid-run",
	    .events = EV(READABLE), .sealed = 1, .rekey = REKEY_TX | REKEY_RX,
	    .rx = 4396, .tx = 2300 },
	{ "sealed-rekey-aes-resume", "keys renewed under a resume",
	    .events = EV(RESUMED), .sealed = 1, .rekey = REKEY_TX,
	    .resumed = 3, .tx = 2800 },

	{ "lanes-data", "two lanes: DATA in, eager bytes out",
	    .events = EV(OPENED) | EV(READABLE), .rx = 100, .tx = 64,
	    .eager = 1, .eager_rx = 1, .version = WIRE_VERSION },
	{ "lanes-bulk", "two lanes: WRITEs in, DATA after a lane-1 completion",
	    .events = EV(OPENED) | EV(READABLE), .rx = 4196, .tx = 3064,
	    .eager = 1, .eager_rx = 1, .version = WIRE_VERSION },
	{ "lanes-sealed", "two lanes, sealed: DATA in, eager bytes out",
	    .events = EV(OPENED) | EV(READABLE), .rx = 100, .tx = 64,
	    .eager = 1, .eager_rx = 1, .sealed = 1, .version = WIRE_VERSION },
	{ "lanes-data-gap", "two lanes: DATA past the arrived bytes",
	    .fails = 2, .error = VIOLATION "DATA for stream 0 at 5" },
	{ "lanes-imm-lane1", "two lanes: a WRITE's completion on lane 1",
	    .fails = 2, .error = VIOLATION "a data WRITE on lane 1" },
	{ "data-one-lane", "one lane: a DATA record",
	    .fails = 2, .error = VIOLATION "DATA on a link of one lane" },
	{ "notify-data", "no immediates: WRITEs in by their notices, out "
	    "with them, lane switches fenced", .events = EV(OPENED) |
	    EV(READABLE), .rx = 4196, .tx = 3000, .notify = 1, .fences = 1,
	    .version = WIRE_VERSION },
	{ "notify-sealed", "no immediates, sealed: a notice and its tag",
	    .events = EV(OPENED) | EV(READABLE), .rx = 100, .tx = 3000,
	    .sealed = 1, .notify = 1, .version = WIRE_VERSION },
	{ "notify-fenced-unasked", "no immediates: a FENCED for no FENCE",
	    .fails = 2, .error = VIOLATION "FENCED 7, but no FENCE of that "
	    "number is out" },
	{ "fence-one-lane", "one lane: a FENCE",
	    .fails = 2, .error = VIOLATION "FENCE on a link that does not "
	    "fence (1 lane, with immediates)" },
	{ "notify-imm", "no immediates: a WRITE WITH IMMEDIATE",
	    .fails = 2, .error = VIOLATION "a WRITE WITH IMMEDIATE on a link "
	    "without immediates" },

	{ "hs-initiator", "the handshake from this side, sealed, data",
	    .events = EV(OPENED) | EV(READABLE), .hs_done = 1, .sealed = 1,
	    .rx = 100, .tx = 300, .version = WIRE_VERSION },
	{ "hs-responder", "the handshake from the peer, sealed, its OPEN",
	    .events = EV(INCOMING) | EV(READABLE), .hs_done = 1, .sealed = 1,
	    .accepted = 1, .rx = 50, .version = WIRE_VERSION },
	{ "hs-clear", "the handshake, unsealed, data",
	    .events = EV(OPENED) | EV(READABLE), .hs_done = 1, .rx = 100 },
	{ "hs6-initiator", "the handshake at version 6, this side",
	    .events = EV(OPENED) | EV(READABLE), .hs_done = 1, .sealed = 1,
	    .rx = 100, .tx = 300, .version = 6 },
	{ "hs6-opens-first", "version 6, this side: message 3 waits for "
	    "room; the peer's sealed data opens",
	    .events = EV(OPENED) | EV(READABLE), .hs_done = 1, .rx = 100,
	    .version = 6 },
	{ "hs6-responder", "the handshake at version 6, the peer",
	    .events = EV(INCOMING) | EV(READABLE), .hs_done = 1, .sealed = 1,
	    .accepted = 1, .rx = 50, .version = 6 },
	{ "hs-wrong-confirm", "a wrong confirmation",
	    .fails = 2, .error = AUTH_FAILED "not of this fleet" },
	{ "hs-open-unconfirmed", "OPEN_OK before the confirmation",
	    .fails = 3, .error = VIOLATION "OPEN_OK before authentication" },
	{ "hs-spoilt", "a spoilt first message",
	    .fails = 1, .error = AUTH_FAILED "not of this fleet" },
	{ "hs-short", "a short first message",
	    .fails = 1, .error = AUTH_FAILED "not of this fleet" },
	{ "hs-auth-instead", "an AUTH record instead of the handshake",
	    .fails = 1, .error = VIOLATION "unexpected AUTH" },
	{ "hs-early-open", "an OPEN before the handshake",
	    .fails = 1, .error = VIOLATION "OPEN before authentication" },
};
#define NWANTS	(sizeof(wants) / sizeof(wants[0]))

#define MISS(...) do {							\
	n += snprintf(miss + n, n < len ? len - n : 0, __VA_ARGS__);	\
} while (0)

/* A count below what ${w} wants, in ${miss} ("; " between them). */
#define AT_LEAST(field, got) do {					\
	if ((uint64_t)(got) < (uint64_t)w->field)			\
		MISS("%s%s %llu, not %llu", n ? "; " : "", #field,	\
		    (unsigned long long)(got),				\
		    (unsigned long long)w->field);			\
} while (0)

/*
 * What of ${w} the last run did not reach, written to ${miss}; returns
 * its length (0: all of it).
 */
static size_t
missing(const struct want *w, char *miss, size_t len)
{
	const struct fz_reach *r = &fz_reach;
	const struct engine_stats *st = &r->st;
	size_t n = 0;

	miss[0] = '\0';
	if (w->fails == 0 && r->failed_op >= 0)
		MISS("the link failed at operation %d (input byte %zu): %s",
		    r->failed_op, r->failed_off, r->error);
	if (w->fails != 0 && r->failed_op < 0)
		MISS("the link never failed (%d operations)", r->ops);
	if (w->fails != 0 && r->failed_op >= 0 && (r->failed_op != w->fails ||
	    strncmp(r->error, w->error, strlen(w->error)) != 0))
		MISS("the link failed at operation %d (input byte %zu), not "
		    "%d: %s", r->failed_op, r->failed_off, w->fails, r->error);
	if ((r->events & w->events) != w->events)
		MISS("%sevents 0x%03x missing", n ? "; " : "",
		    (unsigned)(w->events & ~r->events));
	AT_LEAST(opened, st->streams_opened);
	AT_LEAST(accepted, st->streams_accepted);
	AT_LEAST(resumed, st->streams_resumed);
	AT_LEAST(not_resumed, st->streams_not_resumed);
	AT_LEAST(denied, st->resumes_denied);
	AT_LEAST(grows, st->ring_grows);
	AT_LEAST(shrinks, st->ring_shrinks);
	AT_LEAST(refused, st->ring_refused);
	AT_LEAST(rx, st->bytes_rx);
	AT_LEAST(tx, st->bytes_tx);
	AT_LEAST(eager, st->eager);
	AT_LEAST(eager_rx, st->eager_rx);
	AT_LEAST(notify, st->notify);
	AT_LEAST(fences, st->lane[0].fences + st->lane[1].fences);
	AT_LEAST(origins, r->origins);
	AT_LEAST(adopted, r->adopted);
	AT_LEAST(hs_done, r->hs_done);
	AT_LEAST(sealed, r->sealed);
	/* A count past the boundary: a message went under the new key. */
	if (((w->rekey & REKEY_TX) && r->sealed_to <= SEAL_REKEY_EVERY) ||
	    ((w->rekey & REKEY_RX) && r->opened_to <= SEAL_REKEY_EVERY))
		MISS("%skeys not renewed (%llu sealed, %llu opened)",
		    n ? "; " : "", (unsigned long long)r->sealed_to,
		    (unsigned long long)r->opened_to);
	if (w->version != 0 && r->version != w->version)
		MISS("%sversion %u, not %u", n ? "; " : "", r->version,
		    w->version);
	return (n);
}

/* Replay seed ${w} from ${dir} and check it. */
static void
replay(const char *dir, const struct want *w)
{
	static uint8_t buf[1 << 16];
	char path[4096], miss[1024];
	size_t size;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, w->seed);
	if ((f = fopen(path, "rb")) == NULL) {
		ok(0, "%s: %s (%s)", w->seed, w->what, strerror(errno));
		return;
	}
	size = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	(void)LLVMFuzzerTestOneInput(buf, size);
	if (!ok(missing(w, miss, sizeof(miss)) == 0, "%s: %s", w->seed,
	    w->what))
		printf("# %s\n", miss);
}

/* Every seed in ${dir} has its entry above. */
static void
all_listed(const char *dir)
{
	struct dirent *d;
	size_t k, n = 0;
	DIR *D;

	if ((D = opendir(dir)) == NULL) {
		ok(0, "the corpus %s: %s", dir, strerror(errno));
		return;
	}
	while ((d = readdir(D)) != NULL) {
		if (d->d_name[0] == '.')
			continue;
		for (k = 0; k < NWANTS; k++)
			if (strcmp(d->d_name, wants[k].seed) == 0)
				break;
		if (k == NWANTS) {
			printf("# %s: no entry in engine_seeds.c\n",
			    d->d_name);
			n++;
		}
	}
	closedir(D);
	ok(n == 0, "every seed in the corpus says what it reaches");
}

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ENGINE_CORPUS;
	size_t k;

	for (k = 0; k < NWANTS; k++)
		replay(dir, &wants[k]);
	all_listed(dir);
	return (tap_done());
}
