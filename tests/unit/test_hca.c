/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/rdma/hca's sysfs side: a port's counters read from a tree
 * laid out as /sys/class/infiniband is (the e2e tests read rxe's own).
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "hca.h"
#include "tap.h"

static char root[64];

static void
put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if ((f = fopen(path, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

static void
dir(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (mkdir(path, 0755) != 0) {
		perror(path);
		exit(1);
	}
}

/* What the callback was given, one "dir/name=value" per line. */
static char seen[1024];

static void
collect(void *arg, const char *d, const char *name, uint64_t value)
{
	size_t n = strlen(seen);

	(*(int *)arg)++;
	snprintf(seen + n, sizeof(seen) - n, "%s/%s=%llu\n", d, name,
	    (unsigned long long)value);
}

int
main(void)
{
	int calls = 0, n;

	snprintf(root, sizeof(root), "/tmp/test_hca.XXXXXX");
	if (mkdtemp(root) == NULL) {
		perror("mkdtemp");
		return (1);
	}
	dir("mlx0");
	dir("mlx0/ports");
	dir("mlx0/ports/1");
	dir("mlx0/ports/1/counters");
	dir("mlx0/ports/1/hw_counters");
	dir("mlx0/ports/2");
	put("mlx0/ports/1/counters/port_xmit_data", "123456\n");
	put("mlx0/ports/1/counters/port_rcv_errors", "0\n");
	put("mlx0/ports/1/counters/symbol_error", "N/A (no PMA)\n");
	put("mlx0/ports/1/hw_counters/retry_exceeded_err", "3\n");
	put("mlx0/ports/1/hw_counters/lifespan", "10\n");
	put("mlx0/ports/1/hw_counters/out_of_seq_request", "18446744073709551615\n");
	put("mlx0/ports/1/hw_counters/empty", "");
	put("mlx0/ports/1/hw_counters/trailing", "7 packets\n");

	n = hca_port_counters(root, "mlx0", 1, collect, &calls);
	ok(n == 4 && calls == 4, "a port's counters: 4 numbers reported (%d)",
	    n);
	if (!ok(strcmp(seen, "counters/port_rcv_errors=0\n"
	    "counters/port_xmit_data=123456\n"
	    "hw_counters/out_of_seq_request=18446744073709551615\n"
	    "hw_counters/retry_exceeded_err=3\n") == 0,
	    "IB's counters, then the driver's hw_counters, each in name order, "
	    "64-bit values whole"))
		printf("# got:\n# %s\n", seen);
	ok(strstr(seen, "lifespan") == NULL, "hw_counters' lifespan is a "
	    "setting, not reported");
	ok(strstr(seen, "symbol_error") == NULL && strstr(seen, "empty") ==
	    NULL && strstr(seen, "trailing") == NULL,
	    "files that are not one decimal number are skipped");

	seen[0] = '\0';
	calls = 0;
	n = hca_port_counters(root, "mlx0", 2, collect, &calls);
	ok(n == -1 && errno == ENOENT && calls == 0,
	    "a port with neither directory: -1, ENOENT");
	n = hca_port_counters(root, "mlx9", 1, collect, &calls);
	ok(n == -1 && errno == ENOENT, "an unknown device: -1, ENOENT");
	n = hca_port_counters(root, "../mlx0", 1, collect, &calls);
	ok(n == -1 && errno == EINVAL && calls == 0,
	    "a device name that would leave the tree is refused");

	ok(hca_mtu_bytes(IBV_MTU_256) == 256 &&
	    hca_mtu_bytes(IBV_MTU_1024) == 1024 &&
	    hca_mtu_bytes(IBV_MTU_4096) == 4096 && hca_mtu_bytes(0) == 0 &&
	    hca_mtu_bytes(6) == 0, "path MTUs in bytes; unknown is 0");

	snprintf(seen, sizeof(seen), "rm -rf '%s'", root);
	if (system(seen) != 0)
		perror("rm");
	return (tap_done());
}
