/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * auth: the proofs that authenticate a link (see rstreamd-protocol(7),
 * "Authentication").
 *
 * A proof is HMAC-SHA-256, keyed with the pre-shared key (the key file's
 * bytes), over a label naming the prover's role followed by both sides'
 * connect private data, the initiator's first.  Each side's private data
 * carries a fresh random nonce, so a proof is good for one link only, and
 * the role label keeps a proof from being reflected back at its sender.
 * The cryptography is libsodium's; nothing here is hand-made but the
 * framing.
 */
#ifndef AUTH_H
#define AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/* What a proof covers besides the label: both hellos. */
#define AUTH_HELLOS_LEN		(2 * WIRE_HELLO_LEN)

/**
 * auth_init():
 * Initialise the crypto library.  Returns 0, or -1 if it cannot be used.
 */
int auth_init(void);

/**
 * auth_proof(key, keylen, initiator, hellos, proof):
 * Compute the proof of the side that is the link's initiator (if
 * ${initiator}) or responder, with key ${key} of ${keylen} bytes, for the
 * link whose private data is ${hellos}.
 */
void auth_proof(const uint8_t *key, size_t keylen, int initiator,
    const uint8_t hellos[AUTH_HELLOS_LEN], uint8_t proof[WIRE_AUTH_LEN]);

/**
 * auth_check(key, keylen, initiator, hellos, proof):
 * Return 0 if ${proof} is the right proof for that role, key and link, in
 * time that does not depend on where it differs; else -1.
 */
int auth_check(const uint8_t *key, size_t keylen, int initiator,
    const uint8_t hellos[AUTH_HELLOS_LEN], const uint8_t proof[WIRE_AUTH_LEN]);

/*
 * Resume (see rstreamd-protocol(7), "Resume"): every link has a resume
 * secret that never travels, known to both its sides; a new link asks
 * to take over a failed link's streams by proving it holds the secret of
 * their chain, bound to the new link's hellos.  The cryptography is
 * libsodium's HMAC-SHA-256, and HKDF-SHA-256 (RFC 5869) built from it;
 * every input starts with a label of its own.
 *
 * Versions 2 to 4: a link's secret is the HMAC, keyed with its key (an
 * empty key on a link without one), of a label and its hellos; a link
 * that takes the streams over inherits the secret, so a whole chain has
 * the first link's; only the initiator proves it.
 *
 * Version 5: the first link's secret is HKDF with no salt, the key as
 * input keying material and a label and the hellos as info; each link
 * that takes a chain's streams over replaces it with HKDF, salted with
 * the chain's secret until then, of the key, with another label and its
 * own hellos (a ratchet: no two links of a chain share a secret, and a
 * secret once replaced is gone).  Both sides prove the chain's secret
 * before the new link replaces it, with labels for each role, so neither
 * side's proof is good as the other's.
 *
 * Version 10: a link's token, which names its streams in a resume, is
 * an HMAC of a label keyed with its secret rather than the chain's first
 * responder nonce, so that one who reads the fabric cannot tell which
 * links are of one chain.
 */
#define AUTH_SECRET_LEN		32

/* The version from which the responder proves the secret too, and each
 * link of a chain has a secret of its own. */
#define AUTH_RESUME_RATCHET	5

/* The version from which each link's token, too, is its own: derived
 * from its secret (auth_resume_token), not its first link's nonce. */
#define AUTH_RESUME_TOKEN	10

/**
 * auth_resume_token(secret, token):
 * Version 10: the token of the link whose resume secret is ${secret}.
 */
void auth_resume_token(const uint8_t secret[AUTH_SECRET_LEN],
    uint8_t token[WIRE_NONCE_LEN]);

/**
 * auth_resume_secret(version, key, keylen, hellos, secret):
 * The resume secret of a link of protocol ${version} with key ${key}
 * (${keylen} bytes; 0: none) and private data ${hellos}, that takes no
 * streams over.
 */
void auth_resume_secret(unsigned version, const uint8_t *key, size_t keylen,
    const uint8_t hellos[AUTH_HELLOS_LEN], uint8_t secret[AUTH_SECRET_LEN]);

/**
 * auth_resume_next(secret, key, keylen, hellos):
 * Version 5: replace ${secret}, a chain's secret, with that of the link
 * with key ${key} (${keylen} bytes; 0: none) and private data ${hellos}
 * that took the chain's streams over.  Nothing derived from the old one
 * is left behind.
 */
void auth_resume_next(uint8_t secret[AUTH_SECRET_LEN], const uint8_t *key,
    size_t keylen, const uint8_t hellos[AUTH_HELLOS_LEN]);

/**
 * auth_resume_proof(version, initiator, secret, hellos, proof):
 * The proof, by the new link's initiator (if ${initiator}) or responder,
 * that it holds the chain's ${secret}, for the new link of protocol
 * ${version} with private data ${hellos}.  Below version 5 only the
 * initiator proves; a responder's proof is version 5's whatever
 * ${version} says.
 */
void auth_resume_proof(unsigned version, int initiator,
    const uint8_t secret[AUTH_SECRET_LEN],
    const uint8_t hellos[AUTH_HELLOS_LEN], uint8_t proof[WIRE_AUTH_LEN]);

/**
 * auth_resume_check(version, initiator, secret, hellos, proof):
 * 0 if ${proof} is auth_resume_proof's for the same arguments, in
 * constant time; else -1.
 */
int auth_resume_check(unsigned version, int initiator,
    const uint8_t secret[AUTH_SECRET_LEN],
    const uint8_t hellos[AUTH_HELLOS_LEN],
    const uint8_t proof[WIRE_AUTH_LEN]);

#endif /* !AUTH_H */
