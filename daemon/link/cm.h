/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * cm: the RDMA CM side of the daemon's links: the event channel and its
 * events (a client link connected, refused or down), the RDMA listeners,
 * and the gate and admission limits (admit.h) that a peer's connect
 * request passes before an incoming link is made for it.  The links
 * themselves are link.h's.
 */
#ifndef CM_H
#define CM_H

#include <stddef.h>

struct conf;
struct link_ops;
struct rsd;

/**
 * cm_start(d, ops, arg, err, errlen):
 * Ready the RDMA side; incoming links report to ${ops} with ${arg}.  The
 * RDMA CM is opened only once a configuration needs it (cm_listen_plan):
 * a daemon without tunnels touches no RDMA at all.  Returns 0, or -1
 * with the reason in ${err}.
 */
int cm_start(struct rsd *d, const struct link_ops *ops, void *arg,
    char *err, size_t errlen);

/**
 * cm_rdma(d, why, len):
 * What the daemon has of RDMA: "ready"; "unused" (no tunnel needed it,
 * so the RDMA CM was never opened); what verbs_cm_open said is missing
 * (verbs_rdma_name: "no-rdma-ucm", "no-device", ...); or
 * "listener-waiting" (the RDMA CM is open, but some listen address has
 * no RDMA device yet).  Unless ready or unused, ${why} gets a sentence
 * that says what is missing and what to do ("no RDMA yet: ...", "cannot
 * listen for RDMA links on ...: ..."), else "".  While anything is
 * missing the daemon tries again by itself (see cm.c), and says so in
 * its log once, and once more each time that changes.
 */
const char *cm_rdma(const struct rsd *d, char *why, size_t len);

/**
 * cm_listening(d):
 * How many RDMA listeners listen (the others wait for RDMA).
 */
size_t cm_listening(const struct rsd *d);

/**
 * cm_stop(d):
 * Free every link (their streams are reset), every RDMA listener and the
 * channel.
 */
void cm_stop(struct rsd *d);

/*
 * Listening for peers' links under a new configuration, in two steps
 * like every reload: cm_listen_plan makes what is missing (and can
 * fail); then either cm_listen_commit (cannot fail) or cm_listen_undo.
 */
struct cm_listen_plan;

/**
 * cm_listen_plan(d, nc, err, errlen):
 * The RDMA listeners ${nc} needs: those on the same address are taken
 * over, the others made.  If ${nc} needs RDMA (a tunnel's link or a
 * listener), the RDMA CM is opened first.  Where there is no RDMA yet
 * (the RDMA CM cannot be opened, or no RDMA device has a listen address)
 * the listener waits, and listens by itself once it can.  Returns the
 * plan, or NULL with the reason in ${err} (nothing changed; the RDMA CM
 * may have been opened).
 */
struct cm_listen_plan *cm_listen_plan(struct rsd *d, const struct conf *nc,
    char *err, size_t errlen);

/**
 * cm_listen_commit(d, nc, p) / cm_listen_undo(d, p):
 * Switch to plan ${p} (listeners no longer wanted close; sizes of future
 * links follow ${nc}), or undo it.  Either frees ${p}.
 */
void cm_listen_commit(struct rsd *d, const struct conf *nc,
    struct cm_listen_plan *p);
void cm_listen_undo(struct rsd *d, struct cm_listen_plan *p);

/**
 * cm_listen_close(d):
 * Stop listening for peers' links (a stopping daemon).
 */
void cm_listen_close(struct rsd *d);

#endif /* !CM_H */
