/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The rstream engine: one link, many streams, sans-I/O.  The protocol it
 * implements is specified in rstreamd-protocol(7); the comments here say
 * why the code is shaped the way it is.
 *
 * This file is the link's life: setup, the hello, connected or failed,
 * events, stats and the tick.  It is the top layer, beside
 * engine_stream.c; the other layers are listed in engine_int.h.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "engine_int.h"
#include "idq.h"
#include "wire.h"

/* A number's spelling, for messages that name a limit. */
#define STR_(x)	#x
#define STR(x)	STR_(x)

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
	if (conf->lanes > 1 && conf->ring_ptr == NULL)
		return ("two lanes, but no way to reach ring memory");
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
	for (i = 0; i < (conf->lanes > 1 ? 2u : 1u); i++)
		e->ln[i].wri = calloc(conf->sq_size, sizeof(*e->ln[i].wri));
	e->peer_ids = calloc(WIRE_STREAMS_MAX / 8, 1);
	if (e->s == NULL ||
	    idq_init(&e->repost, conf->rq_size * (conf->lanes > 1 ? 2 : 1)) !=
	    0 ||
	    e->ln[0].wri == NULL || (conf->lanes > 1 && e->ln[1].wri == NULL) ||
	    idq_init(&e->refusals, WIRE_STREAMS_MAX) != 0 ||
	    e->peer_ids == NULL ||
	    (conf->resume && idq_init(&e->res.gone, WIRE_STREAMS_MAX) != 0)) {
		engine_free(e);
		*errstr = "out of memory";
		return (NULL);
	}

	/* No slot used yet: ids are handed out low first (eng_slot_alloc). */
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
	e->ln[0].last_signaled = e->ln[1].last_signaled = UINT64_MAX;
	e->ln[0].fence_seq = e->ln[1].fence_seq = FENCE_NONE;
	window_init(&e->win, conf->chunk, conf->window_min, conf->window_max);
	return (e);
}

void
engine_free(struct engine *e)
{
	uint32_t id;

	if (e == NULL)
		return;
	for (id = 0; id < e->used; id++) {
		eng_clear_free(e, &e->s[id].rx.clear, e->s[id].rx.ring.size);
		eng_clear_free(e, &e->s[id].rx.old_clear,
		    e->s[id].rx.old.size);
	}
	idq_free(&e->res.gone);
	free(e->peer_ids);
	idq_free(&e->refusals);
	free(e->ln[0].wri);
	free(e->ln[1].wri);
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
	h->flags = (uint8_t)((e->auth != AUTH_OFF &&
	    (e->a.step == NULL || e->a.key) ? WIRE_HELLO_AUTH : 0) |
	    (e->conf.resume && e->ver_said >= 2 ? WIRE_HELLO_RESUME : 0));
	if (e->auth != AUTH_OFF && e->a.step != NULL && e->ver_said >= 6)
		h->flags |= (uint8_t)(WIRE_HELLO_IDENTITY |
		    (e->a.seal ? WIRE_HELLO_SEAL : 0) |
		    (e->a.aesgcm ? WIRE_HELLO_AESGCM : 0));
	if (e->conf.lanes > 1 && e->ver_said >= 8)
		h->flags |= WIRE_HELLO_LANES;
	if (e->conf.notify && e->ver_said >= WIRE_VERSION_NOTIFY)
		h->flags |= WIRE_HELLO_NOTIFY;
	h->credits = (uint16_t)e->conf.rq_size;
	e->said_flags = h->flags;
}

unsigned
engine_lanes(const struct engine *e)
{

	return (e->lanes > 1 ? e->lanes : 1);
}

int
engine_notify(const struct engine *e)
{

	return (e->notify);
}

void
engine_lane_hello(struct engine *e, struct wire_hello *h)
{

	h->version = e->ver_link;
	h->flags = WIRE_HELLO_LANE1;
	h->credits = (uint16_t)e->conf.rq_size;
}

static int
lane_up(struct engine *e, const struct wire_hello *peer)
{

	if (e->failed)
		return (-1);
	if (!e->lane_wait)
		return (eng_fail(e, ENGINE_ERR_PROTOCOL, "a second lane-1 "
		    "connection"));
	if (peer->flags != WIRE_HELLO_LANE1 || peer->version != e->ver_link)
		return (eng_violation(e, "lane 1's hello is not a lane-1 "
		    "hello of version %u", (unsigned)e->ver_link));
	e->ln[1].peer_posted = peer->credits;
	e->ln[1].recv_reported = e->ln[1].recv_posted;
	e->lane_wait = 0;
	e->up = 1;
	return (0);
}

int
engine_lane_up(struct engine *e, const struct wire_hello *peer)
{
	int rc = lane_up(e, peer);

	eng_fail_finish(e);
	return (rc);
}


void
engine_version_cap(struct engine *e, unsigned version)
{

	e->ver_cap = (uint8_t)(version < WIRE_VERSION ? version : WIRE_VERSION);
}

/*
 * engine_connected and the engine_on_recv family reach eng_fail() deep in
 * helpers and return from many places: each keeps its body in a static
 * function named without engine_, and the public one finishes a failure
 * after it.
 */
static void
connected(struct engine *e, const struct wire_hello *peer)
{
	uint32_t i;

	if (e->failed)
		return;
	/* The handshake's steps depend on it (hs_took). */
	e->ver_link = e->ver_said < peer->version ? e->ver_said :
	    peer->version;
	if (eng_auth_agree(e, peer) != 0)
		return;
	e->can_resume = e->conf.resume && e->ver_said >= 2 &&
	    (peer->flags & WIRE_HELLO_RESUME) != 0;
	e->can_origin = e->ver_said >= 3 && peer->version >= 3;
	e->can_res_proof = e->ver_said >= 5 && peer->version >= 5;
	e->can_res_count = e->ver_said >= 10 && peer->version >= 10;
	/* A device without immediates, at either end, rules the link. */
	e->notify = e->ver_link >= WIRE_VERSION_NOTIFY &&
	    ((e->said_flags | peer->flags) & WIRE_HELLO_NOTIFY) != 0;
	if (e->conf.notify && !e->notify) {
		eng_fail(e, ENGINE_ERR_LOCAL, "this device has no immediate "
		    "data (iWARP), and the link runs protocol version %u: "
		    "version %u or later runs without", (unsigned)e->ver_link,
		    WIRE_VERSION_NOTIFY);
		return;
	}
	e->can_resize = e->ver_said >= 4 && peer->version >= 4 &&
	    !e->can_resume;
	e->peer_rq = peer->credits;
	e->ln[0].peer_posted = peer->credits;
	/* The hello already granted every receive posted so far. */
	e->ln[0].recv_reported = e->ln[0].recv_posted;
	{
		struct wire_hello mine;

		memset(&mine, 0, sizeof(mine));
		mine.version = e->ver_said;
		mine.flags = e->said_flags;
		e->lanes = e->conf.lanes > 1 ? wire_hello_lanes(&mine, peer) :
		    1;
	}
	if (e->lanes > 1) {
		/* Lane 1's receives go before its connection (engine_lanes). */
		for (i = 0; i < e->conf.rq_size; i++)
			(void)idq_push(&e->repost, e->conf.rq_size + i);
		e->lane_wait = 1;
		return;
	}
	e->up = 1;
}

void
engine_connected(struct engine *e, const struct wire_hello *peer)
{

	connected(e, peer);
	eng_fail_finish(e);
}

void
engine_fail(struct engine *e, enum engine_err kind, const char *why)
{

	eng_fail(e, kind, "%s", why);
	eng_fail_finish(e);
}

void
engine_stopped(struct engine *e)
{

	if (e->stopped)
		return;
	e->stopped = 1;
	/* The engine failed on its own, before the embedder stopped it. */
	if (e->failed)
		eng_seal_restore_stopped(e);
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
		[ENGINE_ERR_FORGED] = "forged message",
	};

	return ((unsigned)kind < sizeof(names) / sizeof(names[0]) &&
	    names[kind] != NULL ? names[kind] : "?");
}

const char *
engine_error(const struct engine *e)
{

	return (e->failed ? e->err : NULL);
}

int
engine_next_event(struct engine *e, struct engine_event *ev)
{
	struct stream *s;
	uint32_t id;

	while ((id = eng_qpop(e, Q_EV)) != NIL) {
		s = &e->s[id];
		if (s->ev == 0) {
			eng_queue_drop(e, id);
			continue;
		}
		ev->stream = id;
		ev->flags = s->ev;
		ev->reason = s->ev_reason;
		ev->user = s->user;
		s->ev = 0;
		/* Popped from the event queue: eng_slot_free may reuse it. */
		if ((ev->flags & ENGINE_EV_RELEASED) && s->state != S_FREE)
			eng_slot_free(e, id);
		return (1);
	}
	return (0);
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

	unsigned i;

	for (i = 0; i < engine_lanes(e); i++)
		if (ENG_SIGNAL_PENDING(&e->ln[i]) || eng_ctrl_pending(e, i))
			return (0);
	return (e->q[Q_TX].head == NIL && e->q[Q_FENCE].head == NIL);
}

int
engine_sends_quiet(const struct engine *e)
{
	if (e->failed || ENG_SIGNAL_PENDING(&e->ln[0]))
		return (0);
	if (engine_lanes(e) > 1 &&
	    e->ln[1].seq - e->ln[1].seq_done > ENGINE_QUIET_LANE1)
		return (0);
	return (e->q[Q_FENCE].head == NIL);
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
	st->peer_credits = (uint32_t)eng_msg_avail(e, 0);
	st->sq_depth = (uint32_t)(e->ln[0].seq - e->ln[0].seq_done);
	st->inflight = e->win.inflight;
	st->lanes = engine_lanes(e);
	st->notify = (uint32_t)e->notify;
	st->lane[0].depth = st->sq_depth;
	st->lane[0].inflight = st->inflight;
	st->lane[0].credits = st->peer_credits;
	st->lane[0].wrs = e->ln[0].seq;
	st->lane[1].depth = (uint32_t)(e->ln[1].seq - e->ln[1].seq_done);
	st->lane[1].inflight = 0;	/* SENDs: no data bytes in the window */
	st->lane[1].credits = (uint32_t)(e->ln[1].peer_posted - e->ln[1].msgs_sent);
	st->lane[1].wrs = e->ln[1].seq;
	st->window = e->win.cap;
	st->rtt_ns = e->win.rtt_min;
	st->rate = e->win.rate_max;
	st->sealed = (uint32_t)engine_sealed(e);
}

void
engine_tick(struct engine *e)
{
	uint32_t id;

	if (e->failed)
		return;
	for (id = 0; id < e->used; id++) {
		if (eng_ring_at_overdue(&e->s[id])) {
			eng_fail(e, ENGINE_ERR_PROTOCOL, "no RING_AT for "
			    "stream %u: the peer left its RING unanswered for "
			    "%d ticks",
			    (unsigned)id, ENGINE_RING_AT_TICKS);
			break;
		}
	}
	eng_fail_finish(e);
}
