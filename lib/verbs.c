/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/types.h>
#include <sys/mman.h>
#include <sys/queue.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "addr.h"
#include "budget.h"
#include "engine.h"
#include "hca.h"
#include "verbs.h"
#include "wire.h"

/* Completions polled per ibv_poll_cq; work requests per ibv_post_send. */
#define POLL_BATCH	32
#define POST_BATCH	32
/* Receive wr_ids carry this bit; send wr_ids are sequence numbers. */
#define RECV_TAG	(UINT64_C(1) << 63)

struct verbs_cm {
	struct rdma_event_channel *ch;
	/* Listeners' own channel: connect requests, which anyone can send,
	 * are gated there without touching any link (see verbs.h). */
	struct rdma_event_channel *lch;
	TAILQ_HEAD(, verbs_request) reqs;	/* let through, not yet taken */
	/*
	 * Memory counted against the cap (0: none), over all links: rings,
	 * registered or detached (a suspended stream's), pooled or in use,
	 * and the links' control buffers; of which the last two, apart.
	 * Charged (budget_take) before it is mapped or registered.  Atomic:
	 * links on other threads charge at once.
	 */
	uint64_t pinned, max_pinned;
	uint64_t control, detached;
	/* Links freed while accepting, waiting to disconnect (see below). */
	TAILQ_HEAD(, verbs_link) dying;
	/* Every link whose protection domain still exists. */
	TAILQ_HEAD(, verbs_link) links;
	/*
	 * A hold on every device's context (rdma_get_devices).  librdmacm
	 * keeps a device open until it lists the devices again and finds it
	 * gone, and the kernel cannot finish removing a device any process
	 * still has open; then it closes it with the last cm_id on it, which
	 * may be before a link's PD, CQ and MRs there are gone.  So we hold
	 * every device, list them again when they may have changed, and let
	 * a removed one go only once no link has anything on it (see
	 * verbs_devices_sync).
	 */
	struct ibv_context **held;
	/*
	 * Listing the devices is costly (sysfs, netlink: a socket and
	 * descriptors come and go), so it is done only when due: for a few
	 * ticks after /dev/infiniband changed (a device's node comes or goes
	 * before the kernel waits for its last user) or a cm_id reported its
	 * device removed, and until a removed device is let go.
	 */
	int sync_due;
	struct stat dev_dir;
	/* verbs_cm_moved's last look at /dev/infiniband. */
	struct stat moved_dir;
	/* Why the channels are not open (see verbs_cm_open); "" once they
	 * are. */
	char why[400];
};

/* Ticks to list the devices again after a sign that they changed. */
#define SYNC_TICKS 3

/* CM ids' context is a listener, a link or a request: the first member
 * says which. */
enum { KIND_LISTENER = 1, KIND_LINK = 2, KIND_REQUEST = 3 };

struct verbs_listener {
	int kind;
	struct verbs_cm *cm;
	struct rdma_cm_id *id;
	struct verbs_link_conf conf;
	verbs_gate_fn *gate;
	void *gate_arg;
};

/* A connect request the gate let through, on the listeners' channel. */
struct verbs_request {
	int kind;
	struct verbs_cm *cm;
	struct rdma_cm_id *id;
	struct verbs_link_conf conf;	/* its listener's */
	struct wire_hello h;
	uint8_t hello[WIRE_HELLO_LEN];	/* as sent */
	char peer[64];
	struct sockaddr_storage peer_sa;
	TAILQ_ENTRY(verbs_request) entry;
};

enum {
	L_RESOLVING,	/* active: resolving address and route */
	L_CONNECTING,	/* active: connect sent */
	L_INCOMING,	/* passive: waiting for verbs_accept/reject */
	L_ACCEPTING,	/* passive: accept sent */
	L_UP,
	L_DOWN
};

struct verbs_link {
	int kind;
	struct verbs_cm *cm;
	struct rdma_cm_id *id;
	struct verbs_link_conf conf;
	int state;
	int passive;
	void *user;

	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	int have_qp;
	uint8_t *ctrl_send;
	struct ibv_mr *ctrl_send_mr;
	uint8_t *recv_buf;
	struct ibv_mr *recv_mr;
	uint64_t ctrl_bytes;	/* both, as charged to cm->pinned */
	struct engine *e;
	struct wire_hello peer_hello;	/* passive: from the request */
	/* Both sides' connect private data, as sent (see verbs_link_hellos). */
	uint8_t hello_mine[WIRE_HELLO_LEN], hello_peer[WIRE_HELLO_LEN];
	int have_mine, have_peer;
	/* What each outstanding send WR was, by wr_id % sq_size: for errors. */
	struct engine_wr *posted;

	int nmems;		/* ring memory still registered (pooled too) */
	TAILQ_HEAD(, verbs_mem) pool;	/* freed rings kept, newest first */
	uint64_t pool_bytes;
	struct verbs_mem_stats ms;
	int freed;		/* verbs_link_free was called */
	int dying;		/* freed, its cm_id kept until it can disconnect */
	int dying_ticks;	/* verbs_cm_tick calls left before it goes */
	TAILQ_ENTRY(verbs_link) dentry;
	struct ibv_context *ctx;	/* where its PD is; NULL: none yet */
	TAILQ_ENTRY(verbs_link) lentry;	/* in cm->links */
	char peer[64];
	char device[32];
	struct hca_info hca;	/* with have_hca: read once it is up */
	int have_hca;
	/* With conf.sl_set: the cm_id that resolves the route whose path,
	 * with the SL, the link's id takes (see verbs_link_conf). */
	struct rdma_cm_id *probe;
};

struct verbs_mem {
	struct verbs_cm *cm;	/* charged to it from mapping to unmapping */
	struct verbs_link *link;
	uint8_t *buf;
	size_t size;
	struct ibv_mr *mr;
	int remote;
	int detached;		/* left its link's registration (suspended) */
	int idle;		/* pooled: trims since it was freed */
	TAILQ_ENTRY(verbs_mem) pentry;
};

static void verbs_transport_fail(struct verbs_link *, const char *);
static void verbs_dying_end(struct verbs_link *);
static void verbs_pool_drain(struct verbs_link *, int);
static int verbs_charge(struct verbs_link *, uint64_t, int);
static uint64_t verbs_pinned_now(const struct verbs_cm *);
static uint64_t verbs_max_now(const struct verbs_cm *);

static void
say(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/*
 * Registration of ${size} bytes of ${what} failed (errno): why, with the
 * likely cause when it is pinned memory running out.
 */
static void
verbs_reg_failed(char *err, size_t errlen, const char *device, const char *what,
    size_t size)
{
	int e = errno;

	say(err, errlen, "%s: cannot register %zu bytes of %s: %s%s", device,
	    size, what, strerror(e), e == ENOMEM || e == EPERM || e == EAGAIN ?
	    " (pinned memory: is RLIMIT_MEMLOCK, the unit's LimitMEMLOCK, "
	    "large enough?)" : "");
}

static int
verbs_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return (fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK));
}

static int
resolve(const char *host, const char *port, int passive,
    struct addrinfo **res, char *err, size_t errlen)
{
	struct addrinfo hints;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = passive ? AI_PASSIVE : 0;
	if ((rc = getaddrinfo(host, port, &hints, res)) != 0) {
		say(err, errlen, "cannot resolve %s:%s: %s", host ? host : "*",
		    port, gai_strerror(rc));
		return (-1);
	}
	return (0);
}

/* ---------------------------------------------------------------- cm */

static int verbs_devices_changed(struct verbs_cm *);

/* Where librdmacm opens the RDMA CM, and where rdma_ucm shows it is loaded. */
#define CM_NODE		"/dev/infiniband/rdma_cm"
#define CM_SYSFS	"/sys/class/misc/rdma_cm"

static const char *const rdma_names[VERBS_RDMA_N] = {
	[VERBS_RDMA_READY] = "ready",
	[VERBS_RDMA_NO_UCM] = "no-rdma-ucm",
	[VERBS_RDMA_NO_NODE] = "no-rdma-cm-node",
	[VERBS_RDMA_NO_DEVICE] = "no-device",
	[VERBS_RDMA_DENIED] = "denied",
	[VERBS_RDMA_FAILED] = "failed"
};

const char *
verbs_rdma_name(enum verbs_rdma r)
{

	return ((unsigned)r < VERBS_RDMA_N ? rdma_names[r] : "?");
}

struct verbs_cm *
verbs_cm_new(char *err, size_t errlen)
{
	struct verbs_cm *cm;

	if ((cm = calloc(1, sizeof(*cm))) == NULL) {
		say(err, errlen, "out of memory");
		return (NULL);
	}
	TAILQ_INIT(&cm->dying);
	TAILQ_INIT(&cm->links);
	TAILQ_INIT(&cm->reqs);
	snprintf(cm->why, sizeof(cm->why), "the RDMA CM is not open");
	return (cm);
}

/* Whether /sys/class/infiniband lists a device (one libibverbs may lack a
 * provider for, or ib_uverbs may not serve). */
static int
sysfs_devices(void)
{
	struct dirent *de;
	DIR *dir;
	int n = 0;

	if ((dir = opendir("/sys/class/infiniband")) == NULL)
		return (0);
	while (n == 0 && (de = readdir(dir)) != NULL)
		n = de->d_name[0] != '.';
	closedir(dir);
	return (n);
}

/*
 * Why the RDMA CM could not be opened (librdmacm failed with ${e}), and
 * what to do about it, into ${why}.  librdmacm opens CM_NODE only once
 * libibverbs lists a device, and says ENODEV before that whatever else
 * is missing; so what is there is looked at in the order it comes.  Its
 * first look asks the kernel over netlink about the RDMA CM, which loads
 * rdma_ucm then if it can: missing, it could not.
 */
static enum verbs_rdma
verbs_rdma_missing(int e, char *why, size_t len)
{
	struct ibv_device **list;
	struct stat st;
	int n = 0;

	if (stat(CM_NODE, &st) != 0 && stat(CM_SYSFS, &st) != 0) {
		say(why, len, "the RDMA CM is not there: rdma_ucm is not "
		    "loaded (modprobe rdma_ucm)");
		return (VERBS_RDMA_NO_UCM);
	}
	if ((list = ibv_get_device_list(&n)) != NULL)
		ibv_free_device_list(list);
	if (n == 0 && sysfs_devices()) {
		say(why, len, "no RDMA device libibverbs can use: rdma link "
		    "lists some, but ib_uverbs is not loaded (modprobe "
		    "ib_uverbs) or no provider in ibverbs-providers drives "
		    "them");
		return (VERBS_RDMA_NO_DEVICE);
	}
	if (n == 0) {
		say(why, len, "no RDMA device (rdma link lists them): load "
		    "the driver of an RDMA NIC, or add a Soft-RoCE device "
		    "on a network interface: rdma link add rxe0 type rxe "
		    "netdev IFACE");
		return (VERBS_RDMA_NO_DEVICE);
	}
	if (stat(CM_NODE, &st) != 0) {
		say(why, len, "rdma_ucm is loaded, but there is no %s here "
		    "(under systemd: the service started before "
		    "/dev/infiniband existed; restart it)", CM_NODE);
		return (VERBS_RDMA_NO_NODE);
	}
	if (e == EACCES || e == EPERM) {
		say(why, len, "cannot open %s: %s (its permissions, or the "
		    "service's DeviceAllow=)", CM_NODE, strerror(e));
		return (VERBS_RDMA_DENIED);
	}
	say(why, len, "cannot open the RDMA CM (%s): %s", CM_NODE,
	    strerror(e));
	return (VERBS_RDMA_FAILED);
}

enum verbs_rdma
verbs_cm_open(struct verbs_cm *cm, char *why, size_t whylen)
{
	enum verbs_rdma r;
	int e;

	if (cm->ch != NULL) {
		say(why, whylen, "%s", "");
		return (VERBS_RDMA_READY);
	}
	errno = 0;
	if ((cm->ch = rdma_create_event_channel()) == NULL ||
	    (cm->lch = rdma_create_event_channel()) == NULL ||
	    verbs_nonblock(cm->ch->fd) || verbs_nonblock(cm->lch->fd)) {
		e = errno;
		if (cm->lch != NULL)
			rdma_destroy_event_channel(cm->lch);
		if (cm->ch != NULL)
			rdma_destroy_event_channel(cm->ch);
		cm->ch = cm->lch = NULL;
		r = verbs_rdma_missing(e, cm->why, sizeof(cm->why));
		say(why, whylen, "%s", cm->why);
		return (r);
	}
	cm->why[0] = '\0';
	say(why, whylen, "%s", "");
	cm->held = rdma_get_devices(NULL);	/* none yet is fine */
	(void)verbs_devices_changed(cm);
	return (VERBS_RDMA_READY);
}

int
verbs_cm_is_open(const struct verbs_cm *cm)
{

	return (cm->ch != NULL);
}

int
verbs_cm_moved(struct verbs_cm *cm)
{
	struct stat st;

	if (stat("/dev/infiniband", &st) != 0)
		memset(&st, 0, sizeof(st));
	if (st.st_ino == cm->moved_dir.st_ino &&
	    st.st_mtim.tv_sec == cm->moved_dir.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == cm->moved_dir.st_mtim.tv_nsec &&
	    st.st_nlink == cm->moved_dir.st_nlink)
		return (0);
	cm->moved_dir = st;
	return (1);
}

void
verbs_cm_free(struct verbs_cm *cm)
{

	if (cm == NULL)
		return;
	while (!TAILQ_EMPTY(&cm->reqs))
		verbs_request_refuse(TAILQ_FIRST(&cm->reqs), WIRE_NOTE_REFUSED);
	while (!TAILQ_EMPTY(&cm->dying))
		verbs_dying_end(TAILQ_FIRST(&cm->dying));
	if (cm->held != NULL)
		rdma_free_devices(cm->held);
	if (cm->lch != NULL)
		rdma_destroy_event_channel(cm->lch);
	if (cm->ch != NULL)
		rdma_destroy_event_channel(cm->ch);
	free(cm);
}

int
verbs_cm_fd(const struct verbs_cm *cm)
{

	return (cm->ch != NULL ? cm->ch->fd : -1);
}

int
verbs_cm_listen_fd(const struct verbs_cm *cm)
{

	return (cm->lch != NULL ? cm->lch->fd : -1);
}

/* ---------------------------------------------------------------- links */

static struct verbs_link *
verbs_link_new(struct verbs_cm *cm, const struct verbs_link_conf *conf,
    void *user)
{
	struct verbs_link *l;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return (NULL);
	l->kind = KIND_LINK;
	l->cm = cm;
	l->conf = *conf;
	l->user = user;
	TAILQ_INIT(&l->pool);
	snprintf(l->peer, sizeof(l->peer), "?");
	snprintf(l->device, sizeof(l->device), "?");
	return (l);
}

/* Its protection domain and completion queue on ${l}'s device. */
static int
vl_cq(struct verbs_link *l, struct ibv_context *dev, char *err,
    size_t errlen)
{

	snprintf(l->device, sizeof(l->device), "%s",
	    ibv_get_device_name(dev->device));
	if ((l->pd = ibv_alloc_pd(dev)) == NULL) {
		say(err, errlen, "%s: cannot allocate a protection domain: %s",
		    l->device, strerror(errno));
		return (-1);
	}
	l->ctx = dev;
	TAILQ_INSERT_TAIL(&l->cm->links, l, lentry);
	if ((l->cc = ibv_create_comp_channel(dev)) == NULL ||
	    verbs_nonblock(l->cc->fd)) {
		say(err, errlen, "%s: cannot create a completion channel: %s",
		    l->device, strerror(errno));
		return (-1);
	}
	if ((l->cq = ibv_create_cq(dev,
	    (int)(l->conf.sq_size + l->conf.rq_size), l, l->cc, 0)) == NULL) {
		say(err, errlen, "%s: cannot create a completion queue of %u "
		    "entries: %s", l->device,
		    (unsigned)(l->conf.sq_size + l->conf.rq_size),
		    strerror(errno));
		return (-1);
	}
	if (ibv_req_notify_cq(l->cq, 0)) {
		say(err, errlen, "%s: ibv_req_notify_cq: %s", l->device,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/* Its RC queue pair, both queues on the one completion queue. */
static int
vl_qp(struct verbs_link *l, char *err, size_t errlen)
{
	struct ibv_qp_init_attr qa;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = l->cq;
	qa.recv_cq = l->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 0;
	qa.cap.max_send_wr = l->conf.sq_size;
	qa.cap.max_recv_wr = l->conf.rq_size;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = l->conf.inline_size;
	if (rdma_create_qp(l->id, l->pd, &qa)) {
		say(err, errlen, "%s: cannot create a queue pair (sq_size %u, "
		    "rq_size %u, inline_size %u): %s", l->device,
		    (unsigned)l->conf.sq_size, (unsigned)l->conf.rq_size,
		    (unsigned)l->conf.inline_size, strerror(errno));
		return (-1);
	}
	l->have_qp = 1;
	return (0);
}

/* Its control buffers, charged to the cap, then registered. */
static int
vl_buffers(struct verbs_link *l, char *err, size_t errlen)
{
	size_t sz;

	sz = (size_t)(l->conf.sq_size + l->conf.rq_size) * WIRE_MSG_SIZE;
	if (verbs_charge(l, sz, 1) != 0) {
		say(err, errlen, "max_memory: no room for the link's %zu bytes "
		    "of control buffers: %llu bytes of ring memory are "
		    "registered, the limit is %llu", sz,
		    (unsigned long long)verbs_pinned_now(l->cm),
		    (unsigned long long)verbs_max_now(l->cm));
		errno = ENOBUFS;
		return (-1);
	}
	l->ctrl_bytes = sz;
	__atomic_fetch_add(&l->cm->control, sz, __ATOMIC_RELAXED);
	if ((l->posted = calloc(l->conf.sq_size, sizeof(*l->posted))) ==
	    NULL) {
		say(err, errlen, "out of memory");
		return (-1);
	}
	sz = (size_t)l->conf.sq_size * WIRE_MSG_SIZE;
	if ((l->ctrl_send = calloc(1, sz)) == NULL ||
	    (l->ctrl_send_mr = ibv_reg_mr(l->pd, l->ctrl_send, sz, 0)) == NULL) {
		verbs_reg_failed(err, errlen, l->device, "send buffers", sz);
		return (-1);
	}
	sz = (size_t)l->conf.rq_size * WIRE_MSG_SIZE;
	if ((l->recv_buf = calloc(1, sz)) == NULL ||
	    (l->recv_mr = ibv_reg_mr(l->pd, l->recv_buf, sz,
	    IBV_ACCESS_LOCAL_WRITE)) == NULL) {
		verbs_reg_failed(err, errlen, l->device, "receive buffers", sz);
		return (-1);
	}
	return (0);
}

/* Its engine, over the control buffers, with every receive posted. */
static int
vl_engine(struct verbs_link *l, char *err, size_t errlen)
{
	struct engine_conf ec;
	const char *why;

	memset(&ec, 0, sizeof(ec));
	ec.sq_size = l->conf.sq_size;
	ec.rq_size = l->conf.rq_size;
	ec.inline_size = l->conf.inline_size;
	ec.signal_every = l->conf.signal_every;
	ec.max_streams = l->conf.max_streams;
	ec.ctrl_send = l->ctrl_send;
	ec.ctrl_send_addr = (uint64_t)(uintptr_t)l->ctrl_send;
	ec.ctrl_send_lkey = l->ctrl_send_mr->lkey;
	ec.resume = l->conf.resume;
	if ((l->e = engine_new(&ec, &why)) == NULL) {
		say(err, errlen, "%s", why);
		return (-1);
	}
	if (!l->passive && l->conf.auth != NULL)
		engine_set_auth(l->e, l->conf.auth);
	if (!l->passive && l->conf.seal != NULL)
		engine_set_seal(l->e, l->conf.seal);
	if (verbs_link_flush(l)) {
		say(err, errlen, "%s: cannot post receives: %s", l->device,
		    engine_error(l->e));
		return (-1);
	}
	return (0);
}

/*
 * Give the link its queues, buffers and engine on the device ${id} was
 * bound to, and post every receive: all before connect or accept.  A step
 * that fails stops it, leaving what the steps before made in the link:
 * verbs_link_free frees any part of it (see verbs.h).
 */
static int
verbs_link_setup(struct verbs_link *l, char *err, size_t errlen)
{
	uint8_t t = l->conf.ack_timeout ? l->conf.ack_timeout :
	    VERBS_ACK_TIMEOUT;

	if (l->id->verbs == NULL) {
		say(err, errlen, "no RDMA device for this address");
		return (-1);
	}
	if (vl_cq(l, l->id->verbs, err, errlen) || vl_qp(l, err, errlen) ||
	    vl_buffers(l, err, errlen) || vl_engine(l, err, errlen))
		return (-1);
	/* A dead peer must be noticed in bounded time (see verbs.h). */
	(void)rdma_set_option(l->id, RDMA_OPTION_ID,
	    RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof(t));
	return (0);
}

/*
 * Refuse a connect request with a refusal note, so that the peer knows it
 * was understood (and refused), not that its version is too new for us.
 */
static void
verbs_id_reject(struct rdma_cm_id *id, uint8_t why)
{
	uint8_t note[WIRE_NOTE_LEN];

	wire_note_encode(note, &(struct wire_note){ WIRE_VERSION, why });
	rdma_reject(id, note, sizeof(note));
}

static int
verbs_conn_param(struct verbs_link *l, struct rdma_conn_param *p)
{
	struct wire_hello h;

	/* Answer in the peer's version or older; connect capped as told. */
	if (l->passive)
		engine_version_cap(l->e, l->peer_hello.version);
	else if (l->conf.version_max != 0)
		engine_version_cap(l->e, l->conf.version_max);
	engine_hello(l->e, &h);
	/*
	 * Authentication is only as fresh as this nonce.  Early at boot the
	 * pool may not be ready: fail this attempt rather than block the
	 * loop or send a nonce that is not random.
	 */
	if (getrandom(h.nonce, sizeof(h.nonce), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(h.nonce))
		return (-1);
	wire_hello_encode(l->hello_mine, &h);
	l->have_mine = 1;
	memset(p, 0, sizeof(*p));
	p->private_data = l->hello_mine;
	p->private_data_len = WIRE_HELLO_LEN;
	/* No RDMA READ or atomics, in either direction. */
	p->responder_resources = 0;
	p->initiator_depth = 0;
	p->retry_count = l->conf.retry_count ? l->conf.retry_count :
	    VERBS_RETRY_COUNT;
	p->rnr_retry_count = VERBS_RNR_RETRY;
	return (0);
}

struct verbs_link *
verbs_connect(struct verbs_cm *cm, const struct sockaddr *dst,
    const struct sockaddr *src, const struct verbs_link_conf *conf,
    void *user, char *err, size_t errlen)
{
	struct verbs_link *l;

	if (cm->ch == NULL) {
		say(err, errlen, "no RDMA yet: %s", cm->why);
		errno = ENODEV;
		return (NULL);
	}
	if ((l = verbs_link_new(cm, conf, user)) == NULL) {
		say(err, errlen, "out of memory");
		return (NULL);
	}
	addr_text(dst, l->peer, sizeof(l->peer));
	if (rdma_create_id(cm->ch, &l->id, l, RDMA_PS_TCP)) {
		say(err, errlen, "rdma_create_id: %s", strerror(errno));
		l->id = NULL;
		verbs_link_free(l);
		return (NULL);
	}
	/* The route, resolved next, takes it (rdma_set_option(3)). */
	if (conf->tos_set && rdma_set_option(l->id, RDMA_OPTION_ID,
	    RDMA_OPTION_ID_TOS, &l->conf.tos, sizeof(l->conf.tos))) {
		say(err, errlen, "cannot set the traffic class %u: %s",
		    (unsigned)conf->tos, strerror(errno));
		verbs_link_free(l);
		return (NULL);
	}
	if (rdma_resolve_addr(l->id, (struct sockaddr *)(uintptr_t)src,
	    (struct sockaddr *)(uintptr_t)dst, VERBS_RESOLVE_MS)) {
		say(err, errlen, "cannot resolve an RDMA path to %s: %s",
		    l->peer, strerror(errno));
		verbs_link_free(l);
		return (NULL);
	}
	l->state = L_RESOLVING;
	return (l);
}

int
verbs_accept(struct verbs_link *l)
{
	struct rdma_conn_param p;

	if (l->state != L_INCOMING)
		return (-1);
	if (verbs_conn_param(l, &p)) {
		verbs_transport_fail(l, "no random numbers available yet");
		verbs_id_reject(l->id, WIRE_NOTE_REFUSED);
		l->state = L_DOWN;
		return (-1);
	}
	if (rdma_accept(l->id, &p)) {
		verbs_transport_fail(l, "rdma_accept failed");
		l->state = L_DOWN;
		return (-1);
	}
	/*
	 * The peer may send as soon as it sees our accept, possibly before
	 * our ESTABLISHED event: the engine must take completions from now.
	 */
	engine_connected(l->e, &l->peer_hello);
	l->state = L_ACCEPTING;
	return (0);
}

void
verbs_reject(struct verbs_link *l)
{

	if (l->state == L_INCOMING)
		verbs_id_reject(l->id, WIRE_NOTE_REFUSED);
	l->state = L_DOWN;
}

static void
verbs_link_destroy(struct verbs_link *l)
{

	if (l->pd != NULL)
		ibv_dealloc_pd(l->pd);
	if (l->ctx != NULL)
		TAILQ_REMOVE(&l->cm->links, l, lentry);
	free(l);
}

/* The cm_id of a dying link goes now; then the link, once its memory has. */
static void
verbs_dying_end(struct verbs_link *l)
{

	TAILQ_REMOVE(&l->cm->dying, l, dentry);
	rdma_destroy_id(l->id);
	l->id = NULL;
	l->dying = 0;
	if (l->nmems == 0)
		verbs_link_destroy(l);
}

void
verbs_link_free(struct verbs_link *l)
{

	if (l == NULL)
		return;
	if (l->probe != NULL) {
		rdma_destroy_id(l->probe);
		l->probe = NULL;
	}
	if (l->have_qp) {
		rdma_destroy_qp(l->id);
		l->have_qp = 0;
	}
	if (l->id != NULL && l->state == L_ACCEPTING) {
		/*
		 * Accepted, but our CM has not seen the peer's RTU: destroying
		 * the id now would only send a REJ, which a peer already
		 * established ignores, so it would never learn the link ended.
		 * Keep the id until ESTABLISHED (then disconnect) or some
		 * other end, or VERBS_TEARDOWN_TICKS of verbs_cm_tick.
		 */
		l->dying = 1;
		l->dying_ticks = VERBS_TEARDOWN_TICKS;
		TAILQ_INSERT_TAIL(&l->cm->dying, l, dentry);
	} else if (l->id != NULL) {
		if (l->state == L_UP || l->state == L_CONNECTING)
			rdma_disconnect(l->id);
		rdma_destroy_id(l->id);
		l->id = NULL;
	}
	if (l->cq != NULL)
		ibv_destroy_cq(l->cq);
	if (l->cc != NULL)
		ibv_destroy_comp_channel(l->cc);
	if (l->ctrl_send_mr != NULL)
		ibv_dereg_mr(l->ctrl_send_mr);
	if (l->recv_mr != NULL)
		ibv_dereg_mr(l->recv_mr);
	free(l->ctrl_send);
	free(l->posted);
	free(l->recv_buf);
	if (l->ctrl_bytes != 0) {
		budget_give(&l->cm->pinned, l->ctrl_bytes);
		__atomic_fetch_sub(&l->cm->control, l->ctrl_bytes,
		    __ATOMIC_RELAXED);
		l->ctrl_bytes = 0;
	}
	engine_free(l->e);
	l->cq = NULL;
	l->cc = NULL;
	l->ctrl_send_mr = l->recv_mr = NULL;
	l->ctrl_send = l->recv_buf = NULL;
	l->posted = NULL;
	l->e = NULL;
	l->freed = 1;
	/*
	 * Pooled rings go now; rings streams still hold keep the protection
	 * domain alive (the last one's verbs_mem_free destroys the link).
	 */
	l->nmems++;
	verbs_pool_drain(l, 0);
	if (--l->nmems == 0 && !l->dying)
		verbs_link_destroy(l);
}

/*
 * Did /dev/infiniband change since the last look (a device's node came or
 * went)?  One stat a tick, no descriptor.  A missing directory is a state
 * like any other.
 */
static int
verbs_devices_changed(struct verbs_cm *cm)
{
	struct stat st;

	if (stat("/dev/infiniband", &st) != 0)
		memset(&st, 0, sizeof(st));
	if (st.st_ino == cm->dev_dir.st_ino &&
	    st.st_mtim.tv_sec == cm->dev_dir.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == cm->dev_dir.st_mtim.tv_nsec &&
	    st.st_nlink == cm->dev_dir.st_nlink)
		return (0);
	cm->dev_dir = st;
	return (1);
}

/* Is ${ctx} in the NULL-terminated ${list}? */
static int
listed(struct ibv_context **list, const struct ibv_context *ctx)
{

	for (; *list != NULL; list++)
		if (*list == ctx)
			return (1);
	return (0);
}

/*
 * List the devices again (librdmacm marks those removed) and hold the new
 * list instead of the old one, unless a link still has something on a
 * device that is gone: then it returns 0 and the next tick tries again.
 * Letting the old list go closes the removed devices nobody else holds.
 */
static int
verbs_devices_sync(struct verbs_cm *cm)
{
	struct ibv_context **now, **h;
	struct verbs_link *l;

	if ((now = rdma_get_devices(NULL)) == NULL)
		return (0);
	for (h = cm->held; h != NULL && *h != NULL; h++) {
		if (listed(now, *h))
			continue;
		TAILQ_FOREACH(l, &cm->links, lentry)
			if (l->ctx == *h) {
				rdma_free_devices(now);
				return (0);
			}
	}
	if (cm->held != NULL)
		rdma_free_devices(cm->held);
	cm->held = now;
	return (1);
}

int
verbs_cm_tick_due(struct verbs_cm *cm)
{

	if (cm->ch == NULL)
		return (0);
	if (verbs_devices_changed(cm))
		cm->sync_due = SYNC_TICKS;
	return (!TAILQ_EMPTY(&cm->dying) || cm->sync_due > 0);
}

void
verbs_cm_tick(struct verbs_cm *cm)
{
	struct verbs_link *l, *next;

	if (cm->ch == NULL)
		return;
	for (l = TAILQ_FIRST(&cm->dying); l != NULL; l = next) {
		next = TAILQ_NEXT(l, dentry);
		if (--l->dying_ticks <= 0)
			verbs_dying_end(l);
	}
	if (verbs_devices_changed(cm))
		cm->sync_due = SYNC_TICKS;
	if (cm->sync_due > 0 && verbs_devices_sync(cm))
		cm->sync_due--;
}

void
verbs_link_stop(struct verbs_link *l)
{
	struct ibv_qp_attr a;

	if (l == NULL || !l->have_qp || l->id == NULL || l->id->qp == NULL)
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_ERR;
	(void)ibv_modify_qp(l->id->qp, &a, IBV_QP_STATE);
}

/*
 * The transport failed: the queue pair stops before the engine hears of
 * it, since a sealed link's engine then gives kept streams their
 * plaintext back in the very ring memory a WRITE still queued (or
 * retransmitted) would read.
 */
static void
verbs_transport_fail(struct verbs_link *l, const char *why)
{

	verbs_link_stop(l);
	engine_fail(l->e, ENGINE_ERR_TRANSPORT, why);
}

int
verbs_link_fd(const struct verbs_link *l)
{

	return (l->cc != NULL ? l->cc->fd : -1);
}

struct engine *
verbs_link_engine(const struct verbs_link *l)
{

	return (l->e);
}

void *
verbs_link_user(const struct verbs_link *l)
{

	return (l->user);
}

void
verbs_link_set_user(struct verbs_link *l, void *user)
{

	l->user = user;
}

int
verbs_link_hellos(const struct verbs_link *l, uint8_t out[2 * WIRE_HELLO_LEN])
{

	if (!l->have_mine || !l->have_peer)
		return (-1);
	memcpy(out, l->passive ? l->hello_peer : l->hello_mine,
	    WIRE_HELLO_LEN);
	memcpy(out + WIRE_HELLO_LEN, l->passive ? l->hello_mine :
	    l->hello_peer, WIRE_HELLO_LEN);
	return (0);
}

const char *
verbs_link_peer(const struct verbs_link *l)
{

	return (l->peer);
}

const char *
verbs_link_device(const struct verbs_link *l)
{

	return (l->device);
}

const struct hca_info *
verbs_link_hca(const struct verbs_link *l)
{

	return (l->have_hca ? &l->hca : NULL);
}

/* ---------------------------------------------------------------- data path */

static int
post_recvs(struct verbs_link *l)
{
	struct ibv_recv_wr wr[POST_BATCH], *bad;
	struct ibv_sge sge[POST_BATCH];
	uint32_t slots[POST_BATCH];
	int n, k, rc;

	while ((n = engine_take_recvs(l->e, slots, POST_BATCH)) > 0) {
		for (k = 0; k < n; k++) {
			sge[k].addr = (uint64_t)(uintptr_t)(l->recv_buf +
			    (size_t)slots[k] * WIRE_MSG_SIZE);
			sge[k].length = WIRE_MSG_SIZE;
			sge[k].lkey = l->recv_mr->lkey;
			wr[k].wr_id = RECV_TAG | slots[k];
			wr[k].sg_list = &sge[k];
			wr[k].num_sge = 1;
			wr[k].next = k + 1 < n ? &wr[k + 1] : NULL;
		}
		if ((rc = ibv_post_recv(l->id->qp, wr, &bad)) != 0) {
			char why[96];

			snprintf(why, sizeof(why), "ibv_post_recv: %s",
			    strerror(rc));
			verbs_transport_fail(l, why);
			return (-1);
		}
	}
	return (0);
}

static int
post_sends(struct verbs_link *l)
{
	struct engine_wr ew[POST_BATCH];
	struct ibv_send_wr wr[POST_BATCH], *bad;
	struct ibv_sge sge[POST_BATCH];
	int n, k, rc;

	do {
		if ((n = engine_take_wrs(l->e, ew, POST_BATCH)) == 0)
			break;
		for (k = 0; k < n; k++) {
			memset(&wr[k], 0, sizeof(wr[k]));
			sge[k].addr = ew[k].local_addr;
			sge[k].length = ew[k].len;
			sge[k].lkey = ew[k].lkey;
			wr[k].wr_id = ew[k].wr_id;
			wr[k].sg_list = &sge[k];
			wr[k].num_sge = 1;
			switch (ew[k].op) {
			case ENGINE_WR_WRITE_IMM:
			case ENGINE_WR_WRITE:
				wr[k].opcode = ew[k].op == ENGINE_WR_WRITE ?
				    IBV_WR_RDMA_WRITE :
				    IBV_WR_RDMA_WRITE_WITH_IMM;
				wr[k].imm_data = htonl(ew[k].imm);
				wr[k].wr.rdma.remote_addr = ew[k].remote_addr;
				wr[k].wr.rdma.rkey = ew[k].rkey;
				break;
			case ENGINE_WR_SEND_IMM:
				wr[k].opcode = IBV_WR_SEND_WITH_IMM;
				wr[k].imm_data = htonl(ew[k].imm);
				break;
			default:
				wr[k].opcode = IBV_WR_SEND;
				break;
			}
			if (ew[k].signaled)
				wr[k].send_flags |= IBV_SEND_SIGNALED;
			if (ew[k].inlined)
				wr[k].send_flags |= IBV_SEND_INLINE;
			l->posted[ew[k].wr_id % l->conf.sq_size] = ew[k];
			wr[k].next = k + 1 < n ? &wr[k + 1] : NULL;
		}
		/* One doorbell for the whole chain. */
		if ((rc = ibv_post_send(l->id->qp, wr, &bad)) != 0) {
			char why[96];

			snprintf(why, sizeof(why), "ibv_post_send: %s",
			    strerror(rc));
			verbs_transport_fail(l, why);
			return (-1);
		}
	} while (n == POST_BATCH);
	return (0);
}

/*
 * The engine failed: no work request may run from now on, before any
 * RELEASED event lets the embedder free ring memory.  Returns -1.
 */
static int
failed(struct verbs_link *l)
{

	verbs_link_stop(l);
	return (-1);
}

int
verbs_link_flush(struct verbs_link *l)
{

	if (l->e == NULL || engine_error(l->e) != NULL)
		return (failed(l));
	/* Receives first: credit updates in the sends may count them. */
	if (post_recvs(l) || post_sends(l))
		return (failed(l));
	return (0);
}

/* Say which work request failed, so a bad one can be told from the fabric. */
static void
wc_failed(struct verbs_link *l, const struct ibv_wc *wc)
{
	const struct engine_wr *w;
	char why[256];
	int n;

	n = snprintf(why, sizeof(why), "work request failed: %s",
	    ibv_wc_status_str(wc->status));
	/* An error completion's opcode is undefined; its wr_id is not. */
	if (wc->status == IBV_WC_WR_FLUSH_ERR || (wc->wr_id & RECV_TAG) ||
	    (w = &l->posted[wc->wr_id % l->conf.sq_size])->wr_id !=
	    wc->wr_id || w->len == 0 || n < 0 || (size_t)n >= sizeof(why)) {
		verbs_transport_fail(l, why);
		return;
	}
	if (w->op == ENGINE_WR_WRITE_IMM)
		snprintf(why + n, sizeof(why) - (size_t)n, " (WRITE_IMM #%llu "
		    "of %u bytes to 0x%llx rkey 0x%x imm 0x%08x, vendor error "
		    "0x%x)", (unsigned long long)w->wr_id, (unsigned)w->len,
		    (unsigned long long)w->remote_addr, (unsigned)w->rkey,
		    (unsigned)w->imm, (unsigned)wc->vendor_err);
	else
		snprintf(why + n, sizeof(why) - (size_t)n, " (SEND #%llu of "
		    "%u bytes, vendor error 0x%x)", (unsigned long long)w->wr_id,
		    (unsigned)w->len, (unsigned)wc->vendor_err);
	verbs_transport_fail(l, why);
}

static int
handle_wc(struct verbs_link *l, const struct ibv_wc *wc)
{
	uint64_t slot;
	char why[128];

	if (wc->status != IBV_WC_SUCCESS) {
		/* After the first error the rest are flushes: one message. */
		wc_failed(l, wc);
		return (-1);
	}
	switch (wc->opcode) {
	case IBV_WC_RECV:
		slot = wc->wr_id & ~RECV_TAG;
		if (slot >= l->conf.rq_size)
			break;		/* the engine reports it */
		/* A sealed WRITE's tag comes as a SEND WITH IMMEDIATE. */
		if (wc->wc_flags & IBV_WC_WITH_IMM)
			return (engine_on_recv_tag(l->e, (uint32_t)slot,
			    ntohl(wc->imm_data), l->recv_buf +
			    (size_t)slot * WIRE_MSG_SIZE, wc->byte_len));
		return (engine_on_recv(l->e, (uint32_t)slot,
		    l->recv_buf + (size_t)slot * WIRE_MSG_SIZE,
		    wc->byte_len));
	case IBV_WC_RECV_RDMA_WITH_IMM:
		slot = wc->wr_id & ~RECV_TAG;
		return (engine_on_recv_imm(l->e, slot > UINT32_MAX ?
		    UINT32_MAX : (uint32_t)slot, ntohl(wc->imm_data),
		    wc->byte_len));
	case IBV_WC_SEND:
	case IBV_WC_RDMA_WRITE:
		return (engine_on_send_done(l->e, wc->wr_id));
	default:
		break;
	}
	snprintf(why, sizeof(why), "unexpected completion opcode %d",
	    (int)wc->opcode);
	verbs_transport_fail(l, why);
	return (-1);
}

static int
drain_cq(struct verbs_link *l)
{
	struct ibv_wc wc[POLL_BATCH];
	int n, k;

	do {
		if ((n = ibv_poll_cq(l->cq, POLL_BATCH, wc)) < 0) {
			verbs_transport_fail(l, "ibv_poll_cq failed");
			return (-1);
		}
		for (k = 0; k < n; k++)
			if (handle_wc(l, &wc[k]))
				return (-1);
	} while (n == POLL_BATCH);
	return (0);
}

int
verbs_link_poll(struct verbs_link *l)
{
	struct ibv_cq *cq;
	void *ctx;

	if (l->e == NULL || engine_error(l->e) != NULL)
		return (failed(l));
	/*
	 * One arm raises at most one event, and the CQ is re-armed only
	 * below: one read takes it (a second would only say EAGAIN).
	 */
	if (ibv_get_cq_event(l->cc, &cq, &ctx) == 0)
		ibv_ack_cq_events(cq, 1);
	if (drain_cq(l))
		return (failed(l));
	if (ibv_req_notify_cq(l->cq, 0)) {
		verbs_transport_fail(l, "ibv_req_notify_cq failed");
		return (failed(l));
	}
	/* A completion that landed before the re-arm raised no event. */
	if (drain_cq(l))
		return (failed(l));
	return (0);
}

/* ---------------------------------------------------------------- memory */

/*
 * Ring memory leaves its link's registration (its charge stays with the
 * channel); the link goes with its last ring.
 */
static void
mem_unlink(struct verbs_mem *m)
{
	struct verbs_link *l = m->link;

	if (m->mr != NULL)
		ibv_dereg_mr(m->mr);
	m->mr = NULL;
	m->link = NULL;
	if (l == NULL)
		return;
	l->ms.pinned -= m->size;
	if (--l->nmems == 0 && l->freed && !l->dying)
		verbs_link_destroy(l);
}

/* Ring memory registered as ${mr} joins link ${l} (mem_unlink's twin). */
static void
mem_link(struct verbs_mem *m, struct verbs_link *l, struct ibv_mr *mr)
{

	m->mr = mr;
	m->link = l;
	l->nmems++;
	l->ms.pinned += m->size;
	l->ms.registered++;
	if (m->detached) {
		m->detached = 0;
		__atomic_fetch_sub(&m->cm->detached, m->size,
		    __ATOMIC_RELAXED);
	}
}

/* The access a ring's registration gives: remote WRITE for receive rings. */
static int
ring_access(int remote_write)
{

	return (remote_write ?
	    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE : 0);
}

/* Free ring memory for good, and its charge. */
static void
mem_release(struct verbs_mem *m)
{

	mem_unlink(m);
	if (m->detached)
		__atomic_fetch_sub(&m->cm->detached, m->size,
		    __ATOMIC_RELAXED);
	if (m->buf != NULL)
		munmap(m->buf, m->size);
	budget_give(&m->cm->pinned, m->size);
	free(m);
}

static void
pool_take(struct verbs_link *l, struct verbs_mem *m)
{

	TAILQ_REMOVE(&l->pool, m, pentry);
	l->pool_bytes -= m->size;
}

/* Empty the pool (the link is going, or trims its idle rings). */
static void
verbs_pool_drain(struct verbs_link *l, int only_stale)
{
	struct verbs_mem *m, *next;

	for (m = TAILQ_FIRST(&l->pool); m != NULL; m = next) {
		next = TAILQ_NEXT(m, pentry);
		if (only_stale && ++m->idle < VERBS_POOL_IDLE_TRIMS)
			continue;
		pool_take(l, m);
		mem_release(m);
	}
}

/* Memory counted against the cap now, and the cap. */
static uint64_t
verbs_pinned_now(const struct verbs_cm *cm)
{

	return (budget_now(&cm->pinned));
}

static uint64_t
verbs_max_now(const struct verbs_cm *cm)
{

	return (__atomic_load_n(&cm->max_pinned, __ATOMIC_RELAXED));
}

/*
 * Charge ${size} bytes to the cap, before they are mapped or registered:
 * 0, or -1 when it has no room.  Pooled rings go first to make room, the
 * link's own, then (unless ${own_only}: other links may be in use by
 * other threads) every link's: idle rings must not refuse a stream.
 */
static int
verbs_charge(struct verbs_link *l, uint64_t size, int own_only)
{
	struct verbs_cm *cm = l->cm;
	struct verbs_link *o;

	if (budget_take(&cm->pinned, verbs_max_now(cm), size) == 0)
		return (0);
	verbs_pool_drain(l, 0);
	if (budget_take(&cm->pinned, verbs_max_now(cm), size) == 0)
		return (0);
	if (own_only)
		return (-1);
	TAILQ_FOREACH(o, &cm->links, lentry) {
		verbs_pool_drain(o, 0);
		if (budget_take(&cm->pinned, verbs_max_now(cm), size) == 0)
			return (0);
	}
	return (-1);
}

/* A ring of ${size} bytes from ${l}'s pool, or NULL when it has none. */
static struct verbs_mem *
pool_get(struct verbs_link *l, uint32_t size, int remote_write)
{
	struct verbs_mem *m;

	TAILQ_FOREACH(m, &l->pool, pentry) {
		if (m->size == size && m->remote == remote_write) {
			pool_take(l, m);
			l->ms.reused++;
			/*
			 * The peer places its writes where it likes and the
			 * cursors only trust it: a write put elsewhere would
			 * let the new stream deliver what its last tenant
			 * left here.  A send ring needs nothing: only bytes
			 * its own stream put in are ever written out.
			 */
			if (remote_write)
				memset(m->buf, 0, m->size);
			return (m);
		}
	}
	return (NULL);
}

/*
 * Map and register a new ring of ${size} bytes, already charged: on
 * failure mem_release gives up whatever part of it exists, the charge
 * too.
 */
static struct verbs_mem *
mem_map(struct verbs_link *l, uint32_t size, int remote_write, char *err,
    size_t errlen)
{
	struct verbs_mem *m;
	struct ibv_mr *mr;

	if ((m = calloc(1, sizeof(*m))) == NULL) {
		budget_give(&l->cm->pinned, size);
		say(err, errlen, "out of memory for a %u-byte ring",
		    (unsigned)size);
		return (NULL);
	}
	m->cm = l->cm;
	m->size = size;
	m->remote = remote_write;
	m->buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->buf == MAP_FAILED) {
		m->buf = NULL;
		say(err, errlen, "out of memory for a %u-byte ring",
		    (unsigned)size);
		mem_release(m);
		return (NULL);
	}
	/* Tenants' bytes stay out of core dumps (and a ring can be big). */
	(void)madvise(m->buf, size, MADV_DONTDUMP);
	if ((mr = ibv_reg_mr(l->pd, m->buf, size, ring_access(remote_write)))
	    == NULL) {
		verbs_reg_failed(err, errlen, l->device, "ring memory", size);
		mem_release(m);
		return (NULL);
	}
	mem_link(m, l, mr);
	return (m);
}

struct verbs_mem *
verbs_mem_new(struct verbs_link *l, uint32_t size, int flags,
    char *err, size_t errlen)
{
	int remote_write = (flags & VERBS_MEM_REMOTE) != 0;
	struct verbs_mem *m;

	if (l->pd == NULL || l->freed) {
		say(err, errlen, "link has no protection domain");
		return (NULL);
	}
	if ((m = pool_get(l, size, remote_write)) != NULL)
		return (m);
	if (verbs_charge(l, size, (flags & VERBS_MEM_OWNPOOL) != 0) != 0) {
		say(err, errlen, "max_memory: %llu bytes of ring memory are "
		    "registered, the limit is %llu",
		    (unsigned long long)verbs_pinned_now(l->cm),
		    (unsigned long long)verbs_max_now(l->cm));
		errno = ENOBUFS;
		return (NULL);
	}
	return (mem_map(l, size, remote_write, err, errlen));
}

void
verbs_mem_free(struct verbs_mem *m)
{
	struct verbs_link *l;

	if (m == NULL)
		return;
	l = m->link;
	if (l == NULL || l->freed ||
	    l->pool_bytes + m->size > l->conf.pool_bytes) {
		mem_release(m);
		return;
	}
	m->idle = 0;
	TAILQ_INSERT_HEAD(&l->pool, m, pentry);
	l->pool_bytes += m->size;
}

void
verbs_mem_detach(struct verbs_mem *m)
{

	if (m == NULL || m->link == NULL)
		return;
	mem_unlink(m);
	m->detached = 1;
	__atomic_fetch_add(&m->cm->detached, m->size, __ATOMIC_RELAXED);
}

int
verbs_mem_move(struct verbs_mem *m, struct verbs_link *l, char *err,
    size_t errlen)
{
	struct ibv_mr *mr;

	if (m->link == l)
		return (0);
	if (l->pd == NULL || l->freed) {
		say(err, errlen, "link has no protection domain");
		return (-1);
	}
	/* The old registration goes first: its rkey must be dead at once. */
	mem_unlink(m);
	if ((mr = ibv_reg_mr(l->pd, m->buf, m->size, ring_access(m->remote)))
	    == NULL) {
		verbs_reg_failed(err, errlen, l->device, "ring memory again",
		    m->size);
		return (-1);
	}
	mem_link(m, l, mr);
	return (0);
}

struct engine *
verbs_link_take_engine(struct verbs_link *l)
{
	struct engine *e = l->e;

	l->e = NULL;
	return (e);
}

void
verbs_link_pool_trim(struct verbs_link *l)
{

	verbs_pool_drain(l, 1);
}

void
verbs_link_mem_stats(const struct verbs_link *l, struct verbs_mem_stats *ms)
{

	*ms = l->ms;
	ms->pooled = l->pool_bytes;
	ms->control = l->ctrl_bytes;
}

uint8_t *
verbs_mem_buf(const struct verbs_mem *m)
{

	return (m->buf);
}

void
verbs_mem_ring(const struct verbs_mem *m, struct engine_ring *ring)
{

	ring->addr = (uint64_t)(uintptr_t)m->buf;
	ring->size = (uint32_t)m->size;
	ring->key = m->remote ? m->mr->rkey : m->mr->lkey;
	ring->mem = (void *)(uintptr_t)m;
}

/* ---------------------------------------------------------------- listeners */

/* Listener ${ls} on ${sa} (${where}, for messages): 0, or -1 and why. */
static int
listener_open(struct verbs_listener *ls, struct sockaddr *sa,
    const char *where, char *err, size_t errlen)
{
	int e;

	if (rdma_create_id(ls->cm->lch, &ls->id, ls, RDMA_PS_TCP)) {
		say(err, errlen, "rdma_create_id: %s", strerror(errno));
		ls->id = NULL;
		return (-1);
	}
	if (rdma_bind_addr(ls->id, sa)) {
		e = errno;
		if (e == ENODEV)
			say(err, errlen, "cannot listen for RDMA links on %s: "
			    "no RDMA device has that address (rdma link lists "
			    "the devices and their network interfaces; a "
			    "Soft-RoCE one: rdma link add rxe0 type rxe netdev "
			    "IFACE)", where);
		/* The RDMA CM guards its ports below 1024 as TCP does. */
		else if (e == EACCES)
			say(err, errlen, "cannot listen for RDMA links on %s: "
			    "%s (a port below 1024 needs CAP_NET_BIND_SERVICE: "
			    "under systemd, see \"Ports below 1024\" in "
			    "rstreamd(8))", where, strerror(e));
		else
			say(err, errlen, "cannot listen for RDMA links on %s: "
			    "%s (is there an RDMA device with that address?)",
			    where, strerror(e));
		errno = e;
		return (-1);
	}
	if (rdma_listen(ls->id, 64)) {
		say(err, errlen, "rdma_listen on %s: %s", where,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

struct verbs_listener *
verbs_listen(struct verbs_cm *cm, const char *host, const char *port,
    const struct verbs_link_conf *conf, void *user, char *err, size_t errlen)
{
	struct verbs_listener *ls;
	struct addrinfo *ai;
	char where[80];
	int e = ENOMEM;

	(void)user;
	if (cm->lch == NULL) {
		say(err, errlen, "no RDMA yet: %s", cm->why);
		errno = ENODEV;
		return (NULL);
	}
	if (resolve(host, port, 1, &ai, err, errlen)) {
		errno = EINVAL;
		return (NULL);
	}
	addr_text(ai->ai_addr, where, sizeof(where));
	if ((ls = calloc(1, sizeof(*ls))) == NULL) {
		say(err, errlen, "out of memory");
	} else {
		ls->kind = KIND_LISTENER;
		ls->cm = cm;
		ls->conf = *conf;
		if (listener_open(ls, ai->ai_addr, where, err, errlen) != 0) {
			e = errno;
			verbs_listener_free(ls);
			ls = NULL;
		}
	}
	freeaddrinfo(ai);
	if (ls == NULL)
		errno = e;
	return (ls);
}

void
verbs_listener_free(struct verbs_listener *ls)
{

	if (ls == NULL)
		return;
	if (ls->id != NULL)
		rdma_destroy_id(ls->id);
	free(ls);
}

void
verbs_listener_set_conf(struct verbs_listener *ls,
    const struct verbs_link_conf *conf)
{

	ls->conf = *conf;
}

void
verbs_listener_set_gate(struct verbs_listener *ls, verbs_gate_fn *gate,
    void *arg)
{

	ls->gate = gate;
	ls->gate_arg = arg;
}

/* ---------------------------------------------------------------- events */

static void
vl_down(struct verbs_link *l, struct verbs_ev *ev, const char *why)
{

	if (l->e != NULL)
		verbs_transport_fail(l, why);
	l->state = L_DOWN;
	ev->type = VERBS_EV_DOWN;
	ev->link = l;
	snprintf(ev->peer, sizeof(ev->peer), "%s", l->peer);
	snprintf(ev->why, sizeof(ev->why), "%s", why);
}

static const char *
reject_text(int status)
{

	/* IB CM reject reasons that RDMA CM reports for RoCE and IB. */
	switch (status) {
	case 8:
		return ("connection refused: nothing listening at that "
		    "address and port");
	case 28:
		return ("connection rejected by the peer");
	default:
		return ("connection rejected");
	}
}

/* Reject a connect request with a note saying ${why}, and let it go. */
static void
request_end(struct rdma_cm_id *id, uint8_t why)
{

	verbs_id_reject(id, why);
	rdma_destroy_id(id);
}

/* A connect request: through the gate, or turned away at once. */
static void
on_request(struct verbs_listener *ls, struct rdma_cm_event *cme)
{
	const struct sockaddr *psa = rdma_get_peer_addr(cme->id);
	struct verbs_request *r;
	struct wire_hello h;
	uint8_t why = WIRE_NOTE_REFUSED;
	char peer[64];
	int werr;

	addr_text(psa, peer, sizeof(peer));
	werr = wire_hello_decode(cme->param.conn.private_data,
	    cme->param.conn.private_data_len, &h);
	/* Limits and allow lists cost a peer nothing to hit: check first. */
	if ((ls->gate != NULL && ls->gate(ls->gate_arg, psa, peer,
	    werr == WIRE_OK ? &h : NULL, werr == WIRE_OK ? NULL :
	    wire_strerror(werr), &why) != 0) || werr != WIRE_OK ||
	    (r = calloc(1, sizeof(*r))) == NULL) {
		request_end(cme->id, why);
		return;
	}
	r->kind = KIND_REQUEST;
	r->cm = ls->cm;
	r->id = cme->id;
	r->conf = ls->conf;
	r->h = h;
	memcpy(r->hello, cme->param.conn.private_data, WIRE_HELLO_LEN);
	memcpy(r->peer, peer, sizeof(r->peer));
	if (psa != NULL && (psa->sa_family == AF_INET ||
	    psa->sa_family == AF_INET6))
		memcpy(&r->peer_sa, psa, psa->sa_family == AF_INET ?
		    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
	r->id->context = r;
	TAILQ_INSERT_TAIL(&ls->cm->reqs, r, entry);
}

static void
request_free(struct verbs_request *r)
{

	TAILQ_REMOVE(&r->cm->reqs, r, entry);
	free(r);
}

int
verbs_cm_handle_listen(struct verbs_cm *cm)
{
	struct rdma_cm_event *cme;
	struct verbs_request *r = NULL;

	if (rdma_get_cm_event(cm->lch, &cme)) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return (0);
		return (-1);
	}
	if (cme->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		on_request(cme->listen_id->context, cme);
	else if (cme->id->context != NULL &&
	    *(const int *)cme->id->context == KIND_REQUEST)
		r = cme->id->context;	/* the peer gave up on it */
	/* A listener's device gone: the devices are listed again. */
	if (cme->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		cm->sync_due = SYNC_TICKS;
	rdma_ack_cm_event(cme);
	/* Only once the event is acked: destroying waits for that. */
	if (r != NULL) {
		rdma_destroy_id(r->id);
		request_free(r);
	}
	return (1);
}

struct verbs_request *
verbs_cm_request(const struct verbs_cm *cm)
{

	return (TAILQ_FIRST(&cm->reqs));
}

const struct sockaddr *
verbs_request_peer(const struct verbs_request *r, const char **text,
    int *auth)
{

	*text = r->peer;
	*auth = (r->h.flags & (WIRE_HELLO_AUTH | WIRE_HELLO_IDENTITY)) != 0;
	return (r->peer_sa.ss_family != 0 ?
	    (const struct sockaddr *)&r->peer_sa : NULL);
}

void
verbs_request_refuse(struct verbs_request *r, uint8_t why)
{

	request_end(r->id, why);
	request_free(r);
}

void
verbs_request_take(struct verbs_request *r, struct verbs_ev *ev)
{
	struct verbs_cm *cm = r->cm;
	struct verbs_link *l;
	char err[200];

	memset(ev, 0, sizeof(*ev));
	memcpy(ev->peer, r->peer, sizeof(ev->peer));
	ev->peer_sa = r->peer_sa;
	ev->type = VERBS_EV_REJECTED;
	/* From now on its events come with the links'. */
	if (rdma_migrate_id(r->id, cm->ch)) {
		snprintf(ev->why, sizeof(ev->why), "rdma_migrate_id: %s",
		    strerror(errno));
		verbs_request_refuse(r, WIRE_NOTE_REFUSED);
		return;
	}
	if ((l = verbs_link_new(cm, &r->conf, NULL)) == NULL) {
		snprintf(ev->why, sizeof(ev->why), "out of memory");
		verbs_request_refuse(r, WIRE_NOTE_REFUSED);
		return;
	}
	l->id = r->id;
	l->id->context = l;
	l->passive = 1;
	snprintf(l->peer, sizeof(l->peer), "%s", r->peer);
	l->peer_hello = r->h;
	memcpy(l->hello_peer, r->hello, WIRE_HELLO_LEN);
	l->have_peer = 1;
	ev->peer_auth = (r->h.flags & WIRE_HELLO_AUTH) != 0;
	ev->peer_ident = (r->h.flags & WIRE_HELLO_IDENTITY) != 0;
	request_free(r);
	if (verbs_link_setup(l, err, sizeof(err))) {
		verbs_id_reject(l->id, WIRE_NOTE_REFUSED);
		l->state = L_DOWN;
		verbs_link_free(l);
		snprintf(ev->why, sizeof(ev->why), "%s", err);
		return;
	}
	l->state = L_INCOMING;
	ev->type = VERBS_EV_INCOMING;
	ev->link = l;
}

/*
 * What a peer that rejected our connect request said (IB CM reason 28 is
 * a consumer's reject): busy, or the newest version it speaks when that
 * is older than the one we offered.  A reject without a refusal note
 * comes from a peer older than version 3, which cannot read a version-3
 * hello: it gets 2 (or 1; see wire_version_said).  A note that says an
 * older version than ours is a peer that refused our hello for its
 * version.  Either may be forged: the caller decides what to believe.
 */
static void
refused(struct verbs_link *l, const struct rdma_cm_event *cme,
    struct verbs_ev *ev)
{
	struct wire_hello h;
	struct wire_note n;

	if (cme->status != 28 || !l->have_mine ||
	    wire_hello_decode(l->hello_mine, WIRE_HELLO_LEN, &h) != WIRE_OK)
		return;
	if (!wire_note_decode(cme->param.conn.private_data,
	    cme->param.conn.private_data_len, &n)) {
		ev->peer_version = h.version >= 3 ? 2 : 0;
		return;
	}
	ev->peer_busy = n.why == WIRE_NOTE_BUSY;
	ev->peer_version = n.version < h.version ? n.version : 0;
}

/*
 * The link's address is resolved and it wants an SL of its own: resolve
 * the same route on a probe id (same addresses and TOS), whose path goes
 * to the link with the SL (probe_resolved).  Returns 0, or -1 and why.
 */
static int
probe_start(struct verbs_link *l, char *err, size_t errlen)
{
	struct sockaddr_storage src;
	const struct sockaddr *sa = rdma_get_local_addr(l->id);

	memset(&src, 0, sizeof(src));
	memcpy(&src, sa, sa->sa_family == AF_INET6 ?
	    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
	/* The link's id holds its port: the probe takes another. */
	if (src.ss_family == AF_INET6)
		((struct sockaddr_in6 *)(void *)&src)->sin6_port = 0;
	else
		((struct sockaddr_in *)(void *)&src)->sin_port = 0;
	if (rdma_create_id(l->cm->ch, &l->probe, l, RDMA_PS_TCP)) {
		l->probe = NULL;
		say(err, errlen, "service_level: rdma_create_id: %s",
		    strerror(errno));
		return (-1);
	}
	if ((l->conf.tos_set && rdma_set_option(l->probe, RDMA_OPTION_ID,
	    RDMA_OPTION_ID_TOS, &l->conf.tos, sizeof(l->conf.tos))) ||
	    rdma_resolve_addr(l->probe, (struct sockaddr *)&src,
	    rdma_get_peer_addr(l->id), VERBS_RESOLVE_MS)) {
		say(err, errlen, "service_level: cannot resolve the route: %s",
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/*
 * The probe's route is resolved: give its path, with the SL, to the
 * link's id, which the RDMA CM then reports as ROUTE_RESOLVED.
 */
static int
probe_resolved(struct verbs_link *l, char *err, size_t errlen)
{
	const struct ibv_sa_path_rec *r = l->probe->route.path_rec;
	struct ibv_path_data pd;
	struct ibv_path_record *w = &pd.path;

	if (l->probe->route.num_paths < 1 || r == NULL) {
		say(err, errlen, "service_level: the RDMA CM resolved no path");
		return (-1);
	}
	memset(&pd, 0, sizeof(pd));
	pd.flags = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY |
	    IBV_PATH_FLAG_BIDIRECTIONAL;
	w->dgid = r->dgid;
	w->sgid = r->sgid;
	w->dlid = r->dlid;
	w->slid = r->slid;
	w->flowlabel_hoplimit = htobe32(be32toh(r->flow_label) << 8 |
	    r->hop_limit);
	w->tclass = r->traffic_class;
	w->reversible_numpath = (uint8_t)((r->reversible ? 0x80 : 0) | 1);
	w->pkey = r->pkey;
	w->qosclass_sl = htobe16((uint16_t)(l->conf.sl & 0xf));
	/* Selector 2: exactly this MTU, rate and lifetime. */
	w->mtu = (uint8_t)(2 << 6 | (r->mtu & 0x3f));
	w->rate = (uint8_t)(2 << 6 | (r->rate & 0x3f));
	w->packetlifetime = (uint8_t)(2 << 6 | (r->packet_life_time & 0x3f));
	w->preference = r->preference;
	if (rdma_set_option(l->id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &pd,
	    sizeof(pd))) {
		say(err, errlen, "cannot set the service level %u: %s",
		    (unsigned)l->conf.sl, strerror(errno));
		return (-1);
	}
	return (0);
}

/* An event of ${l}'s probe (see probe_start). */
static void
on_probe_event(struct verbs_link *l, struct rdma_cm_event *cme,
    struct verbs_ev *ev)
{
	char err[200];

	switch (cme->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(l->probe, VERBS_RESOLVE_MS))
			vl_down(l, ev, "service_level: cannot resolve a route");
		return;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (probe_resolved(l, err, sizeof(err)))
			vl_down(l, ev, err);
		return;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		vl_down(l, ev, "service_level: route resolution failed");
		return;
	default:
		return;
	}
}

/* The route to the peer is known: set the link up, then connect. */
static void
on_route_resolved(struct verbs_link *l, struct verbs_ev *ev)
{
	struct rdma_conn_param p;
	char err[200];

	/* Its events were all acked: the probe may go. */
	if (l->probe != NULL) {
		rdma_destroy_id(l->probe);
		l->probe = NULL;
	}
	if (verbs_link_setup(l, err, sizeof(err))) {
		vl_down(l, ev, err);
		return;
	}
	if (verbs_conn_param(l, &p)) {
		vl_down(l, ev, "no random numbers available yet");
		return;
	}
	if (rdma_connect(l->id, &p)) {
		snprintf(err, sizeof(err), "rdma_connect: %s", strerror(errno));
		vl_down(l, ev, err);
		return;
	}
	l->state = L_CONNECTING;
}

/* The link is established: up, once a connecting side read the hello. */
static void
on_established(struct verbs_link *l, const struct rdma_cm_event *cme,
    struct verbs_ev *ev)
{
	struct wire_hello h;
	char err[200];
	int werr;

	if (!l->passive && (werr = wire_hello_decode(
	    cme->param.conn.private_data, cme->param.conn.private_data_len,
	    &h)) != WIRE_OK) {
		snprintf(err, sizeof(err), "peer's accept data is invalid: %s",
		    wire_strerror(werr));
		vl_down(l, ev, err);
		rdma_disconnect(l->id);
		return;
	}
	if (!l->passive) {
		memcpy(l->hello_peer, cme->param.conn.private_data,
		    WIRE_HELLO_LEN);
		l->have_peer = 1;
		engine_connected(l->e, &h);
	}
	l->state = L_UP;
	/* What a query cannot tell shows as unknown. */
	(void)hca_describe(l->id, &l->hca);
	l->have_hca = 1;
	ev->type = VERBS_EV_UP;
	if (verbs_link_flush(l))
		vl_down(l, ev, engine_error(l->e));
}

static void
on_link_event(struct verbs_link *l, struct rdma_cm_event *cme,
    struct verbs_ev *ev)
{
	char err[200];

	ev->link = l;
	snprintf(ev->peer, sizeof(ev->peer), "%s", l->peer);
	if (cme->id != l->id) {
		on_probe_event(l, cme, ev);
		return;
	}
	switch (cme->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (l->conf.sl_set) {
			if (probe_start(l, err, sizeof(err)))
				vl_down(l, ev, err);
		} else if (rdma_resolve_route(l->id, VERBS_RESOLVE_MS)) {
			vl_down(l, ev, "cannot resolve a route");
		}
		return;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		on_route_resolved(l, ev);
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
		on_established(l, cme, ev);
		return;
	case RDMA_CM_EVENT_ADDR_ERROR:
		vl_down(l, ev, "address resolution failed (no RDMA device "
		    "reaches the peer?)");
		return;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		vl_down(l, ev, "route resolution failed");
		return;
	case RDMA_CM_EVENT_UNREACHABLE:
		vl_down(l, ev, "peer unreachable");
		return;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		vl_down(l, ev, "connection failed");
		return;
	case RDMA_CM_EVENT_REJECTED:
		vl_down(l, ev, reject_text(cme->status));
		refused(l, cme, ev);
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
		vl_down(l, ev, "peer disconnected");
		return;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		vl_down(l, ev, "RDMA device removed");
		return;
	default:
		return;		/* TIMEWAIT_EXIT, ADDR_CHANGE, ...: nothing */
	}
}

/*
 * An event for a dying link: once the connection is established the peer
 * can be told it ended; any other end means there is nobody to tell.
 * Returns 1 when its cm_id may go.
 */
static int
on_dying_event(struct verbs_link *l, struct rdma_cm_event *cme)
{

	switch (cme->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		rdma_disconnect(l->id);
		return (1);
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return (1);
	default:
		return (0);
	}
}

int
verbs_cm_handle(struct verbs_cm *cm, struct verbs_ev *ev)
{
	struct rdma_cm_event *cme;
	struct verbs_link *l = NULL;
	int end = 0;

	memset(ev, 0, sizeof(*ev));
	if (rdma_get_cm_event(cm->ch, &cme)) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return (0);
		return (-1);
	}
	if (cme->id->context != NULL &&
	    *(const int *)cme->id->context == KIND_LINK) {
		l = cme->id->context;
		if (l->dying)
			end = on_dying_event(l, cme);
		else
			on_link_event(l, cme, ev);
	}
	/* A link's device gone: the devices are listed again (see held). */
	if (cme->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		cm->sync_due = SYNC_TICKS;
	rdma_ack_cm_event(cme);
	/* Only once the event is acked: destroying waits for that. */
	if (end)
		verbs_dying_end(l);
	return (1);
}

void
verbs_cm_set_max_pinned(struct verbs_cm *cm, uint64_t bytes)
{

	__atomic_store_n(&cm->max_pinned, bytes, __ATOMIC_RELAXED);
}

uint64_t
verbs_cm_pinned(const struct verbs_cm *cm)
{

	return (verbs_pinned_now(cm));
}

void
verbs_cm_mem(const struct verbs_cm *cm, struct verbs_cm_mem *cmm)
{

	cmm->total = verbs_pinned_now(cm);
	cmm->control = __atomic_load_n(&cm->control, __ATOMIC_RELAXED);
	cmm->detached = __atomic_load_n(&cm->detached, __ATOMIC_RELAXED);
}

uint32_t
verbs_mem_size(const struct verbs_mem *m)
{

	return (m != NULL ? (uint32_t)m->size : 0);
}
