/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * fuzz_engine.c's target, and what its last run reached: for
 * tests/fuzz/engine_seeds.c, which replays the seed corpus through the same
 * harness without libFuzzer and checks that each seed gets where its name
 * says.
 */
#ifndef FUZZ_ENGINE_H
#define FUZZ_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz_reach {
	int ops;		/* operations the input ran */
	int failed_op;		/* the link had failed after this one (1
				   the first, 0 before any), or -1: never */
	size_t failed_off;	/* where in the input that operation began */
	char error[200];	/* engine_error, once it failed */
	uint32_t events;	/* ENGINE_EV_* the engine under test gave */
	int origins;		/* INCOMING streams that came with an ORIGIN */
	int adopted;		/* the resume's adopted callback ran */
	int sealed;		/* at the end: engine_sealed */
	int hs_done;		/* ... the handshake's step said DONE */
	unsigned version;	/* ... engine_version */
	uint64_t sealed_to;	/* ... this side's sealing count (its */
	uint64_t opened_to;	/* opening's): past SEAL_REKEY_EVERY
				   only if it crossed a rekey boundary */
	struct engine_stats st;	/* ... engine_stats */
};

/* Filled by each LLVMFuzzerTestOneInput. */
extern struct fz_reach fz_reach;

#endif
