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
 * The count never resets and never reaches 2^64-2 (see seal_pair_init).
 *
 * The AEADs are OpenSSL libcrypto's (EVP), which runs them at two to three
 * times libsodium's speed; the bytes are the same (tests/unit/test_seal.c
 * holds them to libsodium's).  But a message of at most SEAL_SMALL bytes
 * (the records of a SEND: eager writes, credits, control) goes through
 * libsodium, whose few instructions beat EVP's per-message work there
 * (tests/bench/aead-bench has both).  A direction keeps one OpenSSL
 * context per key, and libsodium's key of the current epoch (for
 * AES-256-GCM precomputed), each keyed once, so a message costs no key
 * setup: seal_dir_init
 * allocates them and seal_dir_wipe frees them, so every initialised
 * direction must be wiped, and a struct copy of one (which would share its
 * contexts) must never be used.  There is no copy at all: two directions
 * that seal from the same count reuse nonces; the other end of one is a
 * direction initialised from the same key.  libsodium must be
 * initialised (sodium_init) before any call (seal_aesgcm_available is
 * its).
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
/* The largest message libsodium seals and opens (above). */
#define SEAL_SMALL		256
/* libsodium's crypto_aead_aes256gcm_state (seal.c checks it). */
#define SEAL_GCM_STATE		512

/* OpenSSL's EVP_CIPHER_CTX, which seal.h's users need not see. */
struct evp_cipher_ctx_st;

/* One direction; its fields are seal's own. */
struct seal_dir {
	/* OpenSSL contexts keyed with the key of epoch "epoch" and with
	 * epoch - 1's (for seal_dir_restore; keyed once has_prev). */
	struct evp_cipher_ctx_st *cur, *prev;
	uint64_t n;		/* the next message's number */
	uint64_t epoch;		/* cur's: n's epoch, or one less */
	enum seal_aead aead;
	int has_prev;
	/* cur's key for libsodium, for messages of at most SEAL_SMALL
	 * bytes: AES-256-GCM's precomputed, ChaCha20-Poly1305's as is. */
	_Alignas(16) unsigned char small[SEAL_GCM_STATE];
};

/*
 * 1 if this CPU has the instructions AES-256-GCM wants (libsodium's test:
 * AES-NI and PCLMUL), else 0.  OpenSSL would run it without them, but
 * slower than ChaCha20-Poly1305 and with table lookups that leak timing,
 * so a side without them asks for ChaCha20-Poly1305.
 */
int seal_aesgcm_available(void);

/*
 * Load the AEADs before the first link needs them: OpenSSL sets its
 * providers up on first use, which took 39 ms in the emulated test guest
 * (1 ms natively), and would otherwise land on the first sealed link's
 * handshake.  Returns 0, or -1 if neither AEAD can be set up.
 */
int seal_init(void);

/* "aes-256-gcm" or "chacha20-poly1305"; "?" for anything else. */
const char *seal_aead_name(enum seal_aead a);

/*
 * Start a direction at message 0 with the key a handshake gave it (for
 * SEAL_AESGCM, seal_aesgcm_available() must be 1).  d must be zeroed or
 * wiped.  0: done; -1: OpenSSL could not make its contexts (out of
 * memory), and d is wiped.
 */
int seal_dir_init(struct seal_dir *d, enum seal_aead a,
    const uint8_t key[SEAL_KEY_LEN]);

/*
 * Seal the next message: encrypt len bytes of buf in place, authenticate
 * them and the adlen bytes at ad (ad may be NULL when adlen is 0), and
 * write the tag.  Returns the message number it used (for
 * seal_dir_restore).  It cannot fail: OpenSSL refusing to run a context
 * it has keyed (no memory is needed then) would be a broken library, and
 * the process aborts rather than send anything unsealed.
 */
uint64_t seal_dir_seal(struct seal_dir *d, uint8_t *buf, size_t len,
    const uint8_t *ad, size_t adlen, uint8_t tag[SEAL_TAG_LEN]);

/*
 * Open the next message in place.  0: buf holds the plaintext and the
 * count advanced.  -1: the tag does not verify (forged, replayed, out of
 * order, or sealed under another key): the count stays where it was, and
 * buf holds none of the forgery's plaintext: its len bytes are zeroed
 * (in place, the plaintext is written before the tag can be checked).
 * OpenSSL refusing the operation counts as a tag that does not verify.
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

/* Erase the keys and the count, and free the contexts.  A zeroed or
 * wiped direction may be wiped again. */
void seal_dir_wipe(struct seal_dir *d);

/*
 * Both directions of a sealed link, on each of its lanes (the latency
 * lane, rstreamd-protocol(7) "LANES", seals with keys of its own, so
 * that the lanes' counts, which advance in no common order, never share
 * a nonce), and the four functions an engine's sealing callbacks (struct
 * engine_seal in lib/protocol/engine.h) are: each takes a struct
 * seal_pair as ${arg}, seals and restores with tx, opens with rx.  Only
 * lane 0 carries WRITEs, so restore is lane 0's.  seal_pair_ptr maps a
 * ring's address to its memory where the two are the same (memory
 * registered at its own address: lib/rdma/verbs, the tests).
 */
#define SEAL_LANES 2
struct seal_pair {
	struct seal_dir tx[SEAL_LANES], rx[SEAL_LANES];
};

/*
 * Key every direction of ${p}: lane 0 sends with ${ktx} and opens with
 * ${krx}, the handshake's keys; lane 1 with keys derived from them, for
 * each k the first 32 bytes of ENCRYPT(k, nonce 2^64-2, no associated
 * data, 32 zero bytes) (REKEY's, at the nonce below REKEY's; no message
 * ever takes either).  ${p} need not be zeroed, but must not hold keys.
 * 0: done; -1: out of memory, and ${p} is wiped.
 */
int seal_pair_init(struct seal_pair *p, enum seal_aead a,
    const uint8_t ktx[SEAL_KEY_LEN], const uint8_t krx[SEAL_KEY_LEN]);

uint64_t seal_pair_seal(void *arg, unsigned lane, uint8_t *buf, uint32_t len,
    const uint8_t *ad, size_t adlen, uint8_t tag[SEAL_TAG_LEN]);
int seal_pair_open(void *arg, unsigned lane, uint8_t *buf, uint32_t len,
    const uint8_t *ad, size_t adlen, const uint8_t tag[SEAL_TAG_LEN]);
int seal_pair_restore(void *arg, uint8_t *buf, uint32_t len,
    const uint8_t *ad, size_t adlen, uint64_t n,
    const uint8_t tag[SEAL_TAG_LEN]);
uint8_t *seal_pair_ptr(void *arg, uint64_t addr);

/* seal_dir_wipe every direction of ${p}. */
void seal_pair_wipe(struct seal_pair *p);

/*
 * For tests: move the count to n, taking the direction's current key as
 * the key of n's epoch (n / SEAL_REKEY_EVERY), with no previous one.
 */
void seal_dir_set_count_for_test(struct seal_dir *d, uint64_t n);

#endif /* !SEAL_H */
