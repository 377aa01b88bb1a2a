/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * verbs_link: a link set up (protection domain, completion queue and
 * channel, queue pair, control buffers, engine: all before connect or
 * accept), connected, accepted or rejected, and freed; what it tells of
 * itself.  Its latency lane's queue pair and cm_id come later
 * (verbs_lane.c), but go here with the rest.
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "addr.h"
#include "budget.h"
#include "engine.h"
#include "hca.h"
#include "verbs.h"
#include "verbs_int.h"
#include "verbs_pure.h"
#include "wire.h"

struct verbs_link *
verbs_link_new(struct verbs_cm *cm, const struct verbs_link_conf *conf,
    void *user)
{
	struct verbs_link *l;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return (NULL);
	l->kind = KIND_LINK;
	l->cm = cm;
	l->conf = *conf;
	l->user = user;
	TAILQ_INIT(&l->pool);
	snprintf(l->peer, sizeof(l->peer), "?");
	snprintf(l->device, sizeof(l->device), "?");
	return (l);
}

/* Its protection domain and completion queues on ${l}'s device. */
static int
vl_cq(struct verbs_link *l, struct ibv_context *dev, char *err,
    size_t errlen)
{
	unsigned rcqe = WIRE_LANES_MAX * l->conf.rq_size;
	unsigned scqe = WIRE_LANES_MAX * l->conf.sq_size;

	snprintf(l->device, sizeof(l->device), "%s",
	    ibv_get_device_name(dev->device));
	if ((l->pd = ibv_alloc_pd(dev)) == NULL) {
		say(err, errlen, "%s: cannot allocate a protection domain: %s",
		    l->device, strerror(errno));
		return (-1);
	}
	l->ctx = dev;
	TAILQ_INSERT_TAIL(&l->cm->links, l, lentry);
	if ((l->cc = ibv_create_comp_channel(dev)) == NULL ||
	    verbs_nonblock(l->cc->fd)) {
		say(err, errlen, "%s: cannot create a completion channel: %s",
		    l->device, strerror(errno));
		return (-1);
	}
	/* Every receive, and every WR, of both lanes may complete at once. */
	if ((l->cq = ibv_create_cq(dev, (int)rcqe, l, l->cc, 0)) == NULL ||
	    (l->scq = ibv_create_cq(dev, (int)scqe, l, l->cc, 0)) == NULL) {
		say(err, errlen, "%s: cannot create a completion queue of %u "
		    "entries: %s", l->device, l->cq == NULL ? rcqe : scqe,
		    strerror(errno));
		return (-1);
	}
	if (ibv_req_notify_cq(l->cq, 0) || ibv_req_notify_cq(l->scq, 0)) {
		say(err, errlen, "%s: ibv_req_notify_cq: %s", l->device,
		    strerror(errno));
		return (-1);
	}
	l->scq_armed = 1;
	return (0);
}

/*
 * The largest inline size below ${bad} (which ${id}'s device refused)
 * that it takes for a queue pair like ${qa}, found by halving the gap;
 * -1 if it takes none, not even 0: then the inline size was not what it
 * refused.  Each try that works is undone.
 */
static int64_t
inline_most(struct verbs_link *l, struct rdma_cm_id *id,
    const struct ibv_qp_init_attr *qa, uint32_t bad)
{
	struct ibv_qp_init_attr t;
	int64_t ok = -1;
	uint32_t mid = 0;

	for (;;) {
		t = *qa;
		t.cap.max_inline_data = mid;
		if (rdma_create_qp(id, l->pd, &t) == 0) {
			rdma_destroy_qp(id);
			ok = mid;
		} else if (ok < 0) {
			return (-1);
		} else {
			bad = mid;
		}
		if (bad - (uint32_t)ok <= 1)
			return (ok);
		mid = (uint32_t)ok + (bad - (uint32_t)ok) / 2;
	}
}

/*
 * An RC queue pair on ${id}, its queues on the link's completion queues.
 * Inline data is only a shortcut, so a device that refuses the inline
 * size asked for (Soft-iWARP takes 80 bytes, Soft-RoCE 512, adapters
 * their own) gets the link's queue pairs with the most it takes:
 * conf.inline_size becomes that, before the engine reads it (and the
 * link's hca_info shows it).  Lane 1's queue pair, made after the
 * engine, asks for what lane 0's got.
 */
int
verbs_qp_new(struct verbs_link *l, struct rdma_cm_id *id, char *err,
    size_t errlen)
{
	struct ibv_qp_init_attr qa;
	int64_t most;
	int e;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = l->scq;
	qa.recv_cq = l->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 0;
	qa.cap.max_send_wr = l->conf.sq_size;
	qa.cap.max_recv_wr = l->conf.rq_size;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = l->conf.inline_size;
	if (rdma_create_qp(id, l->pd, &qa) != 0) {
		e = errno;
		most = l->conf.inline_size == 0 || id != l->id ? -1 :
		    inline_most(l, id, &qa, l->conf.inline_size);
		if (most >= 0) {
			qa.cap.max_inline_data = (uint32_t)most;
			if (rdma_create_qp(id, l->pd, &qa) != 0) {
				e = errno;
				most = -1;
			}
		}
		if (most < 0) {
			say(err, errlen, "%s: cannot create a queue pair%s "
			    "(sq_size %u, rq_size %u, inline_size %u): %s",
			    l->device, id == l->id ? "" : " for lane 1",
			    (unsigned)l->conf.sq_size,
			    (unsigned)l->conf.rq_size,
			    (unsigned)l->conf.inline_size, strerror(e));
			return (-1);
		}
		l->conf.inline_size = (uint32_t)most;
	}
	if (id == l->id)
		l->have_qp = 1;
	else
		l->have_qp1 = 1;
	return (0);
}

/* Its control buffers, charged to the cap, then registered. */
/*
 * Control buffers of ${sz} bytes, zeroed, on pages of their own: from
 * version 8 they hold tenants' bytes too (DATA records), which stay out
 * of core dumps as ring memory does.  NULL if out of memory.
 */
static uint8_t *
bufs_new(size_t sz)
{
	void *p = mmap(NULL, sz, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return (NULL);
	(void)madvise(p, sz, MADV_DONTDUMP);
	return (p);
}

static void
bufs_free(uint8_t *p, size_t sz)
{

	if (p != NULL)
		(void)munmap(p, sz);
}

static int
vl_buffers(struct verbs_link *l, char *err, size_t errlen)
{
	size_t sz;

	/* Room for a latency lane's too: the peer decides if it runs. */
	sz = (size_t)WIRE_LANES_MAX * (l->conf.sq_size + l->conf.rq_size) *
	    WIRE_MSG_SIZE;
	if (verbs_charge(l, sz, 1) != 0) {
		say(err, errlen, "max_memory: no room for the link's %zu bytes "
		    "of control buffers: %llu bytes of ring memory are "
		    "registered, the limit is %llu", sz,
		    (unsigned long long)verbs_pinned_now(l->cm),
		    (unsigned long long)verbs_max_now(l->cm));
		errno = ENOBUFS;
		return (-1);
	}
	l->ctrl_bytes = sz;
	__atomic_fetch_add(&l->cm->control, sz, __ATOMIC_RELAXED);
	if ((l->posted = calloc((size_t)WIRE_LANES_MAX * l->conf.sq_size,
	    sizeof(*l->posted))) == NULL || (l->pend1 =
	    calloc(l->conf.rq_size, sizeof(*l->pend1))) == NULL) {
		say(err, errlen, "out of memory");
		return (-1);
	}
	sz = (size_t)WIRE_LANES_MAX * l->conf.sq_size * WIRE_MSG_SIZE;
	if ((l->ctrl_send = bufs_new(sz)) == NULL ||
	    (l->ctrl_send_mr = ibv_reg_mr(l->pd, l->ctrl_send, sz, 0)) == NULL) {
		verbs_reg_failed(err, errlen, l->device, "send buffers", sz);
		return (-1);
	}
	sz = (size_t)WIRE_LANES_MAX * l->conf.rq_size * WIRE_MSG_SIZE;
	if ((l->recv_buf = bufs_new(sz)) == NULL ||
	    (l->recv_mr = ibv_reg_mr(l->pd, l->recv_buf, sz,
	    IBV_ACCESS_LOCAL_WRITE)) == NULL) {
		verbs_reg_failed(err, errlen, l->device, "receive buffers", sz);
		return (-1);
	}
	return (0);
}

int
verbs_iwarp(const struct rdma_cm_id *id)
{

	return (id != NULL && id->verbs != NULL &&
	    id->verbs->device->transport_type == IBV_TRANSPORT_IWARP);
}

/* Its engine, over the control buffers, with every receive posted. */
static int
vl_engine(struct verbs_link *l, char *err, size_t errlen)
{
	struct engine_conf ec;

	verbs_engine_conf(&l->conf, l->ctrl_send, l->ctrl_send_mr->lkey,
	    verbs_iwarp(l->id), &ec);
	if ((l->e = verbs_engine_new(&l->conf, l->passive, &ec, err,
	    errlen)) == NULL)
		return (-1);
	if (verbs_link_flush(l)) {
		say(err, errlen, "%s: cannot post receives: %s", l->device,
		    engine_error(l->e));
		return (-1);
	}
	return (0);
}

/*
 * Give the link its queues, buffers and engine on the device ${id} was
 * bound to, and post every receive: all before connect or accept.  A step
 * that fails stops it, leaving what the steps before made in the link:
 * verbs_link_free frees any part of it (see verbs.h).
 */
int
verbs_link_setup(struct verbs_link *l, char *err, size_t errlen)
{
	uint8_t t = l->conf.ack_timeout ? l->conf.ack_timeout :
	    VERBS_ACK_TIMEOUT;

	if (l->id->verbs == NULL) {
		say(err, errlen, "no RDMA device for this address");
		return (-1);
	}
	if (vl_cq(l, l->id->verbs, err, errlen) ||
	    verbs_qp_new(l, l->id, err, errlen) ||
	    vl_buffers(l, err, errlen) || vl_engine(l, err, errlen))
		return (-1);
	/* A dead peer must be noticed in bounded time (see verbs.h). */
	(void)rdma_set_option(l->id, RDMA_OPTION_ID,
	    RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof(t));
	return (0);
}

/*
 * Connect private data (our hellos, of either lane, and refusal notes)
 * must reach the peer whole on every fabric.  The IB CM's REQ carries
 * 92 bytes, of which the RDMA CM's header for IP addresses takes 36:
 * 56 left, the smallest limit (its REP carries 196, its REJ 148).  MPA
 * (iWARP, RFC 5044) carries 512, less MPA v2's 4 of IRD and ORD (RFC
 * 6581); the kernel's RDMA CM at most 256 (RDMA_MAX_PRIVATE_DATA) with
 * those 4: Soft-iWARP delivers 248 bytes each way, and not 252.  The IB
 * CM pads what it delivers to its own sizes, MPA delivers the length
 * sent: the decoders take either.
 */
#define PRIVATE_DATA_IB		56
#define PRIVATE_DATA_MPA	248
_Static_assert(WIRE_HELLO_LEN <= PRIVATE_DATA_IB &&
    WIRE_HELLO_LEN <= PRIVATE_DATA_MPA, "a hello must fit IB CM and MPA");
_Static_assert(WIRE_NOTE_LEN <= PRIVATE_DATA_IB &&
    WIRE_NOTE_LEN <= PRIVATE_DATA_MPA, "a note must fit IB CM and MPA");

int
verbs_reject_reason(const struct verbs_link *l,
    const struct rdma_cm_event *cme)
{
	struct wire_note n;

	if (!l->iwarp)
		return (cme->status);
	/*
	 * On iWARP the RDMA CM reports the peer's rdma_reject (an MPA reply
	 * with its reject bit) as -ECONNRESET, with the private data as sent,
	 * and a reset before any reply the same way, without: so only one
	 * that carries a refusal note is a consumer's reject, and one
	 * without says no older version (as it would on IB, see
	 * verbs_refused).  A TCP connection refused is a port nobody listens
	 * on.
	 */
	if (cme->status == -ECONNRESET && wire_note_decode(
	    cme->param.conn.private_data, cme->param.conn.private_data_len,
	    &n))
		return (VERBS_REJ_CONSUMER);
	if (cme->status == -ECONNREFUSED)
		return (VERBS_REJ_NO_LISTENER);
	return (cme->status);
}

/*
 * Refuse a connect request with a refusal note, so that the peer knows it
 * was understood (and refused), not that its version is too new for us.
 */
void
verbs_id_reject(struct rdma_cm_id *id, uint8_t why)
{
	uint8_t note[WIRE_NOTE_LEN];

	wire_note_encode(note, &(struct wire_note){ WIRE_VERSION, why });
	rdma_reject(id, note, sizeof(note));
}

/* Connection parameters carrying ${pd}, a hello, for either lane. */
static void
param_fill(const struct verbs_link *l, struct rdma_conn_param *p,
    const uint8_t *pd)
{

	memset(p, 0, sizeof(*p));
	p->private_data = pd;
	p->private_data_len = WIRE_HELLO_LEN;
	/* No RDMA READ or atomics, in either direction. */
	p->responder_resources = 0;
	p->initiator_depth = 0;
	p->retry_count = l->conf.retry_count ? l->conf.retry_count :
	    VERBS_RETRY_COUNT;
	p->rnr_retry_count = VERBS_RNR_RETRY;
}

int
verbs_conn_param(struct verbs_link *l, struct rdma_conn_param *p)
{
	unsigned cap = l->conf.version_max;

	/* Answer in the peer's version or older; both capped as told. */
	if (l->passive && (cap == 0 || l->peer_hello.version < cap))
		cap = l->peer_hello.version;
	if (verbs_hello_make(l->e, cap, l->hello_mine) != 0)
		return (-1);
	l->have_mine = 1;
	param_fill(l, p, l->hello_mine);
	return (0);
}

void
verbs_lane_param(struct verbs_link *l, uint8_t hello[WIRE_HELLO_LEN],
    struct rdma_conn_param *p)
{
	struct wire_hello h, mine;

	memset(&h, 0, sizeof(h));
	engine_lane_hello(l->e, &h);
	/* Our lane-0 hello's nonce ties the lane to this link. */
	if (wire_hello_decode(l->hello_mine, WIRE_HELLO_LEN, &mine) ==
	    WIRE_OK)
		memcpy(h.nonce, mine.nonce, sizeof(h.nonce));
	wire_hello_encode(hello, &h);
	param_fill(l, p, hello);
}

void
verbs_vl_down(struct verbs_link *l, struct verbs_ev *ev, const char *why)
{

	/*
	 * The engine's first failure is why: one of its own (a protocol
	 * violation) stops the queue pair, which on iWARP closes the
	 * connection at once, so that this end's CM says DISCONNECTED
	 * before the link is taken down for it.
	 */
	if (l->e != NULL) {
		verbs_transport_fail(l, why);
		why = engine_error(l->e);
	}
	l->state = L_DOWN;
	ev->type = VERBS_EV_DOWN;
	ev->link = l;
	snprintf(ev->peer, sizeof(ev->peer), "%s", l->peer);
	snprintf(ev->why, sizeof(ev->why), "%s", why);
}

struct verbs_link *
verbs_connect(struct verbs_cm *cm, const struct sockaddr *dst,
    const struct sockaddr *src, const struct verbs_link_conf *conf,
    void *user, char *err, size_t errlen)
{
	struct verbs_link *l;

	if (cm->ch == NULL) {
		say(err, errlen, "no RDMA yet: %s", cm->why);
		errno = ENODEV;
		return (NULL);
	}
	if ((l = verbs_link_new(cm, conf, user)) == NULL) {
		say(err, errlen, "out of memory");
		return (NULL);
	}
	addr_text(dst, l->peer, sizeof(l->peer));
	if (rdma_create_id(cm->ch, &l->id, l, RDMA_PS_TCP)) {
		say(err, errlen, "rdma_create_id: %s", strerror(errno));
		l->id = NULL;
		verbs_link_free(l);
		return (NULL);
	}
	/* The route, resolved next, takes it (rdma_set_option(3)). */
	if (conf->tos_set && rdma_set_option(l->id, RDMA_OPTION_ID,
	    RDMA_OPTION_ID_TOS, &l->conf.tos, sizeof(l->conf.tos))) {
		say(err, errlen, "cannot set the traffic class %u: %s",
		    (unsigned)conf->tos, strerror(errno));
		verbs_link_free(l);
		return (NULL);
	}
	if (rdma_resolve_addr(l->id, (struct sockaddr *)(uintptr_t)src,
	    (struct sockaddr *)(uintptr_t)dst, VERBS_RESOLVE_MS)) {
		say(err, errlen, "cannot resolve an RDMA path to %s: %s",
		    l->peer, strerror(errno));
		verbs_link_free(l);
		return (NULL);
	}
	l->state = L_RESOLVING;
	return (l);
}

int
verbs_accept(struct verbs_link *l)
{
	struct rdma_conn_param p;

	if (l->state != L_INCOMING)
		return (-1);
	if (verbs_conn_param(l, &p)) {
		verbs_transport_fail(l, "no random numbers available yet");
		verbs_id_reject(l->id, WIRE_NOTE_REFUSED);
		l->state = L_DOWN;
		return (-1);
	}
	if (rdma_accept(l->id, &p)) {
		verbs_transport_fail(l, "rdma_accept failed");
		l->state = L_DOWN;
		return (-1);
	}
	/*
	 * The peer may send as soon as it sees our accept, possibly before
	 * our ESTABLISHED event: the engine must take completions from now.
	 */
	engine_connected(l->e, &l->peer_hello);
	l->state = L_ACCEPTING;
	/* Its lane-1 request may come as soon as the peer sees the accept. */
	if (engine_lanes(l->e) > 1)
		l->lane1 = L1_WAITING;
	return (0);
}

void
verbs_reject(struct verbs_link *l)
{

	if (l->state == L_INCOMING)
		verbs_id_reject(l->id, WIRE_NOTE_REFUSED);
	l->state = L_DOWN;
}

/* The cm_id of a dying link goes now; then the link, once its memory has. */
void
verbs_dying_end(struct verbs_link *l)
{

	TAILQ_REMOVE(&l->cm->dying, l, dentry);
	rdma_destroy_id(l->id);
	l->id = NULL;
	l->dying = 0;
	if (l->nmems == 0)
		verbs_link_destroy(l);
}

/* Lane 1's queue pair and cm_id go, the peer told if it was connected. */
static void
lane_free(struct verbs_link *l)
{

	if (l->have_qp1) {
		rdma_destroy_qp(l->id1);
		l->have_qp1 = 0;
	}
	if (l->id1 != NULL) {
		if (l->lane1 == L1_CONNECTING || l->lane1 == L1_ACCEPTING ||
		    l->lane1 == L1_UP)
			rdma_disconnect(l->id1);
		rdma_destroy_id(l->id1);
		l->id1 = NULL;
	}
	l->lane1 = L1_NONE;
}

void
verbs_link_free(struct verbs_link *l)
{

	if (l == NULL)
		return;
	if (l->probe != NULL) {
		rdma_destroy_id(l->probe);
		l->probe = NULL;
	}
	/* Both queue pairs go before anything they could touch. */
	lane_free(l);
	if (l->have_qp) {
		rdma_destroy_qp(l->id);
		l->have_qp = 0;
	}
	if (l->id != NULL && l->state == L_ACCEPTING) {
		/*
		 * Accepted, but our CM has not seen the peer's RTU: destroying
		 * the id now would only send a REJ, which a peer already
		 * established ignores, so it would never learn the link ended.
		 * Keep the id until ESTABLISHED (then disconnect) or some
		 * other end, or VERBS_TEARDOWN_TICKS of verbs_cm_tick.
		 */
		l->dying = 1;
		l->dying_ticks = VERBS_TEARDOWN_TICKS;
		TAILQ_INSERT_TAIL(&l->cm->dying, l, dentry);
	} else if (l->id != NULL) {
		if (l->state == L_UP || l->state == L_CONNECTING)
			rdma_disconnect(l->id);
		rdma_destroy_id(l->id);
		l->id = NULL;
	}
	if (l->cq != NULL)
		ibv_destroy_cq(l->cq);
	if (l->scq != NULL)
		ibv_destroy_cq(l->scq);
	if (l->cc != NULL)
		ibv_destroy_comp_channel(l->cc);
	if (l->ctrl_send_mr != NULL)
		ibv_dereg_mr(l->ctrl_send_mr);
	if (l->recv_mr != NULL)
		ibv_dereg_mr(l->recv_mr);
	bufs_free(l->ctrl_send,
	    (size_t)WIRE_LANES_MAX * l->conf.sq_size * WIRE_MSG_SIZE);
	free(l->posted);
	free(l->pend1);
	bufs_free(l->recv_buf,
	    (size_t)WIRE_LANES_MAX * l->conf.rq_size * WIRE_MSG_SIZE);
	if (l->ctrl_bytes != 0) {
		budget_give(&l->cm->pinned, l->ctrl_bytes);
		__atomic_fetch_sub(&l->cm->control, l->ctrl_bytes,
		    __ATOMIC_RELAXED);
		l->ctrl_bytes = 0;
	}
	engine_free(l->e);
	l->cq = l->scq = NULL;
	l->cc = NULL;
	l->ctrl_send_mr = l->recv_mr = NULL;
	l->ctrl_send = l->recv_buf = NULL;
	l->posted = NULL;
	l->pend1 = NULL;
	l->e = NULL;
	l->freed = 1;
	/*
	 * Pooled rings go now; rings streams still hold keep the protection
	 * domain alive (the last one's verbs_mem_free destroys the link).
	 */
	l->nmems++;
	verbs_pool_drain(l, 0);
	if (--l->nmems == 0 && !l->dying)
		verbs_link_destroy(l);
}

int
verbs_link_fd(const struct verbs_link *l)
{

	return (l->cc != NULL ? l->cc->fd : -1);
}

struct engine *
verbs_link_engine(const struct verbs_link *l)
{

	return (l->e);
}

void *
verbs_link_user(const struct verbs_link *l)
{

	return (l->user);
}

void
verbs_link_set_user(struct verbs_link *l, void *user)
{

	l->user = user;
}

int
verbs_link_hellos(const struct verbs_link *l, uint8_t out[2 * WIRE_HELLO_LEN])
{

	if (!l->have_mine || !l->have_peer)
		return (-1);
	memcpy(out, l->passive ? l->hello_peer : l->hello_mine,
	    WIRE_HELLO_LEN);
	memcpy(out + WIRE_HELLO_LEN, l->passive ? l->hello_mine :
	    l->hello_peer, WIRE_HELLO_LEN);
	return (0);
}

const char *
verbs_link_peer(const struct verbs_link *l)
{

	return (l->peer);
}

const char *
verbs_link_device(const struct verbs_link *l)
{

	return (l->device);
}

int
verbs_link_iwarp(const struct verbs_link *l)
{

	return (verbs_iwarp(l->id));
}

const struct hca_info *
verbs_link_hca(const struct verbs_link *l)
{

	return (l->have_hca ? &l->hca : NULL);
}

enum verbs_wc_error
verbs_link_wc_error(const struct verbs_link *l)
{

	return (l->wc_error);
}
