/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * noise: the Noise Protocol Framework (revision 34) handshake for the two
 * patterns rstreamd speaks, Noise_XX_25519_ChaChaPoly_BLAKE2b and
 * Noise_XXpsk3_25519_ChaChaPoly_BLAKE2b, over libsodium.
 *
 *     -> e
 *     <- e, ee, s, es
 *     -> s, se          (psk3: s, se, psk)
 *
 * Sans-I/O: the caller moves the messages.  The caller owns struct
 * noise_hs (no allocation here); every secret in it is wiped when the
 * handshake fails, is split, or is wiped.  A call that fails (-1) leaves
 * the handshake dead: every later call on it fails too.  A copy of the
 * struct holds the same secrets: whoever copies it wipes the copy.
 */
#ifndef NOISE_H
#define NOISE_H

#include <stddef.h>
#include <stdint.h>

#define NOISE_KEY_LEN	32	/* X25519, ChaChaPoly keys; the psk */
#define NOISE_HASH_LEN	64	/* BLAKE2b: the handshake hash h */
#define NOISE_TAG_LEN	16	/* a ChaChaPoly tag */
#define NOISE_MSG_MAX	256	/* largest handshake message, either way */

/* A CipherState: a key and the count of messages it has sealed. */
struct noise_cs {
	uint8_t k[NOISE_KEY_LEN];
	uint64_t n;
};

/* A HandshakeState; its fields are this file's own. */
struct noise_hs {
	uint8_t ck[NOISE_HASH_LEN];
	uint8_t h[NOISE_HASH_LEN];
	struct noise_cs cs;
	uint8_t s[NOISE_KEY_LEN], s_pub[NOISE_KEY_LEN];
	uint8_t e[NOISE_KEY_LEN], e_pub[NOISE_KEY_LEN];
	uint8_t e_next[NOISE_KEY_LEN];
	uint8_t re[NOISE_KEY_LEN], rs[NOISE_KEY_LEN];
	uint8_t psk[NOISE_KEY_LEN];
	uint8_t initiator, has_key, has_psk, has_rs, has_e_next;
	uint8_t msg;		/* messages done (3: all); 4: dead */
	uint8_t tok;		/* of message msg, the tokens read */
	uint16_t off;		/* and their bytes (noise_read_head) */
};

/**
 * noise_keygen(priv, pub):
 * A new X25519 key pair from libsodium's random source.
 */
void noise_keygen(uint8_t priv[NOISE_KEY_LEN], uint8_t pub[NOISE_KEY_LEN]);

/**
 * noise_public(priv, pub):
 * The public key of ${priv}.  Returns 0, or -1 if libsodium cannot start
 * or refuses the key.
 */
int noise_public(const uint8_t priv[NOISE_KEY_LEN], uint8_t pub[NOISE_KEY_LEN]);

/**
 * noise_init(hs, initiator, prologue, plen, s_priv, s_pub, psk):
 * Start a handshake in the role ${initiator} (1) or responder (0), bound
 * to the ${plen} bytes at ${prologue} (both sides must give the same),
 * with the static private key ${s_priv} and its public key ${s_pub}
 * (NULL: computed from ${s_priv}, an X25519 operation; a ${s_pub} that
 * is not ${s_priv}'s makes a handshake that fails).  ${psk} NULL:
 * Noise_XX; else the 32-byte psk of Noise_XXpsk3 (a responder may change
 * it with noise_set_psk until it reads message 3's psk token).  Returns
 * 0, or -1 (${hs} is then dead).
 */
int noise_init(struct noise_hs *hs, int initiator, const uint8_t *prologue,
    size_t plen, const uint8_t s_priv[NOISE_KEY_LEN], const uint8_t *s_pub,
    const uint8_t *psk);

/**
 * noise_set_ephemeral(hs, e_priv):
 * The next "e" token uses ${e_priv} instead of a fresh random key.  For
 * test vectors only: an ephemeral key used twice breaks the handshake's
 * secrecy.
 */
void noise_set_ephemeral(struct noise_hs *hs,
    const uint8_t e_priv[NOISE_KEY_LEN]);

/**
 * noise_set_psk(hs, psk):
 * Replace the psk of a psk3 handshake, so that a responder can choose it
 * once it knows who the initiator is (after noise_read_head; it may try
 * several, each on its own copy of ${hs}).  Returns 0, or -1 if ${hs} was started without a psk or
 * has used it already (${hs} is left as it was).
 */
int noise_set_psk(struct noise_hs *hs, const uint8_t psk[NOISE_KEY_LEN]);

/**
 * noise_write(hs, payload, plen, out, outmax, outlen):
 * Write the next handshake message, carrying the ${plen} bytes at
 * ${payload}, to ${out} (room for ${outmax} bytes; NOISE_MSG_MAX is
 * always enough for an empty payload) and its length to ${*outlen}.
 * Returns 0, or -1 if it is not our turn, the message does not fit
 * ${outmax} or NOISE_MSG_MAX, or a key is refused.
 */
int noise_write(struct noise_hs *hs, const uint8_t *payload, size_t plen,
    uint8_t *out, size_t outmax, size_t *outlen);

/**
 * noise_read_head(hs, in, inlen):
 * Read the head of the peer's next handshake message, the ${inlen} bytes
 * at ${in}: its tokens up to, not including, its psk token (message 3:
 * "s" and "se"; a message without one: all its tokens), and not its
 * payload.  Then noise_remote_static gives the key of a message 3, and
 * noise_read with the same message reads the rest.  Nothing read so far
 * depends on the psk: a responder that tries several (noise_set_psk)
 * reads the head once and each try from a copy of ${hs}, so that the
 * Diffie-Hellman of "se" is done once.  Returns 0, or -1 as noise_read
 * does, or if a head of this message was read already.
 */
int noise_read_head(struct noise_hs *hs, const uint8_t *in, size_t inlen);

/**
 * noise_read(hs, in, inlen, payload, pmax, plen):
 * Read the peer's next handshake message, the ${inlen} bytes at ${in}
 * (or the rest of it after noise_read_head: the same bytes again): its
 * payload goes to ${payload} (room for ${pmax} bytes; must not overlap
 * ${in}) and its length to ${*plen}.  Returns 0, or -1 if it is the
 * peer's turn to read, the message is too short or too long, fails
 * authentication, or carries an all-zero or low-order key.
 */
int noise_read(struct noise_hs *hs, const uint8_t *in, size_t inlen,
    uint8_t *payload, size_t pmax, size_t *plen);

/**
 * noise_done(hs):
 * Non-zero once all three messages are written and read (until split).
 */
int noise_done(const struct noise_hs *hs);

/**
 * noise_remote_static(hs):
 * The peer's static public key (NOISE_KEY_LEN bytes) once a message that
 * carries it, or its head (noise_read_head), has been read and
 * authenticated, else NULL.  Only once the handshake is done has the peer
 * proved that it holds the private key (and the psk).
 */
const uint8_t *noise_remote_static(const struct noise_hs *hs);

/**
 * noise_my_turn(hs):
 * Non-zero if the next step is ours to write; 0 if it is the peer's, or
 * the handshake is done or dead.
 */
int noise_my_turn(const struct noise_hs *hs);

/**
 * noise_split(hs, c1, c2, k3, h):
 * Once done: the transport keys ${c1} (initiator to responder) and ${c2}
 * (responder to initiator), and the handshake hash ${h} (the channel
 * binding).  If ${k3} is not NULL, a third key for the caller's own use
 * (not a transport key): the first 32 bytes of the third output of
 * Split's HKDF, HKDF(ck, zerolen, 3), whose first two outputs give c1
 * and c2 unchanged.  Wipes ${hs}.  Calling it before noise_done is a
 * bug: it aborts.
 */
void noise_split(struct noise_hs *hs, uint8_t c1[NOISE_KEY_LEN],
    uint8_t c2[NOISE_KEY_LEN], uint8_t *k3, uint8_t h[NOISE_HASH_LEN]);

/**
 * noise_wipe(hs):
 * Wipe every secret of ${hs} and leave it dead.
 */
void noise_wipe(struct noise_hs *hs);

/**
 * noise_cs_encrypt(cs, ad, adlen, in, len, out):
 * Seal the ${len} bytes at ${in} under ${cs}'s key and next nonce (4 zero
 * bytes, then ${cs->n} little-endian), with ${adlen} bytes of associated
 * data: ${len} + NOISE_TAG_LEN bytes to ${out} (may be ${in}).  Returns 0,
 * or -1 once the nonces are used up (n = 2^64 - 1).
 */
int noise_cs_encrypt(struct noise_cs *cs, const uint8_t *ad, size_t adlen,
    const uint8_t *in, size_t len, uint8_t *out);

/**
 * noise_cs_decrypt(cs, ad, adlen, in, len, out):
 * Open the ${len} >= NOISE_TAG_LEN bytes at ${in}: ${len} - NOISE_TAG_LEN
 * bytes to ${out} (may be ${in}).  Returns 0, or -1 if they fail
 * authentication (the nonce is then not used up, and ${out} is zeroed:
 * opened in place, the bytes are gone) or the nonces are.
 */
int noise_cs_decrypt(struct noise_cs *cs, const uint8_t *ad, size_t adlen,
    const uint8_t *in, size_t len, uint8_t *out);

/**
 * noise_rekey(k):
 * Replace ${k} with Noise's REKEY(k) for ChaChaPoly: the first 32 bytes
 * of k's encryption of 32 zero bytes under nonce 2^64 - 1.
 */
void noise_rekey(uint8_t k[NOISE_KEY_LEN]);

#endif /* !NOISE_H */
