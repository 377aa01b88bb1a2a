/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <libconfig.h>

#include "wire.h"

#include "cfg.h"
#include "cfghint.h"
#include "conf.h"
#include "conf_int.h"
#include "secmem.h"

/*
 * The tunnels of rstreamd.conf: each group's settings (one table, with
 * the sizes of confvalue.c), the checks of one tunnel's settings against
 * each other, and of the tunnels against each other; what a tunnel
 * needs of the protocol, and whether two are configured alike.
 */

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
 * The settings of a tunnel group besides the sizes (size_keys), in one
 * table: how each is read, into which field, and which of the settings
 * the checks after the group (tunnel_check) point at it remembers.
 */
enum tkey_kind { TK_NAME, TK_ADDR, TK_PORT0_ADDR, TK_PEERS, TK_MODE,
    TK_STRING, TK_KEY, TK_PROXY, TK_BOOL, TK_LATER };

/* The settings tunnel_check() names in its messages. */
enum tkey_seen { TS_NONE, TS_ACCEPT, TS_PEER, TS_TARGET, TS_UNIX,
    TS_PROXY, TS_TRUST, TS_HOLDERS, TS_NOKEY, TS_RESUME, TS_TCLASS, TS_NAMES,
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
	{ "proxy_trust_key_holders", TK_BOOL, FIELD(proxy_trust_key_holders),
	    TS_HOLDERS },
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
	uint32_t max_version;			/* the daemon's */
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
	t->qos_at = c->defaults_qos_at;
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
			conf_qos_note(p, s, sk, &tp->t->qos_at);
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

/*
 * min_version, unless set: what the tunnel's settings need.  Below the
 * handshake's version a link cannot authenticate an identity, so with one
 * a forged reject would buy a step-down to a link that can only fail.
 */
static int
tunnel_check_version(const struct cfg *p, struct tunnel_parse *tp)
{
	struct conf_tunnel *t = tp->t;
	const config_setting_t *s;
	int set = (t->sz.min_version != 0);

	if (!set)
		t->sz.min_version = conf_tunnel_needs(t, NULL);
	if (!tp->identity || t->sz.min_version >= WIRE_VERSION_IDENTITY)
		return (0);
	if (!set) {
		t->sz.min_version = WIRE_VERSION_IDENTITY;
		return (0);
	}
	s = config_setting_get_member(tp->g, "min_version");
	return (cfg_err(p, s != NULL ? s : tp->g, "min_version %u%s with an "
	    "identity_file: links below version %u cannot authenticate "
	    "identities, so a forged reject could step them down to links "
	    "that only fail; set %u or more, or leave it unset",
	    (unsigned)t->sz.min_version, s != NULL ? "" : " (from defaults)",
	    WIRE_VERSION_IDENTITY, WIRE_VERSION_IDENTITY));
}

/*
 * proxy_protocol and whom it believes (tunnel.c's tunnel_admit_incoming):
 * without identities, the holders of the tunnel's key, or anyone with
 * proxy_trust_any_peer; with them, peers with origin = true, and the
 * key's holders without an identity only with proxy_trust_key_holders,
 * which is an error where it could change nothing.
 */
static int
tunnel_check_proxy(const struct cfg *p, struct tunnel_parse *tp)
{
	static const enum tkey_seen trust[] = { TS_TRUST, TS_HOLDERS };
	struct conf_tunnel *t = tp->t;
	const config_setting_t *pp_s = tp->at[TS_PROXY];
	const config_setting_t *kh_s = tp->at[TS_HOLDERS];
	const config_setting_t *s;
	size_t i;

	if (pp_s != NULL && !t->has_target)
		return (cfg_err(p, pp_s, "proxy_protocol needs a target (the "
		    "serving side writes the header to it)"));
	for (i = 0; i < sizeof(trust) / sizeof(trust[0]); i++)
		if ((s = tp->at[trust[i]]) != NULL && t->proxy_protocol == 0)
			return (cfg_err(p, s, "%s goes with proxy_protocol",
			    config_setting_name(s)));
	/* Set or not, a key file is named (rstreamctl reads no keys). */
	if (t->proxy_protocol != 0 && t->key.file[0] == '\0' &&
	    !tp->identity && !t->proxy_trust_any_peer)
		return (cfg_err(p, pp_s, "proxy_protocol without a key_file "
		    "would tell the target whatever client address any host "
		    "on the fabric claims; set key_file, or "
		    "proxy_trust_any_peer = true to trust them all"));
	if (!t->proxy_trust_key_holders)
		return (0);
	if (!tp->identity)
		return (cfg_err(p, kh_s, "proxy_trust_key_holders does nothing "
		    "without an identity_file: the holders of the tunnel's "
		    "key are believed anyway"));
	if (t->key.file[0] == '\0')
		return (cfg_err(p, kh_s, "proxy_trust_key_holders without a "
		    "key_file: with an identity_file, only peers that prove "
		    "an identity take this tunnel's streams"));
	if (tp->at[TS_NAMES] != NULL)
		return (cfg_err(p, kh_s, "proxy_trust_key_holders with peers: "
		    "only the peers named take this tunnel's streams, and "
		    "their origin settings say whom to believe"));
	return (0);
}

/* The settings that only make sense with others, and the keyless ones. */
static int
tunnel_check(const struct cfg *p, struct tunnel_parse *tp)
{
	struct conf_tunnel *t = tp->t;
	const config_setting_t *rt_s = tp->at[TS_RESUME];
	const config_setting_t *unix_s = tp->at[TS_UNIX];

	if (tunnel_check_sides(p, tp) || tunnel_check_proxy(p, tp))
		return (-1);
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
	if (tunnel_check_version(p, tp))
		return (-1);
	if (t->sz.min_version > tp->max_version)
		return (cfg_err(p, tp->g, "min_version %u is above max_version "
		    "%u: its links could speak no version",
		    (unsigned)t->sz.min_version, (unsigned)tp->max_version));
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
	    c->identity.file[0] != '\0', c->max_version };
	struct conf_tunnel *t = tp.t;
	char scope[16 + WIRE_NAME_MAX];
	size_t j;
	int rc = -1;

	if (tunnel_begin(p, g, c, idx, scope, sizeof(scope)) ||
	    tunnel_keys_read(p, &tp) || tunnel_check(p, &tp) ||
	    conf_tunnel_peers_parse(p, tp.at[TS_NAMES], tp.at[TS_ENCRYPT], c, t))
		goto out;
	if (t->has_accept) {
		for (j = 0; j < idx; j++)
			if (c->tunnels[j].has_accept &&
			    addr_clash(&c->tunnels[j].accept, &t->accept)) {
				(void)cfg_err(p, tp.at[TS_ACCEPT], "accept "
				    "'%s' is already used by tunnel %s",
				    t->accept.text, c->tunnels[j].name);
				goto out;
			}
	}
	if (tp.at[TS_TARGET] != NULL && *first_target == NULL)
		*first_target = tp.at[TS_TARGET];
	rc = 0;
out:
	/* The scope's text is ours: it ends here, error or not. */
	p->scope = NULL;
	return (rc);
}

int
conf_tunnels_parse(struct cfg *p, const config_setting_t *s,
    struct conf *c)
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
	    x->proxy_trust_key_holders == y->proxy_trust_key_holders &&
	    x->resume_without_key == y->resume_without_key &&
	    strcmp(x->unix_owner, y->unix_owner) == 0 &&
	    strcmp(x->unix_group, y->unix_group) == 0 &&
	    conf_key_same(&x->key, &y->key) && conf_tunnel_peers_same(x, y));
}
