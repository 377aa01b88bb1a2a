/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/rdma/verbs_pure: the class of the error completion
 * that ended a link, from its status, and the names the metrics show;
 * the engine configuration of a link, on iWARP and elsewhere.
 */
#include <string.h>

#include <infiniband/verbs.h>

#include "engine.h"
#include "verbs.h"
#include "verbs_pure.h"
#include "wire.h"
#include "tap.h"

int
main(void)
{
	static const int remote[] = { IBV_WC_REM_ACCESS_ERR,
	    IBV_WC_REM_INV_REQ_ERR, IBV_WC_REM_OP_ERR, IBV_WC_REM_ABORT_ERR,
	    IBV_WC_REM_INV_RD_REQ_ERR };
	static const int local[] = { IBV_WC_LOC_LEN_ERR,
	    IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOC_EEC_OP_ERR, IBV_WC_LOC_PROT_ERR,
	    IBV_WC_MW_BIND_ERR, IBV_WC_BAD_RESP_ERR, IBV_WC_LOC_ACCESS_ERR,
	    IBV_WC_LOC_RDD_VIOL_ERR, IBV_WC_INV_EECN_ERR,
	    IBV_WC_INV_EEC_STATE_ERR, IBV_WC_FATAL_ERR, IBV_WC_RESP_TIMEOUT_ERR,
	    IBV_WC_GENERAL_ERR, IBV_WC_TM_ERR, IBV_WC_TM_RNDV_INCOMPLETE, 999 };
	static uint8_t ctrl[64];
	struct verbs_link_conf lc;
	struct engine_conf ec;
	size_t i;
	int all;

	ok(verbs_wc_class(IBV_WC_SUCCESS) == VERBS_WC_NONE,
	    "a success ends nothing");
	ok(verbs_wc_class(IBV_WC_WR_FLUSH_ERR) == VERBS_WC_NONE,
	    "a flush is a consequence, not a cause");
	ok(verbs_wc_class(IBV_WC_RETRY_EXC_ERR) == VERBS_WC_RETRY,
	    "transport retries exceeded");
	ok(verbs_wc_class(IBV_WC_RNR_RETRY_EXC_ERR) == VERBS_WC_RNR_RETRY,
	    "RNR retries exceeded");
	for (i = 0, all = 1; i < sizeof(remote) / sizeof(remote[0]); i++)
		all &= verbs_wc_class(remote[i]) == VERBS_WC_REMOTE;
	ok(all, "the peer's refusals are remote");
	for (i = 0, all = 1; i < sizeof(local) / sizeof(local[0]); i++)
		all &= verbs_wc_class(local[i]) == VERBS_WC_LOCAL;
	ok(all, "local errors, fatal, general and unknown statuses are local");

	ok(strcmp(verbs_wc_error_name(VERBS_WC_NONE), "none") == 0 &&
	    strcmp(verbs_wc_error_name(VERBS_WC_RETRY), "retry_exceeded") ==
	    0 && strcmp(verbs_wc_error_name(VERBS_WC_RNR_RETRY),
	    "rnr_retry_exceeded") == 0 &&
	    strcmp(verbs_wc_error_name(VERBS_WC_REMOTE), "remote") == 0 &&
	    strcmp(verbs_wc_error_name(VERBS_WC_LOCAL), "local") == 0,
	    "the classes' names, as the metrics' status label says them");
	ok(strcmp(verbs_wc_error_name(VERBS_WC_N), "?") == 0 &&
	    strcmp(verbs_wc_error_name((enum verbs_wc_error)-1), "?") == 0,
	    "a class out of range is \"?\"");

	/* iWARP: no immediates, WRITEs as large as they go, two lanes
	 * (fenced, version 12). */
	memset(&lc, 0, sizeof(lc));
	lc.sq_size = lc.rq_size = 64;
	verbs_engine_conf(&lc, ctrl, 7, 0, &ec);
	ok(!ec.notify && ec.chunk == 0 && ec.lanes == WIRE_LANES_MAX,
	    "a device with immediates: WRITE WITH IMMEDIATE, default WRITEs");
	verbs_engine_conf(&lc, ctrl, 7, 1, &ec);
	ok(ec.notify && ec.chunk == WIRE_WRITE_MAX &&
	    ec.lanes == WIRE_LANES_MAX && ec.sq_size == 64 &&
	    ec.ctrl_send == ctrl && ec.ctrl_send_lkey == 7,
	    "an iWARP device: no immediates, WRITEs of %u bytes, a "
	    "latency lane", (unsigned)WIRE_WRITE_MAX);
	return (tap_done());
}
