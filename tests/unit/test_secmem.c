/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for daemon/secmem: blocks are zeroed, aligned, writable to
 * their last byte, and in mappings that the kernel leaves out of core
 * dumps ("dd" among the VmFlags of /proc/self/smaps), which ordinary heap
 * memory is not; freed blocks are unmapped.  libsodium's guards hold: in
 * a child, a write just past a block's end faults (SIGSEGV), and a write
 * just before its start kills the process when the block is freed (the
 * canary).  A block is locked into RAM where RLIMIT_MEMLOCK leaves room,
 * and given all the same where it leaves none.
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include <signal.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "secmem.h"
#include "tap.h"

/* AddressSanitizer turns mlock into a no-op that succeeds. */
#if defined(__SANITIZE_ADDRESS__)
#define MLOCK_NOOP	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MLOCK_NOOP	1
#endif
#endif
#ifndef MLOCK_NOOP
#define MLOCK_NOOP	0
#endif

/* What secmem_alloc makes of ${size}: the block runs to there. */
#define ROUND(size)	(((size) + alignof(max_align_t) - 1) / \
	alignof(max_align_t) * alignof(max_align_t))

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

/* True if the mapping that holds ${p} has VmFlag ${flag} ("dd", "lo"). */
static int
has_flag(const void *p, const char *flag)
{
	char flags[LINE_MAX_], want[8];

	snprintf(want, sizeof(want), " %s", flag);
	return (vmflags(p, flags) == 1 && strstr(flags, want) != NULL);
}

/* True if the mapping that holds ${p} is left out of core dumps. */
static int
dontdump(const void *p)
{

	return (has_flag(p, "dd"));
}

enum child_end {
	CHILD_EXITED,		/* it said it got to the end */
	CHILD_SIGNALED,		/* killed by a signal after it wrote */
	CHILD_OTHER		/* anything else: it never wrote, ... */
};

/*
 * Fork; the child writes byte ${at} of a fresh block of ${size} bytes
 * (0xa5, or before the block the complement of what is there), says so
 * on a pipe, then, with ${free_it}, frees the block, and says it got to
 * the end.  How it ended; the signal in ${*sig}.  (SIGSEGV
 * goes back to its default in the child, which dumps no core, so that a
 * sanitizer's handler does not turn the death into an exit.)
 */
static enum child_end
child_writes(size_t size, ptrdiff_t at, int free_it, int *sig)
{
	static const struct rlimit none = { 0, 0 };
	struct sigaction sa;
	char said[2] = { 0, 0 };
	uint8_t *p;
	int fds[2], st;
	pid_t pid;
	ssize_t n;

	*sig = 0;
	if (pipe(fds) != 0 || (pid = fork()) < 0)
		abort();
	if (pid == 0) {
		close(fds[0]);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		(void)sigaction(SIGSEGV, &sa, NULL);
		(void)setrlimit(RLIMIT_CORE, &none);
		if ((p = secmem_alloc(size)) == NULL)
			_exit(2);
		/* Before the start lies libsodium's canary, random per
		 * process: a fixed byte would leave it unchanged one run in
		 * 256, and the free would not notice.  Flip its bits. */
		if (at < 0)
			*(volatile uint8_t *)(p + at) =
			    (uint8_t)~*(volatile uint8_t *)(p + at);
		else
			*(volatile uint8_t *)(p + at) = 0xa5;
		if (write(fds[1], "w", 1) != 1)
			_exit(2);
		if (free_it)
			secmem_free(p);
		(void)write(fds[1], "e", 1);
		_exit(0);
	}
	close(fds[1]);
	n = read(fds[0], said, 1);
	if (n == 1 && read(fds[0], said + 1, 1) != 1)
		said[1] = 0;
	close(fds[0]);
	if (waitpid(pid, &st, 0) != pid)
		abort();
	if (WIFSIGNALED(st))
		*sig = WTERMSIG(st);
	printf("# child: wrote %s, ended %s, %s %d\n", said[0] == 'w' ? "yes" :
	    "no", said[1] == 'e' ? "yes" : "no", WIFSIGNALED(st) ? "signal" :
	    "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	if (said[0] == 'w' && said[1] == 'e' && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0)
		return (CHILD_EXITED);
	if (said[0] == 'w' && said[1] != 'e' && WIFSIGNALED(st))
		return (CHILD_SIGNALED);
	return (CHILD_OTHER);
}

static void
test_blocks(void)
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
		for (k = 0, zero = 1; k < ROUND(sizes[i]); k++)
			zero &= p[k] == 0;
		ok(zero, "comes zeroed, to its rounded end");
		memset(p, 0xa5, ROUND(sizes[i]));
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
}

static void
test_guards(void)
{
	static const size_t sizes[] = { 1, 100, 4096 };
	size_t i;
	int sig;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		ok(child_writes(sizes[i], (ptrdiff_t)ROUND(sizes[i]) - 1, 1,
		    &sig) == CHILD_EXITED, "a block of %zu bytes: its last "
		    "byte (%zu) is written, the block freed", sizes[i],
		    ROUND(sizes[i]) - 1);
		ok(child_writes(sizes[i], (ptrdiff_t)ROUND(sizes[i]), 0,
		    &sig) == CHILD_OTHER && sig == SIGSEGV, "a block of %zu "
		    "bytes: a write just past its end faults (SIGSEGV)",
		    sizes[i]);
		ok(child_writes(sizes[i], -1, 1, &sig) == CHILD_SIGNALED,
		    "a block of %zu bytes: a write just before its start "
		    "goes through, and kills the process when the block is "
		    "freed (signal %d)", sizes[i], sig);
	}
}

static void
test_memlock(void)
{
	struct rlimit rl, none;
	uint8_t *p;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0)
		abort();
	if (MLOCK_NOOP)
		printf("# under AddressSanitizer, mlock locks nothing: not "
		    "checking the lock\n");
	else if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= (1 << 20)) {
		p = secmem_alloc(100);
		ok(p != NULL && has_flag(p, "lo"), "with room under "
		    "RLIMIT_MEMLOCK, a block is locked into RAM");
		secmem_free(p);
	} else
		printf("# RLIMIT_MEMLOCK %llu: not checking the lock\n",
		    (unsigned long long)rl.rlim_cur);

	/* With none, it is not locked, but given all the same. */
	none = rl;
	none.rlim_cur = 0;
	if (setrlimit(RLIMIT_MEMLOCK, &none) != 0)
		abort();
	p = secmem_alloc(100);
	ok(p != NULL && p[0] == 0 && p[99] == 0 && dontdump(p),
	    "without room under RLIMIT_MEMLOCK, a block still comes, zeroed, "
	    "left out of core dumps");
	secmem_free(p);
	(void)setrlimit(RLIMIT_MEMLOCK, &rl);
}

int
main(void)
{

	if (secmem_init() != 0) {
		printf("Bail out! secmem_init\n");
		return (1);
	}
	test_blocks();
	test_guards();
	test_memlock();
	return (tap_done());
}
