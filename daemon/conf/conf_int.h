/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * conf_int: the configuration parser's own header (only the conf files
 * include it): the calls they share to read rstreamd.conf.  The rest of
 * the daemon knows the configuration through conf.h alone.  A file
 * includes conf.h before this one: this header does not include it, since
 * tests/layers.sh sees conf.c and conf.h as one module and would see
 * conf.c -> conf_int.h -> conf.h as a loop.
 *
 * The files, in layers, lowest first.  A file calls only its own layer
 * and those below it, and no two files call each other in a loop:
 *
 *   0  conf.c        the configuration as a value: new (every built-in
 *                    default), freed, looked up
 *   1  confvalue.c   values the top level and tunnels both take: the
 *                    sizes (one table), key files, users and groups
 *      confaddr.c    addresses, as text
 *      confpeer.c    identity_file, peers, peers_file; a tunnel's peers
 *      confcheck.c   the whole checked once it is read: errors, warnings
 *   2  confglobal.c  the top level's settings (one table)
 *      conftunnel.c  the tunnels (one table), checked one by one and
 *                    against each other
 *   3  confload.c    conf_load: the file read, its settings in order
 *
 * Below them all, knowing nothing of struct conf: cfg.c (one libconfig
 * value, and errors at FILE:LINE), cfghint.c and conffile.c.  Errors go
 * into the struct cfg of the conf_load() under way, as cfg.h says.
 */
#ifndef CONF_INT_H
#define CONF_INT_H

#include <stddef.h>

#include "cfg.h"

/* Its types are conf.h's: included first. */
struct conf;
struct conf_addr;
struct conf_key;
struct conf_sizes;
struct conf_tunnel;

/* ---- conf.c: the configuration as a value */

/**
 * conf_new(path, err, errlen):
 * A configuration of ${path} with every built-in default (release it
 * with conf_free), or NULL with the reason in ${err}.
 */
struct conf *conf_new(const char *path, char *err, size_t errlen);

/* ---- confvalue.c: the values the top level and tunnels both take */

/* A row of the integer settings valid both in defaults and in a tunnel. */
struct conf_size_key {
	const char *name;
	size_t off;		/* in struct conf_sizes */
	long long min, max;
	int ring;		/* ring_size_check() decides, not min/max;
				   2: the same, or 0 */
};

/**
 * conf_size_find(name):
 * The integer setting of struct conf_sizes called ${name}, or NULL if
 * there is none.
 */
const struct conf_size_key *conf_size_find(const char *name);

/**
 * conf_qos_note(p, s, k, at):
 * If row ${k} is traffic_class or service_level, note in ${at} where
 * setting ${s} is ("FILE:LINE"; see conf_qos_warn).
 */
void conf_qos_note(const struct cfg *p, const config_setting_t *s,
    const struct conf_size_key *k, struct conf_qos_at *at);

/**
 * conf_size_parse(p, s, k, sz):
 * Read setting ${s}, the integer setting ${k}, into ${sz} after checking
 * its range: 0, or -1 with the error in ${p}.
 */
int conf_size_parse(const struct cfg *p, const config_setting_t *s,
    const struct conf_size_key *k, struct conf_sizes *sz);

/**
 * conf_key_parse(p, s, k, empty_ok):
 * Read key_file ${s} into ${k} ("" leaves it unset where ${empty_ok}),
 * refused if others could read or replace it (ident_open_private).
 * Under CONF_NO_KEYS the file is named but not read.  0, or -1 with the
 * error in ${p}.
 */
int conf_key_parse(const struct cfg *p, const config_setting_t *s,
    struct conf_key *k, int empty_ok);

/**
 * conf_id_parse(p, s, name, group, id):
 * The id of the user (${group}: the group) ${name}, the value of setting
 * ${s}, into ${*id}: a number is taken as it is, a name must exist.  Under
 * CONF_NO_KEYS (rstreamctl) nothing is looked up and ${*id} is -1.  0, or
 * -1 with the error in ${p}.
 */
int conf_id_parse(const struct cfg *p, const config_setting_t *s,
    const char *name, int group, long *id);

/* ---- confaddr.c: addresses, as text */

/**
 * conf_parse_addr(text, allow_port0, a, err, errlen):
 * Parse an accept or target address: "tcp://HOST:PORT",
 * "tcp://[V6]:PORT" or "unix:/absolute/path" ("unix:///absolute/path" is
 * the same).  Port 0 ("pick a free one") is refused unless ${allow_port0}.
 * Host names are not resolved.  On success fill ${a} and return 0; on
 * error return -1 and write into ${err} only the reason ("missing port",
 * "bad port 'abc'", ...): the caller knows what the address was for and
 * prefixes that and ${text}.
 */
int conf_parse_addr(const char *text, int allow_port0, struct conf_addr *a,
    char *err, size_t errlen);

/**
 * conf_parse_hostport(text, default_port, a, err, errlen):
 * Parse a peer or listen address: "HOST:PORT", "[V6]:PORT", or "HOST" or
 * "[V6]" alone, which take ${default_port} (if ${default_port} is NULL a
 * port is required).  The port must be 1 to 65535.  Fills ${a} as a TCP
 * address and returns 0, or returns -1 with the reason in ${err}, as
 * conf_parse_addr does.
 */
int conf_parse_hostport(const char *text, const char *default_port,
    struct conf_addr *a, char *err, size_t errlen);

/* ---- confpeer.c: the identity settings, and a tunnel's peers */

/**
 * conf_peers_parse(p, root, c):
 * Read identity_file (not under CONF_NO_KEYS), peers and peers_file (not
 * under CONF_NO_KEYS) of ${root} into ${c}: 0, or -1 with the error in
 * ${p}.  Before the tunnels, which name the peers.
 */
int conf_peers_parse(const struct cfg *p, const config_setting_t *root,
    struct conf *c);

/**
 * conf_tunnel_peers_parse(p, peers_s, encrypt_s, c, t):
 * Tunnel ${t}'s peers setting ${peers_s} (NULL: none) against ${c}'s
 * peers, and its encrypt: ${encrypt_s} (NULL: unset, then the default)
 * already read into ${t}->encrypt.  0, or -1 with the error in ${p}.
 */
int conf_tunnel_peers_parse(const struct cfg *p,
    const config_setting_t *peers_s, const config_setting_t *encrypt_s,
    const struct conf *c, struct conf_tunnel *t);

/**
 * conf_tunnel_peers_same(x, y):
 * True if tunnels ${x} and ${y} name the same peers and seal alike.
 */
int conf_tunnel_peers_same(const struct conf_tunnel *x,
    const struct conf_tunnel *y);

/* ---- confcheck.c: the configuration as a whole */

/**
 * conf_check_memory(p, c):
 * A tunnel of ${c} whose memory (its max_memory, or its share of the
 * daemon's) could never hold one stream's first rings is a mistake: 0,
 * or -1 with the error, at the tunnel's line, in ${p}.
 */
int conf_check_memory(const struct cfg *p, const struct conf *c);

/* ---- confglobal.c: the top level */

/**
 * conf_globals_parse(p, root, c):
 * Read the top-level settings of ${root} into ${c}: every name must be a
 * setting the parser knows; the table's settings in the file's order,
 * then log_level, defaults, listen, source and key_file in this order,
 * wherever the file puts them.  The identity settings and the tunnels
 * are left to conf_peers_parse and conf_tunnels_parse.  0, or -1 with
 * the error in ${p}.
 */
int conf_globals_parse(struct cfg *p, const config_setting_t *root,
    struct conf *c);

/* ---- conftunnel.c: the tunnels */

/**
 * conf_tunnels_parse(p, s, c):
 * Read the tunnels list ${s} (NULL: the file has none) into ${c}, whose
 * defaults, key and peers are read: 0, or -1 with the error in ${p}.  A
 * file without tunnels must say so ("tunnels = ( );"), and a target needs
 * a listen address.
 */
int conf_tunnels_parse(struct cfg *p, const config_setting_t *s,
    struct conf *c);

/**
 * conf_tunnel_needs(c, why):
 * The protocol version tunnel ${c}'s own settings need: 5 (the
 * responder's proof of the resume secret) for resume_time, 4 (RING) for
 * rings that grow from ring_min, 3 (ORIGIN) for a target with
 * proxy_protocol, else 1; what needs it (for
 * messages: "ring_min below the ring size", ...) in ${*why} if not NULL.
 */
unsigned conf_tunnel_needs(const struct conf_tunnel *c, const char **why);

#endif /* !CONF_INT_H */
