/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * seal: one direction of a sealed link (rstreamd-protocol(7), "Sealed
 * records"): an AEAD key, the count of messages sealed (or opened) with
 * it, and the key's renewal every SEAL_REKEY_EVERY messages.
 *
 * Message n of a direction is sealed under the nonce 4 zero bytes || n as
 * 64 bits, little-endian for ChaCha20-Poly1305 and big-endian for
 * AES-256-GCM (as Noise encodes nonces), with the key k_j of its epoch
 * j = n / SEAL_REKEY_EVERY; k_{j+1} is Noise's REKEY(k_j): the first 32
 * bytes of ENCRYPT(k_j, nonce 2^64-1, no associated data, 32 zero bytes).
 * The count never resets and never reaches 2^64-1.
 *
 * Structures are the caller's (no allocation); seal_dir_wipe erases their
 * secrets.  libsodium must be initialised (sodium_init) before any call.
 */
#ifndef SEAL_H
#define SEAL_H

#include <stddef.h>
#include <stdint.h>

enum seal_aead {
	SEAL_CHACHAPOLY = 1,	/* ChaCha20-Poly1305 (IETF) */
	SEAL_AESGCM = 2,	/* AES-256-GCM */
};

#define SEAL_TAG_LEN		16
#define SEAL_KEY_LEN		32
#define SEAL_REKEY_EVERY	(UINT64_C(1) << 20)

/* The expanded key of one epoch (AES-GCM: libsodium's precomputed state). */
struct seal_key {
	_Alignas(16) unsigned char aes[512];
	uint8_t key[SEAL_KEY_LEN];
};

/* One direction; its fields are seal's own. */
struct seal_dir {
	struct seal_key cur;	/* the key of epoch "epoch" */
	struct seal_key prev;	/* epoch - 1's, for seal_dir_restore */
	uint64_t n;		/* the next message's number */
	uint64_t epoch;		/* cur's: n's epoch, or one less */
	enum seal_aead aead;
	int has_prev;
};

/* 1 if this CPU can seal with AES-256-GCM (libsodium needs AES-NI and
 * PCLMUL), else 0. */
int seal_aesgcm_available(void);

/* "aes-256-gcm" or "chacha20-poly1305"; "?" for anything else. */
const char *seal_aead_name(enum seal_aead a);

/* Start a direction at message 0 with the key a handshake gave it (for
 * SEAL_AESGCM, seal_aesgcm_available() must be 1). */
void seal_dir_init(struct seal_dir *d, enum seal_aead a,
    const uint8_t key[SEAL_KEY_LEN]);

/*
 * Seal the next message: encrypt len bytes of buf in place, authenticate
 * them and the adlen bytes at ad (ad may be NULL when adlen is 0), and
 * write the tag.  Returns the message number it used (for
 * seal_dir_restore).
 */
uint64_t seal_dir_seal(struct seal_dir *d, uint8_t *buf, size_t len,
    const uint8_t *ad, size_t adlen, uint8_t tag[SEAL_TAG_LEN]);

/*
 * Open the next message in place.  0: buf holds the plaintext and the
 * count advanced.  -1: the tag does not verify (forged, replayed, out of
 * order, or sealed under another key): the count stays where it was, and
 * buf holds none of the forgery's plaintext: its len bytes are zeroed
 * (libsodium's in-place AES-GCM writes before it can verify and then
 * zeroes; ChaCha20-Poly1305 does the same, so both AEADs behave alike).
 * The caller ends the link.
 */
int seal_dir_open(struct seal_dir *d, uint8_t *buf, size_t len,
    const uint8_t *ad, size_t adlen, const uint8_t tag[SEAL_TAG_LEN]);

/*
 * The sender undoes its own message n in place (buf, len, ad and tag as
 * it sealed them), so that its plaintext is there again for a resume.
 * n must be one this direction sealed, from its current key epoch or the
 * one before.  0: done; -1: n too old or not sealed yet, or the tag does
 * not match (buf zeroed, as for seal_dir_open).
 */
int seal_dir_restore(const struct seal_dir *d, uint8_t *buf, size_t len,
    const uint8_t *ad, size_t adlen, uint64_t n,
    const uint8_t tag[SEAL_TAG_LEN]);

/* The number of the next message (= messages sealed or opened so far). */
uint64_t seal_dir_count(const struct seal_dir *d);

/* Erase the keys and the count. */
void seal_dir_wipe(struct seal_dir *d);

/*
 * For tests: move the count to n, taking the direction's current key as
 * the key of n's epoch (n / SEAL_REKEY_EVERY), with no previous one.
 */
void seal_dir_set_count_for_test(struct seal_dir *d, uint64_t n);

#endif /* !SEAL_H */
