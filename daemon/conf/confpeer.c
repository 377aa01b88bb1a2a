/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libconfig.h>

#include "wire.h"

#include "cfg.h"
#include "conf.h"
#include "conf_int.h"
#include "ident.h"

#define NAME_HINT	"use 1 to 64 characters from A-Z a-z 0-9 . _ -"
#define KEY_HINT	"44 base64 characters, as rstreamctl pubkey prints"

/* Write "WHERE: message" into ${p}'s error; returns -1. */
static int __attribute__((format(printf, 3, 4)))
err_at(const struct cfg *p, const char *where, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "%s: %s", where, msg);
	return (-1);
}

static const struct conf_peer *
peer_by_name(const struct conf *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->npeers; i++)
		if (strcmp(c->peers[i].name, name) == 0)
			return (&c->peers[i]);
	return (NULL);
}

const struct conf_peer *
conf_peer_by_pub(const struct conf *c, const uint8_t pub[IDENT_KEY_LEN])
{
	size_t i;

	for (i = 0; i < c->npeers; i++)
		if (memcmp(c->peers[i].pub, pub, IDENT_KEY_LEN) == 0)
			return (&c->peers[i]);
	return (NULL);
}

/*
 * Add peer ${name} with key ${b64} to ${c}, defined in ${file} at ${line},
 * its key at ${keyline}: names and keys are unique.
 */
static int
peer_add(const struct cfg *p, struct conf *c, const char *name,
    const char *b64, int origin, const char *file, int line, int keyline)
{
	const struct conf_peer *o;
	struct conf_peer *e;
	char where[1100], keywhere[1100];
	size_t cap;

	snprintf(where, sizeof(where), "%s:%d", file, line);
	snprintf(keywhere, sizeof(keywhere), "%s:%d", file, keyline);
	if (!wire_name_valid(name, strlen(name)))
		return (err_at(p, where, "peer name '%s' is not valid: %s",
		    name, NAME_HINT));
	if ((o = peer_by_name(c, name)) != NULL)
		return (err_at(p, where, "peer %s is defined twice (first at "
		    "%s)", name, o->where));
	/* Doubled at each power of two: a fleet's list grows cheaply. */
	if ((c->npeers & (c->npeers - 1)) == 0) {
		cap = c->npeers == 0 ? 8 : c->npeers * 2;
		if ((e = realloc(c->peers, cap * sizeof(*e))) == NULL)
			return (err_at(p, where, "peers: %s", strerror(errno)));
		c->peers = e;
	}
	e = &c->peers[c->npeers];
	memset(e, 0, sizeof(*e));
	if (ident_from_b64(b64, e->pub) != 0)
		return (err_at(p, keywhere, "peer %s: key '%s' is not a public "
		    "key (%s)", name, b64, KEY_HINT));
	if ((o = conf_peer_by_pub(c, e->pub)) != NULL)
		return (err_at(p, keywhere, "peer %s has the key of peer %s (at "
		    "%s): one key is one node", name, o->name, o->where));
	memcpy(e->name, name, strlen(name) + 1);
	memcpy(e->where, where, sizeof(where));
	e->origin = origin;
	e->line = line;
	c->npeers++;
	return (0);
}

/* One group of the peers list: name, key and origin. */
static int
parse_peer(const struct cfg *p, const config_setting_t *g, struct conf *c)
{
	const config_setting_t *s, *key_s = NULL;
	const char *name = NULL, *key = NULL, *file, *what;
	int i, origin = 0;
	unsigned int line;

	if (!config_setting_is_group(g))
		return (cfg_err(p, g, "each peer must be a group { name = ...; "
		    "key = ...; }"));
	for (i = 0; i < config_setting_length(g); i++) {
		s = config_setting_get_elem(g, (unsigned int)i);
		what = config_setting_name(s);
		if (strcmp(what, "origin") == 0) {
			if (cfg_bool(p, s, &origin))
				return (-1);
		} else if (strcmp(what, "name") != 0 &&
		    strcmp(what, "key") != 0) {
			return (cfg_err(p, s, "unknown setting '%s' in a peer "
			    "(name, key, origin)", what));
		} else if (cfg_str(p, s) == NULL) {
			return (-1);
		} else if (what[0] == 'n') {
			name = config_setting_get_string(s);
		} else {
			key = config_setting_get_string(s);
			key_s = s;
		}
	}
	if (name == NULL || key == NULL)
		return (cfg_err(p, g, "a peer needs a name and a key"));
	line = cfg_where(p, g, &file);
	return (peer_add(p, c, name, key, origin, file, (int)line,
	    (int)cfg_where(p, key_s, &file)));
}

/* One line of a peers_file: "KEY NAME [origin]", or nothing. */
static int
parse_peers_line(const struct cfg *p, struct conf *c, char *text,
    const char *file, int line)
{
	char *f[4], *save = NULL, where[1100];
	int n;

	for (n = 0; n < 4; n++) {
		f[n] = strtok_r(n == 0 ? text : NULL, " \t\r\n", &save);
		/* '#' starts a comment, as a field of its own. */
		if (f[n] == NULL || f[n][0] == '#')
			break;
	}
	if (n == 0)
		return (0);
	snprintf(where, sizeof(where), "%s:%d", file, line);
	if (n == 1 || n == 4 || (n == 3 && strcmp(f[2], "origin") != 0))
		return (err_at(p, where, "a peer is a line KEY NAME [origin]"));
	return (peer_add(p, c, f[1], f[0], n == 3, file, line, line));
}

/*
 * The peers_file ${s}, refused when anyone but its trusted owners could
 * write it (ident_open_trusted).
 */
static int
parse_peers_file(const struct cfg *p, const config_setting_t *s,
    struct conf *c)
{
	const char *path = c->peers_file;
	char why[1300], *buf = NULL;
	size_t cap = 0;
	int fd, line = 0, rc = 0;
	FILE *f;

	if (cfg_path(p, s, c->peers_file, sizeof(c->peers_file), 0))
		return (-1);
	if (p->flags & CONF_NO_KEYS)
		return (0);
	if ((fd = ident_open_trusted(path, why, sizeof(why))) < 0)
		return (cfg_err(p, s, "peers_file %s", why));
	if ((f = fdopen(fd, "r")) == NULL) {
		rc = cfg_err(p, s, "peers_file %s: %s", path, strerror(errno));
		close(fd);
		return (rc);
	}
	errno = 0;
	while (rc == 0 && getline(&buf, &cap, f) >= 0)
		rc = parse_peers_line(p, c, buf, path, ++line);
	if (rc == 0 && ferror(f))
		rc = cfg_err(p, s, "peers_file %s: cannot read: %s", path,
		    strerror(errno));
	free(buf);
	fclose(f);
	return (rc);
}

int
conf_peers_parse(const struct cfg *p, const config_setting_t *root,
    struct conf *c)
{
	struct conf_identity *id = &c->identity;
	const config_setting_t *s, *ps, *pf;
	char why[1300];
	int i;

	if ((s = config_setting_get_member(root, "identity_file")) != NULL) {
		if (cfg_path(p, s, id->file, sizeof(id->file), 0))
			return (-1);
		id->line = (int)config_setting_source_line(s);
		if (!(p->flags & CONF_NO_KEYS)) {
			if (ident_read(id->file, id->priv, id->pub, why,
			    sizeof(why)) != 0)
				return (cfg_err(p, s, "identity_file %s", why));
			id->set = 1;
		}
		if (c->max_version < WIRE_VERSION_IDENTITY)
			return (cfg_err(p, config_setting_get_member(root,
			    "max_version"), "max_version %u with an "
			    "identity_file: identities need version %u or "
			    "more", (unsigned)c->max_version,
			    WIRE_VERSION_IDENTITY));
	}
	ps = config_setting_get_member(root, "peers");
	pf = config_setting_get_member(root, "peers_file");
	if ((ps != NULL || pf != NULL) && id->file[0] == '\0')
		return (cfg_err(p, ps != NULL ? ps : pf, "%s without an "
		    "identity_file: peers prove who they are in a handshake "
		    "with this node's identity; set identity_file",
		    ps != NULL ? "peers" : "peers_file"));
	if (ps != NULL) {
		if (!config_setting_is_list(ps))
			return (cfg_err(p, ps, "peers must be a list ( { name "
			    "= ...; key = ...; }, ... )"));
		for (i = 0; i < config_setting_length(ps); i++)
			if (parse_peer(p, config_setting_get_elem(ps,
			    (unsigned int)i), c))
				return (-1);
	}
	if (pf != NULL && parse_peers_file(p, pf, c))
		return (-1);
	return (0);
}

/* The names of tunnel ${t}'s peers setting ${s}, each one of ${c}'s. */
static int
tunnel_peers(const struct cfg *p, const config_setting_t *s,
    const struct conf *c, struct conf_tunnel *t)
{
	const config_setting_t *e;
	const char *name;
	size_t i, j, n;
	/* rstreamctl reads no peers_file: its names are unknown then. */
	int lookup = !(p->flags & CONF_NO_KEYS) || c->peers_file[0] == '\0';

	if (cfg_strings_count(p, s, &n))
		return (-1);
	if (n == 0 || n > CONF_TUNNEL_PEERS_MAX)
		return (cfg_err(p, s, "peers lists 1 to %d names (leave it out "
		    "for any peer of the global list)", CONF_TUNNEL_PEERS_MAX));
	for (i = 0; i < n; i++) {
		if ((name = cfg_strings_get(p, s, i, &e)) == NULL)
			return (-1);
		if (!wire_name_valid(name, strlen(name)))
			return (cfg_err(p, e, "peer name '%s' is not valid: %s",
			    name, NAME_HINT));
		for (j = 0; j < i; j++)
			if (strcmp(t->peer_names[j], name) == 0)
				return (cfg_err(p, e, "peers names %s twice",
				    name));
		if (lookup && peer_by_name(c, name) == NULL)
			return (cfg_err(p, e, "peers: no peer called %s in "
			    "the global peers or peers_file", name));
		memcpy(t->peer_names[i], name, strlen(name) + 1);
		t->peer_mask_n = (uint32_t)i + 1;
	}
	return (0);
}

int
conf_tunnel_peers_parse(const struct cfg *p, const config_setting_t *peers_s,
    const config_setting_t *encrypt_s, const struct conf *c,
    struct conf_tunnel *t)
{
	int identity = c->identity.file[0] != '\0';

	if (encrypt_s == NULL)
		t->encrypt = identity;
	else if (t->encrypt && !identity)
		return (cfg_err(p, encrypt_s, "encrypt = true needs an "
		    "identity_file: a link's sealing keys come from the "
		    "handshake of two identities"));
	if (peers_s == NULL)
		return (0);
	if (!identity)
		return (cfg_err(p, peers_s, "peers names identities, which "
		    "need an identity_file"));
	return (tunnel_peers(p, peers_s, c, t));
}

int
conf_tunnel_peers_same(const struct conf_tunnel *x, const struct conf_tunnel *y)
{
	uint32_t i;

	if (x->encrypt != y->encrypt || x->peer_mask_n != y->peer_mask_n)
		return (0);
	for (i = 0; i < x->peer_mask_n; i++)
		if (strcmp(x->peer_names[i], y->peer_names[i]) != 0)
			return (0);
	return (1);
}

int
conf_tunnel_trusts(const struct conf *c, const struct conf_tunnel *t,
    const struct conf_peer *p)
{
	uint32_t i;

	(void)c;
	if (p == NULL)
		return (0);
	if (t->peer_mask_n == 0)
		return (1);
	for (i = 0; i < t->peer_mask_n; i++)
		if (strcmp(t->peer_names[i], p->name) == 0)
			return (1);
	return (0);
}
