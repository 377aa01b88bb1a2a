/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * link_timers: a link's five timers, armed and stopped here and nowhere
 * else.  The other link rooms say what happened to a link through the
 * hooks below; which timer that arms or stops, and for how long, is
 * decided here.  A timer is set up by the room that acts when it fires:
 *
 *   deadline    connecting and authenticating get handshake_timeout
 *               together; then the link fails (here)
 *   ka          every LINK_KEEPALIVE_MS while the link is up: a
 *               keepalive, and the peer's silence (here; link.h)
 *   retry       a client link's next attempt: at once, or after the
 *               back-off, LINK_BACKOFF_MIN_MS doubling up to
 *               LINK_BACKOFF_MAX_MS (link_life.c: connect_next)
 *   resume_tmo  suspended streams' resume_time, or the peer's resume
 *               proof's handshake_timeout (resume.c)
 *   reap        an incoming link that ended goes (link_life.c:
 *               link_free)
 *
 * The hooks run in exclusive turns.
 */
#ifndef LINK_TIMERS_H
#define LINK_TIMERS_H

#include <stdint.h>

struct dlink;

/**
 * link_timers_init(dl):
 * Set up new link ${dl}'s deadline and keepalive timers; its back-off
 * starts at its least.
 */
void link_timers_init(struct dlink *dl);

/**
 * link_timers_connecting(dl):
 * ${dl} starts connecting (a client link's attempt, or an incoming link
 * accepted): it has handshake_timeout to be up.
 */
void link_timers_connecting(struct dlink *dl);

/**
 * link_timers_up(dl):
 * ${dl} is up: no deadline; keepalives; a client link's back-off starts
 * again from its least.
 */
void link_timers_up(struct dlink *dl);

/**
 * link_timers_down(dl):
 * ${dl} went down: no deadline, no keepalives.
 */
void link_timers_down(struct dlink *dl);

/**
 * link_timers_attempt_now(dl) / link_timers_attempt_later(dl):
 * Client link ${dl} tries again at once (a step-down; a connect slot came
 * free), or after its back-off, which then doubles.
 */
void link_timers_attempt_now(struct dlink *dl);
void link_timers_attempt_later(struct dlink *dl);

/**
 * link_timers_rdma_ready(dl):
 * What client link ${dl}'s attempts failed for (no RDMA) has just
 * changed: if it waits out its back-off, it tries now, and the back-off
 * starts again from its least.
 */
void link_timers_rdma_ready(struct dlink *dl);

/**
 * link_timers_retired(dl):
 * Client link ${dl} is not to connect again: no next attempt.
 */
void link_timers_retired(struct dlink *dl);

/**
 * link_timers_ended(dl):
 * Incoming link ${dl} ended, and nothing of it waits: it goes (once this
 * call has returned).
 */
void link_timers_ended(struct dlink *dl);

/**
 * link_timers_streams_wait(dl, ms):
 * ${dl}'s suspended streams wait: the next of them gives up in ${ms} (0:
 * none is left, the link goes).
 */
void link_timers_streams_wait(struct dlink *dl, uint64_t ms);

/**
 * link_timers_streams_moved(dl):
 * ${dl}'s suspended streams moved to another link: what could not move
 * ends, once this call has returned.
 */
void link_timers_streams_moved(struct dlink *dl);

/**
 * link_timers_proof_wait(dl):
 * Client link ${dl} offered suspended streams: the peer has
 * handshake_timeout to prove the resume secret.
 */
void link_timers_proof_wait(struct dlink *dl);

/**
 * link_timers_resume_settled(dl):
 * Nothing of ${dl}'s resume waits any more: its suspended streams are
 * gone, or the peer proved the secret.
 */
void link_timers_resume_settled(struct dlink *dl);

/**
 * link_timers_stop(dl):
 * ${dl} is freed: none of its timers runs again.
 */
void link_timers_stop(struct dlink *dl);

#endif /* !LINK_TIMERS_H */
