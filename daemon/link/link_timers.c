/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <stdio.h>

#include "engine.h"
#include "link.h"
#include "link_int.h"
#include "link_timers.h"
#include "loop.h"
#include "rsd.h"
#include "verbs.h"

/* ------------------------------------------------------- what they do */

/*
 * Every LINK_KEEPALIVE_MS: make sure the peer hears from us, and that we
 * hear from it.  A peer that sent nothing (not even its keepalive) for
 * LINK_SILENCE_MS is gone, even if our own sends still get acknowledged
 * or we have no message credit left to send with: its engine fails, and
 * the flush that follows takes the link down (in an exclusive turn; this
 * one is shared while the link's flush is, see link_share).
 */
static void
on_keepalive(void *arg)
{
	struct dlink *dl = arg;
	struct engine *e;
	struct engine_stats st;
	uint64_t now = loop_now_ms();
	char why[96];

	loop_timer_arm(&dl->ka, LINK_KEEPALIVE_MS);
	if (dl->state != D_UP || (e = link_cur_engine(dl)) == NULL)
		return;
	engine_stats(e, &st);
	if (st.recvs != dl->heard_recvs) {
		dl->heard_recvs = st.recvs;
		dl->heard_ms = now;
	} else if (now - dl->heard_ms >= LINK_SILENCE_MS) {
		snprintf(why, sizeof(why), "nothing heard from the peer for "
		    "%llu s", (unsigned long long)(now - dl->heard_ms) / 1000);
		/* Before a sealed link's kept rings get their plaintext back. */
		verbs_link_stop(dl->vl);
		engine_fail(e, ENGINE_ERR_LOCAL, why);
		link_mark(dl);
		return;
	}
	engine_keepalive(e);
	/* Streams idle for a whole period get their small rings back;
	 * a RING unanswered for ENGINE_RING_AT_TICKS periods ends the link. */
	engine_trim(e);
	engine_tick(e);
	link_mark(dl);
	/* Pooled rings unused for a whole period go (see verbs.h). */
	verbs_link_pool_trim(dl->vl);
}

static void
on_deadline(void *arg)
{
	struct dlink *dl = arg;
	char why[96];

	if (dl->state != D_CONNECTING && dl->state != D_AUTH)
		return;
	snprintf(why, sizeof(why), "%s not finished within "
	    "handshake_timeout (%u s)", dl->state == D_AUTH ?
	    "authentication" : "connecting",
	    (unsigned)dl->d->conf->handshake_timeout);
	link_fail(dl, why);
}

/* handshake_timeout in ms: connecting, authenticating, a resume proof. */
static uint64_t
handshake_ms(const struct dlink *dl)
{

	return ((uint64_t)dl->d->conf->handshake_timeout * 1000);
}

void
link_timers_init(struct dlink *dl)
{

	loop_timer_init(&dl->ka, dl->lp, on_keepalive, dl);
	loop_timer_init(&dl->deadline, dl->lp, on_deadline, dl);
	dl->backoff = LINK_BACKOFF_MIN_MS;
}

/* ----------------------------------------------------- up and down */

void
link_timers_connecting(struct dlink *dl)
{

	loop_timer_arm(&dl->deadline, handshake_ms(dl));
}

void
link_timers_up(struct dlink *dl)
{

	loop_timer_stop(&dl->deadline);
	loop_timer_arm(&dl->ka, LINK_KEEPALIVE_MS);
	dl->backoff = LINK_BACKOFF_MIN_MS;
}

void
link_timers_down(struct dlink *dl)
{

	loop_timer_stop(&dl->deadline);
	loop_timer_stop(&dl->ka);
}

/* --------------------------------------------- a client link's attempts */

void
link_timers_attempt_now(struct dlink *dl)
{

	loop_timer_arm(&dl->retry, 0);
	dl->retry_wait = 0;
}

void
link_timers_attempt_later(struct dlink *dl)
{

	loop_timer_arm(&dl->retry, dl->backoff);
	dl->retry_wait = dl->backoff;
	dl->backoff = dl->backoff * 2 > LINK_BACKOFF_MAX_MS ?
	    LINK_BACKOFF_MAX_MS : dl->backoff * 2;
}

void
link_timers_rdma_ready(struct dlink *dl)
{

	loop_assert_exclusive();
	if (dl->state != D_IDLE || !loop_timer_armed(&dl->retry))
		return;
	dl->backoff = LINK_BACKOFF_MIN_MS;
	loop_timer_arm(&dl->retry, 0);
}

void
link_timers_retired(struct dlink *dl)
{

	loop_timer_stop(&dl->retry);
}

/* ------------------------------------------------ ends and resumes */

void
link_timers_ended(struct dlink *dl)
{

	if (!loop_timer_armed(&dl->reap))
		loop_timer_arm(&dl->reap, 0);
}

void
link_timers_streams_wait(struct dlink *dl, uint64_t ms)
{

	loop_timer_arm(&dl->resume_tmo, ms);
}

void
link_timers_streams_moved(struct dlink *dl)
{

	loop_timer_arm(&dl->resume_tmo, 0);
}

void
link_timers_proof_wait(struct dlink *dl)
{

	loop_timer_arm(&dl->resume_tmo, handshake_ms(dl));
}

void
link_timers_resume_settled(struct dlink *dl)
{

	loop_timer_stop(&dl->resume_tmo);
}

void
link_timers_stop(struct dlink *dl)
{

	loop_timer_stop(&dl->resume_tmo);
	loop_timer_stop(&dl->retry);
	loop_timer_stop(&dl->reap);
	loop_timer_stop(&dl->ka);
	loop_timer_stop(&dl->deadline);
}
