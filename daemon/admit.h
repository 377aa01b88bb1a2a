/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * admit: whether a new incoming link may come in, decided on plain
 * numbers (no links, sockets or clocks), so every rule is unit-tested.
 * cm.c gathers what it knows of its links, asks, and acts on the answer.
 *
 * The rules, in order: max_pending links still handshaking;
 * max_pending_per_addr of those from the new link's address; then, for a
 * link that does not authenticate, max_unauth_links (when it is below
 * max_links); then max_links.  At max_unauth_links or max_links, a link
 * that has carried no stream for idle_ms makes room: an unauthenticated one
 * first, then the one idle longest.
 *
 * Before any of that, each source address may send max_connect_rate
 * connect requests a second (twice that at once): a flood from one
 * address is turned away before it costs more than a lookup here.
 */
#ifndef ADMIT_H
#define ADMIT_H

#include <stddef.h>
#include <stdint.h>

/* Why an incoming link is turned away before it costs anything. */
enum admit_refusal {
	ADMIT_OK = 0,
	ADMIT_RATE,			/* too many requests from one address */
	ADMIT_NOT_ALLOWED,		/* allow */
	ADMIT_BAD_HELLO,		/* invalid connect data */
	ADMIT_MAX_PENDING,
	ADMIT_MAX_PENDING_PER_ADDR,
	ADMIT_MAX_UNAUTH_LINKS,
	ADMIT_MAX_LINKS,
	ADMIT_N
};

struct admit_limits {
	uint32_t max_links;
	uint32_t max_pending;
	uint32_t max_pending_per_addr;
	uint32_t max_unauth_links;
	uint64_t idle_ms;		/* link_idle_timeout; 0: none gives way */
};

/* An incoming link that is there already, as admission sees it. */
struct admit_link {
	int pending;			/* still handshaking */
	int same_addr;			/* from the new link's address */
	int unauth;			/* its peer does not authenticate */
	uint64_t idle_since;		/* up with no stream since; 0: not so */
};

/* No link needs to make room. */
#define ADMIT_NONE	((size_t)-1)

/**
 * admit_link(lim, links, n, auth, now, victim, value):
 * May a new link (${auth}: its peer authenticates) join the ${n} ${links}
 * at time ${now}?  ADMIT_OK, with ${*victim} the index of a link to close
 * first to make room and ${*room} the limit it makes room under
 * (ADMIT_MAX_UNAUTH_LINKS or ADMIT_MAX_LINKS), or ${*victim} ADMIT_NONE
 * and ${*room} ADMIT_OK; else the limit in the way, with its value in
 * ${*value}.
 */
enum admit_refusal admit_link(const struct admit_limits *lim,
    const struct admit_link *links, size_t n, int auth, uint64_t now,
    size_t *victim, enum admit_refusal *room, uint32_t *value);

#define ADMIT_RATE_SOURCES	256
#define ADMIT_KEY_LEN		16

/* Token buckets per source address; all zero is empty. */
struct admit_rate {
	struct admit_source {
		uint8_t key[ADMIT_KEY_LEN];
		int used;
		uint64_t last_ms;	/* when its tokens were counted */
		uint64_t mtokens;	/* requests it may send, x 1000 */
	} s[ADMIT_RATE_SOURCES];
};

/**
 * admit_rate_take(r, key, per_s, now):
 * A connect request from the source address ${key} (16 bytes; IPv4 as
 * v4-mapped IPv6) at ${now} ms: 1 if it is within ${per_s} a second,
 * 2 * ${per_s} at once; else 0.  A source not in the table takes the
 * entry heard from longest ago (with a full bucket).
 */
int admit_rate_take(struct admit_rate *r, const uint8_t key[ADMIT_KEY_LEN],
    uint32_t per_s, uint64_t now);

/**
 * admit_setting(why):
 * The setting behind refusal ${why} ("max_links", "not in allow", ...).
 */
const char *admit_setting(enum admit_refusal why);

#endif /* !ADMIT_H */
