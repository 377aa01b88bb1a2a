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
 * Resume (see rstreamd-protocol(7), "Resume"): a link's resume secret is
 * the HMAC, keyed with its key (an empty key on a link without one), of a
 * label and the hellos of the link where its streams were first opened;
 * the proof that asks a new link to take them over is the HMAC, keyed
 * with that secret, of another label and the new link's hellos.  Neither
 * side ever sends the secret.
 */
#define AUTH_SECRET_LEN		32

/**
 * auth_resume_secret(key, keylen, hellos, secret):
 * The resume secret of the link with private data ${hellos}.
 */
void auth_resume_secret(const uint8_t *key, size_t keylen,
    const uint8_t hellos[AUTH_HELLOS_LEN], uint8_t secret[AUTH_SECRET_LEN]);

/**
 * auth_resume_proof(secret, hellos, proof):
 * The proof asking the new link with private data ${hellos} to resume
 * the streams that ${secret} belongs to.
 */
void auth_resume_proof(const uint8_t secret[AUTH_SECRET_LEN],
    const uint8_t hellos[AUTH_HELLOS_LEN], uint8_t proof[WIRE_AUTH_LEN]);

/**
 * auth_resume_check(secret, hellos, proof):
 * 0 if ${proof} is auth_resume_proof's, in constant time; else -1.
 */
int auth_resume_check(const uint8_t secret[AUTH_SECRET_LEN],
    const uint8_t hellos[AUTH_HELLOS_LEN], const uint8_t proof[WIRE_AUTH_LEN]);

#endif /* !AUTH_H */
