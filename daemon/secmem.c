/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/mman.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "secmem.h"

/* Before each block: its mapping's length; the block starts after it, at
 * an offset that keeps max_align_t's alignment. */
struct head {
	size_t len;
};
#define HEAD_SIZE	(((sizeof(struct head) + _Alignof(max_align_t) - 1) / \
	_Alignof(max_align_t)) * _Alignof(max_align_t))

void *
secmem_alloc(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len;
	struct head *h;

	if (size > SIZE_MAX - HEAD_SIZE - page) {
		errno = ENOMEM;
		return (NULL);
	}
	len = (size + HEAD_SIZE + page - 1) / page * page;
	h = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS, -1, 0);
	if (h == MAP_FAILED) {
		errno = ENOMEM;
		return (NULL);
	}
	/* A kernel without it (before 3.4) dumps the block: nothing else. */
	(void)madvise(h, len, MADV_DONTDUMP);
	h->len = len;
	return ((uint8_t *)h + HEAD_SIZE);
}

void
secmem_free(void *p)
{
	struct head *h;
	size_t len;

	if (p == NULL)
		return;
	h = (struct head *)(void *)((uint8_t *)p - HEAD_SIZE);
	len = h->len;
	explicit_bzero(h, len);
	munmap(h, len);
}
