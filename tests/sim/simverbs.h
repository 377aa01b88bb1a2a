/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * simverbs: lib/rdma/verbs.h over the simulator's fabric (fabric.h), so
 * that the daemon's link rooms and cm.c run as they are, on a real loop,
 * with no RDMA device and no libibverbs linked (tests/sim/link-sim).  How
 * it keeps verbs.h's promises, and which ones cannot matter here, is
 * said at the top of simverbs.c; this header is what a test adds: how
 * the hosts at an address behave, a path that breaks, a peer that stops
 * reading, and what happened to every attempt to connect.
 *
 * Every verbs_cm of the process is on one simulated fabric: a connect
 * request goes to the listener (verbs_listen) whose address is the
 * link's destination.  Addresses are written as addr_text writes them,
 * with the port: "127.0.1.3:7471".
 */
#ifndef SIMVERBS_H
#define SIMVERBS_H

#include <stddef.h>
#include <stdint.h>

struct verbs_cm;

/* How the host at an address answers connect requests (simverbs_peer). */
struct simverbs_peer {
	int dark;		/* requests vanish: no answer at all */
	/*
	 * Its verbs layer cannot read a hello newer than version ${speaks}
	 * (0: it reads them all), as an older rstreamd's: such a request
	 * fails the hello check before its gate (which is asked, with the
	 * hello invalid, and counts it), and is rejected with a note that
	 * says version ${noted}: ${speaks} when 0, one below the refused
	 * hello's when -1 (a peer, or a forger, that talks us down).
	 */
	unsigned speaks;
	int noted;
	unsigned answers;	/* it answers in at most this version (0: the
				   request's): a peer that accepts, then
				   speaks older */
};

/**
 * simverbs_peer(addr, p):
 * Requests to ${addr} from now on meet ${p} (copied); NULL: a plain host.
 */
void simverbs_peer(const char *addr, const struct simverbs_peer *p);

/**
 * simverbs_cut(addr):
 * The path of every connection to ${addr} breaks (fab_break): nothing
 * more crosses it, and both ends' queue pairs fail (an error completion
 * each, and no CM event: a broken path carries none).  Requests to
 * ${addr} still go, unless it is dark too.  Returns how many broke.
 */
int simverbs_cut(const char *addr);

/**
 * simverbs_overwrite(addr, side):
 * On every connection to ${addr}, one who read a WRITE's clear header
 * overwrites the next plain WRITE (sealed data) from side ${side} (0:
 * the connecting link's, 1: the accepting one's) as it lands, before its
 * tag follows (fab_side.overwrite).  Returns how many connections.
 */
int simverbs_overwrite(const char *addr, int side);

/**
 * simverbs_raises(addr, side):
 * How many times the completion channels of side ${side} (0: the
 * connecting link's, 1: the accepting one's) of every connection to
 * ${addr} were raised.
 */
uint64_t simverbs_raises(const char *addr, int side);

/**
 * simverbs_iwarp(on):
 * Links set up from now on are on devices without immediate data, as
 * iWARP's (${on}), or with (0, the default): their engines say so
 * (engine_conf.notify), and their fabric refuses immediates.
 */
void simverbs_iwarp(int on);

/**
 * simverbs_lane_drop(addr):
 * Lane 1 of every link to ${addr} that runs one is disconnected, as its
 * RDMA CM connection alone ending would tell both ends (lane 0 and the
 * path stay).  Returns how many.
 */
int simverbs_lane_drop(const char *addr);

/**
 * simverbs_lane_request(cm, dst, nonce):
 * A lane-1 connect request to the listener at ${dst}, from ${cm}, that
 * belongs to no link of its own: its hello says LANE1 and nonce
 * ${nonce}; NULL: the nonce and source address of the newest link
 * connected to ${dst}, whose lane 1 the request repeats.  It is an
 * attempt (simverbs_attempt) of its own; the link returned stands for
 * it (its owner frees it with verbs_link_free once it ended).
 */
struct verbs_link *simverbs_lane_request(struct verbs_cm *cm,
    const char *dst, const uint8_t *nonce);

/**
 * simverbs_deaf(cm, deaf):
 * While ${deaf}, the links of ${cm} hear nothing: what arrives for them
 * lands (the fabric acknowledges it, as an HCA does) but their
 * completions wait unread, as a daemon's would whose loop stalls; CM
 * events still come.  Turned off, they hear all that waited.
 */
void simverbs_deaf(struct verbs_cm *cm, int deaf);

/**
 * simverbs_reset():
 * Forget every address's behaviour, every attempt and any error (the
 * connections, listeners and channels stay).
 */
void simverbs_reset(void);

/* What became of an attempt to connect, as far as the fabric saw it. */
enum simverbs_outcome {
	SIMVERBS_PENDING = 0,	/* nothing yet */
	SIMVERBS_DARK,		/* the request vanished */
	SIMVERBS_NOBODY,	/* nothing listens there (IB CM reason 8) */
	SIMVERBS_REJECTED,	/* rejected: its note says why */
	SIMVERBS_ACCEPTED,	/* accepted by the listener's side */
	SIMVERBS_UP		/* established at the connecting side */
};

/* One verbs_connect, and what came of it. */
struct simverbs_attempt {
	char dst[64];
	unsigned version;	/* the version its hello said (0: none went) */
	enum simverbs_outcome outcome;
	int noted;		/* REJECTED with a refusal note */
	unsigned note_version;	/* that note's version */
	int busy;		/* it said WIRE_NOTE_BUSY */
	/* When (loop_now_ms): verbs_connect; the connecting side
	 * established (0: never); verbs_link_free (0: not yet). */
	uint64_t start_ms, up_ms, end_ms;
};

/**
 * simverbs_attempts():
 * How many attempts there were since the last simverbs_reset.
 */
size_t simverbs_attempts(void);

/**
 * simverbs_attempt(i):
 * Attempt ${i} (0 the first), or NULL past the last.
 */
const struct simverbs_attempt *simverbs_attempt(size_t i);

/**
 * simverbs_error():
 * The first rule anyone broke on the fabric since the last
 * simverbs_reset (a WRITE outside a live region, RNR, a send queue
 * overflowed, receives not all posted before connecting), or NULL.
 */
const char *simverbs_error(void);

#endif /* !SIMVERBS_H */
