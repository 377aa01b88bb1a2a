/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * tap.h: a minimal Test Anything Protocol producer for the unit tests.
 *
 * automake's tap-driver.sh reads the output; every check is one "ok" or
 * "not ok" line, and a failed check prints where it failed so the log is
 * enough to find it.
 */
#ifndef TAP_H
#define TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_n;
static int tap_failed;

static void tap_plan(int n) __attribute__((unused));
static int tap_done(void) __attribute__((unused));

static void
tap_plan(int n)
{
	printf("1..%d\n", n);
}

static int __attribute__((format(printf, 4, 5), unused))
tap_ok(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("%s %d - ", cond ? "ok" : "not ok", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		tap_failed++;
		printf("# failed at %s:%d\n", file, line);
	}
	fflush(stdout);
	return (cond);
}

/* ok(cond, "description %d", args...) */
#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* Trailing plan: the number of checks need not be known in advance. */
static int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return (tap_failed ? 1 : 0);
}

#endif /* !TAP_H */
