/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include <string.h>

#include <sodium.h>

#include "auth.h"
#include "seal.h"

/* Equal lengths, so neither label is a prefix of the other's input. */
static const char label_initiator[] = "rstream-auth-v1-initiator";
static const char label_responder[] = "rstream-auth-v1-responder";

int
auth_init(void)
{

	/* The sealing AEADs too, before any link waits for them. */
	return (sodium_init() < 0 || seal_init() != 0 ? -1 : 0);
}

void
auth_proof(const uint8_t *key, size_t keylen, int initiator,
    const uint8_t hellos[AUTH_HELLOS_LEN], uint8_t proof[WIRE_AUTH_LEN])
{
	crypto_auth_hmacsha256_state st;
	const char *label = initiator ? label_initiator : label_responder;

	crypto_auth_hmacsha256_init(&st, key, keylen);
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)label,
	    sizeof(label_initiator) - 1);
	crypto_auth_hmacsha256_update(&st, hellos, AUTH_HELLOS_LEN);
	crypto_auth_hmacsha256_final(&st, proof);
	sodium_memzero(&st, sizeof(st));
}

int
auth_check(const uint8_t *key, size_t keylen, int initiator,
    const uint8_t hellos[AUTH_HELLOS_LEN], const uint8_t proof[WIRE_AUTH_LEN])
{
	uint8_t want[WIRE_AUTH_LEN];
	int rc;

	auth_proof(key, keylen, initiator, hellos, want);
	rc = crypto_verify_32(want, proof) == 0 ? 0 : -1;
	sodium_memzero(want, sizeof(want));
	return (rc);
}

/* Versions 2 to 4. */
static const char label_resume_secret[] = "rstream-resume-v2-secret";
static const char label_resume_proof[] = "rstream-resume-v2-proof";
/* Version 5: the roles' labels have equal lengths, as auth's do. */
static const char label_v5_secret[] = "rstream-resume-v5-secret";
static const char label_v5_ratchet[] = "rstream-resume-v5-ratchet";
static const char label_v5_initiator[] = "rstream-resume-v5-initiator";
static const char label_v5_responder[] = "rstream-resume-v5-responder";
/* Version 10. */
static const char label_v10_token[] = "rstream-resume-v10-token";

#define LABEL(l)	(l), sizeof(l) - 1

/* HMAC-SHA-256 keyed with ${key} over ${label} and both hellos. */
static void
mac(const uint8_t *key, size_t keylen, const char *label, size_t labellen,
    const uint8_t hellos[AUTH_HELLOS_LEN], uint8_t out[WIRE_AUTH_LEN])
{
	crypto_auth_hmacsha256_state st;
	static const uint8_t none[1];

	crypto_auth_hmacsha256_init(&st, keylen ? key : none, keylen);
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)label, labellen);
	crypto_auth_hmacsha256_update(&st, hellos, AUTH_HELLOS_LEN);
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(&st, sizeof(st));
}

/*
 * HKDF-SHA-256 (RFC 5869) for one 32-byte block: extract with salt
 * ${salt} (${saltlen} bytes; 0: none, which is 32 zero bytes) from the
 * input keying material ${ikm}, then expand with info ${label} || both
 * hellos.  ${out} may be ${salt}: the salt is read first.
 */
static void
hkdf(const uint8_t *salt, size_t saltlen, const uint8_t *ikm, size_t ikmlen,
    const char *label, size_t labellen, const uint8_t hellos[AUTH_HELLOS_LEN],
    uint8_t out[AUTH_SECRET_LEN])
{
	crypto_auth_hmacsha256_state st;
	uint8_t prk[crypto_auth_hmacsha256_BYTES];
	static const uint8_t none[1], one[1] = { 1 };

	crypto_auth_hmacsha256_init(&st, saltlen ? salt : none, saltlen);
	if (ikmlen > 0)
		crypto_auth_hmacsha256_update(&st, ikm, ikmlen);
	crypto_auth_hmacsha256_final(&st, prk);
	crypto_auth_hmacsha256_init(&st, prk, sizeof(prk));
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)label, labellen);
	crypto_auth_hmacsha256_update(&st, hellos, AUTH_HELLOS_LEN);
	crypto_auth_hmacsha256_update(&st, one, sizeof(one));
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(prk, sizeof(prk));
	sodium_memzero(&st, sizeof(st));
}

void
auth_resume_secret(unsigned version, const uint8_t *key, size_t keylen,
    const uint8_t hellos[AUTH_HELLOS_LEN], uint8_t secret[AUTH_SECRET_LEN])
{

	if (version >= AUTH_RESUME_RATCHET)
		hkdf(NULL, 0, key, keylen, LABEL(label_v5_secret), hellos,
		    secret);
	else
		mac(key, keylen, LABEL(label_resume_secret), hellos, secret);
}

void
auth_resume_next(uint8_t secret[AUTH_SECRET_LEN], const uint8_t *key,
    size_t keylen, const uint8_t hellos[AUTH_HELLOS_LEN])
{

	hkdf(secret, AUTH_SECRET_LEN, key, keylen, LABEL(label_v5_ratchet),
	    hellos, secret);
}

void
auth_resume_token(const uint8_t secret[AUTH_SECRET_LEN],
    uint8_t token[WIRE_NONCE_LEN])
{
	uint8_t out[crypto_auth_hmacsha256_BYTES];

	crypto_auth_hmacsha256(out, (const uint8_t *)label_v10_token,
	    sizeof(label_v10_token) - 1, secret);
	memcpy(token, out, WIRE_NONCE_LEN);
	sodium_memzero(out, sizeof(out));
}

void
auth_resume_proof(unsigned version, int initiator,
    const uint8_t secret[AUTH_SECRET_LEN],
    const uint8_t hellos[AUTH_HELLOS_LEN], uint8_t proof[WIRE_AUTH_LEN])
{

	if (!initiator)
		mac(secret, AUTH_SECRET_LEN, LABEL(label_v5_responder), hellos,
		    proof);
	else if (version >= AUTH_RESUME_RATCHET)
		mac(secret, AUTH_SECRET_LEN, LABEL(label_v5_initiator), hellos,
		    proof);
	else
		mac(secret, AUTH_SECRET_LEN, LABEL(label_resume_proof), hellos,
		    proof);
}

int
auth_resume_check(unsigned version, int initiator,
    const uint8_t secret[AUTH_SECRET_LEN],
    const uint8_t hellos[AUTH_HELLOS_LEN], const uint8_t proof[WIRE_AUTH_LEN])
{
	uint8_t want[WIRE_AUTH_LEN];
	int rc;

	auth_resume_proof(version, initiator, secret, hellos, want);
	rc = crypto_verify_32(want, proof) == 0 ? 0 : -1;
	sodium_memzero(want, sizeof(want));
	return (rc);
}
