/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include <string.h>

#include "ring.h"
#include "wire.h"

/* A record's header: its type and its length. */
#define HDR		2

static void
put16(uint8_t *p, uint16_t v)
{

	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{

	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void
put64(uint8_t *p, uint64_t v)
{

	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint16_t
get16(const uint8_t *p)
{

	return ((uint16_t)((p[0] << 8) | p[1]));
}

static uint32_t
get32(const uint8_t *p)
{

	return (((uint32_t)get16(p) << 16) | get16(p + 2));
}

static uint64_t
get64(const uint8_t *p)
{

	return (((uint64_t)get32(p) << 32) | get32(p + 4));
}

const char *
wire_strerror(int err)
{

	switch (err) {
	case WIRE_OK:
		return ("no error");
	case WIRE_ETRUNC:
		return ("truncated record");
	case WIRE_ELEN:
		return ("record length does not match its type");
	case WIRE_ETYPE:
		return ("unknown record type");
	case WIRE_ESTREAM:
		return ("stream id out of range");
	case WIRE_ERING:
		return ("unusable ring size");
	case WIRE_ENAME:
		return ("invalid tunnel name");
	case WIRE_EMAGIC:
		return ("bad magic (not an rstream peer)");
	case WIRE_EVERSION:
		return ("unsupported protocol version");
	case WIRE_ERESERVED:
		return ("reserved bytes are not zero");
	case WIRE_ECREDITS:
		return ("message credits out of range");
	case WIRE_EOP:
		return ("unknown immediate operation");
	case WIRE_EEMPTY:
		return ("message without records");
	case WIRE_EFLAGS:
		return ("unknown flags");
	case WIRE_ECURSOR:
		return ("consumed cursor beyond the arrived one");
	case WIRE_EFAMILY:
		return ("unknown address family");
	}
	return ("unknown error");
}

const char *
wire_reason_str(unsigned reason)
{

	switch (reason) {
	case WIRE_REASON_NONE:
		return ("no reason given");
	case WIRE_REASON_NO_TUNNEL:
		return ("no such tunnel on the peer");
	case WIRE_REASON_TARGET_REFUSED:
		return ("target refused the connection");
	case WIRE_REASON_TARGET_UNREACHABLE:
		return ("target unreachable");
	case WIRE_REASON_LIMIT:
		return ("stream limit reached");
	case WIRE_REASON_SHUTTING_DOWN:
		return ("peer is shutting down");
	case WIRE_REASON_RESET:
		return ("connection reset");
	case WIRE_REASON_INTERNAL:
		return ("internal error on the peer");
	case WIRE_REASON_TIMEOUT:
		return ("timed out");
	case WIRE_REASON_DENIED:
		return ("not authorised for this tunnel");
	case WIRE_REASON_LINK_LOST:
		return ("link lost and not resumed in time");
	case WIRE_REASON_NOT_RESUMED:
		return ("the peer did not resume the stream");
	case WIRE_REASON_VERSION:
		return ("protocol version too old for this tunnel");
	case WIRE_REASON_NO_ORIGIN:
		return ("the stream did not say its client's address");
	}
	return ("unknown reason");
}

void
wire_hello_encode(uint8_t buf[WIRE_HELLO_LEN], const struct wire_hello *h)
{

	memset(buf, 0, WIRE_HELLO_LEN);
	put32(buf, WIRE_MAGIC);
	buf[4] = h->version;
	buf[5] = h->flags;
	put16(buf + 6, h->credits);
	/* Bytes 8..15 are reserved and zero. */
	memcpy(buf + 16, h->nonce, WIRE_NONCE_LEN);
}

int
wire_hello_decode(const uint8_t *buf, size_t len, struct wire_hello *h)
{
	size_t i;

	if (buf == NULL || len < WIRE_HELLO_LEN)
		return (WIRE_ETRUNC);
	if (get32(buf) != WIRE_MAGIC)
		return (WIRE_EMAGIC);
	if (buf[4] < WIRE_VERSION_MIN || buf[4] > WIRE_VERSION)
		return (WIRE_EVERSION);
	for (i = 8; i < 16; i++)
		if (buf[i] != 0)
			return (WIRE_ERESERVED);
	for (i = WIRE_HELLO_LEN; i < len; i++)
		if (buf[i] != 0)
			return (WIRE_ERESERVED);
	h->version = buf[4];
	h->flags = buf[5];
	if ((h->flags & ~WIRE_HELLO_FLAGS) ||
	    (h->version < 2 && (h->flags & WIRE_HELLO_RESUME)) ||
	    (h->version < 6 && (h->flags & WIRE_HELLO_V6)) ||
	    (h->version < 8 && (h->flags & WIRE_HELLO_V8)) ||
	    (h->version < 11 && (h->flags & WIRE_HELLO_NOTIFY)) ||
	    ((h->flags & WIRE_HELLO_LANE1) &&
	    (h->flags & ~WIRE_HELLO_LANE1)))
		return (WIRE_EFLAGS);
	h->credits = get16(buf + 6);
	if (h->credits < WIRE_CREDITS_MIN || h->credits > WIRE_CREDITS_MAX)
		return (WIRE_ECREDITS);
	memcpy(h->nonce, buf + 16, WIRE_NONCE_LEN);
	return (WIRE_OK);
}

unsigned
wire_hello_lanes(const struct wire_hello *a, const struct wire_hello *b)
{

	if (!(a->flags & b->flags & WIRE_HELLO_LANES))
		return (1);
	/* A sealed link has two from version 9, each with its own keys. */
	if ((a->flags & b->flags & WIRE_HELLO_IDENTITY) &&
	    ((a->flags | b->flags) & WIRE_HELLO_SEAL) &&
	    (a->version < 9 || b->version < 9))
		return (1);
	/* Without immediates from version 12, whose lane switches fence. */
	if (((a->flags | b->flags) & WIRE_HELLO_NOTIFY) &&
	    (a->version < WIRE_VERSION_FENCE ||
	    b->version < WIRE_VERSION_FENCE))
		return (1);
	return (2);
}

unsigned
wire_version_said(unsigned cap, int resume)
{
	unsigned v = cap < WIRE_VERSION ? cap : WIRE_VERSION;

	if (v == 2 && !resume)
		v = 1;
	return (v);
}

void
wire_note_encode(uint8_t buf[WIRE_NOTE_LEN], const struct wire_note *n)
{

	memset(buf, 0, WIRE_NOTE_LEN);
	put32(buf, WIRE_MAGIC);
	buf[4] = n->version;
	buf[5] = n->why;
}

int
wire_note_decode(const uint8_t *buf, size_t len, struct wire_note *n)
{

	if (buf == NULL || len < WIRE_NOTE_LEN || get32(buf) != WIRE_MAGIC)
		return (0);
	n->version = buf[4] > 0 ? buf[4] : 1;
	/* Before WIRE_NOTE_BUSY the byte was reserved (zero): refused. */
	n->why = buf[5] == WIRE_NOTE_BUSY ? WIRE_NOTE_BUSY : WIRE_NOTE_REFUSED;
	return (1);
}

uint32_t
wire_imm_encode(uint32_t stream, uint32_t len)
{

	/* Operation 0 (DATA) in bits 31-30, stream in 29-16, length-1 in 15-0. */
	return ((stream & (WIRE_STREAMS_MAX - 1)) << 16 |
	    ((len - 1) & 0xffff));
}

int
wire_imm_decode(uint32_t imm, uint32_t *stream, uint32_t *len)
{

	if ((imm >> 30) != 0)
		return (WIRE_EOP);
	*stream = (imm >> 16) & (WIRE_STREAMS_MAX - 1);
	*len = (imm & 0xffff) + 1;
	return (WIRE_OK);
}

int
wire_name_char(char c)
{

	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-');
}

int
wire_name_valid(const char *name, size_t len)
{
	size_t i;

	if (len < 1 || len > WIRE_NAME_MAX)
		return (0);
	for (i = 0; i < len; i++)
		if (!wire_name_char(name[i]))
			return (0);
	return (1);
}

/* ------------------------------------------------------------- records */

static int
get_stream(const uint8_t *p, uint32_t *stream)
{

	*stream = get32(p);
	return (*stream < WIRE_STREAMS_MAX ? WIRE_OK : WIRE_ESTREAM);
}

static void
put_ring(uint8_t *p, const struct wire_ring *ring)
{

	put64(p, ring->addr);
	put32(p + 8, ring->rkey);
	put32(p + 12, ring->size);
}

static int
get_ring(const uint8_t *p, struct wire_ring *ring)
{

	ring->addr = get64(p);
	ring->rkey = get32(p + 8);
	ring->size = get32(p + 12);
	return (ring_size_check(ring->size) == NULL ? WIRE_OK : WIRE_ERING);
}

/*
 * Each layout's body, without the header: put writes it (the caller
 * checked the room), get reads and checks it.  Records of one layout
 * share the pair.
 */

/* MSG_CREDIT: cursor. */
static void
put_cursor(uint8_t *p, const struct wire_rec *r)
{

	put64(p, r->cursor);
}

static int
get_cursor(const uint8_t *p, struct wire_rec *r)
{

	r->cursor = get64(p);
	return (WIRE_OK);
}

/* CREDIT, SHUTDOWN, RING_AT: stream, cursor. */
static void
put_stream_cursor(uint8_t *p, const struct wire_rec *r)
{

	put32(p, r->stream);
	put64(p + 4, r->cursor);
}

static int
get_stream_cursor(const uint8_t *p, struct wire_rec *r)
{

	r->cursor = get64(p + 4);
	return (get_stream(p, &r->stream));
}

/* RING: stream, ring. */
static void
put_stream_ring(uint8_t *p, const struct wire_rec *r)
{

	put32(p, r->stream);
	put_ring(p + 4, &r->ring);
}

static int
get_stream_ring(const uint8_t *p, struct wire_rec *r)
{
	int err;

	if ((err = get_stream(p, &r->stream)) != WIRE_OK)
		return (err);
	return (get_ring(p + 4, &r->ring));
}

/* OPEN: stream, ring, the tunnel's name (its length, then its bytes). */
static void
put_open(uint8_t *p, const struct wire_rec *r)
{

	put_stream_ring(p, r);
	p[20] = r->name_len;
	memcpy(p + 21, r->name, r->name_len);
}

static int
get_open(const uint8_t *p, struct wire_rec *r)
{
	int err;

	if ((err = get_stream_ring(p, r)) != WIRE_OK)
		return (err);
	if (!wire_name_valid((const char *)p + 21, r->name_len))
		return (WIRE_ENAME);
	memcpy(r->name, p + 21, r->name_len);
	r->name[r->name_len] = '\0';
	return (WIRE_OK);
}

/* OPEN_OK: stream, peer stream, ring. */
static void
put_open_ok(uint8_t *p, const struct wire_rec *r)
{

	put32(p, r->stream);
	put32(p + 4, r->peer_stream);
	put_ring(p + 8, &r->ring);
}

static int
get_open_ok(const uint8_t *p, struct wire_rec *r)
{
	int err;

	if ((err = get_stream(p, &r->stream)) != WIRE_OK)
		return (err);
	if ((err = get_stream(p + 4, &r->peer_stream)) != WIRE_OK)
		return (err);
	return (get_ring(p + 8, &r->ring));
}

/* REFUSE, RESET: stream, reason. */
static void
put_stream_reason(uint8_t *p, const struct wire_rec *r)
{

	put32(p, r->stream);
	put16(p + 4, r->reason);
}

static int
get_stream_reason(const uint8_t *p, struct wire_rec *r)
{

	r->reason = get16(p + 4);
	return (get_stream(p, &r->stream));
}

/* CLOSE: stream. */
static void
put_stream_only(uint8_t *p, const struct wire_rec *r)
{

	put32(p, r->stream);
}

static int
get_stream_only(const uint8_t *p, struct wire_rec *r)
{

	return (get_stream(p, &r->stream));
}

/* KEEPALIVE: nothing. */
static void
put_none(uint8_t *p, const struct wire_rec *r)
{

	(void)p;
	(void)r;
}

static int
get_none(const uint8_t *p, struct wire_rec *r)
{

	(void)p;
	(void)r;
	return (WIRE_OK);
}

/* GOAWAY, RESUME_DENIED: reason. */
static void
put_reason(uint8_t *p, const struct wire_rec *r)
{

	put16(p, r->reason);
}

static int
get_reason(const uint8_t *p, struct wire_rec *r)
{

	r->reason = get16(p);
	return (WIRE_OK);
}

/* AUTH, RESUME_PROOF: proof. */
static void
put_proof(uint8_t *p, const struct wire_rec *r)
{

	memcpy(p, r->proof, WIRE_AUTH_LEN);
}

static int
get_proof(const uint8_t *p, struct wire_rec *r)
{

	memcpy(r->proof, p, WIRE_AUTH_LEN);
	return (WIRE_OK);
}

/* RESUME: token, proof, count. */
static void
put_resume(uint8_t *p, const struct wire_rec *r)
{

	memcpy(p, r->token, WIRE_NONCE_LEN);
	memcpy(p + WIRE_NONCE_LEN, r->proof, WIRE_AUTH_LEN);
	put16(p + WIRE_NONCE_LEN + WIRE_AUTH_LEN, r->count);
}

static int
get_resume(const uint8_t *p, struct wire_rec *r)
{

	memcpy(r->token, p, WIRE_NONCE_LEN);
	memcpy(r->proof, p + WIRE_NONCE_LEN, WIRE_AUTH_LEN);
	r->count = get16(p + WIRE_NONCE_LEN + WIRE_AUTH_LEN);
	return (r->count > WIRE_STREAMS_MAX ? WIRE_ESTREAM : WIRE_OK);
}

/* RESUME_COUNT: count. */
static void
put_count(uint8_t *p, const struct wire_rec *r)
{

	put16(p, r->count);
}

static int
get_count(const uint8_t *p, struct wire_rec *r)
{

	r->count = get16(p);
	return (r->count > WIRE_STREAMS_MAX ? WIRE_ESTREAM : WIRE_OK);
}

/* RESUME_STREAM: stream, peer stream, cursors, flags, ring. */
static void
put_resume_stream(uint8_t *p, const struct wire_rec *r)
{

	put32(p, r->stream);
	put32(p + 4, r->peer_stream);
	put64(p + 8, r->cursor);
	put64(p + 16, r->consumed);
	p[24] = r->flags;
	put_ring(p + 25, &r->ring);
}

/* A GONE answer grants no ring (all zero). */
static int
get_resume_stream(const uint8_t *p, struct wire_rec *r)
{
	int err;
	size_t i;

	if ((err = get_stream(p, &r->stream)) != WIRE_OK ||
	    (err = get_stream(p + 4, &r->peer_stream)) != WIRE_OK)
		return (err);
	r->cursor = get64(p + 8);
	r->consumed = get64(p + 16);
	r->flags = p[24];
	if (r->flags & ~WIRE_RS_FLAGS)
		return (WIRE_EFLAGS);
	if (r->consumed > r->cursor)
		return (WIRE_ECURSOR);
	if (!(r->flags & WIRE_RS_GONE))
		return (get_ring(p + 25, &r->ring));
	for (i = 8; i < 41; i++)
		if (i != 24 && p[i] != 0)
			return (WIRE_ERESERVED);
	return (WIRE_OK);
}

/* ORIGIN: stream, family, ports, addresses. */
static void
put_origin(uint8_t *p, const struct wire_rec *r)
{

	put32(p, r->stream);
	p[4] = r->origin.family;
	put16(p + 5, r->origin.src_port);
	put16(p + 7, r->origin.dst_port);
	memcpy(p + 9, r->origin.src, 16);
	memcpy(p + 25, r->origin.dst, 16);
}

/* What a family does not use must be zero. */
static int
get_origin(const uint8_t *p, struct wire_rec *r)
{
	struct wire_origin *o = &r->origin;
	size_t used, i;

	o->family = p[4];
	o->src_port = get16(p + 5);
	o->dst_port = get16(p + 7);
	memcpy(o->src, p + 9, 16);
	memcpy(o->dst, p + 25, 16);
	if (o->family > WIRE_FAM_MAX)
		return (WIRE_EFAMILY);
	used = o->family == WIRE_FAM_INET ? 4 : o->family == WIRE_FAM_INET6 ?
	    16 : 0;
	if (used == 0 && (o->src_port != 0 || o->dst_port != 0))
		return (WIRE_ERESERVED);
	for (i = used; i < 16; i++)
		if (o->src[i] != 0 || o->dst[i] != 0)
			return (WIRE_ERESERVED);
	return (get_stream(p, &r->stream));
}

/* HANDSHAKE: the handshake's message, as long as the record. */
static void
put_hs(uint8_t *p, const struct wire_rec *r)
{

	memcpy(p, r->hs, r->hs_len);
}

static int
get_hs(const uint8_t *p, struct wire_rec *r)
{

	memcpy(r->hs, p, r->hs_len);
	return (WIRE_OK);
}

/* DATA: stream, cursor, the bytes (as long as the record). */
static void
put_data(uint8_t *p, const struct wire_rec *r)
{

	put32(p, r->stream);
	put64(p + 4, r->cursor);
	memcpy(p + 12, r->data, r->data_len);
}

static int
get_data(const uint8_t *p, struct wire_rec *r)
{

	r->cursor = get64(p + 4);
	r->data = p + 12;
	return (get_stream(p, &r->stream));
}

/*
 * What each record type is, the one place that says so: its name, its
 * body's size (OPEN: before the name; HANDSHAKE: before the message),
 * whether a part of its own length follows (var_len), the first protocol
 * version that carries it, and its layout.  tests/protocol-page.sh reads
 * this table: one row per line.
 */
static const struct rec_type {
	const char *name;
	uint8_t body;
	uint8_t var;
	uint8_t version;
	void (*put)(uint8_t *, const struct wire_rec *);
	int (*get)(const uint8_t *, struct wire_rec *);
} rec_types[] = {
#define T(type, body, var, version, layout)				\
	[WIRE_##type] = { #type, body, var, version, put_##layout,	\
	    get_##layout }
	T(MSG_CREDIT, 8, 0, 1, cursor),
	T(CREDIT, 4 + 8, 0, 1, stream_cursor),
	T(OPEN, 4 + 16 + 1, 1, 1, open),
	T(OPEN_OK, 4 + 4 + 16, 0, 1, open_ok),
	T(REFUSE, 4 + 2, 0, 1, stream_reason),
	T(SHUTDOWN, 4 + 8, 0, 1, stream_cursor),
	T(CLOSE, 4, 0, 1, stream_only),
	T(RESET, 4 + 2, 0, 1, stream_reason),
	T(KEEPALIVE, 0, 0, 1, none),
	T(GOAWAY, 2, 0, 1, reason),
	T(AUTH, WIRE_AUTH_LEN, 0, 1, proof),
	T(RESUME, WIRE_NONCE_LEN + WIRE_AUTH_LEN + 2, 0, 2, resume),
	T(RESUME_STREAM, 4 + 4 + 8 + 8 + 1 + 16, 0, 2, resume_stream),
	T(RESUME_DENIED, 2, 0, 2, reason),
	T(ORIGIN, 4 + 1 + 2 + 2 + 16 + 16, 0, 3, origin),
	T(RING, 4 + 16, 0, 4, stream_ring),
	T(RING_AT, 4 + 8, 0, 4, stream_cursor),
	T(RESUME_PROOF, WIRE_AUTH_LEN, 0, 5, proof),
	T(HANDSHAKE, 0, 1, 6, hs),
	T(DATA, 4 + 8, 1, 8, data),
	T(RESUME_COUNT, 2, 0, 10, count),
	T(FENCE, 8, 0, 12, cursor),
	T(FENCED, 8, 0, 12, cursor),
#undef T
};

/* The length of ${r}'s part of its own length (see rec_types' var). */
static size_t
var_len(const struct wire_rec *r)
{

	return (r->type == WIRE_OPEN ? r->name_len :
	    r->type == WIRE_DATA ? r->data_len : r->hs_len);
}

/* Record type ${type}'s row, or NULL for a type there is none of. */
static const struct rec_type *
rec_type(uint8_t type)
{

	if (type >= sizeof(rec_types) / sizeof(rec_types[0]) ||
	    rec_types[type].name == NULL)
		return (NULL);
	return (&rec_types[type]);
}

const char *
wire_rec_name(uint8_t type)
{
	const struct rec_type *t = rec_type(type);

	return (t != NULL ? t->name : "?");
}

unsigned
wire_rec_version(uint8_t type)
{
	const struct rec_type *t = rec_type(type);

	return (t != NULL ? t->version : 0);
}

size_t
wire_rec_size(const struct wire_rec *r)
{
	const struct rec_type *t = rec_type(r->type);

	if (t == NULL)
		return (0);
	/* A handshake message is never empty. */
	if (r->type == WIRE_HANDSHAKE && (r->hs_len == 0 ||
	    r->hs_len > WIRE_HS_MAX))
		return (0);
	/* Nor are a DATA record's bytes. */
	if (r->type == WIRE_DATA && (r->data_len == 0 ||
	    r->data_len > WIRE_DATA_MAX || r->data == NULL))
		return (0);
	return (HDR + (size_t)t->body + (t->var ? var_len(r) : 0));
}

size_t
wire_rec_encode(uint8_t *buf, size_t cap, const struct wire_rec *r)
{
	size_t sz = wire_rec_size(r);

	if (sz == 0 || sz > cap)
		return (0);
	buf[0] = r->type;
	buf[1] = (uint8_t)sz;
	rec_type(r->type)->put(buf + HDR, r);
	return (sz);
}

int
wire_rec_decode(const uint8_t *buf, size_t len, struct wire_rec *r,
    size_t *used)
{
	const uint8_t *p = buf + HDR;
	const struct rec_type *t;
	size_t sz, want;

	memset(r, 0, sizeof(*r));
	if (len < HDR)
		return (WIRE_ETRUNC);
	r->type = buf[0];
	sz = buf[1];
	if (sz > len)
		return (WIRE_ETRUNC);
	if ((t = rec_type(r->type)) == NULL)
		return (WIRE_ETYPE);
	/* Three have a length of their own: OPEN's name, HANDSHAKE's message,
	 * DATA's bytes. */
	if (r->type == WIRE_OPEN) {
		if (sz < HDR + (size_t)t->body)
			return (WIRE_ELEN);
		r->name_len = p[20];
	} else if (r->type == WIRE_HANDSHAKE) {
		if (sz <= HDR || sz > HDR + WIRE_HS_MAX)
			return (WIRE_ELEN);
		r->hs_len = (uint8_t)(sz - HDR);
	} else if (r->type == WIRE_DATA) {
		if (sz <= HDR + (size_t)t->body)
			return (WIRE_ELEN);
		r->data_len = (uint8_t)(sz - HDR - t->body);
		r->data = p + t->body;
	}
	want = wire_rec_size(r);
	if (sz != want)
		return (WIRE_ELEN);
	*used = sz;
	return (t->get(p, r));
}
