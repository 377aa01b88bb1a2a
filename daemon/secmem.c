/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <sodium.h>

#include "secmem.h"

/* sodium_malloc puts a block's end against its guard page: a size of
 * whole units of this keeps its start aligned for any type. */
#define UNIT	_Alignof(max_align_t)

int
secmem_init(void)
{

	return (sodium_init() < 0 ? -1 : 0);
}

void *
secmem_alloc(size_t size)
{
	size_t len;
	void *p;

	if (size > SIZE_MAX - UNIT) {
		errno = ENOMEM;
		return (NULL);
	}
	len = (size + UNIT - 1) / UNIT * UNIT;
	if ((p = sodium_malloc(len)) == NULL) {
		errno = ENOMEM;
		return (NULL);
	}
	/* sodium_malloc fills it with garbage, to show a use before a set. */
	memset(p, 0, len);
	return (p);
}

void
secmem_free(void *p)
{

	sodium_free(p);
}
