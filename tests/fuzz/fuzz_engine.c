/*
 * libFuzzer target for the engine's input side: a live engine with a few
 * streams is fed arbitrary completions, immediates, SEND payloads and
 * application calls, decoded from the input one operation at a time.  The
 * engine may end the link (that is its job); it must never crash, read or
 * write out of bounds (ASan), hit undefined behaviour (UBSan), or break
 * its own bookkeeping (checked below).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SQ	8
#define RQ	8
#define STREAMS	4

static uint8_t ctrl_send[SQ * WIRE_MSG_SIZE];

struct in {
	const uint8_t *p;
	size_t n;
};

static int
get(struct in *in, void *out, size_t len)
{

	if (in->n < len)
		return (0);
	memcpy(out, in->p, len);
	in->p += len;
	in->n -= len;
	return (1);
}

static void
drain(struct engine *e, uint32_t *posted, int *nposted, uint64_t *seq_hi)
{
	struct engine_wr wrs[8];
	struct engine_event ev;
	struct engine_ring r = { 0x100000, 4096, 7 };
	uint32_t slots[RQ];
	int n, k;

	n = engine_take_recvs(e, slots, RQ);
	for (k = 0; k < n && *nposted < RQ; k++)
		posted[(*nposted)++] = slots[k];
	while ((n = engine_take_wrs(e, wrs, 8)) > 0) {
		for (k = 0; k < n; k++) {
			if (wrs[k].len == 0 || wrs[k].len > WIRE_WRITE_MAX)
				abort();
			if (wrs[k].op == ENGINE_WR_SEND &&
			    wrs[k].len > WIRE_MSG_SIZE)
				abort();
			*seq_hi = wrs[k].wr_id + 1;
		}
		if (n < 8)
			break;
	}
	while (engine_next_event(e, &ev)) {
		if (ev.stream >= STREAMS)
			abort();
		if (ev.flags & ENGINE_EV_INCOMING)
			engine_accept(e, ev.stream, &r, &r, NULL);
	}
}

/* Authentication mode: a proof of all 0x42 bytes is the right one. */
static void
prove(void *arg, uint8_t proof[WIRE_AUTH_LEN])
{

	(void)arg;
	memset(proof, 0x17, WIRE_AUTH_LEN);
}

static int
verify(void *arg, const uint8_t proof[WIRE_AUTH_LEN])
{
	size_t i;

	(void)arg;
	for (i = 0; i < WIRE_AUTH_LEN; i++)
		if (proof[i] != 0x42)
			return (-1);
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct engine_conf c;
	struct engine *e;
	struct wire_hello h;
	struct engine_ring r = { 0x200000, 4096, 9 };
	struct in in = { data, size };
	struct engine_stats st;
	uint32_t posted[RQ], slot, imm, u32, off;
	uint64_t seq_hi = 0;
	uint8_t op, b, msg[WIRE_MSG_SIZE];
	uint16_t len;
	int nposted = 0, auth;
	const char *why;
	struct engine_auth ea = { 0, prove, verify, NULL };

	memset(&c, 0, sizeof(c));
	c.sq_size = SQ;
	c.rq_size = RQ;
	c.max_streams = STREAMS;
	c.inline_size = 64;
	c.ctrl_send = ctrl_send;
	c.ctrl_send_addr = (uint64_t)(uintptr_t)ctrl_send;
	if ((e = engine_new(&c, &why)) == NULL)
		abort();
	/* The first byte picks the mode: odd, the peer must prove a key. */
	auth = size > 0 && (data[0] & 1);
	if (auth)
		engine_set_auth(e, &ea);
	drain(e, posted, &nposted, &seq_hi);
	engine_hello(e, &h);
	h.credits = RQ;
	engine_connected(e, &h);
	engine_open(e, "a", &r, &r, NULL);
	engine_open(e, "b", &r, &r, NULL);
	drain(e, posted, &nposted, &seq_hi);

	while (get(&in, &op, 1)) {
		switch (op % 10) {
		case 0:		/* a SEND arrives */
		case 1:
			if (!get(&in, &len, 2))
				break;
			len %= WIRE_MSG_SIZE + 1;
			if (in.n < len)
				len = (uint16_t)in.n;
			memcpy(msg, in.p, len);
			in.p += len;
			in.n -= len;
			slot = nposted > 0 ? posted[--nposted] : 0;
			engine_on_recv(e, slot, msg, len);
			break;
		case 2:		/* a WRITE WITH IMM arrives */
		case 3:
			if (!get(&in, &imm, 4) || !get(&in, &u32, 4))
				break;
			slot = nposted > 0 ? posted[--nposted] : u32 % 16;
			engine_on_recv_imm(e, slot, imm, u32 % 70000);
			break;
		case 4:		/* a send completion, maybe bogus */
			if (!get(&in, &b, 1))
				break;
			engine_on_send_done(e, b < 200 && seq_hi > 0 ?
			    seq_hi - 1 : (uint64_t)b * 977);
			break;
		case 5:		/* the application writes */
			if (!get(&in, &b, 1) || !get(&in, &u32, 4))
				break;
			if (engine_tx_space(e, b % STREAMS, &off) > 0)
				engine_tx_commit(e, b % STREAMS, u32 % 5000);
			break;
		case 6:		/* the application reads */
			if (!get(&in, &b, 1) || !get(&in, &u32, 4))
				break;
			if (engine_rx_data(e, b % STREAMS, &off) > 0)
				engine_rx_consume(e, b % STREAMS, u32 % 5000);
			break;
		case 7:		/* shutdown, close, reset */
			if (!get(&in, &b, 1))
				break;
			if (b % 3 == 0)
				engine_shutdown(e, (b >> 2) % STREAMS);
			else if (b % 3 == 1)
				engine_close(e, (b >> 2) % STREAMS);
			else
				engine_reset(e, (b >> 2) % STREAMS, b);
			break;
		case 8:		/* open another stream */
			engine_open(e, "c", &r, &r, NULL);
			break;
		case 9:
			engine_keepalive(e);
			break;
		}
		drain(e, posted, &nposted, &seq_hi);
		/* Nothing but the proof exchange before the proof. */
		if (auth && !engine_authenticated(e)) {
			engine_stats(e, &st);
			if (st.streams_active > 0)
				abort();
		}
	}
	engine_free(e);
	return (0);
}
