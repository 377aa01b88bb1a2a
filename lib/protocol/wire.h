/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * wire: the rstream protocol's wire formats (see rstreamd-protocol(7)).
 *
 * Pure encode/decode, no I/O and no allocation.  Every decoder checks
 * every field and returns a named error (wire_strerror) for input that is
 * truncated, oversized, or out of range; a decoder never reads past the
 * length it is given and never writes past the structure it fills.  All
 * multi-byte fields are big-endian (network byte order).
 */
#ifndef WIRE_H
#define WIRE_H

#include <stddef.h>
#include <stdint.h>

/* Connect private data ("hello"). */
#define WIRE_MAGIC		0x52535452u	/* "RSTR" */
#define WIRE_VERSION		12		/* newest spoken */
#define WIRE_VERSION_MIN	1		/* oldest understood */
#define WIRE_VERSION_IDENTITY	6		/* the first with identities */
#define WIRE_HELLO_LEN		32		/* fits the 56-byte IB CM limit */
#define WIRE_NONCE_LEN		16
/* Hello flags. */
#define WIRE_HELLO_AUTH		0x01		/* this side authenticates */
#define WIRE_HELLO_RESUME	0x02		/* version 2: can resume streams */
#define WIRE_HELLO_IDENTITY	0x04		/* version 6: runs the handshake */
#define WIRE_HELLO_SEAL		0x08		/* version 6: wants sealed records */
#define WIRE_HELLO_AESGCM	0x10		/* version 6: can seal with AES-GCM */
#define WIRE_HELLO_LANES	0x20		/* version 8: can run a latency lane */
#define WIRE_HELLO_LANE1	0x40		/* version 8: a link's lane 1 */
#define WIRE_HELLO_NOTIFY	0x80		/* version 11: no immediates */
#define WIRE_HELLO_FLAGS	0xff		/* every flag defined */
/* The flags a hello below version 6 must not have. */
#define WIRE_HELLO_V6		(WIRE_HELLO_IDENTITY | WIRE_HELLO_SEAL | \
				 WIRE_HELLO_AESGCM)
/* The flags a hello below version 8 must not have. */
#define WIRE_HELLO_V8		(WIRE_HELLO_LANES | WIRE_HELLO_LANE1)
/* The first version that runs a link without immediate data. */
#define WIRE_VERSION_NOTIFY	11
/* The first whose links without immediate data run two lanes: a stream
 * changes lanes there only after a FENCE was answered (FENCED). */
#define WIRE_VERSION_FENCE	12
/*
 * On a link without immediate data (version 11, WIRE_HELLO_NOTIFY in
 * either hello), every SEND starts with a notice: 4 bytes, big-endian,
 * that say what follows.  A data immediate (wire_imm_encode) names the
 * WRITE just before it on the queue pair, whose tag follows on a sealed
 * link; WIRE_NOTICE_RECORDS says control records follow.
 */
#define WIRE_NOTICE_LEN		4
#define WIRE_NOTICE_RECORDS	0x40000000u
/* A link runs at most this many lanes (queue pairs), version 8. */
#define WIRE_LANES_MAX		2
/*
 * A refusal note: the private data of a connect request's reject, so that
 * the connecting side can tell "refused" from "not understood", and a
 * refusal it should simply wait out from one it should report.
 */
#define WIRE_NOTE_LEN		8
/* An AUTH record's proof: an HMAC-SHA-256 tag. */
#define WIRE_AUTH_LEN		32
/* A HANDSHAKE record's message: 1 to this many bytes (version 6). */
#define WIRE_HS_MAX		200
/* A sealed record's authentication tag (version 6). */
#define WIRE_TAG_LEN		16
#define WIRE_CREDITS_MIN	4		/* smallest receive queue */
#define WIRE_CREDITS_MAX	32768		/* largest receive queue */

/* Size of every receive buffer; no SEND may be larger. */
#define WIRE_MSG_SIZE		512
/* A sealed record's AEAD tag (SENDs end with it; a WRITE's follows it). */
#define WIRE_TAG_LEN		16

/* Stream ids are 14 bits (they travel in the immediate). */
#define WIRE_STREAMS_MAX	16384
/* One RDMA WRITE carries at most this many bytes. */
#define WIRE_WRITE_MAX		65536
/* A DATA record carries 1 to this many bytes (its length is a byte). */
#define WIRE_DATA_MAX		241
/* Tunnel names: 1 to 64 characters from [A-Za-z0-9._-]. */
#define WIRE_NAME_MAX		64

/* Control record types. */
enum wire_type {
	WIRE_MSG_CREDIT = 1,	/* receives posted, absolute count */
	WIRE_CREDIT = 2,	/* stream ring consumed-up-to cursor */
	WIRE_OPEN = 3,		/* open a stream on a named tunnel */
	WIRE_OPEN_OK = 4,	/* stream accepted */
	WIRE_REFUSE = 5,	/* stream refused, with a reason */
	WIRE_SHUTDOWN = 6,	/* no more data from the sender */
	WIRE_CLOSE = 7,		/* sender is done with the stream */
	WIRE_RESET = 8,		/* stream aborted, with a reason */
	WIRE_KEEPALIVE = 9,	/* nothing; keeps the QP's timers honest */
	WIRE_GOAWAY = 10,	/* no new streams on this link */
	WIRE_AUTH = 11,		/* proof of the pre-shared key */
	WIRE_RESUME = 12,	/* version 2: resume a failed link's streams */
	WIRE_RESUME_STREAM = 13,	/* version 2: one stream's cursors */
	WIRE_RESUME_DENIED = 14,	/* version 2: the resume is refused */
	WIRE_ORIGIN = 15,	/* version 3: who opens the next stream */
	WIRE_RING = 16,		/* version 4: a stream's new receive ring */
	WIRE_RING_AT = 17,	/* version 4: writes go there from this cursor */
	WIRE_RESUME_PROOF = 18,	/* version 5: resume taken, secret proved */
	WIRE_HANDSHAKE = 19,	/* version 6: a message of the handshake */
	WIRE_DATA = 20,		/* version 8: a stream's bytes, eager */
	WIRE_RESUME_COUNT = 21,	/* version 10: RESUME_STREAMs that follow */
	WIRE_FENCE = 22,	/* version 12: answer when all before it came */
	WIRE_FENCED = 23	/* version 12: that FENCE's answer */
};

/* ORIGIN families: how the opener's client reached it. */
enum wire_family {
	WIRE_FAM_UNSPEC = 0,	/* not said */
	WIRE_FAM_INET = 1,	/* TCP over IPv4 */
	WIRE_FAM_INET6 = 2,	/* TCP over IPv6 */
	WIRE_FAM_UNIX = 3	/* a Unix stream socket (no paths carried) */
};
#define WIRE_FAM_MAX		3

/*
 * A stream's origin: the client's address and port, and the address and
 * port it connected to.  IPv4 addresses use the first 4 bytes; the rest,
 * and everything for UNSPEC and UNIX, is zero.
 */
struct wire_origin {
	uint8_t family;			/* WIRE_FAM_* */
	uint16_t src_port, dst_port;
	uint8_t src[16], dst[16];
};

/* Why a refusal note's sender refused (unknown values: REFUSED). */
enum wire_note_why {
	WIRE_NOTE_REFUSED = 0,	/* a key, allow, a limit: a failure */
	WIRE_NOTE_BUSY = 1	/* too many of the sender's links still
				   connecting: try again once one is up */
};

struct wire_note {
	uint8_t version;		/* the newest the refusing side speaks */
	uint8_t why;			/* enum wire_note_why */
};

/* RESUME_STREAM flags: what the sender of the record saw of the stream. */
#define WIRE_RS_SHUT		0x01	/* the receiver's SHUTDOWN arrived */
#define WIRE_RS_CLOSE		0x02	/* the receiver's CLOSE arrived */
#define WIRE_RS_GONE		0x04	/* answer: no such stream to resume */
#define WIRE_RS_FLAGS		0x07

/* Reasons carried by REFUSE, RESET and GOAWAY. */
enum wire_reason {
	WIRE_REASON_NONE = 0,
	WIRE_REASON_NO_TUNNEL = 1,
	WIRE_REASON_TARGET_REFUSED = 2,
	WIRE_REASON_TARGET_UNREACHABLE = 3,
	WIRE_REASON_LIMIT = 4,
	WIRE_REASON_SHUTTING_DOWN = 5,
	WIRE_REASON_RESET = 6,
	WIRE_REASON_INTERNAL = 7,
	WIRE_REASON_TIMEOUT = 8,
	WIRE_REASON_DENIED = 9,
	WIRE_REASON_LINK_LOST = 10,	/* the link died and no resume came */
	WIRE_REASON_NOT_RESUMED = 11,	/* the peer did not resume the stream */
	WIRE_REASON_VERSION = 12,	/* the link's version is below the
					   tunnel's min_version */
	WIRE_REASON_NO_ORIGIN = 13	/* the tunnel needs the client's
					   address, and no ORIGIN said it */
};

/* Decoder errors. */
enum wire_err {
	WIRE_OK = 0,
	WIRE_ETRUNC,		/* input ends inside a field */
	WIRE_ELEN,		/* length field does not fit the record type */
	WIRE_ETYPE,		/* unknown record type */
	WIRE_ESTREAM,		/* stream id out of range */
	WIRE_ERING,		/* ring size unusable */
	WIRE_ENAME,		/* tunnel name empty, too long or bad chars */
	WIRE_EMAGIC,		/* hello: not an rstream peer */
	WIRE_EVERSION,		/* hello: unsupported version */
	WIRE_ERESERVED,		/* reserved bytes not zero */
	WIRE_ECREDITS,		/* hello: message credits out of range */
	WIRE_EOP,		/* immediate: unknown operation */
	WIRE_EEMPTY,		/* SEND with no records */
	WIRE_EFLAGS,		/* hello, RESUME_STREAM: unknown flags */
	WIRE_ECURSOR,		/* RESUME_STREAM: consumed beyond arrived */
	WIRE_EFAMILY		/* ORIGIN: unknown address family */
};

struct wire_hello {
	uint8_t version;
	uint8_t flags;			/* WIRE_HELLO_* */
	uint16_t credits;		/* receives posted before connecting */
	uint8_t nonce[WIRE_NONCE_LEN];
};

/* A receive ring granted to the peer (OPEN, OPEN_OK). */
struct wire_ring {
	uint64_t addr;
	uint32_t rkey;
	uint32_t size;
};

/* One decoded control record; which fields matter depends on type. */
struct wire_rec {
	uint8_t type;
	uint32_t stream;	/* receiver's stream id; OPEN: the opener's */
	uint32_t peer_stream;	/* OPEN_OK: the acceptor's id */
	uint64_t cursor;	/* MSG_CREDIT, CREDIT, SHUTDOWN, RING_AT;
				   RESUME_STREAM: arrived-up-to */
	uint64_t consumed;	/* RESUME_STREAM: consumed-up-to */
	struct wire_ring ring;	/* OPEN, OPEN_OK, RESUME_STREAM, RING */
	uint16_t reason;	/* REFUSE, RESET, GOAWAY, RESUME_DENIED */
	uint16_t count;		/* RESUME, RESUME_COUNT: RESUME_STREAM records
				   that follow */
	uint8_t flags;		/* RESUME_STREAM: WIRE_RS_* */
	uint8_t token[WIRE_NONCE_LEN];	/* RESUME: which streams */
	uint8_t name_len;	/* OPEN */
	char name[WIRE_NAME_MAX + 1];	/* OPEN; NUL-terminated */
	uint8_t proof[WIRE_AUTH_LEN];	/* AUTH, RESUME, RESUME_PROOF */
	uint8_t hs_len;			/* HANDSHAKE: 1 to WIRE_HS_MAX */
	uint8_t hs[WIRE_HS_MAX];	/* HANDSHAKE */
	/* DATA: its bytes (decoded: in the decoder's buffer), at cursor. */
	const uint8_t *data;
	uint8_t data_len;		/* 1 to WIRE_DATA_MAX */
	struct wire_origin origin;	/* ORIGIN */
};

/**
 * wire_strerror(err):
 * A short description of decoder error ${err}.
 */
const char *wire_strerror(int err);

/**
 * wire_reason_str(reason):
 * A short description of REFUSE/RESET/GOAWAY reason ${reason}; unknown
 * reasons (from a newer peer) get a generic text.
 */
const char *wire_reason_str(unsigned reason);

/**
 * wire_name_valid(name, len):
 * True if the ${len} bytes at ${name} are a tunnel name: 1 to
 * WIRE_NAME_MAX characters for which wire_name_char is true.
 */
int wire_name_valid(const char *name, size_t len);

/**
 * wire_name_char(c):
 * True for the characters of tunnel names: [A-Za-z0-9._-].
 */
int wire_name_char(char c);

/**
 * wire_hello_encode(buf, h):
 * Write the WIRE_HELLO_LEN bytes of connect private data for ${h}.
 */
void wire_hello_encode(uint8_t buf[WIRE_HELLO_LEN],
    const struct wire_hello *h);

/**
 * wire_hello_decode(buf, len, h):
 * Decode connect private data of ${len} bytes.  The CM may hand over more
 * bytes than were sent (it pads to its own size), so trailing bytes are
 * allowed but must be zero.
 */
int wire_hello_decode(const uint8_t *buf, size_t len, struct wire_hello *h);

/**
 * wire_hello_lanes(a, b):
 * How many lanes a link whose two lane-0 hellos are ${a} and ${b} runs:
 * 2 when both say WIRE_HELLO_LANES, unless the link will be sealed (both
 * with identities and either asking to seal) and either hello is older
 * than version 9, or it runs without immediates (WIRE_HELLO_NOTIFY in
 * either) and either is older than WIRE_VERSION_FENCE; else 1.  Both
 * sides compute the same from the same two hellos.
 */
unsigned wire_hello_lanes(const struct wire_hello *a,
    const struct wire_hello *b);

/**
 * wire_version_said(cap, resume):
 * The version a hello says when it may say at most ${cap}, for a side
 * that offers resume if ${resume}: below 3, version 2 only with resume
 * (version 1 peers refuse 2); capped at 1, a side says 1 and does not
 * offer resume (a version-1 peer refuses the flag).  Whether a link that
 * cannot resume will do is the tunnels' min_version's to say.
 */
unsigned wire_version_said(unsigned cap, int resume);

/**
 * wire_note_encode(buf, n):
 * Write the WIRE_NOTE_LEN bytes of refusal note ${n}.
 */
void wire_note_encode(uint8_t buf[WIRE_NOTE_LEN], const struct wire_note *n);

/**
 * wire_note_decode(buf, len, n):
 * If the ${len} bytes at ${buf} (reject private data; NULL or short: none)
 * start with a refusal note, fill ${n} (a version of at least 1) and
 * return 1; else return 0.
 */
int wire_note_decode(const uint8_t *buf, size_t len, struct wire_note *n);

/**
 * wire_imm_encode(stream, len):
 * The immediate for a data WRITE of ${len} bytes (1 to WIRE_WRITE_MAX) into
 * the receiver's stream ${stream} (below WIRE_STREAMS_MAX), host order.
 */
uint32_t wire_imm_encode(uint32_t stream, uint32_t len);

/**
 * wire_imm_decode(imm, stream, len):
 * Decode a data immediate (host order).
 */
int wire_imm_decode(uint32_t imm, uint32_t *stream, uint32_t *len);

/**
 * wire_rec_name(type):
 * Record type ${type}'s name ("OPEN"), or "?" if there is no such type.
 */
const char *wire_rec_name(uint8_t type);

/**
 * wire_rec_version(type):
 * The first protocol version that carries record type ${type}, or 0 if
 * there is no such type.
 */
unsigned wire_rec_version(uint8_t type);

/**
 * wire_rec_size(r):
 * Encoded size of record ${r} in bytes.
 */
size_t wire_rec_size(const struct wire_rec *r);

/**
 * wire_rec_encode(buf, cap, r):
 * Encode ${r} into ${buf}; return the bytes written, or 0 if it needs more
 * than ${cap} bytes.  ${r} must be valid (the encoder trusts its caller).
 */
size_t wire_rec_encode(uint8_t *buf, size_t cap, const struct wire_rec *r);

/**
 * wire_rec_decode(buf, len, r, used):
 * Decode the record at the start of ${buf} (${len} bytes available) into
 * ${r} and set ${used} to its encoded size.
 */
int wire_rec_decode(const uint8_t *buf, size_t len, struct wire_rec *r,
    size_t *used);

#endif /* !WIRE_H */
