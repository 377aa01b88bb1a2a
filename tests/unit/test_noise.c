/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/crypto/noise: the published test vectors of both patterns,
 * every message byte for byte in both roles (tests/unit/noise-vectors.txt,
 * flynn/noise's, whose notice it carries), then a hostile peer: flipped
 * bits, replays, a different prologue or psk, low-order keys, truncated
 * and oversized messages, calls out of turn; and secrets wiped.  Message
 * 3 read in two steps (noise_read_head, then noise_read) as in one, and
 * its X25519 operations counted: a responder that tries many psks does
 * its Diffie-Hellman once.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "noise.h"
#include "tap.h"
#include "x25519_count.h"

#define NMSG	5	/* a vector: 3 handshake messages, 2 transport */
#define HEXMAX	NOISE_MSG_MAX

/* One vector of noise-vectors.txt, its values decoded. */
struct vec {
	char name[64];
	uint8_t is[32], rs[32], ie[32], re[32], psk[32], pro[HEXMAX];
	size_t prolen;
	int has_psk;
	uint8_t pay[NMSG][HEXMAX], ct[NMSG][HEXMAX];
	size_t paylen[NMSG], ctlen[NMSG];
};

/* Decode hex into at most max bytes; its length, or -1. */
static long
unhex(const char *h, uint8_t *out, size_t max)
{
	size_t i, n = strlen(h);
	unsigned v;

	if (n % 2 != 0 || n / 2 > max)
		return (-1);
	for (i = 0; i < n / 2; i++) {
		if (sscanf(h + 2 * i, "%2x", &v) != 1)
			return (-1);
		out[i] = (uint8_t)v;
	}
	return ((long)(n / 2));
}

/* A vector's key=value line into v; -1 for one we do not know. */
static int
vec_line(struct vec *v, const char *k, const char *val)
{
	long n = 0;
	int m;
	char what[16];

	if (strcmp(k, "init_static") == 0)
		n = unhex(val, v->is, 32);
	else if (strcmp(k, "resp_static") == 0)
		n = unhex(val, v->rs, 32);
	else if (strcmp(k, "gen_init_ephemeral") == 0)
		n = unhex(val, v->ie, 32);
	else if (strcmp(k, "gen_resp_ephemeral") == 0)
		n = unhex(val, v->re, 32);
	else if (strcmp(k, "preshared_key") == 0) {
		n = unhex(val, v->psk, 32);
		v->has_psk = 1;
	} else if (strcmp(k, "prologue") == 0) {
		n = unhex(val, v->pro, sizeof(v->pro));
		v->prolen = (size_t)n;
	} else if (sscanf(k, "msg_%d_%15s", &m, what) == 2 && m >= 0 &&
	    m < NMSG && strcmp(what, "payload") == 0) {
		n = unhex(val, v->pay[m], HEXMAX);
		v->paylen[m] = (size_t)n;
	} else if (sscanf(k, "msg_%d_%15s", &m, what) == 2 && m >= 0 &&
	    m < NMSG && strcmp(what, "ciphertext") == 0) {
		n = unhex(val, v->ct[m], HEXMAX);
		v->ctlen[m] = (size_t)n;
	} else
		return (-1);
	return (n < 0 ? -1 : 0);
}

/* A handshake's two sides and the messages they made. */
struct pair {
	struct noise_hs i, r;
	uint8_t msg[3][NOISE_MSG_MAX];
	size_t len[3];
};

/* Message m (0..2): its writer writes it (payload p), its reader reads. */
static int
step(struct pair *pr, int m, const uint8_t *p, size_t plen)
{
	struct noise_hs *w = m % 2 ? &pr->r : &pr->i;
	struct noise_hs *rd = m % 2 ? &pr->i : &pr->r;
	uint8_t got[NOISE_MSG_MAX];
	size_t glen;

	if (noise_write(w, p, plen, pr->msg[m], sizeof(pr->msg[m]),
	    &pr->len[m]) != 0)
		return (-1);
	if (noise_read(rd, pr->msg[m], pr->len[m], got, sizeof(got),
	    &glen) != 0)
		return (-1);
	return (glen == plen && (plen == 0 || memcmp(got, p, plen) == 0) ?
	    0 : -1);
}

/* Check one vector: every message, the keys each side learnt, Split(). */
static void
run_vector(const struct vec *v, int k)
{
	struct pair pr;
	uint8_t ipub[32], rpub[32], c1[2][32], c2[2][32], h[2][64], k3[32];
	uint8_t out[HEXMAX + NOISE_TAG_LEN], back[HEXMAX];
	const uint8_t *psk = v->has_psk ? v->psk : NULL;
	int m, bytes = 1, turns = 1;

	noise_public(v->is, ipub);
	noise_public(v->rs, rpub);
	ok(noise_init(&pr.i, 1, v->pro, v->prolen, v->is, ipub, psk) == 0 &&
	    noise_init(&pr.r, 0, v->pro, v->prolen, v->rs, rpub, psk) == 0,
	    "vector %d (%s): both sides start", k, v->name);
	noise_set_ephemeral(&pr.i, v->ie);
	noise_set_ephemeral(&pr.r, v->re);
	for (m = 0; m < 3; m++) {
		turns &= noise_my_turn(m % 2 ? &pr.r : &pr.i) &&
		    !noise_my_turn(m % 2 ? &pr.i : &pr.r);
		ok(step(&pr, m, v->pay[m], v->paylen[m]) == 0 &&
		    pr.len[m] == v->ctlen[m] &&
		    memcmp(pr.msg[m], v->ct[m], v->ctlen[m]) == 0,
		    "vector %d: handshake message %d (by the %s) byte for byte,"
		    " and read", k, m + 1, m % 2 ? "responder" : "initiator");
	}
	ok(turns && noise_done(&pr.i) && noise_done(&pr.r) &&
	    !noise_my_turn(&pr.i) && !noise_my_turn(&pr.r),
	    "vector %d: turns alternate, then both are done", k);
	if (!noise_done(&pr.i) || !noise_done(&pr.r)) {
		ok(0, "vector %d: the handshake ends, to be split", k);
		noise_wipe(&pr.i);
		noise_wipe(&pr.r);
		return;
	}
	ok(noise_remote_static(&pr.i) != NULL &&
	    memcmp(noise_remote_static(&pr.i), rpub, 32) == 0 &&
	    noise_remote_static(&pr.r) != NULL &&
	    memcmp(noise_remote_static(&pr.r), ipub, 32) == 0,
	    "vector %d: each side learnt the other's static key", k);
	/* A third key asked for on one side changes neither transport key:
	 * the vector's messages below check them. */
	noise_split(&pr.i, c1[0], c2[0], k3, h[0]);
	noise_split(&pr.r, c1[1], c2[1], NULL, h[1]);
	sodium_memzero(k3, sizeof(k3));
	ok(memcmp(c1[0], c1[1], 32) == 0 && memcmp(c2[0], c2[1], 32) == 0 &&
	    memcmp(h[0], h[1], 64) == 0 && memcmp(c1[0], c2[0], 32) != 0,
	    "vector %d: both sides split to the same two keys and hash", k);
	for (m = 3; m < NMSG; m++) {
		struct noise_cs w = { .n = 0 }, r = { .n = 0 };

		memcpy(w.k, m == 3 ? c1[0] : c2[1], 32);
		memcpy(r.k, m == 3 ? c1[1] : c2[0], 32);
		bytes &= noise_cs_encrypt(&w, NULL, 0, v->pay[m], v->paylen[m],
		    out) == 0 && v->ctlen[m] == v->paylen[m] + NOISE_TAG_LEN &&
		    memcmp(out, v->ct[m], v->ctlen[m]) == 0;
		bytes &= noise_cs_decrypt(&r, NULL, 0, out, v->ctlen[m],
		    back) == 0 && memcmp(back, v->pay[m], v->paylen[m]) == 0;
		bytes &= w.n == 1 && r.n == 1;
	}
	ok(bytes, "vector %d: transport messages both ways byte for byte", k);
}

/* Run every vector of the file; how many. */
static int
vectors(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *eq;
	size_t cap = 0;
	struct vec *v = calloc(1, sizeof(*v));
	int n = 0, bad = 0;

	if (f == NULL || v == NULL)
		return (0);
	while (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '#' || (eq = strchr(line, '=')) == NULL)
			continue;
		*eq = '\0';
		if (strcmp(line, "handshake") == 0) {
			memset(v, 0, sizeof(*v));
			snprintf(v->name, sizeof(v->name), "%s", eq + 1);
		} else if (vec_line(v, line, eq + 1) != 0) {
			bad = 1;
		} else if (strcmp(line, "msg_4_ciphertext") == 0) {
			run_vector(v, n++);
		}
	}
	ok(!bad, "every line of %s is understood", path);
	free(line);
	free(v);
	fclose(f);
	return (n);
}

static const uint8_t prologue[] = "rstream-noise-v1 and two hellos";
static uint8_t skey_i[32], skey_r[32], psk_a[32], psk_b[32];

/* Start a fresh pair (random ephemerals), XX or psk3. */
static void
start(struct pair *pr, const uint8_t *psk)
{
	if (noise_init(&pr->i, 1, prologue, sizeof(prologue), skey_i, NULL,
	    psk) != 0 ||
	    noise_init(&pr->r, 0, prologue, sizeof(prologue), skey_r, NULL,
	    psk) != 0)
		abort();
}

/* Is every byte of hs but its state zero, as a wipe leaves it? */
static int
wiped(const struct noise_hs *hs)
{
	struct noise_hs z;

	memset(&z, 0, sizeof(z));
	z.msg = hs->msg;
	return (memcmp(&z, hs, sizeof(z)) == 0 && !noise_done(hs) &&
	    !noise_my_turn(hs) && noise_remote_static(hs) == NULL);
}

/*
 * Each message, each byte with one bit flipped (bit i % 8 of byte i):
 * the read fails.  XX's message 1 is an ephemeral key in the clear and
 * nothing authenticates it yet: a flip there surfaces when the
 * initiator reads message 2.
 */
static void
test_flips(const uint8_t *psk, const char *what)
{
	struct pair pr, t;
	uint8_t bent[NOISE_MSG_MAX], got[NOISE_MSG_MAX], m2[NOISE_MSG_MAX];
	size_t i, glen, l2;
	int m, all;

	for (m = 0; m < 3; m++) {
		start(&pr, psk);
		for (int j = 0; j < m; j++)
			if (step(&pr, j, NULL, 0) != 0)
				abort();
		t = pr;
		if (noise_write(m % 2 ? &t.r : &t.i, NULL, 0, bent,
		    sizeof(bent), &pr.len[m]) != 0)
			abort();
		all = 1;
		for (i = 0; i < pr.len[m]; i++) {
			struct noise_hs rd = m % 2 ? t.i : t.r;
			struct noise_hs wr = t.i;

			bent[i] ^= (uint8_t)(1u << (i % 8));
			if (m == 0 && psk == NULL) {
				/* The responder answers; the initiator
				 * must refuse the answer. */
				all &= noise_read(&rd, bent, pr.len[m], got,
				    sizeof(got), &glen) == 0 &&
				    noise_write(&rd, NULL, 0, m2, sizeof(m2),
				    &l2) == 0 &&
				    noise_read(&wr, m2, l2, got, sizeof(got),
				    &glen) != 0;
			} else {
				all &= noise_read(&rd, bent, pr.len[m], got,
				    sizeof(got), &glen) != 0 && wiped(&rd);
			}
			bent[i] ^= (uint8_t)(1u << (i % 8));
			noise_wipe(&rd);
			noise_wipe(&wr);
		}
		ok(all, "%s message %d: each of its %zu bytes with a bit "
		    "flipped fails%s", what, m + 1, pr.len[m],
		    m == 0 && psk == NULL ? " (at message 2)" : "");
		noise_wipe(&t.i);
		noise_wipe(&t.r);
		noise_wipe(&pr.i);
		noise_wipe(&pr.r);
	}
}

/* Messages of one handshake replayed into another fail. */
static void
test_replay(const uint8_t *psk, const char *what)
{
	struct pair a, b;
	uint8_t got[NOISE_MSG_MAX];
	size_t glen;
	int m;

	start(&a, psk);
	for (m = 0; m < 3; m++)
		if (step(&a, m, NULL, 0) != 0)
			abort();
	start(&b, psk);
	ok(step(&b, 0, NULL, 0) == 0 && noise_write(&b.r, NULL, 0, b.msg[1],
	    sizeof(b.msg[1]), &b.len[1]) == 0 &&
	    noise_read(&b.i, a.msg[1], a.len[1], got, sizeof(got),
	    &glen) != 0,
	    "%s: message 2 of another handshake is refused", what);
	start(&b, psk);
	ok(step(&b, 0, NULL, 0) == 0 && step(&b, 1, NULL, 0) == 0 &&
	    noise_read(&b.r, a.msg[2], a.len[2], got, sizeof(got),
	    &glen) != 0,
	    "%s: message 3 of another handshake is refused", what);
	/* Message 1 replayed reads (XX cannot tell), but what follows
	 * from the old handshake does not. */
	start(&b, psk);
	ok(noise_read(&b.r, a.msg[0], a.len[0], got, sizeof(got),
	    &glen) == 0 && noise_write(&b.r, NULL, 0, b.msg[1],
	    sizeof(b.msg[1]), &b.len[1]) == 0 &&
	    noise_read(&b.r, a.msg[2], a.len[2], got, sizeof(got),
	    &glen) != 0,
	    "%s: a replayed message 1 leads nowhere: message 3 is refused",
	    what);
	noise_wipe(&a.i);
	noise_wipe(&a.r);
	noise_wipe(&b.i);
	noise_wipe(&b.r);
}

/* The prologue binds: a different one fails at message 2 (XX) or 1. */
static void
test_prologue(void)
{
	struct pair pr;
	static const uint8_t other[] = "rstream-noise-v1 and two hellas";

	start(&pr, NULL);
	noise_init(&pr.r, 0, other, sizeof(other), skey_r, NULL, NULL);
	ok(step(&pr, 0, NULL, 0) == 0 && step(&pr, 1, NULL, 0) != 0 &&
	    wiped(&pr.i),
	    "XX: a different prologue fails at message 2");
	start(&pr, psk_a);
	noise_init(&pr.r, 0, other, sizeof(other), skey_r, NULL, psk_a);
	ok(step(&pr, 0, NULL, 0) != 0,
	    "XXpsk3: a different prologue fails at message 1");
	noise_wipe(&pr.i);
	noise_wipe(&pr.r);
}

/* The psk: a wrong one fails at message 3; the responder may pick. */
static void
test_psk(void)
{
	struct pair pr, t;
	size_t plen;

	start(&pr, psk_a);
	noise_init(&pr.r, 0, prologue, sizeof(prologue), skey_r, NULL, psk_b);
	ok(step(&pr, 0, NULL, 0) == 0 && step(&pr, 1, NULL, 0) == 0 &&
	    step(&pr, 2, NULL, 0) != 0 && wiped(&pr.r),
	    "XXpsk3: a wrong psk fails at message 3");

	/* A responder that holds several psks tries each on its own copy
	 * of the handshake when message 3 arrives. */
	start(&pr, psk_a);
	noise_init(&pr.r, 0, prologue, sizeof(prologue), skey_r, NULL, psk_b);
	if (step(&pr, 0, NULL, 0) != 0 || step(&pr, 1, NULL, 0) != 0 ||
	    noise_write(&pr.i, NULL, 0, pr.msg[2], sizeof(pr.msg[2]),
	    &pr.len[2]) != 0)
		abort();
	t = pr;
	ok(noise_set_psk(&t.r, psk_b) == 0 &&
	    noise_read(&t.r, pr.msg[2], pr.len[2], NULL, 0, &plen) != 0,
	    "XXpsk3: a copy given the wrong psk refuses message 3");
	ok(noise_set_psk(&pr.r, psk_a) == 0 &&
	    noise_read(&pr.r, pr.msg[2], pr.len[2], NULL, 0, &plen) == 0,
	    "XXpsk3: the responder, given the right psk, reads message 3");
	ok(noise_set_psk(&pr.r, psk_b) != 0 && noise_done(&pr.r),
	    "XXpsk3: the psk cannot change once used");
	start(&pr, NULL);
	ok(noise_set_psk(&pr.r, psk_a) != 0,
	    "XX: a handshake started without a psk takes none");
	noise_wipe(&pr.i);
	noise_wipe(&pr.r);
	noise_wipe(&t.i);
}

/*
 * Message 3 in two steps: its head (s, se) gives the initiator's key, then
 * the rest (psk, payload) reads with the same keys and payload as a read
 * in one go; a wrong psk after the head fails; a short message or a
 * second head fails cleanly.  Each try of a psk after the head costs no
 * X25519 operation.
 */
static void
test_head(const uint8_t *psk, const char *what)
{
	static const uint8_t pay[] = "after the head";
	struct pair pr;
	struct noise_hs one, two, t;
	uint8_t ipub[32], got[2][NOISE_MSG_MAX], k[2][3][NOISE_KEY_LEN];
	uint8_t h[2][NOISE_HASH_LEN];
	size_t glen[2], cut, len;
	unsigned long dh;
	int i, all;

	start(&pr, psk);
	noise_public(skey_i, ipub);
	if (step(&pr, 0, NULL, 0) != 0 || step(&pr, 1, NULL, 0) != 0 ||
	    noise_write(&pr.i, pay, sizeof(pay), pr.msg[2], sizeof(pr.msg[2]),
	    &pr.len[2]) != 0)
		abort();
	len = pr.len[2];
	one = two = pr.r;
	ok(noise_read(&one, pr.msg[2], len, got[0], sizeof(got[0]),
	    &glen[0]) == 0, "%s head: message 3 reads in one go", what);
	dh = x25519_ops;
	all = noise_remote_static(&two) == NULL &&
	    noise_read_head(&two, pr.msg[2], len) == 0;
	dh = x25519_ops - dh;
	ok(all && noise_remote_static(&two) != NULL &&
	    memcmp(noise_remote_static(&two), ipub, 32) == 0 &&
	    !noise_done(&two) && !noise_my_turn(&two) && dh == 1,
	    "%s head: its head gives the initiator's static key with one "
	    "X25519 operation (%lu), and the message is not read yet", what,
	    dh);
	t = two;
	ok(noise_read_head(&t, pr.msg[2], len) != 0 && wiped(&t),
	    "%s head: a second head of the same message fails", what);
	t = two;
	ok(noise_read(&t, pr.msg[2], 20, got[1], sizeof(got[1]),
	    &glen[1]) != 0 && wiped(&t),
	    "%s head: the rest of a message shorter than its head fails", what);
	if (psk != NULL) {
		t = two;
		ok(noise_set_psk(&t, psk_b) == 0 &&
		    noise_read(&t, pr.msg[2], len, got[1], sizeof(got[1]),
		    &glen[1]) != 0 && wiped(&t),
		    "%s head: a wrong psk after the head fails", what);
		dh = x25519_ops;
		all = 1;
		for (i = 0; i < 128; i++) {
			t = two;
			all &= noise_set_psk(&t, psk_b) == 0 &&
			    noise_read(&t, pr.msg[2], len, got[1],
			    sizeof(got[1]), &glen[1]) != 0;
		}
		t = two;
		all &= noise_set_psk(&t, psk) == 0 && noise_read(&t, pr.msg[2],
		    len, got[1], sizeof(got[1]), &glen[1]) == 0;
		dh = x25519_ops - dh;
		ok(all && dh == 0, "%s head: 128 wrong psks and the right one "
		    "tried after the head, %lu X25519 operations", what, dh);
		noise_wipe(&t);
	}
	ok(noise_read(&two, pr.msg[2], len, got[1], sizeof(got[1]),
	    &glen[1]) == 0 && noise_done(&two),
	    "%s head: the rest of message 3 reads after its head", what);
	noise_split(&one, k[0][0], k[0][1], k[0][2], h[0]);
	noise_split(&two, k[1][0], k[1][1], k[1][2], h[1]);
	ok(glen[0] == sizeof(pay) && glen[1] == sizeof(pay) &&
	    memcmp(got[0], pay, sizeof(pay)) == 0 &&
	    memcmp(got[1], pay, sizeof(pay)) == 0 &&
	    memcmp(k[0], k[1], sizeof(k[0])) == 0 &&
	    memcmp(h[0], h[1], sizeof(h[0])) == 0,
	    "%s head: in two steps, the same payload, keys and hash as in one",
	    what);

	all = 1;
	for (cut = 0; cut < len - sizeof(pay); cut++) {
		t = pr.r;
		all &= noise_read_head(&t, pr.msg[2], cut) == 0 ? 0 : wiped(&t);
	}
	t = pr.r;
	all &= noise_read_head(&t, pr.msg[2], NOISE_MSG_MAX + 1) != 0 &&
	    wiped(&t);
	ok(all, "%s head: a head of a message shorter than %zu bytes, or past "
	    "NOISE_MSG_MAX, fails and wipes", what, len - sizeof(pay));
	t = pr.i;
	ok(noise_read_head(&t, pr.msg[2], len) != 0 && wiped(&t),
	    "%s head: a head out of turn fails", what);
	noise_wipe(&pr.i);
	noise_wipe(&pr.r);
}

/*
 * A peer's key that is all zero or of low order makes every DH with it
 * all zero: the handshake fails instead of mixing a known secret in.
 */
static void
test_bad_keys(void)
{
	/* A point of order 8 (libsodium's own list of them). */
	static const uint8_t low[32] = {
		0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56,
		0xe3, 0xfa, 0xf1, 0x9f, 0xc4, 0x6a, 0xda, 0x09, 0x8d, 0xeb,
		0x9c, 0x32, 0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16, 0x5f, 0x49,
		0xb8, 0x00,
	};
	static const uint8_t zero[32];
	const uint8_t *bad[2] = { zero, low };
	const char *name[2] = { "an all-zero", "a low-order" };
	struct pair pr;
	uint8_t m2[NOISE_MSG_MAX], got[NOISE_MSG_MAX];
	size_t l2, glen;
	int b;

	for (b = 0; b < 2; b++) {
		start(&pr, NULL);
		memcpy(pr.r.s_pub, bad[b], 32);	/* a responder that lies */
		ok(step(&pr, 0, NULL, 0) == 0 && step(&pr, 1, NULL, 0) != 0 &&
		    wiped(&pr.i),
		    "%s responder static key fails message 2", name[b]);
		start(&pr, psk_a);
		memcpy(pr.i.s_pub, bad[b], 32);
		ok(step(&pr, 0, NULL, 0) == 0 && step(&pr, 1, NULL, 0) == 0 &&
		    step(&pr, 2, NULL, 0) != 0 && wiped(&pr.r),
		    "%s initiator static key fails message 3", name[b]);
		start(&pr, NULL);
		ok(noise_read(&pr.r, bad[b], 32, got, sizeof(got), &glen) == 0 &&
		    noise_write(&pr.r, NULL, 0, m2, sizeof(m2), &l2) != 0,
		    "%s ephemeral key in message 1: the responder cannot "
		    "answer", name[b]);
		noise_wipe(&pr.i);
		noise_wipe(&pr.r);
	}
}

/* Truncated and oversized messages fail, as do messages that do not fit. */
static void
test_sizes(const uint8_t *psk, const char *what)
{
	static const uint8_t pay[NOISE_MSG_MAX];
	struct pair pr;
	struct noise_hs *w, *r, before, t;
	uint8_t msg[2 * NOISE_MSG_MAX], got[2 * NOISE_MSG_MAX];
	size_t len, glen, cut;
	int m, all;

	start(&pr, psk);
	for (m = 0; m < 3; m++) {
		w = m % 2 ? &pr.r : &pr.i;
		r = m % 2 ? &pr.i : &pr.r;
		before = *w;
		if (noise_write(w, NULL, 0, msg, sizeof(msg), &len) != 0)
			abort();
		t = before;
		ok(noise_write(&t, NULL, 0, got, len - 1, &glen) != 0 &&
		    wiped(&t), "%s message %d: a write into %zu bytes, one "
		    "short, fails", what, m + 1, len - 1);
		t = before;
		ok(noise_write(&t, pay, NOISE_MSG_MAX - len + 1, got,
		    sizeof(got), &glen) != 0,
		    "%s message %d: a payload that takes it past NOISE_MSG_MAX "
		    "fails", what, m + 1);
		noise_wipe(&before);
		all = 1;
		for (cut = 0; cut < len; cut++) {
			t = *r;
			all &= noise_read(&t, msg, cut, got, sizeof(got),
			    &glen) != 0 && wiped(&t);
		}
		ok(all, "%s message %d: each truncation of its %zu bytes fails",
		    what, m + 1, len);
		msg[len] = 0;
		t = *r;
		ok(noise_read(&t, msg, len + 1, got, 0, &glen) != 0,
		    "%s message %d: one byte more than the payload's room fails",
		    what, m + 1);
		t = *r;
		ok(noise_read(&t, msg, NOISE_MSG_MAX + 1, got, sizeof(got),
		    &glen) != 0,
		    "%s message %d: a message past NOISE_MSG_MAX fails", what,
		    m + 1);
		ok(noise_read(r, msg, len, got, 0, &glen) == 0 && glen == 0,
		    "%s message %d: the message itself reads", what, m + 1);
	}
	noise_wipe(&t);
	noise_wipe(&pr.i);
	noise_wipe(&pr.r);
}

/* Out of turn, after the end, after a failure: -1, and dead. */
static void
test_turns(void)
{
	struct pair pr;
	uint8_t msg[NOISE_MSG_MAX], got[NOISE_MSG_MAX];
	size_t len, glen;

	start(&pr, NULL);
	ok(noise_my_turn(&pr.i) && !noise_my_turn(&pr.r),
	    "the initiator writes first");
	ok(noise_write(&pr.r, NULL, 0, msg, sizeof(msg), &len) != 0 &&
	    wiped(&pr.r), "a responder's write before message 1 fails");
	ok(noise_read(&pr.i, msg, 32, got, sizeof(got), &glen) != 0 &&
	    wiped(&pr.i), "an initiator's read before message 1 fails");
	start(&pr, NULL);
	ok(step(&pr, 0, NULL, 0) == 0 && noise_write(&pr.i, NULL, 0, msg,
	    sizeof(msg), &len) != 0 && wiped(&pr.i),
	    "an initiator's second write in a row fails");
	start(&pr, NULL);
	ok(step(&pr, 0, NULL, 0) == 0 && step(&pr, 1, NULL, 0) == 0 &&
	    noise_read(&pr.r, pr.msg[1], pr.len[1], got, sizeof(got),
	    &glen) != 0 && wiped(&pr.r),
	    "a responder reading its own message 2 fails");
	start(&pr, NULL);
	ok(step(&pr, 0, NULL, 0) == 0 && step(&pr, 1, NULL, 0) == 0 &&
	    step(&pr, 2, NULL, 0) == 0 && noise_done(&pr.i) &&
	    noise_read(&pr.r, pr.msg[2], pr.len[2], got, sizeof(got),
	    &glen) != 0 && wiped(&pr.r),
	    "a read once done (message 3 again) fails");
	ok(noise_write(&pr.i, NULL, 0, msg, sizeof(msg), &len) != 0 &&
	    wiped(&pr.i), "a write once done fails");
	start(&pr, NULL);
	ok(step(&pr, 0, NULL, 0) == 0 && step(&pr, 1, NULL, 0) == 0 &&
	    step(&pr, 2, NULL, 0) == 0 &&
	    noise_read(&pr.i, pr.msg[1], pr.len[1], got, sizeof(got),
	    &glen) != 0 && wiped(&pr.i),
	    "an initiator's read once done fails");
	start(&pr, NULL);
	ok(noise_read(&pr.i, msg, 32, got, sizeof(got), &glen) != 0 &&
	    noise_write(&pr.i, NULL, 0, msg, sizeof(msg), &len) != 0,
	    "after a failure even the right call fails: the state is gone");
	noise_wipe(&pr.r);
}

/* CipherState and REKEY, beyond what the vectors show. */
static void
test_cs(void)
{
	struct noise_cs a, b;
	uint8_t buf[64 + NOISE_TAG_LEN], want[64], k[32];
	uint8_t iv[crypto_aead_chacha20poly1305_IETF_NPUBBYTES];
	static const uint8_t ad[4] = { 1, 2, 3, 4 }, bad_ad[4] = { 1, 2, 3, 5 };

	randombytes_buf(a.k, sizeof(a.k));
	memcpy(b.k, a.k, sizeof(b.k));
	a.n = b.n = 7;
	memset(buf, 'x', 64);
	ok(noise_cs_encrypt(&a, ad, 4, buf, 64, buf) == 0 && a.n == 8 &&
	    noise_cs_decrypt(&b, bad_ad, 4, buf, 64 + NOISE_TAG_LEN,
	    want) != 0 && b.n == 7 &&
	    noise_cs_decrypt(&b, ad, 4, buf, 64 + NOISE_TAG_LEN, buf) == 0 &&
	    b.n == 8 && buf[0] == 'x' && buf[63] == 'x',
	    "in place, with ad; a wrong ad fails and uses no nonce");
	ok(noise_cs_decrypt(&b, NULL, 0, buf, NOISE_TAG_LEN - 1, buf) != 0,
	    "shorter than a tag fails");
	a.n = UINT64_MAX - 1;
	ok(noise_cs_encrypt(&a, NULL, 0, buf, 0, buf) == 0 &&
	    noise_cs_encrypt(&a, NULL, 0, buf, 0, buf) != 0,
	    "nonce 2^64 - 2 is the last one");
	/* Nonce 2^64 - 1 by hand: 4 zero bytes and 8 of 0xff. */
	memset(iv, 0xff, sizeof(iv));
	memset(iv, 0, 4);
	crypto_aead_chacha20poly1305_ietf_encrypt(buf, NULL, buf, 0, NULL, 0,
	    NULL, iv, b.k);
	b.n = UINT64_MAX;
	ok(noise_cs_decrypt(&b, NULL, 0, buf, NOISE_TAG_LEN, buf) != 0,
	    "nonce 2^64 - 1 is never used to open either");

	/* REKEY by hand. */
	memcpy(k, a.k, 32);
	memset(want, 0, 32);
	crypto_aead_chacha20poly1305_ietf_encrypt(want, NULL, want, 32, NULL,
	    0, NULL, iv, k);
	noise_rekey(k);
	ok(memcmp(k, want, 32) == 0 && memcmp(k, a.k, 32) != 0,
	    "REKEY(k) is k's encryption of 32 zero bytes at nonce 2^64 - 1");
}

/* Keys from noise_keygen, random ephemerals: a handshake that agrees. */
static void
test_random(void)
{
	struct pair pr;
	uint8_t priv[32], pub[32], pub2[32], first[NOISE_MSG_MAX];
	uint8_t c1[32], c2[32], h[64], d1[32], d2[32], dh[64];
	uint8_t k3[32], e3[32];

	noise_keygen(priv, pub);
	ok(noise_public(priv, pub2) == 0 && memcmp(pub, pub2, 32) == 0,
	    "noise_public gives noise_keygen's public key");
	noise_keygen(priv, pub2);
	ok(memcmp(pub, pub2, 32) != 0, "two new keys differ");
	sodium_memzero(priv, sizeof(priv));
	start(&pr, psk_a);
	ok(step(&pr, 0, NULL, 0) == 0 && step(&pr, 1, NULL, 0) == 0 &&
	    step(&pr, 2, NULL, 0) == 0, "a handshake with fresh ephemerals");
	memcpy(first, pr.msg[0], 32);
	noise_split(&pr.i, c1, c2, k3, h);
	noise_split(&pr.r, d1, d2, e3, dh);
	ok(memcmp(c1, d1, 32) == 0 && memcmp(c2, d2, 32) == 0 &&
	    memcmp(h, dh, 64) == 0 && wiped(&pr.i) && wiped(&pr.r),
	    "it splits alike, and the split wipes both states");
	ok(memcmp(k3, e3, 32) == 0 && memcmp(k3, c1, 32) != 0 &&
	    memcmp(k3, c2, 32) != 0,
	    "both sides get the same third key, neither transport key");
	start(&pr, psk_a);
	ok(step(&pr, 0, NULL, 0) == 0 && memcmp(first, pr.msg[0], 32) != 0,
	    "the next handshake's ephemeral is another");
	noise_wipe(&pr.i);
	ok(wiped(&pr.i), "noise_wipe leaves nothing");
	noise_wipe(&pr.r);
}

int
main(void)
{
	uint8_t pub[32];

	x25519_count_init();
	if (sodium_init() < 0)
		return (1);
	noise_keygen(skey_i, pub);
	noise_keygen(skey_r, pub);
	randombytes_buf(psk_a, sizeof(psk_a));
	randombytes_buf(psk_b, sizeof(psk_b));
	ok(vectors(NOISE_VECTORS) == 8, "all 8 vectors ran");
	test_turns();
	test_cs();
	test_flips(NULL, "XX");
	test_flips(psk_a, "XXpsk3");
	test_replay(NULL, "XX");
	test_replay(psk_a, "XXpsk3");
	test_prologue();
	test_psk();
	test_head(NULL, "XX");
	test_head(psk_a, "XXpsk3");
	test_bad_keys();
	test_sizes(NULL, "XX");
	test_sizes(psk_a, "XXpsk3");
	test_random();
	return (tap_done());
}
