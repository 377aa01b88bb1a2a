/*
 * admit: whether a new incoming link may come in, decided on plain
 * numbers (no links, sockets or clocks), so every rule is unit-tested.
 * link.c gathers what it knows of its links, asks, and acts on the answer.
 *
 * The rules, in order: max_pending links still handshaking;
 * max_pending_per_addr of those from the new link's address; then, for a
 * link that does not authenticate, max_unauth_links (when it is below
 * max_links); then max_links.  At max_unauth_links or max_links, a link
 * that has carried no stream for idle_ms makes room: an unauthenticated one
 * first, then the one idle longest.
 */
#ifndef ADMIT_H
#define ADMIT_H

#include <stddef.h>
#include <stdint.h>

/* Why an incoming link is turned away before it costs anything. */
enum admit_refusal {
	ADMIT_OK = 0,
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

/**
 * admit_setting(why):
 * The setting behind refusal ${why} ("max_links", "not in allow", ...).
 */
const char *admit_setting(enum admit_refusal why);

#endif /* !ADMIT_H */
