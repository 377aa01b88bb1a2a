/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * noise: the Noise handshake (revision 34), XX and XXpsk3 with X25519,
 * ChaChaPoly and BLAKE2b.  Section numbers below are the specification's.
 * libsodium does the primitives; only what the specification composes
 * from them (HMAC, HKDF, the symmetric and handshake states) is here.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "noise.h"

#define BLOCK_LEN	128	/* BLAKE2b's block, HMAC's key pad */

/* hs->msg past the three messages. */
enum { NOISE_DONE = 3, NOISE_DEAD = 4 };

/* The tokens of the XX pattern (7.5), message by message. */
enum tok { T_END, T_E, T_S, T_EE, T_ES, T_SE, T_PSK };
static const enum tok xx[3][4] = {
	{ T_E, T_END },
	{ T_E, T_EE, T_S, T_ES },
	{ T_S, T_SE, T_PSK, T_END },	/* T_PSK: psk3 only */
};
#define NTOK (sizeof(xx[0]) / sizeof(xx[0][0]))

static const char name_xx[] = "Noise_XX_25519_ChaChaPoly_BLAKE2b";
static const char name_psk[] = "Noise_XXpsk3_25519_ChaChaPoly_BLAKE2b";

/* HASH(a || b) into out (4.3); out may be a or b. */
static void
hash2(uint8_t out[NOISE_HASH_LEN], const uint8_t *a, size_t alen,
    const uint8_t *b, size_t blen)
{
	crypto_generichash_blake2b_state st;

	crypto_generichash_blake2b_init(&st, NULL, 0, NOISE_HASH_LEN);
	crypto_generichash_blake2b_update(&st, a, alen);
	crypto_generichash_blake2b_update(&st, b, blen);
	crypto_generichash_blake2b_final(&st, out, NOISE_HASH_LEN);
	sodium_memzero(&st, sizeof(st));
}

/* HMAC-HASH(key, a || b) as RFC 2104 defines it (4.3). */
static void
hmac(uint8_t out[NOISE_HASH_LEN], const uint8_t key[NOISE_HASH_LEN],
    const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	uint8_t pad[BLOCK_LEN], inner[NOISE_HASH_LEN];
	crypto_generichash_blake2b_state st;
	size_t i;

	for (i = 0; i < BLOCK_LEN; i++)
		pad[i] = (uint8_t)((i < NOISE_HASH_LEN ? key[i] : 0) ^ 0x36);
	crypto_generichash_blake2b_init(&st, NULL, 0, NOISE_HASH_LEN);
	crypto_generichash_blake2b_update(&st, pad, BLOCK_LEN);
	crypto_generichash_blake2b_update(&st, a, alen);
	crypto_generichash_blake2b_update(&st, b, blen);
	crypto_generichash_blake2b_final(&st, inner, NOISE_HASH_LEN);
	for (i = 0; i < BLOCK_LEN; i++)
		pad[i] = (uint8_t)((i < NOISE_HASH_LEN ? key[i] : 0) ^ 0x5c);
	hash2(out, pad, BLOCK_LEN, inner, NOISE_HASH_LEN);
	sodium_memzero(pad, sizeof(pad));
	sodium_memzero(inner, sizeof(inner));
	sodium_memzero(&st, sizeof(st));
}

/*
 * HKDF(ck, ikm) (4.3): two outputs, or three if o3.  o1 may be ck: ck is
 * read only before o1 is written.
 */
static void
hkdf(const uint8_t ck[NOISE_HASH_LEN], const uint8_t *ikm, size_t ilen,
    uint8_t o1[NOISE_HASH_LEN], uint8_t o2[NOISE_HASH_LEN],
    uint8_t o3[NOISE_HASH_LEN])
{
	static const uint8_t one = 1, two = 2, three = 3;
	uint8_t tk[NOISE_HASH_LEN];

	hmac(tk, ck, ikm, ilen, NULL, 0);
	hmac(o1, tk, &one, 1, NULL, 0);
	hmac(o2, tk, o1, NOISE_HASH_LEN, &two, 1);
	if (o3 != NULL)
		hmac(o3, tk, o2, NOISE_HASH_LEN, &three, 1);
	sodium_memzero(tk, sizeof(tk));
}

/* The nonce of message n (5.1, ChaChaPoly: 32 zero bits, n little-endian). */
static void
nonce(uint8_t out[crypto_aead_chacha20poly1305_IETF_NPUBBYTES], uint64_t n)
{
	int i;

	memset(out, 0, 4);
	for (i = 0; i < 8; i++)
		out[4 + i] = (uint8_t)(n >> (8 * i));
}

int
noise_cs_encrypt(struct noise_cs *cs, const uint8_t *ad, size_t adlen,
    const uint8_t *in, size_t len, uint8_t *out)
{
	uint8_t iv[crypto_aead_chacha20poly1305_IETF_NPUBBYTES];

	if (cs->n == UINT64_MAX)
		return (-1);
	nonce(iv, cs->n);
	crypto_aead_chacha20poly1305_ietf_encrypt(out, NULL, in, len, ad,
	    adlen, NULL, iv, cs->k);
	cs->n++;
	return (0);
}

int
noise_cs_decrypt(struct noise_cs *cs, const uint8_t *ad, size_t adlen,
    const uint8_t *in, size_t len, uint8_t *out)
{
	uint8_t iv[crypto_aead_chacha20poly1305_IETF_NPUBBYTES];

	if (cs->n == UINT64_MAX || len < NOISE_TAG_LEN)
		return (-1);
	nonce(iv, cs->n);
	if (crypto_aead_chacha20poly1305_ietf_decrypt(out, NULL, NULL, in, len,
	    ad, adlen, iv, cs->k) != 0)
		return (-1);
	cs->n++;
	return (0);
}

void
noise_rekey(uint8_t k[NOISE_KEY_LEN])
{
	uint8_t iv[crypto_aead_chacha20poly1305_IETF_NPUBBYTES];
	uint8_t buf[NOISE_KEY_LEN + NOISE_TAG_LEN];

	nonce(iv, UINT64_MAX);
	memset(buf, 0, NOISE_KEY_LEN);
	crypto_aead_chacha20poly1305_ietf_encrypt(buf, NULL, buf,
	    NOISE_KEY_LEN, NULL, 0, NULL, iv, k);
	memcpy(k, buf, NOISE_KEY_LEN);
	sodium_memzero(buf, sizeof(buf));
}

/* MixHash(data) (5.2). */
static void
mix_hash(struct noise_hs *hs, const uint8_t *data, size_t len)
{
	hash2(hs->h, hs->h, NOISE_HASH_LEN, data, len);
}

/* InitializeKey(the first 32 bytes of k) (5.1). */
static void
init_key(struct noise_hs *hs, const uint8_t k[NOISE_HASH_LEN])
{
	memcpy(hs->cs.k, k, NOISE_KEY_LEN);
	hs->cs.n = 0;
	hs->has_key = 1;
}

/* MixKey(ikm) (5.2). */
static void
mix_key(struct noise_hs *hs, const uint8_t *ikm, size_t len)
{
	uint8_t tk[NOISE_HASH_LEN];

	hkdf(hs->ck, ikm, len, hs->ck, tk, NULL);
	init_key(hs, tk);
	sodium_memzero(tk, sizeof(tk));
}

/* MixKeyAndHash(ikm) (5.2): the psk token. */
static void
mix_key_and_hash(struct noise_hs *hs, const uint8_t *ikm, size_t len)
{
	uint8_t th[NOISE_HASH_LEN], tk[NOISE_HASH_LEN];

	hkdf(hs->ck, ikm, len, hs->ck, th, tk);
	mix_hash(hs, th, NOISE_HASH_LEN);
	init_key(hs, tk);
	sodium_memzero(th, sizeof(th));
	sodium_memzero(tk, sizeof(tk));
}

/* MixKey(DH(priv, pub)); -1 for an all-zero result (a low-order pub). */
static int
mix_dh(struct noise_hs *hs, const uint8_t priv[NOISE_KEY_LEN],
    const uint8_t pub[NOISE_KEY_LEN])
{
	uint8_t dh[NOISE_KEY_LEN];
	int rc;

	rc = crypto_scalarmult(dh, priv, pub);
	if (rc == 0)
		mix_key(hs, dh, sizeof(dh));
	sodium_memzero(dh, sizeof(dh));
	return (rc == 0 ? 0 : -1);
}

/* EncryptAndHash (5.2): len bytes of in to out, returns out's length. */
static size_t
encrypt_and_hash(struct noise_hs *hs, const uint8_t *in, size_t len,
    uint8_t *out)
{
	if (hs->has_key) {
		/* The key's nonces cannot run out in three messages. */
		(void)noise_cs_encrypt(&hs->cs, hs->h, NOISE_HASH_LEN, in, len,
		    out);
		len += NOISE_TAG_LEN;
	} else if (len > 0) {
		memmove(out, in, len);
	}
	mix_hash(hs, out, len);
	return (len);
}

/* DecryptAndHash (5.2): out must not overlap in. */
static int
decrypt_and_hash(struct noise_hs *hs, const uint8_t *in, size_t len,
    uint8_t *out)
{
	if (hs->has_key) {
		if (noise_cs_decrypt(&hs->cs, hs->h, NOISE_HASH_LEN, in, len,
		    out) != 0)
			return (-1);
	} else if (len > 0) {
		memcpy(out, in, len);
	}
	mix_hash(hs, in, len);
	return (0);
}

/* The DH tokens for our role (7.5: "es" is DH(e, rs) for the initiator). */
static int
dh_token(struct noise_hs *hs, enum tok t)
{
	int my_e = t == T_EE || (t == T_ES ? hs->initiator : !hs->initiator);
	int peer_e = t == T_EE || (t == T_SE ? hs->initiator : !hs->initiator);

	return (mix_dh(hs, my_e ? hs->e : hs->s, peer_e ? hs->re : hs->rs));
}

/*
 * The length of the current message carrying plen bytes of payload, from
 * its token hs->tok on (a head read already: the rest): the keys it
 * carries, each sealed if a key is in use by then, and the payload,
 * sealed likewise.
 */
static size_t
msg_len(const struct noise_hs *hs, size_t plen)
{
	size_t i, len = 0;
	int key = hs->has_key;

	for (i = hs->tok; i < NTOK && xx[hs->msg][i] != T_END; i++) {
		switch (xx[hs->msg][i]) {
		case T_E:
			len += NOISE_KEY_LEN;
			key |= hs->has_psk;
			break;
		case T_S:
			len += NOISE_KEY_LEN + (key ? NOISE_TAG_LEN : 0);
			break;
		default:
			key = 1;
			break;
		}
	}
	return (len + plen + (key ? NOISE_TAG_LEN : 0));
}

/* Whose turn: the initiator writes messages 1 and 3. */
static int
writes_next(const struct noise_hs *hs)
{
	return ((hs->msg % 2 == 0) == (hs->initiator != 0));
}

/* An ephemeral key, ours or the peer's: with a psk, a key too (9.2). */
static void
mix_e(struct noise_hs *hs, const uint8_t pub[NOISE_KEY_LEN])
{
	mix_hash(hs, pub, NOISE_KEY_LEN);
	if (hs->has_psk)
		mix_key(hs, pub, NOISE_KEY_LEN);
}

/* The tokens that carry no bytes, the same written as read. */
static int
mix_token(struct noise_hs *hs, enum tok t)
{
	if (t != T_PSK)
		return (dh_token(hs, t));
	if (hs->has_psk)
		mix_key_and_hash(hs, hs->psk, NOISE_KEY_LEN);
	return (0);
}

/* The "e" token of a message we write. */
static int
write_e(struct noise_hs *hs, uint8_t *out)
{
	if (hs->has_e_next) {
		memcpy(hs->e, hs->e_next, NOISE_KEY_LEN);
		sodium_memzero(hs->e_next, NOISE_KEY_LEN);
		hs->has_e_next = 0;
	} else {
		randombytes_buf(hs->e, NOISE_KEY_LEN);
	}
	if (crypto_scalarmult_base(hs->e_pub, hs->e) != 0)
		return (-1);
	memcpy(out, hs->e_pub, NOISE_KEY_LEN);
	mix_e(hs, hs->e_pub);
	return (0);
}

/* One token of a message we write at out; its length to *len. */
static int
write_token(struct noise_hs *hs, enum tok t, uint8_t *out, size_t *len)
{
	*len = 0;
	switch (t) {
	case T_E:
		*len = NOISE_KEY_LEN;
		return (write_e(hs, out));
	case T_S:
		*len = encrypt_and_hash(hs, hs->s_pub, NOISE_KEY_LEN, out);
		return (0);
	default:
		return (mix_token(hs, t));
	}
}

/* One token of a message we read at in (msg_len has checked its length). */
static int
read_token(struct noise_hs *hs, enum tok t, const uint8_t *in, size_t *len)
{
	*len = 0;
	switch (t) {
	case T_E:
		*len = NOISE_KEY_LEN;
		memcpy(hs->re, in, NOISE_KEY_LEN);
		mix_e(hs, hs->re);
		return (0);
	case T_S:
		*len = NOISE_KEY_LEN + (hs->has_key ? NOISE_TAG_LEN : 0);
		if (decrypt_and_hash(hs, in, *len, hs->rs) != 0)
			return (-1);
		hs->has_rs = 1;
		return (0);
	default:
		return (mix_token(hs, t));
	}
}

/* Fail: the handshake is dead and holds no secret. */
static int
fail(struct noise_hs *hs)
{
	noise_wipe(hs);
	return (-1);
}

int
noise_write(struct noise_hs *hs, const uint8_t *payload, size_t plen,
    uint8_t *out, size_t outmax, size_t *outlen)
{
	size_t i, off = 0, n;

	if (hs->msg >= NOISE_DONE || !writes_next(hs))
		return (fail(hs));
	n = msg_len(hs, plen);
	if (plen > NOISE_MSG_MAX || n > NOISE_MSG_MAX || n > outmax)
		return (fail(hs));
	for (i = 0; i < NTOK && xx[hs->msg][i] != T_END; i++) {
		if (write_token(hs, xx[hs->msg][i], out + off, &n) != 0)
			return (fail(hs));
		off += n;
	}
	off += encrypt_and_hash(hs, payload, plen, out + off);
	hs->msg++;
	*outlen = off;
	return (0);
}

/*
 * Read the tokens of the current message at in, from hs->tok and byte
 * hs->off on, up to its end or the token stop (not read); both advance.
 */
static int
read_tokens(struct noise_hs *hs, const uint8_t *in, enum tok stop)
{
	size_t n;
	enum tok t;

	while (hs->tok < NTOK && (t = xx[hs->msg][hs->tok]) != T_END &&
	    t != stop) {
		if (read_token(hs, t, in + hs->off, &n) != 0)
			return (-1);
		hs->off = (uint16_t)(hs->off + n);
		hs->tok++;
	}
	return (0);
}

/* Is it the peer's message to read, and at most NOISE_MSG_MAX bytes? */
static int
may_read(const struct noise_hs *hs, size_t inlen)
{
	return (hs->msg < NOISE_DONE && !writes_next(hs) &&
	    inlen <= NOISE_MSG_MAX);
}

int
noise_read_head(struct noise_hs *hs, const uint8_t *in, size_t inlen)
{
	if (!may_read(hs, inlen) || hs->tok != 0 || inlen < msg_len(hs, 0) ||
	    read_tokens(hs, in, T_PSK) != 0)
		return (fail(hs));
	return (0);
}

int
noise_read(struct noise_hs *hs, const uint8_t *in, size_t inlen,
    uint8_t *payload, size_t pmax, size_t *plen)
{
	size_t rest, n;

	if (!may_read(hs, inlen) || inlen < hs->off)
		return (fail(hs));
	rest = msg_len(hs, 0);
	if (inlen - hs->off < rest || (n = inlen - hs->off - rest) > pmax)
		return (fail(hs));
	if (read_tokens(hs, in, T_END) != 0 ||
	    decrypt_and_hash(hs, in + hs->off, inlen - hs->off, payload) != 0)
		return (fail(hs));
	hs->msg++;
	hs->tok = 0;
	hs->off = 0;
	*plen = n;
	return (0);
}

void
noise_keygen(uint8_t priv[NOISE_KEY_LEN], uint8_t pub[NOISE_KEY_LEN])
{
	/* sodium_init fails only without a random source, and then
	 * randombytes_buf would abort anyway: no key is made of nothing. */
	if (sodium_init() < 0)
		abort();
	randombytes_buf(priv, NOISE_KEY_LEN);
	(void)crypto_scalarmult_base(pub, priv);
}

int
noise_public(const uint8_t priv[NOISE_KEY_LEN], uint8_t pub[NOISE_KEY_LEN])
{
	if (sodium_init() < 0)
		return (-1);
	return (crypto_scalarmult_base(pub, priv) == 0 ? 0 : -1);
}

int
noise_init(struct noise_hs *hs, int initiator, const uint8_t *prologue,
    size_t plen, const uint8_t s_priv[NOISE_KEY_LEN], const uint8_t *s_pub,
    const uint8_t *psk)
{
	const char *name = psk != NULL ? name_psk : name_xx;

	/* InitializeSymmetric (5.2): names shorter than a hash are padded. */
	memset(hs, 0, sizeof(*hs));
	memcpy(hs->h, name, strlen(name));
	memcpy(hs->ck, hs->h, NOISE_HASH_LEN);
	mix_hash(hs, prologue, plen);
	hs->initiator = initiator != 0;
	memcpy(hs->s, s_priv, NOISE_KEY_LEN);
	if (s_pub != NULL)
		memcpy(hs->s_pub, s_pub, NOISE_KEY_LEN);
	else if (noise_public(hs->s, hs->s_pub) != 0)
		return (fail(hs));
	if (psk != NULL) {
		memcpy(hs->psk, psk, NOISE_KEY_LEN);
		hs->has_psk = 1;
	}
	return (0);
}

void
noise_set_ephemeral(struct noise_hs *hs, const uint8_t e_priv[NOISE_KEY_LEN])
{
	memcpy(hs->e_next, e_priv, NOISE_KEY_LEN);
	hs->has_e_next = 1;
}

int
noise_set_psk(struct noise_hs *hs, const uint8_t psk[NOISE_KEY_LEN])
{
	/* psk3: the psk is mixed in with message 3. */
	if (!hs->has_psk || hs->msg > 2)
		return (-1);
	memcpy(hs->psk, psk, NOISE_KEY_LEN);
	return (0);
}

int
noise_done(const struct noise_hs *hs)
{
	return (hs->msg == NOISE_DONE);
}

const uint8_t *
noise_remote_static(const struct noise_hs *hs)
{
	return (hs->has_rs && hs->msg < NOISE_DEAD ? hs->rs : NULL);
}

int
noise_my_turn(const struct noise_hs *hs)
{
	return (hs->msg < NOISE_DONE && writes_next(hs));
}

void
noise_split(struct noise_hs *hs, uint8_t c1[NOISE_KEY_LEN],
    uint8_t c2[NOISE_KEY_LEN], uint8_t *k3, uint8_t h[NOISE_HASH_LEN])
{
	uint8_t o1[NOISE_HASH_LEN], o2[NOISE_HASH_LEN], o3[NOISE_HASH_LEN];

	if (hs->msg != NOISE_DONE)
		abort();
	hkdf(hs->ck, NULL, 0, o1, o2, k3 != NULL ? o3 : NULL);
	memcpy(c1, o1, NOISE_KEY_LEN);
	memcpy(c2, o2, NOISE_KEY_LEN);
	if (k3 != NULL)
		memcpy(k3, o3, NOISE_KEY_LEN);
	memcpy(h, hs->h, NOISE_HASH_LEN);
	sodium_memzero(o1, sizeof(o1));
	sodium_memzero(o2, sizeof(o2));
	sodium_memzero(o3, sizeof(o3));
	noise_wipe(hs);
}

void
noise_wipe(struct noise_hs *hs)
{
	sodium_memzero(hs, sizeof(*hs));
	hs->msg = NOISE_DEAD;
}
