/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include <libconfig.h>

#include "cfg.h"
#include "conf.h"
#include "conf_int.h"
#include "wire.h"

/*
 * The top level of rstreamd.conf: its settings, in one table, and the
 * few that are read in an order of their own (log_level, defaults,
 * listen, source, key_file).  The identity settings are confpeer.c's,
 * the tunnels conftunnel.c's.
 */

static const struct {
	const char *name;
	int level;
} log_levels[] = {
	{ "error", LOG_ERR },
	{ "warning", LOG_WARNING },
	{ "notice", LOG_NOTICE },
	{ "info", LOG_INFO },
	{ "debug", LOG_DEBUG },
	{ NULL, 0 }
};

static int
is_digit(char ch)
{

	return (ch >= '0' && ch <= '9');
}

static int
parse_log_level(const struct cfg *p, const config_setting_t *s,
    struct conf *c)
{
	const char *v;
	size_t i;

	if ((v = cfg_str(p, s)) == NULL)
		return (-1);
	for (i = 0; log_levels[i].name != NULL; i++) {
		if (strcmp(v, log_levels[i].name) == 0) {
			c->log_level = log_levels[i].level;
			return (0);
		}
	}
	return (cfg_err(p, s, "log_level '%s' is not one of error, warning, "
	    "notice, info, debug", v));
}

static int
parse_defaults(struct cfg *p, const config_setting_t *g, struct conf *c)
{
	const struct conf_size_key *k;
	const config_setting_t *s;
	int i;

	if (!config_setting_is_group(g))
		return (cfg_err(p, g, "defaults must be a group { ... }"));
	p->scope = "defaults";
	for (i = 0; i < config_setting_length(g); i++) {
		s = config_setting_get_elem(g, (unsigned int)i);
		if ((k = conf_size_find(config_setting_name(s))) == NULL)
			return (cfg_err_plain(p, s,
			    "unknown setting '%s' in defaults",
			    config_setting_name(s)));
		if (conf_size_parse(p, s, k, &c->defaults))
			return (-1);
		conf_qos_note(p, s, k, &c->defaults_qos_at);
	}
	p->scope = NULL;
	return (0);
}

static int
parse_listen(const struct cfg *p, const config_setting_t *s,
    struct conf *c)
{
	const config_setting_t *e;
	struct conf_listen *l;
	char why[256];
	const char *v;
	size_t i, j, n;

	if (cfg_strings_count(p, s, &n))
		return (-1);
	if (n == 0)
		return (cfg_err(p, s, "listen is an empty list"));
	if ((c->listen = calloc(n, sizeof(*c->listen))) == NULL)
		return (cfg_err(p, s, "listen: %s", strerror(errno)));

	for (i = 0; i < n; i++) {
		if ((v = cfg_strings_get(p, s, i, &e)) == NULL)
			return (-1);
		l = &c->listen[i];
		if (conf_parse_hostport(v, CONF_DEFAULT_PORT, &l->addr, why,
		    sizeof(why)))
			return (cfg_err(p, e, "listen '%s': %s", v, why));
		l->line = (int)config_setting_source_line(e);
		if (l->line == 0)
			l->line = (int)config_setting_source_line(s);
		l->addr.line = l->line;
		for (j = 0; j < i; j++) {
			if (strcasecmp(c->listen[j].addr.host,
			    l->addr.host) == 0 &&
			    strcmp(c->listen[j].addr.port, l->addr.port) == 0)
				return (cfg_err(p, e, "listen '%s' is given "
				    "twice", v));
		}
		c->nlisten = i + 1;
	}
	return (0);
}

/*
 * The local address outgoing links start from.  Routing picks one when it
 * is not given; on hosts with several RDMA devices it says which to use.
 */
static int
parse_source(const struct cfg *p, const config_setting_t *s,
    struct conf *c)
{
	unsigned char buf[sizeof(struct in6_addr)];
	const char *v;

	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return (cfg_err(p, s, "source must be a string"));
	v = config_setting_get_string(s);
	if (inet_pton(AF_INET, v, buf) != 1 && inet_pton(AF_INET6, v, buf) != 1)
		return (cfg_err(p, s, "source '%s' is not an IPv4 or IPv6 "
		    "address", v));
	if (strlen(v) >= sizeof(c->source.host))
		return (cfg_err(p, s, "source '%s' is too long", v));
	c->source.kind = CONF_ADDR_TCP;
	strcpy(c->source.host, v);
	snprintf(c->source.text, sizeof(c->source.text), "%s", v);
	c->has_source = 1;
	return (0);
}

/*
 * The top-level settings, in one table: how each is read, into which
 * field.  G_LATER ones are read after the loop over the file, in an order
 * of their own (defaults before tunnels, wherever the file puts them).
 */
enum global_kind { G_UINT, G_PATH, G_PATH_OR_EMPTY, G_GROUP, G_MODE,
    G_ALLOW, G_METRICS, G_LATER };

struct global {
	const char *name;
	enum global_kind kind;
	size_t off;			/* in struct conf */
	size_t size;			/* G_PATH*, G_STRING: the buffer */
	long long min, max;		/* G_UINT */
	const char *unit;		/* G_UINT */
};

#define FIELD(f)	offsetof(struct conf, f), sizeof(((struct conf *)0)->f)
static const struct global globals[] = {
	{ "log_file", G_PATH, FIELD(log_file), 0, 0, NULL },
	{ "control", G_PATH_OR_EMPTY, FIELD(control), 0, 0, NULL },
	{ "control_mode", G_MODE, FIELD(control_mode), 0, 0, NULL },
	{ "control_group", G_GROUP, FIELD(control_group), 0, 0, NULL },
	{ "metrics_listen", G_METRICS, FIELD(metrics_listen), 0, 0, NULL },
	{ "drain_time", G_UINT, FIELD(drain_time), 0, CONF_MAX_DRAIN_TIME,
	    "seconds" },
	{ "max_links", G_UINT, FIELD(max_links), 1, 4096, "links" },
	{ "max_pending", G_UINT, FIELD(max_pending), 1, 1024, "links" },
	{ "max_pending_per_addr", G_UINT, FIELD(max_pending_per_addr), 1,
	    1024, "links" },
	{ "max_connect_rate", G_UINT, FIELD(max_connect_rate), 1, 100000,
	    "connect requests a second" },
	{ "max_unauth_links", G_UINT, FIELD(max_unauth_links), 0, 4096,
	    "links" },
	{ "link_idle_timeout", G_UINT, FIELD(link_idle_timeout), 0, 86400,
	    "seconds" },
	{ "handshake_timeout", G_UINT, FIELD(handshake_timeout), 1, 300,
	    "seconds" },
	{ "ack_timeout", G_UINT, FIELD(ack_timeout), CONF_MIN_ACK_TIMEOUT,
	    CONF_MAX_ACK_TIMEOUT, "(the exponent of 4.096 us * 2^N)" },
	{ "retry_count", G_UINT, FIELD(retry_count), 1, 7, "retries" },
	{ "max_version", G_UINT, FIELD(max_version), WIRE_VERSION_MIN,
	    WIRE_VERSION, "(a protocol version)" },
	{ "ring_pool", G_UINT, FIELD(ring_pool), 0, CONF_MAX_RING_POOL,
	    "bytes" },
	{ "max_memory", G_UINT, FIELD(max_memory), 0, 1024 * 1024, "MiB" },
	{ "workers", G_UINT, FIELD(workers), 0, CONF_MAX_WORKERS, "threads" },
	{ "busy_poll", G_UINT, FIELD(busy_poll), 0, CONF_MAX_BUSY_POLL,
	    "microseconds" },
	{ "allow", G_ALLOW, 0, 0, 0, 0, NULL },
	{ "listen", G_LATER, 0, 0, 0, 0, NULL },
	{ "key_file", G_LATER, 0, 0, 0, 0, NULL },
	{ "identity_file", G_LATER, 0, 0, 0, 0, NULL },
	{ "peers", G_LATER, 0, 0, 0, 0, NULL },
	{ "peers_file", G_LATER, 0, 0, 0, 0, NULL },
	{ "source", G_LATER, 0, 0, 0, 0, NULL },
	{ "log_level", G_LATER, 0, 0, 0, 0, NULL },
	{ "defaults", G_LATER, 0, 0, 0, 0, NULL },
	{ "tunnels", G_LATER, 0, 0, 0, 0, NULL },
};
#undef FIELD

static const struct global *
global_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(globals) / sizeof(globals[0]); i++)
		if (strcmp(globals[i].name, name) == 0)
			return (&globals[i]);
	return (NULL);
}

static int parse_allow(const struct cfg *, const config_setting_t *,
    struct conf *);

/*
 * metrics_listen: where the HTTP metrics endpoint listens, "" for
 * nowhere.  An address, not a name: it says which interface the
 * metrics are open on, and a name could resolve elsewhere tomorrow.
 */
static int
parse_metrics_listen(const struct cfg *p, const config_setting_t *s,
    struct conf_addr *a)
{
	unsigned char buf[sizeof(struct in6_addr)];
	char why[200];
	const char *v;

	memset(a, 0, sizeof(*a));
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return (cfg_err(p, s, "metrics_listen must be a string, such "
		    "as \"127.0.0.1:9477\" (or \"\" for none)"));
	v = config_setting_get_string(s);
	if (v[0] == '\0')
		return (0);
	if (conf_parse_hostport(v, NULL, a, why, sizeof(why)) != 0)
		return (cfg_err(p, s, "metrics_listen '%s': %s (write "
		    "ADDRESS:PORT, such as 127.0.0.1:9477 or [::1]:9477)", v,
		    why));
	if (inet_pton(AF_INET, a->host, buf) != 1 &&
	    inet_pton(AF_INET6, a->host, buf) != 1) {
		memset(a, 0, sizeof(*a));
		return (cfg_err(p, s, "metrics_listen '%s': the host must be "
		    "an IPv4 or IPv6 address (such as 127.0.0.1 or [::1]), "
		    "not a name", v));
	}
	return (0);
}

static int
parse_global(const struct cfg *p, const config_setting_t *s,
    const struct global *g, struct conf *c)
{
	char *field = (char *)c + g->off;

	switch (g->kind) {
	case G_UINT:
		return (cfg_uint(p, s, g->min, g->max, g->unit,
		    (uint32_t *)(void *)field));
	case G_PATH:
	case G_PATH_OR_EMPTY:
		return (cfg_path(p, s, field, g->size,
		    g->kind == G_PATH_OR_EMPTY));
	case G_GROUP:
		return (cfg_string(p, s, field, g->size, 0) ||
		    conf_id_parse(p, s, field, 1, &c->control_gid) ? -1 : 0);
	case G_MODE:
		return (cfg_mode(p, s, (uint32_t *)(void *)field));
	case G_ALLOW:
		return (parse_allow(p, s, c));
	case G_METRICS:
		return (parse_metrics_listen(p, s,
		    (struct conf_addr *)(void *)field));
	default:
		return (0);
	}
}

/* The allow list: "ADDRESS" or "ADDRESS/PREFIX", IPv4 or IPv6. */
static int
parse_allow(const struct cfg *p, const config_setting_t *s, struct conf *c)
{
	const config_setting_t *e;
	struct conf_net *a;
	char buf[64], *slash, *end;
	const char *v, *file;
	unsigned long pfx;
	size_t i, n;

	if (cfg_strings_count(p, s, &n))
		return (-1);
	if (n == 0)
		return (cfg_err(p, s, "allow is an empty list (leave it out to "
		    "allow any peer)"));
	if ((c->allow = calloc(n, sizeof(*c->allow))) == NULL)
		return (cfg_err(p, s, "allow: %s", strerror(errno)));
	for (i = 0; i < n; i++) {
		if ((v = cfg_strings_get(p, s, i, &e)) == NULL)
			return (-1);
		a = &c->allow[i];
		if (strlen(v) >= sizeof(buf))
			return (cfg_err(p, e, "allow '%.40s...' is too long",
			    v));
		strcpy(buf, v);
		strcpy(a->text, v);
		if ((slash = strchr(buf, '/')) != NULL)
			*slash++ = '\0';
		if (inet_pton(AF_INET, buf, a->addr) == 1)
			a->family = AF_INET;
		else if (inet_pton(AF_INET6, buf, a->addr) == 1)
			a->family = AF_INET6;
		else
			return (cfg_err(p, e, "allow '%s': '%s' is not an IPv4 "
			    "or IPv6 address", v, buf));
		a->prefix = a->family == AF_INET ? 32 : 128;
		if (slash != NULL) {
			/* Digits only; an overflow gives ULONG_MAX, too big. */
			if (!is_digit(*slash) || (pfx = strtoul(slash, &end,
			    10)) > a->prefix || *end != '\0')
				return (cfg_err(p, e, "allow '%s': prefix "
				    "must be 0 to %u", v, a->prefix));
			a->prefix = (unsigned)pfx;
		}
		a->line = (int)cfg_where(p, e, &file);
		c->nallow = i + 1;
	}
	return (0);
}

int
conf_globals_parse(struct cfg *p, const config_setting_t *root,
    struct conf *c)
{
	const config_setting_t *s;
	const struct global *g;
	const char *name;
	int i;

	for (i = 0; i < config_setting_length(root); i++) {
		s = config_setting_get_elem(root, (unsigned int)i);
		name = config_setting_name(s);
		if ((g = global_find(name)) == NULL)
			return (cfg_err_plain(p, s, "unknown setting '%s'",
			    name));
		if (g->kind != G_LATER && parse_global(p, s, g, c))
			return (-1);
	}

	/* Defaults before tunnels, wherever the file puts them. */
	if ((s = config_setting_get_member(root, "log_level")) != NULL &&
	    parse_log_level(p, s, c))
		return (-1);
	if ((s = config_setting_get_member(root, "defaults")) != NULL &&
	    parse_defaults(p, s, c))
		return (-1);
	if ((s = config_setting_get_member(root, "listen")) != NULL &&
	    parse_listen(p, s, c))
		return (-1);
	if ((s = config_setting_get_member(root, "source")) != NULL &&
	    parse_source(p, s, c))
		return (-1);
	/* Tunnels inherit the global key. */
	if ((s = config_setting_get_member(root, "key_file")) != NULL &&
	    conf_key_parse(p, s, &c->key, 0))
		return (-1);
	return (0);
}
