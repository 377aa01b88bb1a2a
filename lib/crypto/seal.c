/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "seal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <sodium.h>

_Static_assert(SEAL_TAG_LEN == crypto_aead_aes256gcm_ABYTES &&
    SEAL_TAG_LEN == crypto_aead_chacha20poly1305_ietf_ABYTES, "tag length");
_Static_assert(SEAL_KEY_LEN == crypto_aead_aes256gcm_KEYBYTES &&
    SEAL_KEY_LEN == crypto_aead_chacha20poly1305_ietf_KEYBYTES, "key length");
_Static_assert(SEAL_GCM_STATE == sizeof(crypto_aead_aes256gcm_state) &&
    _Alignof(crypto_aead_aes256gcm_state) <= 16, "libsodium's GCM state");

/* 96-bit nonces: OpenSSL's default for both AEADs (checked at init). */
#define NONCE_LEN 12
/* Noise reserves the largest nonce for REKEY; the next is the lane key's. */
#define REKEY_NONCE UINT64_MAX
#define LANE_NONCE (UINT64_MAX - 1)
/* EVP counts bytes in an int: a longer message goes in pieces. */
#define PIECE ((size_t)1 << 30)

int
seal_aesgcm_available(void)
{
	return (crypto_aead_aes256gcm_is_available() ? 1 : 0);
}

int
seal_init(void)
{
	static const uint8_t key[SEAL_KEY_LEN];
	struct seal_dir d;
	int ok = 0;

	memset(&d, 0, sizeof(d));
	if (seal_dir_init(&d, SEAL_CHACHAPOLY, key) == 0) {
		seal_dir_wipe(&d);
		ok = 1;
	}
	if (seal_aesgcm_available() && seal_dir_init(&d, SEAL_AESGCM,
	    key) == 0) {
		seal_dir_wipe(&d);
		ok = 1;
	}
	return (ok ? 0 : -1);
}

const char *
seal_aead_name(enum seal_aead a)
{
	switch (a) {
	case SEAL_CHACHAPOLY:
		return ("chacha20-poly1305");
	case SEAL_AESGCM:
		return ("aes-256-gcm");
	}
	return ("?");
}

/* Noise's nonce encoding: ChaChaPoly little-endian, AESGCM big-endian. */
static void
nonce_of(enum seal_aead a, uint64_t n, uint8_t nonce[NONCE_LEN])
{
	int i;

	memset(nonce, 0, 4);
	for (i = 0; i < 8; i++) {
		uint8_t b = (uint8_t)(n >> (8 * i));

		if (a == SEAL_AESGCM)
			nonce[NONCE_LEN - 1 - i] = b;
		else
			nonce[4 + i] = b;
	}
}

/*
 * A context for AEAD a, keyed with key (NULL: keyed later, at a rekey);
 * NULL when OpenSSL cannot make it.
 */
static EVP_CIPHER_CTX *
ctx_new(enum seal_aead a, const uint8_t *key)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();

	if (c != NULL && EVP_EncryptInit_ex(c, a == SEAL_AESGCM ?
	    EVP_aes_256_gcm() : EVP_chacha20_poly1305(), NULL, key,
	    NULL) == 1 && EVP_CIPHER_CTX_get_iv_length(c) == NONCE_LEN)
		return (c);
	EVP_CIPHER_CTX_free(c);
	ERR_clear_error();
	return (NULL);
}

/*
 * Start message n on context c, to seal (enc) or to open, and run the ad
 * and then the len bytes of buf through it, in place.  0, or -1 if
 * OpenSSL refuses.
 */
static int
ctx_run(EVP_CIPHER_CTX *c, enum seal_aead a, uint64_t n, int enc,
    uint8_t *buf, size_t len, const uint8_t *ad, size_t adlen)
{
	uint8_t nonce[NONCE_LEN];
	int outl, piece;

	nonce_of(a, n, nonce);
	if (EVP_CipherInit_ex(c, NULL, NULL, NULL, nonce, enc) != 1 ||
	    adlen > INT_MAX || (adlen > 0 && EVP_CipherUpdate(c, NULL, &outl,
	    ad, (int)adlen) != 1))
		return (-1);
	for (; len > 0; buf += piece, len -= (size_t)piece) {
		piece = (int)(len < PIECE ? len : PIECE);
		if (EVP_CipherUpdate(c, buf, &outl, buf, piece) != 1 ||
		    outl != piece)
			return (-1);
	}
	return (0);
}

static void
aead_seal(enum seal_aead a, EVP_CIPHER_CTX *c, uint64_t n, uint8_t *buf,
    size_t len, const uint8_t *ad, size_t adlen, uint8_t tag[SEAL_TAG_LEN])
{
	uint8_t none[16];
	int outl;

	/* A context keyed once needs no memory to run: see seal.h. */
	if (ctx_run(c, a, n, 1, buf, len, ad, adlen) != 0 ||
	    EVP_EncryptFinal_ex(c, none, &outl) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, SEAL_TAG_LEN,
	    tag) != 1)
		abort();
}

/* -1 (buf zeroed) unless the tag verifies. */
static int
aead_open(enum seal_aead a, EVP_CIPHER_CTX *c, uint64_t n, uint8_t *buf,
    size_t len, const uint8_t *ad, size_t adlen,
    const uint8_t tag[SEAL_TAG_LEN])
{
	uint8_t none[16];
	int outl;

	if (ctx_run(c, a, n, 0, buf, len, ad, adlen) == 0 &&
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, SEAL_TAG_LEN,
	    (void *)(uintptr_t)tag) == 1 &&
	    EVP_DecryptFinal_ex(c, none, &outl) == 1)
		return (0);
	sodium_memzero(buf, len);
	ERR_clear_error();
	return (-1);
}

/* libsodium's precomputed AES-256-GCM key of d's current epoch. */
static crypto_aead_aes256gcm_state *
gcm_of(struct seal_dir *d)
{
	return ((crypto_aead_aes256gcm_state *)(void *)d->small);
}

/* Whether a message of len bytes goes through libsodium (seal.h). */
static int
by_sodium(size_t len)
{
	return (len <= SEAL_SMALL);
}

/* Give libsodium key as d's current epoch's. */
static void
small_key(struct seal_dir *d, const uint8_t key[SEAL_KEY_LEN])
{
	if (d->aead == SEAL_AESGCM)
		(void)crypto_aead_aes256gcm_beforenm(gcm_of(d), key);
	else
		memcpy(d->small, key, SEAL_KEY_LEN);
}

/* Seal message n of d (at most SEAL_SMALL bytes) through libsodium. */
static void
small_seal(struct seal_dir *d, uint64_t n, uint8_t *buf, size_t len,
    const uint8_t *ad, size_t adlen, uint8_t tag[SEAL_TAG_LEN])
{
	uint8_t nonce[NONCE_LEN];
	int rc;

	nonce_of(d->aead, n, nonce);
	if (d->aead == SEAL_AESGCM)
		rc = crypto_aead_aes256gcm_encrypt_detached_afternm(buf, tag,
		    NULL, buf, len, ad, adlen, NULL, nonce, gcm_of(d));
	else
		rc = crypto_aead_chacha20poly1305_ietf_encrypt_detached(buf,
		    tag, NULL, buf, len, ad, adlen, NULL, nonce, d->small);
	if (rc != 0)
		abort();
}

/* Open message n of d through libsodium: 0, or -1 (buf wiped). */
static int
small_open(struct seal_dir *d, uint64_t n, uint8_t *buf, size_t len,
    const uint8_t *ad, size_t adlen, const uint8_t tag[SEAL_TAG_LEN])
{
	uint8_t nonce[NONCE_LEN];
	int rc;

	nonce_of(d->aead, n, nonce);
	if (d->aead == SEAL_AESGCM)
		rc = crypto_aead_aes256gcm_decrypt_detached_afternm(buf, NULL,
		    buf, len, tag, ad, adlen, nonce, gcm_of(d));
	else
		rc = crypto_aead_chacha20poly1305_ietf_decrypt_detached(buf,
		    NULL, buf, len, tag, ad, adlen, nonce, d->small);
	if (rc != 0) {
		sodium_memzero(buf, len);
		return (-1);
	}
	return (0);
}

/*
 * Move to the next epoch: the current key becomes the previous one, and
 * the previous one's context takes the next key.
 */
static void
rekey(struct seal_dir *d)
{
	uint8_t next[SEAL_KEY_LEN], tag[SEAL_TAG_LEN];
	EVP_CIPHER_CTX *c = d->prev;

	memset(next, 0, sizeof(next));
	aead_seal(d->aead, d->cur, REKEY_NONCE, next, sizeof(next), NULL, 0,
	    tag);
	/* A new key in a context made for it needs no memory either. */
	if (EVP_EncryptInit_ex(c, NULL, NULL, next, NULL) != 1)
		abort();
	small_key(d, next);
	d->prev = d->cur;
	d->cur = c;
	d->has_prev = 1;
	d->epoch++;
	sodium_memzero(next, sizeof(next));
	sodium_memzero(tag, sizeof(tag));
}

/* The context of message n, the next one: its epoch is cur's or the one
 * after. */
static EVP_CIPHER_CTX *
ctx_of_next(struct seal_dir *d, uint64_t n)
{
	/* Nonces 2^64-2 and 2^64-1 are taken; n never gets there. */
	if (n >= LANE_NONCE)
		abort();
	if (n / SEAL_REKEY_EVERY != d->epoch)
		rekey(d);
	return (d->cur);
}

int
seal_dir_init(struct seal_dir *d, enum seal_aead a,
    const uint8_t key[SEAL_KEY_LEN])
{
	memset(d, 0, sizeof(*d));
	d->aead = a;
	/* Both now: a rekey then cannot run out of memory. */
	if ((d->cur = ctx_new(a, key)) == NULL ||
	    (d->prev = ctx_new(a, NULL)) == NULL) {
		seal_dir_wipe(d);
		return (-1);
	}
	small_key(d, key);
	return (0);
}

uint64_t
seal_dir_seal(struct seal_dir *d, uint8_t *buf, size_t len,
    const uint8_t *ad, size_t adlen, uint8_t tag[SEAL_TAG_LEN])
{
	uint64_t n = d->n;
	EVP_CIPHER_CTX *c = ctx_of_next(d, n);

	if (by_sodium(len))
		small_seal(d, n, buf, len, ad, adlen, tag);
	else
		aead_seal(d->aead, c, n, buf, len, ad, adlen, tag);
	d->n = n + 1;
	return (n);
}

int
seal_dir_open(struct seal_dir *d, uint8_t *buf, size_t len,
    const uint8_t *ad, size_t adlen, const uint8_t tag[SEAL_TAG_LEN])
{
	uint64_t n = d->n;
	EVP_CIPHER_CTX *c = ctx_of_next(d, n);

	if (by_sodium(len) ? small_open(d, n, buf, len, ad, adlen, tag) != 0 :
	    aead_open(d->aead, c, n, buf, len, ad, adlen, tag) != 0)
		return (-1);
	d->n = n + 1;
	return (0);
}

int
seal_dir_restore(const struct seal_dir *d, uint8_t *buf, size_t len,
    const uint8_t *ad, size_t adlen, uint64_t n,
    const uint8_t tag[SEAL_TAG_LEN])
{
	uint64_t j = n / SEAL_REKEY_EVERY;
	EVP_CIPHER_CTX *c;

	if (n >= d->n)
		return (-1);
	if (j == d->epoch)
		c = d->cur;
	else if (d->has_prev && j + 1 == d->epoch)
		c = d->prev;
	else
		return (-1);
	/* The sealing context opens too: each message sets its direction. */
	return (aead_open(d->aead, c, n, buf, len, ad, adlen, tag));
}

uint64_t
seal_dir_count(const struct seal_dir *d)
{
	return (d->n);
}

void
seal_dir_wipe(struct seal_dir *d)
{
	/* Freeing a context wipes its key (OPENSSL_clear_free). */
	EVP_CIPHER_CTX_free(d->cur);
	EVP_CIPHER_CTX_free(d->prev);
	sodium_memzero(d, sizeof(*d));
}

void
seal_dir_set_count_for_test(struct seal_dir *d, uint64_t n)
{
	d->n = n;
	d->epoch = n / SEAL_REKEY_EVERY;
	d->has_prev = 0;
}

/*
 * Lane 1's key from lane 0's key k: the first 32 bytes of ENCRYPT(k,
 * nonce 2^64-2, no associated data, 32 zero bytes), as REKEY but at a
 * nonce of its own.  -1 if OpenSSL cannot make the context.
 */
static int
lane_key(enum seal_aead a, const uint8_t key[SEAL_KEY_LEN],
    uint8_t out[SEAL_KEY_LEN])
{
	uint8_t tag[SEAL_TAG_LEN];
	EVP_CIPHER_CTX *c = ctx_new(a, key);

	if (c == NULL)
		return (-1);
	memset(out, 0, SEAL_KEY_LEN);
	aead_seal(a, c, LANE_NONCE, out, SEAL_KEY_LEN, NULL, 0, tag);
	EVP_CIPHER_CTX_free(c);
	sodium_memzero(tag, sizeof(tag));
	return (0);
}

int
seal_pair_init(struct seal_pair *p, enum seal_aead a,
    const uint8_t ktx[SEAL_KEY_LEN], const uint8_t krx[SEAL_KEY_LEN])
{
	uint8_t ltx[SEAL_KEY_LEN], lrx[SEAL_KEY_LEN];
	int rc = -1;

	memset(p, 0, sizeof(*p));
	if (lane_key(a, ktx, ltx) == 0 && lane_key(a, krx, lrx) == 0 &&
	    seal_dir_init(&p->tx[0], a, ktx) == 0 &&
	    seal_dir_init(&p->rx[0], a, krx) == 0 &&
	    seal_dir_init(&p->tx[1], a, ltx) == 0 &&
	    seal_dir_init(&p->rx[1], a, lrx) == 0)
		rc = 0;
	else
		seal_pair_wipe(p);
	sodium_memzero(ltx, sizeof(ltx));
	sodium_memzero(lrx, sizeof(lrx));
	return (rc);
}

uint64_t
seal_pair_seal(void *arg, unsigned lane, uint8_t *buf, uint32_t len,
    const uint8_t *ad, size_t adlen, uint8_t tag[SEAL_TAG_LEN])
{
	struct seal_pair *p = arg;

	return (seal_dir_seal(&p->tx[lane], buf, len, ad, adlen, tag));
}

int
seal_pair_open(void *arg, unsigned lane, uint8_t *buf, uint32_t len,
    const uint8_t *ad, size_t adlen, const uint8_t tag[SEAL_TAG_LEN])
{
	struct seal_pair *p = arg;

	return (seal_dir_open(&p->rx[lane], buf, len, ad, adlen, tag));
}

int
seal_pair_restore(void *arg, uint8_t *buf, uint32_t len, const uint8_t *ad,
    size_t adlen, uint64_t n, const uint8_t tag[SEAL_TAG_LEN])
{
	struct seal_pair *p = arg;

	return (seal_dir_restore(&p->tx[0], buf, len, ad, adlen, n, tag));
}

uint8_t *
seal_pair_ptr(void *arg, uint64_t addr)
{

	(void)arg;
	return ((uint8_t *)(uintptr_t)addr);
}

void
seal_pair_wipe(struct seal_pair *p)
{

	unsigned i;

	for (i = 0; i < SEAL_LANES; i++) {
		seal_dir_wipe(&p->tx[i]);
		seal_dir_wipe(&p->rx[i]);
	}
}
