/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * verbs_mem: ring memory: mapped, charged to the cap, registered with a
 * link's protection domain, pooled when freed, moved to another link; and
 * the link itself, which goes with its last ring.
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/queue.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "budget.h"
#include "engine.h"
#include "verbs.h"
#include "verbs_int.h"

void
verbs_link_destroy(struct verbs_link *l)
{

	if (l->pd != NULL)
		ibv_dealloc_pd(l->pd);
	if (l->ctx != NULL)
		TAILQ_REMOVE(&l->cm->links, l, lentry);
	free(l);
}

/*
 * Ring memory leaves its link's registration (its charge stays with the
 * channel); the link goes with its last ring.
 */
static void
mem_unlink(struct verbs_mem *m)
{
	struct verbs_link *l = m->link;

	if (m->mr != NULL)
		ibv_dereg_mr(m->mr);
	m->mr = NULL;
	m->link = NULL;
	if (l == NULL)
		return;
	l->ms.pinned -= m->size;
	if (--l->nmems == 0 && l->freed && !l->dying)
		verbs_link_destroy(l);
}

/* Ring memory registered as ${mr} joins link ${l} (mem_unlink's twin). */
static void
mem_link(struct verbs_mem *m, struct verbs_link *l, struct ibv_mr *mr)
{

	m->mr = mr;
	m->link = l;
	l->nmems++;
	l->ms.pinned += m->size;
	l->ms.registered++;
	if (m->detached) {
		m->detached = 0;
		__atomic_fetch_sub(&m->cm->detached, m->size,
		    __ATOMIC_RELAXED);
	}
}

/* The access a ring's registration gives: remote WRITE for receive rings. */
static int
ring_access(int remote_write)
{

	return (remote_write ?
	    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE : 0);
}

/* Free ring memory for good, and its charge. */
static void
mem_release(struct verbs_mem *m)
{

	mem_unlink(m);
	if (m->detached)
		__atomic_fetch_sub(&m->cm->detached, m->size,
		    __ATOMIC_RELAXED);
	if (m->buf != NULL)
		munmap(m->buf, m->size);
	budget_give(&m->cm->pinned, m->size);
	free(m);
}

static void
pool_take(struct verbs_link *l, struct verbs_mem *m)
{

	TAILQ_REMOVE(&l->pool, m, pentry);
	l->pool_bytes -= m->size;
}

/* Empty the pool (the link is going, or trims its idle rings). */
void
verbs_pool_drain(struct verbs_link *l, int only_stale)
{
	struct verbs_mem *m, *next;

	for (m = TAILQ_FIRST(&l->pool); m != NULL; m = next) {
		next = TAILQ_NEXT(m, pentry);
		if (only_stale && ++m->idle < VERBS_POOL_IDLE_TRIMS)
			continue;
		pool_take(l, m);
		mem_release(m);
	}
}

/* Memory counted against the cap now, and the cap. */
uint64_t
verbs_pinned_now(const struct verbs_cm *cm)
{

	return (budget_now(&cm->pinned));
}

uint64_t
verbs_max_now(const struct verbs_cm *cm)
{

	return (__atomic_load_n(&cm->max_pinned, __ATOMIC_RELAXED));
}

/*
 * Charge ${size} bytes to the cap, before they are mapped or registered:
 * 0, or -1 when it has no room.  Pooled rings go first to make room, the
 * link's own, then (unless ${own_only}: other links may be in use by
 * other threads) every link's: idle rings must not refuse a stream.
 */
int
verbs_charge(struct verbs_link *l, uint64_t size, int own_only)
{
	struct verbs_cm *cm = l->cm;
	struct verbs_link *o;

	if (budget_take(&cm->pinned, verbs_max_now(cm), size) == 0)
		return (0);
	verbs_pool_drain(l, 0);
	if (budget_take(&cm->pinned, verbs_max_now(cm), size) == 0)
		return (0);
	if (own_only)
		return (-1);
	TAILQ_FOREACH(o, &cm->links, lentry) {
		verbs_pool_drain(o, 0);
		if (budget_take(&cm->pinned, verbs_max_now(cm), size) == 0)
			return (0);
	}
	return (-1);
}

/* A ring of ${size} bytes from ${l}'s pool, or NULL when it has none. */
static struct verbs_mem *
pool_get(struct verbs_link *l, uint32_t size, int remote_write)
{
	struct verbs_mem *m;

	TAILQ_FOREACH(m, &l->pool, pentry) {
		if (m->size == size && m->remote == remote_write) {
			pool_take(l, m);
			l->ms.reused++;
			/*
			 * The peer places its writes where it likes and the
			 * cursors only trust it: a write put elsewhere would
			 * let the new stream deliver what its last tenant
			 * left here.  A send ring needs nothing: only bytes
			 * its own stream put in are ever written out.
			 */
			if (remote_write)
				memset(m->buf, 0, m->size);
			return (m);
		}
	}
	return (NULL);
}

/*
 * Map and register a new ring of ${size} bytes, already charged: on
 * failure mem_release gives up whatever part of it exists, the charge
 * too.
 */
static struct verbs_mem *
mem_map(struct verbs_link *l, uint32_t size, int remote_write, char *err,
    size_t errlen)
{
	struct verbs_mem *m;
	struct ibv_mr *mr;

	if ((m = calloc(1, sizeof(*m))) == NULL) {
		budget_give(&l->cm->pinned, size);
		say(err, errlen, "out of memory for a %u-byte ring",
		    (unsigned)size);
		return (NULL);
	}
	m->cm = l->cm;
	m->size = size;
	m->remote = remote_write;
	m->buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->buf == MAP_FAILED) {
		m->buf = NULL;
		say(err, errlen, "out of memory for a %u-byte ring",
		    (unsigned)size);
		mem_release(m);
		return (NULL);
	}
	/* Tenants' bytes stay out of core dumps (and a ring can be big). */
	(void)madvise(m->buf, size, MADV_DONTDUMP);
	if ((mr = ibv_reg_mr(l->pd, m->buf, size, ring_access(remote_write)))
	    == NULL) {
		verbs_reg_failed(err, errlen, l->device, "ring memory", size);
		mem_release(m);
		return (NULL);
	}
	mem_link(m, l, mr);
	return (m);
}

struct verbs_mem *
verbs_mem_new(struct verbs_link *l, uint32_t size, int flags,
    char *err, size_t errlen)
{
	int remote_write = (flags & VERBS_MEM_REMOTE) != 0;
	struct verbs_mem *m;

	if (l->pd == NULL || l->freed) {
		say(err, errlen, "link has no protection domain");
		return (NULL);
	}
	if ((m = pool_get(l, size, remote_write)) != NULL)
		return (m);
	if (verbs_charge(l, size, (flags & VERBS_MEM_OWNPOOL) != 0) != 0) {
		say(err, errlen, "max_memory: %llu bytes of ring memory are "
		    "registered, the limit is %llu",
		    (unsigned long long)verbs_pinned_now(l->cm),
		    (unsigned long long)verbs_max_now(l->cm));
		errno = ENOBUFS;
		return (NULL);
	}
	return (mem_map(l, size, remote_write, err, errlen));
}

void
verbs_mem_free(struct verbs_mem *m)
{
	struct verbs_link *l;

	if (m == NULL)
		return;
	l = m->link;
	if (l == NULL || l->freed ||
	    l->pool_bytes + m->size > l->conf.pool_bytes) {
		mem_release(m);
		return;
	}
	m->idle = 0;
	TAILQ_INSERT_HEAD(&l->pool, m, pentry);
	l->pool_bytes += m->size;
}

void
verbs_mem_detach(struct verbs_mem *m)
{

	if (m == NULL || m->link == NULL)
		return;
	mem_unlink(m);
	m->detached = 1;
	__atomic_fetch_add(&m->cm->detached, m->size, __ATOMIC_RELAXED);
}

int
verbs_mem_move(struct verbs_mem *m, struct verbs_link *l, char *err,
    size_t errlen)
{
	struct ibv_mr *mr;

	if (m->link == l)
		return (0);
	if (l->pd == NULL || l->freed) {
		say(err, errlen, "link has no protection domain");
		return (-1);
	}
	/* The old registration goes first: its rkey must be dead at once. */
	mem_unlink(m);
	if ((mr = ibv_reg_mr(l->pd, m->buf, m->size, ring_access(m->remote)))
	    == NULL) {
		verbs_reg_failed(err, errlen, l->device, "ring memory again",
		    m->size);
		return (-1);
	}
	mem_link(m, l, mr);
	return (0);
}

struct engine *
verbs_link_take_engine(struct verbs_link *l)
{
	struct engine *e = l->e;

	l->e = NULL;
	return (e);
}

void
verbs_link_pool_trim(struct verbs_link *l)
{

	verbs_pool_drain(l, 1);
}

void
verbs_link_mem_stats(const struct verbs_link *l, struct verbs_mem_stats *ms)
{

	*ms = l->ms;
	ms->pooled = l->pool_bytes;
	ms->control = l->ctrl_bytes;
}

uint8_t *
verbs_mem_buf(const struct verbs_mem *m)
{

	return (m->buf);
}

void
verbs_mem_ring(const struct verbs_mem *m, struct engine_ring *ring)
{

	ring->addr = (uint64_t)(uintptr_t)m->buf;
	ring->size = (uint32_t)m->size;
	ring->key = m->remote ? m->mr->rkey : m->mr->lkey;
	ring->mem = (void *)(uintptr_t)m;
}

void
verbs_cm_set_max_pinned(struct verbs_cm *cm, uint64_t bytes)
{

	__atomic_store_n(&cm->max_pinned, bytes, __ATOMIC_RELAXED);
}

uint64_t
verbs_cm_pinned(const struct verbs_cm *cm)
{

	return (verbs_pinned_now(cm));
}

void
verbs_cm_mem(const struct verbs_cm *cm, struct verbs_cm_mem *cmm)
{

	cmm->total = verbs_pinned_now(cm);
	cmm->control = __atomic_load_n(&cm->control, __ATOMIC_RELAXED);
	cmm->detached = __atomic_load_n(&cm->detached, __ATOMIC_RELAXED);
}

uint32_t
verbs_mem_size(const struct verbs_mem *m)
{

	return (m != NULL ? (uint32_t)m->size : 0);
}
