/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "engine.h"
#include "wire.h"

#include "conf.h"
#include "conf_int.h"
#include "secmem.h"

/*
 * The configuration as a value: made with every built-in default (what
 * a file that says nothing gets), freed, looked up.  conf_load is
 * confload.c's; the parser's files, in layers, are listed in conf_int.h.
 */

/* What every tunnel gets unless defaults or the tunnel say otherwise. */
static const struct conf_sizes builtin_sizes = {
	.sendbuf = 262144,
	.recvbuf = 262144,
	.ring_min = 16384,
	.max_memory = CONF_MEMORY_SHARE,
	.sq_size = 256,
	.rq_size = 256,
	.inline_size = ENGINE_INLINE_DEFAULT,
	.max_streams = 1024,
	.connect_timeout = 10,
	.idle_timeout = 0,
	.traffic_class = CONF_UNSET,
	.service_level = CONF_UNSET,
	.priority = 4
};

struct conf *
conf_new(const char *path, char *err, size_t errlen)
{
	struct conf *c;
	size_t len;

	/* It holds the keys: out of core dumps, wiped when freed. */
	if ((c = secmem_alloc(sizeof(*c))) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (NULL);
	}
	if ((len = strlen(path)) >= sizeof(c->file)) {
		snprintf(err, errlen, "%.64s...: file name too long", path);
		conf_free(c);
		return (NULL);
	}
	memcpy(c->file, path, len + 1);
	c->log_level = LOG_INFO;
	c->defaults = builtin_sizes;
	strcpy(c->control, CONF_DEFAULT_CONTROL);
	c->control_mode = 0660;
	c->control_gid = -1;
	c->drain_time = CONF_DEFAULT_DRAIN_TIME;
	c->max_links = CONF_DEFAULT_MAX_LINKS;
	c->max_pending = CONF_DEFAULT_MAX_PENDING;
	c->max_pending_per_addr = CONF_DEFAULT_MAX_PENDING_PER_ADDR;
	c->max_connect_rate = CONF_DEFAULT_MAX_CONNECT_RATE;
	c->max_unauth_links = CONF_DEFAULT_MAX_UNAUTH_LINKS;
	c->link_idle_timeout = CONF_DEFAULT_LINK_IDLE_TIMEOUT;
	c->handshake_timeout = CONF_DEFAULT_HANDSHAKE_TIMEOUT;
	c->busy_poll = CONF_DEFAULT_BUSY_POLL;
	c->ack_timeout = CONF_DEFAULT_ACK_TIMEOUT;
	c->retry_count = CONF_DEFAULT_RETRY_COUNT;
	c->max_version = WIRE_VERSION;
	c->ring_pool = CONF_DEFAULT_RING_POOL;
	return (c);
}

void
conf_free(struct conf *c)
{

	if (c == NULL)
		return;
	free(c->allow);
	free(c->peers);
	secmem_free(c->tunnels);
	free(c->listen);
	secmem_free(c);
}

int
conf_key_same(const struct conf_key *x, const struct conf_key *y)
{

	if (!x->set || !y->set)
		return (x->set == y->set);
	return (x->len == y->len && memcmp(x->key, y->key, x->len) == 0);
}

const struct conf_tunnel *
conf_tunnel_find(const struct conf *c, const char *name)
{
	size_t i;

	if (c == NULL || name == NULL)
		return (NULL);
	for (i = 0; i < c->ntunnels; i++)
		if (strcmp(c->tunnels[i].name, name) == 0)
			return (&c->tunnels[i]);
	return (NULL);
}
