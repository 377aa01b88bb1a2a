/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Unit tests for daemon/admit: which incoming link may come in, and which
 * idle one makes room. */
#include <stdint.h>
#include <string.h>

#include "admit.h"
#include "tap.h"

static const struct admit_limits lim = {
	.max_links = 4, .max_pending = 2, .max_pending_per_addr = 1,
	.max_unauth_links = 2, .idle_ms = 1000
};

/* The limit the last ask's victim made room under. */
static enum admit_refusal room;

static enum admit_refusal
ask(const struct admit_limits *l, const struct admit_link *ls, size_t n,
    int auth, size_t *victim, uint32_t *value)
{

	return (admit_link(l, ls, n, auth, 10000, victim, &room, value));
}

/* Requests from ${key} at ${now} until one is refused: how many went. */
static int
burst(struct admit_rate *r, unsigned key, uint64_t now)
{
	uint8_t k[ADMIT_KEY_LEN];
	int n = 0;

	memset(k, 0, sizeof(k));
	k[14] = (uint8_t)(key >> 8);
	k[15] = (uint8_t)key;
	while (n < 10000 && admit_rate_take(r, k, 32, now))
		n++;
	return (n);
}

static void
test_rate(void)
{
	static struct admit_rate r;
	int i, n;

	ok(burst(&r, 1, 1000) == 64, "at 32 a second, a source may send a "
	    "burst of 64 connect requests");
	ok(burst(&r, 1, 1000) == 0, "then none at the same instant");
	ok(burst(&r, 1, 1500) == 16, "half a second later, "
	    "half a second's worth");
	ok(burst(&r, 2, 1500) == 64, "another source has its "
	    "own bucket");
	ok(burst(&r, 1, 100000) == 64, "a quiet source's bucket "
	    "fills up to the burst, no more");
	/* Fill the table with new sources: source 1, heard from at 100000,
	 * gives its entry up only once all older ones have. */
	for (i = 0, n = 0; i < ADMIT_RATE_SOURCES; i++)
		n += burst(&r, 1000 + (unsigned)i, 200000 + (uint64_t)i) ==
		    64;
	ok(n == ADMIT_RATE_SOURCES, "each new source starts with a full bucket");
	ok(burst(&r, 1, 300000) == 64, "a source that lost its "
	    "entry starts afresh");
}

int
main(void)
{
	struct admit_link ls[8];
	struct admit_limits l2;
	size_t v;
	uint32_t val;

	memset(ls, 0, sizeof(ls));
	ok(ask(&lim, ls, 0, 1, &v, &val) == ADMIT_OK && v == ADMIT_NONE &&
	    room == ADMIT_OK, "the first link comes in, nothing to close");

	/* Handshaking links. */
	ls[0].pending = 1;
	ls[1].pending = 1;
	ls[1].same_addr = 1;
	ok(ask(&lim, ls, 2, 1, &v, &val) == ADMIT_MAX_PENDING && val == 2,
	    "max_pending counts every link still handshaking");
	ls[0].pending = 0;
	ok(ask(&lim, ls, 2, 1, &v, &val) == ADMIT_MAX_PENDING_PER_ADDR &&
	    val == 1, "max_pending_per_addr counts those from one address");
	ls[1].same_addr = 0;
	ok(ask(&lim, ls, 2, 1, &v, &val) == ADMIT_OK,
	    "another address's handshake does not count against it");
	memset(ls, 0, sizeof(ls));

	/* Unauthenticated links have their own cap; keyed ones get in. */
	ls[0].unauth = ls[1].unauth = 1;
	ls[0].idle_since = ls[1].idle_since = 9500;	/* idle, not long */
	ok(ask(&lim, ls, 2, 0, &v, &val) == ADMIT_MAX_UNAUTH_LINKS &&
	    val == 2, "a third unauthenticated link is refused");
	ok(ask(&lim, ls, 2, 1, &v, &val) == ADMIT_OK && v == ADMIT_NONE,
	    "while a keyed one still comes in");
	ls[1].idle_since = 8000;			/* idle 2 s */
	ok(ask(&lim, ls, 2, 0, &v, &val) == ADMIT_OK && v == 1 &&
	    room == ADMIT_MAX_UNAUTH_LINKS,
	    "an unauthenticated link idle long enough makes room for another");
	l2 = lim;
	l2.idle_ms = 0;
	ok(ask(&l2, ls, 2, 0, &v, &val) == ADMIT_MAX_UNAUTH_LINKS,
	    "with link_idle_timeout 0 nobody makes room");
	l2 = lim;
	l2.max_unauth_links = 4;
	ok(ask(&l2, ls, 2, 0, &v, &val) == ADMIT_OK && v == ADMIT_NONE,
	    "max_unauth_links at max_links adds nothing");

	/* max_links: the one idle longest, unauthenticated first. */
	memset(ls, 0, sizeof(ls));
	ls[0].idle_since = 1000;			/* keyed, idle longest */
	ls[1].idle_since = 5000;
	ls[1].unauth = 1;				/* unauthenticated */
	ls[2].idle_since = 0;				/* busy */
	ls[3].idle_since = 9900;			/* idle, not long */
	ok(ask(&lim, ls, 4, 1, &v, &val) == ADMIT_OK && v == 1 &&
	    room == ADMIT_MAX_LINKS,
	    "at max_links an idle unauthenticated link goes first");
	ok(ask(&lim, ls, 4, 0, &v, &val) == ADMIT_OK && v == 1 &&
	    room == ADMIT_MAX_LINKS, "an unauthenticated newcomer under "
	    "max_unauth_links: the room is made under max_links");
	ls[1].unauth = 0;
	ok(ask(&lim, ls, 4, 1, &v, &val) == ADMIT_OK && v == 0,
	    "else the link idle longest");
	ls[0].idle_since = ls[1].idle_since = 0;
	ok(ask(&lim, ls, 4, 1, &v, &val) == ADMIT_MAX_LINKS && val == 4 &&
	    v == ADMIT_NONE && room == ADMIT_OK,
	    "busy links and short idlers keep their slots");

	/* One eviction per admission: still over max_links after it, no. */
	memset(ls, 0, sizeof(ls));
	l2 = lim;
	l2.max_links = 2;
	l2.max_unauth_links = 1;
	ls[0].unauth = 1;
	ls[0].idle_since = 1000;
	ls[1].idle_since = ls[2].idle_since = 1000;
	ok(ask(&l2, ls, 3, 0, &v, &val) == ADMIT_MAX_LINKS &&
	    v == ADMIT_NONE, "over max_links by more than one (after a "
	    "reload lowered it): refused, nothing closed");

	test_rate();

	ok(strcmp(admit_setting(ADMIT_MAX_PENDING_PER_ADDR),
	    "max_pending_per_addr") == 0 && strcmp(admit_setting(
	    ADMIT_NOT_ALLOWED), "not in allow") == 0, "refusals are named");
	return (tap_done());
}
