/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for daemon/secmem: blocks are zeroed, aligned, writable to
 * their last byte, and in mappings that the kernel leaves out of core
 * dumps ("dd" among the VmFlags of /proc/self/smaps), which ordinary heap
 * memory is not; freed blocks are unmapped.
 */
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secmem.h"
#include "tap.h"

/*
 * The VmFlags of the mapping that holds ${p}, into ${flags}: 1 when found,
 * 0 when no mapping holds it, -1 when smaps cannot be read.
 */
#define LINE_MAX_ 512
static int
vmflags(const void *p, char flags[LINE_MAX_])
{
	uintptr_t a = (uintptr_t)p;
	unsigned long lo, hi;
	char line[LINE_MAX_];
	int in = 0;
	FILE *f;

	if ((f = fopen("/proc/self/smaps", "r")) == NULL)
		return (-1);
	while (fgets(line, sizeof(line), f) != NULL) {
		/* A mapping's first line: "LO-HI perms offset dev inode". */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0) {
			memcpy(flags, line + 8, sizeof(line) - 8);
			fclose(f);
			return (1);
		}
	}
	fclose(f);
	return (0);
}

/* True if the mapping that holds ${p} is left out of core dumps. */
static int
dontdump(const void *p)
{
	char flags[LINE_MAX_];

	return (vmflags(p, flags) == 1 &&
	    strstr(flags, " dd") != NULL);
}

int
main(void)
{
	static const size_t sizes[] = { 1, 100, 4096, 12345, 70000 };
	char flags[LINE_MAX_];
	uint8_t *p, *heap;
	size_t i, k, zero;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		p = secmem_alloc(sizes[i]);
		ok(p != NULL && (uintptr_t)p % alignof(max_align_t) == 0,
		    "a block of %zu bytes, aligned for any type", sizes[i]);
		if (p == NULL)
			continue;
		for (k = 0, zero = 1; k < sizes[i]; k++)
			zero &= p[k] == 0;
		ok(zero, "comes zeroed");
		memset(p, 0xa5, sizes[i]);
		ok(dontdump(p) && dontdump(p + sizes[i] - 1),
		    "is left out of core dumps, first byte to last");
		secmem_free(p);
		ok(vmflags(p, flags) == 0,
		    "is unmapped when freed");
	}

	/* The check above can tell: heap memory is dumped. */
	heap = malloc(100);
	ok(heap != NULL && vmflags(heap, flags) == 1 &&
	    !dontdump(heap), "malloc's memory is in core dumps");
	free(heap);

	secmem_free(NULL);
	ok(1, "secmem_free(NULL) is a no-op");
	return (tap_done());
}
