/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * conf: read rstreamd.conf (libconfig syntax, see rstreamd.conf(5)) into
 * plain structures.
 *
 * Parsing is separate from applying: conf_load() checks everything it can
 * check without changing the system (syntax, names, types, ranges,
 * address forms, consistency between settings, key files, the users and
 * groups sockets are given to) and fills a struct conf; resolving host
 * names (the daemon does that while it runs, and again and again),
 * binding, chown/chmod of sockets and registering memory are the
 * caller's business.  So "rstreamd -n" and a reload that keeps the old
 * configuration on error both come for free.
 *
 * Every error is one complete line meant for the user, naming the file and
 * the line at fault: "/etc/rstreamd.conf:7: tunnel pg: recvbuf 1000 is
 * below the minimum 4096".
 *
 * This header is what the rest of the daemon uses; the parser's files
 * share their own calls in conf_int.h.
 */
#ifndef CONF_H
#define CONF_H

#include <stddef.h>
#include <stdint.h>

#include "ident.h"

/* Port of peer and listen addresses written without one. */
#define CONF_DEFAULT_PORT "7471"

enum conf_addr_kind { CONF_ADDR_TCP = 1, CONF_ADDR_UNIX = 2 };

struct conf_addr {
	int kind;		/* enum conf_addr_kind */
	char host[256];		/* TCP: name or address, v6 without brackets */
	char port[8];		/* TCP: decimal, "0" allowed only where said */
	char path[108];		/* UNIX: filesystem path (sun_path size) */
	char text[400];		/* as the user wrote it, for log messages */
	int line;		/* where, in the configuration file; 0: unknown */
};

struct conf_sizes {
	uint32_t sendbuf, recvbuf;	/* ring bytes: power of two, 4 KiB..1 GiB */
	uint32_t ring_min;		/* rings start here and grow; 0: fixed */
	uint32_t max_memory;		/* MiB its streams' rings may hold; 0: no
					   limit of its own; CONF_MEMORY_SHARE:
					   unset, an equal share (see below) */
	uint32_t sq_size, rq_size;	/* queue depths: 4..65536 / 4..32768 */
	uint32_t inline_size;		/* 0..1024 */
	uint32_t max_streams;		/* concurrent streams on this tunnel, 1..16384 */
	/* Not sizes, but per tunnel with a default in the same way: */
	uint32_t connect_timeout;	/* seconds to connect to the target, 1..3600 */
	uint32_t idle_timeout;		/* seconds without a byte either way, 0 = none */
	uint32_t resume_time;		/* seconds a stream waits for a new link, 0 = none */
	/* The oldest protocol version the tunnel's links may speak (1 to
	 * WIRE_VERSION); 0 in defaults: each tunnel's conf_tunnel_needs
	 * (conf_int.h).  With an identity, at least WIRE_VERSION_IDENTITY. */
	uint32_t min_version;
	/* The link's IP TOS byte (RoCE v2 DSCP/ECN, GRH traffic class),
	 * 0..255, and its path's service level, 0..15; CONF_UNSET: the
	 * RDMA CM's choice.  A connecting side's only: the accepting side's
	 * QP takes the connect request's. */
	uint32_t traffic_class, service_level;
	/* The tunnel's weight against others on a device and worker, 1..16. */
	uint32_t priority;
};

/* traffic_class or service_level left to the RDMA CM. */
#define CONF_UNSET	UINT32_MAX

/* Room for where a setting is, "FILE:LINE", for messages. */
#define CONF_WHERE_LEN	1100

/* Where traffic_class and service_level are set ("" where they are not),
 * for what iWARP devices ignore (conf_qos_warn): kept apart from struct
 * conf_sizes, so that a setting that only moved changes no tunnel. */
struct conf_qos_at {
	char traffic_class[CONF_WHERE_LEN];
	char service_level[CONF_WHERE_LEN];
};

/* A client tunnel's peer: one address, or a list tried in turn. */
#define CONF_PEERS_MAX	8

/*
 * A pre-shared key: the bytes of a key file, at least CONF_KEY_MIN (256
 * random bits) and at most CONF_KEY_MAX.  The file must not be accessible
 * to group or others.
 */
#define CONF_KEY_MIN	32
#define CONF_KEY_MAX	1024
struct conf_key {
	int set;
	char file[1024];		/* where it came from, for messages */
	size_t len;
	uint8_t key[CONF_KEY_MAX];
};

/*
 * A peer of the fleet (peers, peers_file): its name, as tunnels' peers
 * lists name it, and the public key it must prove it holds.
 */
struct conf_peer {
	char name[65];			/* tunnel-name characters, 1..64 */
	uint8_t pub[IDENT_KEY_LEN];
	int origin;			/* believe its ORIGIN records */
	int line;			/* where it was defined */
	char where[CONF_WHERE_LEN];	/* "FILE:LINE" for messages */
};

/* The node's own identity (identity_file). */
struct conf_identity {
	int set;			/* read (never under CONF_NO_KEYS) */
	char file[1024];		/* "" = none */
	int line;			/* where it is set */
	uint8_t priv[IDENT_KEY_LEN], pub[IDENT_KEY_LEN];
};

/* The names a tunnel's peers list may give. */
#define CONF_TUNNEL_PEERS_MAX	32

/* An allow entry: peers whose address matches the first ${prefix} bits. */
struct conf_net {
	int family;			/* AF_INET or AF_INET6 */
	uint8_t addr[16];
	unsigned prefix;
	char text[64];
	int line;			/* where it is written */
};

struct conf_tunnel {
	char name[65];
	int line;			/* line of the tunnel's group */
	int has_accept;			/* client side: accept + peer */
	struct conf_addr accept;	/* where local clients connect */
	struct conf_addr peer;		/* the peer rstreamd: kind TCP, host+port (port default 7471) */
	struct conf_addr peers[CONF_PEERS_MAX];	/* peers[0] is peer */
	unsigned npeers;
	int has_target;			/* server side */
	struct conf_addr target;
	struct conf_sizes sz;
	struct conf_qos_at qos_at;	/* in the tunnel, or in defaults */
	uint32_t unix_mode;		/* accept=unix: socket file mode, default 0660 */
	char unix_owner[64];		/* "" = leave as is */
	char unix_group[64];
	/* Their ids, looked up by conf_load (not under CONF_NO_KEYS), so
	 * that applying the configuration asks no name service; -1: leave
	 * as is. */
	long unix_uid, unix_gid;
	/* target: PROXY protocol header version written first (0: none). */
	int proxy_protocol;
	/* target: believe the client address (ORIGIN) any peer claims,
	 * keyless ones included (proxy_protocol without a key). */
	int proxy_trust_any_peer;
	/* target, with an identity_file: believe the ORIGIN of a peer that
	 * proved the tunnel's key but no identity. */
	int proxy_trust_key_holders;
	/* resume_time without a key: allowed, though anyone who saw the
	 * link's hellos can take its streams over. */
	int resume_without_key;
	/* Its key: its own key_file, else the global one ("" = none). */
	struct conf_key key;
	/* The peers that may carry its streams, by name (conf_tunnel_trusts
	 * says whether a peer is one): the first peer_mask_n of peer_names;
	 * 0: any peer of the global list.  Names, not indexes or pointers
	 * into struct conf: a tunnel's copy outlives its file's (rsd.h),
	 * and a reload may reorder or rekey the peers. */
	uint32_t peer_mask_n;
	char peer_names[CONF_TUNNEL_PEERS_MAX][65];
	/* Seal its links' stream bytes (default: with an identity_file). */
	int encrypt;
};

/* Where rstreamctl finds the daemon unless the file says otherwise. */
#define CONF_DEFAULT_CONTROL "/run/rstreamd/control.sock"

/* Seconds SIGTERM waits for open streams to finish. */
#define CONF_DEFAULT_DRAIN_TIME 30
#define CONF_MAX_DRAIN_TIME 3600

/* Incoming links: at most this many, and this many still connecting. */
#define CONF_DEFAULT_MAX_LINKS 64
#define CONF_DEFAULT_MAX_PENDING 16
/* From one peer address, at most this many links still connecting. */
#define CONF_DEFAULT_MAX_PENDING_PER_ADDR 4
/* Connect requests a second from one address (twice that at once). */
#define CONF_DEFAULT_MAX_CONNECT_RATE 32
/* Unauthenticated incoming links at once (counted in max_links too). */
#define CONF_DEFAULT_MAX_UNAUTH_LINKS 16
/* Seconds without a stream after which an incoming link gives its slot
 * up to a new one when a limit is reached (0: never). */
#define CONF_DEFAULT_LINK_IDLE_TIMEOUT 60
/* Seconds a link has from its connect request to being authenticated. */
#define CONF_DEFAULT_HANDSHAKE_TIMEOUT 5
/* The RC transport's ACK timeout (4.096 us * 2^ack_timeout: 14 is about
 * 67 ms) and how often it retries before the link fails. */
#define CONF_DEFAULT_ACK_TIMEOUT 14
#define CONF_MIN_ACK_TIMEOUT 8
#define CONF_MAX_ACK_TIMEOUT 24
#define CONF_DEFAULT_RETRY_COUNT 7
/* Registered ring memory each link keeps from closed streams for new ones
 * (bytes), so that opening a stream neither maps nor registers memory. */
#define CONF_DEFAULT_RING_POOL (16 * 1024 * 1024)
#define CONF_MAX_RING_POOL (1024 * 1024 * 1024)
#define CONF_MAX_WORKERS 256
/* Microseconds a loop keeps polling after work instead of sleeping (0:
 * it sleeps at once; see loop_busy_poll). */
#define CONF_DEFAULT_BUSY_POLL 0
#define CONF_MAX_BUSY_POLL 100000

/* RDMA listen address (TCP kind, host+port). */
struct conf_listen {
	struct conf_addr addr;
	int line;
};

/*
 * A configuration: plain data but for its arrays, which come from
 * malloc (listen, peers, allow) or secmem_alloc (tunnels, and the
 * struct itself), as conf_free releases them; confread.c builds one the
 * same way from a reader's answer.
 */
struct conf {
	char file[4096];
	struct conf_listen *listen;
	size_t nlisten;
	int has_source;			/* outgoing links bind to source.host */
	struct conf_addr source;
	int log_level;			/* syslog level: LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO (default), LOG_DEBUG */
	char log_file[4096];		/* "" = stderr or the journal */
	char control[108];		/* control socket path, "" = none */
	uint32_t control_mode;		/* default 0660 */
	char control_group[64];		/* "" = leave as is */
	long control_gid;		/* its id (not under CONF_NO_KEYS); -1:
					   none */
	/* The HTTP metrics endpoint: a numeric IPv4 or IPv6 address and a
	 * port (kind CONF_ADDR_TCP); kind 0: none (the default). */
	struct conf_addr metrics_listen;
	uint32_t drain_time;		/* seconds, 0..CONF_MAX_DRAIN_TIME */
	uint32_t max_links;		/* incoming links at once */
	uint32_t max_pending;		/* incoming links not yet up */
	uint32_t max_pending_per_addr;	/* the same, from one address */
	uint32_t max_connect_rate;	/* connect requests a second, one address */
	uint32_t max_unauth_links;	/* incoming links without a key */
	uint32_t link_idle_timeout;	/* seconds; 0: idle links stay */
	uint32_t handshake_timeout;	/* seconds, 1..300 */
	uint32_t ack_timeout;		/* exponent, 8..24 */
	uint32_t retry_count;		/* 1..7 */
	/* The newest protocol version any link says or answers in,
	 * WIRE_VERSION_MIN..WIRE_VERSION (default: WIRE_VERSION): a daemon
	 * held to an older one while its peers are upgraded. */
	uint32_t max_version;
	uint32_t ring_pool;		/* bytes per link, 0: none */
	uint32_t max_memory;		/* MiB of ring memory, 0: no limit */
	uint32_t workers;		/* threads carrying links; 0: a CPU's */
	uint32_t busy_poll;		/* microseconds; 0: off */
	struct conf_key key;		/* global key_file */
	struct conf_identity identity;	/* identity_file */
	char peers_file[1024];		/* "" = none */
	struct conf_peer *peers;	/* peers, then peers_file's */
	size_t npeers;
	struct conf_net *allow;		/* peers that may link to us; none: any */
	size_t nallow;
	struct conf_sizes defaults;
	struct conf_qos_at defaults_qos_at;
	struct conf_tunnel *tunnels;
	size_t ntunnels;
};

/* conf_load flags: leave key files, identity_file and peers_file unread
 * (rstreamctl wants the control socket only, and may not be allowed to
 * read them); a tunnel's peers names are then not looked up either when
 * a peers_file could define them, nor users and groups. */
#define CONF_NO_KEYS	0x01

/**
 * conf_load(path, flags, out, err, errlen):
 * Read and check the configuration file ${path}.  On success set ${*out}
 * to a new configuration (release it with conf_free) and return 0.  On
 * error return -1, leave ${*out} alone, and write into ${err} (${errlen}
 * bytes) one complete message "FILE:LINE: what is wrong", or
 * "FILE: cannot read: REASON" when the file cannot be read; where libconfig
 * finds the syntax wrong, "FILE:LINE: syntax error: WHY" when the text
 * says why (cfghint_syntax).  Users and groups (unix_owner, unix_group,
 * control_group) must exist: their ids are looked up.  Every tunnel
 * in the result has every field filled (defaults applied), and at least
 * one listen address exists if any tunnel has a target.  A file may
 * define no tunnels ("tunnels = ( );"), but must say so.  ${flags}: 0 or
 * CONF_NO_KEYS (key files are then not read and keys are left unset).
 */
int conf_load(const char *path, int flags, struct conf **out, char *err,
    size_t errlen);

/**
 * conf_warn(c, keyless, fn, arg):
 * What in ${c} is valid but likely not what was meant, one line each,
 * "FILE:LINE: what and why", to ${fn}(${arg}, line), in this order: an
 * identity_file with no peer listed (no node could link to this one), an
 * allow prefix with host bits set ("10.0.0.1/8" allows 10.0.0.0/8), and
 * if ${keyless}, the tunnels whose links prove neither a key nor an
 * identity.  The daemon logs them when it starts and after a reload, and
 * rstreamd -n prints them.  Returns 1 if it warned about keyless
 * tunnels, else 0.
 */
int conf_warn(const struct conf *c, int keyless,
    void (*fn)(void *, const char *), void *arg);

/**
 * conf_qos_warn(t, tos_ignored, sl_ignored, on, fn, arg):
 * What client tunnel ${t} sets that its link's device ignores, one line
 * each, "FILE:LINE: tunnel NAME: ...", the place of the setting (in the
 * tunnel or in defaults), to ${fn}(${arg}, line): its service_level with
 * ${sl_ignored} (iWARP has no SL), then its traffic_class with
 * ${tos_ignored} (Soft-iWARP gives its TCP connections no TOS).  ${on}
 * names the device, to end the line "..., and ${on} is iWARP": "the
 * device of its link to 192.0.2.2:7471, siw0,", say.  Returns how many
 * lines it said (nothing for a target tunnel).
 */
int conf_qos_warn(const struct conf_tunnel *t, int tos_ignored,
    int sl_ignored, const char *on, void (*fn)(void *, const char *),
    void *arg);

/**
 * conf_keyed(c):
 * Whether ${c} holds a key: an identity, or a tunnel's key_file (its
 * own or the global one), as read (not under CONF_NO_KEYS).
 */
int conf_keyed(const struct conf *c);

/**
 * conf_free(c):
 * Free the configuration ${c}.  conf_free(NULL) does nothing.
 */
void conf_free(struct conf *c);

/**
 * conf_addr_same(x, y):
 * True if ${x} and ${y} are the same address as written.
 */
int conf_addr_same(const struct conf_addr *x, const struct conf_addr *y);

/**
 * conf_tunnel_same(x, y):
 * True if tunnels ${x} and ${y} are configured identically (a reload
 * keeps such a tunnel as it is).
 */
int conf_tunnel_same(const struct conf_tunnel *x, const struct conf_tunnel *y);

/**
 * conf_net_match(nets, n, sa):
 * True if socket address ${sa} (AF_INET or AF_INET6; a v4-mapped v6
 * address counts as v4) matches one of the ${n} entries of ${nets}.
 */
struct sockaddr;
int conf_net_match(const struct conf_net *nets, size_t n,
    const struct sockaddr *sa);

/**
 * conf_key_same(x, y):
 * True if ${x} and ${y} are both unset, or both set to the same bytes.
 */
int conf_key_same(const struct conf_key *x, const struct conf_key *y);

/**
 * conf_max_memory_bytes(c):
 * ${c}'s max_memory in bytes; 0: no limit.
 */
static inline uint64_t
conf_max_memory_bytes(const struct conf *c)
{

	return ((uint64_t)c->max_memory << 20);
}

/* A tunnel's max_memory left unset: an equal share of the daemon's. */
#define CONF_MEMORY_SHARE	UINT32_MAX

/**
 * conf_tunnel_max_memory(c, t):
 * The bytes of ring memory tunnel ${t}'s streams may hold under
 * configuration ${c}; 0: no limit of its own (only ${c}'s max_memory).
 * Its own max_memory if set; else, when ${c} has a max_memory, an equal
 * share of it among ${c}'s tunnels, so that no tunnel's streams (a peer's
 * on a keyless tunnel, say) can take what the others need.
 */
static inline uint64_t
conf_tunnel_max_memory(const struct conf *c, const struct conf_tunnel *t)
{

	if (t->sz.max_memory != CONF_MEMORY_SHARE)
		return ((uint64_t)t->sz.max_memory << 20);
	if (c->ntunnels == 0)
		return (conf_max_memory_bytes(c));
	return (conf_max_memory_bytes(c) / c->ntunnels);
}

/**
 * conf_peer_by_pub(c, pub):
 * The peer of ${c} (peers or peers_file) whose public key is ${pub}, or
 * NULL if there is none.
 */
const struct conf_peer *conf_peer_by_pub(const struct conf *c,
    const uint8_t pub[IDENT_KEY_LEN]);

/**
 * conf_tunnel_trusts(c, t, p):
 * True if peer ${p} of ${c} may carry tunnel ${t}'s streams: ${t} has no
 * peers list, or names ${p} in it.  False for ${p} NULL (a peer not in
 * ${c}'s list).  ${t} may come from an older configuration than ${c}
 * (names are compared).
 */
int conf_tunnel_trusts(const struct conf *c, const struct conf_tunnel *t,
    const struct conf_peer *p);

/**
 * conf_tunnel_find(c, name):
 * The tunnel of ${c} called ${name}, or NULL if there is none.
 */
const struct conf_tunnel *conf_tunnel_find(const struct conf *c,
    const char *name);

#endif /* !CONF_H */
