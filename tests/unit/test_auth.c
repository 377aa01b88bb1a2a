/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/crypto/auth: the link proofs and the resume secrets.
 * The known answers were computed independently (Python's hmac module;
 * HKDF as RFC 5869 gives it, checked against its test case 1) from the
 * framing that rstreamd-protocol(7) describes, so they pin the wire
 * format down.
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

/* Equal? */
static int
same(const uint8_t *a, const char *hex)
{
	uint8_t want[32];

	unhex(hex, want, sizeof(want));
	return (memcmp(a, want, sizeof(want)) == 0);
}

/*
 * The resume secrets: known answers, both sides of a chain of links in
 * step, each link's secret its own, and no proof good as another.
 */
static void
test_resume(const uint8_t key[32], const uint8_t h1[AUTH_HELLOS_LEN])
{
	uint8_t h[AUTH_HELLOS_LEN], c[AUTH_SECRET_LEN], sv[AUTH_SECRET_LEN];
	uint8_t seen[6][AUTH_SECRET_LEN], p[WIRE_AUTH_LEN], q[WIRE_AUTH_LEN];
	uint8_t nokey[AUTH_SECRET_LEN];
	uint8_t tok[WIRE_NONCE_LEN], want[WIRE_NONCE_LEN];
	size_t i;
	int n, k, agree = 1, fresh = 1, labels = 1;

	for (i = 0; i < sizeof(h); i++)
		h[i] = (uint8_t)(i * 5 + 7);

	/* Versions 2 to 4, as they always were. */
	auth_resume_secret(4, key, 32, h1, c);
	ok(same(c, "076cbb55695a28eec47aa1e514a06a3a03ce524c2c3b30f28d19de84"
	    "a4475efa"), "version 4: the secret, known answer");
	auth_resume_proof(4, 1, c, h, p);
	ok(same(p, "ef646ccbbbceaee650d41cd0157301bde1738c3684f41dccdac8c0b5"
	    "5ac56d2f"), "version 4: the initiator's proof, known answer");
	ok(auth_resume_check(2, 1, c, h, p) == 0 &&
	    auth_resume_check(5, 1, c, h, p) != 0,
	    "it checks at versions 2 to 4, not at 5");

	/* Version 5. */
	auth_resume_secret(5, key, 32, h1, c);
	ok(same(c, "02c7df0ffa7f02614bc510c08bad7d9d013e06503d1a6ce4965dda95"
	    "63e136a1"), "version 5: the first link's secret, known answer");
	auth_resume_secret(5, NULL, 0, h1, nokey);
	ok(same(nokey, "765723583cc78c84f5de0b3ac5d7c0014f324bc056f6b0b98aed7"
	    "3f6f21369fd"), "version 5 without a key: known answer");
	auth_resume_proof(5, 1, c, h, p);
	ok(same(p, "c9280dd9c1d9b2cf7f0007201df356557c4d1fe8850956c734c9fdc2"
	    "daf027b6"), "version 5: the initiator's proof, known answer");
	auth_resume_proof(5, 0, c, h, q);
	ok(same(q, "e67dcdf39b800badf3c74e8dc93501d8b0be4f87f715a40b3ce40568"
	    "8ed9ae33"), "version 5: the responder's proof, known answer");
	ok(auth_resume_check(5, 0, c, h, p) != 0 &&
	    auth_resume_check(5, 1, c, h, q) != 0,
	    "neither role's proof checks as the other's (no reflection)");
	/* Version 10: each link's token from its own secret. */
	auth_resume_token(c, tok);
	unhex("4e5f2470440af66227ef11d7f6c7e95d", want, sizeof(want));
	ok(memcmp(tok, want, sizeof(tok)) == 0, "version 10: the first "
	    "link's token, known answer");
	auth_resume_next(c, key, 32, h);
	ok(same(c, "d1298bc9c569ba3da458744d452269a9bd4b2e3974714add4aeee035"
	    "57dfa17c"), "the next link's secret, known answer");
	auth_resume_token(c, tok);
	unhex("00e9eb36accb43ddd7ff8152599908f6", want, sizeof(want));
	ok(memcmp(tok, want, sizeof(tok)) == 0, "version 10: the next "
	    "link's token, known answer: another");

	/*
	 * A chain of five more links, each side deriving on its own: they
	 * agree, prove to each other, and no secret comes back.
	 */
	auth_resume_secret(5, key, 32, h1, c);
	auth_resume_secret(5, key, 32, h1, sv);
	memcpy(seen[0], c, sizeof(c));
	for (n = 1; n < 6; n++) {
		h[0] = (uint8_t)n;		/* the new link's nonces */
		auth_resume_proof(5, 1, c, h, p);
		auth_resume_proof(5, 0, sv, h, q);
		agree &= auth_resume_check(5, 1, sv, h, p) == 0 &&
		    auth_resume_check(5, 0, c, h, q) == 0;
		labels &= memcmp(p, q, sizeof(p)) != 0;
		auth_resume_next(c, key, 32, h);
		auth_resume_next(sv, key, 32, h);
		agree &= memcmp(c, sv, sizeof(c)) == 0;
		for (k = 0; k < n; k++)
			fresh &= memcmp(c, seen[k], sizeof(c)) != 0;
		memcpy(seen[n], c, sizeof(c));
		/* The old secret no longer proves anything. */
		fresh &= auth_resume_check(5, 1, c, h, p) != 0;
	}
	ok(agree, "both sides of a chain derive the same secrets and "
	    "accept each other's proofs, link after link");
	ok(fresh, "no two links of the chain share a secret");
	ok(labels, "the two roles' proofs differ on every link");

	/* The key counts: the same hellos without it, another chain. */
	auth_resume_secret(5, key, 32, h1, c);
	auth_resume_next(c, key, 32, h);
	memcpy(sv, nokey, sizeof(sv));
	auth_resume_next(sv, NULL, 0, h);
	ok(memcmp(c, sv, sizeof(c)) != 0 && memcmp(c, nokey, 32) != 0,
	    "a keyless chain and a keyed one never meet");
	auth_resume_secret(5, key, 32, h1, c);
	memcpy(sv, c, sizeof(sv));
	auth_resume_next(c, key, 32, h);
	auth_resume_next(sv, key, 31, h);
	ok(memcmp(c, sv, sizeof(c)) != 0, "every byte of the key counts");
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

	test_resume(key, hellos);
	return (tap_done());
}
