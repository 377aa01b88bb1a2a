/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * cm_addr.h: what verbs_rr and verbs_relay share: the rdma_cm address
 * of a peer (or of a listener) on the TCP port space.
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

#endif
