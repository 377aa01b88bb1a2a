/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The rstream engine: one link, many streams, sans-I/O.  The protocol it
 * implements is specified in rstreamd-protocol(7); the comments here say
 * why the code is shaped the way it is.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "engine_io.h"
#include "engine_stream.h"
#include "idq.h"
#include "ring.h"
#include "wire.h"

/* A number's spelling, for messages that name a limit. */
#define STR_(x)	#x
#define STR(x)	STR_(x)

/* Stream slot states, and the names engine_stream_flags_str gives them. */
enum {
	S_FREE = 0,
	S_OPENING,	/* we sent OPEN, waiting for OPEN_OK or REFUSE */
	S_INCOMING,	/* peer sent OPEN, application has not decided */
	S_OPEN,		/* rings known on both sides */
	S_DEAD		/* finished; slot freed when RELEASED is delivered */
};
static const char *const state_names[] = {
	[S_FREE] = "FREE", [S_OPENING] = "OPENING",
	[S_INCOMING] = "INCOMING", [S_OPEN] = "OPEN", [S_DEAD] = "DEAD"
};
_Static_assert(sizeof(state_names) / sizeof(state_names[0]) == S_DEAD + 1,
    "every stream state has a name");

/*
 * Stream flags.  A flag exists only as a line of this list, which gives
 * it its bit (its place) and the name engine_stream_flags_str prints, so
 * none goes unnamed.
 */
#define STREAM_FLAGS(X)							\
	X(APP_SHUT)	/* application shut its sending side */		\
	X(SHUT_SENT)	/* SHUTDOWN encoded */				\
	X(PEER_SHUT)	/* SHUTDOWN received */				\
	X(EOF_DONE)	/* EOF event queued */				\
	X(TERM_SENT)	/* CLOSE or RESET encoded */			\
	X(TERM_RECV)	/* CLOSE or RESET received */			\
	X(APP_CLOSED)	/* application closed: only RELEASED now */	\
	X(RESET)	/* stream aborted (either side) */		\
	X(ABORT)	/* closed while OPENING: reset once open */	\
	X(WANT_WR)	/* application saw a full send ring */		\
	X(PEER_MAPPED)	/* peer id bit set in peer_ids */		\
	X(HAS_RINGS)	/* application gave rings (needs RELEASED) */	\
	X(KEEP_WANT)	/* engine_keep: keep bytes, suspend if it can */ \
	X(KEEP)		/* bytes kept until consumed: resumable */	\
	X(SUSP)		/* suspended in a failed engine */		\
	X(RESUMING)	/* adopted; the resume exchange is under way */

#define F_BIT_(name)	FB_##name,
enum { STREAM_FLAGS(F_BIT_) F_COUNT };
#define F_MASK_(name)	F_##name = 1 << FB_##name,
enum { STREAM_FLAGS(F_MASK_) };
#define F_NAME_(name)	#name,
static const char *const flag_names[] = { STREAM_FLAGS(F_NAME_) };
/* The longest engine_stream_flags_str: "INCOMING", then every flag. */
#define F_LEN_(name)	+ sizeof(#name)
_Static_assert(sizeof("INCOMING") STREAM_FLAGS(F_LEN_) <=
    ENGINE_FLAGS_STR_LEN, "engine_stream_flags_str has room for them all");

/* Pending control records for a stream, in the order they are encoded. */
#define C_OPEN		0x01
#define C_OPEN_OK	0x02
#define C_CREDIT	0x04
#define C_SHUTDOWN	0x08
#define C_RESET	0x10
#define C_CLOSE	0x20
#define C_RESUME	0x40	/* our RESUME_STREAM (request or answer) */
#define C_ORIGIN	0x80	/* an ORIGIN goes before the OPEN */

#define NIL	UINT32_MAX

/* CREDIT cursors a stream remembers for its growth signal (rx_grow). */
#define REPS		8

/* Pending ring resize records for a stream (version 4). */
#define RS_RING		0x01	/* our RING: the receive ring rx.next */
#define RS_RING_AT	0x02	/* our RING_AT: we write to tx.peer_next */

/* The queues a stream can wait in: control records, data, events. */
enum { Q_CTRL, Q_TX, Q_EV, Q_N };

/*
 * A stream's send direction.  Cursors count bytes since it opened: the
 * application put them in the ring (app), we wrote them (sent), their
 * WRITEs completed (done), the peer consumed them (peer).  Resizing
 * (version 4; sizes 0 mean none): the ring before the last resize keeps
 * the bytes below switch_at until their WRITEs completed; the peer's
 * announced ring is used once our RING_AT is encoded.
 */
struct tx_dir {
	struct engine_ring ring, old;
	struct wire_ring peer_ring;	/* where our WRITEs land */
	struct wire_ring peer_next;	/* the peer's announced ring */
	uint64_t app, sent, done, peer;
	uint64_t sig;		/* end of our last signalled WRITE */
	uint32_t wr_out;	/* WRITEs outstanding that read the ring */
	uint64_t switch_at;
	uint32_t min, max;	/* 0: fixed */
	uint64_t mark;		/* the cursor at the last resize */
	uint64_t seen;		/* the cursor at the last engine_trim */
};

/*
 * A stream's receive direction: bytes arrived (tail), the application
 * took them (cons), we reported them to the peer (rep), the peer's last
 * (final).  Resizing: our announced ring (next), and the one before the
 * switch (old), which holds the bytes below switch_at until the
 * application read them.
 */
struct rx_dir {
	struct engine_ring ring, old, next;
	uint64_t tail, cons, rep, final;
	uint64_t switch_at;
	uint32_t min, max;	/* 0: fixed */
	uint64_t mark;		/* the cursor at the last resize */
	uint64_t reps[REPS];	/* the last CREDIT cursors sent (0 at first) */
	uint8_t rep_n;
	uint64_t seen;		/* the cursor at the last engine_trim */
};

struct stream {
	uint8_t state;
	uint8_t ctrl;		/* C_* pending */
	uint8_t in[Q_N];	/* queued in q[i] */
	uint16_t flags;
	uint16_t reason;	/* RESET/REFUSE reason to send */
	uint16_t ev_reason;	/* reason to report with REFUSED/RESET */
	uint32_t ev;		/* ENGINE_EV_* pending */
	uint32_t peer_id;
	uint32_t next[Q_N];	/* successor in q[i] */
	uint32_t next_free;
	void *user;
	struct tx_dir tx;
	struct rx_dir rx;
	char name[WIRE_NAME_MAX + 1];
	/* Opener: the ORIGIN to send; acceptor: the one that came (or none). */
	struct wire_origin origin;
	uint8_t rs;		/* RS_* pending (resizing) */
	uint8_t ring_ticks;	/* engine_tick calls since our RING went out */
	/* Scheduling: bytes left of this round's quantum, weight; waits. */
	uint32_t deficit;
	uint8_t backlogged;	/* used a whole quantum since it last had
				   nothing to send (tx_queue) */
	uint8_t weight;		/* 0 reads as 1 */
	uint8_t wait;		/* W_* it is in since wait_at */
	uint64_t wait_at, wait_credit, wait_sq;
};

_Static_assert(F_COUNT <= 8 * sizeof(((struct stream *)0)->flags),
    "struct stream's flags has a bit for every flag");

/* A FIFO of stream ids threaded through one of the next_* fields. */
struct queue {
	uint32_t head, tail;
};

/* What a stream with bytes to send is waiting for (wait_update). */
enum { W_NONE, W_CREDIT, W_SQ };

/* What an outstanding send WR was, to release ring space on completion. */
struct wrinfo {
	uint32_t stream;	/* NIL for SENDs */
	uint32_t bytes;		/* data bytes (0 for SENDs) */
	uint64_t end;		/* tx cursor after this WRITE */
	uint8_t signaled;
	struct window_mark mark;	/* if signaled */
	/* A sealed WRITE: what seal_restore needs (its tag is in the slot). */
	uint8_t sealed;
	uint32_t imm;
	uint64_t addr;		/* its bytes in the send ring */
	uint64_t seal_n;	/* its message number */
};

struct engine {
	struct engine_conf conf;
	int up;
	int failed;
	int fail_due;	/* failed, but not yet finished (fail_finish) */
	enum engine_err err_kind;
	char err[200];

	struct stream *s;
	uint32_t free_head;
	/*
	 * Slots ever handed out are below ${used}; those above have never
	 * been touched, so a link sized for 16384 streams that carries ten
	 * costs the memory of ten (calloc's pages stay unmapped).
	 */
	uint32_t used;

	struct queue q[Q_N];

	/* Message credits: receives the peer posted / SENDs+WRITEs we did. */
	uint64_t peer_posted, msgs_sent;
	uint32_t peer_rq;
	/* Our receives: handed out for posting, reported, completed. */
	uint64_t recv_posted, recv_reported, recv_done;
	struct idq repost;	/* slots to post, rq_size entries */
	uint32_t msg_credit_threshold;

	/* Send queue: next sequence number, oldest not yet completed. */
	uint64_t seq, seq_done, last_signaled;
	struct wrinfo *wri;	/* sq_size entries, by seq % sq_size */
	uint32_t signal_every;
	struct window win;	/* data bytes outstanding, and their bound */
	uint64_t busy_mark;	/* bytes_tx at the last engine_data_busy */

	/* Refusals to send: (peer id << 16 | reason), and ids in use. */
	struct idq refusals;	/* WIRE_STREAMS_MAX entries */
	uint8_t *peer_ids;	/* bitmap of the peer's ids mapped to ours */

	/* Authentication: asked for, our proof to send, peer's checked. */
	int auth;
	struct engine_auth a;
	int auth_send;
	int peer_ok;
	/* The identity handshake (both hellos said IDENTITY): our next
	 * message, and the responder's silence between its message 2 and
	 * the initiator's message 3 (see send_hs). */
	struct {
		int on;
		uint8_t out[WIRE_HS_MAX];
		size_t out_len;
		int hold;
		int seal_after;	/* seal from the SEND after this one */
	} hs;

	/* The hello's version: at most ver_cap; what this side said; what
	 * the link speaks once connected (the older hello's). */
	uint8_t ver_cap, ver_said, ver_link;
	/* ORIGIN records (version 3): both hellos said 3. */
	int can_origin;
	/* Ring resizes (version 4, no resume): both said 4; memory for it. */
	int can_resize;
	struct engine_mem mem;

	/* Resume (version 2): both sides can; what this link did of it. */
	int can_resume;
	struct engine_resume r;
	int opened_any;		/* the peer opened a stream on this link */
	/* Version 5: the responder proves the secret too (RESUME_PROOF). */
	int can_res_proof;
	struct {
		int hdr;	/* client: RESUME header to send */
		int sent;	/* client: this link offered a resume */
		int denied;	/* client: the peer refused it */
		int proven;	/* client: the peer proved the secret (or,
				   below version 5, need not) */
		int naming;	/* client: RESUME_STREAMs from stream name
				   on go out before any OPEN */
		uint32_t name;
		uint32_t wait;	/* client: answers still expected */
		int seen;	/* server: the peer offered a resume */
		int refused;	/* server: ... and we refused it */
		int deny;	/* server: RESUME_DENIED to send */
		uint16_t reason;
		uint32_t left;	/* server: RESUME_STREAMs still to come */
		int prove;	/* server: our RESUME_PROOF to send */
		int proof_sent;	/* server: ... and it went */
		uint8_t token[WIRE_NONCE_LEN];
		uint8_t proof[WIRE_AUTH_LEN];	/* ours: RESUME or
						   RESUME_PROOF */
		uint16_t count;	/* RESUME_STREAMs of the RESUME */
		struct idq gone;	/* server: GONE answers, (peer id << 16
					   | id) */
	} res;

	/* Sealing: the embedder's AEAD; sealing what goes, opening what
	 * comes. */
	struct {
		int on;
		struct engine_seal ops;
		int tx, rx;
		int tag_due;	/* the last WRITE's tag goes next */
		uint32_t tag_imm;	/* ... with this immediate */
	} seal;

	/* Control records that are not a stream's. */
	struct {
		int keepalive;	/* a KEEPALIVE to send */
		int goaway;	/* a GOAWAY to send, with goaway_reason */
		uint16_t goaway_reason;
		int goaway_sent;
		int peer_goaway;	/* the peer sent its GOAWAY */
	} ctl;

	struct engine_stats st;
};

static int fail(struct engine *, enum engine_err, const char *, ...)
    __attribute__((format(printf, 3, 4)));
static int violation(struct engine *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
static void event(struct engine *, uint32_t, uint32_t);
static int suspendable(const struct stream *, enum engine_err);
static int rec_resume(struct engine *, const struct wire_rec *);
static int rec_resume_stream(struct engine *, const struct wire_rec *);
static int rec_resume_denied(struct engine *, const struct wire_rec *);
static int rec_resume_proof(struct engine *, const struct wire_rec *);

/* ---------------------------------------------------------------- sealing */

/* Control send slot of work request ${wr_id}: a SEND's, or a WRITE's tag. */
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

/* Seal SEND ${w} in place: its records, then their tag. */
static void
seal_send(struct engine *e, struct engine_wr *w)
{
	const struct engine_seal *o = &e->seal.ops;
	uint8_t *buf = send_slot(e, w->wr_id);

	e->wri[w->wr_id % e->conf.sq_size].sealed = 0;
	if (!e->seal.tx)
		return;
	(void)o->seal(o->arg, buf, w->len, NULL, 0, buf + w->len);
	w->len += WIRE_TAG_LEN;
	w->inlined = w->len <= e->conf.inline_size;
	e->st.sealed_msgs++;
}

/*
 * Seal data WRITE ${w} (an ENGINE_WR_WRITE) in place in the send ring.
 * Its tag goes to the control send slot of the next wr_id, the SEND WITH
 * IMMEDIATE that carries it and is due next (take_tag).
 */
static void
seal_write(struct engine *e, struct engine_wr *w)
{
	const struct engine_seal *o = &e->seal.ops;
	struct wrinfo *wi = &e->wri[w->wr_id % e->conf.sq_size];
	uint8_t ad[4];

	wi->sealed = 0;
	if (!e->seal.tx)
		return;
	imm_ad(ad, w->imm);
	wi->seal_n = o->seal(o->arg, o->ptr(o->arg, w->local_addr), w->len,
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
static void
seal_restore(struct engine *e, struct wrinfo *wi, uint64_t wr_id)
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
static void
seal_restore_outstanding(struct engine *e, enum engine_err kind)
{
	struct wrinfo *wi;
	uint64_t id;

	for (id = e->seq_done; id < e->seq; id++) {
		wi = &e->wri[id % e->conf.sq_size];
		if (wi->stream == NIL || !wi->sealed ||
		    !suspendable(&e->s[wi->stream], kind))
			continue;
		seal_restore(e, wi, id);
		e->s[wi->stream].tx.done = wi->end;
	}
}

static int
seal_forged(struct engine *e)
{

	return (fail(e, ENGINE_ERR_PROTOCOL, "sealed record failed "
	    "authentication (tampered or injected)"));
}

/*
 * A sealed SEND: open a copy in ${clear} (the receive slot is the
 * embedder's), from which its ${*len} bytes of records are then read.
 */
static int
seal_open_send(struct engine *e, const uint8_t **buf, uint32_t *len,
    uint8_t clear[WIRE_MSG_SIZE])
{

	if (!e->seal.rx)
		return (0);
	if (*len <= WIRE_TAG_LEN)
		return (violation(e, "sealed message of %u bytes holds no "
		    "record", (unsigned)*len));
	*len -= WIRE_TAG_LEN;
	memcpy(clear, *buf, *len);
	if (e->seal.ops.open(e->seal.ops.arg, clear, *len, NULL, 0,
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
static int
seal_open_write(struct engine *e, struct stream *s, uint32_t imm,
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
		return (violation(e, "sealed WRITE of %u bytes for stream %u "
		    "crosses the end of its ring", (unsigned)n,
		    (unsigned)(s - e->s)));
	p = o->ptr(o->arg, s->rx.ring.addr + ring_off(s->rx.ring.size,
	    s->rx.tail));
	imm_ad(ad, imm);
	if (o->open(o->arg, p, n, ad, sizeof(ad), tag))
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

/* ---------------------------------------------------------------- queues */

static void
qpush(struct engine *e, int which, uint32_t id)
{
	struct queue *q = &e->q[which];
	struct stream *s = &e->s[id];

	if (s->in[which])
		return;
	s->in[which] = 1;
	s->next[which] = NIL;
	if (q->tail == NIL)
		q->head = id;
	else
		e->s[q->tail].next[which] = id;
	q->tail = id;
}

/* Queue ${id} first in q[which], ahead of every stream waiting there. */
static void
qpush_head(struct engine *e, int which, uint32_t id)
{
	struct queue *q = &e->q[which];
	struct stream *s = &e->s[id];

	if (s->in[which])
		return;
	s->in[which] = 1;
	s->next[which] = q->head;
	q->head = id;
	if (q->tail == NIL)
		q->tail = id;
}

static uint32_t
qpop(struct engine *e, int which)
{
	struct queue *q = &e->q[which];
	uint32_t id = q->head;
	struct stream *s;

	if (id == NIL)
		return (NIL);
	s = &e->s[id];
	q->head = s->next[which];
	if (q->head == NIL)
		q->tail = NIL;
	s->in[which] = 0;
	return (id);
}

/* ---------------------------------------------------------------- helpers */

/*
 * The link failed: record why and of which ${kind}, once.  fail() only
 * records; the public entry points finish a failure (fail_finish) before
 * they return to the embedder, so this layer never calls up into sealing
 * and resume.  Its callers return at once, changing nothing more.
 */
static int
fail(struct engine *e, enum engine_err kind, const char *fmt, ...)
{
	va_list ap;

	if (e->failed)
		return (-1);
	va_start(ap, fmt);
	vsnprintf(e->err, sizeof(e->err), fmt, ap);
	va_end(ap);
	e->failed = 1;
	e->fail_due = 1;
	e->err_kind = kind;
	e->up = 0;
	return (-1);
}

/* The peer broke the protocol: fail with "protocol violation: " and why. */
static int
violation(struct engine *e, const char *fmt, ...)
{
	char why[sizeof(e->err)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return (fail(e, ENGINE_ERR_PROTOCOL, "protocol violation: %s", why));
}

static void
event(struct engine *e, uint32_t id, uint32_t ev)
{
	struct stream *s = &e->s[id];

	if ((s->flags & F_APP_CLOSED) && ev != ENGINE_EV_RELEASED)
		return;
	s->ev |= ev;
	qpush(e, Q_EV, id);
}

static void
ctrl(struct engine *e, uint32_t id, uint8_t c)
{

	e->s[id].ctrl |= c;
	qpush(e, Q_CTRL, id);
}

static void
peer_bit(struct engine *e, uint32_t peer_id, int set)
{
	uint8_t m = (uint8_t)(1u << (peer_id & 7));

	if (set)
		e->peer_ids[peer_id >> 3] |= m;
	else
		e->peer_ids[peer_id >> 3] &= (uint8_t)~m;
}

static int
peer_bit_isset(const struct engine *e, uint32_t peer_id)
{

	return ((e->peer_ids[peer_id >> 3] >> (peer_id & 7)) & 1);
}

static uint32_t
slot_alloc(struct engine *e)
{
	uint32_t id = e->free_head;
	struct stream *s;

	if (id != NIL)
		e->free_head = e->s[id].next_free;
	else if (e->used < e->conf.max_streams)
		id = e->used++;
	else
		return (NIL);
	s = &e->s[id];
	/* qpush sets the next[] links; in[] is zero: in no queue. */
	memset(s, 0, sizeof(*s));
	s->next_free = NIL;
	e->st.streams_active++;
	return (id);
}

/*
 * A slot left a queue: if it is free and no queue holds it any more, it
 * may be reused.  (Queues skip free slots; the in[] flags keep a slot from
 * being queued twice, so it must not be handed out while still queued.)
 */
static void
queue_drop(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	if (s->state == S_FREE && !s->in[Q_CTRL] && !s->in[Q_TX] &&
	    !s->in[Q_EV]) {
		s->next_free = e->free_head;
		e->free_head = id;
	}
}

/* Free a slot; it returns to the free list once it is in no queue. */
static void
slot_free(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	if (s->flags & F_PEER_MAPPED)
		peer_bit(e, s->peer_id, 0);
	s->state = S_FREE;
	s->flags = 0;
	s->ctrl = 0;
	e->st.streams_active--;
	queue_drop(e, id);
}

/*
 * Release the slot when both sides have said their last word and no WRITE
 * still reads from our send ring.  The peer id stops being ours as soon as
 * both terminal records are exchanged: the peer may reuse it from then on.
 */
static void
maybe_release(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	if (!(s->flags & F_TERM_SENT) || !(s->flags & F_TERM_RECV))
		return;
	if (s->flags & F_PEER_MAPPED) {
		peer_bit(e, s->peer_id, 0);
		s->flags &= (uint16_t)~F_PEER_MAPPED;
	}
	if (s->tx.wr_out != 0 || s->state == S_DEAD)
		return;
	s->state = S_DEAD;
	s->ctrl = 0;
	s->ev |= ENGINE_EV_RELEASED;
	qpush(e, Q_EV, id);
}

/*
 * Stream ${id}'s slot while it is in use: live, or released but not yet
 * closed by the application (S_DEAD); else NULL.
 */
static struct stream *
held(const struct engine *e, uint32_t id)
{

	if (id >= e->conf.max_streams || e->s[id].state == S_FREE)
		return (NULL);
	return (&e->s[id]);
}

/* A live stream by our id (in use and not released), or NULL. */
static struct stream *
live(const struct engine *e, uint32_t id)
{
	struct stream *s = held(e, id);

	return (s != NULL && s->state != S_DEAD ? s : NULL);
}

/*
 * Can the stream put data on the wire now?  Not before a RING_AT or a
 * resume answer it owes: those say where and from which byte it writes.
 */
static int
tx_ready(const struct stream *s)
{

	return (s->state == S_OPEN &&
	    !(s->flags & (F_TERM_SENT | F_RESET | F_SUSP | F_RESUMING)) &&
	    !(s->rs & RS_RING_AT) && !(s->ctrl & C_RESUME) &&
	    s->tx.app > s->tx.sent &&
	    s->tx.sent - s->tx.peer < s->tx.peer_ring.size);
}

/*
 * A stream with bytes to send waits for the peer's ring credit, or for
 * its turn on the send queue (ready: in Q_TX), or for neither (a RING_AT
 * or resume it owes, or nothing to send).  The time is charged to the
 * wait it was in, up to now, each time this is asked again.
 */
static void
wait_update(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];
	uint64_t now = e->win.now, d;
	uint8_t w = W_NONE;

	if (s->state == S_OPEN && s->tx.app > s->tx.sent &&
	    !(s->flags & (F_RESET | F_TERM_SENT | F_SUSP)))
		w = s->tx.sent - s->tx.peer >= s->tx.peer_ring.size ? W_CREDIT :
		    tx_ready(s) ? W_SQ : W_NONE;
	if (s->wait != W_NONE && now > s->wait_at) {
		d = now - s->wait_at;
		if (s->wait == W_CREDIT) {
			s->wait_credit += d;
			e->st.wait_credit_ns += d;
		} else {
			s->wait_sq += d;
			e->st.wait_sq_ns += d;
		}
	}
	s->wait = w;
	s->wait_at = now;
}

/*
 * A stream became ready to send: into the scheduler's queue (take_data).
 * A stream that last left it with nothing to send (a request, a reply,
 * a new stream: sparse) goes first, as fq_codel serves new flows first,
 * so 64 bytes do not wait for a turn of every bulk stream; it gets one
 * quantum there like any other, and once it has used a whole quantum it
 * counts as backlogged and queues at the tail from then on.
 */
static void
tx_queue(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	if (!tx_ready(s))
		return;
	if (s->backlogged)
		qpush(e, Q_TX, id);
	else
		qpush_head(e, Q_TX, id);
}

/*
 * Where the send ring's free space starts: a kept stream frees bytes when
 * the peer consumed them (so all it has not can be written again on a new
 * link), the others when their WRITE completed.  A kept stream of a
 * sealed link waits for both: until its WRITE finished, seal_restore has
 * yet to turn the bytes back into plaintext, in place.
 */
static uint64_t
tx_base(const struct engine *e, const struct stream *s)
{
	uint64_t b = !(s->flags & F_KEEP) ? s->tx.done :
	    e->seal.tx && s->tx.done < s->tx.peer ? s->tx.done : s->tx.peer;

	/* After a resize, the new ring holds the bytes from the switch on. */
	if (s->tx.old.size != 0 && b < s->tx.switch_at)
		b = s->tx.switch_at;
	return (b);
}

/*
 * Keep a stream's bytes if it asked to and the link can resume, and if
 * the peer's credit returns often enough: the receiver returns credit
 * for every quarter of its ring consumed, so a kept send ring smaller
 * than that would wait for credit for ever.  Decided before the first
 * WRITE, when both ring sizes are known (until then both bases are 0).
 */
static void
keep_decide(const struct engine *e, struct stream *s)
{

	if ((s->flags & F_KEEP_WANT) && e->can_resume && s->tx.sent == 0 &&
	    (uint64_t)s->tx.ring.size * 4 >= s->tx.peer_ring.size)
		s->flags |= F_KEEP;
}

/* Queue SHUTDOWN once every committed byte has been written. */
static void
check_shutdown(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	if (s->state == S_OPEN && (s->flags & F_APP_SHUT) &&
	    !(s->flags & (F_SHUT_SENT | F_TERM_SENT | F_RESET)) &&
	    s->tx.sent == s->tx.app)
		ctrl(e, id, C_SHUTDOWN);
}

/* Queue EOF once the peer shut down and every byte was consumed. */
static void
check_eof(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	if ((s->flags & F_PEER_SHUT) && !(s->flags & F_EOF_DONE) &&
	    !(s->flags & F_RESET) && s->rx.cons == s->rx.final) {
		s->flags |= F_EOF_DONE;
		event(e, id, ENGINE_EV_EOF);
	}
}

/* ---------------------------------------------------------------- resize */

/* May stream ${s}'s rings change size now? */
static int
resizable(const struct engine *e, const struct stream *s)
{

	return (e->can_resize && !e->failed && e->mem.alloc != NULL &&
	    s->state == S_OPEN &&
	    !(s->flags & (F_RESET | F_TERM_SENT | F_TERM_RECV | F_APP_CLOSED)));
}

/* The engine is done with ring ${r}: hand it back. */
static void
ring_drop(struct engine *e, const struct stream *s, struct engine_ring *r)
{

	if (r->size != 0 && e->mem.free != NULL)
		e->mem.free(e->mem.arg, s->user, r);
	memset(r, 0, sizeof(*r));
}

/* New ring memory for stream ${s} to replace ${cur}; -1 if refused. */
static int
ring_get(struct engine *e, struct stream *s, int rx, uint32_t size,
    const struct engine_ring *cur, struct engine_ring *r)
{

	memset(r, 0, sizeof(*r));
	if (e->mem.alloc(e->mem.arg, s->user, rx, size, cur->size, r) != 0) {
		e->st.ring_refused++;
		return (-1);
	}
	if (size > cur->size)
		e->st.ring_grows++;
	else
		e->st.ring_shrinks++;
	return (0);
}

/*
 * A send ring of ${size} bytes from now on: bytes committed from here go
 * into it, and the old ring keeps the rest until their WRITEs completed.
 */
static int
tx_resize(struct engine *e, uint32_t id, uint32_t size)
{
	struct stream *s = &e->s[id];
	struct engine_ring r;

	s->tx.mark = s->tx.app;
	if (ring_get(e, s, 0, size, &s->tx.ring, &r) != 0)
		return (-1);
	if (s->tx.done == s->tx.app && s->tx.wr_out == 0) {
		ring_drop(e, s, &s->tx.ring);
	} else {
		s->tx.old = s->tx.ring;
		s->tx.switch_at = s->tx.app;
	}
	s->tx.ring = r;
	return (0);
}

/* Announce a receive ring of ${size} bytes; the peer's RING_AT switches. */
static int
rx_resize(struct engine *e, uint32_t id, uint32_t size)
{
	struct stream *s = &e->s[id];

	s->rx.mark = s->rx.tail;
	if (ring_get(e, s, 1, size, &s->rx.ring, &s->rx.next) != 0)
		return (-1);
	s->rs |= RS_RING;
	qpush(e, Q_CTRL, id);
	return (0);
}

/*
 * The peer used all the credit it had, and twice the ring's size arrived
 * since the last resize: the ring held it back, so double it.  A sender
 * with more to send writes up to exactly the credit it holds plus the
 * ring's size, and the credit it holds is one of the last REPS we sent
 * (each moves a quarter of the ring or more, so at most 4 follow the one
 * it holds), so arriving bytes that end exactly there mean it had to
 * stop.
 */
static void
rx_grow(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];
	int k, edge = 0;

	if (s->rx.ring.size >= s->rx.max || !resizable(e, s) ||
	    s->rx.next.size != 0 || s->rx.old.size != 0 ||
	    (s->flags & F_PEER_SHUT) ||
	    s->rx.tail - s->rx.mark < 2 * (uint64_t)s->rx.ring.size)
		return;
	for (k = 0; k < REPS; k++)
		edge |= s->rx.tail == s->rx.reps[k] + s->rx.ring.size;
	if (edge)
		rx_resize(e, id, s->rx.ring.size * 2);
}

/*
 * The application found the send ring full, twice its size since the
 * last resize, while the peer's ring had room: double it.
 */
static void
tx_grow(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	if (s->tx.ring.size >= s->tx.max || !resizable(e, s) ||
	    s->tx.old.size != 0 || (s->flags & F_APP_SHUT) ||
	    s->tx.sent - s->tx.peer >= s->tx.peer_ring.size ||
	    s->tx.app - s->tx.mark < 2 * (uint64_t)s->tx.ring.size)
		return;
	tx_resize(e, id, s->tx.ring.size * 2);
}

/* The peer writes into our announced ring from now on. */
static void
rx_switch(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	if (s->rx.cons == s->rx.tail) {
		ring_drop(e, s, &s->rx.ring);
	} else {
		s->rx.old = s->rx.ring;
		s->rx.switch_at = s->rx.tail;
	}
	s->rx.ring = s->rx.next;
	memset(&s->rx.next, 0, sizeof(s->rx.next));
	/* A smaller ring may be owed credit no later read would send. */
	if (!(s->flags & (F_PEER_SHUT | F_TERM_SENT | F_RESET)) &&
	    s->rx.cons - s->rx.rep >= s->rx.ring.size / 4)
		ctrl(e, id, C_CREDIT);
}

/* The ring the application reads now, and the cursor it ends at. */
static const struct engine_ring *
rx_read_ring(const struct stream *s, uint64_t *end)
{

	if (s->rx.old.size != 0) {
		*end = s->rx.switch_at;
		return (&s->rx.old);
	}
	*end = s->rx.tail;
	return (&s->rx.ring);
}

/* ---------------------------------------------------------------- resume */

/*
 * The resuming streams (open, kept from a failed link, not yet resumed
 * or given up), each once, lowest id first: the body may release the one
 * it is given.
 */
static int
resuming_from(const struct engine *e, uint32_t *id)
{

	for (; *id < e->used; (*id)++)
		if (e->s[*id].state == S_OPEN && (e->s[*id].flags & F_RESUMING))
			return (1);
	return (0);
}

#define RESUMING_EACH(e, id)						\
	for ((id) = 0; resuming_from((e), &(id)); (id)++)

/*
 * A failed link's stream waits for a resume if it keeps its bytes, is
 * open and not being reset, has not exchanged both terminal records, and
 * the transport (or the embedder) ended the link; a peer that broke the
 * protocol or failed authentication gets no second chance.
 */
static int
suspendable(const struct stream *s, enum engine_err kind)
{

	return ((kind == ENGINE_ERR_TRANSPORT || kind == ENGINE_ERR_LOCAL) &&
	    (s->flags & F_KEEP) && s->state == S_OPEN &&
	    !(s->flags & F_RESET) &&
	    (s->flags & (F_TERM_SENT | F_TERM_RECV)) !=
	    (F_TERM_SENT | F_TERM_RECV));
}

static void
suspend(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	s->flags &= (uint16_t)~F_RESUMING;
	s->flags |= F_SUSP;
	/* The queue pair is gone: nothing it held reads our rings any more. */
	s->tx.wr_out = 0;
	e->st.streams_suspended++;
	event(e, id, ENGINE_EV_SUSPENDED);
}

/* End stream ${id} here and now: RELEASED (and RESET unless closed). */
static void
release_now(struct engine *e, uint32_t id, uint16_t reason)
{
	struct stream *s = &e->s[id];

	if (!(s->flags & F_APP_CLOSED) && !(s->flags & F_RESET)) {
		s->ev_reason = reason;
		event(e, id, ENGINE_EV_RESET);
		e->st.streams_reset++;
	}
	if (s->flags & F_PEER_MAPPED) {
		peer_bit(e, s->peer_id, 0);
		s->flags &= (uint16_t)~F_PEER_MAPPED;
	}
	s->flags &= (uint16_t)~(F_SUSP | F_RESUMING);
	s->flags |= F_RESET;
	s->ctrl = 0;
	s->state = S_DEAD;
	s->ev |= ENGINE_EV_RELEASED;
	qpush(e, Q_EV, id);
}

/* Free slots go back on the free list, low ids first (after adopting). */
static void
rebuild_free(struct engine *e)
{
	uint32_t i;
	struct stream *s;

	e->free_head = NIL;
	for (i = e->used; i > 0; i--) {
		s = &e->s[i - 1];
		if (s->state == S_FREE && !s->in[Q_CTRL] && !s->in[Q_TX] &&
		    !s->in[Q_EV]) {
			s->next_free = e->free_head;
			e->free_head = i - 1;
		}
	}
}

/*
 * Move suspended stream ${id} of failed engine ${old} into ${e} under the
 * same id, its rings re-registered by the embedder; it is RESUMING until
 * the exchange settles its cursors.  Returns 1 if it moved; a stream that
 * cannot move stays suspended in ${old} (engine_abandon ends it).
 */
static int
adopt(struct engine *e, struct engine *old, uint32_t id)
{
	struct stream *o = &old->s[id], *s;
	struct engine_ring tx, rx;

	if (id >= e->conf.max_streams)
		return (0);
	s = &e->s[id];
	if (s->state != S_FREE || s->in[Q_CTRL] || s->in[Q_TX] || s->in[Q_EV] ||
	    ((o->flags & F_PEER_MAPPED) && peer_bit_isset(e, o->peer_id)))
		return (0);
	*s = *o;
	memset(s->in, 0, sizeof(s->in));
	if (e->used <= id)
		e->used = id + 1;	/* rebuild_free lists the slots below */
	s->next_free = NIL;
	s->flags &= (uint16_t)~F_SUSP;
	s->flags |= F_RESUMING;
	s->ctrl &= (uint8_t)~(C_OPEN | C_OPEN_OK | C_RESUME);
	e->st.streams_active++;
	if (s->flags & F_PEER_MAPPED)
		peer_bit(e, s->peer_id, 1);
	if (s->ev)
		qpush(e, Q_EV, id);
	o->state = S_FREE;
	o->flags = 0;
	o->ev = 0;
	old->st.streams_active--;
	tx = s->tx.ring;
	rx = s->rx.ring;
	if (e->r.adopt(e->r.arg, id, s->user, &tx, &rx) != 0 ||
	    tx.size != s->tx.ring.size || rx.size != s->rx.ring.size) {
		release_now(e, id, WIRE_REASON_INTERNAL);
		return (1);
	}
	s->tx.ring = tx;
	s->rx.ring = rx;
	return (1);
}

/* Move every suspended stream of ${old}; returns how many moved. */
static uint32_t
adopt_all(struct engine *e, struct engine *old)
{
	uint32_t id, n = 0;

	for (id = 0; id < old->used; id++)
		if (old->s[id].state == S_OPEN && (old->s[id].flags & F_SUSP))
			n += (uint32_t)adopt(e, old, id);
	rebuild_free(e);
	return (n);
}

/*
 * The peer's cursors for resumed stream ${id}: the sender writes again
 * from what arrived, frees what was consumed, and says again whatever
 * terminal record the peer did not see.
 */
static int
apply_resume(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];

	if (r->ring.size != s->tx.peer_ring.size)
		return (violation(e, "stream %u resumed with a %u-byte ring "
		    "instead of %u", (unsigned)id, (unsigned)r->ring.size,
		    (unsigned)s->tx.peer_ring.size));
	if (r->consumed < s->tx.peer || r->cursor > s->tx.sent)
		return (violation(e, "stream %u resumed at %llu/%llu, outside "
		    "the %llu..%llu bytes sent", (unsigned)id,
		    (unsigned long long)r->consumed,
		    (unsigned long long)r->cursor,
		    (unsigned long long)s->tx.peer,
		    (unsigned long long)s->tx.sent));
	if (((r->flags & WIRE_RS_SHUT) && (!(s->flags & F_SHUT_SENT) ||
	    r->cursor != s->tx.app)) ||
	    ((r->flags & WIRE_RS_CLOSE) && !(s->flags & F_TERM_SENT)))
		return (violation(e, "stream %u resumed with a terminal record "
		    "never sent", (unsigned)id));
	e->st.resumed_bytes += s->tx.sent - r->cursor;
	s->tx.peer_ring = r->ring;
	s->tx.peer = r->consumed;
	s->tx.sent = s->tx.done = s->tx.sig = r->cursor;
	/* A SHUTDOWN follows the bytes written again (check_shutdown). */
	s->ctrl &= (uint8_t)~C_SHUTDOWN;
	if (!(r->flags & WIRE_RS_SHUT))
		s->flags &= (uint16_t)~F_SHUT_SENT;
	if (!(r->flags & WIRE_RS_CLOSE) && (s->flags & F_TERM_SENT)) {
		s->flags &= (uint16_t)~F_TERM_SENT;
		s->ctrl |= C_CLOSE;
	}
	/* Closed while suspended: the CLOSE engine_close could not queue. */
	if ((s->flags & F_APP_CLOSED) && !(s->flags & (F_RESET | F_TERM_SENT)))
		s->ctrl |= C_CLOSE;
	s->flags &= (uint16_t)~F_RESUMING;
	e->st.streams_resumed++;
	event(e, id, ENGINE_EV_RESUMED);
	if (s->flags & F_WANT_WR) {
		s->flags &= (uint16_t)~F_WANT_WR;
		event(e, id, ENGINE_EV_WRITABLE);
	}
	if (s->ctrl)
		qpush(e, Q_CTRL, id);
	tx_queue(e, id);
	check_shutdown(e, id);
	check_eof(e, id);
	maybe_release(e, id);
	return (0);
}

/* Server: the RESUME_STREAMs are all in; what the peer did not name ends. */
static void
resume_finish(struct engine *e)
{
	uint32_t id;

	RESUMING_EACH(e, id) {
		e->st.streams_not_resumed++;
		release_now(e, id, WIRE_REASON_NOT_RESUMED);
	}
}

/* Server: the peer asks for a failed link's streams. */
static int
rec_resume(struct engine *e, const struct wire_rec *r)
{
	struct engine *old;
	uint16_t reason = WIRE_REASON_DENIED;

	if (!e->can_resume || e->res.seen || e->res.sent || e->opened_any ||
	    e->r.find == NULL)
		return (violation(e, "unexpected RESUME"));
	e->res.seen = 1;
	e->res.left = e->res.count = r->count;
	old = e->r.find(e->r.arg, r->token, r->proof, e->res.proof, &reason);
	if (old == NULL || old == e || !old->failed) {
		memset(e->res.proof, 0, sizeof(e->res.proof));
		e->res.refused = 1;
		e->res.deny = 1;
		e->res.reason = reason;
		e->st.resumes_denied++;
		/* From version 5 the peer names its streams only once we
		 * proved the secret: none will come. */
		if (e->can_res_proof)
			e->res.left = 0;
		return (0);
	}
	(void)adopt_all(e, old);
	e->r.adopted(e->r.arg, old);
	/* Before it names its streams (and grants rings), the peer checks
	 * that we hold the secret, which it proved it holds. */
	e->res.prove = e->can_res_proof;
	if (e->res.left == 0)
		resume_finish(e);
	return (0);
}

/* Client: a stream the server could not resume. */
static void
resume_gone(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	e->st.streams_not_resumed++;
	/* Our CLOSE was its last word; the peer released it: finished. */
	if ((s->flags & F_TERM_SENT) && !(s->flags & F_RESET) &&
	    (s->flags & F_APP_CLOSED)) {
		s->flags &= (uint16_t)~F_RESUMING;
		s->flags |= F_TERM_RECV;
		maybe_release(e, id);
		return;
	}
	release_now(e, id, WIRE_REASON_NOT_RESUMED);
}

static int
rec_resume_stream(struct engine *e, const struct wire_rec *r)
{
	struct stream *s = live(e, r->stream);
	uint32_t id = r->stream;

	if (e->res.sent) {
		/* The server's answer for one of ours: never before its proof. */
		if (!e->res.proven)
			return (violation(e, "RESUME_STREAM before "
			    "RESUME_PROOF"));
		if (e->res.denied || s == NULL || !(s->flags & F_RESUMING) ||
		    !(s->flags & F_PEER_MAPPED) || s->peer_id != r->peer_stream)
			return (violation(e, "RESUME_STREAM for stream %u, "
			    "which is not resuming", (unsigned)id));
		e->res.wait--;
		if (r->flags & WIRE_RS_GONE) {
			resume_gone(e, id);
			return (0);
		}
		return (apply_resume(e, id, r));
	}
	if (!e->res.seen || e->res.left == 0 || (r->flags & WIRE_RS_GONE) ||
	    (e->can_res_proof && !e->res.proof_sent))
		return (violation(e, "unexpected RESUME_STREAM"));
	e->res.left--;
	if (!e->res.refused) {
		if (s != NULL && (s->flags & F_RESUMING) &&
		    (s->flags & F_PEER_MAPPED) &&
		    s->peer_id == r->peer_stream && !(s->flags & F_RESET)) {
			if (apply_resume(e, id, r))
				return (-1);
			ctrl(e, id, C_RESUME);
		} else {
			if (s != NULL && (s->flags & F_RESUMING) &&
			    s->peer_id == r->peer_stream)
				release_now(e, id, WIRE_REASON_RESET);
			/* Bounded: at most the RESUME's count. */
			(void)idq_push(&e->res.gone,
			    (uint32_t)r->peer_stream << 16 | r->stream);
		}
	}
	if (e->res.left == 0)
		resume_finish(e);
	return (0);
}

/* Client: the server refused the resume; every resuming stream ends. */
static int
rec_resume_denied(struct engine *e, const struct wire_rec *r)
{
	uint32_t id;

	/* Once the peer proved the secret, it has taken the streams. */
	if (!e->res.sent || e->res.denied ||
	    (e->can_res_proof && e->res.proven))
		return (violation(e, "unexpected RESUME_DENIED"));
	e->res.denied = 1;
	e->res.wait = 0;
	e->st.resumes_denied++;
	RESUMING_EACH(e, id) {
		e->st.streams_not_resumed++;
		release_now(e, id, r->reason);
	}
	return (0);
}

/*
 * Client, version 5: the server took the resume and proves it holds the
 * secret.  Only now does this side name its streams, grant their rings
 * and trust the cursors of the answers; a wrong proof is a peer posing as
 * the one that holds the streams, and ends the link (the streams with
 * it: they are not suspended again for a peer that failed a proof).
 */
static int
rec_resume_proof(struct engine *e, const struct wire_rec *r)
{
	uint32_t id;

	if (!e->res.sent || e->res.denied || e->res.proven)
		return (violation(e, "unexpected RESUME_PROOF"));
	if (e->r.proved == NULL || e->r.proved(e->r.arg, r->proof) != 0)
		return (fail(e, ENGINE_ERR_AUTH, "authentication failed: the "
		    "peer's RESUME_PROOF is wrong (it does not hold the "
		    "streams' resume secret)"));
	e->res.proven = 1;
	/*
	 * New streams may have been opened since the RESUME: their OPENs
	 * wait until every RESUME_STREAM went (build_send), so the peer
	 * never sees an id its resuming streams still map.
	 */
	RESUMING_EACH(e, id)
		e->s[id].ctrl |= C_RESUME;
	e->res.naming = 1;
	e->res.name = 0;
	return (0);
}

/* ---------------------------------------------------------------- setup */

const char *
engine_conf_check(const struct engine_conf *conf)
{

	if (conf->sq_size < ENGINE_SQ_MIN)
		return ("sq_size is below the minimum " STR(ENGINE_SQ_MIN));
	if (conf->sq_size > ENGINE_SQ_MAX)
		return ("sq_size is above the maximum " STR(ENGINE_SQ_MAX));
	if (conf->rq_size < ENGINE_RQ_MIN)
		return ("rq_size is below the minimum " STR(ENGINE_RQ_MIN));
	if (conf->rq_size > WIRE_CREDITS_MAX)
		return ("rq_size is above the maximum " STR(WIRE_CREDITS_MAX));
	if (conf->max_streams < 1 || conf->max_streams > WIRE_STREAMS_MAX)
		return ("max_streams must be from 1 to " STR(WIRE_STREAMS_MAX));
	if (conf->inline_size > WIRE_WRITE_MAX)
		return ("inline_size is above the maximum " STR(WIRE_WRITE_MAX));
	if (conf->chunk > WIRE_WRITE_MAX)
		return ("the chunk size is above the maximum "
		    STR(WIRE_WRITE_MAX));
	if (conf->ctrl_send == NULL)
		return ("no control send buffer");
	return (NULL);
}

struct engine *
engine_new(const struct engine_conf *conf, const char **errstr)
{
	struct engine *e;
	uint32_t i;

	if ((*errstr = engine_conf_check(conf)) != NULL)
		return (NULL);
	if ((e = calloc(1, sizeof(*e))) == NULL) {
		*errstr = "out of memory";
		return (NULL);
	}
	e->conf = *conf;
	e->ver_cap = WIRE_VERSION;
	/* engine_free takes what was allocated of these and skips the rest. */
	e->s = calloc(conf->max_streams, sizeof(*e->s));
	e->wri = calloc(conf->sq_size, sizeof(*e->wri));
	e->peer_ids = calloc(WIRE_STREAMS_MAX / 8, 1);
	if (e->s == NULL || idq_init(&e->repost, conf->rq_size) != 0 ||
	    e->wri == NULL || idq_init(&e->refusals, WIRE_STREAMS_MAX) != 0 ||
	    e->peer_ids == NULL ||
	    (conf->resume && idq_init(&e->res.gone, WIRE_STREAMS_MAX) != 0)) {
		engine_free(e);
		*errstr = "out of memory";
		return (NULL);
	}

	/* No slot used yet: ids are handed out low first (slot_alloc). */
	e->free_head = NIL;
	for (i = 0; i < Q_N; i++)
		e->q[i].head = e->q[i].tail = NIL;

	/* Every receive slot is posted before the link comes up. */
	for (i = 0; i < conf->rq_size; i++)
		(void)idq_push(&e->repost, i);
	e->msg_credit_threshold = conf->rq_size / 4 < 2 ? 2 : conf->rq_size / 4;

	/*
	 * Signal at least every sq_size/2 WRs, so a full send queue always
	 * holds a signalled WR whose completion frees it.
	 */
	e->signal_every = conf->signal_every ? conf->signal_every :
	    conf->sq_size / 4;
	if (e->signal_every > conf->sq_size / 2)
		e->signal_every = conf->sq_size / 2;
	if (e->signal_every < 1)
		e->signal_every = 1;
	e->last_signaled = UINT64_MAX;
	window_init(&e->win, conf->chunk, conf->window_min, conf->window_max);
	return (e);
}

void
engine_free(struct engine *e)
{

	if (e == NULL)
		return;
	idq_free(&e->res.gone);
	free(e->peer_ids);
	idq_free(&e->refusals);
	free(e->wri);
	idq_free(&e->repost);
	free(e->s);
	free(e);
}

void
engine_hello(struct engine *e, struct wire_hello *h)
{

	/*
	 * Each version refuses any newer one.  (A connect that an older peer
	 * refuses is tried again capped at the version its refusal note says,
	 * or at 2 without a note: see refused in verbs_event.c.)
	 */
	e->ver_said = (uint8_t)wire_version_said(e->ver_cap, e->conf.resume);
	h->version = e->ver_said;
	h->flags = (uint8_t)((e->auth && (e->a.step == NULL || e->a.key) ?
	    WIRE_HELLO_AUTH : 0) |
	    (e->conf.resume && e->ver_said >= 2 ? WIRE_HELLO_RESUME : 0));
	if (e->auth && e->a.step != NULL && e->ver_said >= 6)
		h->flags |= (uint8_t)(WIRE_HELLO_IDENTITY |
		    (e->a.seal ? WIRE_HELLO_SEAL : 0) |
		    (e->a.aesgcm ? WIRE_HELLO_AESGCM : 0));
	h->credits = (uint16_t)e->conf.rq_size;
}

void
engine_version_cap(struct engine *e, unsigned version)
{

	e->ver_cap = (uint8_t)(version < WIRE_VERSION ? version : WIRE_VERSION);
}

void
engine_set_auth(struct engine *e, const struct engine_auth *auth)
{

	e->auth = 1;
	e->a = *auth;
}

int
engine_authenticated(const struct engine *e)
{

	return (!e->auth || e->peer_ok);
}

/*
 * The handshake's next message is ${out}; ${rc} is step's answer.  From
 * version 7 the initiator is not done at its message 3 (KEYS): the
 * responder, once it accepted it, confirms, and only that authenticates
 * the responder.
 */
static int
hs_took(struct engine *e, int rc, const char *why, size_t outlen)
{
	int v7 = e->ver_link >= 7;

	if (rc < 0 || outlen > WIRE_HS_MAX)
		return (fail(e, ENGINE_ERR_AUTH, "authentication failed: %s",
		    why != NULL ? why : "handshake failed"));
	if ((rc == ENGINE_HS_KEYS && (!v7 || !e->a.initiator ||
	    outlen == 0)) || (rc == ENGINE_HS_DONE && v7 &&
	    (outlen > 0) == (e->a.initiator != 0)))
		return (fail(e, ENGINE_ERR_LOCAL, "the handshake went out of "
		    "the order of protocol version %u", (unsigned)e->ver_link));
	e->hs.out_len = outlen;
	if (rc == ENGINE_HS_MORE)
		return (0);
	/*
	 * Each side seals from the SEND after its last message (the
	 * initiator's message 3; the responder's confirmation, or before
	 * version 7 from now on) and opens what follows the peer's last
	 * (the responder's message 2 or confirmation; message 3).
	 */
	if (outlen > 0)
		e->hs.seal_after = 1;
	else
		engine_seal_tx(e);
	if (rc == ENGINE_HS_DONE) {
		e->peer_ok = 1;
		e->hs.hold = 0;
		engine_seal_rx(e);
	}
	return (0);
}

/*
 * Do both hellos agree on how the link authenticates?  A key on one side
 * only, or an identity on one side only, fails the link: neither is
 * ever dropped silently.  With identities, the initiator starts the
 * handshake.
 */
static int
auth_agree(struct engine *e, const struct wire_hello *peer)
{
	int key = e->auth && (e->a.step == NULL || e->a.key);
	int ident = e->auth && e->a.step != NULL;
	const char *why = NULL;
	size_t outlen = 0;
	int rc;

	if (key && !(peer->flags & WIRE_HELLO_AUTH))
		return (fail(e, ENGINE_ERR_AUTH, "authentication failed: the "
		    "peer does not authenticate (no key_file there?)"));
	if (!key && (peer->flags & WIRE_HELLO_AUTH))
		return (fail(e, ENGINE_ERR_AUTH, "authentication failed: the "
		    "peer authenticates but this side has no key"));
	if (ident && !(peer->flags & WIRE_HELLO_IDENTITY))
		return (fail(e, ENGINE_ERR_AUTH, "authentication failed: the "
		    "peer has no identity (no identity_file there, or a "
		    "version below 6)"));
	if (!ident && (peer->flags & WIRE_HELLO_IDENTITY))
		return (fail(e, ENGINE_ERR_AUTH, "authentication failed: the "
		    "peer has an identity but this side has none (no "
		    "identity_file)"));
	e->hs.on = ident;
	/* Sealed when both have identities and either side asks. */
	if (ident)
		e->seal.on = e->seal.on && (e->a.seal ||
		    (peer->flags & WIRE_HELLO_SEAL));
	e->auth_send = key && !ident && e->a.initiator;
	if (!ident || !e->a.initiator)
		return (0);
	rc = e->a.step(e->a.arg, NULL, 0, e->hs.out, &outlen, &why);
	return (hs_took(e, rc, why, outlen));
}

/*
 * Finish the failure fail() recorded, if one is due.  fail() only records;
 * every public entry point that can reach it (engine_connected,
 * engine_fail, engine_on_recv, engine_on_recv_imm, engine_on_recv_tag,
 * engine_on_send_done, engine_tick) calls this before it returns to the
 * embedder, which thus never sees a failed engine whose streams still
 * look alive.
 */
static void
fail_finish(struct engine *e)
{
	struct stream *s;
	uint32_t id;

	if (!e->fail_due)
		return;
	e->fail_due = 0;
	seal_restore_outstanding(e, e->err_kind);
	/*
	 * Every live stream ends, its peer gone with the link; but a kept
	 * stream waits in this engine for a resume on a new link, if the
	 * transport (not the peer's conduct) failed.
	 */
	for (id = 0; id < e->used; id++) {
		s = &e->s[id];
		if (s->state == S_FREE || s->state == S_DEAD)
			continue;
		if (suspendable(s, e->err_kind)) {
			suspend(e, id);
			continue;
		}
		s->flags &= (uint16_t)~(F_SUSP | F_RESUMING);
		if (!(s->flags & F_APP_CLOSED)) {
			s->ev |= ENGINE_EV_RESET;
			s->ev_reason = WIRE_REASON_RESET;
		}
		s->state = S_DEAD;
		s->ev |= ENGINE_EV_RELEASED;
		qpush(e, Q_EV, id);
	}
}

/*
 * engine_connected and the engine_on_recv family reach fail() deep in
 * helpers and return from many places: each keeps its body in a static
 * function named without engine_, and the public one finishes a failure
 * after it.
 */
static void
connected(struct engine *e, const struct wire_hello *peer)
{

	if (e->failed)
		return;
	/* The handshake's steps depend on it (hs_took). */
	e->ver_link = e->ver_said < peer->version ? e->ver_said :
	    peer->version;
	if (auth_agree(e, peer) != 0)
		return;
	e->can_resume = e->conf.resume && e->ver_said >= 2 &&
	    (peer->flags & WIRE_HELLO_RESUME) != 0;
	e->can_origin = e->ver_said >= 3 && peer->version >= 3;
	e->can_res_proof = e->ver_said >= 5 && peer->version >= 5;
	e->can_resize = e->ver_said >= 4 && peer->version >= 4 &&
	    !e->can_resume;
	e->peer_rq = peer->credits;
	e->peer_posted = peer->credits;
	/* The hello already granted every receive posted so far. */
	e->recv_reported = e->recv_posted;
	e->up = 1;
}

void
engine_connected(struct engine *e, const struct wire_hello *peer)
{

	connected(e, peer);
	fail_finish(e);
}

void
engine_fail(struct engine *e, enum engine_err kind, const char *why)
{

	fail(e, kind, "%s", why);
	fail_finish(e);
}

enum engine_err
engine_error_kind(const struct engine *e)
{

	return (e->failed ? e->err_kind : ENGINE_ERR_NONE);
}

const char *
engine_err_name(enum engine_err kind)
{
	static const char *const names[] = {
		[ENGINE_ERR_NONE] = "none",
		[ENGINE_ERR_PROTOCOL] = "protocol violation",
		[ENGINE_ERR_AUTH] = "authentication",
		[ENGINE_ERR_TRANSPORT] = "transport",
		[ENGINE_ERR_LOCAL] = "ended here",
	};

	return ((unsigned)kind < sizeof(names) / sizeof(names[0]) &&
	    names[kind] != NULL ? names[kind] : "?");
}

int
engine_set_user(struct engine *e, uint32_t id, void *user)
{
	struct stream *s = live(e, id);

	if (s == NULL || s->state != S_INCOMING)
		return (ENGINE_EINVAL);
	s->user = user;
	return (0);
}

const char *
engine_error(const struct engine *e)
{

	return (e->failed ? e->err : NULL);
}

/* ---------------------------------------------------------------- input */

/* Our receive slot ${slot} completed: count it and queue it for reposting. */
static int
recv_slot(struct engine *e, uint32_t slot)
{

	if (e->failed)
		return (-1);
	if (slot >= e->conf.rq_size)
		return (fail(e, ENGINE_ERR_TRANSPORT, "completion for unknown receive slot %u",
		    (unsigned)slot));
	if (e->recv_done >= e->recv_posted)
		return (fail(e, ENGINE_ERR_TRANSPORT, "more receives completed than were posted"));
	e->recv_done++;
	e->st.recvs++;
	(void)idq_push(&e->repost, slot);
	return (0);
}

/*
 * Data arrived: WRITE WITH IMMEDIATE ${imm} of ${len} bytes, or on a
 * sealed link the tag ${tag} of the WRITE ${imm} names.
 */
static int
data_in(struct engine *e, uint32_t imm, uint32_t len, const uint8_t *tag)
{
	uint32_t id, n;
	uint64_t room;
	struct stream *s;

	if (!e->up)
		return (violation(e, "data before the link was up"));
	if (!engine_authenticated(e))
		return (violation(e, "data before authentication"));
	if (wire_imm_decode(imm, &id, &n) != WIRE_OK)
		return (violation(e, "immediate 0x%08x has an unknown "
		    "operation", (unsigned)imm));
	if (tag == NULL && n != len)
		return (violation(e, "immediate says %u bytes but %u were "
		    "written", (unsigned)n, (unsigned)len));
	if ((s = live(e, id)) == NULL || s->state != S_OPEN ||
	    (s->flags & F_RESUMING))
		return (violation(e, "data for stream %u, which is not open",
		    (unsigned)id));
	if (s->flags & (F_PEER_SHUT | F_TERM_RECV))
		return (violation(e, "data for stream %u after its shutdown",
		    (unsigned)id));
	/* After a shrink the old ring may still hold more than the new. */
	room = s->rx.tail - s->rx.cons >= s->rx.ring.size ? 0 :
	    ring_free(s->rx.ring.size, s->rx.tail, s->rx.cons);
	if (n > room)
		return (violation(e, "%u bytes for stream %u exceed its free "
		    "ring space %llu", (unsigned)n, (unsigned)id,
		    (unsigned long long)room));
	if (seal_open_write(e, s, imm, n, tag))
		return (-1);
	s->rx.tail += n;
	e->st.bytes_rx += n;
	if (s->flags & F_RESET) {
		/* We reset it; the peer had not heard yet.  Drop. */
		s->rx.cons = s->rx.tail;
		return (0);
	}
	event(e, id, ENGINE_EV_READABLE);
	rx_grow(e, id);
	return (0);
}

static int
on_recv_imm(struct engine *e, uint32_t slot, uint32_t imm, uint32_t len)
{

	if (recv_slot(e, slot))
		return (-1);
	if (e->seal.rx)
		return (violation(e, "data without its tag on a sealed link"));
	return (data_in(e, imm, len, NULL));
}

static int
on_recv_tag(struct engine *e, uint32_t slot, uint32_t imm,
    const uint8_t *buf, uint32_t len)
{

	if (recv_slot(e, slot))
		return (-1);
	if (!e->seal.rx || len != WIRE_TAG_LEN)
		return (violation(e, "a %u-byte tag on a link that %s",
		    (unsigned)len, e->seal.rx ? "seals" : "does not seal"));
	return (data_in(e, imm, 0, buf));
}

int
engine_on_recv_imm(struct engine *e, uint32_t slot, uint32_t imm,
    uint32_t len)
{
	int rc = on_recv_imm(e, slot, imm, len);

	fail_finish(e);
	return (rc);
}

int
engine_on_recv_tag(struct engine *e, uint32_t slot, uint32_t imm,
    const uint8_t *buf, uint32_t len)
{
	int rc = on_recv_tag(e, slot, imm, buf, len);

	fail_finish(e);
	return (rc);
}

static int
rec_open(struct engine *e, const struct wire_rec *r,
    const struct wire_origin *origin)
{
	uint32_t id;
	struct stream *s;

	if (peer_bit_isset(e, r->stream))
		return (violation(e, "OPEN for peer stream %u, which is "
		    "already open", (unsigned)r->stream));
	e->opened_any = 1;
	/* The bitmap check above bounds the refusal queue: one per id. */
	if (e->ctl.goaway || (id = slot_alloc(e)) == NIL) {
		(void)idq_push(&e->refusals, r->stream << 16 |
		    (e->ctl.goaway ? WIRE_REASON_SHUTTING_DOWN :
		    WIRE_REASON_LIMIT));
		peer_bit(e, r->stream, 1);
		e->st.streams_refused++;
		return (0);
	}
	s = &e->s[id];
	s->state = S_INCOMING;
	s->peer_id = r->stream;
	s->tx.peer_ring = r->ring;
	s->flags |= F_PEER_MAPPED;
	peer_bit(e, r->stream, 1);
	memcpy(s->name, r->name, sizeof(s->name));
	if (origin != NULL)
		s->origin = *origin;
	event(e, id, ENGINE_EV_INCOMING);
	return (0);
}

/*
 * The records that name one of our streams, in rec_stream's table: each
 * handler returns 0, -1 once it ended the link, or REC_BAD when the
 * stream's state does not allow the record (rec_stream says so).
 */
#define REC_BAD	1

static int
rs_open_ok(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];

	if (peer_bit_isset(e, r->peer_stream))
		return (REC_BAD);
	s->state = S_OPEN;
	s->peer_id = r->peer_stream;
	s->tx.peer_ring = r->ring;
	s->flags |= F_PEER_MAPPED;
	peer_bit(e, r->peer_stream, 1);
	keep_decide(e, s);
	if (s->flags & F_ABORT) {
		s->flags |= F_RESET;
		s->tx.app = s->tx.sent;
		ctrl(e, id, C_RESET);
		return (0);
	}
	event(e, id, ENGINE_EV_OPENED);
	tx_queue(e, id);
	check_shutdown(e, id);
	return (0);
}

static int
rs_refuse(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];

	s->ev_reason = r->reason;
	event(e, id, ENGINE_EV_REFUSED);
	s->flags |= F_TERM_SENT | F_TERM_RECV;
	maybe_release(e, id);
	return (0);
}

static int
rs_credit(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];

	if (r->cursor > s->tx.sent)
		return (violation(e, "CREDIT for stream %u up to %llu, beyond "
		    "the %llu bytes sent", (unsigned)id,
		    (unsigned long long)r->cursor,
		    (unsigned long long)s->tx.sent));
	if (r->cursor <= s->tx.peer)
		return (0);	/* old news: cursors are absolute */
	s->tx.peer = r->cursor;
	tx_queue(e, id);
	wait_update(e, id);
	if ((s->flags & (F_KEEP | F_WANT_WR)) == (F_KEEP | F_WANT_WR)) {
		s->flags &= (uint16_t)~F_WANT_WR;
		event(e, id, ENGINE_EV_WRITABLE);
	}
	return (0);
}

static int
rs_shutdown(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];

	if (r->cursor != s->rx.tail)
		return (violation(e, "SHUTDOWN for stream %u at %llu, but %llu "
		    "bytes arrived", (unsigned)id,
		    (unsigned long long)r->cursor,
		    (unsigned long long)s->rx.tail));
	s->flags |= F_PEER_SHUT;
	s->rx.final = r->cursor;
	check_eof(e, id);
	return (0);
}

static int
rs_close(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];

	(void)r;
	/* Graceful only after both shutdowns, or as our reset's answer. */
	if (!(s->flags & F_TERM_SENT && s->flags & F_RESET) &&
	    !((s->flags & F_PEER_SHUT) && (s->flags & F_SHUT_SENT)))
		return (REC_BAD);
	s->flags |= F_TERM_RECV;
	maybe_release(e, id);
	return (0);
}

static int
rs_ring(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];

	/* One resize at a time: the peer waits for our RING_AT. */
	if (s->rs & RS_RING_AT)
		return (REC_BAD);
	/* After our last word the peer frees it without RING_AT. */
	if (s->flags & F_TERM_SENT)
		return (0);
	s->tx.peer_next = r->ring;
	s->rs |= RS_RING_AT;
	qpush(e, Q_CTRL, id);
	return (0);
}

static int
rs_ring_at(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];

	if (s->rx.next.size == 0 || (s->rs & RS_RING))
		return (REC_BAD);
	if (r->cursor != s->rx.tail)
		return (violation(e, "RING_AT for stream %u at %llu, but %llu "
		    "bytes arrived", (unsigned)id,
		    (unsigned long long)r->cursor,
		    (unsigned long long)s->rx.tail));
	rx_switch(e, id);
	return (0);
}

static int
rs_reset(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];

	s->flags |= F_TERM_RECV;
	if (!(s->flags & F_RESET)) {
		s->flags |= F_RESET;
		s->ev_reason = r->reason;
		s->tx.app = s->tx.sent;
		s->rx.cons = s->rx.tail;
		e->st.streams_reset++;
		event(e, id, ENGINE_EV_RESET);
	}
	if (!(s->flags & F_TERM_SENT)) {
		s->ctrl &= (uint8_t)~(C_CREDIT | C_SHUTDOWN);
		ctrl(e, id, C_CLOSE);
	}
	maybe_release(e, id);
	return (0);
}

/*
 * Per record type: the state the stream must be in, the flags it must not
 * have, and the handler.  (An INCOMING stream or one still resuming takes
 * none of them.)
 */
static const struct stream_rec {
	uint8_t state;
	uint16_t not;
	int (*rec)(struct engine *, uint32_t, const struct wire_rec *);
} stream_recs[] = {
	[WIRE_OPEN_OK] =	{ S_OPENING, 0, rs_open_ok },
	[WIRE_REFUSE] =		{ S_OPENING, 0, rs_refuse },
	[WIRE_CREDIT] =		{ S_OPEN, F_TERM_RECV, rs_credit },
	[WIRE_SHUTDOWN] =	{ S_OPEN, F_PEER_SHUT | F_TERM_RECV,
				    rs_shutdown },
	[WIRE_CLOSE] =		{ S_OPEN, F_TERM_RECV, rs_close },
	[WIRE_RING] =		{ S_OPEN, F_TERM_RECV, rs_ring },
	[WIRE_RING_AT] =	{ S_OPEN, F_TERM_RECV, rs_ring_at },
	[WIRE_RESET] =		{ S_OPEN, F_TERM_RECV, rs_reset },
};

static int
rec_stream(struct engine *e, const struct wire_rec *r)
{
	struct stream *s = live(e, r->stream);
	const struct stream_rec *t = NULL;
	int err = REC_BAD;

	if (r->type < sizeof(stream_recs) / sizeof(stream_recs[0]) &&
	    stream_recs[r->type].rec != NULL)
		t = &stream_recs[r->type];
	if (t != NULL && s != NULL && !(s->flags & F_RESUMING) &&
	    s->state == t->state && !(s->flags & t->not))
		err = t->rec(e, r->stream, r);
	if (err != REC_BAD)
		return (err);
	return (violation(e, "%s for stream %u in a state that does not allow "
	    "it", wire_rec_name(r->type), (unsigned)r->stream));
}

/* The peer's proof: the initiator's first, then the responder's answer. */
static int
rec_auth(struct engine *e, const struct wire_rec *r)
{

	if (!e->auth || e->peer_ok || e->hs.on)
		return (violation(e, "unexpected AUTH"));
	if (e->a.initiator && e->auth_send)
		return (violation(e, "AUTH before ours"));
	if (e->a.verify(e->a.arg, r->proof) != 0)
		return (fail(e, ENGINE_ERR_AUTH, "authentication failed: the peer's proof is "
		    "wrong (a different key?)"));
	e->peer_ok = 1;
	/* The responder proves itself only to a peer that did. */
	if (!e->a.initiator)
		e->auth_send = 1;
	return (0);
}

/* The peer's handshake message: the embedder answers it. */
static int
rec_handshake(struct engine *e, const struct wire_rec *r)
{
	const char *why = NULL;
	size_t outlen = 0;
	int rc;

	if (!e->hs.on || e->peer_ok || e->hs.out_len > 0)
		return (violation(e, "unexpected HANDSHAKE"));
	rc = e->a.step(e->a.arg, r->hs, r->hs_len, e->hs.out, &outlen, &why);
	return (hs_took(e, rc, why, outlen));
}

static int
rec_msg_credit(struct engine *e, const struct wire_rec *r)
{
	uint64_t posted = r->cursor;

	/* The peer cannot have more receives out than its queue holds. */
	if (posted > e->msgs_sent + e->peer_rq)
		return (violation(e, "message credit %llu is beyond the peer's "
		    "receive queue (%llu sent, queue %u)",
		    (unsigned long long)posted,
		    (unsigned long long)e->msgs_sent, (unsigned)e->peer_rq));
	if (posted > e->peer_posted)
		e->peer_posted = posted;
	return (0);
}

static int
rec_goaway(struct engine *e, const struct wire_rec *r)
{

	(void)r;
	e->ctl.peer_goaway = 1;
	return (0);
}

static int
rec_keepalive(struct engine *e, const struct wire_rec *r)
{

	(void)e;
	(void)r;
	return (0);
}

/*
 * Records about the link rather than one stream, by type; the rest (but
 * OPEN and ORIGIN, which engine_on_recv pairs) go to rec_stream.
 */
static int (*const link_recs[])(struct engine *, const struct wire_rec *) = {
	[WIRE_AUTH] = rec_auth,
	[WIRE_HANDSHAKE] = rec_handshake,
	[WIRE_MSG_CREDIT] = rec_msg_credit,
	[WIRE_KEEPALIVE] = rec_keepalive,
	[WIRE_GOAWAY] = rec_goaway,
	[WIRE_RESUME] = rec_resume,
	[WIRE_RESUME_STREAM] = rec_resume_stream,
	[WIRE_RESUME_DENIED] = rec_resume_denied,
	[WIRE_RESUME_PROOF] = rec_resume_proof,
};

/* Checks a message passes before its records are decoded. */
static int
recv_check(struct engine *e, uint32_t slot, uint32_t len)
{

	if (recv_slot(e, slot))
		return (-1);
	if (!e->up)
		return (violation(e, "message before the link was up"));
	if (len == 0)
		return (violation(e, "%s", wire_strerror(WIRE_EEMPTY)));
	if (len > WIRE_MSG_SIZE)
		return (violation(e, "message of %u bytes exceeds %u",
		    (unsigned)len, WIRE_MSG_SIZE));
	return (0);
}

static int
orphan_origin(struct engine *e, uint32_t origin_for)
{

	return (violation(e, "ORIGIN for peer stream %u not followed by its "
	    "OPEN", (unsigned)origin_for));
}

/* Records of a version the link does not speak end it (wire.c's table
 * says which version brought each); and rings keep their size on a link
 * that can resume. */
static int
rec_version(struct engine *e, const struct wire_rec *r)
{
	unsigned v = wire_rec_version(r->type);

	if ((r->type == WIRE_RING || r->type == WIRE_RING_AT) &&
	    !e->can_resize)
		return (violation(e, "%s on a link that cannot resize rings",
		    wire_rec_name(r->type)));
	if (e->ver_link < v)
		return (violation(e, "%s on a link below version %u",
		    wire_rec_name(r->type), v));
	return (0);
}

/*
 * May record ${r} come now?  Before the proof only what proving needs;
 * after an ORIGIN (for peer stream ${origin_for}) only its OPEN; and only
 * records the link's version carries.
 */
static int
rec_allowed(struct engine *e, const struct wire_rec *r, uint32_t origin_for)
{

	if (!engine_authenticated(e) && r->type != WIRE_AUTH &&
	    r->type != WIRE_HANDSHAKE && r->type != WIRE_MSG_CREDIT &&
	    r->type != WIRE_KEEPALIVE)
		return (violation(e, "%s before authentication",
		    wire_rec_name(r->type)));
	if (origin_for != NIL && (r->type != WIRE_OPEN ||
	    r->stream != origin_for))
		return (orphan_origin(e, origin_for));
	return (rec_version(e, r));
}

static int
on_recv(struct engine *e, uint32_t slot, const uint8_t *buf, uint32_t len)
{
	struct wire_rec r;
	struct wire_origin origin;
	size_t off = 0, used;
	uint32_t origin_for = NIL;	/* an ORIGIN waits for its OPEN */
	uint8_t clear[WIRE_MSG_SIZE];
	int err;

	if (recv_check(e, slot, len) || seal_open_send(e, &buf, &len, clear))
		return (-1);
	while (off < len) {
		if ((err = wire_rec_decode(buf + off, len - off, &r, &used)))
			return (violation(e, "bad control record at offset "
			    "%zu: %s", off, wire_strerror(err)));
		off += used;
		if (rec_allowed(e, &r, origin_for))
			return (-1);
		/* What follows a handshake message may have to be sealed. */
		if (r.type == WIRE_HANDSHAKE && off < len)
			return (violation(e, "records after HANDSHAKE in its "
			    "SEND"));
		if (r.type == WIRE_ORIGIN) {
			origin = r.origin;
			origin_for = r.stream;
			continue;
		}
		if (r.type == WIRE_OPEN) {
			err = rec_open(e, &r, origin_for != NIL ? &origin :
			    NULL);
			origin_for = NIL;
		} else if (r.type < sizeof(link_recs) / sizeof(link_recs[0]) &&
		    link_recs[r.type] != NULL)
			err = link_recs[r.type](e, &r);
		else
			err = rec_stream(e, &r);
		if (err)
			return (-1);
	}
	if (origin_for != NIL)
		return (orphan_origin(e, origin_for));
	return (0);
}

int
engine_on_recv(struct engine *e, uint32_t slot, const uint8_t *buf,
    uint32_t len)
{
	int rc = on_recv(e, slot, buf, len);

	fail_finish(e);
	return (rc);
}

int
engine_on_send_done(struct engine *e, uint64_t wr_id)
{
	struct wrinfo *w;
	struct stream *s;

	if (e->failed)
		return (-1);
	if (wr_id < e->seq_done || wr_id >= e->seq) {
		fail(e, ENGINE_ERR_TRANSPORT, "completion for unknown work "
		    "request %llu", (unsigned long long)wr_id);
		fail_finish(e);
		return (-1);
	}
	for (; e->seq_done <= wr_id; e->seq_done++) {
		w = &e->wri[e->seq_done % e->conf.sq_size];
		window_done(&e->win, w->bytes);
		if (e->seq_done == wr_id && w->signaled)
			window_sample(&e->win, &w->mark,
			    e->q[Q_TX].head != NIL);
		if (w->stream == NIL)
			continue;
		s = &e->s[w->stream];
		seal_restore(e, w, e->seq_done);
		s->tx.done = w->end;
		s->tx.wr_out--;
		if (s->tx.old.size != 0 && s->tx.done >= s->tx.switch_at &&
		    !e->failed)
			ring_drop(e, s, &s->tx.old);
		if ((s->flags & F_WANT_WR) &&
		    (!(s->flags & F_KEEP) || e->seal.tx)) {
			s->flags &= (uint16_t)~F_WANT_WR;
			event(e, w->stream, ENGINE_EV_WRITABLE);
		}
		if (s->tx.wr_out == 0)
			maybe_release(e, w->stream);
	}
	return (0);
}

/* ---------------------------------------------------------------- output */

int
engine_take_recvs(struct engine *e, uint32_t *slots, int max)
{
	int n = 0;

	if (e->failed)
		return (0);
	while (n < max && idq_len(&e->repost) > 0) {
		slots[n++] = idq_peek(&e->repost);
		idq_drop(&e->repost);
		e->recv_posted++;
	}
	return (n);
}

static uint64_t
msg_avail(const struct engine *e)
{

	return (e->peer_posted - e->msgs_sent);
}

static int
ctrl_pending(const struct engine *e)
{

	return (e->q[Q_CTRL].head != NIL || idq_len(&e->refusals) > 0 ||
	    e->ctl.keepalive || e->auth_send || e->hs.out_len > 0 ||
	    e->res.hdr || e->res.deny || e->res.prove || e->res.naming ||
	    idq_len(&e->res.gone) > 0 ||
	    (e->ctl.goaway && !e->ctl.goaway_sent) ||
	    e->recv_posted - e->recv_reported >= e->msg_credit_threshold);
}

/* Room kept at the end of every SEND for a MSG_CREDIT record. */
#define MSG_CREDIT_ROOM	10

/*
 * Records fill a SEND up to SEND_ROOM bytes, sealed or not, which leaves
 * a sealed SEND's tag its place.
 */
#define SEND_ROOM	(WIRE_MSG_SIZE - WIRE_TAG_LEN)

static int
put(uint8_t *buf, size_t *len, const struct wire_rec *r)
{
	size_t cap = SEND_ROOM - MSG_CREDIT_ROOM;
	size_t n;

	if (r->type == WIRE_MSG_CREDIT)
		cap = SEND_ROOM;
	n = *len < cap ? wire_rec_encode(buf + *len, cap - *len, r) : 0;

	*len += n;
	return (n != 0);
}

/* What the peer is granted of receive ring ${ring}: address, rkey, size. */
static struct wire_ring
ring_grant(const struct engine_ring *ring)
{
	struct wire_ring w;

	w.addr = ring->addr;
	w.rkey = ring->key;
	w.size = ring->size;
	return (w);
}

/*
 * One of encode_stream's steps: a record of stream ${id} if it has one
 * pending.  ENC_ON when it went (or none was due), ENC_FULL when it did not
 * fit this SEND, ENC_WAIT when the stream's other records must wait.
 */
enum enc { ENC_ON, ENC_FULL, ENC_WAIT };

/* A record of ${type} to the peer about stream ${s}. */
static void
enc_rec(struct wire_rec *r, const struct stream *s, uint8_t type)
{

	memset(r, 0, sizeof(*r));
	r->type = type;
	r->stream = s->peer_id;
}

static enum enc
enc_resume(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	struct stream *s = &e->s[id];
	struct wire_rec r;

	if (!(s->ctrl & C_RESUME))
		return (ENC_ON);
	enc_rec(&r, s, WIRE_RESUME_STREAM);
	r.peer_stream = id;
	r.cursor = s->rx.tail;
	r.consumed = s->rx.cons;
	r.flags = (uint8_t)(((s->flags & F_PEER_SHUT) ? WIRE_RS_SHUT : 0) |
	    ((s->flags & F_TERM_RECV) ? WIRE_RS_CLOSE : 0));
	r.ring = ring_grant(&s->rx.ring);
	if (!put(buf, len, &r))
		return (ENC_FULL);
	s->rx.rep = s->rx.cons;
	s->ctrl &= (uint8_t)~C_RESUME;
	tx_queue(e, id);
	return (ENC_ON);
}

/* The rest waits until the peer's answer resumed the stream. */
static enum enc
enc_resuming(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{

	(void)buf;
	(void)len;
	return ((e->s[id].flags & F_RESUMING) ? ENC_WAIT : ENC_ON);
}

static enum enc
enc_open(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	struct stream *s = &e->s[id];
	struct wire_rec r, o;

	if (!(s->ctrl & C_OPEN))
		return (ENC_ON);
	/*
	 * The peer may still map an id freed here to a stream it is
	 * resuming, until our GONE answer for it (or, asking, until the
	 * RESUME_STREAMs that end what we did not name): a new OPEN waits
	 * for every RESUME_STREAM and every GONE answer to go first, and
	 * from version 5 for the peer's proof too.
	 */
	if (e->res.left > 0 || idq_len(&e->res.gone) > 0 || e->res.naming ||
	    !engine_resume_proven(e))
		return (ENC_FULL);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_OPEN;
	r.stream = id;
	r.ring = ring_grant(&s->rx.ring);
	r.name_len = (uint8_t)strlen(s->name);
	memcpy(r.name, s->name, r.name_len);
	/* The ORIGIN and its OPEN share one SEND: room for both. */
	if ((s->ctrl & C_ORIGIN) && e->can_origin) {
		memset(&o, 0, sizeof(o));
		o.type = WIRE_ORIGIN;
		o.stream = id;
		o.origin = s->origin;
		if (*len + wire_rec_size(&o) + wire_rec_size(&r) >
		    SEND_ROOM - MSG_CREDIT_ROOM || !put(buf, len, &o))
			return (ENC_FULL);
	}
	if (!put(buf, len, &r))
		return (ENC_FULL);
	s->ctrl &= (uint8_t)~(C_OPEN | C_ORIGIN);
	return (ENC_ON);
}

static enum enc
enc_open_ok(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	struct stream *s = &e->s[id];
	struct wire_rec r;

	if (!(s->ctrl & C_OPEN_OK))
		return (ENC_ON);
	enc_rec(&r, s, WIRE_OPEN_OK);
	r.peer_stream = id;
	r.ring = ring_grant(&s->rx.ring);
	if (!put(buf, len, &r))
		return (ENC_FULL);
	s->ctrl &= (uint8_t)~C_OPEN_OK;
	return (ENC_ON);
}

static enum enc
enc_ring_at(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	struct stream *s = &e->s[id];
	struct wire_rec r;

	if (!(s->rs & RS_RING_AT))
		return (ENC_ON);
	/* Every WRITE before this record went to the old ring. */
	enc_rec(&r, s, WIRE_RING_AT);
	r.cursor = s->tx.sent;
	if (!put(buf, len, &r))
		return (ENC_FULL);
	s->rs &= (uint8_t)~RS_RING_AT;
	s->tx.peer_ring = s->tx.peer_next;
	memset(&s->tx.peer_next, 0, sizeof(s->tx.peer_next));
	tx_queue(e, id);
	return (ENC_ON);
}

static enum enc
enc_ring(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	struct stream *s = &e->s[id];
	struct wire_rec r;

	if (!(s->rs & RS_RING))
		return (ENC_ON);
	enc_rec(&r, s, WIRE_RING);
	r.ring = ring_grant(&s->rx.next);
	if (!put(buf, len, &r))
		return (ENC_FULL);
	s->rs &= (uint8_t)~RS_RING;
	s->ring_ticks = 0;
	return (ENC_ON);
}

static enum enc
enc_credit(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	struct stream *s = &e->s[id];
	struct wire_rec r;

	if (!(s->ctrl & C_CREDIT))
		return (ENC_ON);
	enc_rec(&r, s, WIRE_CREDIT);
	r.cursor = s->rx.cons;
	if (!put(buf, len, &r))
		return (ENC_FULL);
	s->rx.rep = s->rx.cons;
	s->rx.reps[s->rx.rep_n++ % REPS] = s->rx.cons;
	s->ctrl &= (uint8_t)~C_CREDIT;
	e->st.credit_updates++;
	return (ENC_ON);
}

static enum enc
enc_shutdown(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	struct stream *s = &e->s[id];
	struct wire_rec r;

	if (!(s->ctrl & C_SHUTDOWN))
		return (ENC_ON);
	enc_rec(&r, s, WIRE_SHUTDOWN);
	r.cursor = s->tx.sent;
	if (!put(buf, len, &r))
		return (ENC_FULL);
	s->flags |= F_SHUT_SENT;
	s->ctrl &= (uint8_t)~C_SHUTDOWN;
	return (ENC_ON);
}

/* RESET or CLOSE: this side's last word on the stream. */
static enum enc
enc_term(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	struct stream *s = &e->s[id];
	struct wire_rec r;

	if (!(s->ctrl & (C_RESET | C_CLOSE)))
		return (ENC_ON);
	/* CLOSE waits for our SHUTDOWN (a graceful close implies it). */
	if ((s->ctrl & C_CLOSE) && !(s->flags & (F_SHUT_SENT | F_RESET)))
		return (ENC_WAIT);
	enc_rec(&r, s, (s->ctrl & C_RESET) ? WIRE_RESET : WIRE_CLOSE);
	r.reason = s->reason;
	if (!put(buf, len, &r))
		return (ENC_FULL);
	s->flags |= F_TERM_SENT;
	s->ctrl &= (uint8_t)~(C_RESET | C_CLOSE);
	maybe_release(e, id);
	return (ENC_ON);
}

/* A stream's records in protocol order. */
static enum enc (*const enc_steps[])(struct engine *, uint32_t, uint8_t *,
    size_t *) = {
	enc_resume, enc_resuming, enc_open, enc_open_ok, enc_ring_at,
	enc_ring, enc_credit, enc_shutdown, enc_term
};

/*
 * Encode the records stream ${id} has pending, in protocol order, as far
 * as they fit.  Returns 1 if all were encoded (or the rest must wait for
 * the peer), 0 if the SEND is full.
 */
static int
encode_stream(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	size_t i;
	enum enc step = ENC_ON;

	if (e->s[id].state == S_FREE)
		return (1);
	for (i = 0; step == ENC_ON &&
	    i < sizeof(enc_steps) / sizeof(enc_steps[0]); i++)
		step = enc_steps[i](e, id, buf, len);
	return (step != ENC_FULL);
}

/*
 * Our handshake message ends its SEND: what follows it may be sealed
 * (rstreamd-protocol(7), "Sealed records"), so nothing may share a SEND
 * with it.  The responder then posts nothing until the initiator's
 * message 3: before version 7 the initiator takes everything after
 * message 2 as sealed, and from 7 the confirmation must come next.
 */
static int
send_hs(struct engine *e, uint8_t *buf, size_t *len)
{
	struct wire_rec r;

	memset(&r, 0, sizeof(r));
	r.type = WIRE_HANDSHAKE;
	r.hs_len = (uint8_t)e->hs.out_len;
	memcpy(r.hs, e->hs.out, e->hs.out_len);
	if (put(buf, len, &r)) {
		e->hs.out_len = 0;
		if (!e->a.initiator && !e->peer_ok)
			e->hs.hold = 1;
	}
	memset(r.hs, 0, sizeof(r.hs));
	return (0);
}

/*
 * build_send's steps: each puts the link's records of one kind that are
 * due, as far as they fit.  They return 1, or 0 when the SEND must go as
 * it is (the RESUME header did not fit: nothing may pass it).
 */
static int
send_auth(struct engine *e, uint8_t *buf, size_t *len)
{
	struct wire_rec r;

	if (e->hs.out_len > 0)
		return (send_hs(e, buf, len));
	if (!e->auth_send)
		return (1);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_AUTH;
	e->a.prove(e->a.arg, r.proof);
	if (put(buf, len, &r))
		e->auth_send = 0;
	memset(r.proof, 0, sizeof(r.proof));
	return (1);
}

/* A record of ${type} that carries ${reason} alone; 1 if it fit. */
static int
put_reason(uint8_t *buf, size_t *len, uint8_t type, uint16_t reason)
{
	struct wire_rec r;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.reason = reason;
	return (put(buf, len, &r));
}

static int
send_goaway(struct engine *e, uint8_t *buf, size_t *len)
{

	if (e->ctl.goaway && !e->ctl.goaway_sent &&
	    put_reason(buf, len, WIRE_GOAWAY, e->ctl.goaway_reason))
		e->ctl.goaway_sent = 1;
	return (1);
}

static int
send_resume(struct engine *e, uint8_t *buf, size_t *len)
{
	struct wire_rec r;

	if (!e->res.hdr)
		return (1);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_RESUME;
	memcpy(r.token, e->res.token, WIRE_NONCE_LEN);
	memcpy(r.proof, e->res.proof, WIRE_AUTH_LEN);
	r.count = e->res.count;
	if (!put(buf, len, &r))
		return (0);
	e->res.hdr = 0;
	memset(e->res.proof, 0, sizeof(e->res.proof));
	memset(&r, 0, sizeof(r));	/* and the proof's copy */
	return (1);
}

static int
send_resume_denied(struct engine *e, uint8_t *buf, size_t *len)
{

	if (e->res.deny &&
	    put_reason(buf, len, WIRE_RESUME_DENIED, e->res.reason))
		e->res.deny = 0;
	return (1);
}

static int
send_resume_proof(struct engine *e, uint8_t *buf, size_t *len)
{
	struct wire_rec r;

	if (!e->res.prove)
		return (1);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_RESUME_PROOF;
	memcpy(r.proof, e->res.proof, WIRE_AUTH_LEN);
	if (put(buf, len, &r)) {
		e->res.prove = 0;
		e->res.proof_sent = 1;
		memset(e->res.proof, 0, sizeof(e->res.proof));
	}
	memset(&r, 0, sizeof(r));	/* and the proof's copy */
	return (1);
}

/* Server: the streams of a resume we no longer have (GONE answers). */
static int
send_gone(struct engine *e, uint8_t *buf, size_t *len)
{
	struct wire_rec r;
	uint32_t v;

	memset(&r, 0, sizeof(r));
	while (idq_len(&e->res.gone) > 0) {
		v = idq_peek(&e->res.gone);
		r.type = WIRE_RESUME_STREAM;
		r.stream = v >> 16;
		r.peer_stream = v & 0xffff;
		r.flags = WIRE_RS_GONE;
		if (!put(buf, len, &r))
			break;
		idq_drop(&e->res.gone);
	}
	return (1);
}

/* Version 5: a proven resume's streams are named before any OPEN. */
static int
send_naming(struct engine *e, uint8_t *buf, size_t *len)
{

	for (; e->res.naming && e->res.name < e->used; e->res.name++)
		if ((e->s[e->res.name].ctrl & C_RESUME) &&
		    !encode_stream(e, e->res.name, buf, len))
			break;
	if (e->res.naming && e->res.name >= e->used)
		e->res.naming = 0;
	return (1);
}

static int
send_refusals(struct engine *e, uint8_t *buf, size_t *len)
{
	struct wire_rec r;
	uint32_t v;

	memset(&r, 0, sizeof(r));
	while (idq_len(&e->refusals) > 0) {
		v = idq_peek(&e->refusals);
		r.type = WIRE_REFUSE;
		r.stream = v >> 16;
		r.reason = (uint16_t)v;
		if (!put(buf, len, &r))
			break;
		peer_bit(e, r.stream, 0);
		idq_drop(&e->refusals);
	}
	return (1);
}

/* The streams' records, in the order they asked. */
static int
send_streams(struct engine *e, uint8_t *buf, size_t *len)
{
	uint32_t id;

	while ((id = e->q[Q_CTRL].head) != NIL) {
		if (!encode_stream(e, id, buf, len))
			break;
		qpop(e, Q_CTRL);
		queue_drop(e, id);
	}
	return (1);
}

static int
send_keepalive(struct engine *e, uint8_t *buf, size_t *len)
{
	struct wire_rec r;

	if (*len == 0 && e->ctl.keepalive) {
		memset(&r, 0, sizeof(r));
		r.type = WIRE_KEEPALIVE;
		put(buf, len, &r);
	}
	return (1);
}

/* What a SEND carries, in this order. */
static int (*const send_steps[])(struct engine *, uint8_t *, size_t *) = {
	send_auth, send_goaway, send_resume, send_resume_denied,
	send_resume_proof, send_gone, send_naming, send_refusals,
	send_streams, send_keepalive
};

/* Build one SEND of control records into the slot for sequence ${seq}. */
static size_t
build_send(struct engine *e, uint64_t seq)
{
	uint8_t *buf = e->conf.ctrl_send +
	    (size_t)(seq % e->conf.sq_size) * WIRE_MSG_SIZE;
	size_t len = 0, i;
	struct wire_rec r;

	for (i = 0; i < sizeof(send_steps) / sizeof(send_steps[0]); i++)
		if (!send_steps[i](e, buf, &len))
			return (len);
	/*
	 * Report our receives whenever the threshold is reached, and always
	 * when this SEND takes the peer's last message credit: a message
	 * that empties our credit must refill the peer's, or both sides
	 * could end up waiting for each other.
	 */
	if (e->recv_posted - e->recv_reported >= e->msg_credit_threshold ||
	    (len > 0 && msg_avail(e) <= 1)) {
		memset(&r, 0, sizeof(r));
		r.type = WIRE_MSG_CREDIT;
		r.cursor = e->recv_posted;
		put(buf, &len, &r);
		e->recv_reported = e->recv_posted;
		e->st.msg_credit_updates++;
	}
	/* Any SEND proves the link alive as well as a KEEPALIVE would. */
	if (len > 0)
		e->ctl.keepalive = 0;
	return (len);
}

/*
 * Number the WR and decide whether it asks for a completion.  Only these
 * WRs need one, so that nothing waits for a completion that never comes
 * while the rest (a round trip's WRITE, typically) cost no completion
 * event: every signal_every-th WR (send queue space); every SEND (one
 * may end a stream, whose release waits for every WR it posted, and a
 * completion retires every WR before it); a WRITE after which more
 * than a quarter of its stream's send ring would be held by WRITEs no
 * signalled completion will free; and a WRITE that window_signal (or
 * ${force}: see take_write) asks for, so the window opens again.  The
 * ring rule keeps the application from waiting for ring space for ever:
 * once the signalled WRITE completes, at most a quarter of the ring is
 * held and the rest is free for new data, whose WRITEs are signalled in
 * turn.
 */
static void
emit(struct engine *e, struct engine_wr *w, uint32_t stream, uint64_t end,
    int force)
{
	struct wrinfo *wi = &e->wri[e->seq % e->conf.sq_size];
	struct stream *s = stream != NIL ? &e->s[stream] : NULL;
	uint32_t bytes = s != NULL ? w->len : 0;

	w->wr_id = e->seq;
	w->inlined = w->len <= e->conf.inline_size;
	w->signaled = 0;
	/* A WRITE's tag (SEND_IMM) asks for no completion of its own. */
	if ((s == NULL && w->op != ENGINE_WR_SEND_IMM) || force ||
	    e->last_signaled == UINT64_MAX ||
	    e->seq - e->last_signaled >= e->signal_every ||
	    (s != NULL && (end - s->tx.sig > s->tx.ring.size / 4 ||
	    window_signal(&e->win, bytes)))) {
		w->signaled = 1;
		e->last_signaled = e->seq;
		e->st.signaled++;
		if (s != NULL)
			s->tx.sig = end;
	}
	wi->stream = stream;
	wi->end = end;
	wi->bytes = bytes;
	wi->signaled = w->signaled;
	window_post(&e->win, bytes, w->signaled, &wi->mark);
	e->seq++;
	/* A plain WRITE takes no receive: its tag's SEND does. */
	if (w->op != ENGINE_WR_WRITE)
		e->msgs_sent++;
}

/*
 * The tag of the sealed WRITE just taken, as a SEND WITH IMMEDIATE right
 * after it: nothing may come between, since the receiver opens the data
 * where the stream's ring is when the tag arrives.
 */
static void
take_tag(struct engine *e, struct engine_wr *w)
{

	memset(w, 0, sizeof(*w));
	w->op = ENGINE_WR_SEND_IMM;
	w->len = WIRE_TAG_LEN;
	w->local_addr = e->conf.ctrl_send_addr +
	    (e->seq % e->conf.sq_size) * WIRE_MSG_SIZE;
	w->lkey = e->conf.ctrl_send_lkey;
	w->imm = e->seal.tag_imm;
	emit(e, w, NIL, 0, 0);
	e->seal.tag_due = 0;
}

/* A signalled WR is outstanding: its completion will come. */
static int
signal_pending(const struct engine *e)
{

	return (e->last_signaled != UINT64_MAX &&
	    e->last_signaled >= e->seq_done);
}

/*
 * Emit one WRITE WITH IMM for stream ${id}, of at most a chunk and what
 * is left of its quantum; 1 if it did, 0 if it could not, -1 if the
 * window is full.  A window that shrank below what is outstanding, with
 * no signalled WR among it, lets this WRITE through signalled: a
 * completion must come to open it.
 */
static int
take_write(struct engine *e, uint32_t id, struct engine_wr *w)
{
	struct stream *s = &e->s[id];
	const struct engine_ring *src = &s->tx.ring;
	uint64_t n, cur = s->tx.sent;
	int force = 0;

	n = s->tx.app - cur;
	if (n > s->tx.peer_ring.size - (cur - s->tx.peer))
		n = s->tx.peer_ring.size - (cur - s->tx.peer);
	if (n > e->win.chunk)
		n = e->win.chunk;
	if (n > s->deficit)
		n = s->deficit;
	/* Bytes from before a resize are in the old ring, up to the switch. */
	if (s->tx.old.size != 0 && cur < s->tx.switch_at) {
		src = &s->tx.old;
		if (n > s->tx.switch_at - cur)
			n = s->tx.switch_at - cur;
	}
	/* Both rings are powers of two: the smaller one's wrap is the cut. */
	n = ring_contig(src->size, cur, n);
	n = ring_contig(s->tx.peer_ring.size, cur, n);
	if (n == 0)
		return (0);
	if (!window_allows(&e->win, n)) {
		if (signal_pending(e))
			return (-1);
		force = 1;
	}
	memset(w, 0, sizeof(*w));
	w->op = e->seal.tx ? ENGINE_WR_WRITE : ENGINE_WR_WRITE_IMM;
	w->len = (uint32_t)n;
	w->local_addr = src->addr + ring_off(src->size, cur);
	w->lkey = src->key;
	w->remote_addr = s->tx.peer_ring.addr + ring_off(s->tx.peer_ring.size, cur);
	w->rkey = s->tx.peer_ring.rkey;
	w->imm = wire_imm_encode(s->peer_id, (uint32_t)n);
	s->tx.sent += n;
	s->deficit -= (uint32_t)n;
	s->tx.wr_out++;
	emit(e, w, id, s->tx.sent, force);
	seal_write(e, w);
	e->st.writes++;
	e->st.bytes_tx += n;
	return (1);
}

/* One SEND of the control records pending; 0 if there were none. */
static int
take_send(struct engine *e, struct engine_wr *w)
{
	size_t len = build_send(e, e->seq);

	if (len == 0)
		return (0);
	memset(w, 0, sizeof(*w));
	w->op = ENGINE_WR_SEND;
	w->len = (uint32_t)len;
	w->local_addr = e->conf.ctrl_send_addr +
	    (e->seq % e->conf.sq_size) * WIRE_MSG_SIZE;
	w->lkey = e->conf.ctrl_send_lkey;
	emit(e, w, NIL, 0, 0);
	seal_send(e, w);
	if (e->hs.seal_after) {
		e->hs.seal_after = 0;
		engine_seal_tx(e);
	}
	e->st.sends++;
	return (1);
}

/*
 * The next WRITE of the scheduler: deficit round robin in bytes over the
 * streams ready to send (Q_TX, in the order they became ready).  The
 * stream at the head gets a quantum of chunk * weight bytes when its turn
 * starts and keeps the head until it has written the quantum or has
 * nothing ready; then it goes to the tail if it is still ready, and its
 * unused quantum lapses.  So a stream that becomes ready waits for at
 * most one quantum of each stream ahead of it, and a 64-byte stream
 * never waits behind a neighbour's whole ring.  Returns 1 if it emitted
 * ${w}, 0 if no stream is ready, -1 if the window is full.
 */
static int
take_data(struct engine *e, struct engine_wr *w)
{
	struct stream *s;
	uint32_t id;
	int r;

	while ((id = e->q[Q_TX].head) != NIL) {
		s = &e->s[id];
		r = 0;
		if (tx_ready(s)) {
			if (s->deficit == 0)
				s->deficit = e->win.chunk *
				    (s->weight ? s->weight : 1u);
			if ((r = take_write(e, id, w)) < 0) {
				e->st.stall_window++;
				return (-1);
			}
		}
		if (r == 0 || s->deficit == 0 || !tx_ready(s)) {
			qpop(e, Q_TX);
			if (s->deficit == 0)
				s->backlogged = 1;
			else if (s->tx.app == s->tx.sent)
				s->backlogged = 0;
			s->deficit = 0;
			if (r != 0 && tx_ready(s)) {
				qpush(e, Q_TX, id);
			} else {
				if (s->state == S_OPEN &&
				    s->tx.app > s->tx.sent)
					e->st.stall_ring++;
				queue_drop(e, id);
			}
		}
		wait_update(e, id);
		check_shutdown(e, id);
		if (r > 0)
			return (1);
	}
	return (0);
}

/*
 * Control records go first, always: they are few and small, and a
 * credit, open or close that waited behind data would stall a stream
 * (or both sides) for as long as the data takes.  Data leaves the last
 * message credit for a credit-bearing SEND, and the window (lib/window.h)
 * bounds the data bytes outstanding, so a SEND posted later waits behind
 * at most a window's worth.
 */
int
engine_take_wrs(struct engine *e, struct engine_wr *wrs, int max)
{
	int n = 0, r;

	if (!e->up || e->failed)
		return (0);
	while (n < max && !e->hs.hold) {
		if (e->seq - e->seq_done >= e->conf.sq_size) {
			e->st.stall_sq++;
			break;
		}
		if (e->seal.tag_due) {
			take_tag(e, &wrs[n++]);
			continue;
		}
		if (ctrl_pending(e)) {
			if (msg_avail(e) == 0) {
				e->st.stall_msg++;
				break;
			}
			if (take_send(e, &wrs[n])) {
				n++;
				continue;
			}
		}
		if (e->q[Q_TX].head == NIL)
			break;
		if (msg_avail(e) < 2) {
			e->st.stall_msg++;
			break;
		}
		/* A sealed WRITE needs room for its tag's SEND too. */
		if (e->seal.tx && e->seq - e->seq_done + 2 > e->conf.sq_size) {
			e->st.stall_sq++;
			break;
		}
		if ((r = take_data(e, &wrs[n])) <= 0)
			break;
		n++;
	}
	return (n);
}

int
engine_next_event(struct engine *e, struct engine_event *ev)
{
	struct stream *s;
	uint32_t id;

	while ((id = qpop(e, Q_EV)) != NIL) {
		s = &e->s[id];
		if (s->ev == 0) {
			queue_drop(e, id);
			continue;
		}
		ev->stream = id;
		ev->flags = s->ev;
		ev->reason = s->ev_reason;
		ev->user = s->user;
		s->ev = 0;
		/* Popped from the event queue: slot_free may reuse it. */
		if ((ev->flags & ENGINE_EV_RELEASED) && s->state != S_FREE)
			slot_free(e, id);
		return (1);
	}
	return (0);
}

/* ---------------------------------------------------------------- streams */

static int
rings_ok(const struct engine_ring *tx, const struct engine_ring *rx)
{

	return (tx != NULL && rx != NULL && ring_size_check(tx->size) == NULL &&
	    ring_size_check(rx->size) == NULL);
}

int
engine_open(struct engine *e, const char *tunnel,
    const struct engine_ring *tx, const struct engine_ring *rx, void *user)
{
	uint32_t id;
	struct stream *s;

	if (!rings_ok(tx, rx) || tunnel == NULL ||
	    !wire_name_valid(tunnel, strnlen(tunnel, WIRE_NAME_MAX + 1)))
		return (ENGINE_EINVAL);
	if (!e->up || e->failed || e->ctl.peer_goaway || e->ctl.goaway ||
	    !engine_authenticated(e))
		return (ENGINE_EDOWN);
	if ((id = slot_alloc(e)) == NIL)
		return (ENGINE_ELIMIT);
	s = &e->s[id];
	s->state = S_OPENING;
	s->tx.ring = *tx;
	s->rx.ring = *rx;
	s->user = user;
	s->flags = F_HAS_RINGS;
	strcpy(s->name, tunnel);
	ctrl(e, id, C_OPEN);
	e->st.streams_opened++;
	return ((int)id);
}

unsigned
engine_version(const struct engine *e)
{

	return (e->up ? e->ver_link : 0);
}

int
engine_can_origin(const struct engine *e)
{

	return (e->can_origin);
}

int
engine_set_origin(struct engine *e, uint32_t id,
    const struct wire_origin *origin)
{
	struct stream *s = live(e, id);

	if (s == NULL || s->state != S_OPENING || !(s->ctrl & C_OPEN) ||
	    origin->family > WIRE_FAM_MAX)
		return (ENGINE_EINVAL);
	s->origin = *origin;
	s->ctrl |= C_ORIGIN;
	return (0);
}

const struct wire_origin *
engine_origin(const struct engine *e, uint32_t id)
{

	const struct stream *s = held(e, id);

	if (s == NULL || s->origin.family == WIRE_FAM_UNSPEC)
		return (NULL);
	return (&s->origin);
}

const char *
engine_tunnel(const struct engine *e, uint32_t id)
{

	const struct stream *s = live(e, id);

	return (s != NULL ? s->name : NULL);
}

int
engine_accept(struct engine *e, uint32_t id, const struct engine_ring *tx,
    const struct engine_ring *rx, void *user)
{
	struct stream *s = live(e, id);

	if (s == NULL || s->state != S_INCOMING || !rings_ok(tx, rx))
		return (ENGINE_EINVAL);
	if (e->failed)
		return (ENGINE_EDOWN);
	s->state = S_OPEN;
	s->tx.ring = *tx;
	s->rx.ring = *rx;
	s->user = user;
	s->flags |= F_HAS_RINGS;
	ctrl(e, id, C_OPEN_OK);
	e->st.streams_accepted++;
	return (0);
}

int
engine_refuse(struct engine *e, uint32_t id, uint16_t reason)
{
	struct stream *s = live(e, id);

	if (s == NULL || s->state != S_INCOMING)
		return (ENGINE_EINVAL);
	if (e->failed)
		return (ENGINE_EDOWN);
	/* The refusal queue keeps the peer id reserved until it is sent. */
	(void)idq_push(&e->refusals, s->peer_id << 16 | reason);
	s->flags &= (uint16_t)~F_PEER_MAPPED;
	s->ev = 0;
	e->st.streams_refused++;
	slot_free(e, id);
	return (0);
}

/* A stream the application may still act on. */
static struct stream *
app_stream(struct engine *e, uint32_t id)
{
	struct stream *s = live(e, id);

	if (s == NULL || (s->flags & F_APP_CLOSED) || s->state == S_INCOMING)
		return (NULL);
	return (s);
}

/*
 * Closing a stream that already ended (its RELEASED event is on the way)
 * is not an error: the application may not have seen the event yet.
 */
static int
dead_close(struct engine *e, uint32_t id)
{
	struct stream *s = held(e, id);

	if (s == NULL || s->state != S_DEAD)
		return (0);
	s->flags |= F_APP_CLOSED;
	s->ev &= ENGINE_EV_RELEASED;
	return (1);
}

uint32_t
engine_tx_space(struct engine *e, uint32_t id, uint32_t *off)
{
	struct stream *s = app_stream(e, id);
	uint64_t n;

	*off = 0;
	if (s == NULL || (s->flags & (F_APP_SHUT | F_RESET | F_TERM_SENT)))
		return (0);
	n = ring_free(s->tx.ring.size, s->tx.app, tx_base(e, s));
	if (n == 0) {
		tx_grow(e, id);
		n = ring_free(s->tx.ring.size, s->tx.app, tx_base(e, s));
	}
	*off = ring_off(s->tx.ring.size, s->tx.app);
	n = ring_contig(s->tx.ring.size, s->tx.app, n);
	if (n == 0)
		s->flags |= F_WANT_WR;
	return ((uint32_t)n);
}

int
engine_tx_commit(struct engine *e, uint32_t id, uint32_t n)
{
	struct stream *s = app_stream(e, id);

	if (s == NULL || (s->flags & (F_APP_SHUT | F_RESET | F_TERM_SENT)) ||
	    n > ring_contig(s->tx.ring.size, s->tx.app,
	    ring_free(s->tx.ring.size, s->tx.app, tx_base(e, s))))
		return (ENGINE_EINVAL);
	s->tx.app += n;
	tx_queue(e, id);
	wait_update(e, id);
	return (0);
}

uint32_t
engine_rx_data(struct engine *e, uint32_t id, uint32_t *off)
{
	struct stream *s = app_stream(e, id);
	const struct engine_ring *ring;
	uint64_t end;

	*off = 0;
	if (s == NULL || (s->flags & F_RESET))
		return (0);
	ring = rx_read_ring(s, &end);
	*off = ring_off(ring->size, s->rx.cons);
	return ((uint32_t)ring_contig(ring->size, s->rx.cons,
	    ring_used(end, s->rx.cons)));
}

int
engine_rx_consume(struct engine *e, uint32_t id, uint32_t n)
{
	struct stream *s = app_stream(e, id);
	const struct engine_ring *ring;
	uint64_t end;

	if (s == NULL || (s->flags & F_RESET))
		return (ENGINE_EINVAL);
	ring = rx_read_ring(s, &end);
	if (n > ring_contig(ring->size, s->rx.cons, ring_used(end, s->rx.cons)))
		return (ENGINE_EINVAL);
	s->rx.cons += n;
	if (s->rx.old.size != 0 && s->rx.cons == s->rx.switch_at)
		ring_drop(e, s, &s->rx.old);
	/*
	 * Return credit once a quarter of the ring was consumed; a sender
	 * stalls only on a full ring, and a fully read full ring always
	 * crosses this, so coalescing never deadlocks.
	 */
	if (!(s->flags & (F_PEER_SHUT | F_TERM_SENT)) &&
	    s->rx.cons - s->rx.rep >= s->rx.ring.size / 4)
		ctrl(e, id, C_CREDIT);
	check_eof(e, id);
	return (0);
}

int
engine_shutdown(struct engine *e, uint32_t id)
{
	struct stream *s = app_stream(e, id);

	if (s == NULL)
		return (ENGINE_EINVAL);
	s->flags |= F_APP_SHUT;
	check_shutdown(e, id);
	return (0);
}

int
engine_reset(struct engine *e, uint32_t id, uint16_t reason)
{
	struct stream *s = live(e, id);

	if (dead_close(e, id))
		return (0);
	if (s == NULL || (s->flags & F_APP_CLOSED))
		return (ENGINE_EINVAL);
	if (s->state == S_INCOMING)
		return (engine_refuse(e, id, reason));
	s->flags |= F_APP_CLOSED;
	s->ev &= ENGINE_EV_RELEASED;
	s->reason = reason;
	if (e->failed) {
		/* A suspended stream the application gave up on goes now. */
		if (s->flags & F_SUSP)
			release_now(e, id, reason);
		return (0);
	}
	if (s->state == S_OPENING) {
		/* The peer does not know our id's partner yet: wait for it. */
		s->flags |= F_ABORT;
		return (0);
	}
	if (s->flags & (F_RESET | F_TERM_SENT))
		return (0);	/* already ending */
	s->flags |= F_RESET;
	s->tx.app = s->tx.sent;
	s->rx.cons = s->rx.tail;
	s->ctrl &= (uint8_t)~(C_CREDIT | C_SHUTDOWN | C_CLOSE);
	e->st.streams_reset++;
	ctrl(e, id, C_RESET);
	return (0);
}

int
engine_close(struct engine *e, uint32_t id)
{
	struct stream *s = live(e, id);

	if (dead_close(e, id))
		return (0);
	if (s == NULL || (s->flags & F_APP_CLOSED))
		return (ENGINE_EINVAL);
	if (s->state != S_OPEN || !(s->flags & F_EOF_DONE) ||
	    (s->flags & F_RESET))
		return (engine_reset(e, id, WIRE_REASON_RESET));
	s->flags |= F_APP_CLOSED | F_APP_SHUT;
	s->ev &= ENGINE_EV_RELEASED;
	if (e->failed)
		return (0);
	check_shutdown(e, id);
	ctrl(e, id, C_CLOSE);
	return (0);
}

void
engine_keepalive(struct engine *e)
{

	e->ctl.keepalive = 1;
}

void
engine_goaway(struct engine *e, uint16_t reason)
{

	e->ctl.goaway = 1;
	e->ctl.goaway_reason = reason;
}

int
engine_peer_goaway(const struct engine *e)
{

	return (e->ctl.peer_goaway);
}

int
engine_idle(const struct engine *e)
{

	/* WRs after the last signalled one never report: none is awaited. */
	return ((e->last_signaled == UINT64_MAX ||
	    e->last_signaled < e->seq_done) && !ctrl_pending(e) &&
	    e->q[Q_TX].head == NIL);
}

uint32_t
engine_active(const struct engine *e)
{

	return (e->st.streams_active);
}

void
engine_stats(const struct engine *e, struct engine_stats *st)
{

	*st = e->st;
	st->peer_credits = (uint32_t)msg_avail(e);
	st->sq_depth = (uint32_t)(e->seq - e->seq_done);
	st->inflight = e->win.inflight;
	st->window = e->win.cap;
	st->rtt_ns = e->win.rtt_min;
	st->rate = e->win.rate_max;
	st->sealed = (uint32_t)engine_sealed(e);
}

int
engine_stream_stats(const struct engine *e, uint32_t id,
    struct engine_stream_stats *st)
{
	const struct stream *s;
	uint64_t now = e->win.now;

	memset(st, 0, sizeof(*st));
	if ((s = live(e, id)) == NULL)
		return (-1);
	st->queued = s->tx.app - s->tx.sent;
	st->unacked = s->tx.sent - s->tx.peer;
	st->wait_credit_ns = s->wait_credit;
	st->wait_sq_ns = s->wait_sq;
	if (s->wait == W_CREDIT && now > s->wait_at)
		st->wait_credit_ns += now - s->wait_at;
	else if (s->wait == W_SQ && now > s->wait_at)
		st->wait_sq_ns += now - s->wait_at;
	return (0);
}

void
engine_clock(struct engine *e, uint64_t now)
{

	window_clock(&e->win, now);
}

int
engine_set_weight(struct engine *e, uint32_t id, uint32_t weight)
{
	struct stream *s = live(e, id);

	if (s == NULL || weight < 1 || weight > ENGINE_WEIGHT_MAX)
		return (ENGINE_EINVAL);
	s->weight = (uint8_t)weight;
	return (0);
}

int
engine_data_busy(struct engine *e)
{
	int busy = e->q[Q_TX].head != NIL || e->st.bytes_tx != e->busy_mark;

	e->busy_mark = e->st.bytes_tx;
	return (busy);
}

void
engine_window_share(struct engine *e, uint32_t permille)
{

	window_share(&e->win, permille);
}

/* Append ${word} to ${buf}, after ${sep} unless it is the first. */
static void
str_add(char *buf, size_t size, size_t *n, const char *sep, const char *word)
{
	int k;

	if (*n >= size)
		return;
	k = snprintf(buf + *n, size - *n, "%s%s", *n > 0 ? sep : "", word);
	if (k > 0)
		*n += (size_t)k;
}

const char *
engine_stream_flags_str(const struct engine *e, uint32_t id, char *buf,
    size_t size)
{
	const struct stream *s;
	const char *sep = " ";
	size_t n = 0;
	int i;

	if (size == 0)
		return (buf);
	buf[0] = '\0';
	if (id >= e->conf.max_streams) {
		str_add(buf, size, &n, "", "?");
		return (buf);
	}
	/* Slots above used were never touched: free, all zero. */
	s = id < e->used ? &e->s[id] : NULL;
	str_add(buf, size, &n, "", state_names[s != NULL ? s->state : S_FREE]);
	for (i = 0; s != NULL && i < F_COUNT; i++)
		if (s->flags & (1u << i)) {
			str_add(buf, size, &n, sep, flag_names[i]);
			sep = "|";
		}
	return (buf);
}

void
engine_set_resume(struct engine *e, const struct engine_resume *r)
{

	e->r = *r;
}

int
engine_can_resume(const struct engine *e)
{

	return (e->can_resume);
}

int
engine_keep(struct engine *e, uint32_t id)
{
	struct stream *s = live(e, id);

	if (s == NULL || !e->conf.resume || s->tx.sent != 0 ||
	    (s->state != S_OPENING && s->state != S_OPEN))
		return (ENGINE_EINVAL);
	s->flags |= F_KEEP_WANT;
	if (s->state == S_OPEN)
		keep_decide(e, s);
	return (0);
}

int
engine_kept(const struct engine *e, uint32_t id)
{

	const struct stream *s = held(e, id);

	return (s != NULL && (s->flags & F_KEEP) != 0);
}

uint32_t
engine_suspended(const struct engine *e)
{
	uint32_t id, n = 0;

	for (id = 0; id < e->used; id++)
		if (e->s[id].state == S_OPEN &&
		    (e->s[id].flags & (F_SUSP | F_RESUMING)))
			n++;
	return (n);
}

int
engine_resume(struct engine *e, struct engine *old,
    const uint8_t token[WIRE_NONCE_LEN], const uint8_t proof[WIRE_AUTH_LEN])
{
	uint32_t n, id;

	if (!e->up || e->failed || !engine_authenticated(e))
		return (ENGINE_EDOWN);
	if (!e->can_resume || e->res.sent || e->res.seen ||
	    e->st.streams_active != 0 || old == e || !old->failed ||
	    e->r.adopt == NULL)
		return (ENGINE_EINVAL);
	n = adopt_all(e, old);
	/* From version 5 the streams are named once the peer proved the
	 * secret (rec_resume_proof). */
	e->res.proven = !e->can_res_proof;
	if (e->res.proven)
		RESUMING_EACH(e, id)
			ctrl(e, id, C_RESUME);
	memcpy(e->res.token, token, WIRE_NONCE_LEN);
	memcpy(e->res.proof, proof, WIRE_AUTH_LEN);
	e->res.count = (uint16_t)engine_suspended(e);
	e->res.wait = e->res.count;
	e->res.sent = 1;
	e->res.hdr = 1;
	return ((int)n);
}

uint32_t
engine_resume_pending(const struct engine *e)
{

	if (e->res.sent)
		return (e->res.wait);
	return (e->res.seen ? e->res.left : 0);
}

int
engine_resume_proven(const struct engine *e)
{

	return (!e->res.sent || e->res.proven || e->res.denied || e->failed);
}

int
engine_resume_confirmed(const struct engine *e)
{

	return (e->res.seen && !e->res.refused && e->res.left < e->res.count);
}

int
engine_abandon_stream(struct engine *e, uint32_t id, uint16_t reason)
{

	const struct stream *s = live(e, id);

	if (s == NULL || s->state != S_OPEN || !(s->flags & F_SUSP))
		return (ENGINE_EINVAL);
	e->st.streams_not_resumed++;
	release_now(e, id, reason);
	return (0);
}

void
engine_abandon(struct engine *e, uint16_t reason)
{
	uint32_t id;

	for (id = 0; id < e->used; id++)
		(void)engine_abandon_stream(e, id, reason);
}

void
engine_set_mem(struct engine *e, const struct engine_mem *mem)
{

	e->mem = *mem;
}

int
engine_can_resize(const struct engine *e)
{

	return (e->can_resize);
}

int
engine_resume_settled(const struct engine *e)
{

	/* rec_resume's test: no RESUME may come any more. */
	return (!e->can_resume || e->res.seen || e->res.sent ||
	    e->opened_any || e->r.find == NULL);
}

int
engine_ring_limits(struct engine *e, uint32_t id, uint32_t tx_max,
    uint32_t rx_max)
{
	struct stream *s = live(e, id);

	if (s == NULL || !e->can_resize ||
	    (s->state != S_OPEN && s->state != S_OPENING) ||
	    s->tx.sent != 0 || s->rx.tail != 0 ||
	    ring_size_check(tx_max) != NULL || ring_size_check(rx_max) != NULL ||
	    tx_max < s->tx.ring.size || rx_max < s->rx.ring.size)
		return (ENGINE_EINVAL);
	s->tx.min = s->tx.ring.size;
	s->rx.min = s->rx.ring.size;
	s->tx.max = tx_max;
	s->rx.max = rx_max;
	return (0);
}

void
engine_trim(struct engine *e)
{
	struct stream *s;
	uint32_t id;

	for (id = 0; id < e->used; id++) {
		s = &e->s[id];
		if (s->tx.max == 0 || !resizable(e, s))
			continue;
		/* (Its last WRITEs may complete only with a later one.) */
		if (s->tx.ring.size > s->tx.min && s->tx.old.size == 0 &&
		    s->tx.app == s->tx.seen && s->tx.sent == s->tx.app)
			tx_resize(e, id, s->tx.min);
		if (s->rx.ring.size > s->rx.min && s->rx.next.size == 0 &&
		    s->rx.old.size == 0 && !(s->flags & F_PEER_SHUT) &&
		    s->rx.tail == s->rx.seen && s->rx.cons == s->rx.tail)
			rx_resize(e, id, s->rx.min);
		s->tx.seen = s->tx.app;
		s->rx.seen = s->rx.tail;
	}
}

/*
 * Our RING for stream ${s} went out and its RING_AT has not come: a peer
 * answers at once (it may write nothing for the stream until it does), so
 * one that has not by the ENGINE_RING_AT_TICKS-th tick never will; and
 * both rings stay until it does or the link ends.
 */
static int
ring_at_overdue(struct stream *s)
{

	return (s->state == S_OPEN && s->rx.next.size != 0 &&
	    !(s->rs & RS_RING) && !(s->flags & (F_TERM_SENT | F_TERM_RECV)) &&
	    ++s->ring_ticks >= ENGINE_RING_AT_TICKS);
}

void
engine_tick(struct engine *e)
{
	uint32_t id;

	if (e->failed)
		return;
	for (id = 0; id < e->used; id++) {
		if (ring_at_overdue(&e->s[id])) {
			fail(e, ENGINE_ERR_PROTOCOL, "no RING_AT for stream %u: "
			    "the peer left its RING unanswered for %d ticks",
			    (unsigned)id, ENGINE_RING_AT_TICKS);
			break;
		}
	}
	fail_finish(e);
}

uint64_t
engine_tx_base(const struct engine *e, uint32_t id)
{

	const struct stream *s = held(e, id);

	return (s != NULL ? s->tx.ring.addr : 0);
}

uint64_t
engine_rx_base(const struct engine *e, uint32_t id)
{
	const struct stream *s = held(e, id);
	uint64_t end;

	return (s != NULL ? rx_read_ring(s, &end)->addr : 0);
}

int
engine_rings(const struct engine *e, uint32_t id, struct engine_ring *tx,
    struct engine_ring *rx)
{

	const struct stream *s = held(e, id);

	if (s == NULL)
		return (-1);
	*tx = s->tx.ring;
	*rx = s->rx.ring;
	return (0);
}
