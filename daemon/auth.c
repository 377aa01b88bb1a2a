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
