/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * libFuzzer target for the engine's input side: a live engine with a few
 * streams is fed arbitrary completions, immediates, SEND payloads and
 * application calls, decoded from the input one operation at a time.  The
 * engine may end the link (that is its job); it must never crash, read or
 * write out of bounds (ASan), hit undefined behaviour (UBSan), or break
 * its own bookkeeping (checked below).
 *
 * An input whose first byte is 0xe0 or above uses it as a mode byte
 * (bit 0: the peer must prove a key; bits 1-2: resume, see below; bit 3:
 * the adopt callback fails for odd ids; 0xe0 to 0xef: the peer's hello
 * says version 4, so a resume goes as before version 5); otherwise the
 * first byte is the first operation and its bit 0 picks authentication,
 * as before.  Resume modes link with a peer that offers resume and hold a
 * failed engine with three suspended streams (our ids 0, 1, 2, the
 * peer's 0, 1, 2; 1000 bytes sent on stream 0, 100 received on stream 2):
 *   1  this side connected: it resumes them at once (engine_resume), and
 *      the input plays the answering peer, whose RESUME_PROOF is right if
 *      it is all 0x5a bytes;
 *   2  this side answers: find hands the failed engine over (and its
 *      RESUME_PROOF), and the input plays the peer asking to resume;
 *   3  this side answers but find refuses every resume.
 *
 * Without resume the link can resize rings (protocol version 4): every
 * stream of the engine under test may grow its rings up to LIMIT, from
 * ring memory with made-up addresses (the engine never touches ring
 * memory), which the input can make the embedder refuse; it can also
 * trim.  The engine must never give back a ring twice, one it did not
 * get, or one of a stream it already released, nor keep using one it
 * gave back.
 *
 * An input whose first byte is 0xd0 to 0xdf seals the link (its low bits
 * as in the 0xe0 modes, at version 5) with ChaCha20-Poly1305, 0xc0 to
 * 0xcf the same with AES-256-GCM (ChaCha20-Poly1305 where the CPU lacks
 * it): the engine seals and opens with lib/seal, the daemon's sealing,
 * and the input plays a peer that seals what it sends with the same AEAD
 * and key, the next message number and the right associated data, so
 * that the engine's paths behind the open are reached: a SEND's records,
 * and a data WRITE's tag (SEND WITH IMM), whose payload the input puts
 * where it believes the stream's ring ends.  Ring memory is an arena
 * here, and every seal, open and restore must stay inside one ring.  A
 * tamper operation flips a bit of the next message: the link must end
 * with the seal error.  Another moves both directions' counts to just
 * below the next rekey boundary (SEAL_REKEY_EVERY), so that the keys are
 * renewed under the engine's feet, WRITEs outstanding.
 *
 * An input whose first byte is 0x90 to 0x9f runs a link of two lanes
 * (protocol version 8; bit 0 and bits 1-2 as in the 0xe0 modes): receive
 * slots of both lanes are posted, the input's SENDs land in whichever
 * slot comes next (so on either lane), DATA records among their records
 * are copied into the arena behind the stream's ring, and a completion
 * below 100 completes lane 0's last WR, from 100 to 199 lane 1's.  Lane 1
 * must carry nothing but SENDs, and a WR's lane must be its wr_id's.
 * Bit 3 (0x98 to 0x9f) seals the link as the 0xd0 modes do (protocol
 * version 9), each lane with keys of its own: the input's SENDs are
 * sealed for the lane whose receive slot they land in.
 *
 * An input whose first byte is 0x80 to 0x8f runs the same link without
 * immediate data (protocol version 11, as on iWARP): the engine must
 * post no WRITE or SEND WITH IMMEDIATE, every SEND it posts starts with
 * a notice, the records one or, right after a data WRITE on lane 0,
 * the WRITE's immediate, and every data WRITE asks for its completion.  The input's SENDs get the records notice in
 * front (sealed: the notice in clear, the records sealed); a WRITE WITH
 * IMM whose length is even arrives as the SEND of its notice (sealed:
 * and its tag), one whose length is odd as a WRITE WITH IMMEDIATE,
 * which ends the link.
 *
 * An input whose first byte is 0xb0 to 0xbf runs the identity handshake
 * (the newest version) with a stand-in step of four messages (as test_engine_auth's):
 * bit 0: this side connected (it sends messages 1 and 3, else 2 and the
 * confirmation, 4); bit 1: a key as well; bit 2: both ask for sealed
 * records; bit 3: with AES-256-GCM.  0xa0 to 0xaf: the same with a peer
 * whose hello says version 6, and three messages (no confirmation).  An
 * operation hands the engine the peer's next message, right or spoilt;
 * raw SENDs may carry HANDSHAKE records of their own.  The engine must
 * call the step for nothing but the peer's messages, in order, and never
 * after it ended; it must never count the peer authenticated before the
 * step said so, open before then, nor seal before the step gave it keys;
 * and from the SEND after its own last message on it seals everything,
 * that SEND and those before it nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "engine.h"
#include "engine_io.h"
#include "engine_stream.h"
#include "fuzz_engine.h"
#include "seal.h"
#include "wire.h"

#define SQ	8
#define RQ	8
#define STREAMS	4

/* Resizing: the rings' limit; fake ring memory, where and how much. */
#define LIMIT		65536
#define FAKE_BASE	0x10000000ULL
#define FAKE_STRIDE	0x100000ULL
#define MEMS		32
#define TAGS		8

static uint8_t ctrl_send[WIRE_LANES_MAX * SQ * WIRE_MSG_SIZE];
static uint8_t old_ctrl_send[SQ * WIRE_MSG_SIZE];

/* A ring engine_mem's alloc gave, and for which stream (its tag). */
struct fmem {
	int live;
	int tag;
	uint64_t addr;
	uint32_t size;
};

/*
 * The engine under test; its streams' user pointers are tags (&tags[k],
 * in use while tags[k] is set), so that their rings can be forgotten
 * when they are RELEASED.
 */
static struct engine *cur;
static struct fmem mems[MEMS];
static uint8_t tags[TAGS];
static int mem_refuse;		/* the embedder is out of ring memory */

/* How far the run got (fuzz_engine.h). */
struct fz_reach fz_reach;

/*
 * Sealing: ring memory behind the made-up addresses (the accept, open and
 * failed engine's rings, then alloc's), this side's two directions, and
 * the messages it sealed and opened.
 */
#define ARENAS		(3 + MEMS)
static uint8_t arena[ARENAS][LIMIT];
static struct seal_dir stx[2], srx[2];	/* per lane */
static struct seal_dir ptx[2];		/* the peer's sending ones */
static uint64_t seal_n, open_n;
static uint64_t tail[STREAMS];	/* bytes the input wrote per stream */

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

/* ---------------------------------------------------------------- memory */

/* A tag for a new stream of the engine under test. */
static void *
tag_get(void)
{
	int k;

	for (k = 0; k < TAGS; k++)
		if (!tags[k]) {
			tags[k] = 1;
			return (&tags[k]);
		}
	abort();	/* more streams than the engine holds */
}

/* The tag ${user} is, or -1 if it is none. */
static int
tag_of(const void *user)
{
	const uint8_t *p = user;

	if (p == NULL || p < tags || p >= tags + TAGS)
		return (-1);
	return ((int)(p - tags));
}

/* The stream tagged ${user} was released: its rings are forgotten. */
static void
tag_put(void *user)
{
	int t = tag_of(user), k;

	if (t < 0)
		return;
	if (!tags[t])
		abort();
	tags[t] = 0;
	for (k = 0; k < MEMS; k++)
		if (mems[k].live && mems[k].tag == t)
			mems[k].live = 0;
}

static int
mem_alloc(void *arg, void *user, int rx, uint32_t size, uint32_t replaces,
    struct engine_ring *ring)
{
	int t = tag_of(user), k;

	(void)arg;
	if (t < 0 || !tags[t] || size < 4096 || size > LIMIT ||
	    (size & (size - 1)) != 0 ||
	    (size != 2 * replaces && (size != 4096 || replaces <= size)))
		abort();
	if (mem_refuse)
		return (-1);
	for (k = 0; k < MEMS && mems[k].live; k++)
		;
	if (k == MEMS)
		return (-1);
	mems[k].live = 1;
	mems[k].tag = t;
	mems[k].addr = FAKE_BASE + (uint64_t)k * FAKE_STRIDE;
	mems[k].size = size;
	ring->addr = mems[k].addr;
	ring->size = size;
	ring->key = rx ? 0x700u + (uint32_t)k : 0x800u + (uint32_t)k;
	ring->mem = &mems[k];
	return (0);
}

static void
mem_free(void *arg, void *user, const struct engine_ring *ring)
{
	struct fmem *m = ring->mem;

	(void)arg;
	/* The first rings (engine_open's, engine_accept's) are not ours. */
	if (m == NULL) {
		if (ring->addr != 0x100000 && ring->addr != 0x200000)
			abort();
		return;
	}
	if (m < mems || m >= mems + MEMS || !m->live ||
	    m->addr != ring->addr || m->size != ring->size ||
	    m->tag != tag_of(user))
		abort();
	m->live = 0;
}

/* A ring the engine uses must be one it was given and still holds. */
static int
ring_held(uint64_t addr)
{
	uint64_t k;

	if (addr < FAKE_BASE)
		return (1);
	k = (addr - FAKE_BASE) / FAKE_STRIDE;
	return (k < MEMS && mems[k].live && mems[k].addr == addr);
}

/*
 * ${opens}: the engine opens sealed bytes, so a stream may read its
 * receive ring's private copy.  That is from the handshake's end on,
 * even while its own sends still go in clear: an initiator whose message
 * 3 waits for room to be posted seals only from the SEND after it.
 */
static void
check_rings(struct engine *e, int opens)
{
	struct engine_ring tx, rx;
	char b[ENGINE_FLAGS_STR_LEN];
	uint32_t id;

	for (id = 0; id < STREAMS; id++) {
		if (engine_rings(e, id, &tx, &rx) != 0)
			continue;
		if (tx.size > LIMIT || rx.size > LIMIT ||
		    !ring_held(tx.addr) || !ring_held(rx.addr) ||
		    !ring_held(engine_tx_base(e, id)) ||
		    (!ring_held(engine_rx_base(e, id)) && !opens)) {
			fprintf(stderr, "stream %u (%s): a ring it was not "
			    "given, or no longer holds\n", (unsigned)id,
			    engine_stream_flags_str(e, id, b, sizeof(b)));
			abort();
		}
	}
}

/* Open a stream on the engine under test, which may resize its rings. */
static int
open_stream(struct engine *e, const char *name,
    const struct engine_ring *r)
{
	void *tag = tag_get();
	int id;

	if ((id = engine_open(e, name, r, r, tag)) < 0)
		tag_put(tag);
	else
		engine_ring_limits(e, (uint32_t)id, LIMIT, LIMIT);
	return (id);
}

/* ---------------------------------------------------------------- sealing */

/* The arena ring memory at made-up address ${addr} lives in, or NULL. */
static uint8_t *
arena_of(uint64_t addr, uint64_t *base)
{
	static const uint64_t first[3] = { 0x100000, 0x200000, 0x300000 };
	uint64_t k;

	for (k = 0; k < 3; k++)
		if (addr >= first[k] && addr < first[k] + LIMIT) {
			*base = first[k];
			return (arena[k]);
		}
	if (addr < FAKE_BASE || (k = (addr - FAKE_BASE) / FAKE_STRIDE) >= MEMS)
		return (NULL);
	*base = FAKE_BASE + k * FAKE_STRIDE;
	return (addr - *base < LIMIT ? arena[3 + k] : NULL);
}

static uint8_t *
sptr(void *arg, uint64_t addr)
{
	uint64_t base;
	uint8_t *a = arena_of(addr, &base);

	(void)arg;
	if (a == NULL)
		abort();	/* ring memory the engine was never given */
	return (a + (addr - base));
}

/* ${len} bytes at ${buf}: a control slot, a message, or inside one ring. */
static void
in_bounds(const uint8_t *buf, uint32_t len, const uint8_t *msg)
{
	size_t k;

	if (msg != NULL && buf >= msg && buf + len <= msg + WIRE_MSG_SIZE)
		return;
	if (buf >= ctrl_send && buf + len <= ctrl_send + sizeof(ctrl_send))
		return;
	for (k = 0; k < ARENAS; k++)
		if (buf >= arena[k] && buf + len <= arena[k] + LIMIT)
			return;
	abort();
}

static const uint8_t *cur_msg;	/* the message being fed, for in_bounds */

static uint64_t
sseal(void *arg, unsigned lane, uint8_t *buf, uint32_t len,
    const uint8_t *ad, size_t adlen, uint8_t tag[WIRE_TAG_LEN])
{

	(void)arg;
	/* Lane 1 carries SENDs only, sealed in the control send area. */
	if (lane > 1 || (lane == 1 && (buf < ctrl_send ||
	    buf + len > ctrl_send + sizeof(ctrl_send))))
		abort();
	in_bounds(buf, len, cur_msg);
	seal_n++;
	return (seal_dir_seal(&stx[lane], buf, len, ad, adlen, tag));
}

static int
sopen(void *arg, unsigned lane, uint8_t *buf, uint32_t len,
    const uint8_t *ad, size_t adlen, const uint8_t tag[WIRE_TAG_LEN])
{

	(void)arg;
	if (lane > 1)
		abort();
	if (seal_dir_open(&srx[lane], buf, len, ad, adlen, tag) != 0)
		return (-1);
	open_n++;
	return (0);
}

static int
srestore(void *arg, uint8_t *buf, uint32_t len, const uint8_t *ad,
    size_t adlen, uint64_t n, const uint8_t tag[WIRE_TAG_LEN])
{

	(void)arg;
	in_bounds(buf, len, NULL);
	return (seal_dir_restore(&stx[0], buf, len, ad, adlen, n, tag));
}

/*
 * The peer seals ${len} bytes at ${buf} as the next message it sends on
 * ${lane}, with its own sending direction of that lane: keyed as this
 * side's receiving one, as a real peer's is, and counting on its own.
 */
static void
peer_seal(unsigned lane, uint8_t *buf, uint32_t len, const uint8_t *ad,
    size_t adlen, uint8_t tag[WIRE_TAG_LEN])
{

	(void)seal_dir_seal(&ptx[lane], buf, len, ad, adlen, tag);
}

/* Both directions of both lanes sealed with ${aead}, from message 0. */
static void
seal_start(enum seal_aead aead)
{
	static const uint8_t key_tx[2][SEAL_KEY_LEN] = { { 1 }, { 3 } };
	static const uint8_t key_rx[2][SEAL_KEY_LEN] = { { 2 }, { 4 } };
	int l;

	/* The last input's directions go. */
	for (l = 0; l < 2; l++) {
		seal_dir_wipe(&stx[l]);
		seal_dir_wipe(&srx[l]);
		seal_dir_wipe(&ptx[l]);
		if (seal_dir_init(&stx[l], aead, key_tx[l]) != 0 ||
		    seal_dir_init(&srx[l], aead, key_rx[l]) != 0 ||
		    seal_dir_init(&ptx[l], aead, key_rx[l]) != 0)
			abort();
	}
	seal_n = open_n = 0;
}

/*
 * The count of ${d} jumps to ${before} messages below the next rekey
 * boundary, and so does ${peer}'s, the other end of that direction, if
 * not NULL.  Not just after a boundary: a WRITE of the epoch before may
 * be outstanding, and its restore needs the key that the jump would
 * forget.
 */
static void
near_rekey(struct seal_dir *d, struct seal_dir *peer, uint32_t before)
{
	uint64_t n = seal_dir_count(d), to;

	if (n >= SEAL_REKEY_EVERY && n % SEAL_REKEY_EVERY < 64)
		return;
	to = (n / SEAL_REKEY_EVERY + 1) * SEAL_REKEY_EVERY - before;
	if (to <= n)
		return;
	seal_dir_set_count_for_test(d, to);
	if (peer != NULL)
		seal_dir_set_count_for_test(peer, to);
}

/* Did the link end with the seal error? */
static int
seal_failed(struct engine *e)
{
	const char *why = engine_error(e);

	return (why != NULL && strcmp(why, "sealed record failed "
	    "authentication (tampered or injected)") == 0);
}

/* A flipped bit must end the link with the seal error. */
static void
tampered(struct engine *e)
{

	if (!seal_failed(e))
		abort();
}

/*
 * The peer's sealed data WRITE ${imm} lands where the input believes the
 * stream's ring ends, and its tag arrives in ${slot}.
 */
static void
sealed_data(struct engine *e, uint32_t slot, uint32_t imm, int tamper)
{
	struct engine_ring tx, rx;
	struct engine_stats a, b;
	uint8_t msg[WIRE_NOTICE_LEN + WIRE_TAG_LEN], ad[4] = {
	    (uint8_t)(imm >> 24), (uint8_t)(imm >> 16), (uint8_t)(imm >> 8),
	    (uint8_t)imm };
	uint8_t *tag = msg + WIRE_NOTICE_LEN;
	uint32_t id = STREAMS, n = 0, off;
	uint8_t *p;

	/* Without immediates: a SEND of its notice (the immediate), then
	 * the tag. */
	memcpy(msg, ad, sizeof(ad));
	memset(tag, 0, WIRE_TAG_LEN);
	if (wire_imm_decode(imm, &id, &n) == WIRE_OK && id < STREAMS &&
	    engine_rings(e, id, &tx, &rx) == 0 && rx.size <= LIMIT) {
		off = (uint32_t)(tail[id] % rx.size);
		if (n > rx.size - off)
			n = rx.size - off;
		p = sptr(NULL, rx.addr + off);
		memset(p, (int)(tail[id] + id), n);
		peer_seal(0, p, n, ad, sizeof(ad), tag);
		if (tamper)
			p[0] ^= 0x10;
	}
	engine_stats(e, &a);
	if (engine_notify(e))
		engine_on_recv(e, slot, msg, sizeof(msg));
	else
		engine_on_recv_tag(e, slot, imm, tag, WIRE_TAG_LEN);
	engine_stats(e, &b);
	if (id < STREAMS)
		tail[id] += b.bytes_rx - a.bytes_rx;
}

/* ---------------------------------------------------------------- events */

/* Events of any engine: ids stay in range; INCOMING is accepted. */
static void
events(struct engine *e)
{
	struct engine_event ev;
	struct engine_ring r = { 0x100000, 4096, 7, NULL };
	void *tag;

	while (engine_next_event(e, &ev)) {
		if (ev.stream >= STREAMS)
			abort();
		if (e == cur) {
			fz_reach.events |= ev.flags;
			if ((ev.flags & ENGINE_EV_INCOMING) &&
			    engine_origin(e, ev.stream) != NULL)
				fz_reach.origins++;
		}
		/* A suspended stream waits in a failed engine, nowhere else. */
		if ((ev.flags & ENGINE_EV_SUSPENDED) && engine_error(e) == NULL)
			abort();
		if ((ev.flags & ENGINE_EV_INCOMING) && e != cur) {
			engine_accept(e, ev.stream, &r, &r, NULL);
		} else if (ev.flags & ENGINE_EV_INCOMING) {
			tag = tag_get();
			if (engine_accept(e, ev.stream, &r, &r, tag) == 0)
				engine_ring_limits(e, ev.stream, LIMIT, LIMIT);
			else
				tag_put(tag);
		}
		if (ev.flags & ENGINE_EV_RELEASED)
			tag_put(ev.user);
		if ((ev.flags & ENGINE_EV_RELEASED) && e == cur)
			tail[ev.stream] = 0;
	}
}

static uint32_t
be32(const uint8_t *p)
{

	return ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3]);
}

/*
 * On a link without immediates: is WR ${w} wrong?  No immediate at all;
 * a SEND starts with a notice, the one ${*notice} of the WRITE before it
 * on lane 0 if that is ${*due}, else the records notice.
 */
static int
notice_bad(const struct engine_wr *w, int *due, uint32_t *notice)
{
	uint32_t got;

	if (w->op == ENGINE_WR_WRITE_IMM || w->op == ENGINE_WR_SEND_IMM)
		return (1);
	if (w->op == ENGINE_WR_WRITE) {
		/* Signalled: its ring bytes change only after its own
		 * completion (engine_notify). */
		if (*due || w->lane != 0 || !w->signaled)
			return (1);
		*due = 1;
		*notice = w->imm;
		return (0);
	}
	if (w->len < WIRE_NOTICE_LEN)
		return (1);
	got = be32((const uint8_t *)(uintptr_t)w->local_addr);
	if (w->lane == 0 && *due) {
		*due = 0;
		return (got != *notice);
	}
	return (got != WIRE_NOTICE_RECORDS);
}

static void
drain(struct engine *e, uint32_t *posted, int *nposted, uint64_t *seq_hi)
{
	struct engine_wr wrs[8];
	uint32_t slots[WIRE_LANES_MAX * RQ], notice = 0;
	int n, k, notify = engine_notify(e), due = 0;

	n = engine_take_recvs(e, slots, WIRE_LANES_MAX * RQ);
	for (k = 0; k < n && *nposted < WIRE_LANES_MAX * RQ; k++)
		posted[(*nposted)++] = slots[k];
	while ((n = engine_take_wrs(e, wrs, 8)) > 0) {
		for (k = 0; k < n; k++) {
			if (wrs[k].len == 0 || wrs[k].len > WIRE_WRITE_MAX)
				abort();
			if (wrs[k].op == ENGINE_WR_SEND &&
			    wrs[k].len > WIRE_MSG_SIZE)
				abort();
			if (wrs[k].lane > 1 || (wrs[k].lane == 1) !=
			    (wrs[k].wr_id >> ENGINE_WR_LANE_SHIFT))
				abort();
			/* Two lanes: a SEND on lane 1 only; seq_hi[lane]. */
			if (wrs[k].lane == 1 && wrs[k].op != ENGINE_WR_SEND)
				abort();
			if (notify && notice_bad(&wrs[k], &due, &notice))
				abort();
			seq_hi[wrs[k].lane] = wrs[k].wr_id + 1;
		}
		if (n < 8)
			break;
	}
	/* A WRITE's notice goes with it, not in a later drain. */
	if (due)
		abort();
	events(e);
}

/* Authentication mode: a proof of all 0x42 bytes is the right one. */
static void
prove(void *arg, uint8_t proof[WIRE_AUTH_LEN])
{

	(void)arg;
	memset(proof, 0x17, WIRE_AUTH_LEN);
}

/* 0 if ${proof} is all ${b} bytes, else -1. */
static int
proof_is(const uint8_t proof[WIRE_AUTH_LEN], uint8_t b)
{
	size_t i;

	for (i = 0; i < WIRE_AUTH_LEN; i++)
		if (proof[i] != b)
			return (-1);
	return (0);
}

static int
verify(void *arg, const uint8_t proof[WIRE_AUTH_LEN])
{

	(void)arg;
	return (proof_is(proof, 0x42));
}

/* ---------------------------------------------------------------- handshake */

/*
 * The identity handshake's stand-in: message i (1 to 3) is HS_LEN * i
 * bytes of HS_FLEET + i, the confirmation (4, version 7) HS_CONFIRM
 * bytes of HS_FLEET + 4; the initiator sends 1 and 3, the responder 2
 * and 4.
 */
#define HS_LEN		64
#define HS_CONFIRM	32
#define HS_FLEET	0x60

struct fhs {
	int initiator;
	int v6;			/* the link's version is 6: no confirmation */
	int calls;		/* the step ran this many times */
	int done;		/* it said ENGINE_HS_DONE */
	int failed;		/* it said -1 */
	int keys;		/* it said ENGINE_HS_KEYS or DONE */
	int had_msg;		/* ... with this side's last message */
	uint64_t base;		/* ... when the engine had posted this many
				   SENDs and WRITEs */
};

static struct fhs fh;

/* The message the step takes next from the peer (0: none, the first). */
static int
hs_want(const struct fhs *h)
{

	return (h->initiator ? 2 * h->calls : 2 * h->calls + 1);
}

/* Message ${m}'s length. */
static size_t
hs_len(int m)
{

	return (m < 4 ? (size_t)(HS_LEN * m) : HS_CONFIRM);
}

static int
hs_step(void *arg, const uint8_t *in, size_t inlen, uint8_t *out,
    size_t *outlen, const char **why)
{
	struct fhs *h = arg;
	struct engine_stats st;
	int want = hs_want(h), last = h->v6 ? 3 : 4, rc;
	size_t i;

	/* Only the peer's messages, in turn, and nothing once it ended. */
	if (h->done || h->failed || want > last || (in == NULL) != (want == 0))
		abort();
	h->calls++;
	*outlen = 0;
	if (in != NULL) {
		for (i = 0; i < inlen && in[i] == HS_FLEET + want; i++)
			;
		if (inlen != hs_len(want) || i < inlen) {
			h->failed = 1;
			*why = "not of this fleet";
			return (-1);
		}
	}
	if (want < last) {
		*outlen = hs_len(want + 1);
		memset(out, HS_FLEET + want + 1, *outlen);
	}
	rc = want == last || want + 1 == last ? ENGINE_HS_DONE :
	    want + 1 == 3 ? ENGINE_HS_KEYS : ENGINE_HS_MORE;
	if (rc != ENGINE_HS_MORE && !h->keys) {
		engine_stats(cur, &st);
		h->keys = 1;
		h->had_msg = *outlen > 0;
		h->base = st.sends + st.writes;
	}
	h->done = rc == ENGINE_HS_DONE;
	return (rc);
}

/*
 * The peer's next handshake message in a HANDSHAKE record at ${msg},
 * spoilt as ${b} says (bit 0: a byte, bit 1: its length); returns the
 * record's length.
 */
static uint16_t
hs_msg(uint8_t *msg, uint8_t b)
{
	struct wire_rec r;
	int m = hs_want(&fh);

	if (m == 0 || m > (fh.v6 ? 3 : 4))
		m = fh.initiator ? 2 : 1;
	memset(&r, 0, sizeof(r));
	r.type = WIRE_HANDSHAKE;
	r.hs_len = (uint8_t)hs_len(m);
	memset(r.hs, HS_FLEET + m, r.hs_len);
	if (b & 1)
		r.hs[(b >> 2) % r.hs_len] ^= 0x40;
	if (b & 2)
		r.hs_len--;
	return ((uint16_t)wire_rec_encode(msg, WIRE_MSG_SIZE, &r));
}

/* ---------------------------------------------------------------- resume */

struct res {
	struct engine *old;	/* the failed engine, until given up */
	int refuse;		/* find refuses */
	int adopt_fails;	/* adopt fails for odd ids */
	int adopted;		/* the adopted callback ran */
};

static struct engine *
res_find(void *arg, const uint8_t token[WIRE_NONCE_LEN],
    const uint8_t proof[WIRE_AUTH_LEN], uint8_t answer[WIRE_AUTH_LEN],
    uint16_t *reason)
{
	struct res *R = arg;

	(void)token;
	(void)proof;
	if (R->refuse || R->old == NULL) {
		*reason = WIRE_REASON_DENIED;
		return (NULL);
	}
	memset(answer, 0x5a, WIRE_AUTH_LEN);
	return (R->old);
}

/* Version 5: a RESUME_PROOF of all 0x5a bytes is the right one. */
static int
res_proved(void *arg, const uint8_t proof[WIRE_AUTH_LEN])
{

	(void)arg;
	return (proof_is(proof, 0x5a));
}

static int
res_adopt(void *arg, uint32_t id, void *user, struct engine_ring *tx,
    struct engine_ring *rx)
{
	struct res *R = arg;

	(void)user;
	if (id >= STREAMS || tx->size != 4096 || rx->size != 4096)
		abort();
	if (R->adopt_fails && (id & 1))
		return (-1);
	rx->key = 0x900 + id;
	/* 100 bytes came in on stream 2: a sealed WRITE lands after them. */
	tail[id] = id == 2 ? 100 : 0;
	return (0);
}

static void
res_adopted(void *arg, struct engine *old)
{
	struct res *R = arg;

	if (old != R->old)
		abort();
	R->adopted = 1;
	fz_reach.adopted = 1;
}

/* Give up the failed engine: its other streams end, and it goes. */
static void
res_drop(struct res *R)
{

	if (R->old == NULL)
		return;
	engine_abandon(R->old, WIRE_REASON_LINK_LOST);
	events(R->old);
	if (engine_suspended(R->old) != 0 || engine_active(R->old) != 0)
		abort();
	engine_free(R->old);
	R->old = NULL;
}

/*
 * A failed engine with three suspended streams: two it opened (0 and 1,
 * the peer's 0 and 1), one the peer opened (2, the peer's 2).
 */
static struct engine *
make_old(void)
{
	struct engine_conf c;
	struct engine *o;
	struct engine_ring r = { 0x300000, 4096, 11, NULL };
	struct engine_wr wrs[8];
	struct wire_hello h;
	struct wire_rec rec;
	uint8_t msg[WIRE_MSG_SIZE];
	uint32_t slots[RQ], off;
	size_t len = 0;
	const char *why;
	int k;

	memset(&c, 0, sizeof(c));
	c.sq_size = SQ;
	c.rq_size = RQ;
	c.max_streams = STREAMS;
	c.ctrl_send = old_ctrl_send;
	c.ctrl_send_addr = (uint64_t)(uintptr_t)old_ctrl_send;
	c.resume = 1;
	if ((o = engine_new(&c, &why)) == NULL)
		abort();
	(void)engine_take_recvs(o, slots, RQ);
	engine_hello(o, &h);
	engine_connected(o, &h);
	for (k = 0; k < 2; k++) {
		if (engine_open(o, k ? "b" : "a", &r, &r, NULL) != k ||
		    engine_keep(o, (uint32_t)k) != 0)
			abort();
	}
	while (engine_take_wrs(o, wrs, 8) == 8)
		;
	memset(&rec, 0, sizeof(rec));
	rec.ring.addr = 0x400000;
	rec.ring.rkey = 5;
	rec.ring.size = 4096;
	for (k = 0; k < 2; k++) {
		rec.type = WIRE_OPEN_OK;
		rec.stream = (uint32_t)k;
		rec.peer_stream = (uint32_t)k;
		len += wire_rec_encode(msg + len, sizeof(msg) - len, &rec);
	}
	rec.type = WIRE_OPEN;
	rec.stream = 2;
	rec.name_len = 1;
	rec.name[0] = 'c';
	len += wire_rec_encode(msg + len, sizeof(msg) - len, &rec);
	if (engine_on_recv(o, slots[0], msg, (uint32_t)len) != 0)
		abort();
	events(o);
	if (engine_keep(o, 2) != 0 ||
	    engine_on_recv_imm(o, slots[1], wire_imm_encode(2, 100), 100) != 0)
		abort();
	if (engine_tx_space(o, 0, &off) < 1000 ||
	    engine_tx_commit(o, 0, 1000) != 0)
		abort();
	while (engine_take_wrs(o, wrs, 8) == 8)
		;
	engine_stopped(o);
	engine_fail(o, ENGINE_ERR_TRANSPORT, "link lost");
	events(o);
	if (engine_suspended(o) != 3)
		abort();
	return (o);
}

/* ---------------------------------------------------------------- run */

/* One input's run: the engine under test and what the input told it. */
struct fz {
	struct engine *e;
	struct in in;
	struct res R;
	uint32_t posted[WIRE_LANES_MAX * RQ];
	int nposted;
	uint64_t seq_hi[WIRE_LANES_MAX], clock_ns;
	int lanes;		/* the link runs two lanes (0x90 modes) */
	int notify;		/* ... without immediates (0x80 modes) */
	int auth;		/* the peer must prove a key or an identity */
	int resume;		/* the resume mode (1 to 3), or 0 */
	int v4;			/* the peer's hello says version 4 */
	int hs;			/* the identity handshake, not a proof */
	int hs_key;		/* and a key as well */
	int hs_seal;		/* which seals once the handshake is done */
	int seal_mode;		/* sealed from the start */
	enum seal_aead aead;
	int sealed;		/* the input's messages are sealed now */
	int tamper;		/* flip a bit of the next message */
};

/* The mode byte ${m} (0xa0 and above), as the top of this file says. */
static void
parse_mode(struct fz *F, uint8_t m)
{

	F->aead = SEAL_CHACHAPOLY;
	if (m < 0xa0) {
		/* 0x80 to 0x9f: two lanes, as the top of this file says. */
		F->notify = m < 0x90;
		F->lanes = 1;
		F->auth = m & 1;
		F->resume = (m >> 1) & 3;
		F->seal_mode = (m >> 3) & 1;
		return;
	}
	if (m < 0xc0) {
		F->hs = F->auth = 1;
		fh.initiator = m & 1;
		fh.v6 = m < 0xb0;
		F->hs_key = (m >> 1) & 1;
		F->hs_seal = (m >> 2) & 1;
		if ((m & 8) && seal_aesgcm_available())
			F->aead = SEAL_AESGCM;
		return;
	}
	F->seal_mode = m < 0xe0;
	F->auth = m & 1;
	F->resume = (m >> 1) & 3;
	F->R.adopt_fails = (m >> 3) & 1;
	F->v4 = m >= 0xe0 && m < 0xf0;
	if (m < 0xd0 && seal_aesgcm_available())
		F->aead = SEAL_AESGCM;
}

/* How the engine under test authenticates the peer, and seals. */
static void
set_auth(struct fz *F)
{
	struct engine_auth ea = { .prove = prove, .verify = verify };
	struct engine_seal es = { sseal, sopen, srestore, sptr, NULL };

	if (F->hs) {
		ea.initiator = fh.initiator;
		ea.step = hs_step;
		ea.arg = &fh;
		ea.key = (uint8_t)F->hs_key;
		ea.seal = (uint8_t)F->hs_seal;
		ea.aesgcm = F->aead == SEAL_AESGCM;
	}
	if (F->auth)
		engine_set_auth(F->e, &ea);
	if (F->seal_mode || F->hs)
		engine_set_seal(F->e, &es);
}

/* The engine under test, its callbacks, connected to the input's peer. */
static void
start(struct fz *F, const uint8_t *data, size_t size)
{
	struct engine_mem em = { mem_alloc, mem_free, NULL };
	struct engine_resume er;
	struct engine_conf c;
	struct wire_hello h;
	const char *why;

	if (sodium_init() < 0)
		abort();
	memset(F, 0, sizeof(*F));
	memset(&fh, 0, sizeof(fh));
	memset(tail, 0, sizeof(tail));
	F->in.p = data;
	F->in.n = size;
	F->clock_ns = 1;
	if (size > 0 && data[0] >= 0x80) {
		parse_mode(F, data[0]);
		F->in.p++;
		F->in.n--;
	} else {
		/* The first byte picks the mode: odd, the peer proves a key. */
		F->auth = size > 0 && (data[0] & 1);
	}
	seal_start(F->aead);
	memset(&c, 0, sizeof(c));
	c.sq_size = SQ;
	c.rq_size = RQ;
	c.max_streams = STREAMS;
	c.inline_size = 64;
	c.ctrl_send = ctrl_send;
	c.ctrl_send_addr = (uint64_t)(uintptr_t)ctrl_send;
	c.resume = F->resume != 0;
	if (F->lanes) {
		c.lanes = 2;
		c.ring_ptr = sptr;
	}
	c.notify = (uint8_t)F->notify;
	if ((F->e = engine_new(&c, &why)) == NULL)
		abort();
	cur = F->e;
	memset(mems, 0, sizeof(mems));
	memset(tags, 0, sizeof(tags));
	mem_refuse = 0;
	engine_set_mem(F->e, &em);
	set_auth(F);
	if (F->resume) {
		F->R.refuse = F->resume == 3;
		if (F->resume != 3)
			F->R.old = make_old();
		er.find = F->resume == 1 ? NULL : res_find;
		er.proved = res_proved;
		er.adopt = res_adopt;
		er.adopted = res_adopted;
		er.denied = NULL;
		er.arg = &F->R;
		engine_set_resume(F->e, &er);
	}
	drain(F->e, F->posted, &F->nposted, F->seq_hi);
	/* The peer is one of us: its hello says what ours says. */
	engine_hello(F->e, &h);
	h.credits = RQ;
	if (F->v4)
		h.version = 4;
	if (F->hs && fh.v6)
		h.version = 6;
	engine_connected(F->e, &h);
	if (engine_notify(F->e) != F->notify)
		abort();
	if (F->lanes) {
		if (engine_lanes(F->e) != 2)
			abort();
		/* Lane 1's receives go before it connects; then it is up. */
		drain(F->e, F->posted, &F->nposted, F->seq_hi);
		engine_lane_hello(F->e, &h);
		if (engine_lane_up(F->e, &h) != 0)
			abort();
	}
	if (!F->hs) {
		engine_seal_tx(F->e);
		engine_seal_rx(F->e);
	}
	F->sealed = F->seal_mode;
	/* With identities, nothing is sealed before the handshake. */
	if (F->sealed != engine_sealed(F->e))
		abort();
}

/* The resume and the streams the run starts with. */
static void
first_streams(struct fz *F, const struct engine_ring *r)
{
	uint8_t token[WIRE_NONCE_LEN] = { 0 }, proof[WIRE_AUTH_LEN] = { 0 };
	int id;

	if (F->resume == 1) {
		/* Before authentication this fails, and the streams end. */
		id = engine_resume(F->e, F->R.old, token, proof);
		if (id > 3 || (id < 0 && engine_authenticated(F->e)))
			abort();
		res_drop(&F->R);
	}
	if (F->resume != 2) {
		open_stream(F->e, "a", r);
		open_stream(F->e, "b", r);
	}
	drain(F->e, F->posted, &F->nposted, F->seq_hi);
}

/*
 * The receive slot the next message takes: the last one posted, or on a
 * link of two lanes the last one of ${lane}'s (any, if it has none left).
 */
static uint32_t
take_slot(struct fz *F, unsigned lane, uint32_t none)
{
	uint32_t slot;
	int k;

	if (F->nposted == 0)
		return (none);
	k = F->nposted - 1;
	if (F->lanes)
		while (k > 0 && engine_slot_lane(F->e, F->posted[k]) != lane)
			k--;
	slot = F->posted[k];
	F->posted[k] = F->posted[--F->nposted];
	return (slot);
}

/*
 * A SEND of ${len} bytes at ${msg} arrives, sealed by the peer if the
 * link seals by now (in place, its tag after it: then len is at most
 * WIRE_MSG_SIZE - WIRE_TAG_LEN, and less a notice), and a bit flipped if
 * the input said so.  On a link without immediates its records notice
 * is in front of ${msg} (F->notify bytes there are the caller's).
 */
static void
peer_send(struct fz *F, uint8_t *msg, uint16_t len, unsigned lane)
{
	uint32_t slot;
	int healthy;

	/* A healthy link fails at the open, nowhere else. */
	healthy = engine_error(F->e) == NULL && F->nposted > 0 &&
	    (!F->sealed || len > 0);
	slot = take_slot(F, lane, 0);
	if (F->sealed) {
		/* Sealed for the lane whose slot it lands in. */
		peer_seal(F->lanes ? engine_slot_lane(F->e, slot) : 0, msg,
		    len, NULL, 0, msg + len);
		msg[0] ^= (uint8_t)F->tamper;
		len += WIRE_TAG_LEN;
	}
	if (F->notify) {
		msg -= WIRE_NOTICE_LEN;
		len += WIRE_NOTICE_LEN;
		msg[0] = 0x40;
		msg[1] = msg[2] = msg[3] = 0;
	}
	cur_msg = msg;
	engine_on_recv(F->e, slot, msg, len);
	cur_msg = NULL;
	if (F->tamper && (engine_error(F->e) == NULL || healthy))
		tampered(F->e);
	/* What the peer sealed right opens, whatever the count. */
	if (F->sealed && !F->tamper && healthy && seal_failed(F->e))
		abort();
	F->tamper = 0;
}

/* Operations 0 to 3: the peer's SENDs, WRITEs, and sealed WRITEs' tags. */
static void
op_peer(struct fz *F, uint8_t op)
{
	uint8_t buf[WIRE_MSG_SIZE], *msg = buf;
	uint32_t slot, imm, u32;
	uint16_t len, room = WIRE_MSG_SIZE;

	if (op < 2) {		/* a SEND arrives (sealed: by the peer) */
		if (!get(&F->in, &len, 2))
			return;
		len %= WIRE_MSG_SIZE + 1;
		if (F->notify) {
			msg += WIRE_NOTICE_LEN;
			room -= WIRE_NOTICE_LEN;
		}
		if (F->sealed)
			room -= WIRE_TAG_LEN;
		if (len > room)
			len = room;
		if (F->in.n < len)
			len = (uint16_t)F->in.n;
		memcpy(msg, F->in.p, len);
		F->in.p += len;
		F->in.n -= len;
		/* Two lanes: 0 on lane 1, 1 on lane 0. */
		peer_send(F, msg, len, op == 0);
		return;
	}
	/* A WRITE WITH IMM (sealed: a tag) arrives. */
	if (!get(&F->in, &imm, 4) || !get(&F->in, &u32, 4))
		return;
	/* Two lanes: 2 on lane 0, 3 on lane 1 (where it ends the link). */
	slot = take_slot(F, op == 3, u32 % 16);
	if (F->notify && !F->sealed && !(u32 & 1)) {
		/* The SEND of its notice: the WRITE landed. */
		memcpy(buf, (uint8_t[4]){ (uint8_t)(imm >> 24),
		    (uint8_t)(imm >> 16), (uint8_t)(imm >> 8), (uint8_t)imm },
		    WIRE_NOTICE_LEN);
		engine_on_recv(F->e, slot, buf, WIRE_NOTICE_LEN);
	} else if (!F->sealed || (u32 & 1))
		engine_on_recv_imm(F->e, slot, imm, u32 % 70000);
	else
		sealed_data(F->e, slot, imm, F->tamper);
	if (F->sealed && F->tamper && !(u32 & 1) && engine_error(F->e) == NULL)
		abort();
	F->tamper = 0;
}

/* Operations 4 to 12: the application, the clock, the embedder. */
static void
op_local(struct fz *F, uint8_t op, const struct engine_ring *r)
{
	struct engine *e = F->e;
	uint32_t u32, off;
	uint8_t b;
	int id, k;

	switch (op) {
	case 4:		/* a send completion, maybe bogus */
		if (!get(&F->in, &b, 1))
			break;
		/* Two lanes: below 100 lane 0's last, then lane 1's. */
		k = F->lanes && b >= 100 && b < 200 ? 1 : 0;
		engine_on_send_done(e, b < 200 && F->seq_hi[k] > 0 ?
		    F->seq_hi[k] - 1 : (uint64_t)b * 977);
		break;
	case 5:		/* the application writes */
		if (!get(&F->in, &b, 1) || !get(&F->in, &u32, 4))
			break;
		if (engine_tx_space(e, b % STREAMS, &off) > 0)
			engine_tx_commit(e, b % STREAMS, u32 % 5000);
		break;
	case 6:		/* the application reads */
		if (!get(&F->in, &b, 1) || !get(&F->in, &u32, 4))
			break;
		if (engine_rx_data(e, b % STREAMS, &off) > 0)
			engine_rx_consume(e, b % STREAMS, u32 % 5000);
		break;
	case 7:		/* shutdown, close, reset */
		if (!get(&F->in, &b, 1))
			break;
		if (b % 3 == 0)
			engine_shutdown(e, (b >> 2) % STREAMS);
		else if (b % 3 == 1)
			engine_close(e, (b >> 2) % STREAMS);
		else
			engine_reset(e, (b >> 2) % STREAMS, b);
		break;
	case 8:		/* open another stream, kept if it can be */
		id = open_stream(e, "c", r);
		if (id >= 0 && F->resume)
			engine_keep(e, (uint32_t)id);
		break;
	case 9:
		engine_keepalive(e);
		break;
	case 10:	/* idle rings shrink (on a second trim) */
		engine_trim(e);
		break;
	case 11:	/* ring memory runs out, or comes back */
		if (!get(&F->in, &b, 1))
			break;
		mem_refuse = b & 1;
		break;
	case 12:	/* time passes; the scheduler is retuned */
		if (!get(&F->in, &b, 1) || !get(&F->in, &u32, 4))
			break;
		if (b % 3 == 0)
			engine_clock(e, F->clock_ns += u32);
		else if (b % 3 == 1)
			engine_window_share(e, u32 % 1001);
		else
			engine_set_weight(e, (b >> 2) % STREAMS,
			    u32 % (ENGINE_WEIGHT_MAX + 2));
		break;
	}
}

/* Operations 13 to 15: the wire, the keys, the handshake. */
static void
op_link(struct fz *F, uint8_t op)
{
	uint8_t buf[WIRE_MSG_SIZE], b;
	uint8_t *msg = buf + (F->notify ? WIRE_NOTICE_LEN : 0);

	switch (op) {
	case 13:	/* the wire flips a bit of the next message */
		F->tamper = F->sealed ? 1 : 0;
		break;
	case 14:	/* both directions come close to renewing their keys */
		if (!get(&F->in, &b, 1))
			break;
		near_rekey(&stx[0], NULL, 1 + (b & 15));
		near_rekey(&srx[0], &ptx[0], 1 + (b >> 4));
		if (F->lanes) {
			near_rekey(&stx[1], NULL, 1 + (b & 15));
			near_rekey(&srx[1], &ptx[1], 1 + (b >> 4));
		}
		break;
	case 15:	/* the peer's next handshake message, maybe spoilt */
		if (!get(&F->in, &b, 1))
			break;
		peer_send(F, msg, hs_msg(msg, b), 0);
		break;
	}
}

/* After each operation: the engine's bookkeeping holds. */
static void
check(struct fz *F)
{
	struct engine *e = F->e;
	struct engine_stats st;

	engine_stats(e, &st);
	/* Nothing but the proof exchange before the proof. */
	if (F->auth && !engine_authenticated(e) && st.streams_active > 0)
		abort();
	/*
	 * Authenticated exactly when the step said so, and nothing opened
	 * before; nothing sealed before the keys, and once they came every
	 * SEND and WRITE sealed from the one after this side's last message
	 * on (that message's SEND in clear).
	 */
	if (F->hs && (engine_authenticated(e) != fh.done ||
	    (!fh.done && st.opened_msgs != 0) ||
	    (!fh.keys && st.sealed_msgs != 0) ||
	    (fh.keys && F->hs_seal && st.sealed_msgs != (st.sends +
	    st.writes - fh.base > (uint64_t)fh.had_msg ? st.sends +
	    st.writes - fh.base - (uint64_t)fh.had_msg : 0))))
		abort();
	if (engine_active(e) > STREAMS ||
	    engine_suspended(e) > engine_active(e))
		abort();
	/* What was opened is what the peer sealed, no more. */
	if (st.opened_msgs != open_n || st.sealed_msgs != seal_n ||
	    (!F->seal_mode && !F->hs_seal && (seal_n | open_n) != 0))
		abort();
	/* The window lets at most one WRITE past its largest size. */
	if (st.inflight > WINDOW_MAX + WINDOW_CHUNK ||
	    st.window > WINDOW_MAX || st.sq_depth > SQ)
		abort();
	check_rings(e, engine_sealed(e) || (F->hs && F->hs_seal && fh.done));
}

/*
 * After operation ${op} (0: none yet), which began at ${off} in the input:
 * has the link failed?
 */
static void
reached(struct fz *F, int op, size_t off)
{
	const char *why = engine_error(F->e);

	fz_reach.ops = op;
	if (why == NULL || fz_reach.failed_op >= 0)
		return;
	fz_reach.failed_op = op;
	fz_reach.failed_off = off;
	snprintf(fz_reach.error, sizeof(fz_reach.error), "%s", why);
}

/* Where the run ended up. */
static void
reached_end(struct fz *F)
{

	fz_reach.sealed = engine_sealed(F->e);
	fz_reach.hs_done = fh.done;
	fz_reach.version = engine_version(F->e);
	/* The furthest lane's counts (lane 1's stay 0 on one lane). */
	fz_reach.sealed_to = seal_dir_count(&stx[0]) > seal_dir_count(&stx[1]) ?
	    seal_dir_count(&stx[0]) : seal_dir_count(&stx[1]);
	fz_reach.opened_to = seal_dir_count(&srx[0]) > seal_dir_count(&srx[1]) ?
	    seal_dir_count(&srx[0]) : seal_dir_count(&srx[1]);
	engine_stats(F->e, &fz_reach.st);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz F;
	struct engine_ring r = { 0x200000, 4096, 9, NULL };
	uint8_t op;

	memset(&fz_reach, 0, sizeof(fz_reach));
	fz_reach.failed_op = -1;
	start(&F, data, size);
	first_streams(&F, &r);
	check(&F);
	reached(&F, 0, (size_t)(F.in.p - data));
	while (get(&F.in, &op, 1)) {
		size_t off = (size_t)(F.in.p - data) - 1;

		op %= 16;
		if (op < 4)
			op_peer(&F, op);
		else if (op < 13)
			op_local(&F, op, &r);
		else
			op_link(&F, op);
		/* What find handed over goes once the call returned. */
		if (F.R.adopted) {
			F.R.adopted = 0;
			res_drop(&F.R);
		}
		drain(F.e, F.posted, &F.nposted, F.seq_hi);
		/* With identities, the peer seals once the handshake is done. */
		if (F.hs)
			F.sealed = F.hs_seal && fh.done;
		check(&F);
		reached(&F, fz_reach.ops + 1, off);
	}
	reached_end(&F);
	res_drop(&F.R);
	engine_free(F.e);
	return (0);
}
