/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * rows: rstreamctl's tables (tables.h) filled from the running daemon,
 * one row per tunnel, stream or link, for the control socket's answers
 * (show.h).  Each call starts its table afresh (tables_tunnels, ...) and
 * adds the rows; the strings are the daemon's own, so the table is
 * rendered in the same exclusive turn.
 */
#ifndef ROWS_H
#define ROWS_H

#include <stdint.h>

struct render_tab;
struct rsd;
struct tables_tunnel;
struct tun;

/**
 * rows_now_ms():
 * The wall clock now, in ms since the epoch: what link times count from
 * (a table's now_ms).
 */
uint64_t rows_now_ms(void);

/**
 * rows_tunnel(d, t, r):
 * Tunnel ${t}'s row ${r}, its strings ${t}'s own.
 */
void rows_tunnel(struct rsd *d, const struct tun *t,
    struct tables_tunnel *r);

/**
 * rows_tunnels(d, tb) / rows_streams(d, tb) / rows_links(d, tb) /
 * rows_stats(d, tb):
 * Table ${tb} of daemon ${d}'s tunnels, open streams, links, or
 * per-tunnel counters (tunnels counted with a newer namesake left out).
 */
void rows_tunnels(struct rsd *d, struct render_tab *tb);
void rows_streams(struct rsd *d, struct render_tab *tb);
void rows_links(struct rsd *d, struct render_tab *tb);
void rows_stats(struct rsd *d, struct render_tab *tb);

#endif /* !ROWS_H */
