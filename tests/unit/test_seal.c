/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * test_seal: lib/crypto/seal (on OpenSSL) against libsodium called directly:
 * round trips, forgeries, replays, the nonce layout, the rekey boundary
 * and restore; each library opening what the other sealed; a pair's
 * two lanes and their keys; and
 * seal_dir_init when OpenSSL runs out of memory.
 */
#include <stdint.h>
#include <string.h>

#include <openssl/crypto.h>
#include <sodium.h>

#include "seal.h"
#include "tap.h"

#define BIG 65536

static uint8_t plain[BIG], buf[BIG], copy[BIG];
static const uint8_t imm[4] = { 0x12, 0x34, 0x56, 0x78 };

static void
key_of(uint8_t k[SEAL_KEY_LEN], uint8_t seed)
{
	int i;

	for (i = 0; i < SEAL_KEY_LEN; i++)
		k[i] = (uint8_t)(seed + 7 * i);
}

/* The nonce of message n, built by hand, as Noise does. */
static void
ref_nonce(enum seal_aead a, uint64_t n, uint8_t nonce[12])
{
	int i;

	memset(nonce, 0, 12);
	for (i = 0; i < 8; i++)
		nonce[a == SEAL_AESGCM ? 11 - i : 4 + i] =
		    (uint8_t)(n >> (8 * i));
}

/* The reference: libsodium with the nonce built by hand. */
static void
ref_seal(enum seal_aead a, const uint8_t k[SEAL_KEY_LEN], uint64_t n,
    uint8_t *m, size_t len, const uint8_t *ad, size_t adlen,
    uint8_t tag[SEAL_TAG_LEN])
{
	uint8_t nonce[12];

	ref_nonce(a, n, nonce);
	if (a == SEAL_AESGCM)
		crypto_aead_aes256gcm_encrypt_detached(m, tag, NULL, m, len,
		    ad, adlen, NULL, nonce, k);
	else
		crypto_aead_chacha20poly1305_ietf_encrypt_detached(m, tag, NULL,
		    m, len, ad, adlen, NULL, nonce, k);
}

static int
ref_open(enum seal_aead a, const uint8_t k[SEAL_KEY_LEN], uint64_t n,
    uint8_t *m, size_t len, const uint8_t *ad, size_t adlen,
    const uint8_t tag[SEAL_TAG_LEN])
{
	uint8_t nonce[12];

	ref_nonce(a, n, nonce);
	if (a == SEAL_AESGCM)
		return (crypto_aead_aes256gcm_decrypt_detached(m, NULL, m, len,
		    tag, ad, adlen, nonce, k));
	return (crypto_aead_chacha20poly1305_ietf_decrypt_detached(m, NULL, m,
	    len, tag, ad, adlen, nonce, k));
}

/* Noise's REKEY, by hand. */
static void
ref_rekey(enum seal_aead a, const uint8_t k[SEAL_KEY_LEN],
    uint8_t next[SEAL_KEY_LEN])
{
	uint8_t tag[SEAL_TAG_LEN];

	memset(next, 0, SEAL_KEY_LEN);
	ref_seal(a, k, UINT64_MAX, next, SEAL_KEY_LEN, NULL, 0, tag);
}

static int
all_zero(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != 0)
			return (0);
	return (1);
}

static void
bail(const char *what)
{
	printf("Bail out! %s\n", what);
	exit(1);
}

static void
test_round_trip(enum seal_aead a)
{
	static const size_t lens[] = { 1, 15, 16, 17, 496, 65536 };
	struct seal_dir tx, rx;
	uint8_t k[SEAL_KEY_LEN], tag[SEAL_TAG_LEN];
	const char *an = seal_aead_name(a);
	size_t i;
	int ad;

	key_of(k, 1);
	seal_dir_init(&tx, a, k);
	seal_dir_init(&rx, a, k);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (ad = 0; ad < 2; ad++) {
			size_t len = lens[i];
			uint64_t n;

			memcpy(buf, plain, len);
			n = seal_dir_seal(&tx, buf, len, ad ? imm : NULL,
			    ad ? sizeof(imm) : 0, tag);
			ok(n == 2 * i + (size_t)ad &&
			    memcmp(buf, plain, len) != 0,
			    "%s: %zu bytes%s sealed in place as message %llu",
			    an, len, ad ? " with ad" : "",
			    (unsigned long long)n);
			ok(seal_dir_open(&rx, buf, len, ad ? imm : NULL,
			    ad ? sizeof(imm) : 0, tag) == 0 &&
			    memcmp(buf, plain, len) == 0,
			    "%s: %zu bytes%s open to the plaintext", an, len,
			    ad ? " with ad" : "");
		}
	ok(seal_dir_count(&tx) == 12 && seal_dir_count(&rx) == 12,
	    "%s: both ends counted 12 messages", an);
	seal_dir_wipe(&tx);
	ok(all_zero((const uint8_t *)&tx, sizeof(tx)), "%s: wipe erases", an);
	seal_dir_wipe(&rx);
}

/* Open a copy of buf; -1 must leave it zeroed and the count unmoved. */
static int
open_copy(struct seal_dir *rx, size_t len, const uint8_t *ad, size_t adlen,
    const uint8_t *tag, int *zeroed)
{
	uint64_t before = seal_dir_count(rx);
	int r;

	memcpy(copy, buf, len);
	r = seal_dir_open(rx, copy, len, ad, adlen, tag);
	*zeroed = all_zero(copy, len);
	if (r != 0 && seal_dir_count(rx) != before)
		return (-2);
	return (r);
}

static void
test_forgery(enum seal_aead a)
{
	struct seal_dir tx, rx;
	uint8_t k[SEAL_KEY_LEN], tag[SEAL_TAG_LEN], t2[SEAL_TAG_LEN];
	uint8_t ad2[sizeof(imm)];
	const char *an = seal_aead_name(a);
	size_t len = 496;
	int z;

	key_of(k, 2);
	seal_dir_init(&tx, a, k);
	seal_dir_init(&rx, a, k);
	memcpy(buf, plain, len);
	seal_dir_seal(&tx, buf, len, imm, sizeof(imm), tag);

	buf[100] ^= 0x04;
	ok(open_copy(&rx, len, imm, sizeof(imm), tag, &z) == -1 && z,
	    "%s: a flipped payload bit fails, zeroed, count kept", an);
	buf[100] ^= 0x04;
	memcpy(t2, tag, sizeof(t2));
	t2[15] ^= 0x80;
	ok(open_copy(&rx, len, imm, sizeof(imm), t2, &z) == -1 && z,
	    "%s: a flipped tag bit fails, zeroed, count kept", an);
	memcpy(ad2, imm, sizeof(ad2));
	ad2[0] ^= 0x01;
	ok(open_copy(&rx, len, ad2, sizeof(ad2), tag, &z) == -1 && z,
	    "%s: a flipped ad bit fails, zeroed, count kept", an);
	ok(open_copy(&rx, len, NULL, 0, tag, &z) == -1,
	    "%s: the ad left out fails", an);
	ok(open_copy(&rx, len, imm, sizeof(imm), tag, &z) == 0 &&
	    memcmp(copy, plain, len) == 0 && seal_dir_count(&rx) == 1,
	    "%s: the genuine message still opens after the forgeries", an);
	ok(open_copy(&rx, len, imm, sizeof(imm), tag, &z) == -1,
	    "%s: the same message opened twice (a replay) fails", an);
	seal_dir_wipe(&tx);
	seal_dir_wipe(&rx);
}

static void
test_order(enum seal_aead a)
{
	struct seal_dir tx, rx;
	uint8_t k[SEAL_KEY_LEN], t0[SEAL_TAG_LEN], t1[SEAL_TAG_LEN];
	uint8_t m0[64], m1[64];
	const char *an = seal_aead_name(a);

	key_of(k, 3);
	seal_dir_init(&tx, a, k);
	seal_dir_init(&rx, a, k);
	memcpy(m0, plain, sizeof(m0));
	memcpy(m1, plain + 64, sizeof(m1));
	seal_dir_seal(&tx, m0, sizeof(m0), NULL, 0, t0);
	seal_dir_seal(&tx, m1, sizeof(m1), NULL, 0, t1);
	memcpy(buf, m1, sizeof(m1));
	ok(seal_dir_open(&rx, buf, sizeof(m1), NULL, 0, t1) == -1,
	    "%s: message 1 before message 0 fails", an);
	ok(seal_dir_open(&rx, m0, sizeof(m0), NULL, 0, t0) == 0 &&
	    seal_dir_open(&rx, m1, sizeof(m1), NULL, 0, t1) == 0 &&
	    memcmp(m0, plain, sizeof(m0)) == 0 &&
	    memcmp(m1, plain + 64, sizeof(m1)) == 0,
	    "%s: then 0 and 1 in order open", an);
	seal_dir_wipe(&tx);
	seal_dir_wipe(&rx);
}

/* Message n against the reference with the hand-built nonce. */
static void
test_nonce(enum seal_aead a)
{
	struct seal_dir tx;
	uint8_t k[SEAL_KEY_LEN], tag[SEAL_TAG_LEN], rtag[SEAL_TAG_LEN];
	const char *an = seal_aead_name(a);
	uint64_t n = UINT64_C(0x0102030405060708);

	key_of(k, 4);
	seal_dir_init(&tx, a, k);
	seal_dir_set_count_for_test(&tx, n);
	memcpy(buf, plain, 100);
	memcpy(copy, plain, 100);
	ok(seal_dir_seal(&tx, buf, 100, imm, sizeof(imm), tag) == n,
	    "%s: sealed as message %#llx", an, (unsigned long long)n);
	ref_seal(a, k, n, copy, 100, imm, sizeof(imm), rtag);
	ok(memcmp(buf, copy, 100) == 0 && memcmp(tag, rtag, sizeof(tag)) == 0,
	    "%s: nonce is 4 zero bytes and n %s-endian", an,
	    a == SEAL_AESGCM ? "big" : "little");
	seal_dir_wipe(&tx);
}

/*
 * Messages 2^20-2 .. 2^20+1: the first two under k0, the next two under
 * REKEY(k0), each against the reference.
 */
static void
test_rekey(enum seal_aead a)
{
	struct seal_dir tx, rx, stale;
	uint8_t k0[SEAL_KEY_LEN], k1[SEAL_KEY_LEN];
	uint8_t m[4][32], tags[4][SEAL_TAG_LEN], rtag[SEAL_TAG_LEN];
	const char *an = seal_aead_name(a);
	uint64_t base = SEAL_REKEY_EVERY - 2;
	int i, same, opened;

	key_of(k0, 5);
	ref_rekey(a, k0, k1);
	seal_dir_init(&tx, a, k0);
	seal_dir_set_count_for_test(&tx, base);
	seal_dir_init(&rx, a, k0);
	seal_dir_set_count_for_test(&rx, base);
	same = 1;
	for (i = 0; i < 4; i++) {
		memcpy(m[i], plain + 32 * i, 32);
		memcpy(copy, plain + 32 * i, 32);
		seal_dir_seal(&tx, m[i], 32, imm, sizeof(imm), tags[i]);
		ref_seal(a, i < 2 ? k0 : k1, base + (uint64_t)i, copy, 32, imm,
		    sizeof(imm), rtag);
		if (memcmp(m[i], copy, 32) != 0 ||
		    memcmp(tags[i], rtag, SEAL_TAG_LEN) != 0)
			same = 0;
	}
	ok(same, "%s: the key changes to REKEY(k) exactly at message 2^20", an);

	/* A receiver that still holds k0 at 2^20 cannot open it. */
	seal_dir_init(&stale, a, k0);
	seal_dir_set_count_for_test(&stale, SEAL_REKEY_EVERY);
	memcpy(buf, m[2], 32);
	ok(seal_dir_open(&stale, buf, 32, imm, sizeof(imm), tags[2]) == -1,
	    "%s: a receiver that did not rekey fails at 2^20", an);

	opened = 1;
	for (i = 0; i < 4; i++)
		if (seal_dir_open(&rx, m[i], 32, imm, sizeof(imm),
		    tags[i]) != 0 || memcmp(m[i], plain + 32 * i, 32) != 0)
			opened = 0;
	ok(opened && seal_dir_count(&rx) == base + 4,
	    "%s: the receiver opens across the boundary", an);
	seal_dir_wipe(&tx);
	seal_dir_wipe(&rx);
	seal_dir_wipe(&stale);
}

static int
restore_ok(const struct seal_dir *tx, const uint8_t *sealed, size_t len,
    uint64_t n, const uint8_t *tag, const uint8_t *want)
{
	memcpy(copy, sealed, len);
	return (seal_dir_restore(tx, copy, len, imm, sizeof(imm), n,
	    tag) == 0 && memcmp(copy, want, len) == 0);
}

static int
restore_fails(const struct seal_dir *tx, const uint8_t *sealed, size_t len,
    uint64_t n, const uint8_t *tag)
{
	memcpy(copy, sealed, len);
	return (seal_dir_restore(tx, copy, len, imm, sizeof(imm), n,
	    tag) == -1);
}

/*
 * Message a is the last of epoch 0, b the first of epoch 1; then a whole
 * epoch of empty messages takes the sender to epoch 2.
 */
static void
test_restore(enum seal_aead a)
{
	struct seal_dir tx;
	uint8_t k[SEAL_KEY_LEN], ta[SEAL_TAG_LEN], tb[SEAL_TAG_LEN];
	uint8_t ma[496], mb[496], t[SEAL_TAG_LEN];
	const char *an = seal_aead_name(a);
	uint64_t na, nb, i;

	key_of(k, 6);
	seal_dir_init(&tx, a, k);
	seal_dir_set_count_for_test(&tx, SEAL_REKEY_EVERY - 1);
	memcpy(ma, plain, sizeof(ma));
	memcpy(mb, plain + 1000, sizeof(mb));
	na = seal_dir_seal(&tx, ma, sizeof(ma), imm, sizeof(imm), ta);
	ok(restore_ok(&tx, ma, sizeof(ma), na, ta, plain),
	    "%s: restore of the current epoch's message", an);
	ok(restore_fails(&tx, ma, sizeof(ma), na + 1, ta),
	    "%s: restore of a message not sealed yet fails", an);
	nb = seal_dir_seal(&tx, mb, sizeof(mb), imm, sizeof(imm), tb);
	ok(restore_ok(&tx, mb, sizeof(mb), nb, tb, plain + 1000),
	    "%s: restore after the rekey (current epoch)", an);
	ok(restore_ok(&tx, ma, sizeof(ma), na, ta, plain),
	    "%s: restore of the previous epoch's message", an);
	ok(restore_fails(&tx, ma, sizeof(ma), nb, ta),
	    "%s: restore under the wrong number fails", an);
	for (i = 0; i < SEAL_REKEY_EVERY; i++)
		seal_dir_seal(&tx, buf, 0, NULL, 0, t);
	ok(seal_dir_count(&tx) == 2 * SEAL_REKEY_EVERY + 1,
	    "%s: a whole epoch later, at epoch 2", an);
	ok(restore_ok(&tx, mb, sizeof(mb), nb, tb, plain + 1000),
	    "%s: epoch 1's message (now the previous) restores", an);
	ok(restore_fails(&tx, ma, sizeof(ma), na, ta),
	    "%s: epoch 0's message (two back) fails", an);
	seal_dir_wipe(&tx);
}

/*
 * The two ends of one direction, each initialised from the key (as the
 * peers of a link are), stay in step across a rekey, and wiping the
 * receiving end leaves the sending one whole (restore of the previous
 * epoch included).
 */
static void
test_two_ends(enum seal_aead a)
{
	struct seal_dir tx, rx;
	uint8_t k[SEAL_KEY_LEN], ta[SEAL_TAG_LEN];
	const char *an = seal_aead_name(a);
	int i, same = 1;

	key_of(k, 10);
	if (seal_dir_init(&tx, a, k) != 0 || seal_dir_init(&rx, a, k) != 0)
		bail("seal_dir_init failed");
	seal_dir_set_count_for_test(&tx, SEAL_REKEY_EVERY - 1);
	seal_dir_set_count_for_test(&rx, SEAL_REKEY_EVERY - 1);
	for (i = 0; i < 3; i++) {
		memcpy(buf, plain + 7 * i, 200);
		seal_dir_seal(&tx, buf, 200, imm, sizeof(imm), ta);
		same &= seal_dir_open(&rx, buf, 200, imm, sizeof(imm),
		    ta) == 0 && memcmp(buf, plain + 7 * i, 200) == 0;
	}
	ok(same && seal_dir_count(&rx) == seal_dir_count(&tx),
	    "%s: two ends from one key open what each other seal, across a "
	    "rekey", an);
	seal_dir_wipe(&rx);
	memcpy(buf, plain, 100);
	seal_dir_seal(&tx, buf, 100, imm, sizeof(imm), ta);
	ok(seal_dir_restore(&tx, buf, 100, imm, sizeof(imm),
	    seal_dir_count(&tx) - 1, ta) == 0 && memcmp(buf, plain, 100) == 0,
	    "%s: the sending end outlives the other's wipe", an);
	seal_dir_wipe(&tx);
}

/* Lengths 1..520 one by one, then around each power of two to 65536. */
#define CROSS_ALL	520
#define CROSS_N		(CROSS_ALL + 3 * 7)

static size_t
cross_len(int i)
{
	size_t p;

	if (i < CROSS_ALL)
		return ((size_t)i + 1);
	i -= CROSS_ALL;
	p = ((size_t)1 << (10 + i / 3)) - 1 + (size_t)(i % 3);
	return (p > BIG ? BIG : p);
}


/*
 * lib/crypto/seal seals, libsodium opens, and the reverse: messages of every
 * length across the boundary of epochs 0 and 1, which comes after ${at}
 * of them, half with ad, each under the key and nonce libsodium is given
 * by hand.  (Lengths up to SEAL_SMALL take another way in seal than those
 * above, so the boundary comes once among each.)
 */
static void
test_cross(enum seal_aead a, int at)
{
	struct seal_dir tx, rx;
	uint8_t k0[SEAL_KEY_LEN], k1[SEAL_KEY_LEN], tag[SEAL_TAG_LEN];
	const char *an = seal_aead_name(a);
	uint64_t base = SEAL_REKEY_EVERY - (uint64_t)at, n;
	int i, ours = 1, theirs = 1;

	key_of(k0, 8);
	ref_rekey(a, k0, k1);
	if (seal_dir_init(&tx, a, k0) != 0 || seal_dir_init(&rx, a, k0) != 0)
		bail("seal_dir_init failed");
	seal_dir_set_count_for_test(&tx, base);
	seal_dir_set_count_for_test(&rx, base);
	for (i = 0; i < CROSS_N; i++) {
		size_t len = cross_len(i), adlen = (size_t)(i % 2) * sizeof(imm);
		const uint8_t *k = base + (uint64_t)i < SEAL_REKEY_EVERY ? k0 :
		    k1;
		/* Plaintexts from different places: no two messages alike. */
		const uint8_t *p1 = plain + (size_t)i % (BIG - len + 1);
		const uint8_t *p2 = plain + (BIG - len) - (p1 - plain);

		memcpy(buf, p1, len);
		n = seal_dir_seal(&tx, buf, len, imm, adlen, tag);
		if (n != base + (uint64_t)i || ref_open(a, k, n, buf, len, imm,
		    adlen, tag) != 0 || memcmp(buf, p1, len) != 0)
			ours = 0;
		memcpy(buf, p2, len);
		ref_seal(a, k, n, buf, len, imm, adlen, tag);
		if (seal_dir_open(&rx, buf, len, imm, adlen, tag) != 0 ||
		    memcmp(buf, p2, len) != 0)
			theirs = 0;
	}
	ok(ours, "%s: libsodium opens what lib/crypto/seal sealed, %d lengths 1..%d "
	    "across a rekey after length %zu", an, CROSS_N, BIG,
	    cross_len(at - 1));
	ok(theirs, "%s: lib/crypto/seal opens what libsodium sealed, %d lengths "
	    "1..%d across a rekey after length %zu", an, CROSS_N, BIG,
	    cross_len(at - 1));
	seal_dir_wipe(&tx);
	seal_dir_wipe(&rx);
}

/* OpenSSL's allocator here: it counts, and the fail_at-th allocation
 * from now fails. */
static int fail_at, allocs;

static int
t_fails(void)
{
	allocs++;
	return (fail_at > 0 && --fail_at == 0);
}

/*
 * A pair's lanes: lane 0 seals under the handshake's key, lane 1 under the
 * key the page gives (ENCRYPT(k, nonce 2^64-2, 32 zero bytes), by hand
 * with libsodium), each counting from 0; what one pair seals on a lane
 * the pair with the keys swapped opens on that lane and no other.
 */
static void
test_lanes(enum seal_aead a)
{
	struct seal_pair p, q;
	uint8_t kt[SEAL_KEY_LEN], kr[SEAL_KEY_LEN], lk[SEAL_KEY_LEN];
	uint8_t tag[SEAL_TAG_LEN], t0[SEAL_TAG_LEN], t1[SEAL_TAG_LEN];
	uint8_t b0[64], b1[64];
	const char *an = seal_aead_name(a);
	int lane1_ref, lane0_ref, differ, cross;

	key_of(kt, 11);
	key_of(kr, 12);
	memset(&p, 0xff, sizeof(p));
	if (seal_pair_init(&p, a, kt, kr) != 0 ||
	    seal_pair_init(&q, a, kr, kt) != 0)
		bail("seal_pair_init failed");
	memset(lk, 0, sizeof(lk));
	ref_seal(a, kt, UINT64_MAX - 1, lk, sizeof(lk), NULL, 0, tag);
	/* The same message as message 0 of each lane. */
	memcpy(b0, plain, sizeof(b0));
	memcpy(b1, plain, sizeof(b1));
	ok(seal_pair_seal(&p, 0, b0, sizeof(b0), imm, 4, t0) == 0 &&
	    seal_pair_seal(&p, 1, b1, sizeof(b1), imm, 4, t1) == 0,
	    "%s: each lane counts its own messages from 0", an);
	memcpy(copy, plain, sizeof(b0));
	ref_seal(a, kt, 0, copy, sizeof(b0), imm, 4, tag);
	lane0_ref = memcmp(copy, b0, sizeof(b0)) == 0 &&
	    memcmp(tag, t0, sizeof(tag)) == 0;
	memcpy(copy, plain, sizeof(b1));
	ref_seal(a, lk, 0, copy, sizeof(b1), imm, 4, tag);
	lane1_ref = memcmp(copy, b1, sizeof(b1)) == 0 &&
	    memcmp(tag, t1, sizeof(tag)) == 0;
	differ = memcmp(b0, b1, sizeof(b0)) != 0 &&
	    memcmp(lk, kt, sizeof(lk)) != 0;
	ok(lane0_ref && lane1_ref && differ, "%s: lane 0 under the "
	    "handshake's key, lane 1 under ENCRYPT(k, 2^64-2, zeros): "
	    "message 0 of each differs", an);
	/* Each lane's message opens on its own lane at the peer only. */
	memcpy(copy, b1, sizeof(b1));
	cross = seal_pair_open(&q, 0, copy, sizeof(b1), imm, 4, t1) != 0;
	ok(cross && seal_pair_open(&q, 1, b1, sizeof(b1), imm, 4, t1) == 0 &&
	    memcmp(b1, plain, sizeof(b1)) == 0 &&
	    seal_pair_open(&q, 0, b0, sizeof(b0), imm, 4, t0) == 0 &&
	    memcmp(b0, plain, sizeof(b0)) == 0, "%s: the peer opens lane 1's "
	    "message on lane 1, not on lane 0, and lane 0's on lane 0", an);
	/* The receive side's lane-1 key is derived from its own key. */
	memset(lk, 0, sizeof(lk));
	ref_seal(a, kr, UINT64_MAX - 1, lk, sizeof(lk), NULL, 0, tag);
	memcpy(b1, plain, sizeof(b1));
	ref_seal(a, lk, 0, b1, sizeof(b1), NULL, 0, t1);
	ok(seal_pair_open(&p, 1, b1, sizeof(b1), NULL, 0, t1) == 0 &&
	    memcmp(b1, plain, sizeof(b1)) == 0, "%s: lane 1 opens under the "
	    "key derived from the receive key", an);
	seal_pair_wipe(&p);
	seal_pair_wipe(&q);
	ok(all_zero((const uint8_t *)&p, sizeof(p)), "%s: a wiped pair is "
	    "all zero", an);
}

static void *
t_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return (t_fails() ? NULL : malloc(n));
}

static void *
t_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return (t_fails() ? NULL : realloc(p, n));
}

static void
t_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	free(p);
}

/* tx seals a message and restores it. */
static int
sealed_restores(struct seal_dir *tx)
{
	uint8_t tag[SEAL_TAG_LEN];
	uint64_t n;

	memcpy(buf, plain, 1000);
	n = seal_dir_seal(tx, buf, 1000, imm, sizeof(imm), tag);
	return (memcmp(buf, plain, 1000) != 0 && seal_dir_restore(tx, buf,
	    1000, imm, sizeof(imm), n, tag) == 0 &&
	    memcmp(buf, plain, 1000) == 0);
}

/*
 * Each allocation of seal_dir_init failing in turn: -1 and a wiped
 * direction (leaks are the sanitizers' and valgrind's to find), or, where
 * OpenSSL does without that allocation, a direction that works; the last
 * one (the second context's) must fail it.
 */
static void
test_no_memory(enum seal_aead a)
{
	struct seal_dir tx, rx;
	uint8_t k[SEAL_KEY_LEN], tag[SEAL_TAG_LEN];
	const char *an = seal_aead_name(a);
	int i, n, r = -1, failed = 0, wiped = 1, works = 1;

	key_of(k, 9);
	allocs = 0;
	if (seal_dir_init(&tx, a, k) != 0)
		bail("seal_dir_init failed");
	seal_dir_wipe(&tx);
	n = allocs;
	for (i = 1; i <= n; i++) {
		fail_at = i;
		r = seal_dir_init(&tx, a, k);
		fail_at = 0;
		failed += r != 0;
		if (r != 0)
			wiped &= all_zero((const uint8_t *)&tx, sizeof(tx));
		else
			works &= sealed_restores(&tx);
		seal_dir_wipe(&tx);
	}
	ok(n > 0 && r == -1 && wiped, "%s: seal_dir_init without memory fails, "
	    "wiped (%d of its %d allocations failing fail it)", an, failed, n);
	ok(works, "%s: where it did not fail, the direction works", an);
	if (seal_dir_init(&tx, a, k) != 0 || seal_dir_init(&rx, a, k) != 0)
		bail("seal_dir_init failed");
	memcpy(buf, plain, 1000);
	seal_dir_seal(&tx, buf, 1000, imm, sizeof(imm), tag);
	ok(seal_dir_open(&rx, buf, 1000, imm, sizeof(imm), tag) == 0 &&
	    memcmp(buf, plain, 1000) == 0, "%s: then it seals", an);
	seal_dir_wipe(&tx);
	seal_dir_wipe(&rx);
}

int
main(void)
{
	static const enum seal_aead aeads[] = { SEAL_CHACHAPOLY, SEAL_AESGCM };
	size_t i;

	/* Before OpenSSL allocates anything, or it keeps its own. */
	if (!CRYPTO_set_mem_functions(t_malloc, t_realloc, t_free) ||
	    sodium_init() < 0)
		return (1);
	for (i = 0; i < BIG; i++)
		plain[i] = (uint8_t)(i * 31 + (i >> 8));
	ok(strcmp(seal_aead_name(SEAL_AESGCM), "aes-256-gcm") == 0 &&
	    strcmp(seal_aead_name(SEAL_CHACHAPOLY), "chacha20-poly1305") == 0,
	    "AEAD names");
	for (i = 0; i < sizeof(aeads) / sizeof(aeads[0]); i++) {
		if (aeads[i] == SEAL_AESGCM && !seal_aesgcm_available()) {
			printf("# no AES-NI here: aes-256-gcm skipped\n");
			continue;
		}
		test_round_trip(aeads[i]);
		test_forgery(aeads[i]);
		test_order(aeads[i]);
		test_nonce(aeads[i]);
		test_rekey(aeads[i]);
		test_restore(aeads[i]);
		test_cross(aeads[i], SEAL_SMALL / 2);
		test_cross(aeads[i], CROSS_N / 2);
		test_two_ends(aeads[i]);
		test_lanes(aeads[i]);
		test_no_memory(aeads[i]);
	}
	return (tap_done());
}
