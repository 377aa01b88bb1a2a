/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include <string.h>

#include "ring.h"
#include "wire.h"

/* Record sizes, header (type, length) included. */
#define HDR		2
#define SZ_MSG_CREDIT	(HDR + 8)
#define SZ_CREDIT	(HDR + 4 + 8)
#define SZ_OPEN_BASE	(HDR + 4 + 16 + 1)
#define SZ_OPEN_OK	(HDR + 4 + 4 + 16)
#define SZ_REFUSE	(HDR + 4 + 2)
#define SZ_SHUTDOWN	(HDR + 4 + 8)
#define SZ_CLOSE	(HDR + 4)
#define SZ_RESET	(HDR + 4 + 2)
#define SZ_KEEPALIVE	(HDR)
#define SZ_GOAWAY	(HDR + 2)
#define SZ_AUTH		(HDR + WIRE_AUTH_LEN)
#define SZ_RESUME	(HDR + WIRE_NONCE_LEN + WIRE_AUTH_LEN + 2)
#define SZ_RESUME_STREAM	(HDR + 4 + 4 + 8 + 8 + 1 + 16)
#define SZ_RESUME_DENIED	(HDR + 2)
#define SZ_ORIGIN	(HDR + 4 + 1 + 2 + 2 + 16 + 16)
#define SZ_RING		(HDR + 4 + 16)
#define SZ_RING_AT	(HDR + 4 + 8)
#define SZ_RESUME_PROOF	(HDR + WIRE_AUTH_LEN)
#define SZ_HANDSHAKE_BASE	(HDR)

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
	    (h->version < 6 && (h->flags & WIRE_HELLO_V6)))
		return (WIRE_EFLAGS);
	h->credits = get16(buf + 6);
	if (h->credits < WIRE_CREDITS_MIN || h->credits > WIRE_CREDITS_MAX)
		return (WIRE_ECREDITS);
	memcpy(h->nonce, buf + 16, WIRE_NONCE_LEN);
	return (WIRE_OK);
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

size_t
wire_rec_size(const struct wire_rec *r)
{

	switch (r->type) {
	case WIRE_MSG_CREDIT:
		return (SZ_MSG_CREDIT);
	case WIRE_CREDIT:
		return (SZ_CREDIT);
	case WIRE_OPEN:
		return (SZ_OPEN_BASE + (size_t)r->name_len);
	case WIRE_OPEN_OK:
		return (SZ_OPEN_OK);
	case WIRE_REFUSE:
		return (SZ_REFUSE);
	case WIRE_SHUTDOWN:
		return (SZ_SHUTDOWN);
	case WIRE_CLOSE:
		return (SZ_CLOSE);
	case WIRE_RESET:
		return (SZ_RESET);
	case WIRE_KEEPALIVE:
		return (SZ_KEEPALIVE);
	case WIRE_GOAWAY:
		return (SZ_GOAWAY);
	case WIRE_AUTH:
		return (SZ_AUTH);
	case WIRE_RESUME:
		return (SZ_RESUME);
	case WIRE_RESUME_STREAM:
		return (SZ_RESUME_STREAM);
	case WIRE_RESUME_DENIED:
		return (SZ_RESUME_DENIED);
	case WIRE_ORIGIN:
		return (SZ_ORIGIN);
	case WIRE_RING:
		return (SZ_RING);
	case WIRE_RING_AT:
		return (SZ_RING_AT);
	case WIRE_RESUME_PROOF:
		return (SZ_RESUME_PROOF);
	case WIRE_HANDSHAKE:
		if (r->hs_len == 0 || r->hs_len > WIRE_HS_MAX)
			return (0);
		return (SZ_HANDSHAKE_BASE + (size_t)r->hs_len);
	}
	return (0);
}

static void
put_ring(uint8_t *p, const struct wire_ring *ring)
{

	put64(p, ring->addr);
	put32(p + 8, ring->rkey);
	put32(p + 12, ring->size);
}

size_t
wire_rec_encode(uint8_t *buf, size_t cap, const struct wire_rec *r)
{
	size_t sz = wire_rec_size(r);
	uint8_t *p = buf + HDR;

	if (sz == 0 || sz > cap)
		return (0);
	buf[0] = r->type;
	buf[1] = (uint8_t)sz;
	switch (r->type) {
	case WIRE_MSG_CREDIT:
		put64(p, r->cursor);
		break;
	case WIRE_CREDIT:
	case WIRE_SHUTDOWN:
	case WIRE_RING_AT:
		put32(p, r->stream);
		put64(p + 4, r->cursor);
		break;
	case WIRE_RING:
		put32(p, r->stream);
		put_ring(p + 4, &r->ring);
		break;
	case WIRE_OPEN:
		put32(p, r->stream);
		put_ring(p + 4, &r->ring);
		p[20] = r->name_len;
		memcpy(p + 21, r->name, r->name_len);
		break;
	case WIRE_OPEN_OK:
		put32(p, r->stream);
		put32(p + 4, r->peer_stream);
		put_ring(p + 8, &r->ring);
		break;
	case WIRE_REFUSE:
	case WIRE_RESET:
		put32(p, r->stream);
		put16(p + 4, r->reason);
		break;
	case WIRE_CLOSE:
		put32(p, r->stream);
		break;
	case WIRE_KEEPALIVE:
		break;
	case WIRE_GOAWAY:
	case WIRE_RESUME_DENIED:
		put16(p, r->reason);
		break;
	case WIRE_AUTH:
	case WIRE_RESUME_PROOF:
		memcpy(p, r->proof, WIRE_AUTH_LEN);
		break;
	case WIRE_RESUME:
		memcpy(p, r->token, WIRE_NONCE_LEN);
		memcpy(p + WIRE_NONCE_LEN, r->proof, WIRE_AUTH_LEN);
		put16(p + WIRE_NONCE_LEN + WIRE_AUTH_LEN, r->count);
		break;
	case WIRE_RESUME_STREAM:
		put32(p, r->stream);
		put32(p + 4, r->peer_stream);
		put64(p + 8, r->cursor);
		put64(p + 16, r->consumed);
		p[24] = r->flags;
		put_ring(p + 25, &r->ring);
		break;
	case WIRE_HANDSHAKE:
		memcpy(p, r->hs, r->hs_len);
		break;
	case WIRE_ORIGIN:
		put32(p, r->stream);
		p[4] = r->origin.family;
		put16(p + 5, r->origin.src_port);
		put16(p + 7, r->origin.dst_port);
		memcpy(p + 9, r->origin.src, 16);
		memcpy(p + 25, r->origin.dst, 16);
		break;
	}
	return (sz);
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

static int
get_stream(const uint8_t *p, uint32_t *stream)
{

	*stream = get32(p);
	return (*stream < WIRE_STREAMS_MAX ? WIRE_OK : WIRE_ESTREAM);
}

static int
get_ring(const uint8_t *p, struct wire_ring *ring)
{

	ring->addr = get64(p);
	ring->rkey = get32(p + 8);
	ring->size = get32(p + 12);
	return (ring_size_check(ring->size) == NULL ? WIRE_OK : WIRE_ERING);
}

/* A RESUME_STREAM body: a GONE answer grants no ring (all zero). */
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

/* An ORIGIN body: what a family does not use must be zero. */
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

int
wire_rec_decode(const uint8_t *buf, size_t len, struct wire_rec *r,
    size_t *used)
{
	const uint8_t *p = buf + HDR;
	size_t sz, want;
	int err;

	memset(r, 0, sizeof(*r));
	if (len < HDR)
		return (WIRE_ETRUNC);
	r->type = buf[0];
	sz = buf[1];
	if (sz > len)
		return (WIRE_ETRUNC);
	if (r->type == WIRE_OPEN) {
		if (sz < SZ_OPEN_BASE)
			return (WIRE_ELEN);
		r->name_len = p[20];
		want = SZ_OPEN_BASE + (size_t)r->name_len;
	} else if (r->type == WIRE_HANDSHAKE) {
		if (sz <= SZ_HANDSHAKE_BASE || sz > SZ_HANDSHAKE_BASE +
		    WIRE_HS_MAX)
			return (WIRE_ELEN);
		r->hs_len = (uint8_t)(sz - SZ_HANDSHAKE_BASE);
		want = sz;
	} else {
		want = wire_rec_size(r);
		if (want == 0)
			return (WIRE_ETYPE);
	}
	if (sz != want)
		return (WIRE_ELEN);
	*used = sz;

	switch (r->type) {
	case WIRE_MSG_CREDIT:
		r->cursor = get64(p);
		return (WIRE_OK);
	case WIRE_CREDIT:
	case WIRE_SHUTDOWN:
	case WIRE_RING_AT:
		r->cursor = get64(p + 4);
		return (get_stream(p, &r->stream));
	case WIRE_RING:
		if ((err = get_stream(p, &r->stream)) != WIRE_OK)
			return (err);
		return (get_ring(p + 4, &r->ring));
	case WIRE_OPEN:
		if ((err = get_stream(p, &r->stream)) != WIRE_OK)
			return (err);
		if ((err = get_ring(p + 4, &r->ring)) != WIRE_OK)
			return (err);
		if (!wire_name_valid((const char *)p + 21, r->name_len))
			return (WIRE_ENAME);
		memcpy(r->name, p + 21, r->name_len);
		r->name[r->name_len] = '\0';
		return (WIRE_OK);
	case WIRE_OPEN_OK:
		if ((err = get_stream(p, &r->stream)) != WIRE_OK)
			return (err);
		if ((err = get_stream(p + 4, &r->peer_stream)) != WIRE_OK)
			return (err);
		return (get_ring(p + 8, &r->ring));
	case WIRE_REFUSE:
	case WIRE_RESET:
		r->reason = get16(p + 4);
		return (get_stream(p, &r->stream));
	case WIRE_CLOSE:
		return (get_stream(p, &r->stream));
	case WIRE_KEEPALIVE:
		return (WIRE_OK);
	case WIRE_GOAWAY:
	case WIRE_RESUME_DENIED:
		r->reason = get16(p);
		return (WIRE_OK);
	case WIRE_AUTH:
	case WIRE_RESUME_PROOF:
		memcpy(r->proof, p, WIRE_AUTH_LEN);
		return (WIRE_OK);
	case WIRE_RESUME:
		memcpy(r->token, p, WIRE_NONCE_LEN);
		memcpy(r->proof, p + WIRE_NONCE_LEN, WIRE_AUTH_LEN);
		r->count = get16(p + WIRE_NONCE_LEN + WIRE_AUTH_LEN);
		return (r->count > WIRE_STREAMS_MAX ? WIRE_ESTREAM : WIRE_OK);
	case WIRE_RESUME_STREAM:
		return (get_resume_stream(p, r));
	case WIRE_ORIGIN:
		return (get_origin(p, r));
	case WIRE_HANDSHAKE:
		memcpy(r->hs, p, r->hs_len);
		return (WIRE_OK);
	}
	return (WIRE_ETYPE);
}
