/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * engine_seal: a sealed link: SENDs and data WRITEs sealed in place as
 * they go, opened as they come (the embedder's AEAD does the work) in
 * memory the fabric cannot write, and a kept stream's plaintext restored
 * once its WRITE is over.  Layer 1: it calls only engine_core.c.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "engine_int.h"
#include "engine_io.h"
#include "ring.h"
#include "wire.h"

/*
 * Where the tag of data WRITE ${wr_id} goes: in lane 0's control send
 * slot of the next work request, its SEND, after the notice on a link
 * without immediates.
 */
static uint8_t *
tag_slot(const struct engine *e, uint64_t wr_id)
{

	return (e->conf.ctrl_send + ENG_NOTICE(e) +
	    (size_t)((wr_id + 1) % e->conf.sq_size) * WIRE_MSG_SIZE);
}

/*
 * Seal SEND ${w} in place, with its lane's keys: its records, then their
 * tag.  (Its slot, on either lane, is where it is posted from.)
 */
void
eng_seal_send(struct engine *e, struct engine_wr *w)
{
	const struct engine_seal *o = &e->seal.ops;
	uint8_t *buf = e->conf.ctrl_send +
	    (size_t)(w->local_addr - e->conf.ctrl_send_addr);

	e->ln[w->lane].wri[ENG_WR_SEQ(w->wr_id) % e->conf.sq_size].sealed = 0;
	if (!e->seal.tx)
		return;
	/*
	 * Its notice stays clear, as an immediate does: one changed makes
	 * the SEND a tag that does not open, or a violation.
	 */
	(void)o->seal(o->arg, w->lane, buf + ENG_NOTICE(e),
	    w->len - ENG_NOTICE(e), NULL, 0, buf + w->len);
	w->len += WIRE_TAG_LEN;
	w->inlined = w->len <= e->conf.inline_size;
	e->st.sealed_msgs++;
}

/*
 * Seal data WRITE ${w} (an ENGINE_WR_WRITE) in place in the send ring.
 * Its tag goes to the control send slot of the next wr_id, the SEND WITH
 * IMMEDIATE that carries it and is due next (eng_take_tag).
 */
void
eng_seal_write(struct engine *e, struct engine_wr *w)
{
	const struct engine_seal *o = &e->seal.ops;
	struct wrinfo *wi = &e->ln[0].wri[w->wr_id % e->conf.sq_size];
	uint8_t ad[4];

	wi->sealed = 0;
	if (!e->seal.tx)
		return;
	eng_put32(ad, w->imm);
	wi->seal_n = o->seal(o->arg, 0, o->ptr(o->arg, w->local_addr), w->len,
	    ad, sizeof(ad), tag_slot(e, w->wr_id));
	wi->sealed = 1;
	wi->imm = w->imm;
	wi->addr = w->local_addr;
	e->seal.tag_due = 1;
	e->seal.tag_imm = w->imm;
	e->st.sealed_msgs++;
}

/*
 * Sealed WRITE ${wi} (work request ${wr_id}) finished: a stream that keeps
 * its bytes for a resume gets their plaintext back, since a resume sends
 * them again under another link's keys.  If that fails (the ring was
 * written under the WRITE), the stream can no longer be resumed.
 */
void
eng_seal_restore(struct engine *e, struct wrinfo *wi, uint64_t wr_id)
{
	const struct engine_seal *o = &e->seal.ops;
	struct stream *s = &e->s[wi->stream];
	uint8_t ad[4];

	if (!wi->sealed)
		return;
	wi->sealed = 0;
	if (!(s->flags & F_KEEP))
		return;
	eng_put32(ad, wi->imm);
	if (o->restore(o->arg, o->ptr(o->arg, wi->addr), wi->bytes, ad,
	    sizeof(ad), wi->seal_n, tag_slot(e, wr_id)) != 0)
		s->flags &= (uint16_t)~F_KEEP;
}

/*
 * The link fails (${kind}) with WRITEs outstanding: once they are stopped
 * they are over, so the kept streams about to be suspended get their
 * plaintext back, and the bytes the peer consumed are free (tx_base) as
 * on a link that does not seal.  Without a confirmed stop (the engine's
 * own failures, or a queue pair that would not stop), a WRITE may still
 * read the ring and would send the plaintext in clear: those streams
 * keep their bytes sealed until engine_stopped, and no resume takes them
 * before (adopt).
 */
void
eng_seal_restore_outstanding(struct engine *e, enum engine_err kind)
{
	struct wrinfo *wi;
	uint64_t id;

	for (id = e->ln[0].seq_done; id < e->ln[0].seq; id++) {
		wi = &e->ln[0].wri[id % e->conf.sq_size];
		if (wi->stream == NIL || !wi->sealed ||
		    !eng_suspendable(&e->s[wi->stream], kind))
			continue;
		if (!e->stopped) {
			e->s[wi->stream].tx.unrestored = 1;
			continue;
		}
		eng_seal_restore(e, wi, id);
		e->s[wi->stream].tx.done = wi->end;
	}
}

/*
 * The failed link's queue pairs stopped after its failure: the WRITEs
 * its suspended streams had outstanding are over now, and those streams
 * get their plaintext back, as eng_seal_restore_outstanding would have
 * given it; one whose restore failed is kept no more, and stays sealed
 * (engine_abandon ends it).
 */
void
eng_seal_restore_stopped(struct engine *e)
{
	struct wrinfo *wi;
	struct stream *s;
	uint64_t id;
	uint32_t k;

	for (id = e->ln[0].seq_done; id < e->ln[0].seq; id++) {
		wi = &e->ln[0].wri[id % e->conf.sq_size];
		if (wi->stream == NIL || !wi->sealed)
			continue;
		s = &e->s[wi->stream];
		if (s->state != S_OPEN || !(s->flags & F_SUSP) ||
		    !s->tx.unrestored)
			continue;
		eng_seal_restore(e, wi, id);
		s->tx.done = wi->end;
	}
	for (k = 0; k < e->used; k++)
		if (e->s[k].flags & F_KEEP)
			e->s[k].tx.unrestored = 0;
}

static int
seal_forged(struct engine *e)
{

	return (eng_fail(e, ENGINE_ERR_FORGED, "sealed record failed "
	    "authentication (tampered or injected)"));
}

/*
 * A sealed SEND on lane ${lane}: open a copy in ${clear} (the receive
 * slot is the embedder's), from which its ${*len} bytes of records are
 * then read.
 */
int
eng_seal_open_send(struct engine *e, unsigned lane, const uint8_t **buf,
    uint32_t *len, uint8_t clear[WIRE_MSG_SIZE])
{

	if (!e->seal.rx)
		return (0);
	if (*len <= WIRE_TAG_LEN)
		return (eng_violation(e, "sealed message of %u bytes holds no "
		    "record", (unsigned)*len));
	*len -= WIRE_TAG_LEN;
	memcpy(clear, *buf, *len);
	if (e->seal.ops.open(e->seal.ops.arg, lane, clear, *len, NULL, 0,
	    *buf + *len))
		return (seal_forged(e));
	e->st.opened_msgs++;
	*buf = clear;
	return (0);
}

/*
 * Copy ${n} bytes of ring ${r} from cursor ${c} on into its private copy
 * ${clear}, at the same offsets.
 */
static void
ring_to_clear(const struct engine_seal *o, const struct engine_ring *r,
    uint8_t *clear, uint64_t c, uint64_t n)
{
	uint32_t off, k;

	for (; n > 0; c += k, n -= k) {
		off = ring_off(r->size, c);
		k = (uint32_t)ring_contig(r->size, c, n);
		memcpy(clear + off, o->ptr(o->arg, r->addr + off), k);
	}
}

/*
 * Stream ${s}'s receive ring's private copy, made when the first sealed
 * bytes come for the ring, with the bytes it holds unread (which came
 * in clear, on the link the stream was resumed from).  NULL when out of
 * memory: the link fails.
 */
static uint8_t *
rx_clear(struct engine *e, struct stream *s)
{
	uint64_t from = s->rx.old.size != 0 ? s->rx.switch_at : s->rx.cons;

	if (s->rx.clear != NULL)
		return (s->rx.clear);
	if ((s->rx.clear = malloc(s->rx.ring.size)) == NULL) {
		(void)eng_fail(e, ENGINE_ERR_LOCAL, "out of memory for the "
		    "private copy of stream %u's receive ring",
		    (unsigned)(s - e->s));
		return (NULL);
	}
	e->st.rx_private += s->rx.ring.size;
	ring_to_clear(&e->seal.ops, &s->rx.ring, s->rx.clear, from,
	    s->rx.tail - from);
	return (s->rx.clear);
}

/*
 * Bytes that came in clear for stream ${s}, whose reader reads its ring:
 * unless earlier ones came sealed (then it reads its private copy, and
 * a sealed stream does not go on in clear).
 */
static int
in_clear(struct engine *e, const struct stream *s)
{

	if (s->rx.clear != NULL || s->rx.old_clear != NULL)
		return (eng_violation(e, "bytes in clear for stream %u, "
		    "whose bytes came sealed", (unsigned)(s - e->s)));
	return (0);
}

/*
 * Open sealed WRITE ${imm} of ${n} bytes, whose tag ${tag} just came,
 * before any of it counts as arrived: not where it landed in stream
 * ${s}'s receive ring, which the fabric can still write (anyone who read
 * a WRITE's clear header has the ring's address and rkey), but in the
 * ring's private copy, where the bytes are copied first and then read.
 */
int
eng_seal_open_write(struct engine *e, struct stream *s, uint32_t imm,
    uint32_t n, const uint8_t *tag)
{
	const struct engine_seal *o = &e->seal.ops;
	uint8_t ad[4], *p;

	if (tag == NULL)
		return (in_clear(e, s));
	/*
	 * No sender's WRITE crosses the ring's end (an unsealed one that
	 * did would have failed in the HCA), so a tag that says it did is
	 * forged before anything is copied.
	 */
	if (n > ring_contig(s->rx.ring.size, s->rx.tail, n))
		return (eng_violation(e, "sealed WRITE of %u bytes for stream "
		    "%u crosses the end of its ring", (unsigned)n,
		    (unsigned)(s - e->s)));
	if ((p = rx_clear(e, s)) == NULL)
		return (-1);
	ring_to_clear(o, &s->rx.ring, p, s->rx.tail, n);
	p += ring_off(s->rx.ring.size, s->rx.tail);
	eng_put32(ad, imm);
	if (o->open(o->arg, 0, p, n, ad, sizeof(ad), tag))
		return (seal_forged(e));
	e->st.opened_msgs++;
	return (0);
}

/*
 * DATA's bytes, opened with their SEND: on a sealed link into the ring's
 * private copy (the ring itself the fabric can write), else into the
 * ring, where a WRITE of them would have put them.
 */
int
eng_seal_put(struct engine *e, struct stream *s, const uint8_t *data,
    uint32_t n)
{
	const struct engine_ring *r = &s->rx.ring;
	uint32_t off = ring_off(r->size, s->rx.tail);
	uint32_t first = (uint32_t)ring_contig(r->size, s->rx.tail, n);
	uint8_t *clear;

	if (!e->seal.rx) {
		if (in_clear(e, s))
			return (-1);
		memcpy(e->conf.ring_ptr(e->conf.ring_arg, r->addr + off),
		    data, first);
		if (first < n)
			memcpy(e->conf.ring_ptr(e->conf.ring_arg, r->addr),
			    data + first, n - first);
		return (0);
	}
	if ((clear = rx_clear(e, s)) == NULL)
		return (-1);
	memcpy(clear + off, data, first);
	memcpy(clear, data + first, n - first);
	return (0);
}

void
engine_set_seal(struct engine *e, const struct engine_seal *seal)
{

	e->seal.on = 1;
	e->seal.ops = *seal;
}

void
engine_seal_tx(struct engine *e)
{

	e->seal.tx = e->seal.on;
}

void
engine_seal_rx(struct engine *e)
{

	e->seal.rx = e->seal.on;
}

int
engine_sealed(const struct engine *e)
{

	return (e->seal.tx && e->seal.rx);
}
