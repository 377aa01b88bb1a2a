/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * verbs-rr: request/response round trips over one RDMA RC queue pair,
 * with no daemon: the floor hol-bench reads the tunnel's figures against.
 * The server (-l) answers each SEND with a SEND of the same bytes; the
 * client sends SIZE bytes, waits for them back, N times, and prints the
 * median, 99th percentile and mean round trip in microseconds in rr's
 * words, timed with clock_gettime as rr times them (perftest's TSC
 * clock often fails under emulation, and then it prints "inf").
 *
 * With -e a side sleeps on its completion channel between completions,
 * as rstreamd's workers do (arm the CQ, poll once more, then wait for
 * the event); without, it polls.  Each side chooses for itself.
 *
 * Usage: verbs-rr -l -p PORT [-b ADDR] [-e]      (serves one client)
 *        verbs-rr -H HOST -p PORT [-s SIZE] [-n N] [-e]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "rtt.h"
#include "cm_addr.h"

#define MSG_MAX	4096

static void
die(const char *what)
{

	fprintf(stderr, "verbs-rr: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* One completion from ${cq}: polling, or sleeping on ${ch} (events). */
static void
comp(struct ibv_cq *cq, struct ibv_comp_channel *ch, int events,
    struct ibv_wc *wc)
{
	struct ibv_cq *ecq;
	void *ctx;
	int n;

	for (;;) {
		if ((n = ibv_poll_cq(cq, 1, wc)) != 0)
			break;
		if (!events)
			continue;
		if (ibv_req_notify_cq(cq, 0) != 0)
			die("ibv_req_notify_cq");
		if ((n = ibv_poll_cq(cq, 1, wc)) != 0)
			break;
		if (ibv_get_cq_event(ch, &ecq, &ctx) != 0)
			die("ibv_get_cq_event");
		ibv_ack_cq_events(ecq, 1);
	}
	if (n < 0)
		die("ibv_poll_cq");
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "verbs-rr: completion failed: %s\n",
		    ibv_wc_status_str(wc->status));
		exit(1);
	}
}

struct ep {
	struct rdma_cm_id *id;
	struct ibv_mr *rmr, *smr;
	char rbuf[MSG_MAX], sbuf[MSG_MAX];
	uint32_t max_inline;
	int events;
};

static void
ep_ready(struct ep *p)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;

	if ((p->rmr = rdma_reg_msgs(p->id, p->rbuf, MSG_MAX)) == NULL ||
	    (p->smr = rdma_reg_msgs(p->id, p->sbuf, MSG_MAX)) == NULL)
		die("rdma_reg_msgs");
	if (ibv_query_qp(p->id->qp, &qa, IBV_QP_CAP, &qi) != 0)
		die("ibv_query_qp");
	p->max_inline = qa.cap.max_inline_data;
	if (rdma_post_recv(p->id, NULL, p->rbuf, MSG_MAX, p->rmr) != 0)
		die("rdma_post_recv");
}

/* Send ${len} bytes of sbuf and wait for the send's completion. */
static void
ep_send(struct ep *p, size_t len)
{
	struct ibv_wc wc;

	if (rdma_post_send(p->id, NULL, p->sbuf, len, p->smr,
	    IBV_SEND_SIGNALED | (len <= p->max_inline ? IBV_SEND_INLINE : 0)) != 0)
		die("rdma_post_send");
	comp(p->id->send_cq, p->id->send_cq_channel, p->events, &wc);
}

/* Wait for the next message; post the receive again. */
static size_t
ep_recv(struct ep *p)
{
	struct ibv_wc wc;

	comp(p->id->recv_cq, p->id->recv_cq_channel, p->events, &wc);
	if (rdma_post_recv(p->id, NULL, p->rbuf, MSG_MAX, p->rmr) != 0)
		die("rdma_post_recv");
	return (wc.byte_len);
}

static void
qp_attr(struct ibv_qp_init_attr *a)
{

	memset(a, 0, sizeof(*a));
	a->cap.max_send_wr = a->cap.max_recv_wr = 4;
	a->cap.max_send_sge = a->cap.max_recv_sge = 1;
	a->cap.max_inline_data = 64;
	a->qp_type = IBV_QPT_RC;
}

/* Answer each message with its bytes until an empty one says goodbye. */
static int
serve(struct ep *p, const char *bind, const char *port)
{
	struct rdma_cm_id *lid;
	struct ibv_qp_init_attr a;
	size_t len;

	qp_attr(&a);
	if (rdma_create_ep(&lid, cm_addr("verbs-rr", bind, port, 1), NULL,
	    &a) != 0)
		die("rdma_create_ep");
	if (rdma_listen(lid, 1) != 0)
		die("rdma_listen");
	printf("verbs-rr: waiting for a client on port %s\n", port);
	fflush(stdout);
	if (rdma_get_request(lid, &p->id) != 0)
		die("rdma_get_request");
	ep_ready(p);
	if (cm_join(p->id, 1) != 0)
		die("rdma_accept");
	while ((len = ep_recv(p)) != 0) {
		memcpy(p->sbuf, p->rbuf, len);
		ep_send(p, len);
	}
	rdma_disconnect(p->id);
	return (0);
}

static int
client(struct ep *p, const char *host, const char *port, int size, int n)
{
	struct ibv_qp_init_attr a;
	double *rtt, t0, start;
	int i;

	if ((rtt = calloc((size_t)n, sizeof(double))) == NULL)
		die("calloc");
	qp_attr(&a);
	if (rdma_create_ep(&p->id, cm_addr("verbs-rr", host, port, 0), NULL,
	    &a) != 0)
		die("rdma_create_ep");
	ep_ready(p);
	if (cm_join(p->id, 0) != 0)
		die("rdma_connect");
	memset(p->sbuf, 'x', (size_t)size);
	start = rtt_now_us();
	for (i = 0; i < n; i++) {
		t0 = rtt_now_us();
		ep_send(p, (size_t)size);
		if (ep_recv(p) != (size_t)size) {
			fprintf(stderr, "verbs-rr: short answer after %d\n",
			    i);
			return (1);
		}
		rtt[i] = rtt_now_us() - t0;
	}
	start = rtt_now_us() - start;
	ep_send(p, 0);
	rtt_report(rtt, n, "round trips", size, start);
	rdma_disconnect(p->id);
	free(rtt);
	return (0);
}

int
main(int argc, char **argv)
{
	static struct ep p;
	const char *host = NULL, *bind = NULL, *port = NULL;
	int c, listen = 0, size = 64, n = 1000;

	while ((c = getopt(argc, argv, "lb:H:p:s:n:e")) != -1) {
		switch (c) {
		case 'l':
			listen = 1;
			break;
		case 'b':
			bind = optarg;
			break;
		case 'H':
			host = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 's':
			size = atoi(optarg);
			break;
		case 'n':
			n = atoi(optarg);
			break;
		case 'e':
			p.events = 1;
			break;
		default:
			goto usage;
		}
	}
	if (port == NULL || size < 1 || size > MSG_MAX || n < 1 ||
	    (listen ? host != NULL : host == NULL))
		goto usage;
	return (listen ? serve(&p, bind, port) :
	    client(&p, host, port, size, n));
usage:
	fprintf(stderr, "usage: verbs-rr -l -p PORT [-b ADDR] [-e]\n"
	    "       verbs-rr -H HOST -p PORT [-s SIZE] [-n N] [-e]\n");
	return (2);
}
