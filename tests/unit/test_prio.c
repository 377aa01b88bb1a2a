/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for daemon/prio: which share of its window a link keeps
 * beside tunnels of other priorities on its device and on others.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "prio.h"
#include "tap.h"

int
main(void)
{
	static struct prio_table t;
	char name[PRIO_NAME_LEN + 8];
	int a, b, i;

	a = prio_dev(&t, "rxe0");
	b = prio_dev(&t, "rxe1");
	ok(a == 0 && b == 1 && prio_dev(&t, "rxe0") == 0,
	    "one row per device, found again by name");

	/* Alone, or beside equals, a link keeps its whole window. */
	ok(prio_share(&t, a, 4, 1, 1000) == 1000, "a busy link alone: 1000");
	ok(prio_share(&t, a, 4, 1, 1001) == 1000, "beside an equal: 1000");

	/* A busy link of priority 16 on the device: 4/16 for the rest. */
	ok(prio_share(&t, a, 16, 1, 1002) == 1000,
	    "the highest keeps all of its window");
	ok(prio_share(&t, a, 4, 1, 1003) == 250,
	    "priority 4 beside a busy 16 keeps 250 per mille");
	ok(prio_share(&t, a, 8, 0, 1004) == 500,
	    "priority 8 keeps 500 even while idle");
	ok(prio_share(&t, b, 4, 1, 1005) == 1000,
	    "a link on another device is not restrained");
	/* Its row has known priority 4 alone; a 6 comes: the 4 sees it. */
	ok(prio_share(&t, b, 6, 1, 1006) == 1000 &&
	    prio_share(&t, b, 4, 1, 1007) == 666,
	    "a priority marked later than the lower one restrains it");

	/* The 16 went quiet: PRIO_SPAN_MS later the rest get it all back. */
	ok(prio_share(&t, a, 4, 1, 1002 + PRIO_SPAN_MS - 1) == 250,
	    "still restrained just before the span ends");
	ok(prio_share(&t, a, 4, 1, 1002 + PRIO_SPAN_MS) == 1000,
	    "free again once the higher tunnel was quiet for the span");

	/* Out of range: no row, no priority, no restraint. */
	ok(prio_share(&t, -1, 4, 1, 5000) == 1000, "no row: 1000");
	ok(prio_share(&t, a, 0, 1, 5000) == 1000 &&
	    prio_share(&t, a, PRIO_HIGHEST + 1, 1, 5000) == 1000,
	    "a priority outside %d-%d: 1000", PRIO_LOWEST, PRIO_HIGHEST);

	/* The table holds PRIO_DEVS devices and refuses long names. */
	for (i = 2; i < PRIO_DEVS; i++) {
		snprintf(name, sizeof(name), "dev%d", i);
		prio_dev(&t, name);
	}
	ok(prio_dev(&t, "one-too-many") == -1, "a full table says -1");
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	ok(prio_dev(&t, name) == -1, "a name too long for a row says -1");
	return (tap_done());
}
