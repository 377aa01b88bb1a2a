/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/protocol/engine.  Sealed links: data sealed and
 * opened in place, bits flipped and WRITEs replayed, a kept stream's
 * bytes plaintext again when its WRITE completes or the link fails, and
 * keys renewed mid-stream.  The pair of engines, and how work and bytes
 * move between them, are engine_fixture.h's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "engine_fixture.h"
#include "seal.h"
#include "tap.h"

#define SEAL_ERR	"sealed record failed authentication (tampered or " \
	"injected)"

/*
 * A pair sealed with ${aead}, both directions counting from ${from}, with
 * one stream open, side 0's ring ${txsz} to 4 KiB; WRITEs of at most
 * ${chunk} bytes (0: the default).
 */
static void
seal_pair_at(struct t *T, struct tstream *s, uint32_t txsz, uint32_t chunk,
    enum seal_aead aead, uint64_t from)
{
	struct engine_conf c = conf(16, 16);

	c.chunk = chunk;
	setup(T, c, c);
	fab_seal_at(&T->f, aead, from);
	open_stream(T, s, txsz, 4096);
	settle(T);
}

static void
seal_pair(struct t *T, struct tstream *s, uint32_t txsz, uint32_t chunk)
{

	seal_pair_at(T, s, txsz, chunk, SEAL_CHACHAPOLY, 0);
}

/* Did side ${i}'s link fail with the seal error? */
static int
seal_failed(struct t *T, int i)
{
	const char *why = engine_error(T->f.side[i].e);

	return (why != NULL && strcmp(why, SEAL_ERR) == 0 &&
	    engine_error_kind(T->f.side[i].e) == ENGINE_ERR_FORGED);
}

static void
test_seal_data(void)
{
	struct t T;
	struct tstream s;
	struct tstream *a;
	struct engine_stats st0, st1;
	struct engine *e0, *e1;
	uint64_t t0 = 0, r1 = 0, t1 = 0, r0 = 0;
	uint32_t off;
	int bad = 0, round, plain = 1;

	seal_pair(&T, &s, 8192, 512);
	e0 = T.f.side[0].e;
	e1 = T.f.side[1].e;
	a = &T.acc[0];
	ok(T.nacc == 1 && engine_sealed(e0) && engine_sealed(e1),
	    "a sealed pair opens a stream");
	for (round = 0; round < 40; round++) {
		put(e0, s.id, s.tx, 3000, 1, &t0);
		put(e1, a->id, a->tx, 1700, 2, &t1);
		settle(&T);
		take(e1, a->id, NULL, 8192, 1, &r1, &bad);
		take(e0, s.id, NULL, 8192, 2, &r0, &bad);
		settle(&T);
	}
	ok(!bad && r1 == t0 && r0 == t1 && t0 > 100000 && t1 > 60000 &&
	    engine_error(e0) == NULL && engine_error(e1) == NULL,
	    "data moves both ways byte-exact (%llu and %llu bytes)",
	    (unsigned long long)r1, (unsigned long long)r0);
	/* What the WRITEs read was sealed in place: no plaintext is left. */
	for (off = 0; off < 64; off++)
		plain &= a->tx[off] == pat(2, off);
	ok(!plain, "a stream that keeps no bytes leaves its send ring sealed");
	engine_stats(e0, &st0);
	engine_stats(e1, &st1);
	ok(st0.sealed && st0.sealed_msgs == st0.writes + st0.sends &&
	    st1.opened_msgs == st0.sealed_msgs,
	    "every WR was sealed (%llu) and opened at the peer (%llu)",
	    (unsigned long long)st0.sealed_msgs,
	    (unsigned long long)st1.opened_msgs);

	/*
	 * Many WRITEs of one stream land before the reader learns of the
	 * first: each one's tag must still be there for it.
	 */
	put(e0, s.id, s.tx, 8192, 1, &t0);
	fab_pump(&T.f, 0);
	while (fab_deliver(&T.f, 0) > 0)
		;
	settle(&T);
	engine_stats(e1, &st1);
	ok(st1.bytes_rx - r1 == 4096 && engine_error(e1) == NULL &&
	    T.f.side[0].writes_posted > 8,
	    "the ring fills in WRITEs that all landed before their tags were "
	    "read");
	while (take(e1, a->id, NULL, 8192, 1, &r1, &bad) > 0)
		settle(&T);
	ok(!bad && r1 == t0 && engine_error(e1) == NULL,
	    "then every byte arrives");
	teardown(&T);
	tstream_free(&s);
}

/*
 * Side 0 writes 100 bytes; the fabric flips bit ${bit} of what lands in
 * side 1's ring (payload, then the tag after it).
 */
static void
seal_tamper_write(uint32_t bit, const char *what)
{
	struct t T;
	struct tstream s;
	struct engine_stats st;
	uint64_t t0 = 0;

	seal_pair(&T, &s, 4096, 0);
	put(T.f.side[0].e, s.id, s.tx, 100, 1, &t0);
	T.f.side[0].tamper = bit + 1;
	settle(&T);
	engine_stats(T.f.side[1].e, &st);
	ok(seal_failed(&T, 1) && st.bytes_rx == 0 &&
	    !(T.acc[0].events & ENGINE_EV_READABLE),
	    "a bit flipped in a WRITE's %s fails the link (%s), and nothing "
	    "of it is read", what, engine_error(T.f.side[1].e));
	teardown(&T);
	tstream_free(&s);
}

static void
test_seal_tamper(void)
{
	struct t T;
	struct tstream s;
	struct engine_wr w, tw;
	uint8_t copy[100];
	uint64_t t0 = 0, r1 = 0;
	int bad = 0;

	seal_tamper_write(5, "payload");
	seal_tamper_write(100 * 8 + 3, "tag");

	/* A SEND: side 0's OPEN. */
	setup(&T, conf(16, 16), conf(16, 16));
	fab_seal(&T.f);
	open_stream(&T, &s, 4096, 4096);
	T.f.side[0].tamper = 8 * 3 + 1;
	settle(&T);
	ok(seal_failed(&T, 1) && T.nacc == 0,
	    "a bit flipped in a SEND fails the link; its OPEN is not seen");
	teardown(&T);
	tstream_free(&s);

	/* The same WRITE again, bytes and tag and immediate. */
	seal_pair(&T, &s, 4096, 0);
	put(T.f.side[0].e, s.id, s.tx, 100, 1, &t0);
	fab_pump(&T.f, 0);
	w = T.f.side[0].wire[T.f.side[0].wire_head].wr;
	tw = T.f.side[0].wire[(T.f.side[0].wire_head + 1) %
	    T.f.side[0].wire_cap].wr;
	fab_deliver(&T.f, 0);
	memcpy(copy, T.acc[0].rx, sizeof(copy));
	settle(&T);
	ok(take(T.f.side[1].e, T.acc[0].id, NULL, 4096, 1, &r1,
	    &bad) == 100 && !bad, "the WRITE arrives");
	memcpy(T.acc[0].rx + 100, copy, sizeof(copy));
	fab_inject(&T.f, 1, FAB_CQE_RECV_TAG,
	    T.f.side[0].ctrl_send + (tw.wr_id % 16) * WIRE_MSG_SIZE,
	    WIRE_TAG_LEN, tw.imm);
	ok(w.op == ENGINE_WR_WRITE && tw.op == ENGINE_WR_SEND_IMM &&
	    tw.imm == w.imm && seal_failed(&T, 1) && r1 == 100,
	    "the same WRITE replayed fails the link: %s",
	    engine_error(T.f.side[1].e));
	teardown(&T);
	tstream_free(&s);

	/*
	 * A tag whose immediate claims more than is left before the ring's
	 * end: refused before anything is opened (opening would write past
	 * the ring; ASan saw it).
	 */
	seal_pair(&T, &s, 4096, 0);
	r1 = t0 = 0;
	put(T.f.side[0].e, s.id, s.tx, 4000, 1, &t0);
	settle(&T);
	ok(take(T.f.side[1].e, T.acc[0].id, NULL, 4096, 1, &r1,
	    &bad) == 4000 && !bad, "4000 bytes arrive and are read");
	settle(&T);
	memset(copy, 0, sizeof(copy));
	fab_inject(&T.f, 1, FAB_CQE_RECV_TAG, copy, WIRE_TAG_LEN,
	    wire_imm_encode(T.acc[0].id, 4096));
	ok(failed_with(T.f.side[1].e, "crosses the end of its ring"),
	    "a tag for bytes past the ring's end fails the link: %s",
	    err_of(T.f.side[1].e));
	teardown(&T);
	tstream_free(&s);
}

/*
 * An injector that read a WRITE's clear header (the ring's address and
 * rkey) writes forged bytes over side 1's receive ring with a plain RDMA
 * WRITE, which the HCA lets in.  Before the tag came, the open fails and
 * the link ends; after it, the reader must still get what was sealed.
 */
static void
test_seal_inject(void)
{
	struct t T;
	struct tstream s;
	struct engine_wr w;
	struct engine_stats st;
	struct engine_conf c = conf(16, 16);
	struct engine_ring tx, rx;
	uint8_t forged[4096];
	uint64_t t0 = 0, r1 = 0;
	int bad = 0;

	memset(forged, 'X', sizeof(forged));
	seal_pair(&T, &s, 4096, 0);
	put(T.f.side[0].e, s.id, s.tx, 100, 1, &t0);
	fab_pump(&T.f, 0);
	w = T.f.side[0].wire[T.f.side[0].wire_head].wr;
	settle(&T);
	engine_stats(T.f.side[1].e, &st);
	ok(w.op == ENGINE_WR_WRITE && st.bytes_rx == 100 &&
	    (T.acc[0].events & ENGINE_EV_READABLE) &&
	    engine_rings(T.f.side[1].e, T.acc[0].id, &tx, &rx) == 0 &&
	    w.remote_addr == rx.addr && w.rkey == rx.key &&
	    fab_inject_write(&T.f, 1, w.remote_addr, w.rkey, forged, 100) == 0,
	    "a sealed WRITE is opened and counted; an injector's WRITE over "
	    "its bytes, at the address and rkey its header showed, lands");
	ok(take(T.f.side[1].e, T.acc[0].id, NULL, 4096, 1, &r1, &bad) == 100 &&
	    !bad && engine_error(T.f.side[1].e) == NULL,
	    "the reader gets the bytes that were sealed, not the forged ones");
	engine_stats(T.f.side[1].e, &st);
	ok(st.rx_private == 4096, "the ring's private copy is counted (%llu "
	    "bytes)", (unsigned long long)st.rx_private);

	/* Forged bytes between the WRITE and its tag: the open fails. */
	put(T.f.side[0].e, s.id, s.tx, 100, 1, &t0);
	fab_pump(&T.f, 0);
	w = T.f.side[0].wire[T.f.side[0].wire_head].wr;
	fab_deliver(&T.f, 0);
	ok(fab_inject_write(&T.f, 1, w.remote_addr, w.rkey, forged, 100) == 0,
	    "an injector's WRITE lands before the tag");
	settle(&T);
	ok(seal_failed(&T, 1) && take(T.f.side[1].e, T.acc[0].id, NULL, 4096,
	    1, &r1, &bad) == 0 && r1 == 100,
	    "then the WRITE fails to open, the link ends, nothing is read");
	teardown(&T);
	tstream_free(&s);

	/*
	 * Two lanes: small bytes come as DATA in a sealed SEND, and go where
	 * the reader reads them, not into the ring, whose address and rkey
	 * the WRITE after them shows.  The forged bytes cover the ring.
	 */
	c.lanes = 2;
	setup(&T, c, c);
	fab_seal(&T.f);
	open_stream(&T, &s, 4096, 4096);
	settle(&T);
	r1 = t0 = 0;
	put(T.f.side[0].e, s.id, s.tx, 64, 1, &t0);
	settle(&T);
	put(T.f.side[0].e, s.id, s.tx, 1000, 1, &t0);
	settle(&T);
	engine_stats(T.f.side[1].e, &st);
	ok(st.eager_rx == 1 && st.bytes_rx == 1064 &&
	    engine_rings(T.f.side[1].e, T.acc[0].id, &tx, &rx) == 0 &&
	    fab_inject_write(&T.f, 1, rx.addr, rx.key, forged,
	    sizeof(forged)) == 0,
	    "64 bytes come as DATA, 1000 in a WRITE; an injector overwrites "
	    "the whole ring");
	ok(take(T.f.side[1].e, T.acc[0].id, NULL, 4096, 1, &r1, &bad) == 1064 &&
	    !bad && r1 == t0 && engine_error(T.f.side[1].e) == NULL,
	    "the reader gets the bytes that were sealed, not the forged ones");
	teardown(&T);
	tstream_free(&s);
}

/*
 * The daemon's default inline_size carries the lane 1 SEND of a 64-byte
 * write whole, in clear, sealed, and sealed with iWARP's notices.
 */
static void
test_seal_inline(void)
{
	static const char *const how[] = { "in clear", "sealed",
	    "sealed, with notices" };
	struct t T;
	struct tstream s;
	struct engine_conf c;
	const struct fab_lane *l1;
	const struct fab_wr *w;
	uint64_t t0, r1;
	uint32_t len;
	size_t i;
	int k, bad, sends, inl;

	for (k = 0; k < 3; k++) {
		c = conf(16, 16);
		c.lanes = 2;
		c.inline_size = ENGINE_INLINE_DEFAULT;
		c.notify = k == 2;
		setup(&T, c, c);
		if (k > 0)
			fab_seal(&T.f);
		open_stream(&T, &s, 4096, 4096);
		settle(&T);
		t0 = r1 = 0;
		bad = 0;
		put(T.f.side[0].e, s.id, s.tx, 64, 1, &t0);
		fab_pump(&T.f, 0);
		l1 = &T.f.side[0].lane1;
		sends = 0;
		inl = 1;
		len = 0;
		for (i = 0; i < l1->wire_n; i++) {
			w = &l1->wire[(l1->wire_head + i) % l1->wire_cap];
			if (w->wr.len < 64)
				continue;
			sends++;
			inl &= w->wr.inlined;
			len = w->wr.len;
		}
		ok(sends == 1 && inl && len <= ENGINE_INLINE_DEFAULT,
		    "%s: a 64-byte write goes in one SEND of %u bytes on lane 1, "
		    "inline (inline_size %u)", how[k], (unsigned)len,
		    (unsigned)ENGINE_INLINE_DEFAULT);
		settle(&T);
		ok(take(T.f.side[1].e, T.acc[0].id, NULL, 4096, 1, &r1,
		    &bad) == 64 && !bad && r1 == t0 &&
		    engine_sealed(T.f.side[1].e) == (k > 0),
		    "%s: the peer reads the 64 bytes", how[k]);
		teardown(&T);
		tstream_free(&s);
	}
}

/* Is ${n} bytes of ${ring} from pattern position ${pos} plaintext? */
static int
is_plain(const uint8_t *ring, uint32_t size, uint32_t key, uint64_t pos,
    uint32_t n)
{
	uint32_t j;

	for (j = 0; j < n; j++)
		if (ring[(pos + j) % size] != pat(key, pos + j))
			return (0);
	return (1);
}

/*
 * A sealed pair (signalled rarely) with a kept stream, 16 KiB towards 4
 * KiB: 1100 bytes went out in a WRITE that asked for no completion, and
 * the peer read them, so its CREDIT came before this side learnt that the
 * WRITE finished.  Returns side 1's stream; 0 in ${*bad} if all was so.
 */
static struct tstream *
credit_first(struct rz *R, struct tstream *k, uint64_t *t0, uint64_t *r1,
    int *bad)
{
	struct engine_conf c = rconf(16, 16);
	struct engine_stats st;
	struct tstream *ak;

	c.signal_every = 8;
	rz_setup(R, c, c);
	fab_seal(&R->T.f);
	open_stream(&R->T, k, 16384, 4096);
	engine_keep(E(R, 0), k->id);
	settle(&R->T);
	ak = &R->T.acc[0];
	engine_keep(E(R, 1), ak->id);
	put(E(R, 0), k->id, k->tx, 1100, 1, t0);
	settle(&R->T);
	take(E(R, 1), ak->id, NULL, 8192, 1, r1, bad);
	settle(&R->T);
	engine_stats(E(R, 0), &st);
	*bad |= !engine_kept(E(R, 0), k->id) || st.sq_depth == 0 || *r1 != *t0;
	return (ak);
}

/*
 * The peer's CREDIT for a kept stream's bytes comes before this side
 * learns their WRITE finished (it asked for no completion): the bytes
 * must stay until it did, or its restore would scribble on new ones.
 * If the link fails first, that finishes the WRITE.
 */
static void
test_seal_credit_first(void)
{
	struct rz R;
	struct tstream k;
	struct tstream *ak;
	uint64_t t0 = 0, r1 = 0;
	uint32_t off;
	int bad = 0, round;

	ak = credit_first(&R, &k, &t0, &r1, &bad);
	ok(!bad && engine_tx_space(E(&R, 0), k.id, &off) == 16384 - 1100,
	    "consumed, but not known complete: the bytes stay");
	for (round = 0; round < 8; round++) {
		put(E(&R, 0), k.id, k.tx, 16384, 1, &t0);
		settle(&R.T);
		take(E(&R, 1), ak->id, NULL, 65536, 1, &r1, &bad);
		settle(&R.T);
	}
	while (take(E(&R, 1), ak->id, NULL, 65536, 1, &r1, &bad) > 0)
		settle(&R.T);
	ok(!bad && r1 == t0 && t0 > 2 * 16384 && engine_error(E(&R, 1)) == NULL,
	    "and every byte after them arrives right (%llu of %llu)",
	    (unsigned long long)r1, (unsigned long long)t0);
	rz_teardown(&R);
	tstream_free(&k);

	t0 = r1 = 0;
	credit_first(&R, &k, &t0, &r1, &bad);
	rz_loss(&R, 0, 0);
	ok(!bad && is_plain(k.tx, 16384, 1, 0, 1100),
	    "the link fails first: that finishes the WRITE, in plaintext");
	ok(put(R.old[0], k.id, k.tx, 16384, 1, &t0) == 16384,
	    "and the suspended stream has the consumed bytes free again");
	rz_teardown(&R);
	tstream_free(&k);
}

static void
test_seal_restore(void)
{
	struct rz R;
	struct tstream k;
	struct tstream *ak;
	uint64_t t0 = 0, r1 = 0;
	int bad = 0;

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	fab_seal(&R.T.f);
	ak = rz_kept(&R, &k);
	/* Over a quarter of the ring: the WRITE asks for its completion. */
	put(E(&R, 0), k.id, k.tx, 1100, 1, &t0);
	settle(&R.T);
	ok(engine_kept(E(&R, 0), k.id) && engine_sealed(E(&R, 0)) &&
	    is_plain(k.tx, 4096, 1, 0, 1100),
	    "a kept stream's send ring holds plaintext again once its WRITE "
	    "completed");
	put(E(&R, 0), k.id, k.tx, 1400, 1, &t0);
	fab_pump(&R.T.f, 0);
	ok(R.T.f.side[0].wire_n > 0 && !is_plain(k.tx, 4096, 1, 1100, 1400),
	    "a WRITE outstanding has its bytes sealed");
	rz_loss(&R, 0, 0);
	ok(is_plain(k.tx, 4096, 1, 1100, 1400),
	    "and plaintext again once the link failed with it outstanding");
	ok(rz_resume(&R) == 1, "the stream resumes on a new sealed link");
	rz_settle(&R);
	ok(take(E(&R, 1), ak->id, NULL, 8192, 1, &r1, &bad) == 2500 &&
	    !bad && r1 == t0 && engine_sealed(E(&R, 1)) &&
	    engine_error(E(&R, 1)) == NULL,
	    "under the new link's keys every byte arrives exactly once");
	rz_teardown(&R);
	tstream_free(&k);
}

/*
 * The link fails with a sealed WRITE of a kept stream outstanding, and no
 * one confirmed that its queue pair stopped: the engine's own failure (a
 * completion for no work request), or the embedder's after an
 * ibv_modify_qp that failed.  The WRITE may still read the ring, so its
 * bytes stay sealed, and the stream is suspended with them sealed: a stop
 * confirmed later gives the plaintext back and the stream resumes; with
 * none, no resume takes it, and it is reset.
 */
static void
test_seal_unstopped(void)
{
	struct rz R;
	struct tstream k;
	struct tstream *ak;
	uint64_t t0, r1;
	int how, bad;

	for (how = 0; how < 2; how++) {
		t0 = r1 = 0;
		bad = 0;
		rz_setup(&R, rconf(16, 16), rconf(16, 16));
		fab_seal(&R.T.f);
		ak = rz_kept(&R, &k);
		put(E(&R, 0), k.id, k.tx, 1400, 1, &t0);
		fab_pump(&R.T.f, 0);
		if (how == 0)
			(void)engine_on_send_done(E(&R, 0), UINT64_C(1) << 40);
		else
			engine_fail(E(&R, 0), ENGINE_ERR_TRANSPORT,
			    "ibv_modify_qp failed");
		events_of(&R.T, 0, E(&R, 0));
		ok(engine_error(E(&R, 0)) != NULL &&
		    !is_plain(k.tx, 4096, 1, 0, 1400) &&
		    engine_suspended(E(&R, 0)) == 1 &&
		    (k.events & ENGINE_EV_SUSPENDED) &&
		    !(k.events & ENGINE_EV_RESET),
		    "%s, no stop confirmed: the WRITE's bytes stay sealed, the "
		    "kept stream is suspended", how == 0 ? "the engine's own "
		    "failure" : "engine_fail");
		/* The stop comes after the failure, or never. */
		R.T.f.side[0].unstopped = how == 1;
		rz_loss(&R, 0, 0);
		ok(is_plain(k.tx, 4096, 1, 0, 1400) == (how == 0),
		    "%s", how == 0 ? "a stop confirmed after the failure "
		    "gives the plaintext back" : "without a stop the bytes "
		    "stay sealed");
		ok(rz_resume(&R) == (how == 0 ? 1 : 0) &&
		    ((k.events & ENGINE_EV_RESET) != 0) == (how == 1),
		    "%s", how == 0 ? "and the stream resumes" : "and no resume "
		    "takes the stream: it is reset");
		rz_settle(&R);
		if (how == 0)
			ok(take(E(&R, 1), ak->id, NULL, 8192, 1, &r1,
			    &bad) == 1400 && !bad && r1 == t0 &&
			    engine_error(E(&R, 1)) == NULL,
			    "every byte arrives under the new link's keys");
		rz_teardown(&R);
		tstream_free(&k);
	}
}

/*
 * An injector overwrites a kept stream's sealed WRITE between the WRITE
 * and its tag: the open fails and the link ends, but the streams are
 * suspended, not reset (the peer did nothing wrong), and once the
 * embedder confirmed the stop they resume with every byte.
 */
static void
test_seal_forged_suspends(void)
{
	struct rz R;
	struct tstream k;
	struct tstream *ak;
	uint64_t t0 = 0, r1 = 0;
	int bad = 0;

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	fab_seal(&R.T.f);
	ak = rz_kept(&R, &k);
	put(E(&R, 0), k.id, k.tx, 1000, 1, &t0);
	settle(&R.T);
	take(E(&R, 1), ak->id, NULL, 8192, 1, &r1, &bad);
	settle(&R.T);
	R.T.f.side[0].overwrite = 16;
	put(E(&R, 0), k.id, k.tx, 1200, 1, &t0);
	settle(&R.T);
	events_of(&R.T, 1, E(&R, 1));
	ok(seal_failed(&R.T, 1) && engine_suspended(E(&R, 1)) == 1 &&
	    (ak->events & ENGINE_EV_SUSPENDED) &&
	    !(ak->events & ENGINE_EV_RESET) && r1 == 1000,
	    "a WRITE overwritten before its tag fails to open: the link ends "
	    "with its kept streams suspended (%s)",
	    engine_err_name(engine_error_kind(E(&R, 1))));
	rz_loss(&R, 0, 0);
	ok(rz_resume(&R) == 1, "the stream resumes on a new link");
	rz_settle(&R);
	ok(take(E(&R, 1), ak->id, NULL, 8192, 1, &r1, &bad) == 1200 && !bad &&
	    r1 == t0 && engine_error(E(&R, 1)) == NULL,
	    "every byte arrives, the forged ones never (%llu of %llu)",
	    (unsigned long long)r1, (unsigned long long)t0);
	rz_teardown(&R);
	tstream_free(&k);
}

/*
 * Data both ways over a link whose counts start ${before} messages below
 * the first rekey boundary: every byte arrives through the renewal.
 */
static void
seal_rekey_data(enum seal_aead aead, uint64_t before)
{
	struct t T;
	struct tstream s;
	struct tstream *a;
	struct engine_stats st0, st1;
	uint64_t t0 = 0, r1 = 0, t1 = 0, r0 = 0;
	int bad = 0, round;

	seal_pair_at(&T, &s, 8192, 512, aead, SEAL_REKEY_EVERY - before);
	a = &T.acc[0];
	for (round = 0; round < 10; round++) {
		put(T.f.side[0].e, s.id, s.tx, 3000, 1, &t0);
		put(T.f.side[1].e, a->id, a->tx, 1700, 2, &t1);
		settle(&T);
		take(T.f.side[1].e, a->id, NULL, 8192, 1, &r1, &bad);
		take(T.f.side[0].e, s.id, NULL, 8192, 2, &r0, &bad);
		settle(&T);
	}
	engine_stats(T.f.side[0].e, &st0);
	engine_stats(T.f.side[1].e, &st1);
	ok(!bad && r1 == t0 && r0 == t1 && t0 == 30000 && t1 == 17000 &&
	    engine_error(T.f.side[0].e) == NULL &&
	    engine_error(T.f.side[1].e) == NULL && fab_rekeys(&T.f) == 4 &&
	    st0.sealed_msgs > before && st1.sealed_msgs > before &&
	    seal_dir_count(&T.f.side[0].seal.tx[0]) ==
	    seal_dir_count(&T.f.side[1].seal.rx[0]) &&
	    seal_dir_count(&T.f.side[1].seal.tx[0]) ==
	    seal_dir_count(&T.f.side[0].seal.rx[0]),
	    "%s: both directions renew their keys mid-stream, both ends (%d "
	    "of 4), and every byte arrives (%llu and %llu)",
	    seal_aead_name(aead), (int)fab_rekeys(&T.f),
	    (unsigned long long)r1, (unsigned long long)r0);
	teardown(&T);
	tstream_free(&s);
}

/*
 * A kept stream's WRITEs sealed at messages E-2, E-1 and E (E the first
 * rekey boundary) are all outstanding; the first completes after the
 * renewal, then the link fails with the other two: each is restored under
 * the key it was sealed with, and the resume carries every byte.
 */
static void
test_seal_rekey(void)
{
	struct rz R;
	struct tstream k;
	struct tstream *ak;
	uint64_t t0 = 0, r1 = 0, wp;
	uint32_t n;
	int bad = 0, w;

	seal_rekey_data(SEAL_CHACHAPOLY, 20);
	if (seal_aesgcm_available())
		seal_rekey_data(SEAL_AESGCM, 20);
	else
		ok(1, "# SKIP AES-256-GCM: this CPU lacks AES-NI or PCLMUL");

	rz_setup(&R, rconf(16, 16), rconf(16, 16));
	fab_seal(&R.T.f);
	ak = rz_kept(&R, &k);
	settle(&R.T);
	seal_dir_set_count_for_test(&R.T.f.side[0].seal.tx[0],
	    SEAL_REKEY_EVERY - 2);
	seal_dir_set_count_for_test(&R.T.f.side[1].seal.rx[0],
	    SEAL_REKEY_EVERY - 2);
	/* Over a quarter of the ring each: every WRITE asks for completion. */
	wp = R.T.f.side[0].writes_posted;
	for (w = 0; w < 3; w++) {
		put(E(&R, 0), k.id, k.tx, 1100, 1, &t0);
		fab_pump(&R.T.f, 0);
	}
	ok(seal_dir_count(&R.T.f.side[0].seal.tx[0]) == SEAL_REKEY_EVERY + 1 &&
	    R.T.f.side[0].writes_posted - wp == 3 &&
	    !is_plain(k.tx, 4096, 1, 0, 1) &&
	    !is_plain(k.tx, 4096, 1, 2200, 1),
	    "three WRITEs outstanding, sealed across the rekey boundary");
	/* The first WRITE and its tag land, and it completes. */
	fab_deliver(&R.T.f, 0);
	fab_deliver(&R.T.f, 0);
	while (fab_complete(&R.T.f, 0) > 0 || fab_complete(&R.T.f, 1) > 0)
		;
	ok(engine_error(E(&R, 0)) == NULL && engine_kept(E(&R, 0), k.id) &&
	    is_plain(k.tx, 4096, 1, 0, 1100) &&
	    !is_plain(k.tx, 4096, 1, 1100, 1) && !is_plain(k.tx, 4096, 1, 2200, 1),
	    "the WRITE sealed before the renewal completes after it: its "
	    "bytes are plaintext again, the others still sealed");
	rz_loss(&R, 0, 0);
	ok(is_plain(k.tx, 4096, 1, 0, 3300) && engine_kept(R.old[0], k.id),
	    "the link fails with WRITEs of both keys outstanding: all "
	    "plaintext again, and the stream kept");
	ok(rz_resume(&R) == 1, "the stream resumes on a new sealed link");
	rz_settle(&R);
	n = take(E(&R, 1), ak->id, NULL, 8192, 1, &r1, &bad);
	ok(n == 3300 && !bad && r1 == t0 && engine_sealed(E(&R, 1)) &&
	    engine_error(E(&R, 1)) == NULL,
	    "every byte arrives exactly once (%u of %llu)", (unsigned)n,
	    (unsigned long long)t0);
	rz_teardown(&R);
	tstream_free(&k);
}

int
main(void)
{

	if (sodium_init() < 0)
		return (1);
	test_seal_data();
	test_seal_tamper();
	test_seal_inject();
	test_seal_restore();
	test_seal_unstopped();
	test_seal_forged_suspends();
	test_seal_credit_first();
	test_seal_rekey();
	test_seal_inline();
	return (tap_done());
}
