/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * rtt.h: what rr and verbs_rr share: the clock they time round trips
 * with, and the line they print, which the benchmark scripts read
 * ("median X us, p99 Y us, mean Z us").
 */
#ifndef RTT_H
#define RTT_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Microseconds on the monotonic clock. */
static inline double
rtt_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3);
}

static inline int
rtt_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

/*
 * Sort the ${n} times at ${rtt} (us), which took ${secs_us} in all, and
 * print rr's line for ${n} ${what} of ${size} bytes.
 */
static inline void
rtt_report(double *rtt, int n, const char *what, int size, double secs_us)
{
	double sum = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += rtt[i];
	qsort(rtt, (size_t)n, sizeof(double), rtt_cmp);
	printf("rr: %d %s of %d bytes: median %.1f us, p99 %.1f us, "
	    "mean %.1f us, %.1f per second\n", n, what, size, rtt[n / 2],
	    rtt[n - 1 - n / 100], sum / n, n / (secs_us / 1e6));
}

#endif /* !RTT_H */
