#include "config.h"

#include "admit.h"

const char *
admit_setting(enum admit_refusal why)
{
	static const char *const names[ADMIT_N] = {
		[ADMIT_OK] = "admitted",
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
