/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * verbs_pure: what the verbs layer decides without a device (see
 * verbs_pure.h), and the names of verbs.h's enum verbs_rdma, which a
 * daemon without RDMA shows too, and of its enum verbs_wc_error.  Only
 * <infiniband/verbs.h>'s constants are used here: nothing of
 * libibverbs is called.
 */
#include "config.h"

#include <sys/random.h>

#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "addr.h"
#include "engine.h"
#include "verbs.h"
#include "verbs_pure.h"
#include "wire.h"

static const char *const rdma_names[VERBS_RDMA_N] = {
	[VERBS_RDMA_READY] = "ready",
	[VERBS_RDMA_NO_UCM] = "no-rdma-ucm",
	[VERBS_RDMA_NO_NODE] = "no-rdma-cm-node",
	[VERBS_RDMA_NO_DEVICE] = "no-device",
	[VERBS_RDMA_DENIED] = "denied",
	[VERBS_RDMA_FAILED] = "failed"
};

static const char *const wc_error_names[VERBS_WC_N] = {
	[VERBS_WC_NONE] = "none",
	[VERBS_WC_RETRY] = "retry_exceeded",
	[VERBS_WC_RNR_RETRY] = "rnr_retry_exceeded",
	[VERBS_WC_REMOTE] = "remote",
	[VERBS_WC_LOCAL] = "local"
};

/* Name ${v} of the ${n} in ${names}, or "?". */
static const char *
name_of(const char *const *names, unsigned n, unsigned v)
{

	return (v < n ? names[v] : "?");
}

const char *
verbs_rdma_name(enum verbs_rdma r)
{

	return (name_of(rdma_names, VERBS_RDMA_N, (unsigned)r));
}

const char *
verbs_wc_error_name(enum verbs_wc_error c)
{

	return (name_of(wc_error_names, VERBS_WC_N, (unsigned)c));
}

enum verbs_wc_error
verbs_wc_class(int status)
{

	switch (status) {
	case IBV_WC_SUCCESS:
	case IBV_WC_WR_FLUSH_ERR:
		return (VERBS_WC_NONE);
	case IBV_WC_RETRY_EXC_ERR:
		return (VERBS_WC_RETRY);
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return (VERBS_WC_RNR_RETRY);
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_REM_ABORT_ERR:
	case IBV_WC_REM_INV_RD_REQ_ERR:
		return (VERBS_WC_REMOTE);
	default:
		/* LOC_*, MW_BIND, BAD_RESP, FATAL, GENERAL, and any new. */
		return (VERBS_WC_LOCAL);
	}
}

/* Ring memory is registered where it lives: its address is the HCA's. */
static uint8_t *
ring_ptr(void *arg, uint64_t addr)
{

	(void)arg;
	return ((uint8_t *)(uintptr_t)addr);
}

void
verbs_engine_conf(const struct verbs_link_conf *lc, uint8_t *ctrl_send,
    uint32_t lkey, int iwarp, struct engine_conf *ec)
{

	memset(ec, 0, sizeof(*ec));
	ec->sq_size = lc->sq_size;
	ec->rq_size = lc->rq_size;
	ec->inline_size = lc->inline_size;
	ec->signal_every = lc->signal_every;
	ec->max_streams = lc->max_streams;
	ec->ctrl_send = ctrl_send;
	ec->ctrl_send_addr = (uint64_t)(uintptr_t)ctrl_send;
	ec->ctrl_send_lkey = lkey;
	ec->resume = lc->resume;
	/*
	 * A link may run a latency lane, if the peer's hello says so too;
	 * on iWARP from version 12, whose lane switches wait until the
	 * peer answered a FENCE on the old lane.
	 */
	ec->lanes = WIRE_LANES_MAX;
	ec->ring_ptr = ring_ptr;
	if (iwarp) {
		ec->notify = 1;
		ec->chunk = WIRE_WRITE_MAX;
	}
}

struct engine *
verbs_engine_new(const struct verbs_link_conf *lc, int passive,
    const struct engine_conf *ec, char *err, size_t errlen)
{
	struct engine *e;
	const char *why;

	if ((e = engine_new(ec, &why)) == NULL) {
		snprintf(err, errlen, "%s", why);
		return (NULL);
	}
	if (!passive && lc->auth != NULL)
		engine_set_auth(e, lc->auth);
	if (!passive && lc->seal != NULL)
		engine_set_seal(e, lc->seal);
	return (e);
}

int
verbs_hello_make(struct engine *e, unsigned cap, uint8_t out[WIRE_HELLO_LEN])
{
	struct wire_hello h;

	if (cap != 0)
		engine_version_cap(e, cap);
	engine_hello(e, &h);
	/*
	 * Authentication is only as fresh as this nonce.  Early at boot the
	 * pool may not be ready: fail this attempt rather than block the
	 * loop or send a nonce that is not random.
	 */
	if (getrandom(h.nonce, sizeof(h.nonce), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(h.nonce))
		return (-1);
	wire_hello_encode(out, &h);
	return (0);
}

const char *
verbs_reject_text(int status)
{

	/* IB CM reject reasons that RDMA CM reports for RoCE and IB. */
	switch (status) {
	case 8:
		return ("connection refused: nothing listening at that "
		    "address and port");
	case 28:
		return ("connection rejected by the peer");
	default:
		return ("connection rejected");
	}
}

void
verbs_refused(struct verbs_ev *ev, int status, const uint8_t *mine,
    const void *data, size_t len)
{
	struct wire_hello h;
	struct wire_note n;

	if (status != 28 || mine == NULL ||
	    wire_hello_decode(mine, WIRE_HELLO_LEN, &h) != WIRE_OK)
		return;
	if (!wire_note_decode(data, len, &n)) {
		ev->peer_version = h.version >= 3 ? 2 : 0;
		return;
	}
	ev->peer_busy = n.why == WIRE_NOTE_BUSY;
	ev->peer_version = n.version < h.version ? n.version : 0;
}

int
verbs_gate_ask(verbs_gate_fn *gate, void *arg, const struct sockaddr *peer,
    const char *text, int werr, const struct wire_hello *h, uint8_t *why)
{

	*why = WIRE_NOTE_REFUSED;
	/* Limits and allow lists cost a peer nothing to hit: check first. */
	if (gate != NULL && gate(arg, peer, text, werr == WIRE_OK ? h : NULL,
	    werr == WIRE_OK ? NULL : wire_strerror(werr), why) != 0)
		return (-1);
	return (werr == WIRE_OK ? 0 : -1);
}

int
verbs_lane_for(const struct wire_hello *peer_hello,
    const struct sockaddr *peer, const struct wire_hello *req,
    const struct sockaddr_storage *req_peer)
{

	return (req_peer->ss_family != 0 && memcmp(peer_hello->nonce,
	    req->nonce, WIRE_NONCE_LEN) == 0 &&
	    addr_same(peer, (const struct sockaddr *)req_peer, 0));
}
