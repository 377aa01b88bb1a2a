/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/protocol/engine.  Links without immediate data
 * (iWARP, protocol version 11): which hellos run one, the shape of what
 * the engine posts on one (a plain WRITE, then a SEND whose notice says
 * what the immediate would; a notice in front of every SEND), clear and
 * sealed, and the input such a link refuses.  The pair of engines, and
 * how work and bytes move between them, are engine_fixture.h's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "engine_fixture.h"
#include "tap.h"

/* A configuration of 16-deep queues whose device has no immediates. */
static struct engine_conf
nconf(int notify)
{
	struct engine_conf c = conf(16, 16);

	c.notify = (uint8_t)notify;
	return (c);
}

static uint32_t
be32(const uint8_t *p)
{

	return ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3]);
}

/* The bytes side ${i} posts work request ${w} from, on lane 0. */
static const uint8_t *
sent(struct t *T, int i, const struct engine_wr *w)
{

	return (T->f.side[i].ctrl_send + (w->wr_id % 16) * WIRE_MSG_SIZE);
}

/* Either device without immediates rules the link; version 11 at least. */
static void
test_negotiate(void)
{
	static const struct {
		int a, b;
		unsigned cap_b;
		int want;
	} cs[] = {
		{ 0, 0, 0, 0 }, { 1, 1, 0, 1 }, { 1, 0, 0, 1 }, { 0, 1, 0, 1 },
	};
	struct t T;
	size_t k;

	for (k = 0; k < sizeof(cs) / sizeof(cs[0]); k++) {
		ok(setup_cap(&T, nconf(cs[k].a), nconf(cs[k].b), 0,
		    cs[k].cap_b) == 0 &&
		    engine_notify(T.f.side[0].e) == cs[k].want &&
		    engine_notify(T.f.side[1].e) == cs[k].want &&
		    T.f.no_imm == (cs[k].a || cs[k].b),
		    "devices without immediates: %s and %s: the link runs %s",
		    cs[k].a ? "yes" : "no", cs[k].b ? "yes" : "no",
		    cs[k].want ? "without" : "with them");
		teardown(&T);
	}

	/* A peer of version 10 cannot: the side that needs it says why. */
	setup_cap(&T, nconf(1), nconf(0), 0, 10);
	ok(failed_with(T.f.side[0].e, "no immediate data (iWARP), and the "
	    "link runs protocol version 10") &&
	    !engine_notify(T.f.side[1].e),
	    "a link of version 10 on a device without immediates fails: %s",
	    err_of(T.f.side[0].e));
	teardown(&T);
}

/*
 * Data: a plain WRITE, then at once a SEND of its notice (and its tag
 * on a sealed link); control records: a SEND that starts with the
 * records notice.  Nothing carries an immediate (the fabric refuses
 * them), and the bytes arrive.
 */
static void
test_shape(int sealed)
{
	struct t T;
	struct tstream s;
	struct engine_wr w, n;
	const struct fab_side *f0;
	uint64_t t0 = 0, r1 = 0;
	int bad = 0;

	setup(&T, nconf(1), nconf(1));
	if (sealed)
		fab_seal(&T.f);
	open_stream(&T, &s, 4096, 4096);
	fab_pump(&T.f, 0);
	f0 = &T.f.side[0];
	w = f0->wire[f0->wire_head].wr;
	ok(w.op == ENGINE_WR_SEND && w.len > WIRE_NOTICE_LEN &&
	    be32(sent(&T, 0, &w)) == WIRE_NOTICE_RECORDS,
	    "%s: the OPEN's SEND starts with the records notice",
	    sealed ? "sealed" : "clear");
	settle(&T);
	ok(T.nacc == 1, "%s: the stream opens", sealed ? "sealed" : "clear");

	put(T.f.side[0].e, s.id, s.tx, 100, 1, &t0);
	fab_pump(&T.f, 0);
	w = f0->wire[f0->wire_head].wr;
	n = f0->wire[(f0->wire_head + 1) % f0->wire_cap].wr;
	ok(f0->wire_n == 2 && w.op == ENGINE_WR_WRITE && w.len == 100 &&
	    w.signaled &&
	    n.op == ENGINE_WR_SEND && n.wr_id == w.wr_id + 1 &&
	    n.len == WIRE_NOTICE_LEN + (sealed ? WIRE_TAG_LEN : 0) &&
	    be32(sent(&T, 0, &n)) == wire_imm_encode(T.acc[0].id, 100),
	    "%s: 100 bytes go as a WRITE that asks for its completion, then "
	    "a SEND of %u bytes whose notice names the stream and length",
	    sealed ? "sealed" : "clear",
	    (unsigned)n.len);
	settle(&T);
	ok(take(T.f.side[1].e, T.acc[0].id, NULL, 4096, 1, &r1, &bad) ==
	    100 && !bad && engine_error(T.f.side[1].e) == NULL,
	    "%s: the bytes arrive intact", sealed ? "sealed" : "clear");
	teardown(&T);
	tstream_free(&s);
}

/* Input a link without immediates refuses, each ending it. */
static void
test_refused(void)
{
	static const struct {
		int kind;
		uint8_t buf[8];
		uint32_t len, imm;
		const char *err, *what;
	} cs[] = {
		{ FAB_CQE_RECV_IMM, { 0 }, 10, 0x00000009u,
		    "a WRITE WITH IMMEDIATE on a link without immediates",
		    "a WRITE WITH IMMEDIATE" },
		{ FAB_CQE_RECV_TAG, { 0 }, WIRE_TAG_LEN, 0x00000009u,
		    "a SEND WITH IMMEDIATE on a link without immediates",
		    "a SEND WITH IMMEDIATE" },
		{ FAB_CQE_RECV, { 0x40, 0, 0 }, 3, 0,
		    "a message of 3 bytes, which has no room for its notice",
		    "a SEND shorter than a notice" },
		{ FAB_CQE_RECV, { 0x40, 0, 0, 0 }, 4, 0,
		    "message without records", "a records notice alone" },
		{ FAB_CQE_RECV, { 0x80, 0, 0, 1 }, 4, 0,
		    "notice 0x80000001 has an unknown operation",
		    "a notice of an unknown operation" },
		{ FAB_CQE_RECV, { 0x00, 0, 0, 9, 1, 2, 3, 4 }, 8, 0,
		    "a 4-byte tag on a link that does not seal",
		    "a data notice with bytes after it, unsealed" },
		{ FAB_CQE_RECV, { 0x00, 0x05, 0, 9 }, 4, 0,
		    "data for stream 5, which is not open",
		    "a data notice for a stream that is not open" },
	};
	struct t T;
	size_t k;

	for (k = 0; k < sizeof(cs) / sizeof(cs[0]); k++) {
		setup(&T, nconf(1), nconf(1));
		fab_inject(&T.f, 1, cs[k].kind, cs[k].buf, cs[k].len,
		    cs[k].imm);
		ok(failed_with(T.f.side[1].e, cs[k].err),
		    "%s ends the link: %s", cs[k].what, err_of(T.f.side[1].e));
		teardown(&T);
	}
}

int
main(void)
{

	if (sodium_init() < 0)
		return (1);
	test_negotiate();
	test_shape(0);
	test_shape(1);
	test_refused();
	return (tap_done());
}
