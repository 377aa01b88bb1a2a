/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * secmem: memory for what holds keys and secrets (the configuration, each
 * tunnel's copy of it, a link's proved key and resume secret).
 *
 * Each block has pages of its own, marked MADV_DONTDUMP so that a core
 * dump leaves it out, and is wiped before its pages go back.  Whole
 * objects live there rather than the key bytes alone, so that copying a
 * struct by value, as the configuration's users do, copies into memory
 * of the same kind.  Meant for a few objects per tunnel and link, not for
 * the data path: each block costs at least a page and an mmap.
 */
#ifndef SECMEM_H
#define SECMEM_H

#include <stddef.h>

/**
 * secmem_alloc(size):
 * ${size} zeroed bytes, aligned for any type, in pages of their own that
 * core dumps leave out.  NULL (errno ENOMEM) when out of memory.
 */
void *secmem_alloc(size_t size);

/**
 * secmem_free(p):
 * Wipe the block ${p} from secmem_alloc and give its pages back.  NULL is
 * a no-op.
 */
void secmem_free(void *p);

#endif /* !SECMEM_H */
