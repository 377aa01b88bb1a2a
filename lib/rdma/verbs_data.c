/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * verbs_data: a link's data path: the receives and chains of sends the
 * engine asks for, posted, each on its lane's queue pair; completions of
 * both lanes (one completion queue) polled in batches and fed back; the
 * queue pairs stopped when the transport or the engine fails.
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
#include "verbs_pure.h"
#include "wire.h"

/* Completions polled per ibv_poll_cq; work requests per ibv_post_send. */
#define POLL_BATCH	32
#define POST_BATCH	32
/* Receive wr_ids carry this bit; send wr_ids are the engine's. */
#define RECV_TAG	(UINT64_C(1) << 63)

int
verbs_link_stop(struct verbs_link *l)
{
	struct ibv_qp_attr a;
	int rc = 0;

	if (l == NULL)
		return (0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_ERR;
	if (l->have_qp && l->id != NULL && l->id->qp != NULL &&
	    ibv_modify_qp(l->id->qp, &a, IBV_QP_STATE) != 0)
		rc = -1;
	if (l->have_qp1 && l->id1 != NULL && l->id1->qp != NULL &&
	    ibv_modify_qp(l->id1->qp, &a, IBV_QP_STATE) != 0)
		rc = -1;
	if (rc == 0 && l->e != NULL)
		engine_stopped(l->e);
	return (rc);
}

/* Lane ${lane}'s queue pair, or NULL (lane 1 not made yet). */
static struct ibv_qp *
lane_qp(const struct verbs_link *l, unsigned lane)
{

	if (lane == 0)
		return (l->id->qp);
	return (l->have_qp1 ? l->id1->qp : NULL);
}

/* The lane of a completion's queue pair (both are on the one CQ). */
static unsigned
wc_lane(const struct verbs_link *l, const struct ibv_wc *wc)
{

	return (l->have_qp1 && wc->qp_num == l->id1->qp->qp_num ? 1 : 0);
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

/* Receive slot ${slot} as work request ${wr}, with its ${sge}. */
static void
recv_wr(struct verbs_link *l, uint32_t slot, struct ibv_recv_wr *wr,
    struct ibv_sge *sge)
{

	sge->addr = (uint64_t)(uintptr_t)(l->recv_buf +
	    (size_t)slot * WIRE_MSG_SIZE);
	sge->length = WIRE_MSG_SIZE;
	sge->lkey = l->recv_mr->lkey;
	wr->wr_id = RECV_TAG | slot;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->next = NULL;
}

/* Post chain ${wr} of receives on lane ${lane}: 0, or -1 (failed). */
static int
recv_post(struct verbs_link *l, unsigned lane, struct ibv_recv_wr *wr)
{
	struct ibv_recv_wr *bad;
	char why[96];
	int rc;

	if (wr == NULL || (rc = ibv_post_recv(lane_qp(l, lane), wr,
	    &bad)) == 0)
		return (0);
	snprintf(why, sizeof(why), "ibv_post_recv%s: %s", lane ?
	    " (lane 1)" : "", strerror(rc));
	verbs_transport_fail(l, why);
	return (-1);
}

/*
 * The receives the engine hands out, each on its lane's queue pair; lane
 * 1's wait in pend1 until it has one (verbs_post_pend1).
 */
static int
post_recvs(struct verbs_link *l)
{
	struct ibv_recv_wr wr[POST_BATCH], *head[2], **tail[2];
	struct ibv_sge sge[POST_BATCH];
	uint32_t slots[POST_BATCH];
	unsigned lane;
	int n, k;

	while ((n = engine_take_recvs(l->e, slots, POST_BATCH)) > 0) {
		head[0] = head[1] = NULL;
		tail[0] = &head[0];
		tail[1] = &head[1];
		for (k = 0; k < n; k++) {
			lane = engine_slot_lane(l->e, slots[k]) ? 1 : 0;
			if (lane == 1 && !l->have_qp1) {
				if (l->npend1 < l->conf.rq_size)
					l->pend1[l->npend1++] = slots[k];
				continue;
			}
			recv_wr(l, slots[k], &wr[k], &sge[k]);
			*tail[lane] = &wr[k];
			tail[lane] = &wr[k].next;
		}
		if (recv_post(l, 0, head[0]) || recv_post(l, 1, head[1]))
			return (-1);
	}
	return (0);
}

int
verbs_post_pend1(struct verbs_link *l)
{
	struct ibv_recv_wr wr[POST_BATCH], *head, **tail;
	struct ibv_sge sge[POST_BATCH];
	uint32_t i = 0, k;

	while (i < l->npend1) {
		head = NULL;
		tail = &head;
		for (k = 0; k < POST_BATCH && i < l->npend1; k++, i++) {
			recv_wr(l, l->pend1[i], &wr[k], &sge[k]);
			*tail = &wr[k];
			tail = &wr[k].next;
		}
		if (recv_post(l, 1, head))
			return (-1);
	}
	l->npend1 = 0;
	return (0);
}

/* One engine WR as an ibv_send_wr (its sge in ${sge}). */
static void
send_wr(const struct engine_wr *ew, struct ibv_send_wr *wr,
    struct ibv_sge *sge)
{

	memset(wr, 0, sizeof(*wr));
	sge->addr = ew->local_addr;
	sge->length = ew->len;
	sge->lkey = ew->lkey;
	wr->wr_id = ew->wr_id;
	wr->sg_list = sge;
	wr->num_sge = 1;
	switch (ew->op) {
	case ENGINE_WR_WRITE_IMM:
	case ENGINE_WR_WRITE:
		wr->opcode = ew->op == ENGINE_WR_WRITE ? IBV_WR_RDMA_WRITE :
		    IBV_WR_RDMA_WRITE_WITH_IMM;
		wr->imm_data = htonl(ew->imm);
		wr->wr.rdma.remote_addr = ew->remote_addr;
		wr->wr.rdma.rkey = ew->rkey;
		break;
	case ENGINE_WR_SEND_IMM:
		wr->opcode = IBV_WR_SEND_WITH_IMM;
		wr->imm_data = htonl(ew->imm);
		break;
	default:
		wr->opcode = IBV_WR_SEND;
		break;
	}
	if (ew->signaled)
		wr->send_flags |= IBV_SEND_SIGNALED;
	if (ew->inlined)
		wr->send_flags |= IBV_SEND_INLINE;
}

/* What the engine wants sent: one chain (one doorbell) per lane. */
static int
post_sends(struct verbs_link *l)
{
	struct engine_wr ew[POST_BATCH];
	struct ibv_send_wr wr[POST_BATCH], *bad, *head[2], **tail[2];
	struct ibv_sge sge[POST_BATCH];
	struct ibv_qp *qp;
	unsigned lane;
	char why[96];
	int n, k, rc;

	do {
		if ((n = engine_take_wrs(l->e, ew, POST_BATCH)) == 0)
			break;
		head[0] = head[1] = NULL;
		tail[0] = &head[0];
		tail[1] = &head[1];
		for (k = 0; k < n; k++) {
			lane = ew[k].lane ? 1 : 0;
			send_wr(&ew[k], &wr[k], &sge[k]);
			l->posted[lane * l->conf.sq_size +
			    ew[k].wr_id % l->conf.sq_size] = ew[k];
			*tail[lane] = &wr[k];
			tail[lane] = &wr[k].next;
		}
		for (lane = 0; lane < 2; lane++) {
			if (head[lane] == NULL)
				continue;
			if ((qp = lane_qp(l, lane)) == NULL) {
				verbs_transport_fail(l, "a work request for "
				    "lane 1, which is not connected");
				return (-1);
			}
			if ((rc = ibv_post_send(qp, head[lane], &bad)) != 0) {
				snprintf(why, sizeof(why), "ibv_post_send%s: "
				    "%s", lane ? " (lane 1)" : "",
				    strerror(rc));
				verbs_transport_fail(l, why);
				return (-1);
			}
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

/* What a work request of op is called in a failure's message. */
static const char *
wr_op_name(enum engine_wr_op op)
{
	switch (op) {
	case ENGINE_WR_SEND:
		return ("SEND");
	case ENGINE_WR_WRITE_IMM:
		return ("WRITE_IMM");
	case ENGINE_WR_WRITE:
		return ("WRITE");
	case ENGINE_WR_SEND_IMM:
		return ("SEND_IMM");
	}
	return ("?");
}

/* Say which work request failed, so a bad one can be told from the fabric. */
static void
wc_failed(struct verbs_link *l, const struct ibv_wc *wc)
{
	const struct engine_wr *w;
	unsigned lane = wc_lane(l, wc);
	char why[256];
	int n;

	if (l->wc_error == VERBS_WC_NONE)
		l->wc_error = verbs_wc_class(wc->status);
	n = snprintf(why, sizeof(why), "work request failed%s: %s",
	    lane ? " on lane 1" : "", ibv_wc_status_str(wc->status));
	/* An error completion's opcode is undefined; its wr_id is not. */
	if (wc->status == IBV_WC_WR_FLUSH_ERR || (wc->wr_id & RECV_TAG) ||
	    (w = &l->posted[lane * l->conf.sq_size +
	    wc->wr_id % l->conf.sq_size])->wr_id !=
	    wc->wr_id || w->len == 0 || n < 0 || (size_t)n >= sizeof(why)) {
		verbs_transport_fail(l, why);
		return;
	}
	if (w->op == ENGINE_WR_WRITE_IMM || w->op == ENGINE_WR_WRITE)
		snprintf(why + n, sizeof(why) - (size_t)n, " (%s #%llu "
		    "of %u bytes from 0x%llx lkey 0x%x to 0x%llx rkey 0x%x imm "
		    "0x%08x, vendor error 0x%x)", wr_op_name(w->op),
		    (unsigned long long)w->wr_id, (unsigned)w->len,
		    (unsigned long long)w->local_addr, (unsigned)w->lkey,
		    (unsigned long long)w->remote_addr, (unsigned)w->rkey,
		    (unsigned)w->imm, (unsigned)wc->vendor_err);
	else
		snprintf(why + n, sizeof(why) - (size_t)n, " (%s #%llu of "
		    "%u bytes, vendor error 0x%x)", wr_op_name(w->op),
		    (unsigned long long)w->wr_id,
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
		if (slot >= (uint64_t)WIRE_LANES_MAX * l->conf.rq_size)
			break;		/* not a slot of ours */
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

/*
 * Every completion of ${cq} into the engine, counted into ${got}: 0, 1 if
 * the one that authenticates the link ended it, or -1.  Until the link
 * is authenticated one at a time (see verbs_link_drain).
 */
static int
drain_cq(struct verbs_link *l, struct ibv_cq *cq, int *got)
{
	struct ibv_wc wc[POLL_BATCH];
	int authed = engine_authenticated(l->e);
	int batch = authed ? POLL_BATCH : 1;
	int n, k;

	do {
		if ((n = ibv_poll_cq(cq, batch, wc)) < 0) {
			verbs_transport_fail(l, "ibv_poll_cq failed");
			return (-1);
		}
		for (k = 0; k < n; k++)
			if (handle_wc(l, &wc[k]))
				return (-1);
		*got += n;
		if (!authed && engine_authenticated(l->e))
			return (1);
	} while (n == batch);
	return (0);
}

/*
 * Both completion queues, our work requests' first (what they free, the
 * receives may want at once), then the receives: how many, or -1.  The
 * two keep no order between them, and need none: RC gives none between a
 * WR's completion, which follows the peer's ACK, and the peer's messages.
 */
static int
drain_cqs(struct verbs_link *l)
{
	int got = 0, r;

	if ((r = drain_cq(l, l->scq, &got)) == 0)
		r = drain_cq(l, l->cq, &got);
	return (r < 0 ? -1 : got);
}

int
verbs_link_drain(struct verbs_link *l)
{
	int n;

	if (l->e == NULL || engine_error(l->e) != NULL)
		return (failed(l));
	if ((n = drain_cqs(l)) < 0)
		return (failed(l));
	return (n);
}

int
verbs_link_poll(struct verbs_link *l)
{
	struct ibv_cq *cq;
	void *ctx;
	int n;

	/*
	 * One arm raises at most one event per CQ, and each is armed again
	 * only by verbs_link_arm: a read for each armed CQ takes them (one
	 * more would only say EAGAIN, a system call for nothing).
	 */
	for (n = l->scq_armed ? 2 : 1; n > 0 &&
	    ibv_get_cq_event(l->cc, &cq, &ctx) == 0; n--) {
		ibv_ack_cq_events(cq, 1);
		if (cq == l->scq)
			l->scq_armed = 0;
	}
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
	if (!l->scq_armed && !engine_sends_quiet(l->e)) {
		if (ibv_req_notify_cq(l->scq, 0)) {
			verbs_transport_fail(l, "ibv_req_notify_cq failed");
			return (-1);
		}
		l->scq_armed = 1;
	}
	__atomic_fetch_add(&l->arms.arms, 1, __ATOMIC_RELAXED);
	if (!l->scq_armed)
		__atomic_fetch_add(&l->arms.quiet, 1, __ATOMIC_RELAXED);
	return (0);
}

void
verbs_link_arm_stats(const struct verbs_link *l, struct verbs_arm_stats *as)
{

	as->arms = __atomic_load_n(&l->arms.arms, __ATOMIC_RELAXED);
	as->quiet = __atomic_load_n(&l->arms.quiet, __ATOMIC_RELAXED);
}

int
verbs_link_wants_poll(const struct verbs_link *l)
{

	return (l->e != NULL && engine_error(l->e) == NULL &&
	    !l->scq_armed && !engine_sends_quiet(l->e));
}
