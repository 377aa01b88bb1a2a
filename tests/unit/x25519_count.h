/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * x25519_count: libsodium's X25519 operations (crypto_scalarmult and
 * crypto_scalarmult_base), counted in x25519_ops.  Defined in the test
 * program that includes this header (one file of it), they are the ones
 * the objects linked into it call; x25519_count_init finds libsodium's
 * own, which they call in turn (test_noise, link-sim).
 */
#ifndef X25519_COUNT_H
#define X25519_COUNT_H

#include <dlfcn.h>
#include <stdlib.h>

#include <sodium.h>

typedef int x25519_fn(unsigned char *, const unsigned char *,
    const unsigned char *);
typedef int x25519_base_fn(unsigned char *, const unsigned char *);
static x25519_fn *x25519_real;
static x25519_base_fn *x25519_real_base;
static unsigned long x25519_ops;
/*
 * A test that runs loops sets x25519_turn to loop_exclusive: then
 * x25519_excl counts the operations made in exclusive turns (link-sim).
 */
static int (*x25519_turn)(void);
static unsigned long x25519_excl;

static inline void
x25519_count(void)
{
	x25519_ops++;
	if (x25519_turn != NULL && x25519_turn())
		x25519_excl++;
}

int
crypto_scalarmult(unsigned char *q, const unsigned char *n,
    const unsigned char *p)
{
	x25519_count();
	return (x25519_real(q, n, p));
}

int
crypto_scalarmult_base(unsigned char *q, const unsigned char *n)
{
	x25519_count();
	return (x25519_real_base(q, n));
}

/* Find libsodium's own; aborts without them. */
static inline void
x25519_count_init(void)
{
	*(void **)&x25519_real = dlsym(RTLD_NEXT, "crypto_scalarmult");
	*(void **)&x25519_real_base = dlsym(RTLD_NEXT,
	    "crypto_scalarmult_base");
	if (x25519_real == NULL || x25519_real_base == NULL)
		abort();
}

#endif /* !X25519_COUNT_H */
