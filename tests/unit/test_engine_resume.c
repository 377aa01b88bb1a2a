/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/protocol/engine.  The resume exchange: RESUME,
 * RESUME_PROOF and RESUME_STREAM in order and out of it, the proof
 * before the names (version 5), an older peer's resume, an OPEN racing
 * the answers, resume on an authenticated link, and engine_resume's
 * preconditions.  The pair of engines, and how work and bytes move
 * between them, are engine_fixture.h's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixture.h"
#include "tap.h"

static void
rec_resume(struct wire_rec *r, const uint8_t *token, uint16_t count)
{

	memset(r, 0, sizeof(*r));
	r->type = WIRE_RESUME;
	memcpy(r->token, token, WIRE_NONCE_LEN);
	memset(r->proof, RZ_ASK, WIRE_AUTH_LEN);
	r->count = count;
}

static void
rec_rs(struct wire_rec *r, uint32_t stream, uint32_t peer, uint64_t arrived,
    uint64_t consumed, uint8_t flags, uint32_t size)
{

	memset(r, 0, sizeof(*r));
	r->type = WIRE_RESUME_STREAM;
	r->stream = stream;
	r->peer_stream = peer;
	r->cursor = arrived;
	r->consumed = consumed;
	r->flags = flags;
	if (!(flags & WIRE_RS_GONE)) {
		r->ring.addr = 0x10000;
		r->ring.rkey = 0x55;
		r->ring.size = size;
	}
}

/* Inject ${n} records into side ${i}; 1 if the link failed with ${what}. */
static int
inject_recs(struct rz *R, int i, const struct wire_rec *r, int n,
    const char *what)
{
	uint8_t buf[WIRE_MSG_SIZE];

	fab_inject(&R->T.f, i, FAB_CQE_RECV, buf, recs(buf, r, n), 0);
	return (failed_with(E(R, i), what) &&
	    engine_error_kind(E(R, i)) == ENGINE_ERR_PROTOCOL);
}

/*
 * Side 1 takes ${r}, a RESUME, and sends its RESUME_PROOF (into the
 * fabric, undelivered): from version 5 side 0 names its streams after
 * that, and from version 10 says first how many (RESUME_COUNT, ${r}'s
 * count, which its RESUME no longer carries).  1 if side 1 adopted and
 * proved.
 */
static int
inject_resume(struct rz *R, const struct wire_rec *r)
{
	struct wire_rec q = *r;
	uint8_t buf[WIRE_MSG_SIZE];

	q.count = 0;
	fab_inject(&R->T.f, 1, FAB_CQE_RECV, buf, recs(buf, &q, 1), 0);
	fab_pump(&R->T.f, 1);
	if (engine_error(E(R, 1)) != NULL || R->adopted == NULL)
		return (0);
	memset(&q, 0, sizeof(q));
	q.type = WIRE_RESUME_COUNT;
	q.count = r->count;
	fab_inject(&R->T.f, 1, FAB_CQE_RECV, buf, recs(buf, &q, 1), 0);
	return (engine_error(E(R, 1)) == NULL);
}

/* Side 0 takes side 1's right RESUME_PROOF, as if it came. */
static int
inject_answer(struct rz *R)
{
	struct wire_rec r;
	uint8_t buf[WIRE_MSG_SIZE];

	memset(&r, 0, sizeof(r));
	r.type = WIRE_RESUME_PROOF;
	memset(r.proof, RZ_ANSWER, WIRE_AUTH_LEN);
	fab_inject(&R->T.f, 0, FAB_CQE_RECV, buf, recs(buf, &r, 1), 0);
	return (engine_error(E(R, 0)) == NULL && R->proofs == 1);
}

/*
 * A link with one kept stream (side 0 sent 3000 bytes, side 1 read 2000
 * and sent 100) that was lost; the test speaks for side 0 by hand.
 */
static void
rz_lost_stream(struct rz *R, struct tstream *k)
{
	uint64_t t = 0, r = 0, t1 = 0;
	int bad = 0;

	rz_setup(R, rconf(16, 16), rconf(16, 16));
	(void)rz_kept(R, k);
	put(E(R, 0), k->id, k->tx, 3000, 1, &t);
	put(E(R, 1), R->T.acc[0].id, R->T.acc[0].tx, 100, 2, &t1);
	settle(&R->T);
	take(E(R, 1), R->T.acc[0].id, R->T.acc[0].rx, 2000, 1, &r, &bad);
	settle(&R->T);
	rz_loss(R, 0, 0);
}

static void
test_resume_violations(void)
{
	struct rz R;
	struct t T;
	struct tstream k;
	struct wire_rec r[3];
	uint8_t buf[WIRE_MSG_SIZE];
	uint8_t tok[WIRE_NONCE_LEN] = { 0 };
	uint32_t sid, cid;

	/* RESUME where the link cannot resume. */
	memset(&T, 0, sizeof(T));
	setup(&T, conf(8, 8), conf(8, 8));
	rec_resume(&r[0], tok, 0);
	fab_inject(&T.f, 1, FAB_CQE_RECV, buf, recs(buf, r, 1), 0);
	ok(failed_with(T.f.side[1].e, "unexpected RESUME"),
	    "RESUME on a link without resume ends it: %s",
	    err_of(T.f.side[1].e));
	teardown(&T);

	/* RESUME twice. */
	rz_setup(&R, rconf(8, 8), rconf(8, 8));
	rec_resume(&r[0], tok, 0);
	fab_inject(&R.T.f, 1, FAB_CQE_RECV, buf, recs(buf, r, 1), 0);
	ok(engine_error(E(&R, 1)) == NULL && R.finds == 1,
	    "a RESUME naming nothing is refused, not a violation");
	ok(inject_recs(&R, 1, r, 1, "unexpected RESUME"),
	    "a second RESUME ends the link");
	rz_teardown(&R);

	/* RESUME after the peer opened a stream. */
	rz_setup(&R, rconf(8, 8), rconf(8, 8));
	open_stream(&R.T, &k, 4096, 4096);
	settle(&R.T);
	ok(inject_recs(&R, 1, r, 1, "unexpected RESUME"),
	    "RESUME after an OPEN ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	/* RESUME_STREAM without a RESUME, or beyond its count. */
	rz_setup(&R, rconf(8, 8), rconf(8, 8));
	rec_rs(&r[0], 0, 0, 0, 0, 0, 4096);
	ok(inject_recs(&R, 1, r, 1, "unexpected RESUME_STREAM"),
	    "RESUME_STREAM without RESUME ends the link");
	rz_teardown(&R);
	/* From version 5, a RESUME_STREAM only after our RESUME_PROOF. */
	rz_lost_stream(&R, &k);
	rec_resume(&r[0], R.token, 0);
	rec_rs(&r[1], R.T.acc[0].id, k.id, 100, 0, 0, 4096);
	ok(inject_recs(&R, 1, r, 2, "unexpected RESUME_STREAM") &&
	    R.adopted != NULL,
	    "a RESUME_STREAM before side 1 sent its proof ends the link");
	rz_teardown(&R);
	tstream_free(&k);
	rz_setup(&R, rconf(8, 8), rconf(8, 8));
	rec_resume(&r[0], tok, 1);
	rec_rs(&r[1], 0, 0, 0, 0, 0, 4096);
	ok(inject_resume(&R, r) == 0 && engine_error(E(&R, 1)) == NULL &&
	    engine_resume_pending(E(&R, 1)) == 0,
	    "a RESUME side 1 refuses: no RESUME_STREAM is to come");
	ok(inject_recs(&R, 1, &r[1], 1, "unexpected RESUME_STREAM"),
	    "and one that comes anyway ends the link");
	rz_teardown(&R);
	rz_lost_stream(&R, &k);
	rec_resume(&r[0], R.token, 1);
	rec_rs(&r[1], R.T.acc[0].id, k.id, 100, 0, 0, 4096);
	rec_rs(&r[2], 1, 1, 0, 0, 0, 4096);
	ok(inject_resume(&R, r), "side 1 adopts and proves");
	ok(inject_recs(&R, 1, &r[1], 2, "unexpected RESUME_STREAM"),
	    "a RESUME_STREAM beyond the RESUME's count ends the link");
	rz_teardown(&R);
	tstream_free(&k);
	rz_lost_stream(&R, &k);
	rec_resume(&r[0], R.token, 1);
	rec_rs(&r[1], 0, 0, 0, 0, WIRE_RS_GONE, 0);
	(void)inject_resume(&R, r);
	ok(inject_recs(&R, 1, &r[1], 1, "unexpected RESUME_STREAM"),
	    "a GONE from the side that asked ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	/* Cursors and rings of a real suspended stream, misreported. */
	rz_lost_stream(&R, &k);
	sid = R.T.acc[0].id;
	cid = k.id;
	rec_resume(&r[0], R.token, 1);
	rec_rs(&r[1], sid, cid, 101, 0, 0, 4096);
	ok(inject_resume(&R, r) && inject_recs(&R, 1, &r[1], 1, "outside"),
	    "arrived beyond what was sent (101 of 100) ends the link");
	ok(R.adopted != NULL, "(after the streams were adopted)");
	rz_teardown(&R);
	tstream_free(&k);

	rz_lost_stream(&R, &k);
	rec_resume(&r[0], R.token, 1);
	rec_rs(&r[1], R.T.acc[0].id, k.id, 100, 0, 0, 8192);
	ok(inject_resume(&R, r) && inject_recs(&R, 1, &r[1], 1, "instead of"),
	    "a resumed ring of another size ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	rz_lost_stream(&R, &k);
	rec_resume(&r[0], R.token, 1);
	rec_rs(&r[1], R.T.acc[0].id, k.id, 100, 100, WIRE_RS_SHUT, 4096);
	ok(inject_resume(&R, r) && inject_recs(&R, 1, &r[1], 1, "never sent"),
	    "a SHUTDOWN seen that was never sent ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	/* Side 0 asked; side 1's answers misreport. */
	rz_lost_stream(&R, &k);
	sid = R.T.acc[0].id;
	cid = k.id;
	rz_resume(&R);
	rec_rs(&r[0], cid, sid, 2000, 2000, 0, 4096);
	ok(inject_recs(&R, 0, r, 1, "RESUME_STREAM before RESUME_PROOF"),
	    "an answer before side 1's proof ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	rz_lost_stream(&R, &k);
	sid = R.T.acc[0].id;
	cid = k.id;
	rz_resume(&R);
	/* Side 1 consumed 2000 and may have credited it: consumed 0 is old. */
	rec_rs(&r[0], cid, sid, 2000, 0, 0, 4096);
	ok(inject_answer(&R) && inject_recs(&R, 0, r, 1, "outside"),
	    "a consumed cursor behind the last CREDIT ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	rz_lost_stream(&R, &k);
	sid = R.T.acc[0].id;
	cid = k.id;
	rz_resume(&R);
	rec_rs(&r[0], cid, sid + 1, 2000, 2000, 0, 4096);
	ok(inject_answer(&R) && inject_recs(&R, 0, r, 1, "not resuming"),
	    "an answer naming another peer stream ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	rz_lost_stream(&R, &k);
	sid = R.T.acc[0].id;
	cid = k.id;
	rz_resume(&R);
	ok(inject_answer(&R), "side 1's proof is taken");
	rec_rs(&r[0], cid, sid, 2000, 2000, 0, 4096);
	fab_inject(&R.T.f, 0, FAB_CQE_RECV, buf, recs(buf, r, 1), 0);
	ok(engine_error(E(&R, 0)) == NULL,
	    "a right answer is taken");
	ok(inject_recs(&R, 0, r, 1, "not resuming"),
	    "the same answer twice ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	rz_lost_stream(&R, &k);
	rz_resume(&R);
	memset(&r[0], 0, sizeof(r[0]));
	r[0].type = WIRE_CREDIT;
	r[0].stream = k.id;
	r[0].cursor = 1;
	ok(inject_answer(&R) && inject_recs(&R, 0, r, 1, "does not allow"),
	    "a CREDIT for a stream still resuming ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	rz_lost_stream(&R, &k);
	rz_resume(&R);
	memset(&r[0], 0, sizeof(r[0]));
	r[0].type = WIRE_RESUME_DENIED;
	r[0].reason = WIRE_REASON_DENIED;
	fab_inject(&R.T.f, 0, FAB_CQE_RECV, buf, recs(buf, r, 1), 0);
	ok(engine_error(E(&R, 0)) == NULL, "a RESUME_DENIED is taken once");
	ok(inject_recs(&R, 0, r, 1, "unexpected RESUME_DENIED"),
	    "a second one ends the link");
	rz_teardown(&R);
	tstream_free(&k);

	rz_setup(&R, rconf(8, 8), rconf(8, 8));
	memset(&r[0], 0, sizeof(r[0]));
	r[0].type = WIRE_RESUME_DENIED;
	ok(inject_recs(&R, 0, r, 1, "unexpected RESUME_DENIED"),
	    "RESUME_DENIED without a RESUME ends the link");
	rz_teardown(&R);
}

/*
 * A link (hellos capped at ${cap_a} and ${cap_b}) with one kept stream
 * ${k}, on which side 0 wrote 3000 bytes of pattern 4, then lost.
 */
static void
rz_kept_lost(struct rz *R, struct tstream *k, unsigned cap_a, unsigned cap_b)
{
	uint64_t t = 0;

	rz_setup_cap(R, rconf(16, 16), rconf(16, 16), cap_a, cap_b);
	(void)rz_kept(R, k);
	put(E(R, 0), k->id, k->tx, 3000, 4, &t);
	fab_pump(&R->T.f, 0);
	rz_loss(R, 0, 0);
}

/*
 * Version 5: side 1 proves the secret before side 0 names its streams,
 * grants their rings, opens new ones or trusts any cursor.
 */
static void
test_resume_mutual(void)
{
	struct rz R;
	struct tstream k, n;
	uint64_t got = 0;
	int bad = 0, nacc;

	rz_kept_lost(&R, &k, 0, 0);
	ok(engine_version(E(&R, 0)) == WIRE_VERSION &&
	    engine_version(E(&R, 1)) == WIRE_VERSION,
	    "two sides of the newest version");
	ok(rz_resume(&R) == 1, "side 0 asks to resume its stream");
	ok(!engine_resume_proven(E(&R, 0)),
	    "side 0 waits for side 1's proof");
	/* Side 0 opens a stream meanwhile: its OPEN waits too. */
	nacc = R.T.nacc;
	ok(open_stream(&R.T, &n, 4096, 4096) >= 0, "side 0 opens a new stream");
	hop(&R.T, 0);
	ok(R.finds == 1 && R.adopted == R.old[1] &&
	    engine_resume_pending(E(&R, 1)) == 1,
	    "side 1 adopted, but side 0 named no stream (%u to come)",
	    (unsigned)engine_resume_pending(E(&R, 1)));
	ok(R.T.nacc == nacc, "nor sent the new stream's OPEN");
	ok(R.proofs == 0 && !(k.events & ENGINE_EV_RESUMED),
	    "nothing is resumed before the proof");
	hop(&R.T, 1);
	ok(R.proofs == 1 && engine_resume_proven(E(&R, 0)),
	    "side 1's RESUME_PROOF comes and checks out");
	rz_settle(&R);
	ok(engine_error(E(&R, 0)) == NULL && engine_error(E(&R, 1)) == NULL,
	    "no violation");
	ok((k.events & ENGINE_EV_RESUMED) &&
	    take(E(&R, 1), R.T.acc[0].id, R.T.acc[0].rx, 8192, 4, &got,
	    &bad) == 3000 && !bad,
	    "the stream resumes and its bytes arrive");
	ok((n.events & ENGINE_EV_OPENED) && R.T.nacc == nacc + 1,
	    "the new stream opens after the names");
	ok(engine_resume_confirmed(E(&R, 1)),
	    "side 1 saw a stream named: the peer holds the new secret");
	rz_teardown(&R);
	tstream_free(&k);
	tstream_free(&n);
}

/* Version 5: a wrong RESUME_PROOF ends the link; nothing was named. */
static void
test_resume_wrong_proof(void)
{
	struct rz R;
	struct tstream k;
	struct engine_stats st;

	rz_kept_lost(&R, &k, 0, 0);
	R.wrong_answer = 1;
	ok(rz_resume(&R) == 1, "side 0 asks to resume its stream");
	hop(&R.T, 0);
	hop(&R.T, 1);
	events_of(&R.T, 0, E(&R, 0));
	ok(R.proofs == 1 && engine_error_kind(E(&R, 0)) == ENGINE_ERR_AUTH &&
	    failed_with(E(&R, 0), "RESUME_PROOF is wrong"),
	    "a wrong proof ends side 0's link: %s", err_of(E(&R, 0)));
	ok((k.events & ENGINE_EV_RESET) && (k.events & ENGINE_EV_RELEASED) &&
	    !(k.events & ENGINE_EV_RESUMED),
	    "its stream is reset, not suspended for another try");
	engine_stats(E(&R, 0), &st);
	ok(st.streams_suspended == 0 && engine_suspended(E(&R, 0)) == 0,
	    "nothing waits in the failed engine");
	ok(engine_resume_pending(E(&R, 1)) == 1,
	    "side 1 never saw the stream named, nor its ring");
	rz_teardown(&R);
	tstream_free(&k);
}

/* A peer of version 4 resumes as before: no proof back, names at once. */
static void
test_resume_v4(void)
{
	struct rz R;
	struct tstream k;
	struct wire_rec r;
	uint8_t buf[WIRE_MSG_SIZE];
	uint64_t got = 0;
	int bad = 0, side;

	for (side = 0; side < 2; side++) {
		rz_kept_lost(&R, &k, side ? 0 : 4, side ? 4 : 0);
		ok(engine_version(E(&R, 0)) == 4 &&
		    engine_version(E(&R, 1)) == 4,
		    "side %d says 4: the link speaks 4", side);
		got = 0;
		ok(rz_resume(&R) == 1 && engine_resume_proven(E(&R, 0)),
		    "side 0 asks, and waits for no proof");
		hop(&R.T, 0);
		ok(R.adopted == R.old[1] &&
		    engine_resume_pending(E(&R, 1)) == 0,
		    "the RESUME_STREAM came with the RESUME");
		rz_settle(&R);
		ok(R.proofs == 0 && (k.events & ENGINE_EV_RESUMED) &&
		    take(E(&R, 1), R.T.acc[0].id, R.T.acc[0].rx, 8192, 4,
		    &got, &bad) == 3000 && !bad,
		    "the stream resumed without a RESUME_PROOF");
		rz_teardown(&R);
		tstream_free(&k);
	}
	/* A RESUME_PROOF below version 5 is a violation. */
	rz_setup_cap(&R, rconf(8, 8), rconf(8, 8), 4, 0);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_RESUME_PROOF;
	fab_inject(&R.T.f, 0, FAB_CQE_RECV, buf, recs(buf, &r, 1), 0);
	ok(failed_with(E(&R, 0), "RESUME_PROOF on a link below version 5"),
	    "a RESUME_PROOF on a version-4 link ends it: %s",
	    err_of(E(&R, 0)));
	rz_teardown(&R);
	/* And where nothing asked for one, from version 5. */
	rz_setup(&R, rconf(8, 8), rconf(8, 8));
	fab_inject(&R.T.f, 0, FAB_CQE_RECV, buf, recs(buf, &r, 1), 0);
	ok(failed_with(E(&R, 0), "unexpected RESUME_PROOF"),
	    "a RESUME_PROOF without a RESUME ends the link: %s",
	    err_of(E(&R, 0)));
	rz_teardown(&R);
	/* Every record type's version is checked: a HANDSHAKE (version 6)
	 * on a version-5 link. */
	rz_setup_cap(&R, rconf(8, 8), rconf(8, 8), 5, 0);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_HANDSHAKE;
	r.hs_len = 8;
	fab_inject(&R.T.f, 0, FAB_CQE_RECV, buf, recs(buf, &r, 1), 0);
	ok(failed_with(E(&R, 0), "HANDSHAKE on a link below version 6"),
	    "a HANDSHAKE on a version-5 link ends it: %s",
	    err_of(E(&R, 0)));
	rz_teardown(&R);
}

/*
 * The records of type ${type} side 0 has in flight on lane 0: how many,
 * and the last one's count.
 */
static int
sent(struct rz *R, uint8_t type, uint16_t *count)
{
	const struct fab_side *S = &R->T.f.side[0];
	const struct fab_wr *w;
	const uint8_t *p;
	struct wire_rec r;
	size_t i, off, used;
	int n = 0;

	for (i = 0; i < S->wire_n; i++) {
		w = &S->wire[(S->wire_head + i) % S->wire_cap];
		if (w->wr.op != ENGINE_WR_SEND)
			continue;
		p = w->inl != NULL ? w->inl :
		    (const uint8_t *)(uintptr_t)w->wr.local_addr;
		for (off = 0; off < w->wr.len; off += used) {
			if (wire_rec_decode(p + off, w->wr.len - off, &r,
			    &used) != WIRE_OK)
				break;
			if (r.type == type) {
				n++;
				*count = r.count;
			}
		}
	}
	return (n);
}

/*
 * Version 10: side 0's RESUME says no count, so a peer that has proved
 * nothing learns none; the count goes in a RESUME_COUNT once side 1's
 * proof checked, before the names.  A version-9 peer still gets it in
 * the RESUME.  Side 1 takes a RESUME_COUNT only then, and once.
 */
static void
test_resume_count(void)
{
	struct rz R;
	struct tstream a, b;
	struct wire_rec r;
	uint16_t c = 99;
	int n;

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	(void)rz_kept(&R, &a);
	open_stream(&R.T, &b, 4096, 4096);
	engine_keep(E(&R, 0), b.id);
	settle(&R.T);
	engine_keep(E(&R, 1), R.T.acc[1].id);
	rz_loss(&R, 0, 0);
	ok(rz_resume(&R) == 2, "count: side 0 offers 2 streams");
	fab_pump(&R.T.f, 0);
	n = sent(&R, WIRE_RESUME, &c);
	ok(n == 1 && c == 0 && sent(&R, WIRE_RESUME_COUNT, &c) == 0,
	    "count: its RESUME says 0 and no RESUME_COUNT goes");
	ok(inject_answer(&R), "count: side 1's proof checks");
	fab_pump(&R.T.f, 0);
	n = sent(&R, WIRE_RESUME_COUNT, &c);
	ok(n == 1 && c == 2, "count: now the RESUME_COUNT goes, saying 2 "
	    "(%u)", (unsigned)c);
	rz_teardown(&R);
	tstream_free(&a);
	tstream_free(&b);

	/* Version 9: the count in the RESUME, as before. */
	rz_setup_cap(&R, rconf(16, 16), rconf(16, 16), 9, 9);
	(void)rz_kept(&R, &a);
	rz_loss(&R, 0, 0);
	ok(rz_resume(&R) == 1, "count, version 9: offered");
	fab_pump(&R.T.f, 0);
	n = sent(&R, WIRE_RESUME, &c);
	ok(n == 1 && c == 1, "count, version 9: the RESUME says 1 (%u)",
	    (unsigned)c);
	rz_settle(&R);
	ok((a.events & ENGINE_EV_RESUMED) && engine_error(E(&R, 0)) == NULL &&
	    engine_error(E(&R, 1)) == NULL, "count, version 9: resumed");
	rz_teardown(&R);
	tstream_free(&a);

	/* Side 1: a count in the RESUME, a RESUME_COUNT out of turn. */
	rz_lost_stream(&R, &a);
	rec_resume(&r, R.token, 1);
	ok(inject_recs(&R, 1, &r, 1, "RESUME with a count"),
	    "count: a RESUME with a count ends a version-10 link");
	rz_teardown(&R);
	tstream_free(&a);
	rz_lost_stream(&R, &a);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_RESUME_COUNT;
	r.count = 1;
	ok(inject_recs(&R, 1, &r, 1, "unexpected RESUME_COUNT"),
	    "count: a RESUME_COUNT without a RESUME ends the link");
	rz_teardown(&R);
	tstream_free(&a);
	rz_lost_stream(&R, &a);
	rec_resume(&r, R.token, 1);
	ok(inject_resume(&R, &r), "count: side 1 adopts, proves, is told 1");
	memset(&r, 0, sizeof(r));
	r.type = WIRE_RESUME_COUNT;
	ok(inject_recs(&R, 1, &r, 1, "unexpected RESUME_COUNT"),
	    "count: a second RESUME_COUNT ends the link");
	rz_teardown(&R);
	tstream_free(&a);
}

/*
 * Side 1 opens a stream while side 0's RESUME_STREAMs are still coming:
 * the id it gets may be one side 0 still maps to a stream it is resuming
 * (side 1 lost that stream with the link), so the OPEN must not overtake
 * the GONE answer that unmaps it.
 */
static void
test_resume_open_race(void)
{
	struct rz R;
	struct tstream s[12], n;
	struct engine_ring tx, rx;
	int i, id, k;

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	for (i = 0; i < 12; i++) {
		/* s[11]: side 1's 4 KiB send ring is under a quarter of 64. */
		open_stream(&R.T, &s[i], 4096, i == 11 ? 65536 : 4096);
		engine_keep(E(&R, 0), s[i].id);
	}
	settle(&R.T);
	for (i = 0; i < 12; i++)
		engine_keep(E(&R, 1), R.T.acc[i].id);
	ok(!engine_kept(E(&R, 1), R.T.acc[11].id) &&
	    R.T.acc[11].id == 11 && s[11].id == 11,
	    "side 1 does not keep stream 11");
	rz_loss(&R, 0, 0);
	ok(rz_resume(&R) == 12, "side 0 resumes twelve streams");
	/* The RESUME goes; side 1 adopts, and its proof comes back. */
	fab_pump(&R.T.f, 0);
	fab_deliver(&R.T.f, 0);
	while (fab_complete(&R.T.f, 1) > 0)
		;
	fab_pump(&R.T.f, 1);
	fab_deliver(&R.T.f, 1);
	while (fab_complete(&R.T.f, 0) > 0)
		;
	/* From version 10 it knows no count yet: only that one comes. */
	ok(R.adopted == R.old[1] && R.proofs == 1 &&
	    engine_resume_pending(E(&R, 1)) == 1,
	    "side 1 adopted and proved before a stream was named, or counted");
	fab_pump(&R.T.f, 0);
	ok(R.T.f.side[0].wire_n >= 2,
	    "the RESUME_STREAMs take more than one SEND (%zu)",
	    R.T.f.side[0].wire_n);
	/* Only the first SEND of names arrives: some are still due. */
	if (fab_deliver(&R.T.f, 0) > 0)
		while (fab_complete(&R.T.f, 1) > 0)
			;
	ok(engine_resume_pending(E(&R, 1)) > 0 &&
	    engine_resume_pending(E(&R, 1)) < 12,
	    "side 1 waits for more RESUME_STREAMs (%u)",
	    (unsigned)engine_resume_pending(E(&R, 1)));
	engine_abandon(R.old[1], WIRE_REASON_NOT_RESUMED);
	events_of(&R.T, 1, R.old[1]);
	engine_free(R.old[1]);
	R.old[1] = NULL;
	memset(&n, 0, sizeof(n));
	rings(&R.T, 1, &n, 4096, 4096, &tx, &rx);
	id = engine_open(E(&R, 1), "t", &tx, &rx, &n);
	ok(id == 11, "side 1 opens a stream; it gets the free id 11 (%d)", id);
	n.id = (uint32_t)id;
	rz_settle(&R);
	ok(engine_error(E(&R, 0)) == NULL && engine_error(E(&R, 1)) == NULL,
	    "no violation: the OPEN follows the GONE answer (%s)",
	    engine_error(E(&R, 0)) ? engine_error(E(&R, 0)) :
	    engine_error(E(&R, 1)) ? engine_error(E(&R, 1)) : "fine");
	ok((s[11].events & ENGINE_EV_RESET) &&
	    s[11].reason == WIRE_REASON_NOT_RESUMED,
	    "side 0's stream 11 was not resumed");
	ok(n.events & ENGINE_EV_OPENED, "side 1's new stream opened");
	for (i = 0, k = 0; i < 11; i++)
		k += (s[i].events & ENGINE_EV_RESUMED) != 0;
	ok(k == 11, "the other eleven resumed");
	rz_teardown(&R);
	for (i = 0; i < 12; i++) {
		tstream_free(&s[i]);
	}
	tstream_free(&n);
}

/* Resume on an authenticated link: only once the proofs checked out. */
static void
test_resume_auth(void)
{
	struct rz R;
	struct tauth ta, tb;
	struct tstream k;
	struct engine_conf c = rconf(8, 8);
	struct wire_rec r;
	uint8_t buf[WIRE_MSG_SIZE], proof[WIRE_AUTH_LEN];
	uint64_t t = 0, got = 0;
	int bad = 0;

	memset(&R, 0, sizeof(R));
	auth_pair(&R.T, &c, &ta, &tb, 7, 7);
	rz_hooks(&R);
	settle(&R.T);
	(void)rz_kept(&R, &k);
	put(E(&R, 0), k.id, k.tx, 2000, 3, &t);
	fab_pump(&R.T.f, 0);
	rz_loss(&R, 0, 0);
	ok(!engine_authenticated(E(&R, 0)) && !engine_authenticated(E(&R, 1)),
	    "the new link starts unauthenticated");
	memset(proof, RZ_ASK, sizeof(proof));
	ok(engine_resume(E(&R, 0), R.old[0], R.token, proof) == ENGINE_EDOWN,
	    "engine_resume before the peer's proof: EDOWN");
	/* A RESUME before the proof ends side 1's link. */
	memset(&r, 0, sizeof(r));
	r.type = WIRE_RESUME;
	memcpy(r.token, R.token, WIRE_NONCE_LEN);
	fab_inject(&R.T.f, 1, FAB_CQE_RECV, buf,
	    (uint32_t)wire_rec_encode(buf, sizeof(buf), &r), 0);
	ok(failed_with(E(&R, 1), "RESUME before authentication") &&
	    R.finds == 0, "RESUME before authentication ends the link: %s",
	    err_of(E(&R, 1)));
	rz_teardown(&R);
	tstream_free(&k);

	/* Again, resuming once authenticated. */
	memset(&R, 0, sizeof(R));
	auth_pair(&R.T, &c, &ta, &tb, 7, 7);
	rz_hooks(&R);
	settle(&R.T);
	(void)rz_kept(&R, &k);
	t = 0;
	put(E(&R, 0), k.id, k.tx, 2000, 3, &t);
	fab_pump(&R.T.f, 0);
	rz_loss(&R, 0, 0);
	settle(&R.T);
	ok(engine_authenticated(E(&R, 0)) && engine_authenticated(E(&R, 1)) &&
	    ta.proved == 2 && tb.verified == 2,
	    "the new link authenticates again, with proofs of its own");
	ok(rz_resume(&R) == 1, "then side 0 resumes");
	rz_settle(&R);
	ok((k.events & ENGINE_EV_RESUMED) &&
	    take(E(&R, 1), R.T.acc[0].id, R.T.acc[0].rx, 8192, 3, &got,
	    &bad) == 2000 && !bad,
	    "and the bytes lost in flight arrive on the new link");
	rz_teardown(&R);
	tstream_free(&k);
}

static void
test_resume_calls(void)
{
	struct rz R;
	struct t T;
	struct tstream k, k2;
	uint8_t proof[WIRE_AUTH_LEN] = { 0 };
	struct engine *old[2];
	size_t d[2] = { 0, 0 };

	/* engine_resume needs a new link that can resume and has no stream. */
	rz_setup(&R, rconf(8, 8), rconf(8, 8));
	(void)rz_kept(&R, &k);
	rz_loss(&R, 0, 0);
	open_stream(&R.T, &k2, 4096, 4096);
	ok(engine_resume(E(&R, 0), R.old[0], R.token, proof) ==
	    ENGINE_EINVAL, "engine_resume after a stream was opened: EINVAL");
	ok(engine_suspended(R.old[0]) == 1, "and nothing moved");
	rz_teardown(&R);
	tstream_free(&k);
	tstream_free(&k2);

	memset(&T, 0, sizeof(T));
	setup(&T, rconf(8, 8), conf(8, 8));
	fab_relink(&T.f, d, old);
	ok(engine_can_resume(T.f.side[0].e) && engine_can_resume(T.f.side[1].e),
	    "fab_relink connects engines with resume on");
	ok(engine_resume(T.f.side[0].e, old[0], T.f.side[1].nonce, proof) ==
	    ENGINE_EINVAL, "engine_resume without an adopt callback: EINVAL");
	engine_free(old[0]);
	engine_free(old[1]);
	teardown(&T);
}

int
main(void)
{

	test_resume_violations();
	test_resume_mutual();
	test_resume_wrong_proof();
	test_resume_v4();
	test_resume_count();
	test_resume_open_race();
	test_resume_auth();
	test_resume_calls();
	return (tap_done());
}
