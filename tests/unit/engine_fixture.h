/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * engine_fixture: what the engine's unit tests (tests/unit/test_engine_*.c)
 * share.  Two engines joined by the hand-driven fabric (tests/sim/fabric.h),
 * where the order of events is fixed, so a failure points at one rule:
 * their setup and teardown, streams opened and accepted, the one way to
 * move work between them (settle, hop, land), the one way to move bytes
 * through a stream (put, take), the one check that an engine failed with
 * a text (failed_with), and the same pair lost and resumed (struct rz).
 *
 * It checks nothing itself: tap.h's counters are each test program's own,
 * so only the test files call ok().
 */
#ifndef ENGINE_FIXTURE_H
#define ENGINE_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "engine_io.h"
#include "engine_stream.h"
#include "fabric.h"
#include "wire.h"

/* One end of a stream, as the application holds it. */
struct tstream {
	uint8_t *tx, *rx;
	uint32_t txsz, rxsz;
	uint64_t tx_at, rx_at;	/* pattern positions put and taken */
	uint32_t id;
	uint32_t events;	/* all event flags seen */
	uint16_t reason;
};

/* A pair of engines: side 0 opens streams, side 1 accepts them all. */
struct t {
	struct fab f;
	struct tstream acc[64];	/* streams side 1 accepted */
	int nacc;
	uint32_t acc_ring;	/* ring size side 1 accepts with */
};

/* ------------------------------------------------------------ checks */

/* ${e}'s error, for a check's message: "(still up)" while it has none. */
const char *err_of(const struct engine *e);

/*
 * Did engine ${e} fail with ${text} in its error?  If not, the log says
 * what it says instead.
 */
int failed_with(const struct engine *e, const char *text);

/* ------------------------------------------------------------- a pair */

/* A configuration with queue depths ${sq} and ${rq}, 64 streams. */
struct engine_conf conf(uint32_t sq, uint32_t rq);

/* conf(), offering resume. */
struct engine_conf rconf(uint32_t sq, uint32_t rq);

/*
 * Connect the engines of ${T} with configurations ${a} and ${b}; returns
 * 0, or -1 with T->f.err set.
 */
int setup(struct t *T, struct engine_conf a, struct engine_conf b);

/*
 * setup(), with the hellos capped at versions ${cap_a} and ${cap_b} (0:
 * the newest), as an older peer's would be.
 */
int setup_cap(struct t *T, struct engine_conf a, struct engine_conf b,
    unsigned cap_a, unsigned cap_b);

/* Free ${T}'s engines and the rings of the streams side 1 accepted. */
void teardown(struct t *T);

/* Tear ${T} down, with the rings of the ${n} streams of ${s}. */
void teardown_n(struct t *T, struct tstream *s, int n);

/* Rings of ${txsz} and ${rxsz} bytes for ${s} on side ${side}. */
void rings(struct t *T, int side, struct tstream *s, uint32_t txsz,
    uint32_t rxsz, struct engine_ring *tx, struct engine_ring *rx);

/* Open ${s} from side 0 with such rings; returns its id or an error. */
int open_stream(struct t *T, struct tstream *s, uint32_t txsz,
    uint32_t rxsz);

/* Free the rings open_stream or an accept gave ${s}. */
void tstream_free(struct tstream *s);

/* ---------------------------------------------------------- moving work */

/*
 * Drain engine ${e}'s events (side ${i}: the current engine or a failed
 * one); side 1 accepts every INCOMING stream.
 */
void events_of(struct t *T, int i, struct engine *e);

/* events_of() for side ${i}'s current engine. */
void events(struct t *T, int i);

/* Run both sides until nothing moves; returns the WRs posted meanwhile. */
uint64_t settle(struct t *T);

/*
 * What side ${i} has in flight lands on the other side, which takes the
 * completions (side ${i} does not yet learn its work requests finished).
 */
void land(struct t *T, int i);

/* Side ${i} posts what it has, it lands, and both take the completions. */
void hop(struct t *T, int i);

/* ---------------------------------------------------------- moving bytes */

/*
 * The byte at position ${pos} of a direction keyed ${key}: a hash of
 * both, so a byte from another place, lap or stream shows.
 */
uint8_t pat(uint32_t key, uint64_t pos);

/*
 * Put up to ${n} bytes of pattern ${key} from position ${*pos} into
 * stream ${id} of ${e}, through ${ring} (NULL: the ring the engine says,
 * as after a resize); advances ${*pos} and returns the bytes put.
 */
uint32_t put(struct engine *e, uint32_t id, uint8_t *ring, uint32_t n,
    uint32_t key, uint64_t *pos);

/*
 * Take up to ${n} bytes from stream ${id} of ${e} (${ring} as for put),
 * checking they are pattern ${key} from ${*pos} (*bad = 1 where not) and
 * scribbling over them; advances ${*pos} and returns the bytes taken.
 */
uint32_t take(struct engine *e, uint32_t id, uint8_t *ring, uint32_t n,
    uint32_t key, uint64_t *pos, int *bad);

/* Encode ${n} records into ${buf}; returns the length. */
uint32_t recs(uint8_t *buf, const struct wire_rec *r, int n);

/* -------------------------------------------------------- authentication */

/*
 * Stand-in proofs: 32 bytes of (key + 1) from the initiator, (key + 2)
 * from the responder.  The engine only moves and gates them; the daemon's
 * HMAC is tested with the daemon.
 */
struct tauth {
	uint8_t key;
	int initiator;
	int proved, verified, failed;
	int proved_after_verify;
};

/* Side 0 (initiator, key ${ka}) and side 1 (key ${kb}; none if ${kb} < 0). */
void auth_pair(struct t *T, struct engine_conf *c, struct tauth *ta,
    struct tauth *tb, uint8_t ka, int kb);

/* ---------------------------------------------------------------- resume */

/*
 * A link loss and its resume, driven by hand: side 0 connects (it calls
 * engine_resume), side 1 answers (its find callback hands over old[1]).
 */
struct rz;

struct rzside {
	struct rz *R;
	int side;
};

struct rz {
	struct t T;
	struct rzside rs[2];
	struct engine *old[2];		/* the failed engines, ours to free */
	uint8_t token[WIRE_NONCE_LEN];	/* side 1's nonce on the lost link */
	uint32_t next_rkey;
	int adopts[2];			/* adopt calls, by side */
	int adopt_bad;			/* adopt saw a wrong user or region */
	int keep_rkey;			/* a buggy adopt: keeps the old rkey */
	int finds;
	uint16_t deny;			/* find refuses with this reason */
	struct engine *adopted;		/* what the adopted callback got */
	int proofs;			/* proved calls (side 0) */
	int wrong_answer;		/* find answers with a wrong proof */
	int keep_denied;		/* side 0 keeps its streams when
					   refused by a peer that proved
					   nothing */
	int denials;			/* denied calls (side 0) */
};

/* The stand-in proofs: side 0's (RESUME), side 1's (RESUME_PROOF). */
#define RZ_ASK		0xab
#define RZ_ANSWER	0xcd

/* Give both sides of ${R}'s fabric the stand-in resume callbacks. */
void rz_hooks(struct rz *R);

/* rz_setup, the hellos capped at versions ${cap_a} and ${cap_b} (0: none). */
void rz_setup_cap(struct rz *R, struct engine_conf a, struct engine_conf b,
    unsigned cap_a, unsigned cap_b);

/* A pair with configurations ${a} and ${b} and the resume callbacks. */
void rz_setup(struct rz *R, struct engine_conf a, struct engine_conf b);

/* Side ${i}'s current engine. */
struct engine *E(struct rz *R, int i);

/* Lose the link, ${d0} and ${d1} WRs landing unseen; drain the old events. */
void rz_loss(struct rz *R, size_t d0, size_t d1);

/* Side 0 asks to resume old[0]'s streams, then is done with old[0]. */
int rz_resume(struct rz *R);

/* After side 1 adopted: what stayed behind in old[1] ends, and it goes. */
void rz_settle(struct rz *R);

/* Abandon and free the failed engines left, and tear the pair down. */
void rz_teardown(struct rz *R);

/*
 * Open ${k} (4 KiB rings) from side 0 and keep it on both sides; returns
 * side 1's stream.
 */
struct tstream *rz_kept(struct rz *R, struct tstream *k);

#endif /* !ENGINE_FIXTURE_H */
