/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * resume: a failed link's suspended streams, and their resume on a new
 * link (see rstreamd-protocol(7)).  A link that fails with streams that
 * may resume keeps its engine (dl->old) while they wait, each for its
 * tunnel's resume_time.  A client link offers them on its next link,
 * with a proof over the chain's secret; an incoming link's peer asks for
 * them on a new link of its own, naming their link's token, and gets
 * them only with the right proof and the same key (see auth.h for the
 * resume identity and its ratchet).  These run in exclusive turns only.
 */
#ifndef RESUME_H
#define RESUME_H

#include <stdint.h>

struct dlink;
struct engine;

/**
 * resume_init(dl):
 * Set up new link ${dl}'s resume callbacks (dl->er) and its timer.
 */
void resume_init(struct dlink *dl);

/**
 * resume_suspend(dl, why):
 * ${dl} ends for ${why}: its current engine fails (the queue pair
 * stopped first); streams that may resume wait in it, which becomes
 * dl->old, for resume_time (resume_wait), and dl->nsusp says how many;
 * the others are reset.  Their events go out (closing sockets, freeing
 * rings), after any a shared turn left (link_unstash).  Nothing happens
 * to a link without an engine.
 */
void resume_suspend(struct dlink *dl, const char *why);

/**
 * resume_drop(dl, reason):
 * The failed engine is done with: streams still in it end with
 * ${reason}, their events go out, and it is freed.  Returns how many
 * ended (0 when there is none).
 */
uint32_t resume_drop(struct dlink *dl, uint16_t reason);

/**
 * resume_end(dl, reason):
 * resume_drop, and a suspended incoming link then goes.
 */
void resume_end(struct dlink *dl, uint16_t reason);

/**
 * resume_identity(dl):
 * ${dl}, just up, starts a resume chain of its own: its token and secret
 * from its hellos, version and key.
 */
void resume_identity(struct dlink *dl);

/**
 * resume_offer(dl, e):
 * Client link ${dl}, just up on engine ${e}, offers the failed link's
 * suspended streams to the peer, if it can; those it cannot are reset.
 */
void resume_offer(struct dlink *dl, struct engine *e);

/**
 * resume_done(dl, e):
 * The resume exchange on ${dl}'s engine ${e} settled: say how it went.
 */
void resume_done(struct dlink *dl, struct engine *e);

#endif /* !RESUME_H */
