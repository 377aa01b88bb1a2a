/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * verbs_pure: what the verbs layer decides without a device (pure, but
 * for a hello's random nonce): the engine a link runs, the hello it says,
 * and what a peer's reject tells.  Only the verbs files include it (see
 * tests/layers.sh), and the simulator's stand-in for them,
 * tests/sim/simverbs.c, which must decide these the same way: so they are
 * here once, apart from everything that needs libibverbs or librdmacm.
 */
#ifndef VERBS_PURE_H
#define VERBS_PURE_H

#include <stddef.h>
#include <stdint.h>

#include <sys/socket.h>

#include "verbs.h"
#include "wire.h"

struct engine;
struct engine_conf;

/**
 * verbs_engine_conf(lc, ctrl_send, lkey, iwarp, ec):
 * The engine configuration of a link configured by ${lc}, whose control
 * records go out of ${ctrl_send} (WIRE_LANES_MAX * lc->sq_size *
 * WIRE_MSG_SIZE bytes, registered under ${lkey}), into ${*ec}: a link that
 * can run two lanes (engine_lanes), so its receive area is WIRE_LANES_MAX
 * * lc->rq_size slots and its completion queue holds both lanes' WRs and
 * receives.  On a device of ${iwarp}, which has no immediate data, the
 * link runs without (engine_notify), and its WRITEs are as large as the
 * protocol allows (WIRE_WRITE_MAX): each costs a second work request
 * there, its notice, and both a completion.
 */
void verbs_engine_conf(const struct verbs_link_conf *lc, uint8_t *ctrl_send,
    uint32_t lkey, int iwarp, struct engine_conf *ec);

/**
 * verbs_engine_new(lc, passive, ec, err, errlen):
 * The engine of a link configured by ${lc}, made with ${ec}
 * (verbs_engine_conf's): a connecting link's (not ${passive})
 * authenticates and seals as ${lc} says; an accepted link's gets that
 * from its owner before it is accepted.  NULL with the reason in ${err}.
 */
struct engine *verbs_engine_new(const struct verbs_link_conf *lc,
    int passive, const struct engine_conf *ec, char *err, size_t errlen);

/**
 * verbs_hello_make(e, cap, out):
 * Engine ${e}'s connect private data, saying at most protocol version
 * ${cap} (0: the newest it speaks), with a random nonce, encoded into
 * ${out}.  Returns 0, or -1 when no random nonce is available yet (early
 * at boot): then nothing is written.
 */
int verbs_hello_make(struct engine *e, unsigned cap,
    uint8_t out[WIRE_HELLO_LEN]);

/**
 * verbs_reject_text(status):
 * What a reject of our connect request with IB CM reason ${status} means,
 * for a DOWN event's why.
 */
const char *verbs_reject_text(int status);

/**
 * verbs_wc_class(status):
 * The class of an error completion of status ${status} (enum
 * ibv_wc_status): VERBS_WC_NONE for a success and for a flush (a
 * consequence of the error that ended the link, not its cause).
 */
enum verbs_wc_error verbs_wc_class(int status);

/**
 * verbs_refused(ev, status, mine, data, len):
 * What a peer that rejected our connect request (IB CM reason ${status},
 * private data ${data} of ${len} bytes) said, into ${ev}'s peer_version
 * and peer_busy (see struct verbs_ev); ${mine} is the hello we sent
 * (NULL: none went).  Reason 28 is a consumer's reject: busy, or the
 * newest version it speaks when that is older than the one we offered.
 * A reject without a refusal note comes from a peer older than version
 * 3, which cannot read a version-3 hello: it gets 2 (or 1; see
 * wire_version_said).  A note that says an older version than ours is a
 * peer that refused our hello for its version.  Either may be forged:
 * the caller decides what to believe.
 */
void verbs_refused(struct verbs_ev *ev, int status, const uint8_t *mine,
    const void *data, size_t len);

/**
 * verbs_gate_ask(gate, arg, peer, text, werr, h, why):
 * Whether a connect request from ${peer} (${text}) whose hello decoded
 * as ${werr} (WIRE_OK: into ${h}) gets through its listener's gate
 * ${gate} (NULL: none) with ${arg}: 0, or -1 to reject it at once with
 * a refusal note saying ${*why}.  The gate is asked first, about an
 * invalid hello too, so that it counts and reports it (see
 * verbs_gate_fn); an invalid one never gets through.
 */
int verbs_gate_ask(verbs_gate_fn *gate, void *arg, const struct sockaddr *peer,
    const char *text, int werr, const struct wire_hello *h, uint8_t *why);

/**
 * verbs_lane_for(peer_hello, peer, req, req_peer):
 * Is lane-1 request ${req}, from ${req_peer}, for the link whose peer
 * said ${peer_hello} on lane 0 from ${peer}: the same nonce, from the
 * same address (rstreamd-protocol(7), "Connecting lane 1")?
 */
int verbs_lane_for(const struct wire_hello *peer_hello,
    const struct sockaddr *peer, const struct wire_hello *req,
    const struct sockaddr_storage *req_peer);

#endif /* !VERBS_PURE_H */
