/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "engine.h"
#include "fabric.h"
#include "seal.h"
#include "wire.h"

static int violation(struct fab *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static int
violation(struct fab *f, const char *fmt, ...)
{
	va_list ap;

	if (f->failed)
		return (-1);
	va_start(ap, fmt);
	vsnprintf(f->err, sizeof(f->err), fmt, ap);
	va_end(ap);
	f->failed = 1;
	return (-1);
}

static void *
grow(void *p, size_t *cap, size_t n, size_t elem)
{
	size_t ncap;

	if (n < *cap)
		return (p);
	ncap = *cap ? *cap * 2 : 64;
	if ((p = realloc(p, ncap * elem)) == NULL) {
		perror("realloc");
		abort();
	}
	*cap = ncap;
	return (p);
}

static void
cq_push(struct fab_side *s, const struct fab_cqe *c)
{

	if (s->cq_n == s->cq_cap) {
		/* Unwrap into a bigger array. */
		struct fab_cqe *n = calloc(s->cq_cap ? s->cq_cap * 2 : 64,
		    sizeof(*n));
		size_t i;

		if (n == NULL)
			abort();
		for (i = 0; i < s->cq_n; i++)
			n[i] = s->cq[(s->cq_head + i) % s->cq_cap];
		free(s->cq);
		s->cq = n;
		s->cq_cap = s->cq_cap ? s->cq_cap * 2 : 64;
		s->cq_head = 0;
	}
	s->cq[(s->cq_head + s->cq_n) % s->cq_cap] = *c;
	s->cq_n++;
}

/* Lane ${lane}'s queue pair at side ${s}. */
static struct fab_lane *
lane_of(struct fab_side *s, unsigned lane)
{

	return (lane == 0 ? &s->lane0 : &s->lane1);
}

/*
 * Signalled WR ${fw} of side ${s} completes.  RC on InfiniBand and RoCE
 * completes it once the peer acknowledged it, so it is in the peer's
 * completion queue (fab_deliver_lane) before anything posted after the
 * completion reaches the peer on either lane; iWARP once TCP took its
 * bytes, which may reach the peer after anything posted later on another
 * connection (fab_pump).
 */
static void
complete_send(struct fab_side *s, const struct fab_wr *fw)
{
	struct fab_cqe c;

	memset(&c, 0, sizeof(c));
	c.kind = FAB_CQE_SEND;
	c.wr_id = fw->wr.wr_id;
	c.lane = fw->wr.lane;
	c.n = fw->n;
	cq_push(s, &c);
}

/* The lanes side ${s}'s engine configuration asks room for. */
static size_t
lanes_conf(const struct fab_side *s)
{

	return (s->conf.lanes > 1 ? s->conf.lanes : 1);
}

static uint8_t *
fab_ring_ptr(void *arg, uint64_t addr)
{

	(void)arg;
	return ((uint8_t *)(uintptr_t)addr);
}

static void
wire_push(struct fab_lane *s, const struct fab_wr *w)
{

	if (s->wire_n == s->wire_cap) {
		struct fab_wr *n = calloc(s->wire_cap ? s->wire_cap * 2 : 64,
		    sizeof(*n));
		size_t i;

		if (n == NULL)
			abort();
		for (i = 0; i < s->wire_n; i++)
			n[i] = s->wire[(s->wire_head + i) % s->wire_cap];
		free(s->wire);
		s->wire = n;
		s->wire_cap = s->wire_cap ? s->wire_cap * 2 : 64;
		s->wire_head = 0;
	}
	s->wire[(s->wire_head + s->wire_n) % s->wire_cap] = *w;
	s->wire_n++;
}

/* The rekey boundaries ${p}'s directions crossed since they counted from
 * ${from}. */
static uint64_t
crossed(const struct seal_pair *p, uint64_t from)
{
	uint64_t n = 0;
	unsigned l;

	for (l = 0; l < SEAL_LANES; l++)
		n += seal_dir_count(&p->tx[l]) / SEAL_REKEY_EVERY +
		    seal_dir_count(&p->rx[l]) / SEAL_REKEY_EVERY -
		    2 * (from / SEAL_REKEY_EVERY);
	return (n);
}

/* Keystream ${k} was used: 0, or -1 (a violation) if it was before. */
static int
ks_add(struct fab *f, uint64_t k, unsigned side, unsigned lane, uint64_t n)
{
	uint64_t *old = f->ks;
	size_t cap = f->ks_cap, i;

	if (k == 0) {
		if (f->ks_zero++ == 0)
			return (0);
		goto reused;
	}
	if (2 * (f->ks_n + 1) > f->ks_cap) {
		f->ks_cap = cap ? 2 * cap : 1024;
		if ((f->ks = calloc(f->ks_cap, sizeof(*f->ks))) == NULL)
			abort();
		f->ks_n = 0;
		for (i = 0; i < cap; i++)
			if (old[i] != 0)
				(void)ks_add(f, old[i], 0, 0, 0);
		free(old);
	}
	for (i = (size_t)(k * 0x9e3779b97f4a7c15ULL) % f->ks_cap;
	    f->ks[i] != 0; i = (i + 1) % f->ks_cap)
		if (f->ks[i] == k)
			goto reused;
	f->ks[i] = k;
	f->ks_n++;
	return (0);
reused:
	return (violation(f, "side %u lane %u sealed message %llu with a "
	    "keystream already used: a key and nonce used twice", side, lane,
	    (unsigned long long)n));
}

/*
 * The sealing callbacks of fab_seal: lib/crypto/seal's, with each
 * message's keystream (plaintext xor ciphertext) checked unused.
 */
static uint64_t
fab_seal_seal(void *arg, unsigned lane, uint8_t *buf, uint32_t len,
    const uint8_t *ad, size_t adlen, uint8_t tag[SEAL_TAG_LEN])
{
	struct fab_side *s = arg;
	uint8_t clear[8];
	uint64_t n, k = 0;
	size_t i;

	if (len >= sizeof(clear))
		memcpy(clear, buf, sizeof(clear));
	n = seal_pair_seal(&s->seal, lane, buf, len, ad, adlen, tag);
	if (len < sizeof(clear))
		return (n);
	for (i = 0; i < sizeof(clear); i++)
		k = k << 8 | (uint8_t)(clear[i] ^ buf[i]);
	(void)ks_add(s->owner, k, (unsigned)(s - s->owner->side), lane, n);
	return (n);
}

static int
fab_seal_open(void *arg, unsigned lane, uint8_t *buf, uint32_t len,
    const uint8_t *ad, size_t adlen, const uint8_t tag[SEAL_TAG_LEN])
{
	struct fab_side *s = arg;

	return (seal_pair_open(&s->seal, lane, buf, len, ad, adlen, tag));
}

static int
fab_seal_restore(void *arg, uint8_t *buf, uint32_t len, const uint8_t *ad,
    size_t adlen, uint64_t n, const uint8_t tag[SEAL_TAG_LEN])
{
	struct fab_side *s = arg;

	return (seal_pair_restore(&s->seal, buf, len, ad, adlen, n, tag));
}

/*
 * Side ${i}'s engine of this link seals: keys of this link's own, one per
 * direction (made up: the handshake is not the fabric's business), the
 * other side's mirror image, both counting from f->seal_from.
 */
static void
side_seal(struct fab *f, int i)
{
	struct fab_side *s = &f->side[i];
	struct engine_seal sl = { fab_seal_seal, fab_seal_open,
	    fab_seal_restore, seal_pair_ptr, s };
	uint8_t ktx[SEAL_KEY_LEN], krx[SEAL_KEY_LEN];
	unsigned l;

	memset(ktx, 0x30 + i, sizeof(ktx));
	memset(krx, 0x31 - i, sizeof(krx));
	ktx[0] = krx[0] = (uint8_t)f->links;
	ktx[1] = krx[1] = (uint8_t)(f->links >> 8);
	/* A reconnect seals anew: the last link's directions go. */
	seal_pair_wipe(&s->seal);
	if (seal_pair_init(&s->seal, f->aead, ktx, krx) != 0)
		abort();
	for (l = 0; l < SEAL_LANES; l++) {
		seal_dir_set_count_for_test(&s->seal.tx[l], f->seal_from);
		seal_dir_set_count_for_test(&s->seal.rx[l], f->seal_from);
	}
	s->owner = f;
	engine_set_seal(s->e, &sl);
	engine_seal_tx(s->e);
	engine_seal_rx(s->e);
}

void
fab_seal(struct fab *f)
{

	fab_seal_at(f, SEAL_CHACHAPOLY, 0);
}

void
fab_seal_at(struct fab *f, enum seal_aead aead, uint64_t from)
{

	if (sodium_init() < 0 ||
	    (aead == SEAL_AESGCM && !seal_aesgcm_available()))
		abort();
	f->sealed = 1;
	f->aead = aead;
	f->seal_from = from;
	side_seal(f, 0);
	side_seal(f, 1);
}

uint64_t
fab_rekeys(const struct fab *f)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < 2 && f->sealed; i++)
		n += f->side[i].rekeys + crossed(&f->side[i].seal, f->seal_from);
	return (n);
}

/* Make side ${i}'s engine for the current link from its configuration. */
static int
side_engine(struct fab *f, int i)
{
	struct fab_side *s = &f->side[i];
	const char *why;

	if ((s->e = engine_new(&s->conf, &why)) == NULL)
		return (violation(f, "engine_new: %s", why));
	if (s->has_auth)
		engine_set_auth(s->e, &s->auth);
	if (s->has_seal_ops)
		engine_set_seal(s->e, &s->seal_ops);
	if (s->has_res)
		engine_set_resume(s->e, &s->res);
	if (s->has_mem)
		engine_set_mem(s->e, &s->mem);
	return (0);
}

/* Side ${i}'s receive area and queue, for an engine made with ${c}. */
static int
side_areas(struct fab *f, int i, const struct engine_conf *c)
{
	struct fab_side *s = &f->side[i];

	s->conf = *c;
	/* A device without immediates (iWARP) makes the fabric one too. */
	if (c->notify)
		f->no_imm = 1;
	/* The fabric's memory is the process's: addresses are pointers. */
	if (s->conf.ring_ptr == NULL)
		s->conf.ring_ptr = fab_ring_ptr;
	s->recv_buf = calloc(lanes_conf(s) * c->rq_size, WIRE_MSG_SIZE);
	s->posted = calloc(c->rq_size, sizeof(uint32_t));
	s->lane1.posted = calloc(c->rq_size, sizeof(uint32_t));
	if (!s->recv_buf || !s->posted || !s->lane1.posted)
		return (violation(f, "out of memory"));
	return (0);
}

static int
side_init(struct fab *f, int i, const struct engine_conf *c)
{
	struct fab_side *s = &f->side[i];

	if (side_areas(f, i, c) != 0)
		return (-1);
	if ((s->ctrl_send = calloc(lanes_conf(s) * c->sq_size,
	    WIRE_MSG_SIZE)) == NULL)
		return (violation(f, "out of memory"));
	s->conf.ctrl_send = s->ctrl_send;
	s->conf.ctrl_send_addr = (uint64_t)(uintptr_t)s->ctrl_send;
	s->conf.ctrl_send_lkey = 0x1000u + (uint32_t)i;
	return (side_engine(f, i));
}

void
fab_trace(struct fab *f, const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = f->trace != 0 ? f->trace : 0xcbf29ce484222325ull;

	while (n-- > 0)
		h = (h ^ *b++) * 0x100000001b3ull;
	f->trace = h;
}

/* f->trace gets ${n} numbers (as 64-bit values). */
static void
trace_nums(struct fab *f, size_t n, ...)
{
	va_list ap;
	uint64_t v;

	va_start(ap, n);
	while (n-- > 0) {
		v = va_arg(ap, uint64_t);
		fab_trace(f, &v, sizeof(v));
	}
	va_end(ap);
}

/* f->trace gets side ${i}'s engine error, if it has one now. */
static void
trace_error(struct fab *f, int i)
{
	const char *why = engine_error(f->side[i].e);

	if (why != NULL)
		fab_trace(f, why, strlen(why));
}

/*
 * Lane 1 of engines that run two (engine_lanes), as its second
 * connection would: its receives posted first, then the lane-1 hellos,
 * each with its side's lane-0 nonce, and up.
 */
static int
lane_pair(struct fab *f)
{
	struct wire_hello h[2], d;
	uint8_t buf[WIRE_HELLO_LEN];
	int i;

	if (engine_lanes(f->side[0].e) != engine_lanes(f->side[1].e))
		return (violation(f, "the sides disagree on their lanes"));
	if (engine_lanes(f->side[0].e) < 2)
		return (0);
	for (i = 0; i < 2; i++) {
		if (fab_pump(f, i) != 0 ||
		    f->side[i].lane1.posted_n != f->side[i].conf.rq_size)
			return (violation(f, "side %d: lane 1's receives were "
			    "not all posted before connecting it", i));
		memset(&h[i], 0, sizeof(h[i]));
		engine_lane_hello(f->side[i].e, &h[i]);
		memcpy(h[i].nonce, f->side[i].nonce, WIRE_NONCE_LEN);
	}
	for (i = 0; i < 2; i++) {
		wire_hello_encode(buf, &h[i]);
		fab_trace(f, buf, sizeof(buf));
		if (wire_hello_decode(buf, sizeof(buf), &d) != WIRE_OK)
			return (violation(f, "lane-1 hello does not decode"));
		(void)engine_lane_up(f->side[1 - i].e, &d);
	}
	return (0);
}

/*
 * Post both engines' initial receives, exchange hellos (each link with
 * nonces of its own) and connect them: side 0 initiates.
 */
static int
connect_pair(struct fab *f)
{
	struct wire_hello h[2], d;
	uint8_t buf[WIRE_HELLO_LEN];
	int i;

	f->links++;
	for (i = 0; i < 2; i++) {
		/* Receives go up before the connection: nothing posted yet. */
		if (fab_pump(f, i) != 0 ||
		    f->side[i].posted_n != f->side[i].conf.rq_size)
			return (violation(f, "side %d: receives were not all "
			    "posted before connecting", i));
		if (f->side[i].version_cap != 0)
			engine_version_cap(f->side[i].e,
			    f->side[i].version_cap);
		engine_hello(f->side[i].e, &h[i]);
		memset(h[i].nonce, 0x40 + i, sizeof(h[i].nonce));
		h[i].nonce[0] = (uint8_t)f->links;
		h[i].nonce[1] = (uint8_t)(f->links >> 8);
		memcpy(f->side[i].nonce, h[i].nonce, WIRE_NONCE_LEN);
	}
	for (i = 0; i < 2; i++) {
		wire_hello_encode(buf, &h[i]);
		fab_trace(f, buf, sizeof(buf));
		if (wire_hello_decode(buf, sizeof(buf), &d) != WIRE_OK)
			return (violation(f, "hello does not decode"));
		engine_connected(f->side[1 - i].e, &d);
	}
	if (lane_pair(f) != 0)
		return (-1);
	/*
	 * The last link's directions are done with (a failed engine restored
	 * its WRITEs when it failed): what they crossed is kept.
	 */
	for (i = 0; i < 2 && f->sealed; i++) {
		f->side[i].rekeys += crossed(&f->side[i].seal, f->seal_from);
		side_seal(f, i);
	}
	return (0);
}

/**
 * fab_init(f, a, b):
 * Create both engines with configurations ${a} and ${b} (their control
 * buffers are allocated here), post the initial receives, exchange hellos
 * and connect.  Returns 0, or -1 with f->err set.
 */
int
fab_init(struct fab *f, const struct engine_conf *a,
    const struct engine_conf *b)
{

	return (fab_init_auth(f, a, b, NULL, NULL));
}

/* fab_init_auth and fab_init_cap: the one and the other, or both. */
static int
init(struct fab *f, const struct engine_conf *a, const struct engine_conf *b,
    const struct engine_auth *auth_a, const struct engine_auth *auth_b,
    unsigned cap_a, unsigned cap_b)
{

	memset(f, 0, sizeof(*f));
	f->side[0].version_cap = cap_a;
	f->side[1].version_cap = cap_b;
	if (auth_a != NULL) {
		f->side[0].auth = *auth_a;
		f->side[0].has_auth = 1;
	}
	if (auth_b != NULL) {
		f->side[1].auth = *auth_b;
		f->side[1].has_auth = 1;
	}
	if (side_init(f, 0, a) || side_init(f, 1, b))
		return (-1);
	return (connect_pair(f));
}

int
fab_init_seal(struct fab *f, const struct engine_conf *a,
    const struct engine_conf *b, const struct engine_auth *auth_a,
    const struct engine_auth *auth_b, const struct engine_seal *seal_a,
    const struct engine_seal *seal_b, unsigned cap)
{
	struct fab_side *s;
	const struct engine_seal *sl[2] = { seal_a, seal_b };
	int i;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < 2; i++) {
		s = &f->side[i];
		s->version_cap = cap;
		if ((i == 0 ? auth_a : auth_b) != NULL) {
			s->auth = *(i == 0 ? auth_a : auth_b);
			s->has_auth = 1;
		}
		if (sl[i] != NULL) {
			s->seal_ops = *sl[i];
			s->has_seal_ops = 1;
		}
	}
	if (side_init(f, 0, a) || side_init(f, 1, b))
		return (-1);
	return (connect_pair(f));
}

/**
 * fab_init_auth(f, a, b, auth_a, auth_b):
 * fab_init, with engine_set_auth(${auth_a}) on side 0 and ${auth_b} on
 * side 1 where they are not NULL.  Side 0 is the initiator.
 */
int
fab_init_auth(struct fab *f, const struct engine_conf *a,
    const struct engine_conf *b, const struct engine_auth *auth_a,
    const struct engine_auth *auth_b)
{

	return (init(f, a, b, auth_a, auth_b, 0, 0));
}

/**
 * fab_init_cap(f, a, b, cap_a, cap_b):
 * fab_init, with the hellos capped at versions ${cap_a} and ${cap_b}.
 */
int
fab_init_cap(struct fab *f, const struct engine_conf *a,
    const struct engine_conf *b, unsigned cap_a, unsigned cap_b)
{

	return (init(f, a, b, NULL, NULL, cap_a, cap_b));
}

int
fab_attach(struct fab *f, int i, const struct engine_conf *c,
    struct engine *e)
{

	if (side_areas(f, i, c) != 0)
		return (-1);
	f->side[i].e = e;
	f->side[i].lent = 1;
	return (0);
}

/**
 * fab_free(f):
 * Free both engines and everything the fabric allocated.
 */
void
fab_free(struct fab *f)
{
	struct fab_side *s;
	size_t j;
	int i;

	for (i = 0; i < 2; i++) {
		s = &f->side[i];
		if (!s->lent)
			engine_free(s->e);
		for (j = 0; j < s->wire_n; j++)
			free(s->wire[(s->wire_head + j) % s->wire_cap].inl);
		for (j = 0; j < s->lane1.wire_n; j++)
			free(s->lane1.wire[(s->lane1.wire_head + j) %
			    s->lane1.wire_cap].inl);
		free(s->wire);
		free(s->lane1.wire);
		free(s->cq);
		free(s->mrs);
		free(s->posted);
		free(s->lane1.posted);
		free(s->recv_buf);
		free(s->ctrl_send);
		seal_pair_wipe(&s->seal);
	}
	free(f->ks);
	memset(f, 0, sizeof(*f));
}

/**
 * fab_pump(f, i):
 * Post what side ${i}'s engine wants posted (receives, then work
 * requests), checking the send queue depth and work request limits.
 * Returns the number of work requests posted, or -1 on a violation.
 */
int
fab_pump(struct fab *f, int i)
{
	struct fab_side *s = &f->side[i];
	struct engine_wr wrs[16];
	uint32_t slots[16];
	struct fab_lane *q;
	struct fab_wr fw;
	int n, k, total = 0, sealing;

	while ((n = engine_take_recvs(s->e, slots, 16)) > 0) {
		for (k = 0; k < n; k++) {
			q = lane_of(s, engine_slot_lane(s->e, slots[k]));
			if (q == &s->lane1 && s->conf.lanes < 2)
				return (violation(f, "side %d posted a lane-1 "
				    "receive on a link of one lane", i));
			if (q->posted_n >= s->conf.rq_size)
				return (violation(f, "side %d posted more "
				    "receives than its queue holds", i));
			q->posted[(q->posted_head + q->posted_n) %
			    s->conf.rq_size] = slots[k];
			q->posted_n++;
		}
	}
	do {
		n = engine_take_wrs(s->e, wrs, 16);
		for (k = 0; k < n; k++) {
			struct engine_wr *w = &wrs[k];

			if (w->lane > 1 || (w->lane == 1 &&
			    engine_lanes(s->e) < 2))
				return (violation(f, "side %d posted a work "
				    "request on lane %u, which it does not "
				    "run", i, (unsigned)w->lane));
			q = lane_of(s, w->lane);
			if (++q->outstanding > s->conf.sq_size)
				return (violation(f, "side %d overflowed its "
				    "lane %u send queue (%u)", i,
				    (unsigned)w->lane,
				    (unsigned)s->conf.sq_size));
			if (q->outstanding > s->max_outstanding)
				s->max_outstanding = q->outstanding;
			if (w->len == 0 || w->len > WIRE_WRITE_MAX ||
			    (w->op == ENGINE_WR_SEND &&
			    w->len > WIRE_MSG_SIZE))
				return (violation(f, "side %d posted a work "
				    "request of %u bytes", i,
				    (unsigned)w->len));
			if (w->len > s->max_wr_len)
				s->max_wr_len = w->len;
			if (f->no_imm && (w->op == ENGINE_WR_WRITE_IMM ||
			    w->op == ENGINE_WR_SEND_IMM))
				return (violation(f, "side %d posted a work "
				    "request with an immediate (type %u) on a "
				    "fabric without them", i,
				    (unsigned)w->op));
			sealing = f->sealed || engine_sealed(s->e);
			if ((w->op == ENGINE_WR_WRITE_IMM && sealing) ||
			    (w->op == ENGINE_WR_WRITE && !sealing &&
			    !f->no_imm) ||
			    (w->op == ENGINE_WR_SEND_IMM && !sealing) ||
			    (w->op == ENGINE_WR_SEND_IMM &&
			    w->len != WIRE_TAG_LEN))
				return (violation(f, "side %d posted a work "
				    "request of type %u (%u bytes) on a link "
				    "that %s", i, (unsigned)w->op,
				    (unsigned)w->len, sealing ? "seals" :
				    "does not seal"));
			memset(&fw, 0, sizeof(fw));
			fw.wr = *w;
			fw.n = q->posted_wrs++;
			/* iWARP's bytes are TCP's once taken: a copy. */
			if (w->inlined || f->no_imm) {
				if ((fw.inl = malloc(w->len)) == NULL)
					abort();
				memcpy(fw.inl, (void *)(uintptr_t)w->local_addr,
				    w->len);
			}
			wire_push(q, &fw);
			if (f->no_imm && w->signaled)
				complete_send(s, &fw);
			s->wrs_posted++;
			if (w->op == ENGINE_WR_SEND ||
			    w->op == ENGINE_WR_SEND_IMM)
				s->sends_posted++;
			else
				s->writes_posted++;
		}
		total += n;
	} while (n == 16);
	return (total);
}

/*
 * The region of the current link that ${rkey} opens and that holds
 * ${len} bytes at ${addr}, or NULL; ${*stale} says whether a region of an
 * earlier link would have (its rkey is dead: the write fails all the same).
 */
static struct fab_mr *
mr_find(struct fab_side *s, uint64_t addr, uint64_t len, uint32_t rkey,
    int *stale)
{
	size_t j;

	*stale = 0;
	for (j = 0; j < s->nmr; j++) {
		struct fab_mr *m = &s->mrs[j];

		if (m->rkey == rkey && addr >= m->addr &&
		    len <= m->len && addr - m->addr <= m->len - len) {
			if (!m->stale)
				return (m);
			*stale = 1;
		}
	}
	return (NULL);
}

/* Take the oldest receive posted on side ${i}'s lane ${lane}, as the HCA
 * would. */
static int
take_recv(struct fab *f, int i, unsigned lane, uint32_t *slot)
{
	struct fab_side *s = &f->side[i];
	struct fab_lane *q = lane_of(s, lane);

	if (q->posted_n == 0)
		return (violation(f, "RNR: side %d had no receive posted%s",
		    i, lane ? " on lane 1" : ""));
	*slot = q->posted[q->posted_head];
	q->posted_head = (q->posted_head + 1) % s->conf.rq_size;
	q->posted_n--;
	return (0);
}

/* A lane with work in flight from side ${s}: either, when both have. */
static int
lane_pick(struct fab *f, const struct fab_side *s)
{
	uint64_t x;

	if (s->lane1.wire_n == 0)
		return (0);
	if (s->wire_n == 0)
		return (1);
	x = f->lane_rng != 0 ? f->lane_rng : 0x9e3779b97f4a7c15ull;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	f->lane_rng = x;
	return ((int)(x >> 32) & 1);
}

/**
 * fab_deliver(f, i):
 * Execute the oldest work request in flight from side ${i} at the other
 * side.  Returns 1 if one was executed, 0 if none was in flight, -1 on a
 * violation (RNR, a WRITE outside any region).
 */
int
fab_deliver(struct fab *f, int i)
{

	return (fab_deliver_lane(f, i, lane_pick(f, &f->side[i])));
}

/*
 * The injector of fab_side.overwrite: plain WRITE ${w} from side ${i}
 * just landed; forged bytes go over the first ones of it, at the address
 * and rkey its header shows.
 */
static void
overwrite(struct fab *f, int i, const struct engine_wr *w)
{
	struct fab_side *s = &f->side[i];
	uint8_t forged[64];
	uint32_t n = w->len < s->overwrite ? w->len : s->overwrite, k;

	if (n > sizeof(forged))
		n = sizeof(forged);
	for (k = 0; k < n; k++)
		forged[k] = (uint8_t)~((const uint8_t *)(uintptr_t)
		    w->remote_addr)[k];
	s->overwrite = 0;
	(void)fab_inject_write(f, 1 - i, w->remote_addr, w->rkey, forged, n);
}

int
fab_deliver_lane(struct fab *f, int i, int lane)
{
	struct fab_side *s = &f->side[i], *r = &f->side[1 - i];
	struct fab_lane *q = lane_of(s, lane ? 1 : 0);
	struct fab_wr fw;
	struct fab_cqe c;
	const uint8_t *src;
	uint8_t *dst;
	uint32_t slot = 0, k;
	int stale;

	if (f->failed)
		return (-1);
	if (q->wire_n == 0)
		return (0);
	fw = q->wire[q->wire_head];
	q->wire_head = (q->wire_head + 1) % q->wire_cap;
	q->wire_n--;
	src = fw.inl ? fw.inl : (const uint8_t *)(uintptr_t)fw.wr.local_addr;

	memset(&c, 0, sizeof(c));
	/* A plain WRITE (sealed data) takes no receive and completes none. */
	if (fw.wr.op != ENGINE_WR_WRITE &&
	    take_recv(f, 1 - i, fw.wr.lane, &slot))
		goto out;
	c.slot = slot;
	c.len = fw.wr.len;
	if (fw.wr.op == ENGINE_WR_WRITE_IMM || fw.wr.op == ENGINE_WR_WRITE) {
		if (mr_find(r, fw.wr.remote_addr, c.len,
		    fw.wr.rkey, &stale) == NULL) {
			violation(f, "side %d wrote %u bytes at 0x%llx "
			    "outside any region with rkey 0x%x%s", i,
			    (unsigned)fw.wr.len,
			    (unsigned long long)fw.wr.remote_addr,
			    (unsigned)fw.wr.rkey, stale ? " (a stale rkey "
			    "of a region registered for an earlier link)" : "");
			goto out;
		}
		dst = (uint8_t *)(uintptr_t)fw.wr.remote_addr;
		memcpy(dst, src, fw.wr.len);
		c.kind = FAB_CQE_RECV_IMM;
		c.imm = fw.wr.imm;
	} else {
		dst = r->recv_buf + (size_t)slot * WIRE_MSG_SIZE;
		memcpy(dst, src, fw.wr.len);
		c.kind = fw.wr.op == ENGINE_WR_SEND_IMM ? FAB_CQE_RECV_TAG :
		    FAB_CQE_RECV;
		c.imm = fw.wr.imm;
	}
	if (s->tamper != 0) {
		/* The payload, as on RoCE: a notice is the immediate. */
		k = f->no_imm && fw.wr.op == ENGINE_WR_SEND &&
		    c.len > WIRE_NOTICE_LEN ? WIRE_NOTICE_LEN : 0;
		dst[k + (s->tamper - 1) / 8 % (c.len - k)] ^=
		    (uint8_t)(1u << (s->tamper - 1) % 8);
		s->tamper = 0;
	}
	if (s->overwrite != 0 && fw.wr.op == ENGINE_WR_WRITE)
		overwrite(f, i, &fw.wr);
	trace_nums(f, 6, (uint64_t)i, (uint64_t)fw.wr.op, (uint64_t)c.len,
	    (uint64_t)c.imm, (uint64_t)c.slot, (uint64_t)fw.wr.signaled);
	if (fw.wr.lane != 0)
		trace_nums(f, 1, (uint64_t)fw.wr.lane);
	fab_trace(f, dst, c.len);
	if (fw.wr.op != ENGINE_WR_WRITE)
		cq_push(r, &c);
	/* (On iWARP it completed when posted: fab_pump.) */
	if (fw.wr.signaled && !f->no_imm)
		complete_send(s, &fw);
out:
	free(fw.inl);
	return (f->failed ? -1 : 1);
}

/**
 * fab_complete(f, i):
 * Feed side ${i}'s oldest completion to its engine.  Returns 1 if one
 * was fed, 0 if none was queued; the engine's own verdict is in
 * engine_error().
 */
int
fab_complete(struct fab *f, int i)
{
	struct fab_side *s = &f->side[i];
	struct fab_lane *q;
	struct fab_cqe c;

	if (s->cq_n == 0)
		return (0);
	c = s->cq[s->cq_head];
	s->cq_head = (s->cq_head + 1) % s->cq_cap;
	s->cq_n--;
	switch (c.kind) {
	case FAB_CQE_RECV:
		engine_on_recv(s->e, c.slot,
		    s->recv_buf + (size_t)c.slot * WIRE_MSG_SIZE, c.len);
		break;
	case FAB_CQE_RECV_IMM:
		engine_on_recv_imm(s->e, c.slot, c.imm, c.len);
		break;
	case FAB_CQE_RECV_TAG:
		engine_on_recv_tag(s->e, c.slot, c.imm,
		    s->recv_buf + (size_t)c.slot * WIRE_MSG_SIZE, c.len);
		break;
	case FAB_CQE_SEND:
		/* A signalled completion retires every WR before it on its
		 * lane. */
		q = lane_of(s, c.lane);
		q->outstanding -= c.n + 1 - q->completed_upto;
		q->completed_upto = c.n + 1;
		engine_on_send_done(s->e, c.wr_id);
		break;
	}
	trace_nums(f, 6, (uint64_t)i, (uint64_t)c.kind, (uint64_t)c.slot,
	    (uint64_t)c.imm, (uint64_t)c.len, c.wr_id);
	trace_error(f, i);
	return (1);
}

/**
 * fab_inject(f, i, kind, buf, len, imm):
 * Hostile input: deliver to side ${i} a SEND of ${len} bytes from ${buf}
 * (kind FAB_CQE_RECV) or a WRITE WITH IMM completion with ${imm} and
 * ${len} (FAB_CQE_RECV_IMM), consuming a posted receive as the hardware
 * would, and feed it to the engine at once.
 */
int
fab_inject(struct fab *f, int i, int kind, const uint8_t *buf,
    uint32_t len, uint32_t imm)
{
	struct fab_side *s = &f->side[i];
	uint32_t slot;
	uint8_t *dst;

	trace_nums(f, 4, (uint64_t)i, (uint64_t)kind, (uint64_t)len,
	    (uint64_t)imm);
	if (take_recv(f, i, 0, &slot))
		return (-1);
	dst = s->recv_buf + (size_t)slot * WIRE_MSG_SIZE;
	if (kind == FAB_CQE_RECV || kind == FAB_CQE_RECV_TAG) {
		if (len > WIRE_MSG_SIZE)
			len = WIRE_MSG_SIZE;
		memcpy(dst, buf, len);
		return (kind == FAB_CQE_RECV ? engine_on_recv(s->e, slot, dst,
		    len) : engine_on_recv_tag(s->e, slot, imm, dst, len));
	}
	return (engine_on_recv_imm(s->e, slot, imm, len));
}

int
fab_inject_write(struct fab *f, int i, uint64_t addr, uint32_t rkey,
    const uint8_t *buf, uint32_t len)
{
	int stale;

	trace_nums(f, 3, (uint64_t)i, (uint64_t)len, (uint64_t)ENGINE_WR_WRITE);
	if (mr_find(&f->side[i], addr, len, rkey, &stale) == NULL)
		return (-1);
	memcpy((uint8_t *)(uintptr_t)addr, buf, len);
	return (0);
}

/**
 * fab_mr_add(f, i, addr, len, rkey) / fab_mr_del(f, i, addr):
 * Register / deregister a region side ${i} exposes to remote writes.
 */
int
fab_mr_add(struct fab *f, int i, uint64_t addr, uint64_t len, uint32_t rkey)
{
	struct fab_side *s = &f->side[i];

	s->mrs = grow(s->mrs, &s->mr_cap, s->nmr, sizeof(*s->mrs));
	s->mrs[s->nmr].addr = addr;
	s->mrs[s->nmr].len = len;
	s->mrs[s->nmr].rkey = rkey;
	s->mrs[s->nmr].stale = 0;
	s->nmr++;
	return (0);
}

int
fab_mr_rereg(struct fab *f, int i, uint64_t addr, uint32_t rkey)
{
	struct fab_side *s = &f->side[i];
	size_t j;

	for (j = 0; j < s->nmr; j++) {
		if (s->mrs[j].addr == addr) {
			s->mrs[j].rkey = rkey;
			s->mrs[j].stale = 0;
			return (0);
		}
	}
	return (-1);
}

void
fab_mr_del(struct fab *f, int i, uint64_t addr)
{
	struct fab_side *s = &f->side[i];
	size_t j;

	for (j = 0; j < s->nmr; j++) {
		if (s->mrs[j].addr == addr) {
			s->mrs[j] = s->mrs[--s->nmr];
			return;
		}
	}
}

/**
 * fab_rings(f, i, txsz, rxsz, rkey, txbuf, rxbuf, tx, rx):
 * Allocate a stream's send and receive rings on side ${i} (zeroed; they
 * abort the program when memory runs out), register the receive ring for
 * remote writes with ${rkey}, and describe both for the engine.
 */
void
fab_rings(struct fab *f, int i, uint32_t txsz, uint32_t rxsz, uint32_t rkey,
    uint8_t **txbuf, uint8_t **rxbuf, struct engine_ring *tx,
    struct engine_ring *rx)
{

	if ((*txbuf = calloc(1, txsz)) == NULL ||
	    (*rxbuf = calloc(1, rxsz)) == NULL)
		abort();
	fab_mr_add(f, i, (uint64_t)(uintptr_t)*rxbuf, rxsz, rkey);
	tx->addr = (uint64_t)(uintptr_t)*txbuf;
	tx->size = txsz;
	tx->key = 1;
	rx->addr = (uint64_t)(uintptr_t)*rxbuf;
	rx->size = rxsz;
	rx->key = rkey;
}

void
fab_set_resume(struct fab *f, int i, const struct engine_resume *r)
{
	struct fab_side *s = &f->side[i];

	s->res = *r;
	s->has_res = 1;
	engine_set_resume(s->e, r);
}

void
fab_set_mem(struct fab *f, int i, const struct engine_mem *mem)
{
	struct fab_side *s = &f->side[i];

	s->mem = *mem;
	s->has_mem = 1;
	engine_set_mem(s->e, mem);
}

/* Everything in flight on lane ${q} of side ${s} is gone, and so is its
 * queue pair: its receives and send queue with it. */
static void
lane_drop(struct fab_side *s, struct fab_lane *q)
{
	size_t j;

	for (j = 0; j < q->wire_n; j++)
		free(q->wire[(q->wire_head + j) % q->wire_cap].inl);
	s->wrs_lost += q->wire_n;
	q->wire_head = q->wire_n = 0;
	q->posted_head = q->posted_n = 0;
	q->outstanding = 0;
	q->completed_upto = 0;
	q->posted_wrs = 0;
}

/* Everything in flight from side ${i} and in its completion queue is gone. */
static void
side_drop(struct fab_side *s)
{

	lane_drop(s, &s->lane0);
	lane_drop(s, &s->lane1);
	s->cqes_lost += s->cq_n;
	s->cq_head = s->cq_n = 0;
}

int
fab_break(struct fab *f, const size_t deliver[2])
{
	size_t j, k;
	int i, rc = 0;

	/* What the wire carried before it broke still lands, unseen. */
	for (i = 0; i < 2; i++) {
		for (k = 0; k < deliver[i] && (f->side[i].wire_n > 0 ||
		    f->side[i].lane1.wire_n > 0) && rc == 0; k++) {
			if (fab_deliver(f, i) < 0)
				rc = -1;
			f->side[i].wrs_landed_unseen++;
		}
	}
	for (i = 0; i < 2; i++) {
		side_drop(&f->side[i]);
		for (j = 0; j < f->side[i].nmr; j++)
			f->side[i].mrs[j].stale = 1;
	}
	return (rc);
}

int
fab_relink(struct fab *f, const size_t deliver[2], struct engine *old[2])
{
	int i, rc;

	rc = fab_break(f, deliver);
	for (i = 0; i < 2; i++) {
		/* Broken, the fabric runs nothing more: the stop is sure,
		 * unless the test says the embedder could not tell. */
		if (!f->side[i].unstopped)
			engine_stopped(f->side[i].e);
		engine_fail(f->side[i].e, ENGINE_ERR_TRANSPORT, "link lost");
		old[i] = f->side[i].e;
		f->side[i].e = NULL;
	}
	if (rc != 0)
		return (-1);
	for (i = 0; i < 2; i++) {
		f->side[i].conf.resume = 1;
		if (side_engine(f, i))
			return (-1);
	}
	return (connect_pair(f));
}

/**
 * fab_busy(f):
 * True while anything is in flight or waiting in a completion queue.
 */
int
fab_busy(const struct fab *f)
{

	return (f->side[0].wire_n || f->side[1].wire_n ||
	    f->side[0].lane1.wire_n || f->side[1].lane1.wire_n ||
	    f->side[0].cq_n || f->side[1].cq_n);
}
