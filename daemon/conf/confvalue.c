/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libconfig.h>

#include "engine.h"
#include "ring.h"
#include "wire.h"

#include "cfg.h"
#include "conf.h"
#include "conf_int.h"
#include "ident.h"

/*
 * The values that mean more than their type and that the top level and
 * tunnels both take: the integer settings of struct conf_sizes (sizes,
 * queue depths, timeouts), in one table; key files; users and groups.
 */

/*
 * Inline data beyond 1 KiB is more than any HCA offers, so a bigger value
 * is a typo, not a wish.  The queue limits are the engine's.
 */
#define INLINE_MAX	1024

/* The integer settings valid both in defaults and in a tunnel. */
static const struct conf_size_key size_keys[] = {
	{ "sendbuf", offsetof(struct conf_sizes, sendbuf), 0, 0, 1 },
	{ "recvbuf", offsetof(struct conf_sizes, recvbuf), 0, 0, 1 },
	{ "ring_min", offsetof(struct conf_sizes, ring_min), 0, 0, 2 },
	{ "max_memory", offsetof(struct conf_sizes, max_memory),
	    0, 1024 * 1024, 0 },
	{ "sq_size", offsetof(struct conf_sizes, sq_size),
	    ENGINE_SQ_MIN, ENGINE_SQ_MAX, 0 },
	{ "rq_size", offsetof(struct conf_sizes, rq_size),
	    ENGINE_RQ_MIN, WIRE_CREDITS_MAX, 0 },
	{ "inline_size", offsetof(struct conf_sizes, inline_size),
	    0, INLINE_MAX, 0 },
	{ "max_streams", offsetof(struct conf_sizes, max_streams),
	    1, WIRE_STREAMS_MAX, 0 },
	{ "connect_timeout", offsetof(struct conf_sizes, connect_timeout),
	    1, 3600, 0 },
	{ "idle_timeout", offsetof(struct conf_sizes, idle_timeout),
	    0, 7 * 86400, 0 },
	{ "resume_time", offsetof(struct conf_sizes, resume_time),
	    0, 3600, 0 },
	{ "min_version", offsetof(struct conf_sizes, min_version),
	    WIRE_VERSION_MIN, WIRE_VERSION, 0 },
	{ "traffic_class", offsetof(struct conf_sizes, traffic_class),
	    0, 255, 0 },
	{ "service_level", offsetof(struct conf_sizes, service_level),
	    0, 15, 0 },
	{ "priority", offsetof(struct conf_sizes, priority), 1, 16, 0 },
	{ NULL, 0, 0, 0, 0 }
};

void
conf_qos_note(const struct cfg *p, const config_setting_t *s,
    const struct conf_size_key *k, struct conf_qos_at *at)
{
	const char *file;
	unsigned int line;
	char *w;

	if (k->off == offsetof(struct conf_sizes, traffic_class))
		w = at->traffic_class;
	else if (k->off == offsetof(struct conf_sizes, service_level))
		w = at->service_level;
	else
		return;
	line = cfg_where(p, s, &file);
	snprintf(w, CONF_WHERE_LEN, "%s:%u", file, line);
}

int
conf_id_parse(const struct cfg *p, const config_setting_t *s,
    const char *name, int group, long *id)
{
	const char *what = group ? "group" : "user";
	struct passwd pw, *pwp = NULL;
	struct group gr, *grp = NULL;
	unsigned long v;
	size_t len;
	char *buf = NULL, *nb;
	int e = ERANGE;

	*id = -1;
	if (name[0] == '\0' || (p->flags & CONF_NO_KEYS))
		return (0);
	if (name[strspn(name, "0123456789")] == '\0') {
		errno = 0;
		v = strtoul(name, NULL, 10);
		if (errno != 0 || v >= UINT32_MAX)
			return (cfg_err(p, s, "%s: %s id %s is out of range",
			    config_setting_name(s), what, name));
		*id = (long)v;
		return (0);
	}
	/* A group of many members takes more than the first guess. */
	for (len = 16384; e == ERANGE && len <= 16 * 1024 * 1024; len *= 4) {
		if ((nb = realloc(buf, len)) == NULL) {
			e = errno;
			break;
		}
		buf = nb;
		e = group ? getgrnam_r(name, &gr, buf, len, &grp) :
		    getpwnam_r(name, &pw, buf, len, &pwp);
	}
	if (e == 0 && (group ? grp != NULL : pwp != NULL))
		*id = group ? (long)grp->gr_gid : (long)pwp->pw_uid;
	free(buf);
	if (*id != -1)
		return (0);
	/* Not found is 0 or one of these, depending on the NSS module. */
	if (e != 0 && e != ENOENT && e != ESRCH && e != EBADF && e != EPERM)
		return (cfg_err(p, s, "%s: cannot look up the %s '%s': %s",
		    config_setting_name(s), what, name, strerror(e)));
	return (cfg_err(p, s, "%s: unknown %s '%s'", config_setting_name(s),
	    what, name));
}

int
conf_size_parse(const struct cfg *p, const config_setting_t *s,
    const struct conf_size_key *k, struct conf_sizes *sz)
{
	long long v;
	const char *why;

	if (cfg_int(s, &v))
		return (cfg_err(p, s, "%s must be an integer", k->name));

	if (k->ring == 2 && v == 0) {
		/* 0: off */
	} else if (k->ring) {
		/* Negative sizes are as much "below the minimum" as 0. */
		why = ring_size_check(v < 0 ? 0 : (uint64_t)v);
		if (why != NULL)
			return (cfg_err(p, s, "%s %lld %s", k->name, v, why));
	} else if (v < k->min) {
		return (cfg_err(p, s, "%s %lld is below the minimum %lld",
		    k->name, v, k->min));
	} else if (v > k->max) {
		return (cfg_err(p, s, "%s %lld is above the maximum %lld",
		    k->name, v, k->max));
	}
	*(uint32_t *)(void *)((char *)sz + k->off) = (uint32_t)v;
	return (0);
}

const struct conf_size_key *
conf_size_find(const char *name)
{
	const struct conf_size_key *k;

	for (k = size_keys; k->name != NULL; k++)
		if (strcmp(k->name, name) == 0)
			return (k);
	return (NULL);
}

int
conf_key_parse(const struct cfg *p, const config_setting_t *s,
    struct conf_key *k, int empty_ok)
{
	char why[2400];
	ssize_t n = 0;
	size_t len = 0;
	uint8_t spare;
	int fd;

	memset(k, 0, sizeof(*k));
	if (cfg_path(p, s, k->file, sizeof(k->file), empty_ok))
		return (-1);
	if (k->file[0] == '\0' || (p->flags & CONF_NO_KEYS))
		return (0);
	if ((fd = ident_open_private(k->file, why, sizeof(why))) < 0)
		return (cfg_err(p, s, "key_file %s", why));
	/* One byte more than allowed (into a spare) tells a too-long file. */
	while (len <= CONF_KEY_MAX) {
		n = len < CONF_KEY_MAX ? read(fd, k->key + len,
		    CONF_KEY_MAX - len) : read(fd, &spare, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (n < 0)
		return (cfg_err(p, s, "key_file %s: cannot read: %s", k->file,
		    strerror(errno)));
	if (len > CONF_KEY_MAX)
		return (cfg_err(p, s, "key_file %s is longer than %d bytes; is "
		    "it the right file?", k->file, CONF_KEY_MAX));
	if (len < CONF_KEY_MIN)
		return (cfg_err(p, s, "key_file %s holds %zu bytes; a key "
		    "needs at least %d random bytes (256 bits), e.g. from "
		    "head -c 32 /dev/urandom", k->file, len, CONF_KEY_MIN));
	k->len = len;
	k->set = 1;
	return (0);
}
