/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/protocol/engine.  Streams: opened, accepted,
 * refused and limited; half-closed, closed and reset, one stream's stall
 * not another's; their ORIGIN, and their state as text.  The pair of
 * engines, and how work and bytes move between them, are
 * engine_fixture.h's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixture.h"
#include "tap.h"

static void
test_half_close_and_isolation(void)
{
	struct t T;
	struct tstream s1, s2;
	struct tstream *a1, *a2;
	int bad = 0;
	uint32_t got2 = 0, k;

	setup(&T, conf(16, 16), conf(16, 16));
	T.acc_ring = 4096;
	open_stream(&T, &s1, 4096, 4096);
	open_stream(&T, &s2, 4096, 4096);
	settle(&T);
	a1 = &T.acc[0];
	a2 = &T.acc[1];

	/* s1: 10000 bytes then shutdown; the reader sees EOF only at the end. */
	ok(put(T.f.side[0].e, s1.id, s1.tx, 4096, 5, &s1.tx_at) == 4096,
	    "s1: ring filled");
	settle(&T);
	engine_shutdown(T.f.side[0].e, s1.id);	/* too early: data pending */
	ok(engine_tx_space(T.f.side[0].e, s1.id, &k) == 0,
	    "no more bytes may be put after shutdown");
	settle(&T);
	ok(!(a1->events & ENGINE_EV_EOF), "no EOF while bytes are unread");

	/* s1's reader is slow: s2 still moves 64 KiB through 4 KiB rings. */
	while (got2 < 65536) {
		put(T.f.side[0].e, s2.id, s2.tx, 65536 - got2, 6, &s2.tx_at);
		settle(&T);
		got2 += take(T.f.side[1].e, a2->id, a2->rx, 65536, 6,
		    &a2->rx_at, &bad);
		settle(&T);
		if (T.f.failed)
			break;
	}
	ok(got2 == 65536 && !bad,
	    "a stalled reader on s1 does not stall s2 on the same link");

	/* The other direction of s1 still flows after its shutdown. */
	put(T.f.side[1].e, a1->id, a1->tx, 300, 7, &a1->tx_at);
	settle(&T);
	ok(take(T.f.side[0].e, s1.id, s1.rx, 300, 7, &s1.rx_at, &bad) == 300 &&
	    !bad,
	    "s1's reverse direction flows after the forward shutdown");

	ok(take(T.f.side[1].e, a1->id, a1->rx, 4095, 5, &a1->rx_at, &bad) ==
	    4095,
	    "s1: all but one byte read");
	settle(&T);
	ok(!(a1->events & ENGINE_EV_EOF), "still no EOF with one byte left");
	ok(take(T.f.side[1].e, a1->id, a1->rx, 10, 5, &a1->rx_at, &bad) == 1 &&
	    !bad,
	    "the last byte");
	settle(&T);
	ok(a1->events & ENGINE_EV_EOF, "EOF right after the last byte");

	/* Close both ways: s1 gracefully, everything released. */
	engine_shutdown(T.f.side[1].e, a1->id);
	settle(&T);
	ok(s1.events & ENGINE_EV_EOF, "reverse EOF after the reverse shutdown");
	engine_close(T.f.side[0].e, s1.id);
	engine_close(T.f.side[1].e, a1->id);
	settle(&T);
	ok((s1.events & ENGINE_EV_RELEASED) && (a1->events & ENGINE_EV_RELEASED),
	    "a graceful close releases both ends");
	ok(!(s1.events & ENGINE_EV_RESET) && !(a1->events & ENGINE_EV_RESET),
	    "without a reset");

	/* s2: the opener resets; the acceptor sees RESET with the reason. */
	engine_reset(T.f.side[0].e, s2.id, WIRE_REASON_RESET);
	settle(&T);
	ok((a2->events & ENGINE_EV_RESET) && a2->reason == WIRE_REASON_RESET,
	    "a reset reaches the peer with its reason");
	engine_close(T.f.side[1].e, a2->id);
	settle(&T);
	ok((s2.events & ENGINE_EV_RELEASED) && (a2->events & ENGINE_EV_RELEASED),
	    "a reset releases both ends");
	ok(engine_idle(T.f.side[0].e) && engine_idle(T.f.side[1].e),
	    "both engines are idle at the end");
	teardown(&T);
	tstream_free(&s1);
	tstream_free(&s2);
}

static void
test_refuse_and_limit(void)
{
	struct t T;
	struct tstream s;
	struct engine_conf b = conf(8, 8);
	struct engine_event ev;
	int id;

	b.max_streams = 1;
	setup(&T, conf(8, 8), b);
	/* Side 1 refuses by hand this time. */
	id = open_stream(&T, &s, 4096, 4096);
	fab_pump(&T.f, 0);
	land(&T, 0);
	ok(engine_next_event(T.f.side[1].e, &ev) &&
	    (ev.flags & ENGINE_EV_INCOMING) &&
	    strcmp(engine_tunnel(T.f.side[1].e, ev.stream), "t") == 0,
	    "the acceptor sees INCOMING with the tunnel name");
	engine_refuse(T.f.side[1].e, ev.stream, WIRE_REASON_NO_TUNNEL);
	settle(&T);
	ok((s.events & ENGINE_EV_REFUSED) && s.reason == WIRE_REASON_NO_TUNNEL,
	    "the opener sees REFUSED with 'no such tunnel'");
	ok(s.events & ENGINE_EV_RELEASED, "and the stream is released");
	ok(id >= 0, "open returned an id");
	tstream_free(&s);

	/* The acceptor has one slot: the second open is refused by limit. */
	{
		struct tstream x, y;

		open_stream(&T, &x, 4096, 4096);
		open_stream(&T, &y, 4096, 4096);
		settle(&T);
		ok((x.events & ENGINE_EV_OPENED) &&
		    (y.events & ENGINE_EV_REFUSED) &&
		    y.reason == WIRE_REASON_LIMIT,
		    "beyond the peer's stream limit: refused (%s)",
		    wire_reason_str(y.reason));
		tstream_free(&x);
		tstream_free(&y);
	}
	teardown(&T);

	/* An undecided INCOMING stream carries the user pointer set on it. */
	{
		int mark;

		setup(&T, conf(8, 8), conf(8, 8));
		open_stream(&T, &s, 4096, 4096);
		fab_pump(&T.f, 0);
		land(&T, 0);
		ok(engine_next_event(T.f.side[1].e, &ev) &&
		    (ev.flags & ENGINE_EV_INCOMING) && ev.user == NULL &&
		    engine_set_user(T.f.side[1].e, ev.stream, &mark) == 0,
		    "a user pointer can be set on an INCOMING stream");
		ok(engine_set_user(T.f.side[1].e, ev.stream + 1, &mark) ==
		    ENGINE_EINVAL, "but not on an id that is not INCOMING");
		engine_fail(T.f.side[1].e, ENGINE_ERR_TRANSPORT, "gone");
		ok(engine_next_event(T.f.side[1].e, &ev) && ev.user == &mark &&
		    (ev.flags & ENGINE_EV_RESET) &&
		    (ev.flags & ENGINE_EV_RELEASED),
		    "its RESET and RELEASED carry it");
		ok(engine_error_kind(T.f.side[1].e) == ENGINE_ERR_TRANSPORT &&
		    strcmp(engine_err_name(ENGINE_ERR_TRANSPORT), "transport") ==
		    0, "engine_fail's kind is what engine_error_kind says");
		tstream_free(&s);
		teardown(&T);
	}
}

/* A stream opened by side 0 with origin ${o} (NULL: none); its accepted id. */
static int
open_with_origin(struct t *T, struct tstream *s, const struct wire_origin *o)
{
	if (open_stream(T, s, 4096, 4096) < 0)
		return (-1);
	if (o != NULL && engine_set_origin(T->f.side[0].e, s->id, o) != 0)
		return (-1);
	settle(T);
	return (T->nacc > 0 ? (int)T->acc[T->nacc - 1].id : -1);
}

static void
test_origin(void)
{
	struct wire_origin o, bad_o;
	const struct wire_origin *got;
	struct wire_rec r[2];
	uint8_t buf[WIRE_MSG_SIZE];
	struct tstream s, s2;
	struct t T;
	int id;

	memset(&o, 0, sizeof(o));
	o.family = WIRE_FAM_INET;
	memcpy(o.src, "\xc0\x00\x02\x07", 4);
	memcpy(o.dst, "\x7f\x00\x00\x01", 4);
	o.src_port = 50123;
	o.dst_port = 15432;

	/* Both sides version 3: the acceptor learns the origin. */
	setup(&T, conf(16, 16), conf(16, 16));
	ok(engine_can_origin(T.f.side[0].e) && engine_can_origin(T.f.side[1].e),
	    "two version-3 sides can send ORIGIN");
	id = open_with_origin(&T, &s, &o);
	got = id >= 0 ? engine_origin(T.f.side[1].e, (uint32_t)id) : NULL;
	ok(got != NULL && memcmp(got, &o, sizeof(o)) == 0,
	    "the ORIGIN before an OPEN reaches the acceptor whole");
	ok(engine_origin(T.f.side[0].e, s.id) != NULL,
	    "the opener's stream keeps its origin too");
	ok(engine_set_origin(T.f.side[0].e, s.id, &o) == ENGINE_EINVAL,
	    "an origin once OPEN went out is refused");
	id = open_with_origin(&T, &s2, NULL);
	ok(id >= 0 && engine_origin(T.f.side[1].e, (uint32_t)id) == NULL,
	    "a stream opened without an origin has none");
	memset(&bad_o, 0, sizeof(bad_o));
	bad_o.family = WIRE_FAM_MAX + 1;
	tstream_free(&s2);
	ok(open_stream(&T, &s2, 4096, 4096) >= 0 &&
	    engine_set_origin(T.f.side[0].e, s2.id, &bad_o) == ENGINE_EINVAL,
	    "an origin of an unknown family is refused");
	teardown(&T);
	free(s.tx); free(s.rx); free(s2.tx); free(s2.rx);

	/* An older peer (capped at 2): no ORIGIN goes out, the OPEN does. */
	ok(setup_cap(&T, conf(16, 16), conf(16, 16), 0, 2) == 0 &&
	    !engine_can_origin(T.f.side[0].e) &&
	    !engine_can_origin(T.f.side[1].e),
	    "with a version-2 peer neither side sends ORIGIN");
	id = open_with_origin(&T, &s, &o);
	ok(id >= 0 && engine_origin(T.f.side[1].e, (uint32_t)id) == NULL &&
	    engine_error(T.f.side[1].e) == NULL,
	    "the stream opens without its origin on a version-2 link");
	/* And an ORIGIN sent anyway breaks the protocol. */
	memset(r, 0, sizeof(r));
	r[0].type = WIRE_ORIGIN;
	r[0].stream = 9;
	r[0].origin = o;
	fab_inject(&T.f, 1, FAB_CQE_RECV, buf, recs(buf, r, 1), 0);
	ok(failed_with(T.f.side[1].e, "below version 3"),
	    "ORIGIN on a version-2 link is a violation");
	teardown(&T);
	free(s.tx); free(s.rx);

	/* ORIGIN must be followed by its stream's OPEN. */
	setup(&T, conf(16, 16), conf(16, 16));
	r[1].type = WIRE_KEEPALIVE;
	fab_inject(&T.f, 1, FAB_CQE_RECV, buf, recs(buf, r, 2), 0);
	ok(failed_with(T.f.side[1].e, "not followed by its OPEN"),
	    "ORIGIN followed by another record is a violation");
	teardown(&T);
	setup(&T, conf(16, 16), conf(16, 16));
	fab_inject(&T.f, 1, FAB_CQE_RECV, buf, recs(buf, r, 1), 0);
	ok(failed_with(T.f.side[1].e, "not followed by its OPEN"),
	    "ORIGIN at the end of a SEND is a violation");
	teardown(&T);
}

/* engine_stream_flags_str: the state, then the flags that are set. */
static void
test_stream_flags_str(void)
{
	struct t T;
	struct tstream s;
	char b[ENGINE_FLAGS_STR_LEN], small[8];
	struct engine *e0, *e1;

	setup(&T, conf(16, 16), conf(16, 16));
	e0 = T.f.side[0].e;
	e1 = T.f.side[1].e;
	open_stream(&T, &s, 4096, 4096);
	ok(strcmp(engine_stream_flags_str(e0, s.id, b, sizeof(b)),
	    "OPENING HAS_RINGS") == 0, "an open sent: %s", b);
	settle(&T);
	ok(strcmp(engine_stream_flags_str(e0, s.id, b, sizeof(b)),
	    "OPEN PEER_MAPPED|HAS_RINGS") == 0, "an open answered: %s", b);
	engine_shutdown(e0, s.id);
	settle(&T);
	ok(strcmp(engine_stream_flags_str(e0, s.id, b, sizeof(b)),
	    "OPEN APP_SHUT|SHUT_SENT|PEER_MAPPED|HAS_RINGS") == 0,
	    "shut, in bit order: %s", b);
	ok(strcmp(engine_stream_flags_str(e1, T.acc[0].id, b, sizeof(b)),
	    "OPEN PEER_SHUT|EOF_DONE|PEER_MAPPED|HAS_RINGS") == 0,
	    "the peer's side after its EOF: %s", b);
	ok(strcmp(engine_stream_flags_str(e0, s.id + 1, b, sizeof(b)),
	    "FREE") == 0, "a slot never used: %s", b);
	ok(strcmp(engine_stream_flags_str(e0, 64, b, sizeof(b)), "?") == 0,
	    "no slot: %s", b);
	ok(engine_stream_flags_str(e0, s.id, small, sizeof(small)) == small &&
	    strcmp(small, "OPEN AP") == 0, "a short buffer is cut: %s", small);
	engine_reset(e0, s.id, WIRE_REASON_RESET);
	ok(strstr(engine_stream_flags_str(e0, s.id, b, sizeof(b)),
	    "APP_CLOSED|RESET") != NULL, "reset by the application: %s", b);
	teardown(&T);
	free(s.tx);
	free(s.rx);
}

int
main(void)
{

	test_half_close_and_isolation();
	test_refuse_and_limit();
	test_origin();
	test_stream_flags_str();
	return (tap_done());
}
