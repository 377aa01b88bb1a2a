/*
 * Unit tests for daemon/auth: the link proofs.  The known answers were
 * computed independently (Python's hmac module) from the framing that
 * rstreamd-protocol(7) describes, so they pin the wire format down.
 */
#include <stdint.h>
#include <string.h>

#include "auth.h"
#include "tap.h"

static void
unhex(const char *h, uint8_t *out, size_t n)
{
	size_t i;
	unsigned v;

	for (i = 0; i < n; i++) {
		v = 0;
		for (int k = 0; k < 2; k++) {
			char c = h[2 * i + (size_t)k];

			v = v * 16 + (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
		}
		out[i] = (uint8_t)v;
	}
}

int
main(void)
{
	uint8_t key[32], longkey[200], hellos[AUTH_HELLOS_LEN];
	uint8_t p[WIRE_AUTH_LEN], want[WIRE_AUTH_LEN], q[WIRE_AUTH_LEN];
	size_t i;

	ok(auth_init() == 0, "libsodium initialises");
	for (i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)i;
	for (i = 0; i < sizeof(hellos); i++)
		hellos[i] = (uint8_t)(i * 3 + 1);

	auth_proof(key, sizeof(key), 1, hellos, p);
	unhex("dcd635eb6b40f3ab6a88dd4827d3267e0b8b1f2a0f6e7059adc76f3754d919b4",
	    want, sizeof(want));
	ok(memcmp(p, want, sizeof(p)) == 0, "initiator proof: known answer");
	ok(auth_check(key, sizeof(key), 1, hellos, p) == 0,
	    "the initiator's proof checks as the initiator's");
	ok(auth_check(key, sizeof(key), 0, hellos, p) != 0,
	    "but not as the responder's (no reflection)");

	auth_proof(key, sizeof(key), 0, hellos, p);
	unhex("48089739b1f0e6095fc852702bb9d10bd53556d35b5e5386c47a24ee8fcaa5cb",
	    want, sizeof(want));
	ok(memcmp(p, want, sizeof(p)) == 0, "responder proof: known answer");

	key[31] ^= 1;
	ok(auth_check(key, sizeof(key), 0, hellos, p) != 0,
	    "one bit of key different: refused");
	key[31] ^= 1;
	hellos[20] ^= 1;
	ok(auth_check(key, sizeof(key), 0, hellos, p) != 0,
	    "another nonce (another link): refused");
	hellos[20] ^= 1;
	hellos[63] ^= 0x80;
	ok(auth_check(key, sizeof(key), 0, hellos, p) != 0,
	    "the last byte of the responder's hello is covered");
	hellos[63] ^= 0x80;
	memcpy(q, p, sizeof(q));
	q[31] ^= 1;
	ok(auth_check(key, sizeof(key), 0, hellos, q) != 0,
	    "a proof with one bit flipped is refused");

	/* Keys longer than the hash block are hashed first (RFC 2104). */
	memset(longkey, 0x5c, sizeof(longkey));
	auth_proof(longkey, sizeof(longkey), 1, hellos, p);
	ok(auth_check(longkey, sizeof(longkey), 1, hellos, p) == 0,
	    "a 200-byte key works");
	ok(auth_check(longkey, 199, 1, hellos, p) != 0,
	    "and all of its bytes count");
	return (tap_done());
}
