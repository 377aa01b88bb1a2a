/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/protocol/engine.  A link's life: its configuration,
 * its hello before it connects, keepalives and GOAWAY, and the input
 * that breaks the protocol and so ends the link.  The pair of engines,
 * and how work and bytes move between them, are engine_fixture.h's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixture.h"
#include "tap.h"

static void
test_conf(void)
{
	struct engine_conf c = conf(4, 4);
	uint8_t buf[4 * WIRE_MSG_SIZE];
	const char *why;
	struct engine *e;

	c.ctrl_send = buf;
	ok(engine_conf_check(&c) == NULL, "minimum depths are accepted");
	c.sq_size = 2;
	why = engine_conf_check(&c);
	ok(why && strstr(why, "sq_size") && strstr(why, "minimum 4"),
	    "sq_size 2 is refused by name: %s", why ? why : "(null)");
	c.sq_size = 4;
	c.rq_size = 3;
	why = engine_conf_check(&c);
	ok(why && strstr(why, "rq_size"), "rq_size 3 is refused");
	c.rq_size = 4;
	c.max_streams = 0;
	ok(engine_new(&c, &why) == NULL && strstr(why, "max_streams"),
	    "max_streams 0 is refused");
	c.max_streams = 1;
	e = engine_new(&c, &why);
	ok(e != NULL, "engine_new with minimum sizes");
	engine_free(e);
	engine_free(NULL);
	ok(1, "engine_free(NULL) is a no-op");
}

static void
test_before_connect(void)
{
	struct engine_conf c = conf(8, 16);
	uint8_t buf[8 * WIRE_MSG_SIZE];
	struct engine_wr wrs[4];
	struct engine_ring r = { 0x1000, 4096, 1, NULL };
	uint32_t slots[64];
	const char *why;
	struct engine *e;
	struct wire_hello h;

	c.ctrl_send = buf;
	e = engine_new(&c, &why);
	ok(engine_take_recvs(e, slots, 64) == 16,
	    "all 16 receives are handed out before connecting");
	ok(slots[0] == 0 && slots[15] == 15, "receive slots are 0..15");
	engine_hello(e, &h);
	ok(h.credits == 16 && h.version == WIRE_VERSION && h.flags == 0,
	    "hello grants the posted receives as credits");
	engine_version_cap(e, 2);
	engine_hello(e, &h);
	ok(h.version == 1 && h.flags == 0,
	    "capped at 2 without resume, a side says version 1");
	ok(engine_open(e, "t", &r, &r, NULL) == ENGINE_EDOWN,
	    "no stream opens before the link is up");
	ok(engine_take_wrs(e, wrs, 4) == 0, "no work before the link is up");
	engine_free(e);
}

static void
test_idle_abort_goaway(void)
{
	struct t T;
	struct tstream s, g;
	struct engine_ring r = { 0x1000, 4096, 1, NULL };

	setup(&T, conf(8, 8), conf(8, 8));
	ok(settle(&T) == 0, "a new link with nothing to say sends nothing");
	engine_keepalive(T.f.side[0].e);
	ok(settle(&T) == 1, "a keepalive is one SEND");

	/* Reset while OPENING: the RESET goes out after OPEN_OK, reason kept. */
	open_stream(&T, &s, 4096, 4096);
	engine_reset(T.f.side[0].e, s.id, WIRE_REASON_TIMEOUT);
	settle(&T);
	ok(T.nacc == 1 && (T.acc[0].events & ENGINE_EV_RESET) &&
	    T.acc[0].reason == WIRE_REASON_TIMEOUT,
	    "a stream reset while opening reaches the peer with its reason "
	    "(%s)", wire_reason_str(T.acc[0].reason));
	engine_close(T.f.side[1].e, T.acc[0].id);
	settle(&T);
	ok((s.events & ENGINE_EV_RELEASED) && !(s.events & ENGINE_EV_OPENED),
	    "and is released without an OPENED event");

	/* GOAWAY: refused at once, and no opens from the side going away. */
	engine_goaway(T.f.side[1].e, WIRE_REASON_SHUTTING_DOWN);
	ok(engine_open(T.f.side[1].e, "t", &r, &r, NULL) == ENGINE_EDOWN,
	    "a side going away opens nothing");
	open_stream(&T, &g, 4096, 4096);
	settle(&T);
	ok((g.events & ENGINE_EV_REFUSED) &&
	    g.reason == WIRE_REASON_SHUTTING_DOWN,
	    "an open towards a side going away is refused (%s)",
	    wire_reason_str(g.reason));
	ok(engine_peer_goaway(T.f.side[0].e), "the peer's GOAWAY is known");
	ok(engine_open(T.f.side[0].e, "t", &r, &r, NULL) == ENGINE_EDOWN,
	    "and no new stream is opened towards it");
	teardown(&T);
	tstream_free(&s);
	tstream_free(&g);
}

static void
test_violations(void)
{
	static const struct {
		const char *what;
		int kind;
		uint8_t buf[16];
		uint32_t len;
		uint32_t imm;
		const char *expect;
	} cases[] = {
		{ "data for a stream never opened", FAB_CQE_RECV_IMM, { 0 }, 10,
		    0x00050009, "not open" },
		{ "an immediate with an unknown operation", FAB_CQE_RECV_IMM,
		    { 0 }, 10, 0x80000009, "unknown operation" },
		{ "an empty SEND", FAB_CQE_RECV, { 0 }, 0, 0, "without records" },
		{ "an unknown record type", FAB_CQE_RECV, { 0x63, 2 }, 2, 0,
		    "unknown record type" },
		{ "a truncated record", FAB_CQE_RECV, { 3, 40, 0, 0 }, 4, 0,
		    "truncated" },
		{ "CLOSE for an unknown stream", FAB_CQE_RECV,
		    { 7, 6, 0, 0, 0, 9 }, 6, 0, "CLOSE for stream 9" },
		{ "a message credit beyond the queue", FAB_CQE_RECV,
		    { 1, 10, 0, 0, 1, 0, 0, 0, 0, 0 }, 10, 0,
		    "beyond the peer's receive queue" },
	};
	size_t k;
	struct t T;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		setup(&T, conf(8, 8), conf(8, 8));
		fab_inject(&T.f, 0, cases[k].kind, cases[k].buf, cases[k].len,
		    cases[k].imm);
		ok(failed_with(T.f.side[0].e, cases[k].expect),
		    "%s ends the link: %s", cases[k].what,
		    err_of(T.f.side[0].e));
		ok(engine_error_kind(T.f.side[0].e) == ENGINE_ERR_PROTOCOL,
		    "and its kind is %s",
		    engine_err_name(engine_error_kind(T.f.side[0].e)));
		teardown(&T);
	}

	/* Data beyond the free space of an open stream's ring. */
	{
		struct tstream s;

		setup(&T, conf(8, 8), conf(8, 8));
		open_stream(&T, &s, 4096, 4096);
		settle(&T);
		fab_inject(&T.f, 0, FAB_CQE_RECV_IMM, NULL, 4097,
		    wire_imm_encode(s.id, 4097));
		ok(failed_with(T.f.side[0].e, "exceed its free ring space"),
		    "4097 bytes into a 4096-byte ring end the link: %s",
		    err_of(T.f.side[0].e));
		events(&T, 0);
		ok((s.events & ENGINE_EV_RESET) &&
		    (s.events & ENGINE_EV_RELEASED),
		    "its streams are reset and released");
		ok(engine_take_wrs(T.f.side[0].e, NULL, 0) == 0,
		    "a failed link posts nothing");
		teardown(&T);
		tstream_free(&s);
	}
}

int
main(void)
{

	test_conf();
	test_before_connect();
	test_idle_abort_goaway();
	test_violations();
	return (tap_done());
}
