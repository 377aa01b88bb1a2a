#include <sodium.h>

#include "auth.h"

/* Equal lengths, so neither label is a prefix of the other's input. */
static const char label_initiator[] = "rstream-auth-v1-initiator";
static const char label_responder[] = "rstream-auth-v1-responder";

int
auth_init(void)
{

	return (sodium_init() < 0 ? -1 : 0);
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

static const char label_resume_secret[] = "rstream-resume-v2-secret";
static const char label_resume_proof[] = "rstream-resume-v2-proof";

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

void
auth_resume_secret(const uint8_t *key, size_t keylen,
    const uint8_t hellos[AUTH_HELLOS_LEN], uint8_t secret[AUTH_SECRET_LEN])
{

	mac(key, keylen, label_resume_secret, sizeof(label_resume_secret) - 1,
	    hellos, secret);
}

void
auth_resume_proof(const uint8_t secret[AUTH_SECRET_LEN],
    const uint8_t hellos[AUTH_HELLOS_LEN], uint8_t proof[WIRE_AUTH_LEN])
{

	mac(secret, AUTH_SECRET_LEN, label_resume_proof,
	    sizeof(label_resume_proof) - 1, hellos, proof);
}

int
auth_resume_check(const uint8_t secret[AUTH_SECRET_LEN],
    const uint8_t hellos[AUTH_HELLOS_LEN], const uint8_t proof[WIRE_AUTH_LEN])
{
	uint8_t want[WIRE_AUTH_LEN];
	int rc;

	auth_resume_proof(secret, hellos, want);
	rc = crypto_verify_32(want, proof) == 0 ? 0 : -1;
	sodium_memzero(want, sizeof(want));
	return (rc);
}
