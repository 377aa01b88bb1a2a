/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * engine_seal: a sealed link: SENDs and data WRITEs sealed in place as
 * they go, opened as they come (the embedder's AEAD does the work), and
 * a kept stream's plaintext restored once its WRITE is over.  Layer 1:
 * it calls only engine_core.c.
 */
#include <string.h>

#include "engine.h"
#include "engine_int.h"
#include "engine_io.h"
#include "ring.h"
#include "wire.h"

/* Lane 0's control send slot of work request ${wr_id}: a WRITE's tag. */
static uint8_t *
send_slot(const struct engine *e, uint64_t wr_id)
{

	return (e->conf.ctrl_send +
	    (size_t)(wr_id % e->conf.sq_size) * WIRE_MSG_SIZE);
}

/* A WRITE's associated data: its immediate, big-endian. */
static void
imm_ad(uint8_t ad[4], uint32_t imm)
{

	ad[0] = (uint8_t)(imm >> 24);
	ad[1] = (uint8_t)(imm >> 16);
	ad[2] = (uint8_t)(imm >> 8);
	ad[3] = (uint8_t)imm;
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
	(void)o->seal(o->arg, w->lane, buf, w->len, NULL, 0, buf + w->len);
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
	imm_ad(ad, w->imm);
	wi->seal_n = o->seal(o->arg, 0, o->ptr(o->arg, w->local_addr), w->len,
	    ad, sizeof(ad), send_slot(e, w->wr_id + 1));
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
	imm_ad(ad, wi->imm);
	if (o->restore(o->arg, o->ptr(o->arg, wi->addr), wi->bytes, ad,
	    sizeof(ad), wi->seal_n, send_slot(e, wr_id + 1)) != 0)
		s->flags &= (uint16_t)~F_KEEP;
}

/*
 * The link fails (${kind}) with WRITEs outstanding: they are over, so the
 * kept streams about to be suspended get their plaintext back, and the
 * bytes the peer consumed are free (tx_base) as on a link that does not
 * seal.
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
		eng_seal_restore(e, wi, id);
		e->s[wi->stream].tx.done = wi->end;
	}
}

static int
seal_forged(struct engine *e)
{

	return (eng_fail(e, ENGINE_ERR_PROTOCOL, "sealed record failed "
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
 * Open sealed WRITE ${imm} of ${n} bytes, whose tag ${tag} just came,
 * where it landed in stream ${s}'s receive ring, before any of it counts
 * as arrived.
 */
int
eng_seal_open_write(struct engine *e, struct stream *s, uint32_t imm,
    uint32_t n, const uint8_t *tag)
{
	const struct engine_seal *o = &e->seal.ops;
	uint8_t ad[4], *p;

	if (tag == NULL)
		return (0);
	/*
	 * Opening writes where the bytes are (and clears them when the tag
	 * is wrong): never past the ring's end, which no sender's WRITE
	 * crosses.  An unsealed WRITE that did would have failed in the HCA.
	 */
	if (n > ring_contig(s->rx.ring.size, s->rx.tail, n))
		return (eng_violation(e, "sealed WRITE of %u bytes for stream "
		    "%u crosses the end of its ring", (unsigned)n,
		    (unsigned)(s - e->s)));
	p = o->ptr(o->arg, s->rx.ring.addr + ring_off(s->rx.ring.size,
	    s->rx.tail));
	imm_ad(ad, imm);
	if (o->open(o->arg, 0, p, n, ad, sizeof(ad), tag))
		return (seal_forged(e));
	e->st.opened_msgs++;
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
