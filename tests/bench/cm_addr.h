/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * cm_addr.h: what verbs_rr and verbs_relay share: the rdma_cm address
 * of a peer (or of a listener) on the TCP port space, and the connection
 * settings rstreamd's links have by default.
 */
#ifndef CM_ADDR_H
#define CM_ADDR_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>

/*
 * ${host}:${port} for rdma_create_ep, passive to listen on it; when it
 * cannot be found, ${prog} says so and exits 1.
 */
static inline struct rdma_addrinfo *
cm_addr(const char *prog, const char *host, const char *port, int passive)
{
	struct rdma_addrinfo hints, *res;

	memset(&hints, 0, sizeof(hints));
	hints.ai_port_space = RDMA_PS_TCP;
	if (passive)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(host, port, &hints, &res) != 0) {
		fprintf(stderr, "%s: rdma_getaddrinfo: %s\n", prog,
		    strerror(errno));
		exit(1);
	}
	return (res);
}

/*
 * Connect or accept ${id}: no RDMA READ, rstreamd's default ack timeout
 * (14, about 67 ms), and 6 retries where librdmacm's default (and
 * rstreamd's) is 7, which Soft-RoCE takes to mean "for ever": rstreamd's
 * keepalives end a link whose peer went dark, these tools have none.  A
 * SEND whose acknowledgment was lost as its peer disconnected (its queue
 * pair then drops it) would be sent again for ever, and a side waiting
 * for its completion spin until killed; 6 fails it within a second.
 */
static inline int
cm_join(struct rdma_cm_id *id, int passive)
{
	struct rdma_conn_param p;
	uint8_t t = 14;

	memset(&p, 0, sizeof(p));
	p.retry_count = 6;
	p.rnr_retry_count = 7;
	(void)rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
	    &t, sizeof(t));
	return (passive ? rdma_accept(id, &p) : rdma_connect(id, &p));
}

#endif
