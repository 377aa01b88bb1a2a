/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "hca.h"

#define HCA_SYSFS	"/sys/class/infiniband"

unsigned
hca_mtu_bytes(int mtu)
{

	switch (mtu) {
	case IBV_MTU_256:
		return (256);
	case IBV_MTU_512:
		return (512);
	case IBV_MTU_1024:
		return (1024);
	case IBV_MTU_2048:
		return (2048);
	case IBV_MTU_4096:
		return (4096);
	default:
		return (0);
	}
}

static void
gid_text(const union ibv_gid *gid, char out[HCA_GID_LEN])
{

	if (inet_ntop(AF_INET6, gid->raw, out, HCA_GID_LEN) == NULL)
		snprintf(out, HCA_GID_LEN, "?");
}

/* Keep the first failure's errno: the rest is filled in regardless. */
static void
failed(int *err)
{

	if (*err == 0)
		*err = errno != 0 ? errno : EIO;
}

/* RoCE's version is the GID's type; IB and iWARP say so themselves. */
static void
transport(struct ibv_context *ctx, unsigned port, int gid_index,
    const struct ibv_port_attr *pa, char out[HCA_TRANSPORT_LEN], int *err)
{
	struct ibv_gid_entry ge;

	if (ctx->device->transport_type == IBV_TRANSPORT_IWARP) {
		snprintf(out, HCA_TRANSPORT_LEN, "iWARP");
		return;
	}
	if (pa->link_layer != IBV_LINK_LAYER_ETHERNET) {
		snprintf(out, HCA_TRANSPORT_LEN, "IB");
		return;
	}
	if (gid_index < 0 || ibv_query_gid_ex(ctx, port, (uint32_t)gid_index,
	    &ge, 0) != 0) {
		failed(err);
		snprintf(out, HCA_TRANSPORT_LEN, "RoCE");
		return;
	}
	snprintf(out, HCA_TRANSPORT_LEN, "%s", ge.gid_type ==
	    IBV_GID_TYPE_ROCE_V2 ? "RoCEv2" : ge.gid_type ==
	    IBV_GID_TYPE_ROCE_V1 ? "RoCEv1" : "RoCE");
}

/* IB's table of RNR NAK timer codes, in microseconds (0: 655.36 ms). */
static const int rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520
};

void
hca_describe_lane1(struct rdma_cm_id *id1, struct hca_info *hi)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;

	if (id1 == NULL || id1->qp == NULL)
		return;
	hi->lane1_qpn = id1->qp->qp_num;
	memset(&qa, 0, sizeof(qa));
	if (ibv_query_qp(id1->qp, &qa, IBV_QP_DEST_QPN, &qi) == 0)
		hi->lane1_peer_qpn = qa.dest_qp_num;
}

int
hca_rnr_us(unsigned code)
{

	return (code < 32 ? rnr_us[code] : -1);
}

/* Soft-iWARP's vendor id (SIW_VENDOR_ID in the kernel's siw.h: "bmt"). */
#define SIW_VENDOR_ID	0x626d74

unsigned
hca_qos(struct ibv_context *ctx)
{
	struct ibv_device_attr da;

	if (ctx->device->transport_type != IBV_TRANSPORT_IWARP)
		return (HCA_QOS_TOS | HCA_QOS_SL);
	if (ibv_query_device(ctx, &da) == 0 && da.vendor_id == SIW_VENDOR_ID)
		return (0);
	return (HCA_QOS_TOS);
}

int
hca_describe(struct rdma_cm_id *id, struct hca_info *hi)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	int err = 0, have_pa = 0;

	memset(hi, 0, sizeof(*hi));
	snprintf(hi->device, sizeof(hi->device), "?");
	snprintf(hi->transport, sizeof(hi->transport), "?");
	snprintf(hi->gid, sizeof(hi->gid), "?");
	snprintf(hi->peer_gid, sizeof(hi->peer_gid), "?");
	hi->gid_index = -1;
	hi->traffic_class = hi->sl = hi->rnr_us = -1;
	if (id == NULL || id->verbs == NULL) {
		errno = ENODEV;
		return (-1);
	}
	snprintf(hi->device, sizeof(hi->device), "%s",
	    ibv_get_device_name(id->verbs->device));
	hi->iwarp = id->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
	hi->port = id->port_num;
	if (ibv_query_port(id->verbs, id->port_num, &pa) == 0)
		have_pa = 1;
	else
		failed(&err);
	if (id->qp != NULL) {
		hi->qpn = id->qp->qp_num;
		memset(&qa, 0, sizeof(qa));
		if (ibv_query_qp(id->qp, &qa, IBV_QP_AV | IBV_QP_PATH_MTU |
		    IBV_QP_DEST_QPN | IBV_QP_MIN_RNR_TIMER, &qi) == 0) {
			hi->peer_qpn = qa.dest_qp_num;
			/* iWARP has no RNR (see on_established). */
			if (!hi->iwarp)
				hi->rnr_us = hca_rnr_us(qa.min_rnr_timer);
			hi->path_mtu = hca_mtu_bytes(qa.path_mtu);
			hi->peer_lid = qa.ah_attr.dlid;
			/* iWARP's QPs have no address vector, whatever the
			 * query says (siw: SL 0). */
			if (!hi->iwarp)
				hi->sl = qa.ah_attr.sl;
			/* No GRH (IB inside a subnet): no traffic class. */
			if (qa.ah_attr.is_global) {
				hi->traffic_class =
				    qa.ah_attr.grh.traffic_class;
				hi->gid_index = qa.ah_attr.grh.sgid_index;
				gid_text(&qa.ah_attr.grh.dgid, hi->peer_gid);
			}
		} else {
			failed(&err);
		}
	}
	/* Without a GRH (IB inside a subnet) the port's own GID is index 0,
	 * and the CM's path record names the peer's. */
	if (hi->gid_index < 0 && have_pa &&
	    pa.link_layer != IBV_LINK_LAYER_ETHERNET) {
		hi->gid_index = 0;
		if (id->route.path_rec != NULL)
			gid_text(&id->route.path_rec->dgid, hi->peer_gid);
	}
	if (hi->gid_index >= 0) {
		if (ibv_query_gid(id->verbs, id->port_num, hi->gid_index,
		    &gid) == 0)
			gid_text(&gid, hi->gid);
		else
			failed(&err);
	}
	if (have_pa) {
		if (pa.link_layer != IBV_LINK_LAYER_ETHERNET)
			hi->lid = pa.lid;
		else
			hi->peer_lid = 0;
		transport(id->verbs, hi->port, hi->gid_index, &pa,
		    hi->transport, &err);
	}
	if (err != 0) {
		errno = err;
		return (-1);
	}
	return (0);
}

/* One counter file's value: a decimal number and a newline, nothing else. */
static int
read_counter(int dfd, const char *name, uint64_t *v)
{
	char buf[32], *end;
	ssize_t n;
	int fd;

	if ((fd = openat(dfd, name, O_RDONLY | O_CLOEXEC)) < 0)
		return (-1);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return (-1);
	buf[n] = '\0';
	if (buf[0] < '0' || buf[0] > '9')
		return (-1);
	errno = 0;
	*v = strtoull(buf, &end, 10);
	if (errno != 0 || (*end != '\n' && *end != '\0'))
		return (-1);
	return (0);
}

static int
skip_entry(const struct dirent *de)
{

	/* hw_counters' "lifespan" is a setting (ms), not a count. */
	return (de->d_name[0] != '.' && strcmp(de->d_name, "lifespan") != 0);
}

/* Every counter in one directory, in name order; -1 if it is not there. */
static int
counters_in(const char *path, const char *dir, hca_counter_fn *fn,
    void *arg)
{
	struct dirent **names;
	uint64_t v;
	int i, k, n, dfd;

	if ((dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return (-1);
	if ((n = scandirat(dfd, ".", &names, skip_entry, alphasort)) < 0) {
		close(dfd);
		return (-1);
	}
	for (i = k = 0; i < n; i++) {
		if (read_counter(dfd, names[i]->d_name, &v) == 0) {
			fn(arg, dir, names[i]->d_name, v);
			k++;
		}
		free(names[i]);
	}
	free(names);
	close(dfd);
	return (k);
}

int
hca_port_counters(const char *root, const char *device, unsigned port,
    hca_counter_fn *fn, void *arg)
{
	static const char *const dirs[] = { "counters", "hw_counters" };
	char path[512];
	int n, total = 0, found = 0;
	size_t i;

	if (strchr(device, '/') != NULL || device[0] == '.') {
		errno = EINVAL;
		return (-1);
	}
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s/ports/%u/%s",
		    root != NULL ? root : HCA_SYSFS, device, port, dirs[i]) >=
		    sizeof(path)) {
			errno = ENAMETOOLONG;
			return (-1);
		}
		if ((n = counters_in(path, dirs[i], fn, arg)) < 0)
			continue;
		found = 1;
		total += n;
	}
	if (!found) {
		errno = ENOENT;
		return (-1);
	}
	return (total);
}
