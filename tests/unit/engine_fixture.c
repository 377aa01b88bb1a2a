/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The engine tests' fixture: see engine_fixture.h. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixture.h"

const char *
err_of(const struct engine *e)
{
	const char *why = engine_error(e);

	return (why != NULL ? why : "(still up)");
}

int
failed_with(const struct engine *e, const char *text)
{
	const char *why = engine_error(e);

	if (why != NULL && strstr(why, text) != NULL)
		return (1);
	printf("# expected an error with \"%s\"; the engine says: %s\n", text,
	    err_of(e));
	return (0);
}

struct engine_conf
conf(uint32_t sq, uint32_t rq)
{
	struct engine_conf c;

	memset(&c, 0, sizeof(c));
	c.sq_size = sq;
	c.rq_size = rq;
	c.max_streams = 64;
	c.inline_size = 0;
	return (c);
}

struct engine_conf
rconf(uint32_t sq, uint32_t rq)
{
	struct engine_conf c = conf(sq, rq);

	c.resume = 1;
	return (c);
}

void
rings(struct t *T, int side, struct tstream *s, uint32_t txsz, uint32_t rxsz,
    struct engine_ring *tx, struct engine_ring *rx)
{

	s->txsz = txsz;
	s->rxsz = rxsz;
	fab_rings(&T->f, side, txsz, rxsz, 0x77, &s->tx, &s->rx, tx, rx);
}

void
events_of(struct t *T, int i, struct engine *e)
{
	struct engine_event ev;
	struct engine_ring tx, rx;
	struct tstream *s;

	while (engine_next_event(e, &ev)) {
		if (ev.flags & ENGINE_EV_INCOMING) {
			s = &T->acc[T->nacc++];
			memset(s, 0, sizeof(*s));
			s->id = ev.stream;
			rings(T, i, s, T->acc_ring, T->acc_ring, &tx, &rx);
			engine_accept(e, ev.stream, &tx, &rx, s);
			continue;
		}
		if ((s = ev.user) == NULL)
			continue;
		s->events |= ev.flags;
		if (ev.flags & (ENGINE_EV_REFUSED | ENGINE_EV_RESET))
			s->reason = ev.reason;
	}
}

void
events(struct t *T, int i)
{

	events_of(T, i, T->f.side[i].e);
}

uint64_t
settle(struct t *T)
{
	uint64_t before = T->f.side[0].wrs_posted + T->f.side[1].wrs_posted;
	int i, moved;

	do {
		moved = 0;
		for (i = 0; i < 2; i++) {
			/* Events first: accepting queues work to post. */
			events(T, i);
			fab_pump(&T->f, i);
			events(T, i);
		}
		for (i = 0; i < 2; i++) {
			while (fab_deliver(&T->f, i) > 0)
				moved = 1;
			while (fab_complete(&T->f, i) > 0)
				moved = 1;
		}
	} while (moved);
	return (T->f.side[0].wrs_posted + T->f.side[1].wrs_posted - before);
}

void
land(struct t *T, int i)
{

	while (fab_deliver(&T->f, i) > 0)
		;
	while (fab_complete(&T->f, 1 - i) > 0)
		;
}

void
hop(struct t *T, int i)
{

	fab_pump(&T->f, i);
	land(T, i);
	while (fab_complete(&T->f, i) > 0)
		;
}

int
setup(struct t *T, struct engine_conf a, struct engine_conf b)
{

	return (setup_cap(T, a, b, 0, 0));
}

int
setup_cap(struct t *T, struct engine_conf a, struct engine_conf b,
    unsigned cap_a, unsigned cap_b)
{

	memset(T, 0, sizeof(*T));
	T->acc_ring = 4096;
	return (fab_init_cap(&T->f, &a, &b, cap_a, cap_b));
}

void
tstream_free(struct tstream *s)
{

	free(s->tx);
	free(s->rx);
}

void
teardown(struct t *T)
{
	int k;

	fab_free(&T->f);
	for (k = 0; k < T->nacc; k++)
		tstream_free(&T->acc[k]);
}

void
teardown_n(struct t *T, struct tstream *s, int n)
{
	int k;

	teardown(T);
	for (k = 0; k < n; k++)
		tstream_free(&s[k]);
}

int
open_stream(struct t *T, struct tstream *s, uint32_t txsz, uint32_t rxsz)
{
	struct engine_ring tx, rx;
	int id;

	memset(s, 0, sizeof(*s));
	rings(T, 0, s, txsz, rxsz, &tx, &rx);
	id = engine_open(T->f.side[0].e, "t", &tx, &rx, s);
	if (id >= 0)
		s->id = (uint32_t)id;
	return (id);
}

uint8_t
pat(uint32_t key, uint64_t pos)
{
	uint64_t x = (pos + 1) * 0x9e3779b97f4a7c15ull ^
	    (key + 1) * 0xbf58476d1ce4e5b9ull;

	x ^= x >> 31;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 29;
	return ((uint8_t)x);
}

uint32_t
put(struct engine *e, uint32_t id, uint8_t *ring, uint32_t n, uint32_t key,
    uint64_t *pos)
{
	uint32_t off, k, j, done = 0;
	uint8_t *base;

	while (done < n && (k = engine_tx_space(e, id, &off))) {
		base = ring != NULL ? ring :
		    (uint8_t *)(uintptr_t)engine_tx_base(e, id);
		if (k > n - done)
			k = n - done;
		for (j = 0; j < k; j++)
			base[off + j] = pat(key, *pos + j);
		if (engine_tx_commit(e, id, k) != 0)
			break;
		*pos += k;
		done += k;
	}
	return (done);
}

uint32_t
take(struct engine *e, uint32_t id, uint8_t *ring, uint32_t n, uint32_t key,
    uint64_t *pos, int *bad)
{
	uint32_t off, k, j, done = 0;
	uint8_t *base;

	while (done < n && (k = engine_rx_data(e, id, &off))) {
		base = ring != NULL ? ring :
		    (uint8_t *)(uintptr_t)engine_rx_base(e, id);
		if (k > n - done)
			k = n - done;
		for (j = 0; j < k; j++)
			if (base[off + j] != pat(key, *pos + j))
				*bad = 1;
		memset(base + off, 0xee, k);
		if (engine_rx_consume(e, id, k) != 0)
			break;
		*pos += k;
		done += k;
	}
	return (done);
}

uint32_t
recs(uint8_t *buf, const struct wire_rec *r, int n)
{
	size_t len = 0;
	int i;

	for (i = 0; i < n; i++)
		len += wire_rec_encode(buf + len, WIRE_MSG_SIZE - len, &r[i]);
	return ((uint32_t)len);
}

static void
tauth_prove(void *arg, uint8_t proof[WIRE_AUTH_LEN])
{
	struct tauth *a = arg;

	memset(proof, (uint8_t)(a->key + (a->initiator ? 1 : 2)),
	    WIRE_AUTH_LEN);
	a->proved++;
	a->proved_after_verify = a->verified;
}

static int
tauth_verify(void *arg, const uint8_t proof[WIRE_AUTH_LEN])
{
	struct tauth *a = arg;
	uint8_t want[WIRE_AUTH_LEN];

	memset(want, (uint8_t)(a->key + (a->initiator ? 2 : 1)),
	    WIRE_AUTH_LEN);
	if (memcmp(want, proof, WIRE_AUTH_LEN) != 0) {
		a->failed++;
		return (-1);
	}
	a->verified++;
	return (0);
}

void
auth_pair(struct t *T, struct engine_conf *c, struct tauth *ta,
    struct tauth *tb, uint8_t ka, int kb)
{

	memset(ta, 0, sizeof(*ta));
	memset(tb, 0, sizeof(*tb));
	ta->key = ka;
	ta->initiator = 1;
	tb->key = (uint8_t)kb;
	memset(T, 0, sizeof(*T));
	T->acc_ring = 4096;
	fab_init_auth(&T->f, c, c, &(struct engine_auth){ .initiator = 1,
	    .prove = tauth_prove, .verify = tauth_verify, .arg = ta },
	    kb < 0 ? NULL : &(struct engine_auth){ .prove = tauth_prove,
	    .verify = tauth_verify, .arg = tb });
}

static int
rz_adopt(void *arg, uint32_t id, void *user, struct engine_ring *tx,
    struct engine_ring *rx)
{
	struct rzside *rs = arg;
	struct rz *R = rs->R;
	struct tstream *s = user;
	uint32_t k = R->next_rkey++;

	R->adopts[rs->side]++;
	if (s == NULL || s->id != id || rx->size != s->rxsz ||
	    tx->size != s->txsz ||
	    rx->addr != (uint64_t)(uintptr_t)s->rx)
		R->adopt_bad++;
	/* The receive ring is registered again, for the new link. */
	if (!R->keep_rkey) {
		if (fab_mr_rereg(&R->T.f, rs->side, rx->addr, k) != 0)
			R->adopt_bad++;
		rx->key = k;
	}
	tx->key = 2;
	return (0);
}

static struct engine *
rz_find(void *arg, const uint8_t token[WIRE_NONCE_LEN],
    const uint8_t proof[WIRE_AUTH_LEN], uint8_t answer[WIRE_AUTH_LEN],
    uint16_t *reason)
{
	struct rzside *rs = arg;
	struct rz *R = rs->R;

	R->finds++;
	if (R->deny) {
		*reason = R->deny;
		return (NULL);
	}
	if (memcmp(token, R->token, WIRE_NONCE_LEN) != 0 ||
	    proof[0] != RZ_ASK || R->old[1] == NULL) {
		*reason = WIRE_REASON_NOT_RESUMED;
		return (NULL);
	}
	memset(answer, R->wrong_answer ? RZ_ASK : RZ_ANSWER, WIRE_AUTH_LEN);
	return (R->old[1]);
}

static int
rz_proved(void *arg, const uint8_t proof[WIRE_AUTH_LEN])
{
	struct rzside *rs = arg;

	rs->R->proofs++;
	return (proof[0] == RZ_ANSWER ? 0 : -1);
}

static int
rz_denied(void *arg, uint16_t reason)
{
	struct rzside *rs = arg;

	(void)reason;
	rs->R->denials++;
	return (rs->R->keep_denied);
}

static void
rz_adopted(void *arg, struct engine *old)
{
	struct rzside *rs = arg;

	rs->R->adopted = old;
}

void
rz_hooks(struct rz *R)
{
	struct engine_resume er;
	int i;

	R->next_rkey = 0x900;
	for (i = 0; i < 2; i++) {
		R->rs[i].R = R;
		R->rs[i].side = i;
		er.find = rz_find;
		er.proved = rz_proved;
		er.adopt = rz_adopt;
		er.adopted = rz_adopted;
		er.denied = rz_denied;
		er.arg = &R->rs[i];
		fab_set_resume(&R->T.f, i, &er);
	}
}

void
rz_setup_cap(struct rz *R, struct engine_conf a, struct engine_conf b,
    unsigned cap_a, unsigned cap_b)
{

	memset(R, 0, sizeof(*R));
	(void)setup_cap(&R->T, a, b, cap_a, cap_b);
	rz_hooks(R);
}

void
rz_setup(struct rz *R, struct engine_conf a, struct engine_conf b)
{

	rz_setup_cap(R, a, b, 0, 0);
}

struct engine *
E(struct rz *R, int i)
{

	return (R->T.f.side[i].e);
}

void
rz_loss(struct rz *R, size_t d0, size_t d1)
{
	size_t d[2] = { d0, d1 };
	int i;

	memcpy(R->token, R->T.f.side[1].nonce, WIRE_NONCE_LEN);
	fab_relink(&R->T.f, d, R->old);
	for (i = 0; i < 2; i++)
		events_of(&R->T, i, R->old[i]);
}

int
rz_resume(struct rz *R)
{
	uint8_t proof[WIRE_AUTH_LEN];
	int n;

	memset(proof, RZ_ASK, sizeof(proof));
	n = engine_resume(E(R, 0), R->old[0], R->token, proof);
	engine_abandon(R->old[0], WIRE_REASON_NOT_RESUMED);
	events_of(&R->T, 0, R->old[0]);
	engine_free(R->old[0]);
	R->old[0] = NULL;
	return (n);
}

void
rz_settle(struct rz *R)
{

	settle(&R->T);
	if (R->adopted != NULL && R->adopted == R->old[1]) {
		engine_abandon(R->old[1], WIRE_REASON_NOT_RESUMED);
		events_of(&R->T, 1, R->old[1]);
		engine_free(R->old[1]);
		R->old[1] = NULL;
		settle(&R->T);
	}
}

void
rz_teardown(struct rz *R)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (R->old[i] == NULL)
			continue;
		engine_abandon(R->old[i], WIRE_REASON_LINK_LOST);
		events_of(&R->T, i, R->old[i]);
		engine_free(R->old[i]);
	}
	teardown(&R->T);
}

struct tstream *
rz_kept(struct rz *R, struct tstream *k)
{
	int n = R->T.nacc;

	open_stream(&R->T, k, 4096, 4096);
	engine_keep(E(R, 0), k->id);
	settle(&R->T);
	engine_keep(E(R, 1), R->T.acc[n].id);
	return (&R->T.acc[n]);
}
