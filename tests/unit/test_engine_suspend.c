/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/protocol/engine.  Streams kept across a link's
 * loss: kept, suspended, resumed with every byte, gone on one side,
 * denied, abandoned, and a resumed WRITE under a stale rkey.  The pair
 * of engines, and how work and bytes move between them, are
 * engine_fixture.h's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixture.h"
#include "tap.h"

static void
test_keep(void)
{
	struct rz R;
	struct t T;
	struct tstream k, u, q, x;
	struct tstream *ak;
	struct wire_hello h;
	struct engine_conf plain = conf(16, 16);
	uint64_t p0 = 0, p1 = 0;
	uint32_t off;
	int bad = 0;

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	engine_hello(E(&R, 0), &h);
	ok(h.version == WIRE_VERSION && h.flags == WIRE_HELLO_RESUME,
	    "a side offering resume says the newest version with RESUME");
	engine_version_cap(E(&R, 0), 1);
	engine_hello(E(&R, 0), &h);
	ok(h.version == 1 && h.flags == 0,
	    "capped at 1 (a version-1 peer's hello answered), a side "
	    "offering resume says 1, without RESUME");
	engine_version_cap(E(&R, 0), WIRE_VERSION);
	engine_hello(E(&R, 0), &h);
	ok(engine_can_resume(E(&R, 0)) && engine_can_resume(E(&R, 1)),
	    "both sides offered it: the link can resume");
	open_stream(&R.T, &k, 4096, 4096);
	ok(engine_keep(E(&R, 0), k.id) == 0,
	    "engine_keep right after engine_open");
	ok(!engine_kept(E(&R, 0), k.id), "it takes effect only once open");
	open_stream(&R.T, &u, 4096, 4096);
	settle(&R.T);
	ak = &R.T.acc[0];
	ok(engine_kept(E(&R, 0), k.id) && !engine_kept(E(&R, 0), u.id),
	    "once open, the stream asked for is kept, the other is not");
	ok(engine_keep(E(&R, 1), ak->id) == 0 && engine_kept(E(&R, 1), ak->id),
	    "an acceptor keeps right after engine_accept");

	ok(put(E(&R, 0), k.id, k.tx, 4096, 1, &p0) == 4096 &&
	    put(E(&R, 0), u.id, u.tx, 4096, 9, &u.tx_at) == 4096,
	    "both send rings filled");
	settle(&R.T);
	ok(engine_tx_space(E(&R, 0), k.id, &off) == 0,
	    "a kept stream's bytes stay after their WRITE completed");
	ok(engine_tx_space(E(&R, 0), u.id, &off) == 4096,
	    "an unkept stream's space returns with the completion");
	ok(engine_keep(E(&R, 0), u.id) == ENGINE_EINVAL,
	    "engine_keep after bytes were written is refused");
	k.events = 0;
	ok(take(E(&R, 1), ak->id, ak->rx, 1023, 1, &p1, &bad) == 1023 &&
	    !bad, "the reader takes 1023 bytes");
	settle(&R.T);
	ok(engine_tx_space(E(&R, 0), k.id, &off) == 0 &&
	    !(k.events & ENGINE_EV_WRITABLE),
	    "no CREDIT below a quarter of the ring: still no space");
	take(E(&R, 1), ak->id, ak->rx, 1, 1, &p1, &bad);
	settle(&R.T);
	ok(engine_tx_space(E(&R, 0), k.id, &off) == 1024 &&
	    (k.events & ENGINE_EV_WRITABLE),
	    "the CREDIT for 1024 bytes frees 1024 bytes, with WRITABLE");
	ok(put(E(&R, 0), k.id, k.tx, 4096, 1, &p0) == 1024,
	    "exactly those 1024 bytes can be put again");
	settle(&R.T);
	ok(take(E(&R, 1), ak->id, ak->rx, 8192, 1, &p1, &bad) == 4096 &&
	    !bad && p1 == p0, "and every byte arrives once, in order");
	settle(&R.T);

	/* A send ring under a quarter of the peer's receive ring: not kept. */
	R.T.acc_ring = 32768;
	open_stream(&R.T, &q, 4096, 4096);
	engine_keep(E(&R, 0), q.id);
	open_stream(&R.T, &x, 8192, 4096);
	engine_keep(E(&R, 0), x.id);
	settle(&R.T);
	ok(!engine_kept(E(&R, 0), q.id),
	    "a 4 KiB send ring towards a 32 KiB receive ring is not kept");
	ok(engine_kept(E(&R, 0), x.id),
	    "an 8 KiB one (exactly a quarter) is");
	ok(engine_keep(E(&R, 1), R.T.acc[2].id) == 0 &&
	    engine_kept(E(&R, 1), R.T.acc[2].id),
	    "the other way (32 KiB towards 4 KiB) is kept");
	put(E(&R, 0), q.id, q.tx, 4096, 3, &q.tx_at);
	settle(&R.T);
	ok(engine_tx_space(E(&R, 0), q.id, &off) == 4096,
	    "an engine_keep that did not take effect frees on completion");
	rz_teardown(&R);
	tstream_free(&k);
	tstream_free(&u);
	tstream_free(&q);
	tstream_free(&x);

	/* The peer does not offer resume. */
	setup(&T, rconf(16, 16), plain);
	engine_hello(T.f.side[1].e, &h);
	ok(h.version == WIRE_VERSION && h.flags == 0,
	    "a side without conf.resume says no RESUME flag");
	ok(!engine_can_resume(T.f.side[0].e) &&
	    !engine_can_resume(T.f.side[1].e),
	    "one side without resume: the link cannot resume");
	open_stream(&T, &k, 4096, 4096);
	ok(engine_keep(T.f.side[0].e, k.id) == 0,
	    "engine_keep is accepted where conf.resume is set");
	settle(&T);
	ok(!engine_kept(T.f.side[0].e, k.id),
	    "but does not take effect when the peer did not offer resume");
	ok(engine_keep(T.f.side[1].e, T.acc[0].id) == ENGINE_EINVAL,
	    "engine_keep fails without conf.resume");
	put(T.f.side[0].e, k.id, k.tx, 4096, 4, &k.tx_at);
	settle(&T);
	ok(engine_tx_space(T.f.side[0].e, k.id, &off) == 4096,
	    "and space returns on completion as before");
	engine_fail(T.f.side[0].e, ENGINE_ERR_TRANSPORT, "gone");
	events(&T, 0);
	ok((k.events & ENGINE_EV_RESET) && !(k.events & ENGINE_EV_SUSPENDED),
	    "such a stream is reset when the link fails");
	teardown(&T);
	tstream_free(&k);
}

static void
test_suspend(void)
{
	struct rz R;
	struct tstream k, u, p;
	struct tstream *ak, *au;
	struct engine_stats st;
	struct engine_wr wrs[4];
	struct engine_ring r = { 0x1000, 4096, 1, NULL };
	uint64_t t0 = 0, r1 = 0, t1 = 0, r0 = 0;
	uint32_t off;
	uint8_t junk[2] = { 0xee, 2 };
	int bad = 0;

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	open_stream(&R.T, &k, 4096, 4096);
	engine_keep(E(&R, 0), k.id);
	open_stream(&R.T, &u, 4096, 4096);
	settle(&R.T);
	ak = &R.T.acc[0];
	au = &R.T.acc[1];
	engine_keep(E(&R, 1), ak->id);
	put(E(&R, 0), k.id, k.tx, 1000, 1, &t0);
	put(E(&R, 1), ak->id, ak->tx, 700, 2, &t1);
	put(E(&R, 0), u.id, u.tx, 500, 3, &u.tx_at);
	settle(&R.T);
	open_stream(&R.T, &p, 4096, 4096);
	engine_keep(E(&R, 0), p.id);
	fab_pump(&R.T.f, 0);	/* its OPEN is lost with the link */
	rz_loss(&R, 0, 0);
	ok((k.events & ENGINE_EV_SUSPENDED) &&
	    !(k.events & (ENGINE_EV_RESET | ENGINE_EV_RELEASED)) &&
	    (ak->events & ENGINE_EV_SUSPENDED) &&
	    !(ak->events & (ENGINE_EV_RESET | ENGINE_EV_RELEASED)),
	    "a kept stream is SUSPENDED on both sides when the link fails");
	ok((u.events & ENGINE_EV_RESET) && (u.events & ENGINE_EV_RELEASED) &&
	    u.reason == WIRE_REASON_RESET && (au->events & ENGINE_EV_RESET) &&
	    !(u.events & ENGINE_EV_SUSPENDED),
	    "an unkept stream is reset and released");
	ok((p.events & ENGINE_EV_RESET) && (p.events & ENGINE_EV_RELEASED),
	    "a kept stream still opening is reset");
	ok(engine_suspended(R.old[0]) == 1 && engine_suspended(R.old[1]) == 1,
	    "one stream waits in each failed engine");
	ok(engine_active(R.old[0]) == 1, "and holds its slot");
	engine_stats(R.old[0], &st);
	ok(st.streams_suspended == 1, "counted as suspended");
	ok(engine_error_kind(R.old[0]) == ENGINE_ERR_TRANSPORT,
	    "the failed engine says transport");

	/* The application still drains and fills a suspended stream. */
	ok(take(R.old[0], k.id, k.rx, 4096, 2, &r0, &bad) == 700 && !bad,
	    "the 700 bytes that arrived can still be read");
	ok(take(R.old[1], ak->id, ak->rx, 4096, 1, &r1, &bad) == 1000 &&
	    !bad, "on both sides");
	ok(engine_tx_space(R.old[0], k.id, &off) == 3096 &&
	    put(R.old[0], k.id, k.tx, 4096, 1, &t0) == 3096,
	    "the send ring takes what the peer has not consumed for sure "
	    "(3096 bytes)");
	ok(engine_take_wrs(R.old[0], wrs, 4) == 0,
	    "but a failed engine posts nothing");
	ok(engine_open(R.old[0], "t", &r, &r, NULL) == ENGINE_EDOWN,
	    "and opens nothing");
	ok(engine_resume(R.old[0], R.old[1], R.token, ak->tx) ==
	    ENGINE_EDOWN, "nor resumes");
	rz_teardown(&R);
	ok((k.events & ENGINE_EV_RESET) && k.reason == WIRE_REASON_LINK_LOST &&
	    (k.events & ENGINE_EV_RELEASED), "engine_abandon ends it (%s)",
	    wire_reason_str(k.reason));
	tstream_free(&k);
	tstream_free(&u);
	tstream_free(&p);

	/* The embedder ending the link (ENGINE_ERR_LOCAL) suspends too. */
	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	open_stream(&R.T, &k, 4096, 4096);
	engine_keep(E(&R, 0), k.id);
	settle(&R.T);
	engine_fail(E(&R, 0), ENGINE_ERR_LOCAL, "ended here");
	events(&R.T, 0);
	ok((k.events & ENGINE_EV_SUSPENDED) && !(k.events & ENGINE_EV_RESET),
	    "engine_fail(ENGINE_ERR_LOCAL) suspends a kept stream");
	engine_abandon(E(&R, 0), WIRE_REASON_LINK_LOST);
	events(&R.T, 0);
	rz_teardown(&R);
	tstream_free(&k);

	/* A peer that breaks the protocol gets no second chance. */
	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	(void)rz_kept(&R, &k);
	fab_inject(&R.T.f, 0, FAB_CQE_RECV, junk, 2, 0);
	events(&R.T, 0);
	ok(engine_error_kind(E(&R, 0)) == ENGINE_ERR_PROTOCOL &&
	    (k.events & ENGINE_EV_RESET) && (k.events & ENGINE_EV_RELEASED) &&
	    !(k.events & ENGINE_EV_SUSPENDED) &&
	    engine_suspended(E(&R, 0)) == 0,
	    "a protocol violation resets even a kept stream");
	rz_teardown(&R);
	tstream_free(&k);
}

/* One stream of test_resume_data: pattern keys and cursors both ways. */
struct rs {
	struct tstream s;	/* side 0's end */
	struct tstream *a;	/* side 1's end */
	uint64_t t0, r1;	/* side 0 -> 1: put, taken */
	uint64_t t1, r0;	/* side 1 -> 0 */
	uint32_t k0, k1;
};

static void
test_resume_data(void)
{
	struct rz R;
	struct rs S[5];
	struct engine_stats st0, st1;
	struct engine *e0, *e1;
	int bad = 0, i, n, rounds;
	uint32_t off;

	/*
	 * S[0]: data both ways in flight.  S[1]: shut down after bytes whose
	 * WRITE and SHUTDOWN are lost.  S[2]: a graceful close in progress:
	 * both shut, side 0's CLOSE lost.  S[3]: side 0 shuts down while
	 * suspended, after bytes that did not arrive.  S[4]: side 1's reader
	 * takes bytes while suspended (its CREDIT goes out after the resume).
	 */
	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	e0 = E(&R, 0);
	for (i = 0; i < 5; i++) {
		memset(&S[i], 0, sizeof(S[i]));
		open_stream(&R.T, &S[i].s, 4096, 4096);
		engine_keep(e0, S[i].s.id);
		S[i].k0 = 10 + 2 * (uint32_t)i;
		S[i].k1 = 11 + 2 * (uint32_t)i;
	}
	settle(&R.T);
	e1 = E(&R, 1);
	for (i = 0; i < 5; i++) {
		S[i].a = &R.T.acc[i];
		engine_keep(e1, S[i].a->id);
	}
	ok(R.T.nacc == 5 && engine_kept(e0, S[4].s.id) &&
	    engine_kept(e1, S[4].a->id), "five kept streams open");

	/* Some traffic that arrives and is read. */
	for (i = 0; i < 5; i++) {
		put(e0, S[i].s.id, S[i].s.tx, 3000, S[i].k0, &S[i].t0);
		put(e1, S[i].a->id, S[i].a->tx, 2500, S[i].k1, &S[i].t1);
	}
	settle(&R.T);
	for (i = 0; i < 5; i++) {
		take(e1, S[i].a->id, S[i].a->rx, 1500, S[i].k0, &S[i].r1,
		    &bad);
		take(e0, S[i].s.id, S[i].s.rx, 1500, S[i].k1, &S[i].r0, &bad);
	}
	settle(&R.T);

	/* S[2]: both shut down and read to EOF; side 0 closes. */
	engine_shutdown(e0, S[2].s.id);
	engine_shutdown(e1, S[2].a->id);
	settle(&R.T);
	take(e1, S[2].a->id, S[2].a->rx, 8192, S[2].k0, &S[2].r1, &bad);
	take(e0, S[2].s.id, S[2].s.rx, 8192, S[2].k1, &S[2].r0, &bad);
	settle(&R.T);
	ok((S[2].s.events & ENGINE_EV_EOF) && (S[2].a->events & ENGINE_EV_EOF),
	    "S2: both ends saw EOF before the loss");
	engine_close(e0, S[2].s.id);
	fab_pump(&R.T.f, 0);

	/* In flight when the link goes: data both ways, a SHUTDOWN. */
	put(e0, S[0].s.id, S[0].s.tx, 2000, S[0].k0, &S[0].t0);
	put(e1, S[0].a->id, S[0].a->tx, 1000, S[0].k1, &S[0].t1);
	put(e0, S[1].s.id, S[1].s.tx, 1000, S[1].k0, &S[1].t0);
	engine_shutdown(e0, S[1].s.id);
	put(e0, S[3].s.id, S[3].s.tx, 1000, S[3].k0, &S[3].t0);
	fab_pump(&R.T.f, 0);
	fab_pump(&R.T.f, 1);
	/* One WRITE each way lands and is seen; the rest lands unseen or not. */
	fab_deliver(&R.T.f, 1);
	while (fab_complete(&R.T.f, 0) > 0)
		;
	events(&R.T, 0);
	n = (int)R.T.f.side[0].wire_n;
	rz_loss(&R, (size_t)n - 1, 0);
	ok(R.T.f.side[0].wrs_landed_unseen == (uint64_t)n - 1 && n >= 4,
	    "%d of side 0's WRs landed, their completions lost", n - 1);
	ok(engine_suspended(R.old[0]) == 5 && engine_suspended(R.old[1]) == 5,
	    "all five streams are suspended on both sides");
	ok(!(S[2].s.events & ENGINE_EV_SUSPENDED) &&
	    (S[2].a->events & ENGINE_EV_SUSPENDED),
	    "a closed stream says nothing; its peer's end is SUSPENDED");

	/* While suspended. */
	engine_shutdown(R.old[0], S[3].s.id);
	ok(take(R.old[1], S[4].a->id, S[4].a->rx, 8192, S[4].k0, &S[4].r1,
	    &bad) == 1500 && !bad, "S4: the reader takes what arrived");
	ok(put(R.old[1], S[0].a->id, S[0].a->tx, 500, S[0].k1, &S[0].t1) ==
	    500, "S0: the writer adds 500 bytes");

	n = rz_resume(&R);
	ok(n == 5, "engine_resume moves the five streams (%d)", n);
	ok(R.adopts[0] == 5 && R.adopt_bad == 0,
	    "each moved with the adopt callback, its rings re-registered");
	e0 = E(&R, 0);
	e1 = E(&R, 1);
	ok(engine_resume_pending(e0) == 5, "five answers are awaited");
	rz_settle(&R);
	ok(R.finds == 1 && R.adopts[1] == 5 && R.old[1] == NULL,
	    "side 1 found the failed engine, adopted all five and freed it");
	ok(!R.T.f.failed, "no WRITE used a stale rkey: %s",
	    R.T.f.failed ? R.T.f.err : "fine");
	ok(engine_error(e0) == NULL && engine_error(e1) == NULL,
	    "both links are healthy: %s",
	    engine_error(e0) ? engine_error(e0) :
	    engine_error(e1) ? engine_error(e1) : "yes");
	ok(engine_resume_pending(e0) == 0 && engine_resume_pending(e1) == 0,
	    "nothing pending");
	for (i = 0, n = 0; i < 5; i++)
		n += (S[i].s.events & ENGINE_EV_RESUMED) &&
		    (S[i].a->events & ENGINE_EV_RESUMED);
	ok(n == 4 && (S[2].a->events & ENGINE_EV_RESUMED),
	    "RESUMED on both sides (on side 1 only where side 0 had closed)");

	/* Everything moves to the end, checked byte by byte. */
	for (rounds = 0; rounds < 100; rounds++) {
		for (i = 0; i < 5; i++) {
			if (i == 2)
				continue;
			take(e1, S[i].a->id, S[i].a->rx, 65536, S[i].k0,
			    &S[i].r1, &bad);
			take(e0, S[i].s.id, S[i].s.rx, 65536, S[i].k1,
			    &S[i].r0, &bad);
		}
		settle(&R.T);
	}
	for (i = 0, n = 0; i < 5; i++)
		n += S[i].r1 == S[i].t0 && S[i].r0 == S[i].t1;
	ok(n == 5 && !bad, "every byte arrived once, in order, both ways "
	    "(S0: %llu/%llu and %llu/%llu)", (unsigned long long)S[0].r1,
	    (unsigned long long)S[0].t0, (unsigned long long)S[0].r0,
	    (unsigned long long)S[0].t1);
	ok((S[1].a->events & ENGINE_EV_EOF) && (S[3].a->events & ENGINE_EV_EOF),
	    "a SHUTDOWN lost with the link, and one made while suspended, "
	    "arrive after the bytes");
	ok(!(S[0].a->events & ENGINE_EV_EOF),
	    "no EOF where none was sent");
	engine_stats(e0, &st0);
	engine_stats(e1, &st1);
	ok(st0.streams_resumed == 5 && st1.streams_resumed == 5,
	    "five streams resumed on each side");
	ok(st0.resumed_bytes > 0,
	    "side 0 wrote again what landed unseen (%llu bytes)",
	    (unsigned long long)st0.resumed_bytes);

	/* S2's close finishes: side 0's CLOSE is sent again. */
	engine_close(e1, S[2].a->id);
	settle(&R.T);
	ok((S[2].s.events & ENGINE_EV_RELEASED) &&
	    (S[2].a->events & ENGINE_EV_RELEASED) &&
	    !(S[2].a->events & ENGINE_EV_RESET),
	    "the graceful close in progress completes across the resume");

	/* The rest close gracefully. */
	for (i = 0; i < 5; i++) {
		if (i == 2)
			continue;
		engine_shutdown(e0, S[i].s.id);
		engine_shutdown(e1, S[i].a->id);
	}
	settle(&R.T);
	for (i = 0; i < 5; i++) {
		if (i == 2)
			continue;
		take(e1, S[i].a->id, S[i].a->rx, 65536, S[i].k0, &S[i].r1,
		    &bad);
		take(e0, S[i].s.id, S[i].s.rx, 65536, S[i].k1, &S[i].r0,
		    &bad);
	}
	settle(&R.T);
	for (i = 0; i < 5; i++) {
		if (i == 2)
			continue;
		engine_close(e0, S[i].s.id);
		engine_close(e1, S[i].a->id);
	}
	settle(&R.T);
	for (i = 0, n = 0; i < 5; i++)
		n += (S[i].s.events & ENGINE_EV_RELEASED) &&
		    (S[i].a->events & ENGINE_EV_RELEASED) &&
		    !((S[i].s.events | S[i].a->events) & ENGINE_EV_RESET);
	ok(n == 5 && !bad, "all five end gracefully");
	ok(engine_active(e0) == 0 && engine_active(e1) == 0 &&
	    engine_idle(e0) && engine_idle(e1),
	    "both engines are idle with no stream");
	ok(engine_tx_space(e0, 0, &off) == 0, "no stream is left");
	rz_teardown(&R);
	for (i = 0; i < 5; i++) {
		tstream_free(&S[i].s);
	}
}

static void
test_resume_gone(void)
{
	struct rz R;
	struct tstream a, b, c;
	struct tstream *aa, *ab, *ac;
	struct engine_stats st0, st1;
	uint64_t t = 0, r = 0;
	int bad = 0;

	/*
	 * a: kept by side 0 only (side 1's 4 KiB send ring is under a
	 * quarter of side 0's 64 KiB receive ring); c: kept by side 1 only;
	 * b: kept by both.
	 */
	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	open_stream(&R.T, &a, 4096, 65536);
	engine_keep(E(&R, 0), a.id);
	open_stream(&R.T, &b, 4096, 4096);
	engine_keep(E(&R, 0), b.id);
	settle(&R.T);
	R.T.acc_ring = 32768;
	open_stream(&R.T, &c, 4096, 4096);
	engine_keep(E(&R, 0), c.id);
	settle(&R.T);
	aa = &R.T.acc[0];
	ab = &R.T.acc[1];
	ac = &R.T.acc[2];
	engine_keep(E(&R, 1), aa->id);
	engine_keep(E(&R, 1), ab->id);
	engine_keep(E(&R, 1), ac->id);
	ok(engine_kept(E(&R, 0), a.id) && !engine_kept(E(&R, 1), aa->id) &&
	    !engine_kept(E(&R, 0), c.id) && engine_kept(E(&R, 1), ac->id) &&
	    engine_kept(E(&R, 0), b.id) && engine_kept(E(&R, 1), ab->id),
	    "a is kept by side 0 only, c by side 1 only, b by both");
	put(E(&R, 0), b.id, b.tx, 2000, 7, &t);
	settle(&R.T);
	rz_loss(&R, 0, 0);
	ok((a.events & ENGINE_EV_SUSPENDED) && (aa->events & ENGINE_EV_RESET) &&
	    (c.events & ENGINE_EV_RESET) && (ac->events & ENGINE_EV_SUSPENDED),
	    "each is suspended where it was kept, reset where not");
	ok(rz_resume(&R) == 2, "side 0 resumes a and b");
	rz_settle(&R);
	ok((a.events & ENGINE_EV_RESET) && a.reason == WIRE_REASON_NOT_RESUMED &&
	    (a.events & ENGINE_EV_RELEASED),
	    "a: side 1 answers GONE; side 0 resets it (%s)",
	    wire_reason_str(a.reason));
	ok((ac->events & ENGINE_EV_RESET) &&
	    ac->reason == WIRE_REASON_NOT_RESUMED &&
	    (ac->events & ENGINE_EV_RELEASED),
	    "c: side 0 did not name it; side 1 resets it (%s)",
	    wire_reason_str(ac->reason));
	ok((b.events & ENGINE_EV_RESUMED) && (ab->events & ENGINE_EV_RESUMED) &&
	    !(b.events & ENGINE_EV_RESET) && !(ab->events & ENGINE_EV_RESET),
	    "b is resumed");
	ok(take(E(&R, 1), ab->id, ab->rx, 8192, 7, &r, &bad) == 2000 && !bad,
	    "and its bytes are all there");
	engine_stats(E(&R, 0), &st0);
	engine_stats(E(&R, 1), &st1);
	ok(st0.streams_not_resumed == 1 && st1.streams_not_resumed == 1 &&
	    st0.streams_resumed == 1 && st1.streams_resumed == 1,
	    "one resumed and one not on each side");
	ok(R.adopts[1] == 2, "side 1 adopted b and c (%d)", R.adopts[1]);
	ok(engine_error(E(&R, 0)) == NULL && engine_error(E(&R, 1)) == NULL,
	    "the link stays up");
	rz_teardown(&R);
	tstream_free(&a);
	tstream_free(&b);
	tstream_free(&c);

	/*
	 * A graceful close finished on side 1 (both CLOSEs exchanged there)
	 * while side 0 never got side 1's CLOSE: side 0's stream is
	 * suspended, side 1's is gone, and GONE completes the close.
	 */
	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	aa = rz_kept(&R, &a);
	engine_shutdown(E(&R, 0), a.id);
	engine_shutdown(E(&R, 1), aa->id);
	settle(&R.T);
	engine_close(E(&R, 0), a.id);
	settle(&R.T);
	engine_close(E(&R, 1), aa->id);
	fab_pump(&R.T.f, 1);	/* side 1's CLOSE is lost */
	rz_loss(&R, 0, 0);
	ok((aa->events & ENGINE_EV_RELEASED) && !(aa->events & ENGINE_EV_RESET) &&
	    engine_suspended(R.old[0]) == 1 &&
	    !(a.events & ENGINE_EV_RELEASED),
	    "side 1 is done with the stream; side 0 waits for its CLOSE");
	ok(rz_resume(&R) == 1, "side 0 resumes it");
	rz_settle(&R);
	ok((a.events & ENGINE_EV_RELEASED) && !(a.events & ENGINE_EV_RESET),
	    "the GONE answer completes the close without a reset");
	rz_teardown(&R);
	tstream_free(&a);
}

static void
test_resume_denied(void)
{
	struct rz R;
	struct tstream k, n;
	struct tstream *ak;
	struct engine_stats st0, st1;
	uint8_t tok[WIRE_NONCE_LEN], proof[WIRE_AUTH_LEN];
	uint64_t t = 0, r = 0;
	int bad = 0;

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	ak = rz_kept(&R, &k);
	rz_loss(&R, 0, 0);
	R.deny = WIRE_REASON_DENIED;
	ok(rz_resume(&R) == 1, "side 0 offers its stream");
	rz_settle(&R);
	ok(R.finds == 1 && R.adopts[1] == 0, "side 1 refused in find");
	ok((k.events & ENGINE_EV_RESET) && k.reason == WIRE_REASON_DENIED &&
	    (k.events & ENGINE_EV_RELEASED),
	    "the resuming stream is reset with find's reason (%s)",
	    wire_reason_str(k.reason));
	engine_stats(E(&R, 0), &st0);
	engine_stats(E(&R, 1), &st1);
	ok(st0.resumes_denied == 1 && st1.resumes_denied == 1 &&
	    st0.streams_not_resumed == 1, "a denied resume, counted");
	ok(engine_resume_pending(E(&R, 0)) == 0, "nothing is pending");
	ok(engine_suspended(R.old[1]) == 1 &&
	    !(ak->events & ENGINE_EV_RESET),
	    "side 1's stream still waits in its failed engine");
	engine_abandon(R.old[1], WIRE_REASON_LINK_LOST);
	events_of(&R.T, 1, R.old[1]);
	ok((ak->events & ENGINE_EV_RESET) &&
	    ak->reason == WIRE_REASON_LINK_LOST &&
	    (ak->events & ENGINE_EV_RELEASED),
	    "until engine_abandon ends it (%s)", wire_reason_str(ak->reason));
	engine_free(R.old[1]);
	R.old[1] = NULL;

	/* The link itself carries on. */
	open_stream(&R.T, &n, 4096, 4096);
	settle(&R.T);
	put(E(&R, 0), n.id, n.tx, 3000, 5, &t);
	settle(&R.T);
	ok((n.events & ENGINE_EV_OPENED) &&
	    take(E(&R, 1), R.T.acc[1].id, R.T.acc[1].rx, 8192, 5, &r,
	    &bad) == 3000 && !bad,
	    "after a denied resume the link opens new streams");
	ok(engine_error(E(&R, 0)) == NULL && engine_error(E(&R, 1)) == NULL,
	    "and is healthy");
	rz_teardown(&R);
	tstream_free(&k);
	tstream_free(&n);

	/* A token that names nothing: refused too, as not resumed. */
	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	(void)rz_kept(&R, &k);
	rz_loss(&R, 0, 0);
	memcpy(tok, R.token, sizeof(tok));
	tok[0] ^= 1;
	memset(proof, RZ_ASK, sizeof(proof));
	ok(engine_resume(E(&R, 0), R.old[0], tok, proof) == 1,
	    "side 0 names a token side 1 does not know");
	rz_settle(&R);
	ok((k.events & ENGINE_EV_RESET) &&
	    k.reason == WIRE_REASON_NOT_RESUMED,
	    "an unknown token: RESET (%s)", wire_reason_str(k.reason));
	rz_teardown(&R);
	tstream_free(&k);
}

/*
 * From version 5 a refusal comes before any proof: side 0 may keep its
 * streams (the denied callback), and then its link ends with them
 * suspended again; the next link resumes them.  Below version 5 the
 * refusal stands.
 */
static void
test_resume_denied_kept(void)
{
	struct rz R;
	struct tstream k;
	struct tstream *ak;
	struct engine *held;
	uint8_t tok[WIRE_NONCE_LEN];
	uint64_t t = 0, r = 0;
	int bad = 0;

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	ak = rz_kept(&R, &k);
	rz_loss(&R, 0, 0);
	memcpy(tok, R.token, sizeof(tok));
	R.deny = WIRE_REASON_NOT_RESUMED;
	R.keep_denied = 1;
	ok(rz_resume(&R) == 1, "kept denial: side 0 offers its stream");
	rz_settle(&R);
	ok(R.denials == 1 && engine_error_kind(E(&R, 0)) == ENGINE_ERR_LOCAL &&
	    engine_error(E(&R, 0)) != NULL && strstr(engine_error(E(&R, 0)),
	    "without proving") != NULL, "kept denial: the link ends: %s",
	    engine_error(E(&R, 0)) != NULL ? engine_error(E(&R, 0)) : "");
	ok((k.events & ENGINE_EV_SUSPENDED) &&
	    !(k.events & (ENGINE_EV_RESET | ENGINE_EV_RELEASED)) &&
	    engine_suspended(E(&R, 0)) == 1,
	    "kept denial: the stream is suspended again, not reset");

	/* The next link, to the peer that holds it, resumes it. */
	held = R.old[1];
	R.old[1] = NULL;
	rz_loss(&R, 0, 0);
	engine_abandon(R.old[1], WIRE_REASON_LINK_LOST);
	events_of(&R.T, 1, R.old[1]);
	engine_free(R.old[1]);
	R.old[1] = held;
	memcpy(R.token, tok, sizeof(tok));
	R.deny = 0;
	ok(rz_resume(&R) == 1, "kept denial: the next link offers it again");
	rz_settle(&R);
	ok((k.events & ENGINE_EV_RESUMED) && !(k.events & ENGINE_EV_RESET) &&
	    engine_error(E(&R, 0)) == NULL,
	    "kept denial: and it resumes there");
	put(E(&R, 0), k.id, k.tx, 2000, 9, &t);
	settle(&R.T);
	ok(take(E(&R, 1), ak->id, ak->rx, 8192, 9, &r, &bad) == 2000 && !bad,
	    "kept denial: bytes flow on the resumed stream");
	rz_teardown(&R);
	tstream_free(&k);

	/* Version 4: nothing proves anything, and the refusal stands. */
	rz_setup_cap(&R, rconf(16, 16), rconf(16, 16), 4, 4);
	(void)rz_kept(&R, &k);
	rz_loss(&R, 0, 0);
	R.deny = WIRE_REASON_NOT_RESUMED;
	R.keep_denied = 1;
	ok(rz_resume(&R) == 1, "kept denial, version 4: offered");
	rz_settle(&R);
	ok(R.denials == 0 && engine_error(E(&R, 0)) == NULL &&
	    (k.events & ENGINE_EV_RESET) && (k.events & ENGINE_EV_RELEASED),
	    "kept denial, version 4: the stream is reset, the link stays");
	rz_teardown(&R);
	tstream_free(&k);
}

static void
test_abandon(void)
{
	struct rz R;
	struct tstream k1, k2, k3;
	struct tstream *a3;
	struct engine_stats st;
	uint8_t proof[WIRE_AUTH_LEN] = { 0 };

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	open_stream(&R.T, &k1, 4096, 4096);
	engine_keep(E(&R, 0), k1.id);
	open_stream(&R.T, &k2, 4096, 4096);
	engine_keep(E(&R, 0), k2.id);
	open_stream(&R.T, &k3, 4096, 4096);
	engine_keep(E(&R, 0), k3.id);
	settle(&R.T);
	a3 = &R.T.acc[2];
	engine_keep(E(&R, 1), R.T.acc[0].id);
	engine_keep(E(&R, 1), R.T.acc[1].id);
	engine_keep(E(&R, 1), a3->id);
	/* k2: the peer shut down and side 0 read EOF and shut down too. */
	engine_shutdown(E(&R, 1), R.T.acc[1].id);
	engine_shutdown(E(&R, 0), k2.id);
	settle(&R.T);
	ok(k2.events & ENGINE_EV_EOF, "k2 saw EOF");
	ok(engine_resume(E(&R, 0), E(&R, 1), R.token, proof) == ENGINE_EINVAL,
	    "engine_resume from an engine that did not fail is refused");
	rz_loss(&R, 0, 0);
	ok(engine_suspended(R.old[0]) == 3, "three streams suspended");
	ok(engine_resume(E(&R, 0), E(&R, 0), R.token, proof) == ENGINE_EINVAL,
	    "engine_resume from itself is refused");

	/* While suspended: k2 closes gracefully, k3 is reset. */
	ok(engine_close(R.old[0], k2.id) == 0,
	    "a suspended stream past EOF closes");
	ok(engine_reset(R.old[0], k3.id, WIRE_REASON_RESET) == 0,
	    "a suspended stream is reset by the application");
	events_of(&R.T, 0, R.old[0]);
	ok((k3.events & ENGINE_EV_RELEASED) && !(k3.events & ENGINE_EV_RESET),
	    "and is released at once");
	ok(engine_suspended(R.old[0]) == 2 && engine_active(R.old[0]) == 2,
	    "two left");
	engine_abandon(R.old[0], WIRE_REASON_LINK_LOST);
	events_of(&R.T, 0, R.old[0]);
	ok((k1.events & ENGINE_EV_RESET) && k1.reason == WIRE_REASON_LINK_LOST &&
	    (k1.events & ENGINE_EV_RELEASED),
	    "engine_abandon resets a suspended stream with its reason");
	ok((k2.events & ENGINE_EV_RELEASED) && !(k2.events & ENGINE_EV_RESET),
	    "and only releases one the application closed");
	ok(engine_suspended(R.old[0]) == 0 && engine_active(R.old[0]) == 0,
	    "nothing is left");
	engine_stats(R.old[0], &st);
	ok(st.streams_not_resumed == 2, "two not resumed (%llu)",
	    (unsigned long long)st.streams_not_resumed);
	k1.events = 0;
	engine_abandon(R.old[0], WIRE_REASON_LINK_LOST);
	events_of(&R.T, 0, R.old[0]);
	ok(k1.events == 0, "a second engine_abandon does nothing");

	/* Side 0 resumes nothing: side 1's streams end. */
	ok(rz_resume(&R) == 0, "an engine_resume with no stream left");
	rz_settle(&R);
	ok((a3->events & ENGINE_EV_RESET) &&
	    a3->reason == WIRE_REASON_NOT_RESUMED &&
	    (R.T.acc[0].events & ENGINE_EV_RELEASED) &&
	    (R.T.acc[1].events & ENGINE_EV_RELEASED),
	    "side 1 resets the streams side 0 did not name (%s)",
	    wire_reason_str(a3->reason));
	ok(engine_active(E(&R, 1)) == 0 && engine_error(E(&R, 1)) == NULL,
	    "side 1 holds none and its link is up");
	rz_teardown(&R);
	tstream_free(&k1);
	tstream_free(&k2);
	tstream_free(&k3);
}

/* A buggy embedder keeps the old rkey: the fabric catches the WRITE. */
static void
test_stale_rkey(void)
{
	struct rz R;
	struct tstream k;
	uint64_t t = 0;

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	(void)rz_kept(&R, &k);
	rz_loss(&R, 0, 0);
	R.keep_rkey = 1;
	rz_resume(&R);
	put(E(&R, 0), k.id, k.tx, 100, 1, &t);
	rz_settle(&R);
	ok(R.T.f.failed && strstr(R.T.f.err, "stale") != NULL,
	    "a WRITE with a receive ring's rkey from the lost link is a "
	    "fabric violation: %s", R.T.f.failed ? R.T.f.err : "(none)");
	rz_teardown(&R);
	tstream_free(&k);
}

int
main(void)
{

	test_keep();
	test_suspend();
	test_resume_data();
	test_resume_gone();
	test_resume_denied();
	test_resume_denied_kept();
	test_abandon();
	test_stale_rkey();
	return (tap_done());
}
