/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * handshake: how a link authenticates (see rstreamd-protocol(7),
 * "Authentication" and "Identities"), for the link rooms only.
 *
 * Without a node identity (identity_file), or towards a peer whose hello
 * has none, a link proves a pre-shared key (auth.h).  With identities on
 * both sides it runs Noise_XX (Noise_XXpsk3 when both also hold a key)
 * over lib/crypto/noise, with both hellos in the prologue, and checks the
 * peer's static key against the configured peers; from version 7 the
 * responder that accepted the initiator confirms it holds the session's
 * keys, and the initiator is up only once that checks.  Then it keeps
 * the handshake hash (the link's binding, which the resume secret
 * derives from) and, when the link is sealed, one lib/crypto/seal
 * direction each way for the engine's sealing callbacks.  Nothing here is
 * hand-made cryptography: Noise, the AEADs and BLAKE2b are the
 * libraries'.
 */
#ifndef HANDSHAKE_H
#define HANDSHAKE_H

struct dlink;

/**
 * handshake_init(dl, initiator, peer_key, peer_ident):
 * Fill ${dl->ea} (and ${dl->es}, the sealing callbacks) for a link this
 * side connected (${initiator}) or accepted from a peer whose hello said
 * AUTH (${peer_key}) and IDENTITY (${peer_ident}).
 */
void handshake_init(struct dlink *dl, int initiator, int peer_key,
    int peer_ident);

/**
 * handshake_revoked(dl):
 * Why the running configuration no longer trusts the identity ${dl}'s
 * peer proved (a reload took it out of the peers, or out of the peers of
 * the client tunnel now configured under the link's tunnel's name), said
 * as a handshake would refuse it; NULL if it still does, or if ${dl}
 * proved no identity.
 */
const char *handshake_revoked(struct dlink *dl);

/**
 * handshake_forget(dl):
 * Drop a handshake in progress (the link is gone, or tries again).
 */
void handshake_forget(struct dlink *dl);

/**
 * handshake_wipe(dl):
 * handshake_forget, and wipe the link's binding and sealing keys.
 */
void handshake_wipe(struct dlink *dl);

#endif /* !HANDSHAKE_H */
