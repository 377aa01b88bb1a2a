/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * connect: a client link's attempts to reach its peer.  Each attempt
 * goes to the next of the peer's entries and addresses, once the name is
 * resolved and a connect slot to the address is free (LINK_CONNECT_SLOTS,
 * link_int.h); a refused attempt is tried again at once in an older
 * protocol version the peer asked for (a step-down), or when a slot
 * frees for a busy peer; a failed one after the back-off.  The link's
 * life is link_life.c's, which calls these; a failed attempt ends the
 * link with link_fail.  These run in exclusive turns only.
 */
#ifndef CONNECT_H
#define CONNECT_H

#include <stddef.h>

struct conf_addr;
struct dlink;
struct verbs_ev;

/**
 * connect_next(dl):
 * Start client link ${dl}'s next attempt (or the same address again for
 * a step-down), or wait for the peer's name or a connect slot.  Nothing
 * starts once the link stays down (link_stays_down).  A failed attempt
 * takes the link down.
 */
void connect_next(struct dlink *dl);

/**
 * connect_refused(dl, ev, why, len):
 * Client link ${dl}'s attempt ended with CM event ${ev}: what its peer's
 * refusal says, and why the link is down, which is ${ev->why} or a
 * sentence in ${why}.  A busy peer is asked again once a sibling is up.
 * A peer that refused our version gets one more attempt to the same
 * address in the older version it named (a step-down, counted), never
 * below the tunnel's min_version (counted as refused), and never
 * silently: a reject carries no authentication.  What the next attempt
 * says is decided afresh, so no refusal holds a link at an older
 * version.
 */
const char *connect_refused(struct dlink *dl, const struct verbs_ev *ev,
    char *why, size_t len);

/**
 * connect_device(dl, ev):
 * Client link ${dl}'s address resolved to a device that honours what
 * VERBS_EV_DEVICE ${ev} says: warn, once for the link, of the tunnel's
 * settings it ignores (conf_qos_warn), at their file and line.
 */
void connect_device(struct dlink *dl, const struct verbs_ev *ev);

/**
 * connect_too_old(dl, version, why, len):
 * Whether client link ${dl}'s peer answered in protocol version
 * ${version}, below its tunnel's min_version: then the step-down is
 * refused (counted), and ${why} says so.
 */
int connect_too_old(struct dlink *dl, unsigned version, char *why,
    size_t len);

/**
 * connect_again(dl):
 * ${dl}'s attempt ended: if it was refused for a step-down or a busy
 * peer, and the link does not stay down, it asks again (see above):
 * returns 1.  Otherwise it failed, and any step-down is forgotten: 0.
 */
int connect_again(struct dlink *dl);

/**
 * connect_slot_release(dl) / connect_slot_unqueue(dl):
 * ${dl} is up or down: its connect slot goes to the next link waiting for
 * one.  ${dl} no longer waits for a slot.
 */
void connect_slot_release(struct dlink *dl);
void connect_slot_unqueue(struct dlink *dl);

/**
 * connect_naming(dl, peer):
 * Client link ${dl}'s peer and name, for peer entry ${peer}.
 */
void connect_naming(struct dlink *dl, const struct conf_addr *peer);

#endif /* !CONNECT_H */
