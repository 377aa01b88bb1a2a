/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "conf.h"
#include "engine.h"
#include "engine_stream.h"
#include "link.h"
#include "link_int.h"
#include "link_timers.h"
#include "log.h"
#include "loop.h"
#include "resume.h"
#include "rsd.h"
#include "verbs.h"

/*
 * How long suspended streams of tunnel ${name} wait for a new link on
 * incoming link ${dl}: the tunnel's resume_time (0 if it has none or is
 * gone, or link_stays_down).
 */
static uint32_t
tunnel_resume_time(const struct dlink *dl, const char *name)
{
	const struct conf_tunnel *t;

	if (link_stays_down(dl))
		return (0);
	t = conf_tunnel_find(dl->d->conf, name);
	return (t != NULL && t->has_target ? t->sz.resume_time : 0);
}

/*
 * How long a failed link's suspended streams wait for a new one: a
 * client link's tunnel's resume_time; for an incoming link, the longest
 * of its streams' tunnels' (each stream waits for its own, susp_expire).
 * 0 when nobody will bring a new link, nor may: its peer is revoked, or
 * an injector ended too many of its chain's links (LINK_FORGED_MAX).
 */
static uint32_t
resume_time(const struct dlink *dl, const struct engine *e)
{
	const char *name;
	uint32_t id, rt, best = 0;

	if (dl->revoked || dl->forged > LINK_FORGED_MAX)
		return (0);
	if (dl->c != NULL)
		return (link_stays_down(dl) ? 0 : dl->c->sz.resume_time);
	for (id = 0; id < WIRE_STREAMS_MAX; id++)
		if ((name = engine_tunnel(e, id)) != NULL &&
		    (rt = tunnel_resume_time(dl, name)) > best)
			best = rt;
	return (best);
}

/*
 * Incoming: each suspended stream waits for its own tunnel's resume_time
 * (a link may carry several tunnels' streams).  End those whose time is
 * up, counted and said once per tunnel, and arm the timer for the next;
 * returns how many still wait.
 */
static uint32_t
susp_expire(struct dlink *dl)
{
	struct engine *old = dl->old;
	struct engine_event ev;
	uint64_t now = loop_now_ms(), next, end;
	char name[WIRE_NAME_MAX + 1];
	const char *t;
	uint32_t id, rt, rt_name = 0, n, left;

	do {
		/* One tunnel whose streams' time is up, per pass. */
		name[0] = '\0';
		next = UINT64_MAX;
		n = left = 0;
		for (id = 0; id < WIRE_STREAMS_MAX; id++) {
			if ((t = engine_tunnel(old, id)) == NULL)
				continue;
			rt = tunnel_resume_time(dl, t);
			end = dl->susp_since + (uint64_t)rt * 1000;
			if (end > now) {
				left++;
				next = end < next ? end : next;
				continue;
			}
			if (name[0] == '\0') {
				snprintf(name, sizeof(name), "%s", t);
				rt_name = rt;
			}
			if (strcmp(t, name) == 0 && engine_abandon_stream(old,
			    id, WIRE_REASON_LINK_LOST) == 0)
				n++;
		}
		while (engine_next_event(old, &ev))
			link_deliver(dl, old, &ev);
		if (n == 0)
			break;
		dl->d->resume_timeouts += n;
		log_about(LOG_WARNING, &(struct log_about){ name, 0, dl->peer },
		    "%s: %u suspended stream%s of tunnel %s reset: no new "
		    "link within its resume_time (%u s)", dl->name,
		    (unsigned)n, n == 1 ? "" : "s", name, (unsigned)rt_name);
	} while (name[0] != '\0');
	if (left > 0)
		link_timers_streams_wait(dl, next - now);
	return (left);
}

/*
 * The failed link's streams start waiting (its engine is dl->old); or,
 * ${again}, they wait on: a new link failed in the midst of their resume
 * (a refusal from a peer that proved nothing, say), and their
 * resume_time still counts from their first suspension.
 */
static void
resume_wait(struct dlink *dl, int again)
{
	uint64_t now = loop_now_ms(), end;

	if (!again)
		dl->susp_since = now;
	end = dl->susp_since + (uint64_t)dl->resume_s * 1000;
	if (dl->c != NULL)
		link_timers_streams_wait(dl, end > now ? end - now : 0);
	else if (susp_expire(dl) == 0)
		link_timers_streams_wait(dl, 0);	/* it goes */
}

void
resume_suspend(struct dlink *dl, const char *why)
{
	struct engine *e = link_cur_engine(dl);
	struct engine_event ev;
	int again = dl->resuming;

	/* An event a shared turn left goes before the engine's last ones. */
	link_unstash(dl);
	if (e == NULL)
		return;
	/* No WRITE may touch a ring once its memory is released. */
	verbs_link_stop(dl->vl);
	engine_fail(e, ENGINE_ERR_LOCAL, why);
	dl->resuming = 0;
	dl->nsusp = 0;
	if (engine_suspended(e) > 0 && dl->old == NULL &&
	    (dl->resume_s = resume_time(dl, e)) > 0) {
		/* Its streams wait in the engine for a new link. */
		dl->old = verbs_link_take_engine(dl->vl);
		dl->nsusp = engine_suspended(e);
		resume_wait(dl, again);
	} else {
		engine_abandon(e, WIRE_REASON_LINK_LOST);
	}
	while (engine_next_event(e, &ev))
		link_deliver(dl, e, &ev);
}

/*
 * What the link's resume secrets derive from: on an identity link the
 * handshake hash, which only the two ends of that handshake know, so a
 * chain's secret is bound to the identities that opened it; else the key
 * the link proved (none: empty).
 */
static const uint8_t *
ikm(const struct dlink *dl, size_t *len)
{

	if (dl->ident) {
		*len = sizeof(dl->hh);
		return (dl->hh);
	}
	*len = dl->key->set ? dl->key->len : 0;
	return (dl->key->key);
}

/* The resume secrets go, wiped. */
static void
res_forget(struct dlink *dl)
{

	explicit_bzero(dl->res_secret, sizeof(dl->res_secret));
	explicit_bzero(dl->res_prev, sizeof(dl->res_prev));
	dl->has_prev = 0;
}

/* The link's own resume identity, from its hellos, version and key. */
void
resume_identity(struct dlink *dl)
{
	uint8_t hellos[AUTH_HELLOS_LEN];
	unsigned v = engine_version(link_cur_engine(dl));
	const uint8_t *k;
	size_t klen;

	res_forget(dl);
	dl->forged = 0;
	if (verbs_link_hellos(dl->vl, hellos) != 0) {
		dl->have_res = 0;
		return;
	}
	k = ikm(dl, &klen);
	auth_resume_secret(v, k, klen, hellos, dl->res_secret);
	/* The responder's nonce names it, or from version 10 a token of
	 * its secret; the secret never travels. */
	if (v >= AUTH_RESUME_TOKEN)
		auth_resume_token(dl->res_secret, dl->res_id);
	else
		memcpy(dl->res_id, hellos + WIRE_HELLO_LEN + 16,
		    WIRE_NONCE_LEN);
	dl->res_ratchet = v >= AUTH_RESUME_RATCHET;
	dl->have_res = 1;
}

/*
 * The failed engine is done with: streams still in it end with
 * ${reason}, their events go out, and it is freed.  Returns how many
 * ended.
 */
uint32_t
resume_drop(struct dlink *dl, uint16_t reason)
{
	struct engine *old = dl->old;
	struct engine_event ev;
	uint32_t n;

	if (old == NULL)
		return (0);
	link_timers_resume_settled(dl);
	n = engine_suspended(old);
	engine_abandon(old, reason);
	while (engine_next_event(old, &ev))
		link_deliver(dl, old, &ev);
	dl->old = NULL;
	engine_free(old);
	return (n);
}

/* No stream waits in it any more: a suspended incoming link goes. */
void
resume_end(struct dlink *dl, uint16_t reason)
{

	(void)resume_drop(dl, reason);
	if (dl->state == D_SUSP) {
		dl->state = D_DEAD;
		link_timers_ended(dl);
	}
}

/*
 * A client link's peer did not prove the resume secret in time (it took
 * the resume, or would have said no): a peer that does not hold the
 * streams gets nothing more, and they are reset with the link.
 */
static void
proof_timeout(struct dlink *dl)
{
	struct engine *e = link_cur_engine(dl);
	char why[160];

	if (dl->state != D_UP || e == NULL || engine_resume_proven(e))
		return;
	snprintf(why, sizeof(why), "authentication failed: the peer did not "
	    "prove the streams' resume secret within handshake_timeout "
	    "(%u s)", (unsigned)dl->d->conf->handshake_timeout);
	engine_fail(e, ENGINE_ERR_AUTH, why);
	link_fail(dl, why);
}

/*
 * resume_time passed (or the streams moved): the rest are reset; or a
 * client link's proof is overdue.
 */
static void
on_resume_tmo(void *arg)
{
	struct dlink *dl = arg;
	uint32_t n;

	if (dl->moved) {
		resume_end(dl, WIRE_REASON_NOT_RESUMED);
		return;
	}
	if (dl->c == NULL) {
		if (dl->old != NULL && susp_expire(dl) == 0)
			resume_end(dl, WIRE_REASON_LINK_LOST);
		return;
	}
	if (dl->old == NULL) {
		proof_timeout(dl);
		return;
	}
	n = resume_drop(dl, WIRE_REASON_LINK_LOST);
	if (n > 0) {
		dl->d->resume_timeouts += n;
		LLOG(LOG_WARNING, dl, "%s: %u suspended stream%s reset: no "
		    "new link within resume_time (%u s)", dl->name,
		    (unsigned)n, n == 1 ? "" : "s", (unsigned)dl->resume_s);
	}
}

/* The resume exchange on ${e} settled: say how it went. */
void
resume_done(struct dlink *dl, struct engine *e)
{
	struct engine_stats st;

	dl->resuming = 0;
	/* The peer named its streams: it holds the new secret.  (One that
	 * named none may not have seen our proof: its old one still goes.) */
	if (engine_resume_confirmed(e)) {
		explicit_bzero(dl->res_prev, sizeof(dl->res_prev));
		dl->has_prev = 0;
	}
	engine_stats(e, &st);
	if (st.resumes_denied > 0) {
		LLOG(LOG_WARNING, dl, "%s: the peer refused to resume the "
		    "suspended streams; %llu reset", dl->name,
		    (unsigned long long)st.streams_not_resumed);
		/* Nothing carried over: this link is a chain of its own. */
		resume_identity(dl);
		return;
	}
	LLOG(LOG_NOTICE, dl, "%s: %llu stream%s resumed after %.1f s (%llu "
	    "bytes written again)%s", dl->name,
	    (unsigned long long)st.streams_resumed,
	    st.streams_resumed == 1 ? "" : "s",
	    (double)(loop_now_ms() - dl->susp_since) / 1000,
	    (unsigned long long)st.resumed_bytes,
	    st.streams_not_resumed > 0 ? "; some the peer no longer had "
	    "were reset" : "");
}

/* Refuse a peer's resume: counted, said once per burst. */
static struct engine *
resume_refuse(struct dlink *dl, uint16_t *reason, uint16_t r, const char *why)
{

	*reason = r;
	dl->d->resume_refusals++;
	log_burst_about(&dl->d->resume_log, loop_now_ms(), LOG_WARNING,
	    LABOUT(dl), "%s: resume refused: %s", dl->name, why);
	return (NULL);
}

/* Why a link that has not noticed it failed ends when its peer resumes. */
#define RESUMED_ELSEWHERE	"its peer resumed its streams on a new link"

/*
 * The peer of incoming link ${arg} asks to resume the streams of the
 * link its token names: only with the proof over that link's secret (or
 * the one it replaced, which the peer may still hold), never below
 * version 5 once the chain got there, and only if it proved the same
 * key.  A link that has not noticed it failed is ended here (its peer
 * evidently has).  Our own proof goes in ${answer}; adopted_cb moves the
 * identity on.
 */
static struct engine *
find_cb(void *arg, const uint8_t token[WIRE_NONCE_LEN],
    const uint8_t proof[WIRE_AUTH_LEN], uint8_t answer[WIRE_AUTH_LEN],
    uint16_t *reason)
{
	struct dlink *dl = arg, *o;
	uint8_t hellos[AUTH_HELLOS_LEN];
	const uint8_t *sec;
	unsigned v = engine_version(link_cur_engine(dl));

	/* Other links, on other workers (verbs_link_drain keeps a RESUME
	 * behind message 3 out of the handshake's shared turn). */
	loop_assert_exclusive();
	TAILQ_FOREACH(o, &dl->d->links, entry)
		if (o != dl && o->c == NULL && o->have_res &&
		    (memcmp(o->res_id, token, WIRE_NONCE_LEN) == 0 ||
		    (o->has_prev && memcmp(o->res_prev_id, token,
		    WIRE_NONCE_LEN) == 0)) &&
		    (o->state == D_SUSP || o->state == D_UP))
			break;
	if (o == NULL)
		return (resume_refuse(dl, reason, WIRE_REASON_NOT_RESUMED,
		    "no suspended streams of that link here"));
	if (o->res_ratchet && v < AUTH_RESUME_RATCHET)
		return (resume_refuse(dl, reason, WIRE_REASON_VERSION,
		    "the streams' link spoke protocol version 5 or later, "
		    "the new one an older version"));
	sec = o->res_secret;
	if (verbs_link_hellos(dl->vl, hellos) != 0)
		sec = NULL;
	else if (auth_resume_check(v, 1, sec, hellos, proof) != 0)
		sec = o->has_prev && auth_resume_check(v, 1, o->res_prev,
		    hellos, proof) == 0 ? o->res_prev : NULL;
	if (sec == NULL)
		return (resume_refuse(dl, reason, WIRE_REASON_DENIED,
		    "wrong proof"));
	if (o->key->set != dl->key->set ||
	    (o->key->set && !conf_key_same(o->key, dl->key)))
		return (resume_refuse(dl, reason, WIRE_REASON_DENIED,
		    "the peer proved another key than the streams' link"));
	if (o->ident != dl->ident || (o->ident && memcmp(o->peer_pub,
	    dl->peer_pub, sizeof(o->peer_pub)) != 0))
		return (resume_refuse(dl, reason, WIRE_REASON_DENIED,
		    "the peer proved another identity than the streams' "
		    "link"));
	if (o->state == D_UP) {
		/* Its streams are suspended now, for this link to take; its
		 * flush job ends it. */
		resume_suspend(o, RESUMED_ELSEWHERE);
		link_fail(o, RESUMED_ELSEWHERE);
	}
	if (o->old == NULL)
		return (resume_refuse(dl, reason, WIRE_REASON_NOT_RESUMED,
		    "that link has no suspended streams"));
	auth_resume_proof(v, 0, sec, hellos, answer);
	/* The token and secret the peer proved: adopted_cb derives ours
	 * from them. */
	memcpy(dl->res_prev_id, token, WIRE_NONCE_LEN);
	memcpy(dl->res_prev, sec, AUTH_SECRET_LEN);
	dl->from = o;
	return (o->old);
}

/*
 * Incoming: the streams moved over from link dl->from.  This link
 * carries on the chain: from version 5 a secret of its own, derived from
 * the one the peer proved (kept until the peer shows it has the new
 * one), below version 5 the chain's; from version 10 a token of its own
 * too (the one the peer named kept alike), below it the chain's.
 */
static void
adopted_cb(void *arg, struct engine *old)
{
	struct dlink *dl = arg, *o = dl->from;
	uint8_t hellos[AUTH_HELLOS_LEN];
	unsigned v = engine_version(link_cur_engine(dl));
	size_t klen;
	const uint8_t *k = ikm(dl, &klen);

	dl->from = NULL;
	if (o == NULL || o->old != old || verbs_link_hellos(dl->vl,
	    hellos) != 0) {
		resume_identity(dl);
		return;
	}
	memcpy(dl->res_id, dl->res_prev_id, WIRE_NONCE_LEN);
	memcpy(dl->res_secret, dl->res_prev, AUTH_SECRET_LEN);
	dl->res_ratchet = o->res_ratchet || v >= AUTH_RESUME_RATCHET;
	dl->has_prev = v >= AUTH_RESUME_RATCHET;
	if (dl->has_prev)
		auth_resume_next(dl->res_secret, k, klen, hellos);
	else
		explicit_bzero(dl->res_prev, sizeof(dl->res_prev));
	if (v >= AUTH_RESUME_TOKEN)
		auth_resume_token(dl->res_secret, dl->res_id);
	dl->have_res = 1;
	dl->susp_since = o->susp_since;
	dl->forged = o->forged;
	dl->resuming = 1;
	LLOG(LOG_INFO, dl, "%s: the peer resumes the streams of %s",
	    dl->name, o->name);
	/* What could not move ends there, once this call has returned. */
	o->moved = 1;
	link_timers_streams_moved(o);
}

/*
 * Client, version 5: the peer took the resume and proves it holds the
 * chain's secret; if it does, this link's secret replaces it (and from
 * version 10 its token the chain's).
 */
static int
proved_cb(void *arg, const uint8_t proof[WIRE_AUTH_LEN])
{
	struct dlink *dl = arg;
	uint8_t hellos[AUTH_HELLOS_LEN];
	unsigned v = engine_version(link_cur_engine(dl));
	const uint8_t *k;
	size_t klen;

	if (!dl->have_res || verbs_link_hellos(dl->vl, hellos) != 0 ||
	    auth_resume_check(v, 0, dl->res_secret, hellos, proof) != 0)
		return (-1);
	k = ikm(dl, &klen);
	auth_resume_next(dl->res_secret, k, klen, hellos);
	if (v >= AUTH_RESUME_TOKEN)
		auth_resume_token(dl->res_secret, dl->res_id);
	dl->res_ratchet = 1;
	link_timers_resume_settled(dl);
	return (0);
}

/*
 * Client: the new link takes over the failed one's streams, if it can:
 * never on a link older than version 5 once the chain got there (a
 * forged step-down must not get the streams named to a peer that proves
 * nothing), and from version 5 only if the peer proves the secret in
 * time (proof_timeout).
 */
void
resume_offer(struct dlink *dl, struct engine *e)
{
	uint8_t hellos[AUTH_HELLOS_LEN], proof[WIRE_AUTH_LEN];
	uint64_t gap = loop_now_ms() - dl->susp_since;
	unsigned v = engine_version(e);
	int older = dl->res_ratchet && v < AUTH_RESUME_RATCHET;
	int n = ENGINE_EINVAL;

	link_hooks(dl, 0, e, NULL);
	if (dl->have_res && engine_can_resume(e) && !older &&
	    verbs_link_hellos(dl->vl, hellos) == 0) {
		auth_resume_proof(v, 1, dl->res_secret, hellos, proof);
		n = engine_resume(e, dl->old, dl->res_id, proof);
		explicit_bzero(proof, sizeof(proof));
	}
	if (resume_drop(dl, WIRE_REASON_NOT_RESUMED) > 0) {
		LLOG(LOG_WARNING, dl, "%s: %s; suspended streams reset",
		    dl->name, !engine_can_resume(e) ? "the peer does not "
		    "resume streams" : older ? "the new link speaks an older "
		    "protocol version than the streams' link, and resumes "
		    "without the peer's proof" : "cannot resume on the new "
		    "link");
	}
	if (n < 0) {
		resume_identity(dl);
		return;
	}
	dl->resuming = 1;
	if (!engine_resume_proven(e))
		link_timers_proof_wait(dl);
	LLOG(LOG_INFO, dl, "%s: resuming %d stream%s suspended %.1f s ago",
	    dl->name, n, n == 1 ? "" : "s", (double)gap / 1000);
}

/*
 * Client, version 5: the peer refused the resume before proving the
 * streams' secret, so it may not be the peer that holds them (another
 * daemon at one of the tunnel's addresses, or a forged record): they
 * stay suspended, this link ends, and the next attempt goes to the
 * tunnel's next address, until resume_time passes.
 */
static int
denied_cb(void *arg, uint16_t reason)
{
	struct dlink *dl = arg;

	if (link_stays_down(dl))
		return (0);
	LLOG(LOG_WARNING, dl, "%s: the peer refused to resume the suspended "
	    "streams (%s) without proving it holds them; keeping them "
	    "suspended and trying the tunnel's next address, for the rest "
	    "of resume_time (%u s)", dl->name, wire_reason_str(reason),
	    (unsigned)dl->resume_s);
	return (1);
}

void
resume_init(struct dlink *dl)
{

	dl->er = (struct engine_resume){ .find = find_cb, .proved = proved_cb,
	    .adopt = link_adopt, .adopted = adopted_cb, .denied = denied_cb,
	    .arg = dl };
	loop_timer_init(&dl->resume_tmo, dl->lp, on_resume_tmo, dl);
}
