/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * verbs_data: a link's data path: the receives and chains of sends the
 * engine asks for, posted; completions polled in batches and fed back;
 * the queue pair stopped when the transport or the engine fails.
 */
#include "config.h"

#include <arpa/inet.h>

#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "engine.h"
#include "engine_io.h"
#include "verbs.h"
#include "verbs_int.h"
#include "wire.h"

/* Completions polled per ibv_poll_cq; work requests per ibv_post_send. */
#define POLL_BATCH	32
#define POST_BATCH	32
/* Receive wr_ids carry this bit; send wr_ids are sequence numbers. */
#define RECV_TAG	(UINT64_C(1) << 63)

void
verbs_link_stop(struct verbs_link *l)
{
	struct ibv_qp_attr a;

	if (l == NULL || !l->have_qp || l->id == NULL || l->id->qp == NULL)
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_ERR;
	(void)ibv_modify_qp(l->id->qp, &a, IBV_QP_STATE);
}

/*
 * The transport failed: the queue pair stops before the engine hears of
 * it, since a sealed link's engine then gives kept streams their
 * plaintext back in the very ring memory a WRITE still queued (or
 * retransmitted) would read.
 */
void
verbs_transport_fail(struct verbs_link *l, const char *why)
{

	verbs_link_stop(l);
	engine_fail(l->e, ENGINE_ERR_TRANSPORT, why);
}

static int
post_recvs(struct verbs_link *l)
{
	struct ibv_recv_wr wr[POST_BATCH], *bad;
	struct ibv_sge sge[POST_BATCH];
	uint32_t slots[POST_BATCH];
	int n, k, rc;

	while ((n = engine_take_recvs(l->e, slots, POST_BATCH)) > 0) {
		for (k = 0; k < n; k++) {
			sge[k].addr = (uint64_t)(uintptr_t)(l->recv_buf +
			    (size_t)slots[k] * WIRE_MSG_SIZE);
			sge[k].length = WIRE_MSG_SIZE;
			sge[k].lkey = l->recv_mr->lkey;
			wr[k].wr_id = RECV_TAG | slots[k];
			wr[k].sg_list = &sge[k];
			wr[k].num_sge = 1;
			wr[k].next = k + 1 < n ? &wr[k + 1] : NULL;
		}
		if ((rc = ibv_post_recv(l->id->qp, wr, &bad)) != 0) {
			char why[96];

			snprintf(why, sizeof(why), "ibv_post_recv: %s",
			    strerror(rc));
			verbs_transport_fail(l, why);
			return (-1);
		}
	}
	return (0);
}

static int
post_sends(struct verbs_link *l)
{
	struct engine_wr ew[POST_BATCH];
	struct ibv_send_wr wr[POST_BATCH], *bad;
	struct ibv_sge sge[POST_BATCH];
	int n, k, rc;

	do {
		if ((n = engine_take_wrs(l->e, ew, POST_BATCH)) == 0)
			break;
		for (k = 0; k < n; k++) {
			memset(&wr[k], 0, sizeof(wr[k]));
			sge[k].addr = ew[k].local_addr;
			sge[k].length = ew[k].len;
			sge[k].lkey = ew[k].lkey;
			wr[k].wr_id = ew[k].wr_id;
			wr[k].sg_list = &sge[k];
			wr[k].num_sge = 1;
			switch (ew[k].op) {
			case ENGINE_WR_WRITE_IMM:
			case ENGINE_WR_WRITE:
				wr[k].opcode = ew[k].op == ENGINE_WR_WRITE ?
				    IBV_WR_RDMA_WRITE :
				    IBV_WR_RDMA_WRITE_WITH_IMM;
				wr[k].imm_data = htonl(ew[k].imm);
				wr[k].wr.rdma.remote_addr = ew[k].remote_addr;
				wr[k].wr.rdma.rkey = ew[k].rkey;
				break;
			case ENGINE_WR_SEND_IMM:
				wr[k].opcode = IBV_WR_SEND_WITH_IMM;
				wr[k].imm_data = htonl(ew[k].imm);
				break;
			default:
				wr[k].opcode = IBV_WR_SEND;
				break;
			}
			if (ew[k].signaled)
				wr[k].send_flags |= IBV_SEND_SIGNALED;
			if (ew[k].inlined)
				wr[k].send_flags |= IBV_SEND_INLINE;
			l->posted[ew[k].wr_id % l->conf.sq_size] = ew[k];
			wr[k].next = k + 1 < n ? &wr[k + 1] : NULL;
		}
		/* One doorbell for the whole chain. */
		if ((rc = ibv_post_send(l->id->qp, wr, &bad)) != 0) {
			char why[96];

			snprintf(why, sizeof(why), "ibv_post_send: %s",
			    strerror(rc));
			verbs_transport_fail(l, why);
			return (-1);
		}
	} while (n == POST_BATCH);
	return (0);
}

/*
 * The engine failed: no work request may run from now on, before any
 * RELEASED event lets the embedder free ring memory.  Returns -1.
 */
static int
failed(struct verbs_link *l)
{

	verbs_link_stop(l);
	return (-1);
}

int
verbs_link_flush(struct verbs_link *l)
{

	if (l->e == NULL || engine_error(l->e) != NULL)
		return (failed(l));
	/* Receives first: credit updates in the sends may count them. */
	if (post_recvs(l) || post_sends(l))
		return (failed(l));
	return (0);
}

/* Say which work request failed, so a bad one can be told from the fabric. */
static void
wc_failed(struct verbs_link *l, const struct ibv_wc *wc)
{
	const struct engine_wr *w;
	char why[256];
	int n;

	n = snprintf(why, sizeof(why), "work request failed: %s",
	    ibv_wc_status_str(wc->status));
	/* An error completion's opcode is undefined; its wr_id is not. */
	if (wc->status == IBV_WC_WR_FLUSH_ERR || (wc->wr_id & RECV_TAG) ||
	    (w = &l->posted[wc->wr_id % l->conf.sq_size])->wr_id !=
	    wc->wr_id || w->len == 0 || n < 0 || (size_t)n >= sizeof(why)) {
		verbs_transport_fail(l, why);
		return;
	}
	if (w->op == ENGINE_WR_WRITE_IMM)
		snprintf(why + n, sizeof(why) - (size_t)n, " (WRITE_IMM #%llu "
		    "of %u bytes to 0x%llx rkey 0x%x imm 0x%08x, vendor error "
		    "0x%x)", (unsigned long long)w->wr_id, (unsigned)w->len,
		    (unsigned long long)w->remote_addr, (unsigned)w->rkey,
		    (unsigned)w->imm, (unsigned)wc->vendor_err);
	else
		snprintf(why + n, sizeof(why) - (size_t)n, " (SEND #%llu of "
		    "%u bytes, vendor error 0x%x)", (unsigned long long)w->wr_id,
		    (unsigned)w->len, (unsigned)wc->vendor_err);
	verbs_transport_fail(l, why);
}

static int
handle_wc(struct verbs_link *l, const struct ibv_wc *wc)
{
	uint64_t slot;
	char why[128];

	if (wc->status != IBV_WC_SUCCESS) {
		/* After the first error the rest are flushes: one message. */
		wc_failed(l, wc);
		return (-1);
	}
	switch (wc->opcode) {
	case IBV_WC_RECV:
		slot = wc->wr_id & ~RECV_TAG;
		if (slot >= l->conf.rq_size)
			break;		/* the engine reports it */
		/* A sealed WRITE's tag comes as a SEND WITH IMMEDIATE. */
		if (wc->wc_flags & IBV_WC_WITH_IMM)
			return (engine_on_recv_tag(l->e, (uint32_t)slot,
			    ntohl(wc->imm_data), l->recv_buf +
			    (size_t)slot * WIRE_MSG_SIZE, wc->byte_len));
		return (engine_on_recv(l->e, (uint32_t)slot,
		    l->recv_buf + (size_t)slot * WIRE_MSG_SIZE,
		    wc->byte_len));
	case IBV_WC_RECV_RDMA_WITH_IMM:
		slot = wc->wr_id & ~RECV_TAG;
		return (engine_on_recv_imm(l->e, slot > UINT32_MAX ?
		    UINT32_MAX : (uint32_t)slot, ntohl(wc->imm_data),
		    wc->byte_len));
	case IBV_WC_SEND:
	case IBV_WC_RDMA_WRITE:
		return (engine_on_send_done(l->e, wc->wr_id));
	default:
		break;
	}
	snprintf(why, sizeof(why), "unexpected completion opcode %d",
	    (int)wc->opcode);
	verbs_transport_fail(l, why);
	return (-1);
}

/* Every completion into the engine: how many, or -1. */
static int
drain_cq(struct verbs_link *l)
{
	struct ibv_wc wc[POLL_BATCH];
	int n, k, got = 0;

	do {
		if ((n = ibv_poll_cq(l->cq, POLL_BATCH, wc)) < 0) {
			verbs_transport_fail(l, "ibv_poll_cq failed");
			return (-1);
		}
		for (k = 0; k < n; k++)
			if (handle_wc(l, &wc[k]))
				return (-1);
		got += n;
	} while (n == POLL_BATCH);
	return (got);
}

int
verbs_link_drain(struct verbs_link *l)
{
	int n;

	if (l->e == NULL || engine_error(l->e) != NULL)
		return (failed(l));
	if ((n = drain_cq(l)) < 0)
		return (failed(l));
	return (n);
}

int
verbs_link_poll(struct verbs_link *l)
{
	struct ibv_cq *cq;
	void *ctx;

	/*
	 * One arm raises at most one event, and the CQ is armed again only
	 * by verbs_link_arm: one read takes it (a second would only say
	 * EAGAIN).
	 */
	if (ibv_get_cq_event(l->cc, &cq, &ctx) == 0)
		ibv_ack_cq_events(cq, 1);
	return (verbs_link_drain(l));
}

int
verbs_link_arm(struct verbs_link *l)
{

	if (l->e == NULL || engine_error(l->e) != NULL)
		return (-1);
	if (ibv_req_notify_cq(l->cq, 0)) {
		verbs_transport_fail(l, "ibv_req_notify_cq failed");
		return (-1);
	}
	return (0);
}
