/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/protocol/engine.  Authentication: the stand-in key
 * proofs (AUTH) and handshake steps, lib/crypto/noise's Noise_XX through
 * the engine, and what a link allows before either is done.  The pair of
 * engines, and how work and bytes move between them, are
 * engine_fixture.h's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "engine_fixture.h"
#include "noise.h"
#include "seal.h"
#include "tap.h"

/*
 * Stand-in handshake of four messages (three before version 7, without
 * the responder's confirmation): message i (1 to 4) is 40 * i bytes of
 * (fleet + i); a side accepts the peer's if its fleet matches.  The
 * engine only carries and gates the messages; the daemon's Noise
 * handshake is tested with lib/crypto/noise.
 */
struct ths {
	uint8_t fleet;
	int initiator, steps;
	int v6;			/* three messages, as before version 7 */
	size_t got[5];
};

static int
ths_step(void *arg, const uint8_t *in, size_t inlen, uint8_t *out,
    size_t *outlen, const char **why)
{
	struct ths *h = arg;
	int want = h->initiator ? 2 * h->steps : 2 * h->steps + 1, i;
	int last = h->v6 ? 3 : 4;

	h->steps++;
	*outlen = 0;
	if (in != NULL) {
		for (i = 0; i < (int)inlen; i++)
			if (in[i] != (uint8_t)(h->fleet + want))
				break;
		if (inlen != (size_t)(40 * want) || i < (int)inlen) {
			*why = "not of this fleet";
			return (-1);
		}
		h->got[want] = inlen;
	}
	if (want == last)
		return (ENGINE_HS_DONE);
	*outlen = (size_t)(40 * (want + 1));
	memset(out, h->fleet + want + 1, *outlen);
	return (want + 1 == last ? ENGINE_HS_DONE : want + 1 == 3 ?
	    ENGINE_HS_KEYS : ENGINE_HS_MORE);
}

/* Both sides' hellos capped at version ${cap} (0: the newest). */
static void
hs_pair(struct t *T, struct engine_conf *c, struct ths *ha, struct ths *hb,
    uint8_t fa, int fb, unsigned cap)
{

	memset(ha, 0, sizeof(*ha));
	memset(hb, 0, sizeof(*hb));
	ha->fleet = fa;
	ha->initiator = 1;
	hb->fleet = (uint8_t)fb;
	ha->v6 = hb->v6 = cap == 6;
	memset(T, 0, sizeof(*T));
	T->acc_ring = 4096;
	fab_init_seal(&T->f, c, c, &(struct engine_auth){ .initiator = 1,
	    .step = ths_step, .arg = ha, .seal = 1 },
	    fb < 0 ? NULL : &(struct engine_auth){ .step = ths_step,
	    .arg = hb, .aesgcm = 1 }, NULL, NULL, cap);
}

/*
 * A stream from side 0 opens, is accepted, and carries ${n} bytes of
 * pattern ${key} intact, on a fabric that saw no violation.
 */
static int
stream_flows(struct t *T, uint32_t n, uint8_t key)
{
	struct tstream s;
	struct tstream *a;
	int bad = 0, rc;

	if (open_stream(T, &s, 4096, 4096) < 0)
		return (0);
	settle(T);
	put(T->f.side[0].e, s.id, s.tx, n, key, &s.tx_at);
	settle(T);
	a = &T->acc[T->nacc > 0 ? T->nacc - 1 : 0];
	rc = (s.events & ENGINE_EV_OPENED) && T->nacc > 0 &&
	    take(T->f.side[1].e, a->id, NULL, n, key, &a->rx_at, &bad) == n &&
	    !bad && !T->f.failed;
	tstream_free(&s);
	return (rc);
}

/*
 * The real handshake through the engine: lib/crypto/noise's Noise_XX with
 * static keys, as the daemon runs it (daemon/link/handshake.c adds the peers'
 * lists and the psk), and from version 7 the responder's confirmation:
 * BLAKE2b-256 keyed with Split's third key, of "rstream-confirm-v1" and
 * the handshake hash.  Its messages fit HANDSHAKE records and SENDs.
 */
struct rnoise {
	struct noise_hs hs;
	int initiator, started, split, nmsg;
	int v6;			/* no confirmation, as before version 7 */
	int spoil;		/* responder: a wrong confirmation */
	uint8_t priv[NOISE_KEY_LEN], peer_pub[NOISE_KEY_LEN];
	uint8_t h[NOISE_HASH_LEN], confirm[32];
	size_t sizes[4];	/* the messages, 1 to 4, each side its own */
	struct seal_pair seal;		/* lib/crypto/seal, keyed by Split */
};

static void
rnoise_confirm(struct rnoise *r, const uint8_t k3[NOISE_KEY_LEN])
{
	static const char label[] = "rstream-confirm-v1";
	crypto_generichash_state st;

	crypto_generichash_init(&st, k3, NOISE_KEY_LEN, sizeof(r->confirm));
	crypto_generichash_update(&st, (const uint8_t *)label,
	    sizeof(label) - 1);
	crypto_generichash_update(&st, r->h, sizeof(r->h));
	crypto_generichash_final(&st, r->confirm, sizeof(r->confirm));
}

static int
rnoise_step(void *arg, const uint8_t *in, size_t inlen, uint8_t *out,
    size_t *outlen, const char **why)
{
	struct rnoise *r = arg;
	uint8_t c1[NOISE_KEY_LEN], c2[NOISE_KEY_LEN], k3[NOISE_KEY_LEN];
	size_t plen;

	*outlen = 0;
	*why = "noise";
	if (r->split) {
		*why = "wrong confirmation";
		return (inlen == sizeof(r->confirm) && sodium_memcmp(in,
		    r->confirm, inlen) == 0 ? ENGINE_HS_DONE : -1);
	}
	if (!r->started) {
		r->started = 1;
		if (noise_init(&r->hs, r->initiator, (const uint8_t *)"p", 1,
		    r->priv, NULL, NULL) != 0)
			return (-1);
	}
	if (in != NULL && noise_read(&r->hs, in, inlen, NULL, 0, &plen) != 0)
		return (-1);
	if (!noise_done(&r->hs) && noise_write(&r->hs, NULL, 0, out,
	    WIRE_HS_MAX, outlen) != 0)
		return (-1);
	if (*outlen > 0)
		r->sizes[2 * r->nmsg++ + !r->initiator] = *outlen;
	if (!noise_done(&r->hs))
		return (ENGINE_HS_MORE);
	if (noise_remote_static(&r->hs) == NULL || memcmp(
	    noise_remote_static(&r->hs), r->peer_pub, NOISE_KEY_LEN) != 0) {
		*why = "not the peer's key";
		return (-1);
	}
	noise_split(&r->hs, c1, c2, k3, r->h);
	rnoise_confirm(r, k3);
	r->split = 1;
	if (seal_pair_init(&r->seal, SEAL_CHACHAPOLY, r->initiator ? c1 : c2,
	    r->initiator ? c2 : c1)) {
		*why = "seal_pair_init";
		return (-1);
	}
	if (r->v6)
		return (ENGINE_HS_DONE);
	if (r->initiator)
		return (ENGINE_HS_KEYS);
	memcpy(out, r->confirm, sizeof(r->confirm));
	out[0] ^= (uint8_t)r->spoil;
	*outlen = sizeof(r->confirm);
	r->sizes[3] = *outlen;
	return (ENGINE_HS_DONE);
}

/* The link and the seal directions of both sides go. */
static void
rnoise_teardown(struct t *T, struct rnoise *ra, struct rnoise *rb)
{
	teardown(T);
	seal_pair_wipe(&ra->seal);
	seal_pair_wipe(&rb->seal);
}

/*
 * Two sides with fresh static keys, side 1 expecting side 0's unless
 * ${stranger}; side 0 asks for sealing if ${seal}; both hellos capped at
 * version ${cap} (0: the newest).  Connected, message 1 not yet sent.
 */
static void
rnoise_pair(struct t *T, struct engine_conf *c, struct rnoise *ra,
    struct rnoise *rb, int seal, int stranger, unsigned cap)
{
	uint8_t pa[NOISE_KEY_LEN], pb[NOISE_KEY_LEN];

	memset(ra, 0, sizeof(*ra));
	memset(rb, 0, sizeof(*rb));
	noise_keygen(ra->priv, pa);
	noise_keygen(rb->priv, pb);
	memcpy(ra->peer_pub, pb, sizeof(pb));
	memcpy(rb->peer_pub, pa, sizeof(pa));
	if (stranger)
		memset(rb->peer_pub, 7, sizeof(rb->peer_pub));
	ra->initiator = 1;
	ra->v6 = rb->v6 = cap == 6;
	memset(T, 0, sizeof(*T));
	T->acc_ring = 4096;
	fab_init_seal(&T->f, c, c, &(struct engine_auth){ .initiator = 1,
	    .step = rnoise_step, .arg = ra, .seal = (uint8_t)seal },
	    &(struct engine_auth){ .step = rnoise_step, .arg = rb },
	    &(struct engine_seal){ seal_pair_seal, seal_pair_open,
	    seal_pair_restore, seal_pair_ptr, &ra->seal },
	    &(struct engine_seal){ seal_pair_seal, seal_pair_open,
	    seal_pair_restore, seal_pair_ptr, &rb->seal }, cap);
}

/* Side ${side} opens no stream: ENGINE_EDOWN. */
static int
no_stream(struct t *T, int side)
{
	struct tstream s;
	struct engine_ring tx, rx;
	int rc;

	rings(T, side, &s, 4096, 4096, &tx, &rx);
	rc = engine_open(T->f.side[side].e, "t", &tx, &rx, &s) ==
	    ENGINE_EDOWN;
	tstream_free(&s);
	return (rc);
}

static void
test_handshake_noise(void)
{
	struct engine_conf c = conf(8, 8);
	struct rnoise ra, rb;
	struct engine *a, *b;
	struct t T;

	rnoise_pair(&T, &c, &ra, &rb, 1, 0, 0);
	settle(&T);
	ok(engine_authenticated(T.f.side[0].e) &&
	    engine_authenticated(T.f.side[1].e) &&
	    memcmp(ra.h, rb.h, sizeof(ra.h)) == 0,
	    "Noise_XX through the engine: both authenticated, one hash");
	ok(ra.sizes[0] == 32 && rb.sizes[1] == 96 && ra.sizes[2] == 64 &&
	    rb.sizes[3] == 32, "its messages are 32, 96 and 64 bytes, and "
	    "the confirmation 32");
	ok(stream_flows(&T, 3000, 0x21), "a stream carries data after it");
	ok(engine_sealed(T.f.side[0].e) && engine_sealed(T.f.side[1].e) &&
	    seal_dir_count(&ra.seal.tx[0]) > 0 &&
	    seal_dir_count(&ra.seal.tx[0]) == seal_dir_count(&rb.seal.rx[0]) &&
	    seal_dir_count(&rb.seal.tx[0]) == seal_dir_count(&ra.seal.rx[0]),
	    "sealed with the handshake's keys, from the message after it (%llu "
	    "and %llu messages)",
	    (unsigned long long)seal_dir_count(&ra.seal.tx[0]),
	    (unsigned long long)seal_dir_count(&rb.seal.tx[0]));
	rnoise_teardown(&T, &ra, &rb);

	/* Neither asks for sealing: the link stays in clear. */
	rnoise_pair(&T, &c, &ra, &rb, 0, 0, 0);
	settle(&T);
	ok(stream_flows(&T, 3000, 0x22) && !engine_sealed(T.f.side[0].e) &&
	    seal_dir_count(&ra.seal.tx[0]) == 0 && rb.sizes[3] == 32,
	    "without SEAL in either hello the link carries data in clear, "
	    "after the confirmation all the same");
	rnoise_teardown(&T, &ra, &rb);

	/* Side 1 expects another key: it fails the link at message 3. */
	rnoise_pair(&T, &c, &ra, &rb, 1, 1, 0);
	settle(&T);
	ok(failed_with(T.f.side[1].e, "not the peer's key"),
	    "an unexpected static key fails the link: %s",
	    err_of(T.f.side[1].e));
	ok(!engine_authenticated(T.f.side[0].e) && rb.sizes[3] == 0,
	    "... with no confirmation: the initiator never authenticates");
	rnoise_teardown(&T, &ra, &rb);

	/*
	 * Version 7, one message at a time: message 3 leaves the initiator
	 * unauthenticated, opening no stream, until the responder accepted
	 * it and its confirmation arrived.
	 */
	rnoise_pair(&T, &c, &ra, &rb, 1, 0, 0);
	a = T.f.side[0].e;
	b = T.f.side[1].e;
	hop(&T, 0);
	hop(&T, 1);
	fab_pump(&T.f, 0);
	ok(ra.sizes[2] == 64 && !engine_authenticated(a) && no_stream(&T, 0),
	    "the initiator sent message 3: not authenticated, no stream "
	    "opens");
	land(&T, 0);
	ok(engine_authenticated(b) && !engine_authenticated(a) &&
	    no_stream(&T, 0), "the responder accepted it; the initiator "
	    "still waits for its confirmation");
	fab_pump(&T.f, 1);
	ok(rb.sizes[3] == 32 && !engine_authenticated(a) && no_stream(&T, 0),
	    "the confirmation is on its way: still nothing");
	land(&T, 1);
	ok(engine_authenticated(a) && engine_error(a) == NULL,
	    "the confirmation checked: the initiator is authenticated");
	ok(stream_flows(&T, 3000, 0x23) && engine_sealed(a) &&
	    seal_dir_count(&ra.seal.tx[0]) == seal_dir_count(&rb.seal.rx[0]) &&
	    seal_dir_count(&rb.seal.tx[0]) == seal_dir_count(&ra.seal.rx[0]),
	    "a sealed stream carries data after it, the confirmation in "
	    "clear");
	rnoise_teardown(&T, &ra, &rb);

	/* A wrong confirmation fails the link, as authentication. */
	rnoise_pair(&T, &c, &ra, &rb, 1, 0, 0);
	rb.spoil = 1;
	settle(&T);
	a = T.f.side[0].e;
	ok(failed_with(a, "authentication failed: wrong confirmation") &&
	    engine_error_kind(a) == ENGINE_ERR_AUTH,
	    "a wrong confirmation fails the initiator's link: %s",
	    err_of(a));
	ok(!engine_authenticated(a) && T.nacc == 0,
	    "... which never authenticated, nor opened a stream");
	rnoise_teardown(&T, &ra, &rb);

	/* Version 6: no confirmation; the initiator is done at message 3. */
	rnoise_pair(&T, &c, &ra, &rb, 1, 0, 6);
	settle(&T);
	ok(engine_version(T.f.side[0].e) == 6 &&
	    engine_authenticated(T.f.side[0].e) &&
	    engine_authenticated(T.f.side[1].e) && rb.sizes[3] == 0,
	    "at version 6 both authenticate after message 3, no confirmation");
	ok(stream_flows(&T, 3000, 0x24) && engine_sealed(T.f.side[0].e) &&
	    seal_dir_count(&ra.seal.tx[0]) == seal_dir_count(&rb.seal.rx[0]) &&
	    seal_dir_count(&rb.seal.tx[0]) == seal_dir_count(&ra.seal.rx[0]),
	    "... and seal as before");
	rnoise_teardown(&T, &ra, &rb);
}

static void
test_handshake(void)
{
	struct engine_conf c = conf(8, 8);
	struct ths ha, hb;
	struct tstream s;
	struct engine_ring tx, rx;
	struct engine_wr w[4];
	struct wire_hello h;
	struct engine *b;
	int held;
	struct t T;

	hs_pair(&T, &c, &ha, &hb, 3, 3, 0);
	engine_hello(T.f.side[0].e, &h);
	ok(h.flags == (WIRE_HELLO_IDENTITY | WIRE_HELLO_SEAL),
	    "a side with an identity says IDENTITY (and SEAL if asked)");
	engine_hello(T.f.side[1].e, &h);
	ok(h.flags == (WIRE_HELLO_IDENTITY | WIRE_HELLO_AESGCM),
	    "... and AESGCM if it can, and no AUTH without a key");
	rings(&T, 0, &s, 4096, 4096, &tx, &rx);
	ok(engine_open(T.f.side[0].e, "t", &tx, &rx, &s) == ENGINE_EDOWN,
	    "no stream opens before the handshake");
	tstream_free(&s);
	/* Message 1 to the responder, which answers with message 2. */
	b = T.f.side[1].e;
	fab_pump(&T.f, 0);
	fab_deliver(&T.f, 0);
	while (fab_complete(&T.f, 1) > 0)
		;
	ok(hb.got[1] == 40 && hb.steps == 1, "the responder read message 1");
	fab_pump(&T.f, 1);
	/* Between its message and the initiator's last it posts nothing. */
	engine_keepalive(b);
	held = engine_take_wrs(b, w, 4) == 0;
	ok(held, "the responder posts nothing while it waits for message 3");
	settle(&T);
	ok(ha.got[2] == 80 && hb.got[3] == 120 && ha.got[4] == 160 &&
	    ha.steps == 3 && hb.steps == 2,
	    "four messages (the confirmation last), each read once");
	ok(engine_authenticated(T.f.side[0].e) && engine_authenticated(b),
	    "both sides authenticated after the handshake");
	ok(stream_flows(&T, 1000, 0x5a), "a stream carries data after it");
	teardown(&T);

	/* Version 6: three messages; the initiator is done at its last. */
	hs_pair(&T, &c, &ha, &hb, 3, 3, 6);
	settle(&T);
	ok(ha.got[2] == 80 && hb.got[3] == 120 && ha.got[4] == 0 &&
	    ha.steps == 2 && hb.steps == 2 &&
	    engine_authenticated(T.f.side[0].e) &&
	    engine_authenticated(T.f.side[1].e) &&
	    stream_flows(&T, 1000, 0x5b),
	    "at version 6 three messages, no confirmation, as before");
	teardown(&T);

	/*
	 * Steps out of version 7's order fail the link: an initiator done at
	 * its message 3, a responder that does not confirm; and KEYS at 6.
	 */
	hs_pair(&T, &c, &ha, &hb, 3, 3, 0);
	ha.v6 = 1;
	settle(&T);
	ok(engine_error_kind(T.f.side[0].e) == ENGINE_ERR_LOCAL &&
	    !engine_authenticated(T.f.side[0].e),
	    "version 7: an initiator's step done at message 3 fails: %s",
	    err_of(T.f.side[0].e));
	teardown(&T);
	hs_pair(&T, &c, &ha, &hb, 3, 3, 0);
	hb.v6 = 1;
	settle(&T);
	ok(engine_error_kind(T.f.side[1].e) == ENGINE_ERR_LOCAL &&
	    !engine_authenticated(T.f.side[0].e),
	    "... a responder's done without its confirmation fails");
	teardown(&T);
	hs_pair(&T, &c, &ha, &hb, 3, 3, 6);
	ha.v6 = 0;
	settle(&T);
	ok(engine_error_kind(T.f.side[0].e) == ENGINE_ERR_LOCAL,
	    "version 6: an initiator's KEYS fails");
	teardown(&T);

	/*
	 * A confirmation before message 3 went (the initiator read message 2
	 * and its answer waits): unexpected.
	 */
	hs_pair(&T, &c, &ha, &hb, 3, 3, 0);
	hop(&T, 0);
	hop(&T, 1);
	{
		uint8_t m[WIRE_MSG_SIZE];
		struct wire_rec r;
		size_t n;

		memset(&r, 0, sizeof(r));
		r.type = WIRE_HANDSHAKE;
		r.hs_len = 160;
		memset(r.hs, 3 + 4, 160);
		n = wire_rec_encode(m, sizeof(m), &r);
		fab_inject(&T.f, 0, FAB_CQE_RECV, m, (uint32_t)n, 0);
		ok(ha.steps == 2 && failed_with(T.f.side[0].e, "unexpected "
		    "HANDSHAKE") && !engine_authenticated(
		    T.f.side[0].e), "a confirmation before message 3 went "
		    "ends the link: %s", err_of(T.f.side[0].e));
	}
	teardown(&T);

	/* A record after a handshake message, in its SEND: a violation. */
	hs_pair(&T, &c, &ha, &hb, 3, 3, 0);
	{
		uint8_t m[WIRE_MSG_SIZE];
		struct wire_rec r;
		size_t n;

		memset(&r, 0, sizeof(r));
		r.type = WIRE_HANDSHAKE;
		r.hs_len = 40;
		memset(r.hs, 3 + 1, 40);
		n = wire_rec_encode(m, sizeof(m), &r);
		memset(&r, 0, sizeof(r));
		r.type = WIRE_KEEPALIVE;
		n += wire_rec_encode(m + n, sizeof(m) - n, &r);
		b = T.f.side[1].e;
		fab_inject(&T.f, 1, FAB_CQE_RECV, m, (uint32_t)n, 0);
		ok(failed_with(b, "records after HANDSHAKE"),
		    "a record after HANDSHAKE in its SEND ends the link: %s",
		    err_of(b));
	}
	teardown(&T);

	/* Another fleet: the responder fails the link at message 1. */
	hs_pair(&T, &c, &ha, &hb, 3, 5, 0);
	settle(&T);
	b = T.f.side[1].e;
	ok(failed_with(b, "authentication failed: not of this "
	    "fleet") && engine_error_kind(b) == ENGINE_ERR_AUTH,
	    "a failed step fails the link: %s",
	    err_of(b));
	ok(!engine_authenticated(T.f.side[0].e),
	    "the initiator is not authenticated");
	teardown(&T);

	/* An identity on one side only: both refuse. */
	hs_pair(&T, &c, &ha, &hb, 3, -1, 0);
	ok(failed_with(T.f.side[0].e, "peer has no identity"),
	    "a side with an identity refuses a peer without: %s",
	    err_of(T.f.side[0].e));
	ok(failed_with(T.f.side[1].e, "this side has none"),
	    "a side without refuses a peer with one");
	teardown(&T);
}

static void
test_auth(void)
{
	struct engine_conf c = conf(8, 8);
	struct tauth ta, tb;
	struct tstream s;
	struct engine_ring tx, rx;
	struct wire_hello h;
	struct wire_rec r;
	uint8_t buf[WIRE_MSG_SIZE];
	size_t n;
	struct t T;

	/* Same key: the handshake runs in order, then streams flow. */
	auth_pair(&T, &c, &ta, &tb, 7, 7);
	engine_hello(T.f.side[0].e, &h);
	ok(h.flags == WIRE_HELLO_AUTH, "an authenticating side says so in "
	    "its hello");
	ok(!engine_authenticated(T.f.side[0].e) &&
	    !engine_authenticated(T.f.side[1].e),
	    "neither side is authenticated before the proofs");
	rings(&T, 0, &s, 4096, 4096, &tx, &rx);
	ok(engine_open(T.f.side[0].e, "t", &tx, &rx, &s) == ENGINE_EDOWN,
	    "no stream opens (no ring is granted) before authentication");
	tstream_free(&s);
	settle(&T);
	ok(engine_authenticated(T.f.side[0].e) &&
	    engine_authenticated(T.f.side[1].e),
	    "both sides authenticated after the exchange");
	ok(ta.proved == 1 && tb.proved == 1 && ta.verified == 1 &&
	    tb.verified == 1, "each side proved once and checked once");
	ok(tb.proved_after_verify == 1,
	    "the responder proved itself only after checking the initiator");
	ok(stream_flows(&T, 1000, 0x5a), "data flows on an authenticated "
	    "link");
	teardown(&T);

	/* Wrong key: the responder fails the link and never proves itself. */
	auth_pair(&T, &c, &ta, &tb, 7, 9);
	settle(&T);
	ok(tb.failed == 1 &&
	    failed_with(T.f.side[1].e, "authentication failed"),
	    "wrong key: the responder ends the link: %s",
	    err_of(T.f.side[1].e));
	ok(engine_error_kind(T.f.side[1].e) == ENGINE_ERR_AUTH,
	    "wrong key: the kind is authentication");
	ok(tb.proved == 0 && !engine_authenticated(T.f.side[0].e),
	    "wrong key: the responder never sends its proof");
	teardown(&T);

	/* One side authenticates, the other does not: both refuse. */
	auth_pair(&T, &c, &ta, &tb, 7, -1);
	ok(failed_with(T.f.side[0].e, "does not authenticate"),
	    "a keyed side refuses a peer without auth: %s",
	    err_of(T.f.side[0].e));
	ok(failed_with(T.f.side[1].e, "no key"),
	    "a keyless side refuses a peer that authenticates");
	teardown(&T);

	/* A peer that skips the proof: OPEN, data or a second AUTH. */
	auth_pair(&T, &c, &ta, &tb, 7, 7);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_OPEN;
	r.ring.addr = 0x10000;
	r.ring.rkey = 1;
	r.ring.size = 4096;
	r.name_len = 1;
	r.name[0] = 't';
	n = wire_rec_encode(buf, sizeof(buf), &r);
	fab_inject(&T.f, 1, FAB_CQE_RECV, buf, (uint32_t)n, 0);
	ok(failed_with(T.f.side[1].e, "OPEN before authentication"),
	    "OPEN before the proof ends the link: %s",
	    err_of(T.f.side[1].e));
	ok(T.nacc == 0, "and no stream was offered to the application");
	teardown(&T);

	auth_pair(&T, &c, &ta, &tb, 7, 7);
	fab_inject(&T.f, 1, FAB_CQE_RECV_IMM, NULL, 0, wire_imm_encode(0, 1));
	ok(failed_with(T.f.side[1].e, "data before authentication"),
	    "data before the proof ends the link");
	teardown(&T);

	auth_pair(&T, &c, &ta, &tb, 7, 7);
	settle(&T);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_AUTH;
	n = wire_rec_encode(buf, sizeof(buf), &r);
	fab_inject(&T.f, 1, FAB_CQE_RECV, buf, (uint32_t)n, 0);
	ok(failed_with(T.f.side[1].e, "unexpected AUTH"),
	    "a second AUTH ends the link");
	teardown(&T);

	/* Without auth, an AUTH record is a violation too. */
	setup(&T, c, c);
	fab_inject(&T.f, 1, FAB_CQE_RECV, buf, (uint32_t)n, 0);
	ok(failed_with(T.f.side[1].e, "unexpected AUTH"),
	    "AUTH on a link without authentication ends it");
	teardown(&T);
}

int
main(void)
{

	if (sodium_init() < 0)
		return (1);
	test_auth();
	test_handshake();
	test_handshake_noise();
	return (tap_done());
}
