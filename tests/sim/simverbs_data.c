/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * simverbs_data: a simulated link's data path (what it posts executes at
 * once at its peer, by the fabric's rules; completions raise its channel
 * once armed), its ring memory, its end with its last ring, and the
 * fabric's errors.  How this keeps verbs.h's promises: simverbs.c.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "budget.h"
#include "engine.h"
#include "fabric.h"
#include "simverbs.h"
#include "simverbs_int.h"
#include "verbs.h"

/* Keys are never used twice, as on one HCA. */
static uint32_t next_key = 0x1000;
static char first_error[300];

void
sv_error(const char *fmt, ...)
{
	va_list ap;

	if (first_error[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(first_error, sizeof(first_error), fmt, ap);
	va_end(ap);
}

void
sv_error_clear(void)
{

	first_error[0] = '\0';
}

const char *
simverbs_error(void)
{

	return (first_error[0] != '\0' ? first_error : NULL);
}

void *
sv_zalloc(size_t n)
{
	void *p;

	if ((p = calloc(1, n)) == NULL)
		abort();
	return (p);
}

/* -------------------------------------------------------- the data path */

/*
 * Whether what waits for ${l} raises its channel: the real link has two
 * completion queues, receives' (armed whenever its loop sleeps) and its
 * work requests' (armed only while its engine waits on them), so a WR's
 * completion, or an error, which Soft-RoCE reports on the WR's queue,
 * raises it only if that one is armed.
 */
static int
sv_raises(const struct verbs_link *l)
{
	const struct fab_side *s = &l->conn->f.side[l->side];
	size_t i;

	if (l->werr != NULL)
		return (l->armed_send);
	for (i = 0; i < s->cq_n; i++)
		if (s->cq[(s->cq_head + i) % s->cq_cap].kind !=
		    FAB_CQE_SEND || l->armed_send)
			return (1);
	return (0);
}

void
sv_notify(struct verbs_link *l)
{
	uint64_t one = 1;

	if (l == NULL || l->efd < 0 || l->cm->deaf || !l->armed ||
	    !sv_raises(l))
		return;
	l->armed = l->armed_send = 0;
	l->raises++;
	if (write(l->efd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		abort();
}

int
verbs_link_fd(const struct verbs_link *l)
{

	return (l->efd);
}

void
sv_wc_error(struct verbs_link *l, enum verbs_wc_error c, const char *why)
{

	if (l->werr == NULL) {
		l->werr = why;
		l->werr_class = c;
	}
	sv_notify(l);
}

/*
 * Execute what side ${i} of ${c} has in flight, at the other side, now:
 * unless the path broke or the other side's queue pair stopped (then it
 * is lost, and the CM tells of the end).
 */
static void
run(struct sv_conn *c, int i)
{
	struct verbs_link *to = c->end[1 - i];
	int n;

	if (c->cut || to == NULL || to->stopped)
		return;
	while ((n = fab_deliver(&c->f, i)) > 0)
		;
	if (n < 0) {
		sv_error("%s", c->f.err);
		if (c->end[i] != NULL)
			sv_wc_error(c->end[i], VERBS_WC_REMOTE, "work request "
			    "failed: remote access error (the fabric saw a "
			    "violation)");
	}
	sv_notify(c->end[0]);
	sv_notify(c->end[1]);
}

/* A connection goes with the last link that holds it. */
static void
conn_drop(struct sv_conn *c)
{

	if (c == NULL || --c->refs > 0)
		return;
	fab_free(&c->f);
	free(c);
}

void
sv_destroy(struct verbs_link *l)
{

	conn_drop(l->conn);
	free(l);
}

void
sv_transport_fail(struct verbs_link *l, const char *why)
{

	verbs_link_stop(l);
	if (l->e != NULL && engine_error(l->e) == NULL)
		engine_fail(l->e, ENGINE_ERR_TRANSPORT, why);
}

int
verbs_link_stop(struct verbs_link *l)
{

	if (l == NULL)
		return (0);
	l->stopped = 1;
	if (l->e != NULL)
		engine_stopped(l->e);
	return (0);
}

int
verbs_link_drain(struct verbs_link *l)
{
	int n = 0, authed;

	if (l->e == NULL || engine_error(l->e) != NULL) {
		verbs_link_stop(l);
		return (-1);
	}
	/* A daemon whose loop stalls hears nothing (simverbs_deaf). */
	if (l->cm->deaf)
		return (0);
	/* The completion that authenticates the link ends the drain. */
	authed = engine_authenticated(l->e);
	while (engine_error(l->e) == NULL &&
	    fab_complete(&l->conn->f, l->side) > 0) {
		n++;
		if (!authed && engine_authenticated(l->e))
			break;
	}
	/* An error completion comes after those before it; it ends the
	 * link unless something else did first. */
	if (l->werr != NULL) {
		if (engine_error(l->e) == NULL)
			l->wc_error = l->werr_class;
		sv_transport_fail(l, l->werr);
	}
	return (engine_error(l->e) != NULL ? -1 : n);
}

int
verbs_link_poll(struct verbs_link *l)
{
	uint64_t n;

	/* One arm raised at most one event: one read takes it. */
	if (l->efd >= 0 && read(l->efd, &n, sizeof(n)) < 0 &&
	    errno != EAGAIN)
		abort();
	return (verbs_link_drain(l));
}

int
verbs_link_arm(struct verbs_link *l)
{

	if (l->e == NULL || engine_error(l->e) != NULL)
		return (-1);
	/* Completions already waiting raise nothing: the next one does. */
	l->armed = 1;
	l->armed_send = !engine_sends_quiet(l->e);
	l->arms.arms++;
	l->arms.quiet += !l->armed_send;
	return (0);
}

void
verbs_link_arm_stats(const struct verbs_link *l, struct verbs_arm_stats *as)
{

	*as = l->arms;
}

int
verbs_link_wants_poll(const struct verbs_link *l)
{

	return (l->e != NULL && engine_error(l->e) == NULL &&
	    !l->armed_send && !engine_sends_quiet(l->e));
}

int
verbs_link_flush(struct verbs_link *l)
{

	if (l->e == NULL || engine_error(l->e) != NULL) {
		verbs_link_stop(l);
		return (-1);
	}
	if (l->stopped) {
		sv_transport_fail(l, "work request flushed: the queue pair is "
		    "stopped");
		return (-1);
	}
	if (fab_pump(&l->conn->f, l->side) < 0) {
		sv_error("%s", l->conn->f.err);
		sv_transport_fail(l, "ibv_post_send: the fabric saw a "
		    "violation");
		return (-1);
	}
	run(l->conn, l->side);
	return (0);
}

struct engine *
verbs_link_engine(const struct verbs_link *l)
{

	return (l->e);
}

struct engine *
verbs_link_take_engine(struct verbs_link *l)
{
	struct engine *e = l->e;

	if (!l->stopped)
		sv_error("%s: its engine taken, its queue pair not stopped",
		    l->peer);
	l->e = NULL;
	if (l->conn != NULL)
		l->conn->f.side[l->side].e = NULL;
	return (e);
}

/* -------------------------------------------------------- ring memory */

/* ${m} becomes ${l}'s: a receive ring a region of its side, a new key. */
static void
mem_join(struct verbs_mem *m, struct verbs_link *l)
{

	m->link = l;
	m->key = next_key++;
	if (m->remote)
		fab_mr_add(&l->conn->f, l->side, (uint64_t)(uintptr_t)m->buf,
		    m->size, m->key);
	l->nmems++;
	l->ms.pinned += m->size;
	l->ms.registered++;
}

/* ${m} leaves its link: its key is dead; the link may go with it. */
static void
mem_leave(struct verbs_mem *m)
{
	struct verbs_link *l = m->link;

	if (l == NULL)
		return;
	if (m->remote)
		fab_mr_del(&l->conn->f, l->side, (uint64_t)(uintptr_t)m->buf);
	m->link = NULL;
	l->ms.pinned -= m->size;
	if (--l->nmems == 0 && l->freed)
		sv_destroy(l);
}

struct verbs_mem *
verbs_mem_new(struct verbs_link *l, uint32_t size, int flags, char *err,
    size_t errlen)
{
	struct verbs_mem *m;

	if (l->conn == NULL || l->freed) {
		snprintf(err, errlen, "link has no protection domain");
		return (NULL);
	}
	if (budget_take(&l->cm->pinned, l->cm->max_pinned, size) != 0) {
		snprintf(err, errlen, "max_memory: no room for a %u-byte ring",
		    (unsigned)size);
		errno = ENOBUFS;
		return (NULL);
	}
	m = sv_zalloc(sizeof(*m));
	m->cm = l->cm;
	m->size = size;
	m->remote = (flags & VERBS_MEM_REMOTE) != 0;
	m->buf = sv_zalloc(size);
	mem_join(m, l);
	return (m);
}

void
verbs_mem_ring(const struct verbs_mem *m, struct engine_ring *ring)
{

	ring->addr = (uint64_t)(uintptr_t)m->buf;
	ring->size = m->size;
	ring->key = m->key;
	ring->mem = (void *)(uintptr_t)m;
}

void
verbs_mem_free(struct verbs_mem *m)
{

	if (m == NULL)
		return;
	if (m->link == NULL)
		m->cm->detached -= m->size;
	mem_leave(m);
	budget_give(&m->cm->pinned, m->size);
	free(m->buf);
	free(m);
}

void
verbs_mem_detach(struct verbs_mem *m)
{

	if (m == NULL || m->link == NULL)
		return;
	if (!m->link->stopped)
		sv_error("%s: a ring detached, its queue pair not stopped",
		    m->link->peer);
	mem_leave(m);
	m->cm->detached += m->size;
}

int
verbs_mem_move(struct verbs_mem *m, struct verbs_link *l, char *err,
    size_t errlen)
{

	if (m->link == l)
		return (0);
	if (l->conn == NULL || l->freed) {
		snprintf(err, errlen, "link has no protection domain");
		return (-1);
	}
	if (m->link == NULL)
		m->cm->detached -= m->size;
	mem_leave(m);
	mem_join(m, l);
	return (0);
}

void
verbs_link_pool_trim(struct verbs_link *l)
{

	(void)l;
}

void
verbs_link_mem_stats(const struct verbs_link *l, struct verbs_mem_stats *ms)
{

	*ms = l->ms;
	ms->control = l->ctrl_bytes;
}

uint8_t *
verbs_mem_buf(const struct verbs_mem *m)
{

	return (m->buf);
}

uint32_t
verbs_mem_size(const struct verbs_mem *m)
{

	return (m != NULL ? m->size : 0);
}

void
verbs_cm_set_max_pinned(struct verbs_cm *cm, uint64_t bytes)
{

	cm->max_pinned = bytes;
}

uint64_t
verbs_cm_pinned(const struct verbs_cm *cm)
{

	return (budget_now(&cm->pinned));
}

void
verbs_cm_mem(const struct verbs_cm *cm, struct verbs_cm_mem *cmm)
{

	cmm->total = budget_now(&cm->pinned);
	cmm->control = cm->control;
	cmm->detached = cm->detached;
}
