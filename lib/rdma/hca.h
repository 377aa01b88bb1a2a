/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * hca: what an operator asks first when a link misbehaves: which device,
 * port and GID it used, over which transport, with which path MTU and QP
 * numbers, and what the adapter's own counters for that port say.
 *
 * hca_describe reads a connected cm_id's facts once (a few verbs queries,
 * no data path); hca_port_counters reads a port's counter files from
 * sysfs, where every RDMA driver publishes them.
 */
#ifndef HCA_H
#define HCA_H

#include <stdint.h>

struct ibv_context;
struct rdma_cm_id;

/* The RoCE version or IB, and the textual GIDs' room. */
#define HCA_TRANSPORT_LEN	8
#define HCA_GID_LEN		46	/* INET6_ADDRSTRLEN */

struct hca_info {
	char device[32];
	unsigned port;
	char transport[HCA_TRANSPORT_LEN];	/* "IB", "RoCEv1", "RoCEv2", "iWARP" */
	int gid_index;				/* -1: unknown */
	char gid[HCA_GID_LEN], peer_gid[HCA_GID_LEN];
	unsigned path_mtu;			/* bytes; 0: unknown */
	uint32_t qpn, peer_qpn;
	/* Lane 1's queue pair and the peer's (a link of two lanes); 0: none. */
	uint32_t lane1_qpn, lane1_peer_qpn;
	uint16_t lid, peer_lid;			/* IB only; 0 on RoCE */
	/* An iWARP device: TCP, so no GID, no SL, no RNR, and no peer QP
	 * number learnt (the fields say unknown). */
	int iwarp;
	/* The QP's address vector: the GRH traffic class (on RoCE v2 the IP
	 * header's DSCP/ECN byte) and the service level; -1: unknown, and
	 * on iWARP, which has neither (see hca_qos). */
	int traffic_class, sl;
	/* How long its peer waits after a receiver-not-ready NAK from it,
	 * in microseconds (the QP's min_rnr_timer); -1: unknown. */
	int rnr_us;
	/* The most bytes the link's work requests carry inline: its
	 * inline_size, or what its device takes when that is less (the
	 * verbs layer's, not hca_describe's). */
	uint32_t inline_size;
};

/**
 * hca_describe(id, hi):
 * Fill ${hi} from the connected ${id} (its device, port and QP).  What a
 * query cannot tell stays unknown ("?", -1 or 0); returns 0 if every query
 * answered, else -1 with errno from the first that did not.
 */
int hca_describe(struct rdma_cm_id *id, struct hca_info *hi);

/* What a device does with a link's traffic class and SL (hca_qos). */
#define HCA_QOS_TOS	0x1
#define HCA_QOS_SL	0x2

/**
 * hca_qos(ctx):
 * Which of a link's IP TOS byte (traffic_class, RDMA_OPTION_ID_TOS) and
 * service level device ${ctx} honours (HCA_QOS_*): both on InfiniBand
 * and RoCE.  iWARP has no service levels.  Its TOS is its TCP
 * connection's: the kernel's RDMA CM hands it to the driver (the
 * iw_cm_id's tos), and adapters (irdma, cxgb4) put it in their IP
 * headers, but Soft-iWARP (siw), whose kernel socket never takes it,
 * does not.
 */
unsigned hca_qos(struct ibv_context *ctx);

/**
 * hca_describe_lane1(id1, hi):
 * Add lane 1's queue pair numbers, of the connected ${id1}, to ${hi}
 * (the peer's stays 0 if the query fails).
 */
void hca_describe_lane1(struct rdma_cm_id *id1, struct hca_info *hi);

/**
 * hca_rnr_us(code):
 * A min_rnr_timer code (5 bits, as IB encodes it) in microseconds: 0 is
 * 655360, 1 is 10, 12 is 640, 31 is 491520; -1 above 31.
 */
int hca_rnr_us(unsigned code);

/**
 * hca_mtu_bytes(mtu):
 * An enum ibv_mtu as bytes (IBV_MTU_1024 is 1024); 0 for anything else.
 */
unsigned hca_mtu_bytes(int mtu);

/* One counter of a port: its file's name and value. */
typedef void hca_counter_fn(void *arg, const char *dir, const char *name,
    uint64_t value);

/**
 * hca_port_counters(root, device, port, fn, arg):
 * Call ${fn}(${arg}, dir, name, value) for each counter of port ${port} of
 * ${device} under ${root} (NULL: /sys/class/infiniband): the standard
 * "counters" (IB's port counters) and the driver's "hw_counters"
 * (retransmissions, sequence errors, ...), in name order within each.
 * Files that do not hold one decimal number are skipped.  Returns how
 * many counters it reported, or -1 with errno if the port has neither
 * directory.
 */
int hca_port_counters(const char *root, const char *device, unsigned port,
    hca_counter_fn *fn, void *arg);

#endif /* !HCA_H */
