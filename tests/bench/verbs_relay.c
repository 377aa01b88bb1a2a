/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * verbs-relay: the least a pair of tunnel daemons can do, as a floor for
 * hol-bench's idle round trip.  A pair of relays carries each TCP
 * connection's bytes over an RDMA RC queue pair of its own, in SENDs, as
 * a socat relay pair carries them over TCP: the front (-a) accepts a
 * client on 127.0.0.1, connects a queue pair to the back (-l), and the
 * back connects to the target.  Each side is one process with one
 * thread that sleeps in epoll_wait on its socket and on its receive
 * CQ's completion channel, as rstreamd's workers do, and in a turn reads
 * the socket into one SEND, or writes each received message to the
 * socket and posts that receive again.  No framing, no streams.  Flow
 * control is credits, so that a bulk stream never meets a receiver not
 * ready (whose retry waits 655 ms): a side may have RECVS - RESERVE data
 * SENDs unanswered, and each SEND WITH IMMEDIATE carries, in its
 * immediate, the receives posted again since the last (a side with no
 * bytes to send sends an empty one once it owes CREDIT_BATCH).  A
 * request/response stream's answers carry them at no extra cost.  An
 * empty SEND without an immediate says the connection ended.  Each
 * connection has a queue pair of its own.  Each side serves one
 * connection at a time, in its own process, unless -n N: then the back
 * listens on PORT to PORT + N - 1, one process each, and the front forks
 * a process for each client (as socat's fork does) and sends its Kth
 * client (from 0) to PORT + K mod N, so that up to N clients that come
 * and stay together (pgbench's, or hol-bench's round trips beside bulk)
 * are carried at once.  With -P a side never sleeps: it spins between a
 * non-blocking read of its socket and a poll of its CQ, the floor of a
 * daemon that busy-polls.
 *
 * Usage: verbs-relay -l -p PORT [-n N] [-b ADDR] -t HOST:PORT [-P]  (back)
 *        verbs-relay -a LPORT -H HOST -p PORT [-n N] [-P]           (front)
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "cm_addr.h"

#define MSG_MAX	4096
#define RECVS	16
#define SENDS	16
/* Receives kept for SENDs that carry no bytes (credit, the end): each
   credit message returns at least CREDIT_BATCH of the RECVS - RESERVE
   data credits, so no more than 2 are ever unread, and the end is 1. */
#define RESERVE		4
#define CREDIT_BATCH	((RECVS - RESERVE) / 2)

static void __attribute__((noreturn))
die(const char *what)
{

	fprintf(stderr, "verbs-relay: %s: %s\n", what, strerror(errno));
	exit(1);
}

struct ep {
	struct rdma_cm_id *id;
	struct ibv_mr *rmr, *smr;
	char rbuf[RECVS][MSG_MAX], sbuf[SENDS][MSG_MAX];
	unsigned sent, done;	/* SENDs posted, and completed */
	unsigned credits;	/* data SENDs the peer has room for */
	unsigned owed;		/* receives posted again, not yet told */
	uint32_t max_inline;
	int spin;		/* -P: poll, never sleep */
};

static void
post_recv(struct ep *p, int i)
{

	if (rdma_post_recv(p->id, (void *)(uintptr_t)i, p->rbuf[i], MSG_MAX,
	    p->rmr) != 0)
		die("rdma_post_recv");
}

static void
ep_ready(struct ep *p)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	int i;

	if ((p->rmr = rdma_reg_msgs(p->id, p->rbuf, sizeof(p->rbuf))) ==
	    NULL || (p->smr = rdma_reg_msgs(p->id, p->sbuf,
	    sizeof(p->sbuf))) == NULL)
		die("rdma_reg_msgs");
	if (ibv_query_qp(p->id->qp, &qa, IBV_QP_CAP, &qi) != 0)
		die("ibv_query_qp");
	p->max_inline = qa.cap.max_inline_data;
	p->sent = p->done = 0;
	p->credits = RECVS - RESERVE;
	p->owed = 0;
	for (i = 0; i < RECVS; i++)
		post_recv(p, i);
}

static void
ep_close(struct ep *p)
{

	rdma_disconnect(p->id);
	rdma_dereg_mr(p->rmr);
	rdma_dereg_mr(p->smr);
	rdma_destroy_ep(p->id);
}

/*
 * Reap the SENDs' completions; with ${wait}, until no more than ${wait} - 1
 * are outstanding (SENDS: until a send buffer is free; 1: all).  0, or -1
 * once one failed (said on stderr).
 */
static int
reap(struct ep *p, unsigned wait)
{
	struct ibv_wc wc[SENDS];
	int n;

	do {
		if ((n = ibv_poll_cq(p->id->send_cq, SENDS, wc)) < 0)
			die("ibv_poll_cq");
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "verbs-relay: send failed: "
				    "%s\n", ibv_wc_status_str(wc[i].status));
				return (-1);
			}
			p->done++;
		}
	} while (wait != 0 && p->sent - p->done >= wait);
	return (0);
}

/*
 * Post a SEND of ${len} bytes, a send buffer being free; with ${imm},
 * WITH IMMEDIATE, the credits owed going with it.
 */
static void
post_now(struct ep *p, const char *buf, size_t len, int imm)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	char *b;

	b = p->sbuf[p->sent % SENDS];
	if (len > 0)
		memcpy(b, buf, len);
	memset(&wr, 0, sizeof(wr));
	sge.addr = (uintptr_t)b;
	sge.length = (uint32_t)len;
	sge.lkey = p->smr->lkey;
	wr.sg_list = &sge;
	wr.num_sge = len > 0 ? 1 : 0;
	wr.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED |
	    (len <= p->max_inline ? IBV_SEND_INLINE : 0);
	if (imm) {
		wr.imm_data = htonl(p->owed);
		p->owed = 0;
	}
	if ((errno = ibv_post_send(p->id->qp, &wr, &bad)) != 0)
		die("ibv_post_send");
	p->sent++;
}

/* The same, once a send buffer is free; a failed SEND ends the process. */
static void
post(struct ep *p, const char *buf, size_t len, int imm)
{

	if (reap(p, SENDS) != 0)
		exit(1);
	post_now(p, buf, len, imm);
}

/*
 * Say the connection ended (an empty SEND without an immediate), and wait
 * until it went, so that it goes out before the disconnect.  It may fail
 * where the peer ended first: its last acknowledgment can be lost as it
 * disconnects (cm_join); the connection ends either way.
 */
static void
goodbye(struct ep *p)
{

	if (reap(p, SENDS) == 0) {
		post_now(p, NULL, 0, 0);
		(void)reap(p, 1);
	}
}

/* All of ${buf} to ${fd} (a write cut short by its reader's end is
 * followed by one that fails); 0, or -1 with errno. */
static int
write_all(int fd, const char *buf, size_t len)
{
	ssize_t r;

	for (; len > 0; buf += r, len -= (size_t)r)
		if ((r = write(fd, buf, len)) < 0 && errno != EINTR)
			return (-1);
		else if (r < 0)
			r = 0;
	return (0);
}

/*
 * Write each received message to ${fd} and post its receive again; 0 when
 * the empty message said the connection ended, or when ${fd}'s other end
 * went (then the other side is told so: it may be waiting for a credit,
 * and would wait for ever).  Arms the CQ first, so that what arrives
 * after the poll raises the channel.
 */
static int
deliver(struct ep *p, int fd)
{
	struct ibv_wc wc[RECVS];
	int n, k, b;

	if (!p->spin && ibv_req_notify_cq(p->id->recv_cq, 0) != 0)
		die("ibv_req_notify_cq");
	if ((n = ibv_poll_cq(p->id->recv_cq, RECVS, wc)) < 0)
		die("ibv_poll_cq");
	for (k = 0; k < n; k++) {
		b = (int)wc[k].wr_id;
		if (wc[k].status == IBV_WC_WR_FLUSH_ERR)
			return (0);	/* the peer went without a goodbye */
		if (wc[k].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "verbs-relay: receive failed: %s\n",
			    ibv_wc_status_str(wc[k].status));
			exit(1);
		}
		if (!(wc[k].wc_flags & IBV_WC_WITH_IMM))
			return (0);	/* the end */
		p->credits += ntohl(wc[k].imm_data);
		if (wc[k].byte_len > 0 &&
		    write_all(fd, p->rbuf[b], wc[k].byte_len) != 0) {
			if (errno != EPIPE && errno != ECONNRESET)
				die("write");
			goodbye(p);
			return (0);
		}
		post_recv(p, b);
		if (wc[k].byte_len > 0)
			p->owed++;
	}
	if (p->owed >= CREDIT_BATCH)
		post(p, NULL, 0, 1);
	return (1);
}

/*
 * Wait for a credit, delivering what arrives meanwhile; 0 when the
 * connection ended.
 */
static int
credit(struct ep *p, int fd)
{
	struct ibv_cq *ecq;
	void *ctx;

	while (p->credits == 0) {
		if (!deliver(p, fd))
			return (0);
		if (p->credits > 0 || p->spin)
			continue;
		if (ibv_get_cq_event(p->id->recv_cq_channel, &ecq, &ctx) != 0)
			die("ibv_get_cq_event");
		ibv_ack_cq_events(ecq, 1);
	}
	p->credits--;
	return (1);
}

/* Send what ${fd} has, if anything; 0 when the connection ended. */
static int
forward(struct ep *p, int fd)
{
	char buf[MSG_MAX];
	ssize_t len;

	if ((len = read(fd, buf, sizeof(buf))) < 0 && errno == EAGAIN)
		return (1);
	if (len <= 0) {
		goodbye(p);
		return (0);
	}
	if (!credit(p, fd))
		return (0);
	post(p, buf, (size_t)len, 1);
	if (reap(p, 0) != 0)
		exit(1);
	return (1);
}

/* -P: spin between the socket and the CQ until either side ends. */
static void
relay_spin(struct ep *p, int fd)
{

	if (fcntl(fd, F_SETFL, O_NONBLOCK) != 0)
		die("fcntl");
	while (forward(p, fd) && deliver(p, fd))
		;
	close(fd);
}

/* Carry bytes between ${fd} and the queue pair until either side ends. */
static void
relay(struct ep *p, int fd)
{
	struct ibv_comp_channel *ch = p->id->recv_cq_channel;
	struct epoll_event ev, evs[2];
	struct ibv_cq *ecq;
	void *ctx;
	int efd, n, i, one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (p->spin) {
		relay_spin(p, fd);
		return;
	}
	if ((efd = epoll_create1(0)) < 0)
		die("epoll_create1");
	ev.events = EPOLLIN;
	ev.data.fd = fd;
	if (epoll_ctl(efd, EPOLL_CTL_ADD, fd, &ev) != 0)
		die("epoll_ctl");
	ev.data.fd = ch->fd;
	if (epoll_ctl(efd, EPOLL_CTL_ADD, ch->fd, &ev) != 0)
		die("epoll_ctl");
	if (!deliver(p, fd))
		goto out;
	for (;;) {
		if ((n = epoll_wait(efd, evs, 2, -1)) < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == fd) {
				if (!forward(p, fd))
					goto out;
				continue;
			}
			if (ibv_get_cq_event(ch, &ecq, &ctx) != 0)
				die("ibv_get_cq_event");
			ibv_ack_cq_events(ecq, 1);
			if (!deliver(p, fd))
				goto out;
		}
	}
out:
	close(efd);
	close(fd);
}

static void
qp_attr(struct ibv_qp_init_attr *a)
{

	memset(a, 0, sizeof(*a));
	a->cap.max_send_wr = SENDS;
	a->cap.max_recv_wr = RECVS;
	a->cap.max_send_sge = a->cap.max_recv_sge = 1;
	a->cap.max_inline_data = 64;
	a->qp_type = IBV_QPT_RC;
}

/* A TCP connection to HOST:PORT in ${target}. */
static int
dial(const char *target)
{
	struct addrinfo hints, *res;
	char host[256];
	const char *colon = strrchr(target, ':');
	int fd;

	if (colon == NULL || (size_t)(colon - target) >= sizeof(host))
		die("target is not HOST:PORT");
	memcpy(host, target, (size_t)(colon - target));
	host[colon - target] = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, colon + 1, &hints, &res) != 0)
		die("getaddrinfo");
	if ((fd = socket(res->ai_family, SOCK_STREAM, 0)) < 0 ||
	    connect(fd, res->ai_addr, res->ai_addrlen) != 0)
		die("connect");
	freeaddrinfo(res);
	return (fd);
}

/* The back on one port: its connections one after another. */
static void __attribute__((noreturn))
back_port(struct ep *p, const char *bind, const char *port,
    const char *target)
{
	struct rdma_cm_id *lid;
	struct ibv_qp_init_attr a;

	qp_attr(&a);
	if (rdma_create_ep(&lid, cm_addr("verbs-relay", bind, port, 1), NULL,
	    &a) != 0)
		die("rdma_create_ep");
	if (rdma_listen(lid, 4) != 0)
		die("rdma_listen");
	printf("verbs-relay: waiting for the front on port %s\n", port);
	fflush(stdout);
	for (;;) {
		if (rdma_get_request(lid, &p->id) != 0)
			die("rdma_get_request");
		ep_ready(p);
		if (cm_join(p->id, 1) != 0)
			die("rdma_accept");
		relay(p, dial(target));
		ep_close(p);
	}
}

/*
 * The back on ${n} ports from ${port}, a process each.  This one waits
 * for them (so that their CPU counts in its own once they end); they end
 * with it, and it ends them all when one fails.
 */
static void __attribute__((noreturn))
back(struct ep *p, const char *bind, const char *port, int n,
    const char *target)
{
	pid_t kid[64];
	char pn[16];
	int i;

	if (n == 1)
		back_port(p, bind, port, target);
	for (i = 0; i < n; i++) {
		snprintf(pn, sizeof(pn), "%d", atoi(port) + i);
		if ((kid[i] = fork()) < 0)
			die("fork");
		if (kid[i] == 0) {
			if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0)
				die("prctl");
			back_port(p, bind, pn, target);
		}
	}
	(void)wait(NULL);
	for (i = 0; i < n; i++)
		kill(kid[i], SIGTERM);
	while (wait(NULL) > 0)
		;
	exit(1);
}

/* Carry client ${fd} over a new queue pair to ${peer}, then end both. */
static void
serve(struct ep *p, int fd, struct rdma_addrinfo *peer)
{
	struct ibv_qp_init_attr a;

	qp_attr(&a);
	if (rdma_create_ep(&p->id, peer, NULL, &a) != 0)
		die("rdma_create_ep");
	ep_ready(p);
	if (cm_join(p->id, 0) != 0)
		die("rdma_connect");
	relay(p, fd);
	ep_close(p);
}

/* Reap the clients' processes, so that their CPU counts in the front's. */
static void
reap_children(int sig)
{
	int e = errno;

	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	errno = e;
}

static void __attribute__((noreturn))
front(struct ep *p, const char *lport, const char *host, const char *port,
    int n)
{
	struct rdma_addrinfo *peer[64];
	struct sockaddr_in sin;
	struct sigaction sa;
	char pn[16];
	unsigned k;
	int lfd, fd, i, one = 1;

	for (i = 0; i < n; i++) {
		snprintf(pn, sizeof(pn), "%d", atoi(port) + i);
		peer[i] = cm_addr("verbs-relay", host, pn, 0);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = reap_children;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	if (sigaction(SIGCHLD, &sa, NULL) != 0)
		die("sigaction");
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)atoi(lport));
	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    listen(lfd, 64) != 0)
		die("listen");
	printf("verbs-relay: waiting for clients on 127.0.0.1:%s\n", lport);
	fflush(stdout);
	for (k = 0;; k++) {
		if ((fd = accept(lfd, NULL, NULL)) < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			die("accept");
		}
		/* One at a time: in this process, whose CPU a bench reads. */
		if (n == 1) {
			serve(p, fd, peer[0]);
			continue;
		}
		switch (fork()) {
		case -1:
			die("fork");
		case 0:
			close(lfd);
			signal(SIGCHLD, SIG_DFL);
			(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
			serve(p, fd, peer[k % (unsigned)n]);
			exit(0);
		}
		close(fd);
	}
}

int
main(int argc, char **argv)
{
	static struct ep p;
	const char *host = NULL, *bind = NULL, *port = NULL, *lport = NULL;
	const char *target = NULL;
	int c, listen = 0, n = 1;

	/* A socket whose other end went is an end like any other. */
	signal(SIGPIPE, SIG_IGN);
	while ((c = getopt(argc, argv, "la:b:H:n:p:t:P")) != -1) {
		switch (c) {
		case 'n':
			if ((n = atoi(optarg)) < 1 || n > 64)
				goto usage;
			break;
		case 'P':
			p.spin = 1;
			break;
		case 'l':
			listen = 1;
			break;
		case 'a':
			lport = optarg;
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
		case 't':
			target = optarg;
			break;
		default:
			goto usage;
		}
	}
	if (port != NULL && listen && target != NULL && host == NULL &&
	    lport == NULL)
		back(&p, bind, port, n, target);
	if (port != NULL && !listen && host != NULL && lport != NULL &&
	    target == NULL)
		front(&p, lport, host, port, n);
usage:
	fprintf(stderr,
	    "usage: verbs-relay -l -p PORT [-n N] [-b ADDR] -t HOST:PORT [-P]\n"
	    "       verbs-relay -a LPORT -H HOST -p PORT [-n N] [-P]\n");
	return (2);
}
