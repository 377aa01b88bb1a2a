/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * libFuzzer target for the configuration parser: whatever the bytes,
 * conf_load() either returns a configuration whose every tunnel passes
 * the checks it promises (names, sizes in range, addresses filled), or an
 * error that names the file ("FILE:LINE: ..." or "FILE: ...").  ASan and
 * UBSan watch the rest.  conf_load reads a path (and re-reads the file
 * to catch libconfig's integer wrap), so each input is written to a file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "ring.h"
#include "secmem.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

static void
check(const struct conf *c)
{
	const struct conf_tunnel *t;
	size_t i;

	for (i = 0; i < c->ntunnels; i++) {
		t = &c->tunnels[i];
		if (t->name[0] == '\0' || t->has_accept == t->has_target ||
		    ring_size_check(t->sz.sendbuf) != NULL ||
		    ring_size_check(t->sz.recvbuf) != NULL ||
		    t->sz.sq_size < 4 || t->sz.rq_size < 4 ||
		    t->sz.max_streams < 1 || t->unix_mode > 0777)
			abort();
		if (conf_tunnel_find(c, t->name) != t ||
		    !conf_tunnel_same(t, t))
			abort();
		if (t->has_target && c->nlisten == 0)
			abort();
	}
	if (c->drain_time > CONF_MAX_DRAIN_TIME || c->control_mode > 0777)
		abort();
}

/* The configuration lives in secmem, libsodium's. */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{

	(void)argc;
	(void)argv;
	if (secmem_init() != 0)
		abort();
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conf *c = NULL;
	char err[2048];
	FILE *f;

	if (path[0] == '\0')
		snprintf(path, sizeof(path), "/tmp/fuzz_conf.%ld.conf",
		    (long)getpid());
	if ((f = fopen(path, "w")) == NULL)
		abort();
	if (size > 0 && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	if (conf_load(path, 0, &c, err, sizeof(err)) == 0) {
		check(c);
		conf_free(c);
	} else if (strncmp(err, path, strlen(path)) != 0) {
		/* Every error names the file. */
		abort();
	}
	return (0);
}
