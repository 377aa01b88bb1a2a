/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * procstat: the process's own figures, as every Prometheus client library
 * exports them (process_*), from /proc/self only: what a service with
 * ProtectProc=invisible and ProcSubset=pid still sees.
 */
#ifndef PROCSTAT_H
#define PROCSTAT_H

#include <stdint.h>

struct procstat {
	int have_stat;			/* /proc/self/stat was read */
	uint64_t cpu_ms;		/* user and system CPU time */
	uint64_t vsize;			/* virtual memory, bytes */
	uint64_t rss;			/* resident memory, bytes */
	int have_fds;			/* /proc/self/fd was read */
	uint64_t open_fds;		/* descriptors open */
	int have_max_fds;
	uint64_t max_fds;		/* RLIMIT_NOFILE's soft limit */
};

/**
 * procstat_read(ps):
 * The calling process's figures into ${ps}; what cannot be read is left
 * out (have_* 0).  A few small reads of /proc/self (and a directory of
 * one entry per open descriptor).
 */
void procstat_read(struct procstat *ps);

/**
 * procstat_parse_stat(text, ticks, pagesize, ps):
 * The figures of /proc/PID/stat's ${text} (NUL-terminated) into ${ps},
 * the CPU time's clock ticks being 1/${ticks} s and resident memory in
 * pages of ${pagesize} bytes.  Returns 0, or -1 if ${text} is not such a
 * line.
 */
int procstat_parse_stat(const char *text, long ticks, long pagesize,
    struct procstat *ps);

#endif /* !PROCSTAT_H */
