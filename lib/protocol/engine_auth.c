/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * engine_auth: how a link authenticates: the hellos agree, then the key
 * proof (AUTH) or the identity handshake (HANDSHAKE), whose steps turn
 * sealing on.  Layer 1: it calls engine_seal.c and engine_core.c.
 */
#include "engine.h"
#include "engine_int.h"
#include "wire.h"

void
engine_set_auth(struct engine *e, const struct engine_auth *auth)
{

	e->auth = AUTH_ASKED;
	e->a = *auth;
}

int
engine_authenticated(const struct engine *e)
{

	return (e->auth == AUTH_OFF || e->auth == AUTH_DONE);
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
		return (eng_fail(e, ENGINE_ERR_AUTH,
		    "authentication failed: %s",
		    why != NULL ? why : "handshake failed"));
	if ((rc == ENGINE_HS_KEYS && (!v7 || !e->a.initiator ||
	    outlen == 0)) || (rc == ENGINE_HS_DONE && v7 &&
	    (outlen > 0) == (e->a.initiator != 0)))
		return (eng_fail(e, ENGINE_ERR_LOCAL, "the handshake went out "
		    "of the order of protocol version %u",
		    (unsigned)e->ver_link));
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
		e->auth = AUTH_DONE;
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
int
eng_auth_agree(struct engine *e, const struct wire_hello *peer)
{
	int key = e->auth != AUTH_OFF && (e->a.step == NULL || e->a.key);
	int ident = e->auth != AUTH_OFF && e->a.step != NULL;
	const char *why = NULL;
	size_t outlen = 0;
	int rc;

	if (key && !(peer->flags & WIRE_HELLO_AUTH))
		return (eng_fail(e, ENGINE_ERR_AUTH, "authentication failed: "
		    "the peer does not authenticate (no key_file there?)"));
	if (!key && (peer->flags & WIRE_HELLO_AUTH))
		return (eng_fail(e, ENGINE_ERR_AUTH, "authentication failed: "
		    "the peer authenticates but this side has no key"));
	if (ident && !(peer->flags & WIRE_HELLO_IDENTITY))
		return (eng_fail(e, ENGINE_ERR_AUTH, "authentication failed: "
		    "the peer has no identity (no identity_file there, or a "
		    "version below 6)"));
	if (!ident && (peer->flags & WIRE_HELLO_IDENTITY))
		return (eng_fail(e, ENGINE_ERR_AUTH, "authentication failed: "
		    "the peer has an identity but this side has none (no "
		    "identity_file)"));
	if (e->auth != AUTH_OFF)
		e->auth = ident ? AUTH_HS : AUTH_KEY;
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

/* The peer's proof: the initiator's first, then the responder's answer. */
int
eng_rec_auth(struct engine *e, const struct wire_rec *r)
{

	if (e->auth != AUTH_KEY)
		return (eng_violation(e, "unexpected AUTH"));
	if (e->a.initiator && e->auth_send)
		return (eng_violation(e, "AUTH before ours"));
	if (e->a.verify(e->a.arg, r->proof) != 0)
		return (eng_fail(e, ENGINE_ERR_AUTH, "authentication failed: "
		    "the peer's proof is wrong (a different key?)"));
	e->auth = AUTH_DONE;
	/* The responder proves itself only to a peer that did. */
	if (!e->a.initiator)
		e->auth_send = 1;
	return (0);
}

/* The peer's handshake message: the embedder answers it. */
int
eng_rec_handshake(struct engine *e, const struct wire_rec *r)
{
	const char *why = NULL;
	size_t outlen = 0;
	int rc;

	if ((e->auth != AUTH_HS && e->auth != AUTH_HS_HELD) ||
	    e->hs.out_len > 0)
		return (eng_violation(e, "unexpected HANDSHAKE"));
	rc = e->a.step(e->a.arg, r->hs, r->hs_len, e->hs.out, &outlen, &why);
	return (hs_took(e, rc, why, outlen));
}
