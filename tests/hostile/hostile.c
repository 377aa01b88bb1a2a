/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * hostile: a peer that connects to rstreamd over RDMA CM and misbehaves,
 * for the tests (tests/e2e/18-hostile.bats, and with identities
 * tests/e2e/32-hostile-identity.bats).  It speaks just enough of the
 * protocol (rstreamd-protocol(7)) to get where it wants to break it.
 *
 * usage: hostile SOURCE_ADDR PEER_ADDR PORT CASE [TUNNEL | KEYFILE [TUNNEL] |
 *        IDFILE [TUNNEL]]
 *        (KEYFILE may be "-", no key, where a case says so)
 *
 * Cases that the daemon must reject at connect time (exit 0 on REJECTED):
 *   bad-magic, bad-version, short-hello, bad-credits
 *   no-auth       no authentication, to a daemon whose tunnels need keys
 * Cases that the daemon must end once the link is up (exit 0 when the
 * link is disconnected by the daemon within the time limit):
 *   garbage       a SEND of random bytes
 *   truncated     a SEND whose record claims more bytes than it has
 *   unopened      data (WRITE WITH IMMEDIATE) for a stream never opened
 *   beyond-credit opens a stream on TUNNEL (whose target should not read),
 *                 then writes more than the receive ring it was granted
 *   open-first    says it authenticates, then sends OPEN instead of its
 *                 proof (fails if an OPEN_OK comes back)
 *   wrong-key     proves KEYFILE, which is not the daemon's key (fails if
 *                 the daemon sends its own proof)
 *   silent        says it authenticates, then sends nothing: the
 *                 handshake deadline must end it
 *   mute          connects (no authentication), then sends nothing at
 *                 all: the daemon must end the link once it has heard
 *                 nothing for its liveness bound (within 30 s)
 * A case about reused rings (exit 0 when its writes went through):
 *   stale T1 T2   opens a stream on tunnel T1, writes a marker
 *                 ("STALE-RING-BYTES") into the first half of the ring it
 *                 was granted, resets the stream and waits for the
 *                 daemon's CLOSE (or RESET); then opens a stream on tunnel T2 and
 *                 writes a quarter ring of 'x' into the new ring's second
 *                 half while the immediate claims its start, so the
 *                 daemon's target for T2 gets whatever the ring's start
 *                 holds; waits for the daemon's CREDIT (its target took
 *                 the bytes) and prints "stale: ring reused" or "stale:
 *                 new ring" (the second ring has the first's address)
 * Cases about admission (exit 0 unless a setup step fails):
 *   hold SECONDS  connects (no authentication) and holds an idle link,
 *                 with a KEEPALIVE every second, like an idle daemon;
 *                 prints "hold: held" or "hold: disconnected" (the
 *                 daemon closed it), or "hold: rejected"
 *   flood N       N connect requests with a bad hello, one after the
 *                 other; prints "flood: R rejected of N"
 *   hs-flood IDFILE N  N links, one after the other, each running the
 *                 Noise handshake as IDFILE (an identity the daemon
 *                 does not list) to its message 3, then waiting for the
 *                 daemon to end the link: each costs the daemon its
 *                 handshake's X25519 work (tests/bench/flood-bench);
 *                 prints "hs-flood: E ended, R rejected of N"
 * Cases about the client's address (ORIGIN, version 3; exit 0 when the
 * daemon answers the OPEN, printing "CASE: accepted" or "CASE: refused
 * (reason N: ...)"):
 *   forged-origin KEYFILE|- TUNNEL  proves KEYFILE ("-": no key), then
 *                 opens a stream on TUNNEL claiming a client at
 *                 203.0.113.7:4444 that connected to 198.51.100.1:80
 *   no-origin KEYFILE|- TUNNEL      the same, but says no client at all
 * Cases about resume (version 2; exit 0 when the daemon answers the
 * RESUME with RESUME_DENIED, printing "resume: denied (reason N: ...)"):
 *   resume KEYFILE TOKEN  proves KEYFILE (the daemon's key), then asks to
 *                 resume the streams of the link TOKEN names (32 hex
 *                 digits, as rstreamctl links shows it, or "random") with
 *                 a proof it cannot know
 *   suspend-two KEYFILE T1 T2  proves KEYFILE, offers resume, opens a
 *                 stream on tunnel T1 and one on T2, then leaves (the
 *                 daemon suspends both); exit 0 once both were accepted,
 *                 printing "suspend-two: 2 streams accepted"
 * A case where it is the passive side (exit 0 once a hello of version 2
 * or older came):
 *   old-peer [V]  listens at PEER_ADDR PORT as an rstreamd that speaks
 *                 protocol versions up to V (default 2) does: a newer
 *                 hello is rejected without private data below version
 *                 3, with a refusal note saying V from 3 on; a hello it
 *                 can read with a refusal note (so the connecting daemon
 *                 only backs off); prints "old-peer: listening", then,
 *                 once it no longer listens, the versions offered, in
 *                 order, as "old-peer: offered 3 2"
 * A case where it is the passive side and serves a daemon's client link,
 * then misbehaves on it (exit 0 once it counted the answers):
 *   evil-server N listens at PEER_ADDR PORT, accepts the first link as an
 *                 rstreamd of the newest version would, then opens N
 *                 streams on it (a client link takes none) and counts
 *                 the refusals: "evil-server: R refused of N"
 * A case where it is the passive side and poses as a serving daemon whose
 * client lost its link (exit 0 unless that client names a stream to it):
 *   fake-server KEYFILE|-  listens at PEER_ADDR PORT and poses as the
 *                 daemon the connecting one lost its link to: it accepts
 *                 the first connect request (in the version offered, at
 *                 most its own), proves KEYFILE ("-": no key) and, asked
 *                 to resume, answers with a RESUME_PROOF that reflects
 *                 the asker's own proof (from version 5; below, nothing);
 *                 prints "fake-server: listening", then "fake-server:
 *                 RESUME" if one came, and how it ended: "fake-server:
 *                 the daemon named a stream" (it revealed the stream
 *                 to a peer that proved nothing), "fake-server:
 *                 disconnected; no stream named" or "fake-server: no
 *                 stream named" (after 10 s)
 * The control case must succeed, showing the proofs above were computed
 * as the daemon computes them (exit 0 when the stream is accepted):
 *   right-key     proves KEYFILE, checks the daemon's proof, opens TUNNEL
 * Cases with a node identity (from version 6: the Noise_XX handshake and
 * sealed records of rstreamd-protocol(7); IDFILE a private key file as
 * identity_file takes it).  Its hello says IDENTITY, SEAL and, if this
 * CPU can and HOSTILE_NO_AESGCM is not set, AESGCM; once the handshake is
 * done it seals and opens as the daemon does.  Exit 0 when the daemon ends the link (or, where said,
 * refuses):
 *   wrong-identity IDFILE  a good handshake as an identity that the
 *                 daemon does not list
 *   replayed-handshake IDFILE TUNNEL  a good handshake and a stream on
 *                 TUNNEL, then it leaves; on a second link, with the
 *                 same hello, it sends the first one's messages 1 and 3
 *                 again (3 once the daemon answers 1); prints
 *                 "replayed-handshake: disconnected", with " (message 2
 *                 was the same)" if the daemon's answer was
 *   stripped-capability IDFILE  its hello says no SEAL, but its handshake
 *                 binds a hello with SEAL (what a man in the middle who
 *                 took the flag out of the connect data causes): exit 0
 *                 when the daemon's message 2 fails authentication
 *   unsealed IDFILE TUNNEL  its hello says no SEAL; after a good
 *                 handshake it opens a stream on TUNNEL in clear, as if
 *                 the link were not sealed whatever the daemon's hello
 *                 said (which it prints); a refusal passes too
 *   flipped-payload IDFILE TUNNEL  opens a stream on TUNNEL, then sends
 *                 a sealed data WRITE of a quarter of the ring granted
 *                 ("SEALED-PAYLOAD--" over and over) with one bit of the
 *                 payload flipped after sealing
 *   flipped-tag IDFILE TUNNEL  the same, with a bit of its tag flipped
 * Their control case must succeed, showing the sealing above is the
 * daemon's (exit 0 when the daemon returns credit for the bytes):
 *   sealed-write IDFILE TUNNEL  flipped-payload without the flip; prints
 *                 "sealed-write: N bytes written, credit returned"
 *   overwritten-write IDFILE TUNNEL  sealed-write (of at most half our
 *                 ring), then at once a plain RDMA WRITE, no immediate,
 *                 of as many other bytes ("FORGED-PAYLOAD--") to the
 *                 same address with the same rkey, as an injector who
 *                 read the first WRITE's header would; prints
 *                 "overwritten-write: N bytes written, credit returned"
 *                 or "overwritten-write: disconnected" (the forged bytes
 *                 landed before the daemon opened the first), and exit
 *                 0 for either: what the target got tells the rest
 * From version 7 each of these waits for the daemon's confirmation after
 * its message 3 (it checks it; it is the daemon's first message after
 * message 2) before it opens a stream; wrong-identity fails if one comes.
 * Cases where it is the passive side with an identity (version 7: it
 * listens at PEER_ADDR PORT and serves the first link, a daemon's client
 * link, as a responder whose hello says IDENTITY, SEAL and AESGCM if this
 * CPU can, with IDFILE's key; exit 0 when the daemon ends the link, and
 * never opens a stream on it, within the time limit):
 *   no-confirm IDFILE     reads message 3, then never confirms
 *   wrong-confirm IDFILE  confirms with one bit of the confirmation
 *                 flipped
 *   early-confirm IDFILE  sends a confirmation (a made-up one: there are
 *                 no keys yet) right after message 2, before message 3
 * each prints "CASE: listening", then "CASE: disconnected; no stream
 * opened", "CASE: the daemon opened a stream" or "CASE: still connected".
 * With HOSTILE_VERSION=N in its environment, its hello says version N.
 * On an iWARP device, which has no immediate data, it speaks as a peer of
 * version 11 there does (rstreamd-protocol(7), NOTICES): its hello says
 * NOTIFY, and on a link without immediates every SEND starts with a
 * notice, a data WRITE WITH IMMEDIATE is a WRITE and then a SEND of its
 * notice, and a sealed WRITE's tag follows its notice in a SEND; each case
 * above breaks the protocol the same way on either transport.
 * Exit 1 when the daemon let it through, 2 on a setup error.
 */
#include <sys/random.h>

#include <arpa/inet.h>

#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <sodium.h>

#include "auth.h"
#include "ident.h"
#include "noise.h"
#include "seal.h"
#include "wire.h"

#define LIMIT_MS	15000
#define NRECV		16
#define RING		65536
#define CONF_KEY_BYTES	1024		/* rstreamd's largest key file */
#define NSEND		6		/* send slots after the receives */
#define REPLAY_MS	5000		/* replayed-handshake's last wait */

static struct rdma_event_channel *ch;
static struct rdma_cm_id *id;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *msg_mr, *ring_mr, *notice_mr;
static uint8_t msgs[(NRECV + NSEND) * WIRE_MSG_SIZE];
static uint8_t ring[RING];

/*
 * Version 11, links without immediate data (rstreamd-protocol(7),
 * NOTICES): whether our device is iWARP, which has none (so our hellos
 * say NOTIFY), and whether the link that is up runs without.  post()
 * and received() turn what the cases do into that shape and back, so
 * each case misbehaves the same way on either transport.  A notice has
 * a buffer of its own, used in turn: more of them than work requests
 * the send queue holds, so none is reused while a SEND still reads it.
 */
#define SQ_WR		64		/* each case's WR may be two: WRITE, SEND */
#define NNOTICE		(2 * SQ_WR)
static int iwarp, notify;
static uint8_t notices[NNOTICE][WIRE_NOTICE_LEN];
static unsigned notice_next;

static void __attribute__((noreturn))
die(const char *what)
{

	fprintf(stderr, "hostile: %s\n", what);
	exit(2);
}

/* The next CM event within ${ms}; its type, with the event acked. */
static int
next_event(int ms, uint8_t *pdata, size_t *plen)
{
	struct rdma_cm_event *ev;
	struct pollfd p = { ch->fd, POLLIN, 0 };
	int type;

	if (poll(&p, 1, ms) <= 0)
		return (-1);
	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	type = (int)ev->event;
	if (pdata != NULL && ev->param.conn.private_data != NULL) {
		*plen = ev->param.conn.private_data_len < 64 ?
		    ev->param.conn.private_data_len : 64;
		memcpy(pdata, ev->param.conn.private_data, *plen);
	}
	rdma_ack_cm_event(ev);
	return (type);
}

static void
resolve(const char *src, const char *dst, const char *port)
{
	struct addrinfo hints, *sa, *da;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(src, NULL, &hints, &sa) ||
	    getaddrinfo(dst, port, &hints, &da))
		die("getaddrinfo");
	if (rdma_resolve_addr(id, sa->ai_addr, da->ai_addr, 2000) ||
	    next_event(5000, NULL, NULL) != RDMA_CM_EVENT_ADDR_RESOLVED)
		die("cannot resolve the address");
	if (rdma_resolve_route(id, 2000) ||
	    next_event(5000, NULL, NULL) != RDMA_CM_EVENT_ROUTE_RESOLVED)
		die("cannot resolve the route");
	freeaddrinfo(sa);
	freeaddrinfo(da);
}

static void
setup_qp(void)
{
	struct ibv_qp_init_attr qa;
	struct ibv_sge sge;
	struct ibv_recv_wr wr, *bad;
	int i;

	if ((pd = ibv_alloc_pd(id->verbs)) == NULL ||
	    (cq = ibv_create_cq(id->verbs, SQ_WR + NRECV, NULL, NULL, 0)) ==
	    NULL)
		die("pd/cq");
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = SQ_WR;
	qa.cap.max_recv_wr = NRECV;
	/* A SEND's notice and what follows it: two pieces (see post). */
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, pd, &qa))
		die("rdma_create_qp");
	if ((msg_mr = ibv_reg_mr(pd, msgs, sizeof(msgs),
	    IBV_ACCESS_LOCAL_WRITE)) == NULL ||
	    (notice_mr = ibv_reg_mr(pd, notices, sizeof(notices),
	    IBV_ACCESS_LOCAL_WRITE)) == NULL ||
	    (ring_mr = ibv_reg_mr(pd, ring, sizeof(ring),
	    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)) == NULL)
		die("ibv_reg_mr");
	for (i = 0; i < NRECV; i++) {
		sge.addr = (uintptr_t)&msgs[i * WIRE_MSG_SIZE];
		sge.length = WIRE_MSG_SIZE;
		sge.lkey = msg_mr->lkey;
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = (uint64_t)i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (ibv_post_recv(id->qp, &wr, &bad))
			die("ibv_post_recv");
	}
}

/* ${buf}'s memory region (in msgs, ring or notices). */
static uint32_t
lkey_of(const void *buf)
{
	uintptr_t a = (uintptr_t)buf;

	if (a >= (uintptr_t)ring && a < (uintptr_t)ring + sizeof(ring))
		return (ring_mr->lkey);
	if (a >= (uintptr_t)notices && a < (uintptr_t)notices +
	    sizeof(notices))
		return (notice_mr->lkey);
	return (msg_mr->lkey);
}

/*
 * Post one work request of ${op}: ${head} (a notice, or NULL), then
 * ${len} bytes from ${buf}.  Every one asks for its completion: on
 * iWARP a data WRITE must (see eng_emit in engine_sched.c: Soft-iWARP
 * sends an unsignalled WRITE of a page or more from our buffer later).
 */
static void
post_wr(enum ibv_wr_opcode op, const uint8_t *head, const void *buf,
    uint32_t len, uint32_t imm, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge[2];
	struct ibv_send_wr wr, *bad;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	int n = 0, err, k;

	if (head != NULL)
		sge[n++] = (struct ibv_sge){ (uintptr_t)head, WIRE_NOTICE_LEN,
		    lkey_of(head) };
	if (len > 0)
		sge[n++] = (struct ibv_sge){ (uintptr_t)buf, len,
		    lkey_of(buf) };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = sge;
	wr.num_sge = n;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htonl(imm);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if ((err = ibv_post_send(id->qp, &wr, &bad)) == 0)
		return;
	/*
	 * Soft-iWARP refuses work requests once the connection is gone,
	 * where InfiniBand and RoCE flush them: the daemon ended the link
	 * under a case that posts on (beyond-credit), which the case then
	 * sees.  Its doorbell fails (-1) as the connection goes, and the
	 * queue pair leaves RTS only a little later.  A queue that is full
	 * (ENOMEM), or one still in RTS a second on, is our fault.
	 */
	for (k = 0; err != ENOMEM && err != -ENOMEM && k < 100; k++) {
		if (ibv_query_qp(id->qp, &a, IBV_QP_STATE, &ia) == 0 &&
		    a.qp_state != IBV_QPS_RTS)
			return;
		usleep(10000);
	}
	die("ibv_post_send");
}

/* A notice saying ${v}, in the next of its buffers. */
static const uint8_t *
notice(uint32_t v)
{
	uint8_t *b = notices[notice_next++ % NNOTICE];

	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
	return (b);
}

/* The most bytes a SEND of ours may carry after its notice, if any. */
static uint32_t
send_room(void)
{

	return (WIRE_MSG_SIZE - (notify ? WIRE_NOTICE_LEN : 0));
}

/*
 * Post one work request from ${buf} (${len} bytes, in msgs or ring), as
 * the link carries it: on a link without immediates (notify) a SEND
 * gets the records notice in front, a data WRITE WITH IMMEDIATE is a
 * plain WRITE and a SEND of its notice (the immediate), and a sealed
 * WRITE's tag (a SEND WITH IMMEDIATE) a SEND of the notice, then the
 * tag.  A plain WRITE stays one.
 */
static void
post(enum ibv_wr_opcode op, const void *buf, uint32_t len, uint32_t imm,
    uint64_t raddr, uint32_t rkey)
{

	if (!notify || op == IBV_WR_RDMA_WRITE) {
		post_wr(op, NULL, buf, len, imm, raddr, rkey);
		return;
	}
	if (len > send_room() && op != IBV_WR_RDMA_WRITE_WITH_IMM)
		die("a SEND too long for its notice");
	switch (op) {
	case IBV_WR_SEND:
		post_wr(IBV_WR_SEND, notice(WIRE_NOTICE_RECORDS), buf, len, 0,
		    0, 0);
		break;
	case IBV_WR_SEND_WITH_IMM:
		post_wr(IBV_WR_SEND, notice(imm), buf, len, 0, 0, 0);
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		post_wr(IBV_WR_RDMA_WRITE, NULL, buf, len, 0, raddr, rkey);
		post_wr(IBV_WR_SEND, notice(imm), NULL, 0, 0, 0, 0);
		break;
	default:
		die("no such work request without immediates");
	}
}

/* Version 6: the link's sealing, once the handshake made it (see below). */
static struct seal_dir seal_tx, seal_rx;
static int sealing_tx, sealing_rx;

/*
 * Does completion ${wc} bring the daemon's records?  If so (1) they are
 * at ${*buf} (${*len} bytes): on a link without immediates past the
 * SEND's notice, and on a sealed link opened first, into ${clear}, as
 * the daemon seals them.  Anything else is 0: our own work requests,
 * and the daemon's data (a WRITE WITH IMMEDIATE, or a SEND of a data
 * notice or with an immediate, its tag), which no case reads, and on a
 * sealed link none expects.  A message of the daemon's that does not
 * open, or has no notice, is our bug: no case can go on.
 */
static int
received(const struct ibv_wc *wc, const uint8_t **buf, size_t *len,
    uint8_t clear[WIRE_MSG_SIZE])
{
	uint32_t n;
	int data;

	if (wc->opcode != IBV_WC_RECV &&
	    wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM)
		return (0);
	*buf = &msgs[wc->wr_id * WIRE_MSG_SIZE];
	*len = wc->byte_len;
	data = wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM ||
	    (wc->wc_flags & IBV_WC_WITH_IMM);
	if (notify && !data) {
		if (*len < WIRE_NOTICE_LEN)
			die("a message from the daemon without its notice");
		n = (uint32_t)(*buf)[0] << 24 | (uint32_t)(*buf)[1] << 16 |
		    (uint32_t)(*buf)[2] << 8 | (*buf)[3];
		*buf += WIRE_NOTICE_LEN;
		*len -= WIRE_NOTICE_LEN;
		data = n != WIRE_NOTICE_RECORDS;
	}
	if (data && sealing_rx)
		die("the daemon sent data, which no case expects");
	if (data || !sealing_rx)
		return (!data);
	if (*len <= SEAL_TAG_LEN)
		die("a sealed message from the daemon holds no record");
	*len -= SEAL_TAG_LEN;
	memcpy(clear, *buf, *len);
	if (seal_dir_open(&seal_rx, clear, *len, NULL, 0, *buf + *len) != 0)
		die("a sealed message from the daemon does not open");
	*buf = clear;
	return (1);
}

/*
 * Wait for a receive carrying a record of ${type} (WIRE_CLOSE: a RESET
 * too, either terminal record); fill ${r}.  0 on success; -1 on a REFUSE,
 * an error or after LIMIT_MS.
 */
static int
wait_rec(uint8_t type, struct wire_rec *r)
{
	struct ibv_wc wc;
	uint8_t clear[WIRE_MSG_SIZE];
	const uint8_t *buf;
	size_t len, off, used;
	int i, n;

	for (i = 0; i < LIMIT_MS / 10; i++) {
		while ((n = ibv_poll_cq(cq, 1, &wc)) > 0) {
			if (wc.status != IBV_WC_SUCCESS)
				return (-1);
			if (!received(&wc, &buf, &len, clear))
				continue;
			for (off = 0; off < len; off += used) {
				if (wire_rec_decode(buf + off, len - off,
				    r, &used) != WIRE_OK)
					return (-1);
				if (r->type == type || (type == WIRE_CLOSE &&
				    r->type == WIRE_RESET))
					return (0);
				if (r->type == WIRE_REFUSE)
					return (-1);
			}
		}
		usleep(10000);
	}
	return (-1);
}

/* The records watch() reports. */
#define WATCHED	(1u << WIRE_AUTH | 1u << WIRE_RESUME | 1u << WIRE_OPEN_OK | \
		 1u << WIRE_REFUSE | 1u << WIRE_RESUME_STREAM | \
		 1u << WIRE_RESUME_DENIED)

/*
 * Watch for ${ms}: return the type of the first record of a type in the
 * mask ${want} (bit 1 << type) the daemon sends (into ${r}), -2 when it
 * disconnects, -1 when the time is up.
 */
static int
watch_for(int ms, struct wire_rec *r, uint32_t want)
{
	struct pollfd p = { 0, POLLIN, 0 };
	struct rdma_cm_event *ev;
	struct ibv_wc wc;
	uint8_t clear[WIRE_MSG_SIZE];
	const uint8_t *buf;
	size_t len, off, used;
	int i, t;

	for (i = 0; i < ms / 10; i++) {
		while (ibv_poll_cq(cq, 1, &wc) > 0) {
			if (wc.status != IBV_WC_SUCCESS ||
			    !received(&wc, &buf, &len, clear))
				continue;
			for (off = 0; off < len; off += used) {
				if (wire_rec_decode(buf + off, len - off, r,
				    &used) != WIRE_OK)
					break;
				if (r->type < 32 && (want & 1u << r->type))
					return (r->type);
			}
		}
		p.fd = ch->fd;
		if (poll(&p, 1, 0) > 0 && rdma_get_cm_event(ch, &ev) == 0) {
			t = (int)ev->event;
			rdma_ack_cm_event(ev);
			if (t == RDMA_CM_EVENT_DISCONNECTED)
				return (-2);
		}
		usleep(10000);
	}
	return (-1);
}

/*
 * watch_for the AUTH, OPEN_OK, REFUSE, RESUME, RESUME_STREAM or
 * RESUME_DENIED record the daemon sends first.
 */
static int
watch(int ms, struct wire_rec *r)
{

	return (watch_for(ms, r, WATCHED));
}

static size_t
read_key(const char *path, uint8_t *key, size_t cap)
{
	FILE *f;
	size_t n;

	if ((f = fopen(path, "rb")) == NULL)
		die("cannot read the key file");
	n = fread(key, 1, cap, f);
	fclose(f);
	return (n);
}

/* ${r}: an OPEN of stream ${sid} on ${tunnel}, granting our ring. */
static void
open_rec(struct wire_rec *r, const char *tunnel, uint32_t sid)
{

	memset(r, 0, sizeof(*r));
	r->type = WIRE_OPEN;
	r->stream = sid;
	r->ring.addr = (uintptr_t)ring;
	r->ring.rkey = ring_mr->rkey;
	r->ring.size = RING;
	r->name_len = (uint8_t)strlen(tunnel);
	snprintf(r->name, sizeof(r->name), "%s", tunnel);
}

/* Open stream ${sid} on ${tunnel}; ${r} gets the OPEN_OK (its ring). */
static void
open_stream(const char *tunnel, uint32_t sid, struct wire_rec *r)
{
	uint8_t *m = &msgs[NRECV * WIRE_MSG_SIZE];
	size_t n;

	open_rec(r, tunnel, sid);
	n = wire_rec_encode(m, WIRE_MSG_SIZE, r);
	post(IBV_WR_SEND, m, (uint32_t)n, 0, 0, 0);
	if (wait_rec(WIRE_OPEN_OK, r) != 0)
		die("the stream was not accepted");
}

/*
 * Leave a marker in a receive ring of the daemon, end that stream, then
 * make the next stream's data claim the ring's start without writing
 * there (see "stale" above).
 */
static int
stale(const char *t1, const char *t2)
{
	static const char marker[] = "STALE-RING-BYTES";
	uint8_t *m = &msgs[NRECV * WIRE_MSG_SIZE];
	struct wire_rec r1, r2, x;
	uint32_t len, k;

	open_stream(t1, 0, &r1);
	len = r1.ring.size / 2;
	for (k = 0; k < len; k++)
		ring[k] = (uint8_t)marker[k % (sizeof(marker) - 1)];
	post(IBV_WR_RDMA_WRITE_WITH_IMM, ring, len,
	    wire_imm_encode(r1.peer_stream, len), r1.ring.addr, r1.ring.rkey);
	memset(&x, 0, sizeof(x));
	x.type = WIRE_RESET;
	x.stream = r1.peer_stream;
	x.reason = WIRE_REASON_RESET;
	post(IBV_WR_SEND, m, (uint32_t)wire_rec_encode(m, WIRE_MSG_SIZE, &x),
	    0, 0, 0);
	if (wait_rec(WIRE_CLOSE, &x) != 0)
		die("no terminal record for the first stream");
	open_stream(t2, 1, &r2);
	len = r2.ring.size / 4;
	memset(ring, 'x', len);
	post(IBV_WR_RDMA_WRITE_WITH_IMM, ring, len,
	    wire_imm_encode(r2.peer_stream, len),
	    r2.ring.addr + r2.ring.size / 2, r2.ring.rkey);
	if (wait_rec(WIRE_CREDIT, &x) != 0)
		die("no CREDIT for the second stream");
	printf("stale: %s\n", r2.ring.addr == r1.ring.addr &&
	    r2.ring.rkey == r1.ring.rkey ? "ring reused" : "new ring");
	return (0);
}

/* The version our hellos say: HOSTILE_VERSION's, an older daemon's, for
 * the cases that work at any version; else the newest. */
static uint8_t
hello_version(void)
{
	const char *v = getenv("HOSTILE_VERSION");

	return (v != NULL ? (uint8_t)atoi(v) : WIRE_VERSION);
}

/*
 * Ask to resume the streams of the link ${token} names (hex, or
 * "random"), with a made-up proof.  (Its RESUME_STREAMs would follow
 * only the daemon's proof, from version 5, and from version 10 their
 * count too; before, its answer is the same without them.)
 */
static int
resume(const char *token)
{
	uint8_t *m = &msgs[NRECV * WIRE_MSG_SIZE];
	struct wire_rec r;
	size_t n;
	unsigned i, b;
	int t;

	memset(&r, 0, sizeof(r));
	r.type = WIRE_RESUME;
	r.count = (unsigned)hello_version() >=
	    wire_rec_version(WIRE_RESUME_COUNT) ?
	    0 : 1;
	if (strcmp(token, "random") == 0)
		(void)getrandom(r.token, sizeof(r.token), 0);
	else
		for (i = 0; i < WIRE_NONCE_LEN; i++) {
			if (sscanf(token + 2 * i, "%2x", &b) != 1)
				die("the token is not 32 hex digits");
			r.token[i] = (uint8_t)b;
		}
	(void)getrandom(r.proof, sizeof(r.proof), 0);
	n = wire_rec_encode(m, WIRE_MSG_SIZE, &r);
	post(IBV_WR_SEND, m, (uint32_t)n, 0, 0, 0);
	t = watch(LIMIT_MS, &r);
	if (t == WIRE_RESUME_DENIED) {
		printf("resume: denied (reason %u: %s)\n", r.reason,
		    wire_reason_str(r.reason));
		return (0);
	}
	printf("resume: %s\n", t == -2 ? "disconnected" :
	    t == WIRE_RESUME_STREAM ? "the daemon resumed a stream" :
	    "no answer");
	return (1);
}

/* Open a stream on ${tunnel}, with a forged ORIGIN or none (see above). */
static int
origin_open(const char *cs, const char *tunnel)
{
	static const uint8_t client[4] = { 203, 0, 113, 7 },
	    server[4] = { 198, 51, 100, 1 };
	uint8_t *m = &msgs[NRECV * WIRE_MSG_SIZE];
	struct wire_rec r;
	size_t n = 0;
	int t;

	memset(&r, 0, sizeof(r));
	if (strcmp(cs, "forged-origin") == 0) {
		r.type = WIRE_ORIGIN;
		r.origin.family = WIRE_FAM_INET;
		memcpy(r.origin.src, client, sizeof(client));
		memcpy(r.origin.dst, server, sizeof(server));
		r.origin.src_port = 4444;
		r.origin.dst_port = 80;
		n = wire_rec_encode(m, WIRE_MSG_SIZE, &r);
	}
	open_rec(&r, tunnel, 0);
	n += wire_rec_encode(m + n, WIRE_MSG_SIZE - n, &r);
	post(IBV_WR_SEND, m, (uint32_t)n, 0, 0, 0);
	t = watch(LIMIT_MS, &r);
	if (t == WIRE_REFUSE)
		printf("%s: refused (reason %u: %s)\n", cs, r.reason,
		    wire_reason_str(r.reason));
	else
		printf("%s: %s\n", cs, t == WIRE_OPEN_OK ? "accepted" :
		    t == -2 ? "disconnected" : "no answer");
	return (t == WIRE_REFUSE || t == WIRE_OPEN_OK ? 0 : 1);
}

/* The link's id and all that setup_qp made for it go. */
static void
drop_link(void)
{

	rdma_destroy_qp(id);
	ibv_dereg_mr(msg_mr);
	ibv_dereg_mr(ring_mr);
	ibv_dereg_mr(notice_mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	rdma_destroy_id(id);
}

/* ${n} connect requests with a bad hello; how many were rejected. */
static int
flood(const char *src, const char *dst, const char *port, int n)
{
	struct rdma_conn_param cp;
	struct wire_hello h;
	uint8_t hello[WIRE_HELLO_LEN];
	int k, rejected = 0, ev;

	memset(&h, 0, sizeof(h));
	h.version = WIRE_VERSION;
	h.credits = NRECV;
	wire_hello_encode(hello, &h);
	hello[0] ^= 0xff;
	for (k = 0; k < n; k++) {
		if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
			die("rdma_create_id");
		resolve(src, dst, port);
		setup_qp();
		memset(&cp, 0, sizeof(cp));
		cp.private_data = hello;
		cp.private_data_len = sizeof(hello);
		if (rdma_connect(id, &cp))
			die("rdma_connect");
		ev = next_event(LIMIT_MS, NULL, NULL);
		rejected += ev == RDMA_CM_EVENT_REJECTED;
		drop_link();
	}
	printf("flood: %d rejected of %d\n", rejected, n);
	return (0);
}

/* Is the RDMA device at ${addr} (a local address) an iWARP one? */
static int
iwarp_at(const char *addr)
{
	struct addrinfo hints, *ai;
	struct rdma_cm_id *t;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	if (getaddrinfo(addr, NULL, &hints, &ai))
		die("getaddrinfo");
	if (rdma_create_id(ch, &t, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(t, ai->ai_addr) || t->verbs == NULL)
		die("no RDMA device at the local address");
	rc = t->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
	rdma_destroy_id(t);
	freeaddrinfo(ai);
	return (rc);
}

/*
 * The link is up with our hello ${mine} and the peer's ${theirs} (NULL
 * if it sent none): it runs without immediates if either says NOTIFY
 * and both say version 11 or more, as the daemon decides.
 */
static void
link_up(const uint8_t mine[WIRE_HELLO_LEN],
    const uint8_t theirs[WIRE_HELLO_LEN])
{
	struct wire_hello a, b;

	notify = theirs != NULL &&
	    wire_hello_decode(mine, WIRE_HELLO_LEN, &a) == WIRE_OK &&
	    wire_hello_decode(theirs, WIRE_HELLO_LEN, &b) == WIRE_OK &&
	    a.version >= WIRE_VERSION_NOTIFY &&
	    b.version >= WIRE_VERSION_NOTIFY &&
	    ((a.flags | b.flags) & WIRE_HELLO_NOTIFY) != 0;
	/*
	 * Soft-iWARP's accept sends its MPA reply before it gives the
	 * socket to the queue pair (siw_accept in Linux 6.12): a frame that
	 * arrives in between stays unread until another comes.  A daemon
	 * sends again (a KEEPALIVE) and so goes on; this peer often sends
	 * one message and waits, so it lets the accept finish first (the
	 * daemon b of 18-hostile-iwarp once heard nothing of "truncated").
	 */
	if (iwarp)
		usleep(20000);
}

/* Hello ${h} with a fresh nonce into ${hello}, as ${cp}'s private data. */
static void
conn_hello(struct wire_hello *h, uint8_t hello[WIRE_HELLO_LEN],
    struct rdma_conn_param *cp)
{

	(void)getrandom(h->nonce, sizeof(h->nonce), 0);
	/* As an rstreamd on this device says (see link_up). */
	if (iwarp && h->version >= WIRE_VERSION_NOTIFY)
		h->flags |= WIRE_HELLO_NOTIFY;
	wire_hello_encode(hello, h);
	memset(cp, 0, sizeof(*cp));
	cp->private_data = hello;
	cp->private_data_len = WIRE_HELLO_LEN;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;
}

/* Listen at ${addr} ${port} (into id), and say so as ${who}. */
static void
listen_at(const char *addr, const char *port, const char *who)
{
	struct addrinfo hints, *ai;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	if (getaddrinfo(addr, port, &hints, &ai))
		die("getaddrinfo");
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(id, ai->ai_addr) || rdma_listen(id, 8))
		die("cannot listen");
	freeaddrinfo(ai);
	printf("%s: listening\n", who);
	fflush(stdout);
}

static uint8_t asked[WIRE_HELLO_LEN];	/* the first request's hello */
static int asked_len;

/*
 * Wait for the first connect request at the listener; it is id from now
 * on, and its hello goes to ${hello} if not NULL (and to asked).
 */
static void
first_request(uint8_t hello[WIRE_HELLO_LEN])
{
	struct rdma_cm_event *ev;
	struct pollfd p = { 0, POLLIN, 0 };

	for (;;) {
		p.fd = ch->fd;
		if (poll(&p, 1, 60000) <= 0 || rdma_get_cm_event(ch, &ev))
			die("no connect request");
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			break;
		rdma_ack_cm_event(ev);
	}
	if (hello != NULL && (ev->param.conn.private_data == NULL ||
	    ev->param.conn.private_data_len < WIRE_HELLO_LEN))
		die("a connect request without a hello");
	asked_len = 0;
	if (ev->param.conn.private_data != NULL &&
	    ev->param.conn.private_data_len >= WIRE_HELLO_LEN) {
		memcpy(asked, ev->param.conn.private_data, WIRE_HELLO_LEN);
		asked_len = WIRE_HELLO_LEN;
	}
	if (hello != NULL)
		memcpy(hello, asked, WIRE_HELLO_LEN);
	id = ev->id;
	rdma_ack_cm_event(ev);
}

/* Accept it with hello ${h} (its nonce made here, the bytes in ${hello}). */
static void
accept_first(struct wire_hello *h, uint8_t hello[WIRE_HELLO_LEN])
{
	struct rdma_conn_param cp;

	setup_qp();
	conn_hello(h, hello, &cp);
	if (rdma_accept(id, &cp) ||
	    next_event(LIMIT_MS, NULL, NULL) != RDMA_CM_EVENT_ESTABLISHED)
		die("the link did not come up");
	link_up(hello, asked_len > 0 ? asked : NULL);
}

/*
 * Serve the first link that comes as an rstreamd would, then open ${n}
 * streams on it, which a client link must refuse: prints "evil-server:
 * R refused of N".
 */
static int
evil_server(const char *addr, const char *port, int n)
{
	struct wire_hello h;
	struct wire_rec r;
	struct ibv_wc wc;
	uint8_t hello[WIRE_HELLO_LEN], clear[WIRE_MSG_SIZE], *m;
	const uint8_t *buf;
	size_t len, off, used;
	int k, refused = 0;

	listen_at(addr, port, "evil-server");
	first_request(NULL);
	memset(&h, 0, sizeof(h));
	h.version = hello_version();
	h.credits = NRECV;
	accept_first(&h, hello);
	/* Each SEND from a slot of the ring of its own: they run at once. */
	for (k = 0, m = ring, len = 0; k < n; k++) {
		memset(&r, 0, sizeof(r));
		r.type = WIRE_OPEN;
		r.stream = (uint32_t)k;
		r.ring.addr = (uintptr_t)ring;
		r.ring.rkey = ring_mr->rkey;
		r.ring.size = RING;
		r.name_len = 1;
		snprintf(r.name, sizeof(r.name), "x");
		if (len + wire_rec_size(&r) > send_room()) {
			post(IBV_WR_SEND, m, (uint32_t)len, 0, 0, 0);
			m += WIRE_MSG_SIZE;
			len = 0;
		}
		len += wire_rec_encode(m + len, WIRE_MSG_SIZE - len, &r);
	}
	post(IBV_WR_SEND, m, (uint32_t)len, 0, 0, 0);
	/* Every REFUSE of every message, until all came or time is up. */
	for (k = 0; k < LIMIT_MS / 10 && refused < n; k++) {
		while (ibv_poll_cq(cq, 1, &wc) > 0) {
			if (wc.status != IBV_WC_SUCCESS)
				die(ibv_wc_status_str(wc.status));
			if (!received(&wc, &buf, &len, clear))
				continue;
			for (off = 0; off < len; off += used)
				if (wire_rec_decode(buf + off, len - off, &r,
				    &used) != WIRE_OK)
					die("the client sent a bad record");
				else if (r.type == WIRE_REFUSE)
					refused++;
		}
		usleep(10000);
	}
	printf("evil-server: %d refused of %d\n", refused, n);
	return (0);
}

static int
old_peer(const char *addr, const char *port, int newest)
{
	struct rdma_cm_event *ev;
	struct pollfd p;
	uint8_t note[WIRE_NOTE_LEN];
	struct rdma_cm_id *req;
	const uint8_t *data;
	char seen[64] = "";
	int v, done = 0, n = 0;

	listen_at(addr, port, "old-peer");
	wire_note_encode(note, &(struct wire_note){ (uint8_t)newest, 0 });
	while (!done && n < 8) {
		p = (struct pollfd){ ch->fd, POLLIN, 0 };
		if (poll(&p, 1, 60000) <= 0)
			break;
		if (rdma_get_cm_event(ch, &ev))
			die("rdma_get_cm_event");
		if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
			rdma_ack_cm_event(ev);
			continue;
		}
		data = ev->param.conn.private_data;
		v = data != NULL && ev->param.conn.private_data_len >= 5 ?
		    data[4] : -1;
		req = ev->id;
		snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen),
		    " %d", v);
		n++;
		if (v > newest && newest < 3) {
			rdma_reject(req, NULL, 0);
		} else if (v > newest) {
			rdma_reject(req, note, sizeof(note));
		} else {
			rdma_reject(req, note, sizeof(note));
			done = 1;
		}
		/* Acked first: destroying an id waits for its events' acks. */
		rdma_ack_cm_event(ev);
		rdma_destroy_id(req);
	}
	/*
	 * Nobody listens from the moment the versions are printed: a
	 * request that reaches a listener still open as the process exits
	 * (slowly, under LeakSanitizer) is rejected by the kernel without a
	 * note, which the daemon rightly reads as another older peer.
	 */
	rdma_destroy_id(id);
	id = NULL;
	printf("old-peer: offered%s\n", seen);
	return (done ? 0 : 1);
}

/*
 * The daemon's side of a suspended stream's link is gone: open a stream
 * on each of ${t1} and ${t2} (this link offers resume, so the daemon
 * keeps them), then leave.
 */
static int
suspend_two(const char *t1, const char *t2)
{
	struct wire_rec r;

	open_stream(t1, 0, &r);
	open_stream(t2, 1, &r);
	printf("suspend-two: 2 streams accepted\n");
	fflush(stdout);
	rdma_disconnect(id);
	return (0);
}

/* See fake-server above. */
static int
fake_server(const char *addr, const char *port, const char *keyfile)
{
	struct wire_hello peer, h;
	struct wire_rec r;
	uint8_t *m = &msgs[NRECV * WIRE_MSG_SIZE];
	uint8_t key[CONF_KEY_BYTES], hellos[AUTH_HELLOS_LEN];
	size_t klen = 0;
	int t, keyed = strcmp(keyfile, "-") != 0;

	if (keyed)
		klen = read_key(keyfile, key, sizeof(key));
	if (auth_init() != 0)
		die("auth_init");
	listen_at(addr, port, "fake-server");
	first_request(hellos);
	if (wire_hello_decode(hellos, WIRE_HELLO_LEN, &peer) != WIRE_OK)
		die("the connect request's hello does not decode");
	memset(&h, 0, sizeof(h));
	h.version = hello_version();
	if (h.version > peer.version)
		h.version = peer.version;
	h.flags = (uint8_t)((keyed ? WIRE_HELLO_AUTH : 0) |
	    (h.version >= 2 ? peer.flags & WIRE_HELLO_RESUME : 0));
	h.credits = NRECV;
	accept_first(&h, hellos + WIRE_HELLO_LEN);
	/* Its proof of the key first: this peer holds the key too. */
	if (keyed) {
		if (watch(LIMIT_MS, &r) != WIRE_AUTH)
			die("no AUTH from the daemon");
		memset(&r, 0, sizeof(r));
		r.type = WIRE_AUTH;
		auth_proof(key, klen, 0, hellos, r.proof);
		post(IBV_WR_SEND, m, (uint32_t)wire_rec_encode(m,
		    WIRE_MSG_SIZE, &r), 0, 0, 0);
	}
	while ((t = watch(10000, &r)) >= 0 && t != WIRE_RESUME_STREAM) {
		if (t != WIRE_RESUME)
			continue;
		printf("fake-server: RESUME\n");
		fflush(stdout);
		if (h.version < 5)
			continue;
		/* No secret here: the best it can do is the asker's own. */
		r.type = WIRE_RESUME_PROOF;
		post(IBV_WR_SEND, m, (uint32_t)wire_rec_encode(m,
		    WIRE_MSG_SIZE, &r), 0, 0, 0);
	}
	printf("fake-server: %s\n", t == WIRE_RESUME_STREAM ? "the daemon "
	    "named a stream" : t == -2 ? "disconnected; no stream named" :
	    "no stream named");
	return (t == WIRE_RESUME_STREAM ? 1 : 0);
}

/* ---------------------------- identities and sealing (versions 6 and 7) */

/* rstreamd-protocol(7), "Identities": the prologue starts with it. */
static const char label_prologue[] = "rstream-noise-v1";
#define LABEL_LEN	(sizeof(label_prologue) - 1)
/* ... and "Confirmation" (version 7): the responder's, keyed BLAKE2b. */
static const char label_confirm[] = "rstream-confirm-v1";
#define CONFIRM_LEN	32

/* Version 7: the confirmation the daemon owes us, and whether it is
 * still due; after it we open what it seals (confirm_seal). */
static uint8_t confirm_want[CONFIRM_LEN];
static int confirm_due, confirm_seal;

/* A handshake's messages: ours (1, 3) and the daemon's (2). */
struct hs_msgs {
	uint8_t m[3][NOISE_MSG_MAX];
	size_t len[3];
};

/* Send slot ${k} (0 is the one the other cases use). */
static uint8_t *
send_slot(int k)
{

	return (&msgs[(size_t)(NRECV + k) * WIRE_MSG_SIZE]);
}

/* A SEND of the ${len} bytes of records at ${m}: sealed (their tag
 * after them) once this side seals. */
static void
send_recs(uint8_t *m, size_t len)
{

	if (sealing_tx) {
		(void)seal_dir_seal(&seal_tx, m, len, NULL, 0, m + len);
		len += SEAL_TAG_LEN;
	}
	post(IBV_WR_SEND, m, (uint32_t)len, 0, 0, 0);
}

/*
 * A HANDSHAKE record carrying the ${len} bytes at ${msg}, alone.  Two
 * slots in turn: the device reads a SEND's buffer when it executes it,
 * so two posted back to back (early-confirm's message 2 and its
 * confirmation) must not share one.
 */
static void
send_hs(const uint8_t *msg, size_t len)
{
	static int turn;
	uint8_t *m = send_slot(4 + (turn++ & 1));
	struct wire_rec r;

	memset(&r, 0, sizeof(r));
	r.type = WIRE_HANDSHAKE;
	r.hs_len = (uint8_t)len;
	memcpy(r.hs, msg, len);
	send_recs(m, wire_rec_encode(m, WIRE_MSG_SIZE, &r));
}

/* Do the hellos ${hellos} (the initiator's, then the responder's) both
 * say version 7 or more?  The responder confirms then. */
static int
confirms(const uint8_t hellos[AUTH_HELLOS_LEN])
{

	return (hellos[4] >= 7 && hellos[WIRE_HELLO_LEN + 4] >= 7);
}

/* The responder's confirmation from Split's third key and the hash. */
static void
confirm_of(const uint8_t k3[NOISE_KEY_LEN], const uint8_t hh[NOISE_HASH_LEN],
    uint8_t out[CONFIRM_LEN])
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, k3, NOISE_KEY_LEN, CONFIRM_LEN);
	crypto_generichash_update(&st, (const uint8_t *)label_confirm,
	    sizeof(label_confirm) - 1);
	crypto_generichash_update(&st, hh, NOISE_HASH_LEN);
	crypto_generichash_final(&st, out, CONFIRM_LEN);
}

/*
 * Once split: seal and open with c1 and c2 (as initiator: seal with c1;
 * as responder: with c2) as the daemon decides from the hellos it saw,
 * ${said} (the initiator's, then the responder's): sealed if either has
 * SEAL, with AES-256-GCM if both have AESGCM.  Returns whether the link
 * seals; the caller says when each direction starts (see handshake).
 */
static int
seal_start(const uint8_t said[AUTH_HELLOS_LEN], int initiator,
    const uint8_t *c1, const uint8_t *c2)
{
	struct wire_hello mine, theirs;
	enum seal_aead a;

	if (wire_hello_decode(said, WIRE_HELLO_LEN, &mine) != WIRE_OK ||
	    wire_hello_decode(said + WIRE_HELLO_LEN, WIRE_HELLO_LEN,
	    &theirs) != WIRE_OK)
		die("a hello does not decode");
	if (!((mine.flags | theirs.flags) & WIRE_HELLO_SEAL))
		return (0);
	a = mine.flags & theirs.flags & WIRE_HELLO_AESGCM ? SEAL_AESGCM :
	    SEAL_CHACHAPOLY;
	/* A second handshake's keys replace the first's. */
	seal_dir_wipe(&seal_tx);
	seal_dir_wipe(&seal_rx);
	if (seal_dir_init(&seal_tx, a, initiator ? c1 : c2) != 0 ||
	    seal_dir_init(&seal_rx, a, initiator ? c2 : c1) != 0)
		die("out of memory for the sealing keys");
	return (1);
}

/*
 * Noise_XX as the initiator, with the identity ${priv}, bound to the
 * hellos ${bound} (ours, then the daemon's: the prologue's); ${said} are
 * the hellos as the daemon saw them, which decide the sealing (NULL: act
 * as if the link were not sealed, whatever they say).  The messages go
 * to ${hm}.  0 once message 3 is posted (the daemon's confirmation, if
 * the hellos say 7, is then due: see confirmation); 1 if the daemon's
 * message 2 does not authenticate; -2 if it disconnected, -1 if none
 * came.
 */
static int
handshake(const uint8_t priv[NOISE_KEY_LEN],
    const uint8_t bound[AUTH_HELLOS_LEN],
    const uint8_t said[AUTH_HELLOS_LEN], struct hs_msgs *hm)
{
	uint8_t prologue[LABEL_LEN + AUTH_HELLOS_LEN];
	uint8_t c1[NOISE_KEY_LEN], c2[NOISE_KEY_LEN], k3[NOISE_KEY_LEN];
	uint8_t hh[NOISE_HASH_LEN];
	struct noise_hs hs;
	struct wire_rec r;
	size_t plen;
	int t, sealed = 0;

	memcpy(prologue, label_prologue, LABEL_LEN);
	memcpy(prologue + LABEL_LEN, bound, AUTH_HELLOS_LEN);
	if (noise_init(&hs, 1, prologue, sizeof(prologue), priv, NULL,
	    NULL) != 0 ||
	    noise_write(&hs, NULL, 0, hm->m[0], NOISE_MSG_MAX, &hm->len[0]))
		die("noise: cannot write message 1");
	send_hs(hm->m[0], hm->len[0]);
	if ((t = watch_for(LIMIT_MS, &r, 1u << WIRE_HANDSHAKE)) < 0) {
		noise_wipe(&hs);
		return (t);
	}
	memcpy(hm->m[1], r.hs, r.hs_len);
	hm->len[1] = r.hs_len;
	if (noise_read(&hs, r.hs, r.hs_len, NULL, 0, &plen) != 0)
		return (1);
	if (noise_write(&hs, NULL, 0, hm->m[2], NOISE_MSG_MAX, &hm->len[2]))
		die("noise: cannot write message 3");
	noise_split(&hs, c1, c2, k3, hh);
	if (said != NULL)
		sealed = seal_start(said, 1, c1, c2);
	/* It opens what follows message 2, or from 7 the confirmation. */
	confirm_due = confirms(bound);
	confirm_of(k3, hh, confirm_want);
	confirm_seal = sealed;
	sealing_rx = sealed && !confirm_due;
	send_hs(hm->m[2], hm->len[2]);
	sealing_tx = sealed;
	sodium_memzero(c1, sizeof(c1));
	sodium_memzero(c2, sizeof(c2));
	sodium_memzero(k3, sizeof(k3));
	return (0);
}

/*
 * Version 7: the daemon's confirmation, its first message after message
 * 2; from then on this side opens what it seals.  0 once it checked (or
 * none is due); 1 if it is wrong; -2 if the daemon disconnected, -1 if
 * none came.
 */
static int
confirmation(void)
{
	struct wire_rec r;
	int t;

	if (!confirm_due)
		return (0);
	confirm_due = 0;
	if ((t = watch_for(LIMIT_MS, &r, 1u << WIRE_HANDSHAKE)) < 0)
		return (t);
	if (r.hs_len != CONFIRM_LEN ||
	    sodium_memcmp(r.hs, confirm_want, CONFIRM_LEN) != 0)
		return (1);
	sealing_rx = confirm_seal;
	return (0);
}

/*
 * Whether the daemon ends the link within ${ms}: -2 if it does, -1 if not,
 * or the type of a record in the mask ${want} it sends first.  Once this
 * side seals, it says a KEEPALIVE every second meanwhile, so that a link
 * the daemon took stays up past its liveness bound.
 */
static int
watch_alive(int ms, uint32_t want)
{
	struct wire_rec r;
	uint8_t *m = send_slot(0);
	int t = -1, k;

	for (k = 0; k < ms / 1000 && t == -1; k++) {
		if (sealing_tx) {
			memset(&r, 0, sizeof(r));
			r.type = WIRE_KEEPALIVE;
			send_recs(m, wire_rec_encode(m, WIRE_MSG_SIZE -
			    SEAL_TAG_LEN, &r));
		}
		t = watch_for(1000, &r, want);
	}
	return (t);
}

/* OPEN a stream on ${tunnel} (sealed if the link is); watch()'s answer. */
static int
open_sealed(const char *tunnel, struct wire_rec *r)
{
	uint8_t *m = send_slot(2);

	open_rec(r, tunnel, 0);
	send_recs(m, wire_rec_encode(m, WIRE_MSG_SIZE - SEAL_TAG_LEN, r));
	return (watch(LIMIT_MS, r));
}

/*
 * A sealed data WRITE of ${len} bytes from our ring's start to the start
 * of the ring the daemon granted in OPEN_OK ${ok}: the payload sealed in
 * place (its associated data the immediate, big-endian), a plain RDMA
 * WRITE, then the tag as a SEND WITH IMMEDIATE that carries the data's
 * immediate.  ${flip} "payload" or "tag": one bit of it changes after
 * sealing.
 */
static void
write_sealed(const struct wire_rec *ok, uint32_t len, const char *flip)
{
	uint8_t *tag = send_slot(3), ad[4];
	uint32_t imm = wire_imm_encode(ok->peer_stream, len);

	ad[0] = (uint8_t)(imm >> 24);
	ad[1] = (uint8_t)(imm >> 16);
	ad[2] = (uint8_t)(imm >> 8);
	ad[3] = (uint8_t)imm;
	(void)seal_dir_seal(&seal_tx, ring, len, ad, sizeof(ad), tag);
	if (strcmp(flip, "payload") == 0)
		ring[len / 2] ^= 0x10;
	else if (strcmp(flip, "tag") == 0)
		tag[SEAL_TAG_LEN / 2] ^= 0x01;
	post(IBV_WR_RDMA_WRITE, ring, len, 0, ok->ring.addr, ok->ring.rkey);
	post(IBV_WR_SEND_WITH_IMM, tag, SEAL_TAG_LEN, imm, 0, 0);
}

/*
 * Connect (a new id) from ${src} to ${dst} ${port} with ${cp}'s hello;
 * the daemon's hello goes to ${theirs}.  0 once up; -1 if rejected.
 */
static int
connect_to(const char *src, const char *dst, const char *port,
    struct rdma_conn_param *cp, uint8_t theirs[WIRE_HELLO_LEN])
{
	uint8_t pdata[64];
	size_t plen = 0;
	int ev;

	sealing_tx = sealing_rx = 0;
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	resolve(src, dst, port);
	setup_qp();
	if (rdma_connect(id, cp))
		die("rdma_connect");
	ev = next_event(LIMIT_MS, pdata, &plen);
	if (ev == RDMA_CM_EVENT_REJECTED)
		return (-1);
	if (ev != RDMA_CM_EVENT_ESTABLISHED || plen < WIRE_HELLO_LEN)
		die("could not connect, or no hello in the accept");
	memcpy(theirs, pdata, WIRE_HELLO_LEN);
	link_up(cp->private_data, theirs);
	return (0);
}

/*
 * The first link's handshake went through (and a stream opened on it):
 * leave, then on a second link with the same hello, send its messages 1
 * and 3 again.  The daemon must end it: its message 2 has a new
 * ephemeral key, and the prologue its own new nonce.
 */
static int
replay(const char *src, const char *dst, const char *port,
    struct rdma_conn_param *cp, const struct hs_msgs *first)
{
	uint8_t theirs[WIRE_HELLO_LEN];
	struct wire_rec r;
	int t, same = 0;

	rdma_disconnect(id);
	while ((t = next_event(2000, NULL, NULL)) >= 0 &&
	    t != RDMA_CM_EVENT_DISCONNECTED)
		;
	drop_link();
	if (connect_to(src, dst, port, cp, theirs) != 0) {
		printf("replayed-handshake: rejected\n");
		return (0);
	}
	send_hs(first->m[0], first->len[0]);
	if ((t = watch_for(LIMIT_MS, &r, 1u << WIRE_HANDSHAKE)) ==
	    WIRE_HANDSHAKE) {
		same = r.hs_len == first->len[1] &&
		    memcmp(r.hs, first->m[1], r.hs_len) == 0;
		send_hs(first->m[2], first->len[2]);
		/* No keys to keep it alive: well within its liveness bound. */
		t = watch_alive(REPLAY_MS, 0);
	}
	printf("replayed-handshake: %s%s\n", t == -2 ? "disconnected" :
	    "still connected", same ? " (message 2 was the same)" : "");
	return (t == -2 ? 0 : 1);
}

/* Where a stream opened, sealed-write and flipped-*: see the header. */
static int
sealed_data(const char *cs, const char *tunnel)
{
	static const char marker[] = "SEALED-PAYLOAD--";
	static const char forged[] = "FORGED-PAYLOAD--";
	int over = strcmp(cs, "overwritten-write") == 0;
	uint32_t max = over ? RING / 2 : RING;
	struct wire_rec r, x;
	uint32_t len, k;
	int t;

	if ((t = open_sealed(tunnel, &r)) != WIRE_OPEN_OK)
		die("the stream was not accepted");
	len = r.ring.size / 4 < max ? r.ring.size / 4 : max;
	for (k = 0; k < len; k++)
		ring[k] = (uint8_t)marker[k % (sizeof(marker) - 1)];
	write_sealed(&r, len, strncmp(cs, "flipped-", 8) == 0 ? cs + 8 : "");
	if (over) {
		for (k = 0; k < len; k++)
			ring[len + k] = (uint8_t)forged[k % (sizeof(forged) - 1)];
		post(IBV_WR_RDMA_WRITE, ring + len, len, 0, r.ring.addr,
		    r.ring.rkey);
	}
	t = watch_for(LIMIT_MS, &x, 1u << WIRE_CREDIT);
	if (over && t == -2) {
		printf("%s: disconnected\n", cs);
		return (0);
	}
	if (strcmp(cs, "sealed-write") == 0 || over) {
		if (t == WIRE_CREDIT)
			printf("%s: %u bytes written, credit returned\n", cs,
			    (unsigned)len);
		else
			printf("%s: %s\n", cs, t == -2 ? "disconnected" :
			    "no credit");
		return (t == WIRE_CREDIT ? 0 : 1);
	}
	printf("%s: %s\n", cs, t == -2 ? "disconnected" : t == WIRE_CREDIT ?
	    "the daemon took the bytes" : "still connected");
	return (t == -2 ? 0 : 1);
}

/* Does case ${cs} speak with an identity (see ident_case)? */
static int
ident_case_name(const char *cs)
{
	static const char *const names[] = { "wrong-identity",
	    "replayed-handshake", "stripped-capability", "unsealed",
	    "sealed-write", "overwritten-write", "flipped-payload",
	    "flipped-tag" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(cs, names[i]) == 0)
			return (1);
	return (0);
}

/* What comes after a handshake that went through (see the header). */
static int
after_handshake(const char *cs, const char *tunnel,
    const uint8_t theirs[WIRE_HELLO_LEN])
{
	struct wire_hello daemon;
	struct wire_rec r;
	int t;

	if (strcmp(cs, "wrong-identity") == 0) {
		/* Not listed: the daemon must not confirm. */
		t = watch_alive(LIMIT_MS, confirm_due ? 1u << WIRE_HANDSHAKE :
		    0);
		printf("%s: %s\n", cs, t == -2 ? "disconnected" :
		    t == WIRE_HANDSHAKE ? "the daemon confirmed" :
		    "still connected");
		return (t == -2 ? 0 : 1);
	}
	if ((t = confirmation()) != 0) {
		printf("%s: %s\n", cs, t == 1 ? "the daemon's confirmation is "
		    "wrong" : t == -2 ? "disconnected before the confirmation" :
		    "no confirmation");
		return (1);
	}
	if (tunnel == NULL)
		die("this case needs a tunnel");
	if (strcmp(cs, "unsealed") != 0)
		return (sealed_data(cs, tunnel));
	if (wire_hello_decode(theirs, WIRE_HELLO_LEN, &daemon) != WIRE_OK)
		die("the daemon's hello does not decode");
	t = open_sealed(tunnel, &r);
	printf("unsealed: the daemon's hello %s; %s\n",
	    daemon.flags & WIRE_HELLO_SEAL ? "asks for sealing" :
	    "does not ask for sealing",
	    t == -2 ? "disconnected" : t == WIRE_OPEN_OK ? "stream accepted" :
	    t == WIRE_REFUSE ? "stream refused" : "no answer");
	return (t == -2 || t == WIRE_REFUSE ? 0 : 1);
}

/*
 * The cases with an identity: connect as IDFILE with a hello of version 6
 * or later (hello_version)
 * (IDENTITY, SEAL but for stripped-capability and unsealed, AESGCM if
 * this CPU has it), run the handshake, then misbehave.
 */
static int
ident_case(const char *src, const char *dst, const char *port,
    const char *cs, const char *idfile, const char *tunnel)
{
	uint8_t priv[NOISE_KEY_LEN], pub[NOISE_KEY_LEN];
	uint8_t said[AUTH_HELLOS_LEN], bound[AUTH_HELLOS_LEN];
	struct rdma_conn_param cp;
	struct wire_hello h;
	struct hs_msgs hm;
	char err[512];
	int seal, rc;

	if (sodium_init() < 0)
		die("sodium_init");
	if (ident_read(idfile, priv, pub, err, sizeof(err)) != 0)
		die(err);
	seal = strcmp(cs, "stripped-capability") != 0 &&
	    strcmp(cs, "unsealed") != 0;
	memset(&h, 0, sizeof(h));
	h.version = hello_version();
	h.credits = NRECV;
	h.flags = (uint8_t)(WIRE_HELLO_IDENTITY | (seal ? WIRE_HELLO_SEAL :
	    0) | (seal_aesgcm_available() && getenv("HOSTILE_NO_AESGCM") ==
	    NULL ? WIRE_HELLO_AESGCM : 0));
	conn_hello(&h, said, &cp);
	if (connect_to(src, dst, port, &cp, said + WIRE_HELLO_LEN) != 0) {
		printf("%s: rejected\n", cs);
		return (1);
	}
	memcpy(bound, said, sizeof(bound));
	/* What a man in the middle who took SEAL out of our hello causes. */
	if (!seal && strcmp(cs, "stripped-capability") == 0) {
		h.flags |= WIRE_HELLO_SEAL;
		wire_hello_encode(bound, &h);
	}
	rc = handshake(priv, bound, strcmp(cs, "unsealed") == 0 ? NULL :
	    said, &hm);
	sodium_memzero(priv, sizeof(priv));
	if (strcmp(cs, "stripped-capability") == 0) {
		printf("%s: %s\n", cs, rc == 1 ? "message 2 failed "
		    "authentication" : rc == 0 ? "the handshake went through" :
		    "no message 2");
		return (rc == 1 ? 0 : 1);
	}
	if (rc != 0)
		die("the handshake did not get to message 3");
	if (strcmp(cs, "replayed-handshake") == 0) {
		if (tunnel == NULL || confirmation() != 0 ||
		    open_sealed(tunnel, &(struct wire_rec){ 0 }) !=
		    WIRE_OPEN_OK)
			die("no stream on the first link");
		return (replay(src, dst, port, &cp, &hm));
	}
	return (after_handshake(cs, tunnel, said + WIRE_HELLO_LEN));
}

/* hs-flood (see the header): ${n} handshakes as the identity ${idfile}. */
static int
hs_flood(const char *src, const char *dst, const char *port,
    const char *idfile, int n)
{
	uint8_t priv[NOISE_KEY_LEN], pub[NOISE_KEY_LEN];
	uint8_t said[AUTH_HELLOS_LEN];
	struct rdma_conn_param cp;
	struct wire_hello h;
	struct wire_rec r;
	struct hs_msgs hm;
	char err[512];
	int k, ended = 0, rejected = 0;

	if (sodium_init() < 0)
		die("sodium_init");
	if (ident_read(idfile, priv, pub, err, sizeof(err)) != 0)
		die(err);
	memset(&h, 0, sizeof(h));
	h.version = hello_version();
	h.credits = NRECV;
	h.flags = (uint8_t)(WIRE_HELLO_IDENTITY | WIRE_HELLO_SEAL |
	    (seal_aesgcm_available() ? WIRE_HELLO_AESGCM : 0));
	for (k = 0; k < n; k++) {
		conn_hello(&h, said, &cp);
		if (connect_to(src, dst, port, &cp, said + WIRE_HELLO_LEN) !=
		    0)
			rejected++;
		else if (handshake(priv, said, said, &hm) == 0 &&
		    watch_for(LIMIT_MS, &r, 0) == -2)
			ended++;
		drop_link();
	}
	sodium_memzero(priv, sizeof(priv));
	printf("hs-flood: %d ended, %d rejected of %d\n", ended, rejected, n);
	return (0);
}

/* Is ${cs} a passive case with an identity (see confirm_case)? */
static int
confirm_case_name(const char *cs)
{

	return (strcmp(cs, "no-confirm") == 0 ||
	    strcmp(cs, "wrong-confirm") == 0 ||
	    strcmp(cs, "early-confirm") == 0);
}

/*
 * Serve the first link a daemon connects at ${addr} ${port} as the Noise
 * responder with the identity in ${idfile}, and misbehave about the
 * confirmation as ${cs} says (see the header).
 */
static int
confirm_case(const char *addr, const char *port, const char *cs,
    const char *idfile)
{
	uint8_t priv[NOISE_KEY_LEN], pub[NOISE_KEY_LEN];
	uint8_t c1[NOISE_KEY_LEN], c2[NOISE_KEY_LEN], k3[NOISE_KEY_LEN];
	uint8_t hellos[AUTH_HELLOS_LEN], hh[NOISE_HASH_LEN];
	uint8_t prologue[LABEL_LEN + AUTH_HELLOS_LEN], msg[NOISE_MSG_MAX];
	uint8_t conf[CONFIRM_LEN];
	struct wire_hello peer, h;
	struct noise_hs hs;
	struct wire_rec r;
	size_t mlen, plen;
	char err[512];
	int t, sealed;

	if (sodium_init() < 0)
		die("sodium_init");
	if (ident_read(idfile, priv, pub, err, sizeof(err)) != 0)
		die(err);
	listen_at(addr, port, cs);
	first_request(hellos);
	if (wire_hello_decode(hellos, WIRE_HELLO_LEN, &peer) != WIRE_OK)
		die("the connect request's hello does not decode");
	if (!(peer.flags & WIRE_HELLO_IDENTITY) ||
	    (peer.flags & WIRE_HELLO_AUTH))
		die("the daemon's hello has no identity, or a key");
	memset(&h, 0, sizeof(h));
	h.version = hello_version();
	if (h.version > peer.version)
		h.version = peer.version;
	h.credits = NRECV;
	h.flags = (uint8_t)(WIRE_HELLO_IDENTITY | WIRE_HELLO_SEAL |
	    (seal_aesgcm_available() ? WIRE_HELLO_AESGCM : 0));
	accept_first(&h, hellos + WIRE_HELLO_LEN);
	if (!confirms(hellos))
		die("the link does not speak version 7");
	memcpy(prologue, label_prologue, LABEL_LEN);
	memcpy(prologue + LABEL_LEN, hellos, AUTH_HELLOS_LEN);
	if (noise_init(&hs, 0, prologue, sizeof(prologue), priv, NULL,
	    NULL) != 0)
		die("noise: cannot start");
	sodium_memzero(priv, sizeof(priv));
	if (watch_for(LIMIT_MS, &r, 1u << WIRE_HANDSHAKE) != WIRE_HANDSHAKE ||
	    noise_read(&hs, r.hs, r.hs_len, NULL, 0, &plen) != 0 ||
	    noise_write(&hs, NULL, 0, msg, sizeof(msg), &mlen) != 0)
		die("noise: no good message 1");
	send_hs(msg, mlen);
	if (strcmp(cs, "early-confirm") == 0) {
		/* No keys yet: the best it can do is made up. */
		(void)getrandom(conf, sizeof(conf), 0);
		send_hs(conf, sizeof(conf));
	}
	t = watch_for(LIMIT_MS, &r, 1u << WIRE_HANDSHAKE);
	if (t == WIRE_HANDSHAKE) {
		if (noise_read(&hs, r.hs, r.hs_len, NULL, 0, &plen) != 0)
			die("noise: message 3 does not authenticate");
		noise_split(&hs, c1, c2, k3, hh);
		/* The daemon seals from the SEND after message 3. */
		sealed = seal_start(hellos, 0, c1, c2);
		sealing_rx = sealed;
		confirm_of(k3, hh, conf);
		sodium_memzero(c1, sizeof(c1));
		sodium_memzero(c2, sizeof(c2));
		sodium_memzero(k3, sizeof(k3));
		if (strcmp(cs, "wrong-confirm") == 0) {
			conf[CONFIRM_LEN / 2] ^= 0x01;
			send_hs(conf, sizeof(conf));
		}
		/* The daemon opens streams only on a link that is up. */
		t = watch_alive(LIMIT_MS, 1u << WIRE_OPEN);
	} else
		noise_wipe(&hs);
	printf("%s: %s\n", cs, t == -2 ? "disconnected; no stream opened" :
	    t == WIRE_OPEN ? "the daemon opened a stream" : "still connected");
	return (t == -2 ? 0 : 1);
}

int
main(int argc, char **argv)
{
	struct rdma_conn_param cp;
	struct wire_hello h;
	struct wire_rec r;
	uint8_t hello[WIRE_HELLO_LEN], pdata[64];
	uint8_t *m = &msgs[NRECV * WIRE_MSG_SIZE];
	const char *cs;
	size_t plen = 0;
	uint64_t off;
	int ev, keyed;

	if (argc < 5) {
		fprintf(stderr, "usage: hostile SOURCE PEER PORT CASE "
		    "[TUNNEL]\n");
		return (2);
	}
	cs = argv[4];
	if ((ch = rdma_create_event_channel()) == NULL)
		die("rdma_create_event_channel");
	/* The passive cases are at PEER_ADDR, the others at SOURCE. */
	iwarp = iwarp_at(strcmp(cs, "old-peer") == 0 ||
	    strcmp(cs, "evil-server") == 0 || confirm_case_name(cs) ||
	    strcmp(cs, "fake-server") == 0 ? argv[2] : argv[1]);
	if (strcmp(cs, "flood") == 0 && argc > 5)
		return (flood(argv[1], argv[2], argv[3], atoi(argv[5])));
	if (strcmp(cs, "hs-flood") == 0 && argc > 6)
		return (hs_flood(argv[1], argv[2], argv[3], argv[5],
		    atoi(argv[6])));
	if (strcmp(cs, "old-peer") == 0)
		return (old_peer(argv[2], argv[3], argc > 5 ? atoi(argv[5]) :
		    2));
	if (strcmp(cs, "evil-server") == 0 && argc > 5)
		return (evil_server(argv[2], argv[3], atoi(argv[5])));
	if (confirm_case_name(cs) && argc > 5)
		return (confirm_case(argv[2], argv[3], cs, argv[5]));
	if (ident_case_name(cs) && argc > 5)
		return (ident_case(argv[1], argv[2], argv[3], cs, argv[5],
		    argc > 6 ? argv[6] : NULL));
	if (strcmp(cs, "fake-server") == 0)
		return (fake_server(argv[2], argv[3], argc > 5 ? argv[5] :
		    "-"));
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	resolve(argv[1], argv[2], argv[3]);
	setup_qp();

	memset(&h, 0, sizeof(h));
	h.version = hello_version();
	h.credits = NRECV;
	if (strcmp(cs, "open-first") == 0 || strcmp(cs, "wrong-key") == 0 ||
	    strcmp(cs, "silent") == 0 || strcmp(cs, "right-key") == 0 ||
	    strcmp(cs, "resume") == 0 || strcmp(cs, "suspend-two") == 0)
		h.flags = WIRE_HELLO_AUTH;
	if (strcmp(cs, "resume") == 0 || strcmp(cs, "suspend-two") == 0)
		h.flags |= WIRE_HELLO_RESUME;
	/* forged-origin and no-origin: with a key unless it is "-". */
	keyed = argc > 6 && strcmp(argv[5], "-") != 0;
	if (strstr(cs, "-origin") != NULL && keyed)
		h.flags = WIRE_HELLO_AUTH;
	conn_hello(&h, hello, &cp);
	if (strcmp(cs, "bad-magic") == 0)
		hello[0] ^= 0xff;
	else if (strcmp(cs, "bad-version") == 0)
		hello[4] = 99;
	else if (strcmp(cs, "short-hello") == 0)
		cp.private_data_len = 5;
	else if (strcmp(cs, "bad-credits") == 0)
		hello[6] = hello[7] = 0;
	if (rdma_connect(id, &cp))
		die("rdma_connect");
	ev = next_event(LIMIT_MS, pdata, &plen);
	if (strcmp(cs, "hold") == 0 && ev == RDMA_CM_EVENT_REJECTED) {
		printf("hold: rejected\n");
		return (0);
	}
	if (strncmp(cs, "bad-", 4) == 0 || strcmp(cs, "short-hello") == 0 ||
	    strcmp(cs, "no-auth") == 0) {
		printf("%s: %s\n", cs, ev == RDMA_CM_EVENT_REJECTED ?
		    "rejected" : rdma_event_str(ev));
		return (ev == RDMA_CM_EVENT_REJECTED ? 0 : 1);
	}
	if (ev != RDMA_CM_EVENT_ESTABLISHED) {
		fprintf(stderr, "hostile: could not connect: %s\n",
		    ev < 0 ? "timed out" : rdma_event_str(ev));
		return (2);
	}
	link_up(hello, plen >= WIRE_HELLO_LEN ? pdata : NULL);

	if (strstr(cs, "-origin") != NULL && !keyed) {
		if (argc < 7)
			die("forged-origin and no-origin need - and a tunnel");
		return (origin_open(cs, argv[6]));
	}
	if (strcmp(cs, "wrong-key") == 0 || strcmp(cs, "right-key") == 0 ||
	    strcmp(cs, "resume") == 0 || strcmp(cs, "suspend-two") == 0 ||
	    strstr(cs, "-origin") != NULL) {
		uint8_t key[CONF_KEY_BYTES], hellos[AUTH_HELLOS_LEN];
		size_t klen;
		int t;

		if (argc < 6 || plen < WIRE_HELLO_LEN)
			die("no key file, or no private data in the accept");
		klen = read_key(argv[5], key, sizeof(key));
		memcpy(hellos, hello, WIRE_HELLO_LEN);
		memcpy(hellos + WIRE_HELLO_LEN, pdata, WIRE_HELLO_LEN);
		memset(&r, 0, sizeof(r));
		r.type = WIRE_AUTH;
		if (auth_init() != 0)
			die("auth_init");
		auth_proof(key, klen, 1, hellos, r.proof);
		post(IBV_WR_SEND, m, (uint32_t)wire_rec_encode(m,
		    WIRE_MSG_SIZE, &r), 0, 0, 0);
		t = watch(LIMIT_MS, &r);
		if (strcmp(cs, "wrong-key") == 0) {
			printf("%s: %s\n", cs, t == -2 ? "disconnected" :
			    t == WIRE_AUTH ? "the daemon answered with its "
			    "proof" : "still connected");
			return (t == -2 ? 0 : 1);
		}
		if (t != WIRE_AUTH || auth_check(key, klen, 0, hellos,
		    r.proof) != 0) {
			printf("%s: no valid proof from the daemon\n", cs);
			return (1);
		}
		if (argc < 7)
			die("right-key and resume need a tunnel or a token");
		if (strcmp(cs, "resume") == 0)
			return (resume(argv[6]));
		if (strcmp(cs, "suspend-two") == 0) {
			if (argc < 8)
				die("suspend-two needs two tunnels");
			return (suspend_two(argv[6], argv[7]));
		}
		if (strstr(cs, "-origin") != NULL)
			return (origin_open(cs, argv[6]));
		open_stream(argv[6], 0, &r);
		printf("%s: authenticated, stream accepted\n", cs);
		return (0);
	}
	if (strcmp(cs, "open-first") == 0 && argc > 5) {
		int t;

		memset(&r, 0, sizeof(r));
		r.type = WIRE_OPEN;
		r.ring.addr = (uintptr_t)ring;
		r.ring.rkey = ring_mr->rkey;
		r.ring.size = RING;
		r.name_len = (uint8_t)strlen(argv[5]);
		snprintf(r.name, sizeof(r.name), "%s", argv[5]);
		post(IBV_WR_SEND, m, (uint32_t)wire_rec_encode(m,
		    WIRE_MSG_SIZE, &r), 0, 0, 0);
		t = watch(LIMIT_MS, &r);
		printf("%s: %s\n", cs, t == -2 ? "disconnected" :
		    t == WIRE_OPEN_OK ? "the stream was accepted" :
		    "still connected");
		return (t == -2 ? 0 : 1);
	}
	if (strcmp(cs, "silent") == 0 || strcmp(cs, "mute") == 0) {
		int t = watch(strcmp(cs, "mute") == 0 ? 30000 : LIMIT_MS, &r);

		printf("%s: %s\n", cs, t == -2 ? "disconnected" :
		    "still connected");
		return (t == -2 ? 0 : 1);
	}
	if (strcmp(cs, "hold") == 0 && argc > 5) {
		int secs = atoi(argv[5]), t = -1, k;

		memset(&r, 0, sizeof(r));
		r.type = WIRE_KEEPALIVE;
		for (k = 0; k < secs && t != -2; k++) {
			post(IBV_WR_SEND, m, (uint32_t)wire_rec_encode(m,
			    WIRE_MSG_SIZE, &r), 0, 0, 0);
			t = watch(1000, &r);
			r.type = WIRE_KEEPALIVE;
		}
		printf("hold: %s\n", t == -2 ? "disconnected" : "held");
		return (0);
	}

	if (strcmp(cs, "stale") == 0 && argc > 6)
		return (stale(argv[5], argv[6]));
	if (strcmp(cs, "garbage") == 0) {
		(void)getrandom(m, send_room(), 0);
		post(IBV_WR_SEND, m, send_room(), 0, 0, 0);
	} else if (strcmp(cs, "truncated") == 0) {
		/* An OPEN record whose length runs past the message. */
		memset(m, 0, 16);
		m[0] = WIRE_OPEN;
		m[1] = 200;
		post(IBV_WR_SEND, m, 16, 0, 0, 0);
	} else if ((strcmp(cs, "unopened") == 0 ||
	    strcmp(cs, "beyond-credit") == 0) && argc > 5) {
		open_stream(argv[5], 0, &r);
		if (strcmp(cs, "unopened") == 0) {
			/* Into the ring it granted, but for another stream. */
			post(IBV_WR_RDMA_WRITE_WITH_IMM, ring, 16,
			    wire_imm_encode(r.peer_stream + 5, 16),
			    r.ring.addr, r.ring.rkey);
		} else {
			/*
			 * Whole rings, one after the other, never waiting for
			 * credit: once the target's buffers are full (it does
			 * not read), one of them is more than the free space.
			 */
			uint32_t len = r.ring.size < RING ? r.ring.size : RING;

			for (off = 0; off < 30; off++)
				post(IBV_WR_RDMA_WRITE_WITH_IMM, ring, len,
				    wire_imm_encode(r.peer_stream, len),
				    r.ring.addr, r.ring.rkey);
		}
	} else {
		die("unknown case");
	}
	/* Our work requests went out (a failure here is ours, not a pass). */
	for (int k = 0; k < 200; k++) {
		struct ibv_wc wc;

		if (ibv_poll_cq(cq, 1, &wc) > 0 && wc.opcode != IBV_WC_RECV) {
			if (wc.status != IBV_WC_SUCCESS)
				die(ibv_wc_status_str(wc.status));
			break;
		}
		usleep(10000);
	}
	/* The daemon must end the link. */
	while ((ev = next_event(LIMIT_MS, NULL, NULL)) >= 0 &&
	    ev != RDMA_CM_EVENT_DISCONNECTED)
		;
	printf("%s: %s\n", cs, ev == RDMA_CM_EVENT_DISCONNECTED ?
	    "disconnected" : "still connected");
	return (ev == RDMA_CM_EVENT_DISCONNECTED ? 0 : 1);
}
