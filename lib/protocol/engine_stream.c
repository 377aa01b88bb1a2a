/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * engine_stream: the application's calls on a stream (engine_stream.h):
 * open, accept or refuse, the rings' space and data, shutdown, close,
 * reset, and what it asks about one.  Layer 4, the top: it calls the
 * layers below.
 */
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "engine_int.h"
#include "engine_stream.h"
#include "idq.h"
#include "ring.h"
#include "wire.h"

/* The names engine_stream_flags_str gives the stream slot states. */
static const char *const state_names[] = {
	[S_FREE] = "FREE", [S_OPENING] = "OPENING",
	[S_INCOMING] = "INCOMING", [S_OPEN] = "OPEN", [S_DEAD] = "DEAD"
};
_Static_assert(sizeof(state_names) / sizeof(state_names[0]) == S_DEAD + 1,
    "every stream state has a name");

/* The flags' names, by bit (STREAM_FLAGS in engine_int.h). */
#define F_NAME_(name)	#name,
static const char *const flag_names[] = { STREAM_FLAGS(F_NAME_) };
/* The longest engine_stream_flags_str: "INCOMING", then every flag. */
#define F_LEN_(name)	+ sizeof(#name)
_Static_assert(sizeof("INCOMING") STREAM_FLAGS(F_LEN_) <=
    ENGINE_FLAGS_STR_LEN, "engine_stream_flags_str has room for them all");

/*
 * Where the send ring's free space starts: a kept stream frees bytes when
 * the peer consumed them (so all it has not can be written again on a new
 * link), the others when their WRITE completed.  A kept stream of a
 * sealed link waits for both: until its WRITE finished, eng_seal_restore has
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

int
engine_set_user(struct engine *e, uint32_t id, void *user)
{
	struct stream *s = eng_live(e, id);

	if (s == NULL || s->state != S_INCOMING)
		return (ENGINE_EINVAL);
	s->user = user;
	return (0);
}

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
	if ((id = eng_slot_alloc(e)) == NIL)
		return (ENGINE_ELIMIT);
	s = &e->s[id];
	s->state = S_OPENING;
	s->tx.ring = *tx;
	s->rx.ring = *rx;
	s->user = user;
	s->flags = F_HAS_RINGS;
	strcpy(s->name, tunnel);
	eng_ctrl(e, id, C_OPEN);
	e->st.streams_opened++;
	return ((int)id);
}

int
engine_set_origin(struct engine *e, uint32_t id,
    const struct wire_origin *origin)
{
	struct stream *s = eng_live(e, id);

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

	const struct stream *s = eng_held(e, id);

	if (s == NULL || s->origin.family == WIRE_FAM_UNSPEC)
		return (NULL);
	return (&s->origin);
}

const char *
engine_tunnel(const struct engine *e, uint32_t id)
{

	const struct stream *s = eng_live(e, id);

	return (s != NULL ? s->name : NULL);
}

int
engine_accept(struct engine *e, uint32_t id, const struct engine_ring *tx,
    const struct engine_ring *rx, void *user)
{
	struct stream *s = eng_live(e, id);

	if (s == NULL || s->state != S_INCOMING || !rings_ok(tx, rx))
		return (ENGINE_EINVAL);
	if (e->failed)
		return (ENGINE_EDOWN);
	s->state = S_OPEN;
	s->tx.ring = *tx;
	s->rx.ring = *rx;
	s->user = user;
	s->flags |= F_HAS_RINGS;
	eng_ctrl(e, id, C_OPEN_OK);
	e->st.streams_accepted++;
	return (0);
}

int
engine_refuse(struct engine *e, uint32_t id, uint16_t reason)
{
	struct stream *s = eng_live(e, id);

	if (s == NULL || s->state != S_INCOMING)
		return (ENGINE_EINVAL);
	if (e->failed)
		return (ENGINE_EDOWN);
	/* The refusal queue keeps the peer id reserved until it is sent. */
	(void)idq_push(&e->refusals, s->peer_id << 16 | reason);
	s->flags &= (uint16_t)~F_PEER_MAPPED;
	s->ev = 0;
	e->st.streams_refused++;
	eng_slot_free(e, id);
	return (0);
}

/* A stream the application may still act on. */
static struct stream *
app_stream(struct engine *e, uint32_t id)
{
	struct stream *s = eng_live(e, id);

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
	struct stream *s = eng_held(e, id);

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
		eng_tx_grow(e, id);
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
	eng_tx_queue(e, id);
	eng_wait_update(e, id);
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
	ring = eng_rx_read_ring(s, &end);
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
	ring = eng_rx_read_ring(s, &end);
	if (n > ring_contig(ring->size, s->rx.cons, ring_used(end, s->rx.cons)))
		return (ENGINE_EINVAL);
	s->rx.cons += n;
	s->rx.caught |= RX_READ_TRIM;
	if (s->rx.cons == s->rx.tail)
		s->rx.caught |= RX_CAUGHT_RESIZE | RX_CAUGHT_TRIM;
	if (s->rx.old.size != 0 && s->rx.cons == s->rx.switch_at)
		eng_rx_old_drop(e, s);
	/*
	 * Return credit once a quarter of the ring was consumed; a sender
	 * stalls only on a full ring, and a fully read full ring always
	 * crosses this, so coalescing never deadlocks.
	 */
	if (!(s->flags & (F_PEER_SHUT | F_TERM_SENT)) &&
	    s->rx.cons - s->rx.rep >= s->rx.ring.size / 4)
		eng_ctrl(e, id, C_CREDIT);
	eng_check_eof(e, id);
	return (0);
}

int
engine_shutdown(struct engine *e, uint32_t id)
{
	struct stream *s = app_stream(e, id);

	if (s == NULL)
		return (ENGINE_EINVAL);
	s->flags |= F_APP_SHUT;
	eng_check_shutdown(e, id);
	return (0);
}

int
engine_reset(struct engine *e, uint32_t id, uint16_t reason)
{
	struct stream *s = eng_live(e, id);

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
			eng_release_now(e, id, reason);
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
	eng_ctrl(e, id, C_RESET);
	return (0);
}

int
engine_close(struct engine *e, uint32_t id)
{
	struct stream *s = eng_live(e, id);

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
	eng_check_shutdown(e, id);
	eng_ctrl(e, id, C_CLOSE);
	return (0);
}

int
engine_stream_stats(const struct engine *e, uint32_t id,
    struct engine_stream_stats *st)
{
	const struct stream *s;
	uint64_t now = e->win.now;

	memset(st, 0, sizeof(*st));
	if ((s = eng_live(e, id)) == NULL)
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

int
engine_set_weight(struct engine *e, uint32_t id, uint32_t weight)
{
	struct stream *s = eng_live(e, id);

	if (s == NULL || weight < 1 || weight > ENGINE_WEIGHT_MAX)
		return (ENGINE_EINVAL);
	s->weight = (uint8_t)weight;
	return (0);
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

int
engine_keep(struct engine *e, uint32_t id)
{
	struct stream *s = eng_live(e, id);

	if (s == NULL || !e->conf.resume || s->tx.sent != 0 ||
	    (s->state != S_OPENING && s->state != S_OPEN))
		return (ENGINE_EINVAL);
	s->flags |= F_KEEP_WANT;
	if (s->state == S_OPEN)
		eng_keep_decide(e, s);
	return (0);
}

int
engine_kept(const struct engine *e, uint32_t id)
{

	const struct stream *s = eng_held(e, id);

	return (s != NULL && (s->flags & F_KEEP) != 0);
}

int
engine_abandon_stream(struct engine *e, uint32_t id, uint16_t reason)
{

	const struct stream *s = eng_live(e, id);

	if (s == NULL || s->state != S_OPEN || !(s->flags & F_SUSP))
		return (ENGINE_EINVAL);
	e->st.streams_not_resumed++;
	eng_release_now(e, id, reason);
	return (0);
}

void
engine_abandon(struct engine *e, uint16_t reason)
{
	uint32_t id;

	for (id = 0; id < e->used; id++)
		(void)engine_abandon_stream(e, id, reason);
}

int
engine_ring_limits(struct engine *e, uint32_t id, uint32_t tx_max,
    uint32_t rx_max)
{
	struct stream *s = eng_live(e, id);

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
	s->rx.caught = 0;
	return (0);
}

uint64_t
engine_tx_base(const struct engine *e, uint32_t id)
{

	const struct stream *s = eng_held(e, id);

	return (s != NULL ? s->tx.ring.addr : 0);
}

uint64_t
engine_rx_base(const struct engine *e, uint32_t id)
{
	const struct stream *s = eng_held(e, id);

	return (s != NULL ? eng_rx_read_base(s) : 0);
}

int
engine_rings(const struct engine *e, uint32_t id, struct engine_ring *tx,
    struct engine_ring *rx)
{

	const struct stream *s = eng_held(e, id);

	if (s == NULL)
		return (-1);
	*tx = s->tx.ring;
	*rx = s->rx.ring;
	return (0);
}
