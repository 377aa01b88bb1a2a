/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * secmem: memory for what holds keys and secrets (the configuration, each
 * tunnel's copy of it, a link's proved key and resume secret).
 *
 * Each block comes from libsodium's guarded allocator (sodium_malloc):
 * pages of its own, with a page that faults on any access right after
 * its end and another before its start, a canary just before it that
 * sodium_free checks (a process whose block was written before its start
 * dies there), marked MADV_DONTDUMP so that a core dump leaves it out,
 * locked into RAM (mlock) where RLIMIT_MEMLOCK allows (Linux counts locked
 * pages apart from the rings' pinned ones, each against the limit, so
 * these take nothing from RDMA registration), and wiped before its pages
 * go back.  Whole objects live there rather than the key bytes alone,
 * so that copying a struct by value, as the configuration's users do,
 * copies into memory of the same kind.  Meant for a few objects per
 * tunnel and link, not for the data path: each block costs its size
 * rounded up to pages, three pages more, and several system calls.
 */
#ifndef SECMEM_H
#define SECMEM_H

#include <stddef.h>

/**
 * secmem_init():
 * Start libsodium, whose allocator secmem's blocks come from: once, before
 * any other secmem call (libsodium aborts on one before it).  0, or -1
 * when it cannot start (it found no source of randomness for the
 * canary).
 */
int secmem_init(void);

/**
 * secmem_alloc(size):
 * ${size} zeroed bytes, aligned for any type, in pages of their own that
 * core dumps leave out.  The block runs to ${size} rounded up to a
 * multiple of alignof(max_align_t), where the guard page starts.  NULL
 * (errno ENOMEM) when out of memory.
 */
void *secmem_alloc(size_t size);

/**
 * secmem_free(p):
 * Wipe the block ${p} from secmem_alloc and give its pages back; the
 * process dies if the canary before ${p} was overwritten.  NULL is a
 * no-op.
 */
void secmem_free(void *p);

#endif /* !SECMEM_H */
