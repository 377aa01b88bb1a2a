/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ring: byte-ring arithmetic on 64-bit monotonic cursors.
 *
 * A ring of SIZE bytes (a power of two) is described by two cursors that
 * only ever grow: the producer cursor (bytes ever put in) and the consumer
 * cursor (bytes ever taken out).  The byte at cursor c lives at offset
 * c & (SIZE - 1).  Because the cursors are 64-bit they never wrap in
 * practice (2^64 bytes is centuries at any link speed), so "used" is a
 * plain subtraction and a stale cursor is simply a smaller number.
 *
 * No I/O, no allocation: this file only does arithmetic.  Every function
 * expects cursors that satisfy cons <= prod <= cons + size; callers that
 * take cursors from an untrusted peer check them with ring_cursor_valid()
 * first.
 */
#ifndef RING_H
#define RING_H

#include <stdbool.h>
#include <stdint.h>

/* Smallest and largest ring sizes the protocol accepts (both inclusive). */
#define RING_SIZE_MIN	4096u
#define RING_SIZE_MAX	(1u << 30)

/**
 * ring_size_check(size):
 * Return NULL if ${size} is a usable ring size (a power of two from
 * RING_SIZE_MIN to RING_SIZE_MAX), or a static string saying why not
 * ("is not a power of two", "is below the minimum 4096", ...).  Sizes are
 * never rounded: a size the caller cannot use is an error it reports.
 */
const char *ring_size_check(uint64_t size);

/**
 * ring_off(size, c):
 * The offset within the ring of the byte at cursor ${c}.
 */
static inline uint32_t
ring_off(uint32_t size, uint64_t c)
{

	return ((uint32_t)(c & (uint64_t)(size - 1)));
}

/**
 * ring_used(prod, cons):
 * Bytes in the ring: produced but not yet consumed.
 */
static inline uint64_t
ring_used(uint64_t prod, uint64_t cons)
{

	return (prod - cons);
}

/**
 * ring_free(size, prod, cons):
 * Bytes that may still be produced before the ring is full.
 */
static inline uint64_t
ring_free(uint32_t size, uint64_t prod, uint64_t cons)
{

	return ((uint64_t)size - (prod - cons));
}

/**
 * ring_contig(size, c, n):
 * How many of the ${n} bytes starting at cursor ${c} are contiguous in
 * memory, i.e. lie before the end of the ring.  A span that crosses the
 * end is handled as this many bytes, then the rest from offset 0.
 */
static inline uint64_t
ring_contig(uint32_t size, uint64_t c, uint64_t n)
{
	uint64_t tail = (uint64_t)size - ring_off(size, c);

	return (n < tail ? n : tail);
}

/**
 * ring_cursor_valid(size, lo, c, hi):
 * True if ${lo} <= ${c} <= ${hi} and ${hi} - ${lo} <= ${size}: the check a
 * receiver applies to a cursor that came from the peer.
 */
bool ring_cursor_valid(uint32_t size, uint64_t lo, uint64_t c, uint64_t hi);

#endif /* !RING_H */
