/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * verbs: what the verbs files share (see verbs_int.h), and the machine's
 * RDMA devices: why the RDMA CM cannot be opened, the list of devices
 * the CM channel holds open, and what they honour of a link's traffic
 * class and service level (for rstreamd -n).
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "hca.h"
#include "verbs.h"
#include "verbs_int.h"

/*
 * Registration of ${size} bytes of ${what} failed (errno): why, with the
 * likely cause when it is pinned memory running out.
 */
void
verbs_reg_failed(char *err, size_t errlen, const char *device, const char *what,
    size_t size)
{
	int e = errno;

	say(err, errlen, "%s: cannot register %zu bytes of %s: %s%s", device,
	    size, what, strerror(e), e == ENOMEM || e == EPERM || e == EAGAIN ?
	    " (pinned memory: is RLIMIT_MEMLOCK, the unit's LimitMEMLOCK, "
	    "large enough?)" : "");
}

int
verbs_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return (fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK));
}

/* Where librdmacm opens the RDMA CM, and where rdma_ucm shows it is loaded. */
#define CM_NODE		"/dev/infiniband/rdma_cm"
#define CM_SYSFS	"/sys/class/misc/rdma_cm"

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
enum verbs_rdma
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

/*
 * Did /dev/infiniband change since the last look (a device's node came or
 * went)?  One stat a tick, no descriptor.  A missing directory is a state
 * like any other.
 */
int
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
int
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

/* ${ctx}'s name after ", " unless ${names} is empty, and what it honours. */
static void
host_device(struct ibv_context *ctx, char *names, size_t len,
    unsigned *qos)
{
	size_t n = strlen(names);

	if (n < len)
		snprintf(names + n, len - n, "%s%s", n > 0 ? ", " : "",
		    ibv_get_device_name(ctx->device));
	*qos |= hca_qos(ctx);
}

int
verbs_host_qos(const struct sockaddr *src, char *names, size_t len,
    unsigned *qos)
{
	struct ibv_context **list, **c;
	struct rdma_cm_id *id;
	int n = 0;

	*qos = 0;
	if (len > 0)
		names[0] = '\0';
	if (src == NULL) {
		if ((list = rdma_get_devices(NULL)) == NULL)
			return (-1);
		for (c = list; *c != NULL; c++, n++)
			host_device(*c, names, len, qos);
		rdma_free_devices(list);
		return (n > 0 ? n : -1);
	}
	/* Bound to an address, an id is on the device that has it. */
	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) != 0)
		return (-1);
	if (rdma_bind_addr(id, (struct sockaddr *)(uintptr_t)src) == 0 &&
	    id->verbs != NULL) {
		host_device(id->verbs, names, len, qos);
		n = 1;
	}
	rdma_destroy_id(id);
	return (n > 0 ? n : -1);
}
