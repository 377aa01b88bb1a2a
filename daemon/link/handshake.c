/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "conf.h"
#include "engine.h"
#include "handshake.h"
#include "ident.h"
#include "link_int.h"
#include "noise.h"
#include "rsd.h"
#include "seal.h"
#include "verbs.h"

/* rstreamd-protocol(7), "Identities": no terminators. */
static const char label_prologue[] = "rstream-noise-v1";
static const char label_psk[] = "rstream-psk-v1";
static const char label_confirm[] = "rstream-confirm-v1";

#define LABEL_LEN(l)	(sizeof(l) - 1)
/* The responder's confirmation (version 7): a BLAKE2b-256 tag. */
#define CONFIRM_LEN	NOISE_KEY_LEN

/* ------------------------------------------------------ pre-shared keys */

/* The engine wants this side's proof (see auth.h). */
static void
prove(void *arg, uint8_t proof[WIRE_AUTH_LEN])
{
	struct dlink *dl = arg;
	uint8_t hellos[AUTH_HELLOS_LEN];

	/* Both hellos exist once connected; a zero proof fails anyway. */
	memset(proof, 0, WIRE_AUTH_LEN);
	if (verbs_link_hellos(dl->vl, hellos) == 0)
		auth_proof(dl->key->key, dl->key->len, dl->c != NULL, hellos,
		    proof);
}

/* True, and ${k} is the link's key from now on, if the initiator proved it. */
static int
proves(struct dlink *dl, const struct conf_key *k,
    const uint8_t hellos[AUTH_HELLOS_LEN], const uint8_t proof[WIRE_AUTH_LEN])
{

	if (!k->set || auth_check(k->key, k->len, 1, hellos, proof) != 0)
		return (0);
	dl->proved = *k;
	dl->key = &dl->proved;
	return (1);
}

/*
 * The keys a peer linking to us may hold, by ${i} from 0 to ntunnels:
 * the global key (0), then each target tunnel's (i - 1); NULL for one
 * that is not set or not a target's.
 */
static const struct conf_key *
candidate(const struct conf *c, size_t i)
{
	const struct conf_key *k = i == 0 ? &c->key : &c->tunnels[i - 1].key;

	if (!k->set || (i > 0 && !c->tunnels[i - 1].has_target))
		return (NULL);
	return (k);
}

/*
 * The peer's proof.  Our own links know their key.  A peer linking to us
 * may hold any candidate: the one it proves decides which tunnels it may
 * open.
 */
static int
verify(void *arg, const uint8_t proof[WIRE_AUTH_LEN])
{
	struct dlink *dl = arg;
	const struct conf *c = dl->d->conf;
	const struct conf_key *k;
	uint8_t hellos[AUTH_HELLOS_LEN];
	size_t i;

	if (verbs_link_hellos(dl->vl, hellos) != 0)
		return (-1);
	if (dl->c != NULL)
		return (auth_check(dl->key->key, dl->key->len, 0, hellos,
		    proof));
	for (i = 0; i <= c->ntunnels; i++)
		if ((k = candidate(c, i)) != NULL &&
		    proves(dl, k, hellos, proof))
			return (0);
	return (-1);
}

/* ----------------------------------------------------------- identities */

/* Noise's psk from a key file's bytes: BLAKE2b-256 of a label and them. */
static void
psk_of(const struct conf_key *k, uint8_t psk[NOISE_KEY_LEN])
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, NULL, 0, NOISE_KEY_LEN);
	crypto_generichash_update(&st, (const uint8_t *)label_psk,
	    LABEL_LEN(label_psk));
	crypto_generichash_update(&st, k->key, k->len);
	crypto_generichash_final(&st, psk, NOISE_KEY_LEN);
	sodium_memzero(&st, sizeof(st));
}

/*
 * Start the handshake: Noise_XXpsk3 when both hellos said AUTH, else
 * Noise_XX.  The responder learns which of its keys the peer holds only
 * from message 3 (read_last_psk): until then its psk is a placeholder.
 */
static int
hs_start(struct dlink *dl, const uint8_t hellos[AUTH_HELLOS_LEN])
{
	uint8_t prologue[LABEL_LEN(label_prologue) + AUTH_HELLOS_LEN];
	uint8_t psk[NOISE_KEY_LEN];
	int rc;

	handshake_forget(dl);
	if ((dl->hs = sodium_malloc(sizeof(*dl->hs))) == NULL)
		return (-1);
	memcpy(prologue, label_prologue, LABEL_LEN(label_prologue));
	memcpy(prologue + LABEL_LEN(label_prologue), hellos, AUTH_HELLOS_LEN);
	memset(psk, 0, sizeof(psk));
	if (dl->c != NULL && dl->ea.key)
		psk_of(dl->key, psk);
	rc = noise_init(dl->hs, dl->c != NULL, prologue, sizeof(prologue),
	    dl->d->conf->identity.priv, dl->d->conf->identity.pub,
	    dl->ea.key ? psk : NULL);
	sodium_memzero(psk, sizeof(psk));
	return (rc);
}

/* The handshake's state goes, wiped. */
void
handshake_forget(struct dlink *dl)
{

	if (dl->hs != NULL) {
		noise_wipe(dl->hs);
		sodium_free(dl->hs);
		dl->hs = NULL;
	}
}

/* Does a candidate before ${i} have the bytes of ${k}?  (Tunnels that
 * inherit the global key repeat it.) */
static int
tried(const struct conf *c, size_t i, const struct conf_key *k)
{
	const struct conf_key *o;
	size_t j;

	for (j = 0; j < i; j++)
		if ((o = candidate(c, j)) != NULL && o->len == k->len &&
		    memcmp(o->key, k->key, k->len) == 0)
			return (1);
	return (0);
}

/*
 * The responder, message 3's head read (its one Diffie-Hellman done),
 * finishes it with the psk of each candidate in turn, each key's bytes
 * once: the one that opens it is the key the link proved, as verify's
 * is.  A try costs the psk's mixing and the payload's tag, no X25519.
 */
static int
read_last_psk(struct dlink *dl, const uint8_t *in, size_t inlen)
{
	const struct conf *c = dl->d->conf;
	const struct conf_key *k;
	struct noise_hs *try;
	uint8_t psk[NOISE_KEY_LEN];
	size_t i, plen;
	int rc = -1;

	if ((try = sodium_malloc(sizeof(*try))) == NULL)
		return (-1);
	for (i = 0; i <= c->ntunnels && rc != 0; i++) {
		if ((k = candidate(c, i)) == NULL || tried(c, i, k))
			continue;
		memcpy(try, dl->hs, sizeof(*try));
		psk_of(k, psk);
		if (noise_set_psk(try, psk) == 0 &&
		    noise_read(try, in, inlen, NULL, 0, &plen) == 0) {
			memcpy(dl->hs, try, sizeof(*try));
			dl->proved = *k;
			dl->key = &dl->proved;
			rc = 0;
		}
	}
	sodium_memzero(psk, sizeof(psk));
	noise_wipe(try);
	sodium_free(try);
	return (rc);
}

/*
 * Does ${c} trust the peer whose static key dl->peer_pub is: is it among
 * the peers, and may client tunnel ${t} (NULL: an incoming link) use it?
 * Its entry, or NULL with why not in dl->hs_why.
 */
static const struct conf_peer *
trusted(struct dlink *dl, const struct conf *c, const struct conf_tunnel *t)
{
	const struct conf_peer *p;

	if ((p = conf_peer_by_pub(c, dl->peer_pub)) == NULL) {
		snprintf(dl->hs_why, sizeof(dl->hs_why), "the peer's identity "
		    "%s is not among the peers", dl->peer_b64);
	} else if (t != NULL && !conf_tunnel_trusts(c, t, p)) {
		snprintf(dl->hs_why, sizeof(dl->hs_why), "the peer is %s, "
		    "which tunnel %s does not name in its peers", p->name,
		    t->name);
		p = NULL;
	}
	return (p);
}

/* Is the peer's static key one of ours, and may this link's tunnel use
 * it?  Sets the link's peer identity. */
static int
peer_known(struct dlink *dl, const char **why)
{
	const uint8_t *pub = noise_remote_static(dl->hs);
	const struct conf_peer *p;

	if (pub == NULL) {
		*why = "the handshake gave no identity";
		return (-1);
	}
	memcpy(dl->peer_pub, pub, IDENT_KEY_LEN);
	ident_b64(pub, dl->peer_b64);
	if ((p = trusted(dl, dl->d->conf, dl->c)) == NULL) {
		*why = dl->hs_why;
		return (-1);
	}
	snprintf(dl->peer_id, sizeof(dl->peer_id), "%s", p->name);
	return (0);
}

/* A client link answers to its tunnel as configured now: a retired one's
 * streams, to the tunnel of its name that replaced it. */
const char *
handshake_revoked(struct dlink *dl)
{
	const struct conf *c = dl->d->conf;
	const struct conf_tunnel *t = NULL;

	if (!dl->ident)
		return (NULL);
	if (dl->c != NULL && ((t = conf_tunnel_find(c, dl->c->name)) == NULL ||
	    !t->has_accept))
		t = dl->c;
	return (trusted(dl, c, t) != NULL ? NULL : dl->hs_why);
}

/*
 * Does the responder confirm (version 7: both hellos say 7 or more)?
 * Byte 4 of each hello is its version (rstreamd-protocol(7)).
 */
static int
confirms(const uint8_t hellos[AUTH_HELLOS_LEN])
{

	return (hellos[4] >= 7 && hellos[WIRE_HELLO_LEN + 4] >= 7);
}

/*
 * The responder's confirmation: BLAKE2b-256 keyed with Split's third key
 * ${k3}, of a label and the handshake hash (rstreamd-protocol(7),
 * "Confirmation"), into dl->confirm.
 */
static void
confirm_of(struct dlink *dl, const uint8_t k3[NOISE_KEY_LEN])
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, k3, NOISE_KEY_LEN, CONFIRM_LEN);
	crypto_generichash_update(&st, (const uint8_t *)label_confirm,
	    LABEL_LEN(label_confirm));
	crypto_generichash_update(&st, dl->hh, sizeof(dl->hh));
	crypto_generichash_final(&st, dl->confirm, CONFIRM_LEN);
	sodium_memzero(&st, sizeof(st));
}

/*
 * The handshake is done: keys for sealing, the link's binding and, from
 * version 7, the confirmation.
 */
static int
hs_finish(struct dlink *dl, const uint8_t hellos[AUTH_HELLOS_LEN],
    const char **why)
{
	uint8_t c1[NOISE_KEY_LEN], c2[NOISE_KEY_LEN], k3[NOISE_KEY_LEN];
	const uint8_t *mine = dl->c != NULL ? hellos : hellos +
	    WIRE_HELLO_LEN;
	const uint8_t *theirs = dl->c != NULL ? hellos + WIRE_HELLO_LEN :
	    hellos;
	enum seal_aead a;
	int rc = 0;

	noise_split(dl->hs, c1, c2, k3, dl->hh);
	handshake_forget(dl);
	confirm_of(dl, k3);
	sodium_memzero(k3, sizeof(k3));
	/* Flags are byte 5 of each hello (rstreamd-protocol(7)). */
	dl->sealed = ((mine[5] | theirs[5]) & WIRE_HELLO_SEAL) != 0;
	/* A link that connects again drops its last connection's keys. */
	seal_pair_wipe(&dl->seal);
	if (dl->sealed) {
		a = (mine[5] & theirs[5] & WIRE_HELLO_AESGCM) ? SEAL_AESGCM :
		    SEAL_CHACHAPOLY;
		if (seal_pair_init(&dl->seal, a, dl->c != NULL ? c1 : c2,
		    dl->c != NULL ? c2 : c1) != 0) {
			dl->sealed = 0;
			*why = "out of memory for the link's sealing keys";
			rc = -1;
		}
		dl->aead = a;
	}
	/* Last: metrics, in another thread, reads the rest once it is set. */
	__atomic_store_n(&dl->ident, 1, __ATOMIC_RELEASE);
	sodium_memzero(c1, sizeof(c1));
	sodium_memzero(c2, sizeof(c2));
	return (rc);
}

/* The initiator checks the responder's confirmation (version 7). */
static int
confirmed(struct dlink *dl, const uint8_t *in, size_t inlen,
    const char **why)
{
	int rc;

	rc = dl->ident && inlen == CONFIRM_LEN &&
	    sodium_memcmp(in, dl->confirm, CONFIRM_LEN) == 0;
	sodium_memzero(dl->confirm, sizeof(dl->confirm));
	if (!rc) {
		*why = "the peer's confirmation is wrong (a different psk, or "
		    "a forged message)";
		return (-1);
	}
	return (ENGINE_HS_DONE);
}

/*
 * One step of Noise_XX (rstreamd-protocol(7), "Identities"): the
 * initiator writes message 1, the responder reads it and writes 2, the
 * initiator reads 2 (and checks who answered) and writes 3, the responder
 * reads 3's head (the peer's identity), checks who connected before it
 * tries a psk, reads the rest and, from version 7, confirms; the
 * initiator checks the confirmation.
 *
 * Every step but the initiator's first (made as it connects) runs in a
 * shared turn of the link's loop (link_share), beside other workers'
 * shared turns: it writes only the link's owner fields (and ident, last,
 * atomic), and reads the configuration as dl->d->conf is in this turn.
 * A reload swaps that only in an exclusive turn, never during a step, so
 * a step sees one configuration throughout; a handshake a reload
 * overtakes finishes under the identity it started with (the Noise state
 * holds a copy), and is checked against the peers and keys of the
 * configuration its last message meets, as link_revoke then checks it.
 */
static int
step(void *arg, const uint8_t *in, size_t inlen, uint8_t *out,
    size_t *outlen, const char **why)
{
	struct dlink *dl = arg;
	uint8_t hellos[AUTH_HELLOS_LEN];
	size_t plen;
	int initiator = dl->c != NULL, rc;

	*outlen = 0;
	*why = "the handshake failed (a different psk, or a forged message)";
	if (verbs_link_hellos(dl->vl, hellos) != 0)
		return (-1);
	/* Split already: what comes now is the responder's confirmation. */
	if (initiator && in != NULL && dl->hs == NULL)
		return (confirmed(dl, in, inlen, why));
	if (in == NULL || (!initiator && dl->hs == NULL)) {
		if (hs_start(dl, hellos) != 0)
			return (-1);
		if (in != NULL && noise_read(dl->hs, in, inlen, NULL, 0,
		    &plen) != 0)
			return (-1);
		return (noise_write(dl->hs, NULL, 0, out, WIRE_HS_MAX,
		    outlen) == 0 ? ENGINE_HS_MORE : -1);
	}
	if (initiator) {
		if (noise_read(dl->hs, in, inlen, NULL, 0, &plen) != 0)
			return (-1);
		if (peer_known(dl, why) != 0 || noise_write(dl->hs, NULL, 0,
		    out, WIRE_HS_MAX, outlen) != 0)
			return (-1);
	} else {
		if (noise_read_head(dl->hs, in, inlen) != 0 ||
		    peer_known(dl, why) != 0)
			return (-1);
		rc = dl->ea.key ? read_last_psk(dl, in, inlen) :
		    noise_read(dl->hs, in, inlen, NULL, 0, &plen);
		if (rc != 0)
			return (-1);
	}
	if (hs_finish(dl, hellos, why) != 0)
		return (-1);
	if (!confirms(hellos)) {
		sodium_memzero(dl->confirm, sizeof(dl->confirm));
		return (ENGINE_HS_DONE);
	}
	if (initiator)
		return (ENGINE_HS_KEYS);
	memcpy(out, dl->confirm, CONFIRM_LEN);
	*outlen = CONFIRM_LEN;
	sodium_memzero(dl->confirm, sizeof(dl->confirm));
	return (ENGINE_HS_DONE);
}

/* ------------------------------------------------------------------ setup */

/*
 * The serving side asks for sealing when every target tunnel encrypts:
 * the link then is sealed whatever the client says.  Otherwise the
 * client's tunnel decides, and a target tunnel that encrypts refuses
 * streams on a link that is not sealed (tunnel.c).
 */
static int
all_encrypt(const struct conf *c)
{
	size_t i;
	int n = 0;

	for (i = 0; i < c->ntunnels; i++) {
		if (!c->tunnels[i].has_target)
			continue;
		if (!c->tunnels[i].encrypt)
			return (0);
		n++;
	}
	return (n > 0);
}

/* Does the daemon hold any key a peer could prove? */
static int
any_key(const struct conf *c)
{
	size_t i;

	for (i = 0; i < c->ntunnels; i++)
		if (c->tunnels[i].has_target && c->tunnels[i].key.set)
			return (1);
	return (c->key.set);
}

void
handshake_init(struct dlink *dl, int initiator, int peer_key, int peer_ident)
{
	const struct conf *c = dl->d->conf;

	dl->ea = (struct engine_auth){ .initiator = initiator, .arg = dl };
	__atomic_store_n(&dl->ident, 0, __ATOMIC_RELEASE);
	dl->sealed = dl->revoked = 0;
	dl->peer_id[0] = '\0';
	if (!c->identity.set || (!initiator && !peer_ident)) {
		dl->ea.prove = prove;
		dl->ea.verify = verify;
		return;
	}
	dl->ea.step = step;
	dl->ea.key = (uint8_t)(initiator ? dl->key->set : peer_key &&
	    any_key(c));
	dl->ea.seal = (uint8_t)(initiator ? dl->c->encrypt :
	    all_encrypt(c));
	dl->ea.aesgcm = (uint8_t)seal_aesgcm_available();
	dl->es = (struct engine_seal){ .seal = seal_pair_seal,
	    .open = seal_pair_open, .restore = seal_pair_restore,
	    .ptr = seal_pair_ptr, .arg = &dl->seal };
}

void
handshake_wipe(struct dlink *dl)
{

	handshake_forget(dl);
	sodium_memzero(dl->hh, sizeof(dl->hh));
	sodium_memzero(dl->confirm, sizeof(dl->confirm));
	seal_pair_wipe(&dl->seal);
}
