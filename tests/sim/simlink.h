/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * simlink: the part of link.h that bridge.c calls, over the fabric
 * (fabric.h) instead of verbs, so the daemon's real bridge.c runs on a
 * real loop and real sockets with no RDMA device.
 *
 * A simlink is one side of a fabric: its engine is the fabric's side
 * engine.  Like link.c, whoever changes the engine calls link_mark, and a
 * job at the end of the loop turn does the work: it feeds the side's
 * completions to its engine, hands the engine's events to the owner's
 * link_ops (INCOMING to incoming, the rest to event when the stream has a
 * user pointer), takes the engine's work requests onto the wire and
 * executes them at the other side, whose link it then marks.  Ring memory
 * (link_ring_*) is plain memory; a receive ring is registered with the
 * fabric under an rkey of its own, so a WRITE outside a live ring is a
 * fabric violation (simlink_error).
 *
 * It also stands in for the rest of link.h and cm.h that tunnel.c calls,
 * so tunnel_start can run a daemon over it: a client tunnel's link
 * (link_client_new) is side 0 of the fabric simlink_fabric named, and
 * link_client_start connects it, in a job, to a new incoming link on
 * side 1 reporting to the ops (cm_start's) of the daemon whose
 * configuration has listen addresses (cm_listen_commit's; one at a
 * time).  Not here: authentication (link_key is the
 * tunnel's key, or none), keepalives, going down and reconnecting, and
 * resume (link_ring_detach and link_ring_move do what verbs would, but
 * no simlink ever fails over to another); link_free and cm_stop abort
 * on a link that still carries streams rather than reset them.
 */
#ifndef SIMLINK_H
#define SIMLINK_H

#include <stdint.h>

struct dlink;
struct fab;
struct link_ops;
struct loop;

/**
 * simlink_new(lp, f, side, peer, ops, arg):
 * A link for side ${side} (0 or 1) of fabric ${f}, whose engines are
 * connected already (fab_init), on loop ${lp}, reporting to ${ops} with
 * ${arg}; ${peer} is its peer's name in logs.  It aborts when out of
 * memory.  Join it to the other side's with simlink_join.
 */
struct dlink *simlink_new(struct loop *lp, struct fab *f, int side,
    const char *peer, const struct link_ops *ops, void *arg);

/**
 * simlink_join(a, b):
 * ${a} and ${b} are the two sides of one fabric: work one posts marks
 * the other.
 */
void simlink_join(struct dlink *a, struct dlink *b);

/**
 * simlink_free(dl):
 * Free ${dl} (not its fabric, nor rings still held).  NULL is a no-op.
 */
void simlink_free(struct dlink *dl);

/**
 * simlink_fabric(f):
 * The fabric the next client link (link_client_new) connects over.
 */
void simlink_fabric(struct fab *f);

/**
 * simlink_error():
 * What went wrong on any link: a fabric violation or an engine's error;
 * NULL while nothing has.
 */
const char *simlink_error(void);

/**
 * simlink_rings(live, max):
 * How many rings the links hold now (${*live}), and the largest ever made
 * on one, in bytes (${*max}).
 */
void simlink_rings(unsigned *live, uint32_t *max);

#endif /* !SIMLINK_H */
