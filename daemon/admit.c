/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <string.h>

#include "admit.h"

const char *
admit_setting(enum admit_refusal why)
{
	static const char *const names[ADMIT_N] = {
		[ADMIT_OK] = "admitted",
		[ADMIT_RATE] = "connect rate",
		[ADMIT_NOT_ALLOWED] = "not in allow",
		[ADMIT_BAD_HELLO] = "invalid connect data",
		[ADMIT_MAX_PENDING] = "max_pending",
		[ADMIT_MAX_PENDING_PER_ADDR] = "max_pending_per_addr",
		[ADMIT_MAX_UNAUTH_LINKS] = "max_unauth_links",
		[ADMIT_MAX_LINKS] = "max_links",
	};

	return ((unsigned)why < ADMIT_N ? names[why] : "?");
}

/*
 * The link that gives its slot up: idle long enough, unauthenticated ones
 * first (only those when ${unauth_only}), then the one idle longest.
 */
static size_t
pick_idle(const struct admit_limits *lim, const struct admit_link *links,
    size_t n, int unauth_only, uint64_t now)
{
	size_t i, v = ADMIT_NONE;

	if (lim->idle_ms == 0)
		return (ADMIT_NONE);
	for (i = 0; i < n; i++) {
		if (links[i].idle_since == 0 ||
		    now - links[i].idle_since < lim->idle_ms ||
		    (unauth_only && !links[i].unauth))
			continue;
		if (v == ADMIT_NONE || (links[i].unauth && !links[v].unauth) ||
		    (links[i].unauth == links[v].unauth &&
		    links[i].idle_since < links[v].idle_since))
			v = i;
	}
	return (v);
}

enum admit_refusal
admit_link(const struct admit_limits *lim, const struct admit_link *links,
    size_t n, int auth, uint64_t now, size_t *victim,
    enum admit_refusal *room, uint32_t *value)
{
	uint32_t pending = 0, from = 0, unauth = 0, total = (uint32_t)n;
	size_t i;

	*victim = ADMIT_NONE;
	*room = ADMIT_OK;
	for (i = 0; i < n; i++) {
		pending += links[i].pending != 0;
		from += links[i].pending && links[i].same_addr;
		unauth += links[i].unauth != 0;
	}
	if (pending >= lim->max_pending) {
		*value = lim->max_pending;
		return (ADMIT_MAX_PENDING);
	}
	if (from >= lim->max_pending_per_addr) {
		*value = lim->max_pending_per_addr;
		return (ADMIT_MAX_PENDING_PER_ADDR);
	}
	/* At or above max_links, max_unauth_links is max_links' business. */
	if (!auth && lim->max_unauth_links < lim->max_links &&
	    unauth >= lim->max_unauth_links) {
		if ((*victim = pick_idle(lim, links, n, 1, now)) ==
		    ADMIT_NONE) {
			*value = lim->max_unauth_links;
			return (ADMIT_MAX_UNAUTH_LINKS);
		}
		*room = ADMIT_MAX_UNAUTH_LINKS;
		total--;
	}
	if (total >= lim->max_links) {
		if (*victim != ADMIT_NONE ||
		    (*victim = pick_idle(lim, links, n, 0, now)) ==
		    ADMIT_NONE) {
			*victim = ADMIT_NONE;
			*room = ADMIT_OK;
			*value = lim->max_links;
			return (ADMIT_MAX_LINKS);
		}
		*room = ADMIT_MAX_LINKS;
	}
	return (ADMIT_OK);
}

int
admit_rate_take(struct admit_rate *r, const uint8_t key[ADMIT_KEY_LEN],
    uint32_t per_s, uint64_t now)
{
	struct admit_source *src = NULL, *old = &r->s[0];
	uint64_t add, full = (uint64_t)per_s * 2000;
	size_t i;

	for (i = 0; i < ADMIT_RATE_SOURCES && src == NULL; i++) {
		if (r->s[i].used &&
		    memcmp(r->s[i].key, key, ADMIT_KEY_LEN) == 0)
			src = &r->s[i];
		else if (!r->s[i].used ||
		    (old->used && r->s[i].last_ms < old->last_ms))
			old = &r->s[i];
	}
	if (src == NULL) {
		src = old;
		memcpy(src->key, key, ADMIT_KEY_LEN);
		src->used = 1;
		src->last_ms = now;
		src->mtokens = full;
	}
	/* per_s a second is that many thousandths a millisecond. */
	add = now > src->last_ms ? (now - src->last_ms) * per_s : 0;
	src->last_ms = now > src->last_ms ? now : src->last_ms;
	src->mtokens = add >= full - src->mtokens ? full :
	    src->mtokens + add;
	if (src->mtokens < 1000)
		return (0);
	src->mtokens -= 1000;
	return (1);
}
