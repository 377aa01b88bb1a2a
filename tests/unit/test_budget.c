/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/budget: a charge past the limit is refused and
 * changes nothing, 0 means no limit, and threads charging at once never
 * take the count past the limit together: of more attempts than fit,
 * exactly as many as fit succeed.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "budget.h"
#include "tap.h"

#define THREADS	8
#define TRIES	20000
#define LIMIT	50000		/* bytes; charges of 1 and 3 */

static uint64_t used;
static unsigned long taken[THREADS];
static int over;
static int churning = 2;	/* churn threads still running */

static void *
charge(void *arg)
{
	long t = (long)arg;
	uint64_t n = t % 2 ? 3 : 1;
	int k, done;

	/* Until TRIES are made and, once the churn has stopped giving back,
	 * a charge is refused: only then is the count full for this size
	 * (however long the churn held its 1000 bytes). */
	for (k = 0;; k++) {
		done = k >= TRIES &&
		    __atomic_load_n(&churning, __ATOMIC_ACQUIRE) == 0;
		if (budget_take(&used, LIMIT, n) == 0)
			taken[t] += n;
		else if (done)
			break;
		if (budget_now(&used) > LIMIT)
			__atomic_store_n(&over, 1, __ATOMIC_RELAXED);
	}
	return (NULL);
}

/* Takes and gives back at once, all the time: the count stays in bounds. */
static void *
churn(void *arg)
{
	int k;

	(void)arg;
	for (k = 0; k < TRIES; k++) {
		if (budget_take(&used, LIMIT, 1000) == 0) {
			if (budget_now(&used) > LIMIT)
				__atomic_store_n(&over, 1, __ATOMIC_RELAXED);
			budget_give(&used, 1000);
		}
	}
	__atomic_sub_fetch(&churning, 1, __ATOMIC_RELEASE);
	return (NULL);
}

int
main(void)
{
	pthread_t th[THREADS + 2];
	unsigned long sum = 0;
	uint64_t u = 0;
	long t;

	ok(budget_take(&u, 100, 60) == 0 && u == 60, "a charge that fits");
	ok(budget_take(&u, 100, 41) == -1 && u == 60,
	    "one past the limit is refused and changes nothing");
	ok(budget_take(&u, 100, 40) == 0 && u == 100, "up to the limit fits");
	budget_give(&u, 100);
	ok(u == 0 && budget_now(&u) == 0, "given back");
	ok(budget_take(&u, 100, UINT64_MAX) == -1 && u == 0,
	    "a charge larger than the limit is refused");
	ok(budget_take(&u, 0, 1ULL << 40) == 0 && u == 1ULL << 40,
	    "0 is no limit");

	for (t = 0; t < 2; t++)
		pthread_create(&th[THREADS + t], NULL, churn, NULL);
	for (t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, charge, (void *)t);
	for (t = 0; t < THREADS + 2; t++)
		pthread_join(th[t], NULL);
	for (t = 0; t < THREADS; t++)
		sum += taken[t];
	ok(!over, "%d threads charging at once never passed the limit",
	    THREADS + 2);
	ok(used == sum && sum <= LIMIT && sum > LIMIT - 3,
	    "what the threads were given is what is counted, and fills "
	    "the limit: %lu of %d", sum, LIMIT);
	return (tap_done());
}
