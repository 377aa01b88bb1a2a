/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "seal.h"

#include <stdlib.h>
#include <string.h>

#include <sodium.h>

_Static_assert(sizeof(crypto_aead_aes256gcm_state) <=
    sizeof(((struct seal_key *)0)->aes), "seal_key holds the AES state");
_Static_assert(SEAL_TAG_LEN == crypto_aead_aes256gcm_ABYTES &&
    SEAL_TAG_LEN == crypto_aead_chacha20poly1305_ietf_ABYTES, "tag length");
_Static_assert(SEAL_KEY_LEN == crypto_aead_aes256gcm_KEYBYTES &&
    SEAL_KEY_LEN == crypto_aead_chacha20poly1305_ietf_KEYBYTES, "key length");
_Static_assert(crypto_aead_aes256gcm_NPUBBYTES == 12 &&
    crypto_aead_chacha20poly1305_ietf_NPUBBYTES == 12, "96-bit nonces");

#define NONCE_LEN 12
/* Noise reserves the largest nonce for REKEY. */
#define REKEY_NONCE UINT64_MAX

int
seal_aesgcm_available(void)
{
	return (crypto_aead_aes256gcm_is_available() ? 1 : 0);
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

static void
key_set(struct seal_key *k, enum seal_aead a, const uint8_t key[SEAL_KEY_LEN])
{
	memcpy(k->key, key, SEAL_KEY_LEN);
	if (a == SEAL_AESGCM)
		crypto_aead_aes256gcm_beforenm(
		    (crypto_aead_aes256gcm_state *)(void *)k->aes, key);
}

static void
aead_seal(enum seal_aead a, const struct seal_key *k, uint64_t n, uint8_t *buf,
    size_t len, const uint8_t *ad, size_t adlen, uint8_t tag[SEAL_TAG_LEN])
{
	uint8_t nonce[NONCE_LEN];

	nonce_of(a, n, nonce);
	if (a == SEAL_AESGCM)
		crypto_aead_aes256gcm_encrypt_detached_afternm(buf, tag, NULL,
		    buf, len, ad, adlen, NULL, nonce,
		    (const crypto_aead_aes256gcm_state *)(const void *)k->aes);
	else
		crypto_aead_chacha20poly1305_ietf_encrypt_detached(buf, tag,
		    NULL, buf, len, ad, adlen, NULL, nonce, k->key);
}

static int
aead_open(enum seal_aead a, const struct seal_key *k, uint64_t n, uint8_t *buf,
    size_t len, const uint8_t *ad, size_t adlen,
    const uint8_t tag[SEAL_TAG_LEN])
{
	uint8_t nonce[NONCE_LEN];

	nonce_of(a, n, nonce);
	if (a == SEAL_AESGCM)
		return (crypto_aead_aes256gcm_decrypt_detached_afternm(buf,
		    NULL, buf, len, tag, ad, adlen, nonce,
		    (const crypto_aead_aes256gcm_state *)(const void *)k->aes));
	return (crypto_aead_chacha20poly1305_ietf_decrypt_detached(buf, NULL,
	    buf, len, tag, ad, adlen, nonce, k->key));
}

/* Move to the next epoch: the current key becomes the previous one. */
static void
rekey(struct seal_dir *d)
{
	uint8_t next[SEAL_KEY_LEN], tag[SEAL_TAG_LEN];

	memset(next, 0, sizeof(next));
	aead_seal(d->aead, &d->cur, REKEY_NONCE, next, sizeof(next), NULL, 0,
	    tag);
	d->prev = d->cur;
	d->has_prev = 1;
	key_set(&d->cur, d->aead, next);
	d->epoch++;
	sodium_memzero(next, sizeof(next));
	sodium_memzero(tag, sizeof(tag));
}

/* The key of message n, the next one: its epoch is cur's or the one after. */
static const struct seal_key *
key_of_next(struct seal_dir *d, uint64_t n)
{
	/* Nonce 2^64-1 is REKEY's; n never gets there (2^64 messages). */
	if (n == REKEY_NONCE)
		abort();
	if (n / SEAL_REKEY_EVERY != d->epoch)
		rekey(d);
	return (&d->cur);
}

void
seal_dir_init(struct seal_dir *d, enum seal_aead a,
    const uint8_t key[SEAL_KEY_LEN])
{
	memset(d, 0, sizeof(*d));
	d->aead = a;
	key_set(&d->cur, a, key);
}

uint64_t
seal_dir_seal(struct seal_dir *d, uint8_t *buf, size_t len,
    const uint8_t *ad, size_t adlen, uint8_t tag[SEAL_TAG_LEN])
{
	uint64_t n = d->n;

	aead_seal(d->aead, key_of_next(d, n), n, buf, len, ad, adlen, tag);
	d->n = n + 1;
	return (n);
}

int
seal_dir_open(struct seal_dir *d, uint8_t *buf, size_t len,
    const uint8_t *ad, size_t adlen, const uint8_t tag[SEAL_TAG_LEN])
{
	uint64_t n = d->n;

	if (aead_open(d->aead, key_of_next(d, n), n, buf, len, ad, adlen,
	    tag) != 0)
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
	const struct seal_key *k;

	if (n >= d->n)
		return (-1);
	if (j == d->epoch)
		k = &d->cur;
	else if (d->has_prev && j + 1 == d->epoch)
		k = &d->prev;
	else
		return (-1);
	if (aead_open(d->aead, k, n, buf, len, ad, adlen, tag) != 0)
		return (-1);
	return (0);
}

uint64_t
seal_dir_count(const struct seal_dir *d)
{
	return (d->n);
}

void
seal_dir_wipe(struct seal_dir *d)
{
	sodium_memzero(d, sizeof(*d));
}

void
seal_dir_set_count_for_test(struct seal_dir *d, uint64_t n)
{
	d->n = n;
	d->epoch = n / SEAL_REKEY_EVERY;
	sodium_memzero(&d->prev, sizeof(d->prev));
	d->has_prev = 0;
}
