/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * engine_resume: a failed link's kept streams suspended (eng_fail_finish),
 * adopted by a new link and resumed there: the RESUME records and their
 * answers.  Layer 2: it calls the layers below.
 */
#include <string.h>

#include "engine.h"
#include "engine_int.h"
#include "idq.h"
#include "wire.h"

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

static void
suspend(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	s->flags &= (uint16_t)~F_RESUMING;
	s->flags |= F_SUSP;
	/* The queue pair is gone: nothing it held reads our rings any more. */
	s->tx.wr_out = 0;
	e->st.streams_suspended++;
	eng_event(e, id, ENGINE_EV_SUSPENDED);
}

/* End stream ${id} here and now: RELEASED (and RESET unless closed). */
void
eng_release_now(struct engine *e, uint32_t id, uint16_t reason)
{
	struct stream *s = &e->s[id];

	if (!(s->flags & F_APP_CLOSED) && !(s->flags & F_RESET)) {
		s->ev_reason = reason;
		eng_event(e, id, ENGINE_EV_RESET);
		e->st.streams_reset++;
	}
	if (s->flags & F_PEER_MAPPED) {
		eng_peer_bit(e, s->peer_id, 0);
		s->flags &= (uint16_t)~F_PEER_MAPPED;
	}
	s->flags &= (uint16_t)~(F_SUSP | F_RESUMING);
	s->flags |= F_RESET;
	s->ctrl = 0;
	s->state = S_DEAD;
	s->ev |= ENGINE_EV_RELEASED;
	eng_qpush(e, Q_EV, id);
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
		if (s->state == S_FREE && !eng_queued(s)) {
			s->next_free = e->free_head;
			e->free_head = i - 1;
		}
	}
}

/* A private ring copy of ${size} bytes moves from ${old} to ${e}. */
static void
private_move(struct engine *e, struct engine *old, uint32_t size)
{

	old->st.rx_private -= size;
	e->st.rx_private += size;
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
	/* Its bytes still sealed: a WRITE of the old link may read them. */
	if (o->tx.unrestored || s->state != S_FREE || eng_queued(s) ||
	    ((o->flags & F_PEER_MAPPED) && eng_peer_bit_isset(e, o->peer_id)))
		return (0);
	*s = *o;
	memset(s->in, 0, sizeof(s->in));
	/* This link's lanes start afresh: nothing of it is outstanding. */
	s->lane = 0;
	s->lseq = 0;
	if (e->used <= id)
		e->used = id + 1;	/* rebuild_free lists the slots below */
	s->next_free = NIL;
	s->flags &= (uint16_t)~F_SUSP;
	s->flags |= F_RESUMING;
	s->ctrl &= (uint8_t)~(C_OPEN | C_OPEN_OK | C_RESUME);
	e->st.streams_active++;
	if (s->flags & F_PEER_MAPPED)
		eng_peer_bit(e, s->peer_id, 1);
	if (s->ev)
		eng_qpush(e, Q_EV, id);
	o->state = S_FREE;
	o->flags = 0;
	o->ev = 0;
	/* Its private copies went with it. */
	if (o->rx.clear != NULL)
		private_move(e, old, o->rx.ring.size);
	if (o->rx.old_clear != NULL)
		private_move(e, old, o->rx.old.size);
	o->rx.clear = o->rx.old_clear = NULL;
	old->st.streams_active--;
	tx = s->tx.ring;
	rx = s->rx.ring;
	if (e->r.adopt(e->r.arg, id, s->user, &tx, &rx) != 0 ||
	    tx.size != s->tx.ring.size || rx.size != s->rx.ring.size) {
		eng_release_now(e, id, WIRE_REASON_INTERNAL);
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
		return (eng_violation(e, "stream %u resumed with a %u-byte "
		    "ring instead of %u", (unsigned)id, (unsigned)r->ring.size,
		    (unsigned)s->tx.peer_ring.size));
	if (r->consumed < s->tx.peer || r->cursor > s->tx.sent)
		return (eng_violation(e, "stream %u resumed at %llu/%llu, "
		    "outside the %llu..%llu bytes sent", (unsigned)id,
		    (unsigned long long)r->consumed,
		    (unsigned long long)r->cursor,
		    (unsigned long long)s->tx.peer,
		    (unsigned long long)s->tx.sent));
	if (((r->flags & WIRE_RS_SHUT) && (!(s->flags & F_SHUT_SENT) ||
	    r->cursor != s->tx.app)) ||
	    ((r->flags & WIRE_RS_CLOSE) && !(s->flags & F_TERM_SENT)))
		return (eng_violation(e, "stream %u resumed with a terminal "
		    "record never sent", (unsigned)id));
	e->st.resumed_bytes += s->tx.sent - r->cursor;
	s->tx.peer_ring = r->ring;
	s->tx.peer = r->consumed;
	s->tx.sent = s->tx.done = s->tx.sig = r->cursor;
	/* A SHUTDOWN follows the bytes written again (eng_check_shutdown). */
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
	eng_event(e, id, ENGINE_EV_RESUMED);
	if (s->flags & F_WANT_WR) {
		s->flags &= (uint16_t)~F_WANT_WR;
		eng_event(e, id, ENGINE_EV_WRITABLE);
	}
	if (s->ctrl)
		eng_qpush(e, Q_CTRL, id);
	eng_tx_queue(e, id);
	eng_check_shutdown(e, id);
	eng_check_eof(e, id);
	eng_maybe_release(e, id);
	return (0);
}

/* Server: the RESUME_STREAMs are all in; what the peer did not name ends. */
static void
resume_finish(struct engine *e)
{
	uint32_t id;

	RESUMING_EACH(e, id) {
		e->st.streams_not_resumed++;
		eng_release_now(e, id, WIRE_REASON_NOT_RESUMED);
	}
}

/*
 * Client: the server proved it holds the secret, or (below version 5,
 * where it proves nothing) need not; a refusal there may come after.
 */
static int
ask_proven(const struct engine *e)
{

	return (e->res.ask == RES_NAMING || e->res.ask == RES_PROVEN ||
	    (e->res.ask == RES_DENIED && !e->can_res_proof));
}

/* Server: the peer asks for a failed link's streams. */
int
eng_rec_resume(struct engine *e, const struct wire_rec *r)
{
	struct engine *old;
	uint16_t reason = WIRE_REASON_DENIED;

	if (engine_resume_settled(e))
		return (eng_violation(e, "unexpected RESUME"));
	/* From version 10 the count comes after our proof (RESUME_COUNT):
	 * a peer that proved nothing learns nothing of it. */
	if (e->can_res_count && r->count != 0)
		return (eng_violation(e, "RESUME with a count (%u) on a link "
		    "of version 10 or later", (unsigned)r->count));
	e->res.left = e->res.count = r->count;
	old = e->r.find(e->r.arg, r->token, r->proof, e->res.proof, &reason);
	if (old == NULL || old == e || !old->failed) {
		memset(e->res.proof, 0, sizeof(e->res.proof));
		e->res.serve = RES_DENYING;
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
	e->res.serve = e->can_res_proof ? RES_PROVING : RES_TAKEN;
	e->res.count_wait = e->can_res_count;
	if (e->res.left == 0 && !e->res.count_wait)
		resume_finish(e);
	return (0);
}

/* Server, version 10: the peer checked our proof and says how many
 * streams it names. */
int
eng_rec_resume_count(struct engine *e, const struct wire_rec *r)
{

	if (!e->res.count_wait || e->res.serve != RES_TAKEN)
		return (eng_violation(e, "unexpected RESUME_COUNT"));
	e->res.count_wait = 0;
	e->res.left = e->res.count = r->count;
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
		eng_maybe_release(e, id);
		return;
	}
	eng_release_now(e, id, WIRE_REASON_NOT_RESUMED);
}

int
eng_rec_resume_stream(struct engine *e, const struct wire_rec *r)
{
	struct stream *s = eng_live(e, r->stream);
	uint32_t id = r->stream;

	if (e->res.ask != RES_ASK_NONE) {
		/* The server's answer for one of ours: not before its proof. */
		if (!ask_proven(e))
			return (eng_violation(e, "RESUME_STREAM before "
			    "RESUME_PROOF"));
		if (e->res.ask == RES_DENIED || s == NULL ||
		    !(s->flags & F_RESUMING) || !(s->flags & F_PEER_MAPPED) ||
		    s->peer_id != r->peer_stream)
			return (eng_violation(e, "RESUME_STREAM for stream %u, "
			    "which is not resuming", (unsigned)id));
		e->res.wait--;
		if (r->flags & WIRE_RS_GONE) {
			resume_gone(e, id);
			return (0);
		}
		return (apply_resume(e, id, r));
	}
	if (e->res.serve == RES_SERVE_NONE || e->res.left == 0 ||
	    (r->flags & WIRE_RS_GONE) || e->res.serve == RES_PROVING)
		return (eng_violation(e, "unexpected RESUME_STREAM"));
	e->res.left--;
	if (e->res.serve == RES_TAKEN) {
		if (s != NULL && (s->flags & F_RESUMING) &&
		    (s->flags & F_PEER_MAPPED) &&
		    s->peer_id == r->peer_stream && !(s->flags & F_RESET)) {
			if (apply_resume(e, id, r))
				return (-1);
			eng_ctrl(e, id, C_RESUME);
		} else {
			if (s != NULL && (s->flags & F_RESUMING) &&
			    s->peer_id == r->peer_stream)
				eng_release_now(e, id, WIRE_REASON_RESET);
			/* Bounded: at most the RESUME's count. */
			(void)idq_push(&e->res.gone,
			    (uint32_t)r->peer_stream << 16 | r->stream);
		}
	}
	if (e->res.left == 0)
		resume_finish(e);
	return (0);
}

/*
 * Client: the server refused the resume.  From version 5 it refuses
 * before it proved anything, so the refusal may come from a peer that
 * never held the streams (another daemon at one of the tunnel's
 * addresses, or a forged record): the embedder may keep them, and then
 * the link ends with them suspended again.  Else every resuming stream
 * ends.
 */
int
eng_rec_resume_denied(struct engine *e, const struct wire_rec *r)
{
	uint32_t id;

	/* Once the peer proved the secret, it has taken the streams. */
	if (e->res.ask == RES_ASK_NONE || e->res.ask == RES_DENIED ||
	    (e->can_res_proof && ask_proven(e)))
		return (eng_violation(e, "unexpected RESUME_DENIED"));
	e->res.ask = RES_DENIED;
	e->res.wait = 0;
	e->st.resumes_denied++;
	if (e->can_res_proof && e->r.denied != NULL &&
	    e->r.denied(e->r.arg, r->reason))
		return (eng_fail(e, ENGINE_ERR_LOCAL, "the peer refused to "
		    "resume the suspended streams without proving it holds "
		    "them (%s); they stay suspended",
		    wire_reason_str(r->reason)));
	RESUMING_EACH(e, id) {
		e->st.streams_not_resumed++;
		eng_release_now(e, id, r->reason);
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
int
eng_rec_resume_proof(struct engine *e, const struct wire_rec *r)
{
	uint32_t id;

	if (e->res.ask != RES_OFFERED)
		return (eng_violation(e, "unexpected RESUME_PROOF"));
	if (e->r.proved == NULL || e->r.proved(e->r.arg, r->proof) != 0)
		return (eng_fail(e, ENGINE_ERR_AUTH, "authentication failed: "
		    "the peer's RESUME_PROOF is wrong (it does not hold the "
		    "streams' resume secret)"));
	/*
	 * New streams may have been opened since the RESUME: their OPENs
	 * wait until every RESUME_STREAM went (build_send), so the peer
	 * never sees an id its resuming streams still map.
	 */
	RESUMING_EACH(e, id)
		e->s[id].ctrl |= C_RESUME;
	e->res.ask = RES_NAMING;
	e->res.name = 0;
	/* From version 10 their count goes first (it did not in RESUME). */
	e->res.count_due = e->can_res_count;
	return (0);
}

/*
 * Finish the failure eng_fail() recorded,
    if one is due.  eng_fail() only records;
 * every public entry point that can reach it (engine_connected,
 * engine_fail, engine_on_recv, engine_on_recv_imm, engine_on_recv_tag,
 * engine_on_send_done, engine_tick) calls this before it returns to the
 * embedder, which thus never sees a failed engine whose streams still
 * look alive.
 */
void
eng_fail_finish(struct engine *e)
{
	struct stream *s;
	uint32_t id;

	if (!e->fail_due)
		return;
	e->fail_due = 0;
	eng_seal_restore_outstanding(e, e->err_kind);
	/*
	 * Every live stream ends, its peer gone with the link; but a kept
	 * stream waits in this engine for a resume on a new link, if the
	 * transport (not the peer's conduct) failed.
	 */
	for (id = 0; id < e->used; id++) {
		s = &e->s[id];
		if (s->state == S_FREE || s->state == S_DEAD)
			continue;
		if (eng_suspendable(s, e->err_kind)) {
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
		eng_qpush(e, Q_EV, id);
	}
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
	if (!e->can_resume || e->res.ask != RES_ASK_NONE ||
	    e->res.serve != RES_SERVE_NONE || e->st.streams_active != 0 ||
	    old == e || !old->failed || e->r.adopt == NULL)
		return (ENGINE_EINVAL);
	n = adopt_all(e, old);
	/* From version 5 the streams are named once the peer proved the
	 * secret (eng_rec_resume_proof). */
	e->res.ask = e->can_res_proof ? RES_OFFERED : RES_PROVEN;
	if (e->res.ask == RES_PROVEN)
		RESUMING_EACH(e, id)
			eng_ctrl(e, id, C_RESUME);
	memcpy(e->res.token, token, WIRE_NONCE_LEN);
	memcpy(e->res.proof, proof, WIRE_AUTH_LEN);
	e->res.count = (uint16_t)engine_suspended(e);
	e->res.wait = e->res.count;
	e->res.offer_due = 1;
	return ((int)n);
}

uint32_t
engine_resume_pending(const struct engine *e)
{

	if (e->res.ask != RES_ASK_NONE)
		return (e->res.wait);
	return (e->res.serve != RES_SERVE_NONE ? e->res.left +
	    (uint32_t)e->res.count_wait : 0);
}

int
engine_resume_proven(const struct engine *e)
{

	return (e->res.ask != RES_OFFERED || e->failed);
}

int
engine_resume_confirmed(const struct engine *e)
{

	return ((e->res.serve == RES_PROVING || e->res.serve == RES_TAKEN) &&
	    e->res.left < e->res.count);
}

int
engine_resume_settled(const struct engine *e)
{

	/* eng_rec_resume's test: no RESUME may come any more. */
	return (!e->can_resume || e->res.serve != RES_SERVE_NONE ||
	    e->res.ask != RES_ASK_NONE || e->opened_any || e->r.find == NULL);
}
