/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sys/socket.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include <libconfig.h>

#include "wire.h"

#include "cfg.h"
#include "cfghint.h"
#include "conf.h"
#include "conf_int.h"
#include "conffile.h"
#include "secmem.h"

/* What every tunnel gets unless defaults or the tunnel say otherwise. */
static const struct conf_sizes builtin_sizes = {
	.sendbuf = 262144,
	.recvbuf = 262144,
	.ring_min = 16384,
	.max_memory = CONF_MEMORY_SHARE,
	.sq_size = 256,
	.rq_size = 256,
	.inline_size = 64,
	.max_streams = 1024,
	.connect_timeout = 10,
	.idle_timeout = 0,
	.traffic_class = CONF_UNSET,
	.service_level = CONF_UNSET,
	.priority = 4
};

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

/* peer: "HOST:PORT", or an array of them tried in turn. */
static int
parse_peers(const struct cfg *p, const config_setting_t *s,
    struct conf_tunnel *t)
{
	const config_setting_t *e;
	const char *v, *file;
	char why[256];
	int i, n = 1;

	if (config_setting_type(s) != CONFIG_TYPE_STRING &&
	    config_setting_type(s) != CONFIG_TYPE_ARRAY &&
	    config_setting_type(s) != CONFIG_TYPE_LIST)
		return (cfg_err(p, s, "peer must be a string or an array of "
		    "strings"));
	if (config_setting_type(s) != CONFIG_TYPE_STRING) {
		n = config_setting_length(s);
		if (n < 1 || n > CONF_PEERS_MAX)
			return (cfg_err(p, s, "peer lists 1 to %d addresses",
			    CONF_PEERS_MAX));
	}
	for (i = 0; i < n; i++) {
		e = n == 1 && config_setting_type(s) == CONFIG_TYPE_STRING ?
		    s : config_setting_get_elem(s, (unsigned)i);
		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return (cfg_err(p, s, "peer must be a string or an "
			    "array of strings"));
		v = config_setting_get_string(e);
		if (conf_parse_hostport(v, CONF_DEFAULT_PORT, &t->peers[i],
		    why, sizeof(why)))
			return (cfg_err(p, s, "peer '%s': %s", v, why));
		t->peers[i].line = (int)cfg_where(p, e, &file);
	}
	t->npeers = (unsigned)n;
	t->peer = t->peers[0];
	return (0);
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

/* The same local address, so two tunnels would fight over it. */
static int
addr_clash(const struct conf_addr *x, const struct conf_addr *y)
{

	if (x->kind != y->kind)
		return (0);
	if (x->kind == CONF_ADDR_UNIX)
		return (strcmp(x->path, y->path) == 0);
	return (strcmp(x->port, "0") != 0 &&
	    strcmp(x->port, y->port) == 0 &&
	    strcasecmp(x->host, y->host) == 0);
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
	{ "ring_pool", G_UINT, FIELD(ring_pool), 0, CONF_MAX_RING_POOL,
	    "bytes" },
	{ "max_memory", G_UINT, FIELD(max_memory), 0, 1024 * 1024, "MiB" },
	{ "workers", G_UINT, FIELD(workers), 0, CONF_MAX_WORKERS, "threads" },
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

/*
 * The settings of a tunnel group besides the sizes (size_keys), in one
 * table: how each is read, into which field, and which of the settings
 * the checks after the group (tunnel_check) point at it remembers.
 */
enum tkey_kind { TK_NAME, TK_ADDR, TK_PORT0_ADDR, TK_PEERS, TK_MODE,
    TK_STRING, TK_KEY, TK_PROXY, TK_BOOL, TK_LATER };

/* The settings tunnel_check() names in its messages. */
enum tkey_seen { TS_NONE, TS_ACCEPT, TS_PEER, TS_TARGET, TS_UNIX,
    TS_PROXY, TS_TRUST, TS_NOKEY, TS_RESUME, TS_TCLASS, TS_NAMES,
    TS_ENCRYPT, TS_N };

static const struct tunnel_key {
	const char *name;
	enum tkey_kind kind;
	size_t off;			/* in struct conf_tunnel */
	size_t size;			/* TK_STRING: the buffer */
	enum tkey_seen seen;
} tunnel_keys[] = {
#define FIELD(f) offsetof(struct conf_tunnel, f), \
	sizeof(((struct conf_tunnel *)0)->f)
	{ "name", TK_NAME, 0, 0, TS_NONE },
	{ "accept", TK_PORT0_ADDR, FIELD(accept), TS_ACCEPT },
	{ "peer", TK_PEERS, 0, 0, TS_PEER },
	{ "target", TK_ADDR, FIELD(target), TS_TARGET },
	{ "unix_mode", TK_MODE, FIELD(unix_mode), TS_UNIX },
	{ "unix_owner", TK_STRING, FIELD(unix_owner), TS_UNIX },
	{ "unix_group", TK_STRING, FIELD(unix_group), TS_UNIX },
	{ "key_file", TK_KEY, FIELD(key), TS_NONE },
	{ "proxy_protocol", TK_PROXY, FIELD(proxy_protocol), TS_PROXY },
	{ "proxy_trust_any_peer", TK_BOOL, FIELD(proxy_trust_any_peer),
	    TS_TRUST },
	{ "resume_without_key", TK_BOOL, FIELD(resume_without_key),
	    TS_NOKEY },
	{ "peers", TK_LATER, 0, 0, TS_NAMES },	/* conf_tunnel_peers_parse() */
	{ "encrypt", TK_BOOL, FIELD(encrypt), TS_ENCRYPT },
	{ NULL, TK_NAME, 0, 0, TS_NONE }
#undef FIELD
};

/* One tunnel being read: where its settings are, for tunnel_check(). */
struct tunnel_parse {
	struct conf_tunnel *t;
	const config_setting_t *g;		/* its group */
	const config_setting_t *at[TS_N];	/* the first of each */
	int identity;				/* an identity_file is named */
};

static const struct tunnel_key *
tunnel_key_find(const char *name)
{
	const struct tunnel_key *k;

	for (k = tunnel_keys; k->name != NULL; k++)
		if (strcmp(k->name, name) == 0)
			return (k);
	return (NULL);
}

/* proxy_protocol: "v1", "v2" or "off". */
static int
parse_proxy(const struct cfg *p, const config_setting_t *s, int *out)
{
	const char *v;

	if ((v = cfg_str(p, s)) == NULL)
		return (-1);
	if (strcmp(v, "v1") == 0 || strcmp(v, "v2") == 0)
		*out = v[1] - '0';
	else if (strcmp(v, "off") == 0)
		*out = 0;
	else
		return (cfg_err(p, s, "proxy_protocol '%s': use \"v1\", \"v2\" "
		    "or \"off\"", v));
	return (0);
}

/* Read setting ${s}, key ${k} of the table, into tunnel ${t}. */
static int
parse_tunnel_key(const struct cfg *p, const config_setting_t *s,
    const struct tunnel_key *k, struct conf_tunnel *t)
{
	char *field = (char *)t + k->off, why[256];
	struct conf_addr *a = (struct conf_addr *)(void *)field;
	const char *v, *file;

	switch (k->kind) {
	case TK_ADDR:
	case TK_PORT0_ADDR:
		if ((v = cfg_str(p, s)) == NULL)
			return (-1);
		if (conf_parse_addr(v, k->kind == TK_PORT0_ADDR, a, why,
		    sizeof(why)))
			return (cfg_err(p, s, "%s '%s': %s", k->name, v, why));
		a->line = (int)cfg_where(p, s, &file);
		return (0);
	case TK_PEERS:
		return (parse_peers(p, s, t));
	case TK_MODE:
		return (cfg_mode(p, s, (uint32_t *)(void *)field));
	case TK_STRING:
		return (cfg_string(p, s, field, k->size, 0));
	case TK_KEY:
		return (conf_key_parse(p, s, (struct conf_key *)(void *)field, 1));
	case TK_PROXY:
		return (parse_proxy(p, s, (int *)(void *)field));
	case TK_BOOL:
		return (cfg_bool(p, s, (int *)(void *)field));
	default:
		return (0);
	}
}

/*
 * Start tunnel ${idx} of ${c} from group ${g}: the defaults it inherits
 * and its name, checked first because every later message is about
 * this tunnel.  Sets the scope to it (${scope} holds the text).
 */
static int
tunnel_begin(struct cfg *p, const config_setting_t *g, struct conf *c,
    size_t idx, char *scope, size_t scopelen)
{
	struct conf_tunnel *t = &c->tunnels[idx];
	const config_setting_t *s;
	const char *name;
	size_t j;

	if (!config_setting_is_group(g))
		return (cfg_err_plain(p, g, "each tunnel must be a group "
		    "{ name = ...; ... }"));
	t->line = (int)config_setting_source_line(g);
	t->sz = c->defaults;
	t->unix_mode = 0660;
	t->unix_uid = t->unix_gid = -1;
	t->key = c->key;

	if ((s = config_setting_get_member(g, "name")) == NULL)
		return (cfg_err_plain(p, g, "tunnel without a name"));
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return (cfg_err_plain(p, s, "tunnel name must be a string"));
	name = config_setting_get_string(s);
	if (!wire_name_valid(name, strlen(name)))
		return (cfg_err_plain(p, s, "tunnel name '%s' is not valid: "
		    "use 1 to 64 characters from A-Z a-z 0-9 . _ -", name));
	for (j = 0; j < idx; j++)
		if (strcmp(c->tunnels[j].name, name) == 0)
			return (cfg_err_plain(p, s, "tunnel %s is defined "
			    "twice (first at line %d)", name,
			    c->tunnels[j].line));
	memcpy(t->name, name, strlen(name) + 1);
	snprintf(scope, scopelen, "tunnel %s", name);
	p->scope = scope;
	return (0);
}

/* Every setting of the group, by tunnel_keys and size_keys. */
static int
tunnel_keys_read(const struct cfg *p, struct tunnel_parse *tp)
{
	const struct tunnel_key *k;
	const struct conf_size_key *sk;
	const config_setting_t *s;
	enum tkey_seen seen;
	const char *name;
	int i;

	for (i = 0; i < config_setting_length(tp->g); i++) {
		s = config_setting_get_elem(tp->g, (unsigned int)i);
		name = config_setting_name(s);
		if ((k = tunnel_key_find(name)) != NULL) {
			if (parse_tunnel_key(p, s, k, tp->t))
				return (-1);
			seen = k->seen;
		} else if ((sk = conf_size_find(name)) != NULL) {
			if (conf_size_parse(p, s, sk, &tp->t->sz))
				return (-1);
			seen = sk->off == offsetof(struct conf_sizes,
			    resume_time) ? TS_RESUME : sk->off ==
			    offsetof(struct conf_sizes, traffic_class) ||
			    sk->off == offsetof(struct conf_sizes,
			    service_level) ? TS_TCLASS : TS_NONE;
		} else {
			return (cfg_err_plain(p, s, "unknown setting '%s' in "
			    "tunnel %s", name, tp->t->name));
		}
		if (tp->at[seen] == NULL)
			tp->at[seen] = s;
	}
	return (0);
}

/* One tunnel is one direction; mixing them hides a mistake. */
static int
tunnel_check_sides(const struct cfg *p, struct tunnel_parse *tp)
{
	const config_setting_t *acc_s = tp->at[TS_ACCEPT];
	const config_setting_t *peer_s = tp->at[TS_PEER];
	const config_setting_t *tgt_s = tp->at[TS_TARGET];

	if (tgt_s != NULL && (acc_s != NULL || peer_s != NULL))
		return (cfg_err(p, tgt_s, "has both accept/peer and target; "
		    "define two tunnels"));
	if (acc_s != NULL && peer_s == NULL)
		return (cfg_err(p, acc_s, "accept needs a peer"));
	if (peer_s != NULL && acc_s == NULL)
		return (cfg_err(p, peer_s, "peer needs an accept address"));
	if (acc_s == NULL && tgt_s == NULL)
		return (cfg_err(p, tp->g, "needs either accept and peer, or "
		    "target"));
	tp->t->has_accept = (acc_s != NULL);
	tp->t->has_target = (tgt_s != NULL);
	return (0);
}

/* The settings that only make sense with others, and the keyless ones. */
static int
tunnel_check(const struct cfg *p, struct tunnel_parse *tp)
{
	struct conf_tunnel *t = tp->t;
	const config_setting_t *pp_s = tp->at[TS_PROXY];
	const config_setting_t *rt_s = tp->at[TS_RESUME];
	const config_setting_t *unix_s = tp->at[TS_UNIX];

	if (tunnel_check_sides(p, tp))
		return (-1);
	if (pp_s != NULL && !t->has_target)
		return (cfg_err(p, pp_s, "proxy_protocol needs a target (the "
		    "serving side writes the header to it)"));
	if (tp->at[TS_TRUST] != NULL && t->proxy_protocol == 0)
		return (cfg_err(p, tp->at[TS_TRUST], "proxy_trust_any_peer "
		    "goes with proxy_protocol"));
	/* Set or not, a key file is named (rstreamctl reads no keys).  With
	 * identities, only peers with origin = true are believed. */
	if (t->proxy_protocol != 0 && t->key.file[0] == '\0' &&
	    !tp->identity && !t->proxy_trust_any_peer)
		return (cfg_err(p, pp_s, "proxy_protocol without a key_file "
		    "would tell the target whatever client address any host "
		    "on the fabric claims; set key_file, or "
		    "proxy_trust_any_peer = true to trust them all"));
	/* The accepting side's QP takes the connect request's (cma.c). */
	if (tp->at[TS_TCLASS] != NULL && t->has_target)
		return (cfg_err(p, tp->at[TS_TCLASS], "%s does nothing on a "
		    "target tunnel: a link from a peer carries the traffic "
		    "class and service level of the peer's client tunnel, "
		    "both ways; set it there",
		    config_setting_name(tp->at[TS_TCLASS])));
	if (tp->at[TS_NOKEY] != NULL && t->sz.resume_time == 0)
		return (cfg_err(p, tp->at[TS_NOKEY], "resume_without_key goes "
		    "with resume_time"));
	/* The secret of a link without a key or identities follows from its
	 * hellos; an identity link's, from its handshake. */
	if (t->sz.resume_time > 0 && t->key.file[0] == '\0' &&
	    !tp->identity && !t->resume_without_key)
		return (cfg_err(p, rt_s != NULL ? rt_s : tp->g, "resume_time%s "
		    "without a key_file would let any host that saw this "
		    "tunnel's links come up take its streams over; set "
		    "key_file, or resume_without_key = true to allow it",
		    rt_s != NULL ? "" : " (from defaults)"));
	if (t->sz.min_version == 0)
		t->sz.min_version = conf_tunnel_needs(t, NULL);
	if (unix_s != NULL &&
	    !(t->has_accept && t->accept.kind == CONF_ADDR_UNIX))
		return (cfg_err(p, unix_s, "%s needs a unix: accept address",
		    config_setting_name(unix_s)));
	/* Looked up once they are known to apply. */
	if (t->unix_owner[0] != '\0' && conf_id_parse(p,
	    config_setting_get_member(tp->g, "unix_owner"), t->unix_owner, 0,
	    &t->unix_uid))
		return (-1);
	if (t->unix_group[0] != '\0' && conf_id_parse(p,
	    config_setting_get_member(tp->g, "unix_group"), t->unix_group, 1,
	    &t->unix_gid))
		return (-1);
	return (0);
}

/*
 * Parse tunnel ${idx} of ${c} from group ${g}; the tunnels before it are
 * already parsed, and ${*first_target} is set to the target setting of
 * the first tunnel that has one.
 */
static int
parse_tunnel(struct cfg *p, const config_setting_t *g, struct conf *c,
    size_t idx, const config_setting_t **first_target)
{
	struct tunnel_parse tp = { &c->tunnels[idx], g, { NULL },
	    c->identity.file[0] != '\0' };
	struct conf_tunnel *t = tp.t;
	char scope[16 + WIRE_NAME_MAX];
	size_t j;

	if (tunnel_begin(p, g, c, idx, scope, sizeof(scope)) ||
	    tunnel_keys_read(p, &tp) || tunnel_check(p, &tp) ||
	    conf_tunnel_peers_parse(p, tp.at[TS_NAMES], tp.at[TS_ENCRYPT], c, t))
		return (-1);
	if (t->has_accept) {
		for (j = 0; j < idx; j++)
			if (c->tunnels[j].has_accept &&
			    addr_clash(&c->tunnels[j].accept, &t->accept))
				return (cfg_err(p, tp.at[TS_ACCEPT], "accept "
				    "'%s' is already used by tunnel %s",
				    t->accept.text, c->tunnels[j].name));
	}
	if (tp.at[TS_TARGET] != NULL && *first_target == NULL)
		*first_target = tp.at[TS_TARGET];
	p->scope = NULL;
	return (0);
}

static int
parse_tunnels(struct cfg *p, const config_setting_t *s, struct conf *c)
{
	const config_setting_t *first_target = NULL;
	size_t i, n;
	int line;

	/* Forgetting them is likely a mistake; "( )" says "none yet". */
	if (s == NULL && (line = cfghint_open_comment(p->path)) > 0)
		return (cfg_err(p, NULL, "no tunnels defined: the comment "
		    "opened with /* at line %d is never closed, so "
		    "everything after it is comment", line));
	if (s == NULL)
		return (cfg_err(p, NULL, "no tunnels defined (write tunnels = "
		    "( ); for none)"));
	if (!config_setting_is_list(s))
		return (cfg_err(p, s, "tunnels must be a list "
		    "( { name = ...; ... }, ... )"));
	if ((n = (size_t)config_setting_length(s)) == 0)
		return (0);
	if ((c->tunnels = secmem_alloc(n * sizeof(*c->tunnels))) == NULL)
		return (cfg_err(p, s, "tunnels: %s", strerror(errno)));
	for (i = 0; i < n; i++) {
		if (parse_tunnel(p, config_setting_get_elem(s,
		    (unsigned int)i), c, i, &first_target))
			return (-1);
		c->ntunnels = i + 1;
	}

	if (first_target != NULL && c->nlisten == 0) {
		for (i = 0; !c->tunnels[i].has_target; i++)
			;
		return (cfg_err_plain(p, first_target, "tunnel %s: a target "
		    "needs a global listen address for peers to connect to, "
		    "like listen = \"192.0.2.20:7471\"", c->tunnels[i].name));
	}
	return (0);
}

/* Explain why config_read_file() failed. */
static void
read_error(const struct cfg *p, const config_t *cf, int saved_errno)
{
	struct stat st;
	const char *file, *text;
	char hint[512];
	int line;

	if (config_error_type(cf) == CONFIG_ERR_FILE_IO) {
		/* libconfig refuses directories without setting errno. */
		if (saved_errno == 0)
			saved_errno = (stat(p->path, &st) == 0 &&
			    S_ISDIR(st.st_mode)) ? EISDIR : EIO;
		snprintf(p->err, p->errlen, "%s: cannot read: %s", p->path,
		    strerror(saved_errno));
		return;
	}
	file = config_error_file(cf) != NULL ? config_error_file(cf) :
	    p->path;
	/* libconfig says what, by its text only; the file says why. */
	text = config_error_text(cf);
	line = config_error_line(cf);
	if ((strcmp(text, "syntax error") == 0 &&
	    cfghint_syntax(file, line, hint, sizeof(hint)) == 0) ||
	    (strcmp(text, "duplicate setting name") == 0 &&
	    cfghint_duplicate(file, line, hint, sizeof(hint)) == 0))
		snprintf(p->err, p->errlen, "%s:%d: %s: %s", file, line, text,
		    hint);
	else
		snprintf(p->err, p->errlen, "%s:%d: %s", file, line, text);
}

/* The least ring memory a stream of ${t} opens with (send and receive). */
static uint64_t
first_rings(const struct conf_tunnel *t)
{
	const struct conf_sizes *sz = &t->sz;

	/* Rings start at ring_min only where they may grow (no resume). */
	if (sz->ring_min == 0 || sz->resume_time > 0)
		return ((uint64_t)sz->sendbuf + sz->recvbuf);
	return ((uint64_t)(sz->ring_min < sz->sendbuf ? sz->ring_min :
	    sz->sendbuf) + (sz->ring_min < sz->recvbuf ? sz->ring_min :
	    sz->recvbuf));
}

/* A tunnel whose memory could never hold one stream's rings is a mistake. */
static int
check_memory(const struct cfg *p, const struct conf *c)
{
	const struct conf_tunnel *t;
	uint64_t max, need;
	size_t i;

	for (i = 0; i < c->ntunnels; i++) {
		t = &c->tunnels[i];
		max = conf_tunnel_max_memory(c, t);
		if (max == 0 || max >= (need = first_rings(t)))
			continue;
		snprintf(p->err, p->errlen, "%s:%d: tunnel %s: max_memory "
		    "leaves it %llu bytes%s, less than one stream's first "
		    "rings (%llu bytes): no stream could open; raise "
		    "max_memory, or give the tunnel its own", p->path,
		    t->line, t->name, (unsigned long long)max,
		    t->sz.max_memory == CONF_MEMORY_SHARE ? " (its share of "
		    "the daemon's)" : "", (unsigned long long)need);
		return (-1);
	}
	return (0);
}

/* A configuration of ${path} with every built-in default, or NULL. */
static struct conf *
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
	c->ack_timeout = CONF_DEFAULT_ACK_TIMEOUT;
	c->retry_count = CONF_DEFAULT_RETRY_COUNT;
	c->ring_pool = CONF_DEFAULT_RING_POOL;
	return (c);
}

/*
 * The settings of ${root} into ${c}: the table's in the file's order,
 * then the G_LATER ones in their own.
 */
static int
parse_root(struct cfg *p, const config_setting_t *root, struct conf *c)
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
	/* Tunnels inherit the global key, and name the peers. */
	if ((s = config_setting_get_member(root, "key_file")) != NULL &&
	    conf_key_parse(p, s, &c->key, 0))
		return (-1);
	if (conf_peers_parse(p, root, c))
		return (-1);
	if (parse_tunnels(p, config_setting_get_member(root, "tunnels"), c) ||
	    check_memory(p, c))
		return (-1);
	return (0);
}

int
conf_load(const char *path, int flags, struct conf **out, char *err,
    size_t errlen)
{
	struct cfg p = { path, err, errlen, NULL, flags };
	config_t cf;
	struct conf *c;
	int rc = -1;

	if (errlen > 0)
		err[0] = '\0';
	if ((c = conf_new(path, err, errlen)) == NULL)
		return (-1);
	/* Only what libconfig can read without exiting or hanging. */
	if (conffile_check(path, err, errlen) != 0) {
		conf_free(c);
		return (-1);
	}
	config_init(&cf);
	errno = 0;
	if (config_read_file(&cf, path) != CONFIG_TRUE)
		read_error(&p, &cf, errno);
	else
		rc = parse_root(&p, config_root_setting(&cf), c);
	config_destroy(&cf);
	if (rc != 0) {
		conf_free(c);
		return (-1);
	}
	*out = c;
	return (0);
}

/* Allow entry ${a} with its host bits cleared into ${net} (text). */
static int
net_host_bits(const struct conf_net *a, char *net, size_t netlen)
{
	uint8_t addr[16];
	unsigned i, bits = a->prefix;
	int len = a->family == AF_INET ? 4 : 16, host = 0;

	memcpy(addr, a->addr, sizeof(addr));
	for (i = 0; i < (unsigned)len; i++, bits = bits > 8 ? bits - 8 : 0) {
		if (bits >= 8)
			continue;
		host |= addr[i] & (0xff >> bits);
		addr[i] &= (uint8_t)(0xff << (8 - bits));
	}
	if (!host || inet_ntop(a->family, addr, net, (socklen_t)netlen) ==
	    NULL)
		return (0);
	return (1);
}

int
conf_warn(const struct conf *c, int keyless,
    void (*fn)(void *, const char *), void *arg)
{
	char msg[sizeof(c->file) + 700], names[300], net[INET6_ADDRSTRLEN];
	const struct conf_tunnel *first = NULL;
	size_t i, len = 0, n = 0;

	if (c->identity.file[0] != '\0' && c->npeers == 0) {
		snprintf(msg, sizeof(msg), "%s:%d: identity_file without a "
		    "peer (peers, peers_file): with an identity only listed "
		    "nodes carry streams, so none would; list the other "
		    "nodes' public keys", c->file, c->identity.line);
		fn(arg, msg);
	}
	for (i = 0; i < c->nallow; i++) {
		if (!net_host_bits(&c->allow[i], net, sizeof(net)))
			continue;
		snprintf(msg, sizeof(msg), "%s:%d: allow '%s' has host bits "
		    "set: it allows %s/%u; write that, or the address alone "
		    "for one host", c->file, c->allow[i].line, c->allow[i].text,
		    net, c->allow[i].prefix);
		fn(arg, msg);
	}
	if (!keyless)
		return (0);
	names[0] = '\0';
	for (i = 0; i < c->ntunnels; i++) {
		/* With an identity every link proves one. */
		if (c->tunnels[i].key.set || c->identity.set)
			continue;
		if (first == NULL)
			first = &c->tunnels[i];
		if (n++ < 8 && len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) -
			    len, "%s%s", n > 1 ? ", " : "", c->tunnels[i].name);
	}
	if (first == NULL)
		return (0);
	snprintf(msg, sizeof(msg), "%s:%d: links are not authenticated for "
	    "%zu tunnel%s without a key_file (%s%s): any host on the fabric "
	    "that can reach them can use them; see SECURITY in rstreamd(8)",
	    c->file, first->line, n, n == 1 ? "" : "s", names,
	    n > 8 ? ", ..." : "");
	fn(arg, msg);
	return (1);
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

static int
peers_same(const struct conf_tunnel *x, const struct conf_tunnel *y)
{
	unsigned i;

	if (x->npeers != y->npeers)
		return (0);
	for (i = 0; i < x->npeers; i++)
		if (!conf_addr_same(&x->peers[i], &y->peers[i]))
			return (0);
	return (1);
}

unsigned
conf_tunnel_needs(const struct conf_tunnel *c, const char **why)
{
	const char *w = "nothing newer";
	unsigned v = 1;

	/*
	 * Resume without the peer's proof of the secret (before version 5)
	 * names the streams to whoever answers; rings resize only on links
	 * without resume (see engine.h).
	 */
	if (c->sz.resume_time > 0) {
		v = 5;
		w = "resume_time";
	} else if (c->sz.ring_min != 0 && (c->sz.ring_min < c->sz.sendbuf ||
	    c->sz.ring_min < c->sz.recvbuf)) {
		v = 4;
		w = "ring_min below the ring size";
	} else if (c->has_target && c->proxy_protocol != 0) {
		v = 3;
		w = "proxy_protocol";
	}
	if (why != NULL)
		*why = w;
	return (v);
}

int
conf_tunnel_same(const struct conf_tunnel *x, const struct conf_tunnel *y)
{

	return (strcmp(x->name, y->name) == 0 &&
	    x->has_accept == y->has_accept && x->has_target == y->has_target &&
	    (!x->has_accept || (conf_addr_same(&x->accept, &y->accept) &&
	    peers_same(x, y))) &&
	    (!x->has_target || conf_addr_same(&x->target, &y->target)) &&
	    memcmp(&x->sz, &y->sz, sizeof(x->sz)) == 0 &&
	    x->unix_mode == y->unix_mode &&
	    x->proxy_protocol == y->proxy_protocol &&
	    x->proxy_trust_any_peer == y->proxy_trust_any_peer &&
	    x->resume_without_key == y->resume_without_key &&
	    strcmp(x->unix_owner, y->unix_owner) == 0 &&
	    strcmp(x->unix_group, y->unix_group) == 0 &&
	    conf_key_same(&x->key, &y->key) && conf_tunnel_peers_same(x, y));
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
