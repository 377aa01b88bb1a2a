/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * engine_int: the engine files' own header (nothing else includes it): a
 * stream, a link's engine, and what the files share.  Everyone else knows
 * the engine through engine.h, engine_stream.h and engine_io.h.  A file
 * includes engine.h before this one: this header does not include it,
 * since tests/layers.sh sees engine.c and engine.h as one module and
 * would see engine.c -> engine_int.h -> engine.h as a loop.
 *
 * The files, in layers, lowest first.  A file calls only its own layer
 * and those below it, and no two files call each other in a loop:
 *
 *   0  engine_core.c    slots, queues, events, eng_fail(), small helpers
 *   1  engine_seal.c    sealing what goes, opening what comes
 *      engine_auth.c    the key proof, the identity handshake
 *      engine_sched.c   which stream writes next; the send window, waits
 *   2  engine_resize.c  rings grown and shrunk
 *      engine_resume.c  suspended streams and their resume
 *   3  engine_recv.c    input: completions and what they carry
 *      engine_send.c    output: SENDs of records, work requests
 *   4  engine_stream.c  the application's calls (engine_stream.h)
 *      engine.c         the link's life: setup, hello, stats, tick
 *
 * What the files share is named eng_*, what everyone may call engine_*:
 * a name says how far it reaches, and none of the family's internals
 * takes a name another lib/ file owns (ring_*, seal_*).
 */
#ifndef ENGINE_INT_H
#define ENGINE_INT_H

#include <stdint.h>

#include "idq.h"
#include "wire.h"

/* Its types are engine.h's and engine_io.h's: included first. */
struct engine_wr;

/* Stream slot states (engine_stream_flags_str names them). */
enum {
	S_FREE = 0,
	S_OPENING,	/* we sent OPEN, waiting for OPEN_OK or REFUSE */
	S_INCOMING,	/* peer sent OPEN, application has not decided */
	S_OPEN,		/* rings known on both sides */
	S_DEAD		/* finished; slot freed when RELEASED is delivered */
};

/*
 * Stream flags.  A flag exists only as a line of this list, which gives
 * it its bit (its place) and the name engine_stream_flags_str prints, so
 * none goes unnamed.
 */
#define STREAM_FLAGS(X)							\
	X(APP_SHUT)	/* application shut its sending side */		\
	X(SHUT_SENT)	/* SHUTDOWN encoded */				\
	X(PEER_SHUT)	/* SHUTDOWN received */				\
	X(EOF_DONE)	/* EOF event queued */				\
	X(TERM_SENT)	/* CLOSE or RESET encoded */			\
	X(TERM_RECV)	/* CLOSE or RESET received */			\
	X(APP_CLOSED)	/* application closed: only RELEASED now */	\
	X(RESET)	/* stream aborted (either side) */		\
	X(ABORT)	/* closed while OPENING: reset once open */	\
	X(WANT_WR)	/* application saw a full send ring */		\
	X(PEER_MAPPED)	/* peer id bit set in peer_ids */		\
	X(HAS_RINGS)	/* application gave rings (needs RELEASED) */	\
	X(KEEP_WANT)	/* engine_keep: keep bytes, suspend if it can */ \
	X(KEEP)		/* bytes kept until consumed: resumable */	\
	X(SUSP)		/* suspended in a failed engine */		\
	X(RESUMING)	/* adopted; the resume exchange is under way */

#define F_BIT_(name)	FB_##name,
enum { STREAM_FLAGS(F_BIT_) F_COUNT };
#define F_MASK_(name)	F_##name = 1 << FB_##name,
enum { STREAM_FLAGS(F_MASK_) };

/* Pending control records for a stream, in the order they are encoded. */
#define C_OPEN		0x01
#define C_OPEN_OK	0x02
#define C_CREDIT	0x04
#define C_SHUTDOWN	0x08
#define C_RESET	0x10
#define C_CLOSE	0x20
#define C_RESUME	0x40	/* our RESUME_STREAM (request or answer) */
#define C_ORIGIN	0x80	/* an ORIGIN goes before the OPEN */

#define NIL	UINT32_MAX

/* CREDIT cursors a stream remembers for its growth signal (eng_rx_grow). */
#define REPS		8

/*
 * rx_dir.caught: the reader took every byte that had arrived at least once
 * since the last resize (RX_CAUGHT_RESIZE) or engine_trim (RX_CAUGHT_TRIM);
 * it took a byte since the last engine_trim (RX_READ_TRIM).  A reader that
 * reads but never catches up is what holds the sender back, not the ring.
 */
#define RX_CAUGHT_RESIZE	0x01
#define RX_CAUGHT_TRIM		0x02
#define RX_READ_TRIM		0x04

/* Pending ring resize records for a stream (version 4). */
#define RS_RING		0x01	/* our RING: the receive ring rx.next */
#define RS_RING_AT	0x02	/* our RING_AT: we write to tx.peer_next */

/*
 * The queues a stream can wait in: control records, data, events, and
 * data that waits for the stream's WRs on lane 1 to complete before it
 * may go as WRITEs on lane 0 (eng_lane_free).
 */
enum { Q_CTRL, Q_TX, Q_EV, Q_FENCE, Q_N };

/*
 * A stream's send direction.  Cursors count bytes since it opened: the
 * application put them in the ring (app), we wrote them (sent), their
 * WRITEs completed (done), the peer consumed them (peer).  Resizing
 * (version 4; sizes 0 mean none): the ring before the last resize keeps
 * the bytes below switch_at until their WRITEs completed; the peer's
 * announced ring is used once our RING_AT is encoded.
 */
struct tx_dir {
	struct engine_ring ring, old;
	struct wire_ring peer_ring;	/* where our WRITEs land */
	struct wire_ring peer_next;	/* the peer's announced ring */
	uint64_t app, sent, done, peer;
	uint64_t sig;		/* end of our last signalled WRITE */
	uint32_t wr_out;	/* WRITEs outstanding that read the ring */
	uint64_t switch_at;
	uint32_t min, max;	/* 0: fixed */
	uint64_t mark;		/* the cursor at the last resize */
	uint64_t seen;		/* the cursor at the last engine_trim */
	/* Suspended with sealed WRITEs outstanding that no confirmed stop
	 * finished yet: their bytes are sealed still (engine_stopped). */
	uint8_t unrestored;
};

/*
 * A stream's receive direction: bytes arrived (tail), the application
 * took them (cons), we reported them to the peer (rep), the peer's last
 * (final).  Resizing: our announced ring (next), and the one before the
 * switch (old), which holds the bytes below switch_at until the
 * application read them.  Sealing: ring's and old's private copies
 * (NULL: none), of their sizes, in memory no RDMA can write: once a
 * sealed byte came for a ring, its bytes are opened there and read from
 * there (eng_seal_open_write).
 */
struct rx_dir {
	struct engine_ring ring, old, next;
	uint8_t *clear, *old_clear;
	uint64_t tail, cons, rep, final;
	uint64_t switch_at;
	uint32_t min, max;	/* 0: fixed */
	uint64_t mark;		/* the cursor at the last resize */
	uint64_t reps[REPS];	/* the last CREDIT cursors sent (0 at first) */
	uint8_t rep_n;
	uint8_t caught;		/* RX_CAUGHT_*, RX_READ_TRIM */
	uint64_t seen;		/* the cursor at the last engine_trim */
};

struct stream {
	uint8_t state;
	uint8_t ctrl;		/* C_* pending */
	uint8_t in[Q_N];	/* queued in q[i] */
	uint16_t flags;
	uint16_t reason;	/* RESET/REFUSE reason to send */
	uint16_t ev_reason;	/* reason to report with REFUSED/RESET */
	uint32_t ev;		/* ENGINE_EV_* pending */
	uint32_t peer_id;
	uint32_t next[Q_N];	/* successor in q[i] */
	uint32_t next_free;
	void *user;
	struct tx_dir tx;
	struct rx_dir rx;
	char name[WIRE_NAME_MAX + 1];
	/* Opener: the ORIGIN to send; acceptor: the one that came (or none). */
	struct wire_origin origin;
	uint8_t rs;		/* RS_* pending (resizing) */
	uint8_t ring_ticks;	/* engine_tick calls since our RING went out */
	/* Scheduling: bytes left of this round's quantum, weight; waits. */
	uint32_t deficit;
	uint8_t backlogged;	/* used a whole quantum since it last had
				   nothing to send (eng_tx_queue) */
	uint8_t weight;		/* 0 reads as 1 */
	uint8_t wait;		/* W_* it is in since wait_at */
	uint64_t wait_at, wait_credit, wait_sq;
	/* Lanes: the lane of its last WR (records or data), and that
	 * lane's sequence number after it (0: none yet). */
	uint8_t lane;
	uint64_t lseq;
};

_Static_assert(F_COUNT <= 8 * sizeof(((struct stream *)0)->flags),
    "struct stream's flags has a bit for every flag");

/* A FIFO of stream ids threaded through one of the next_* fields. */
struct queue {
	uint32_t head, tail;
};

/*
 * How far a link's authentication went.  A key proof (AUTH) or the
 * identity handshake (HANDSHAKE): the hellos choose (eng_auth_agree).
 */
enum auth_phase {
	AUTH_OFF = 0,	/* the link does not authenticate */
	AUTH_ASKED,	/* it does; the hellos have not agreed yet */
	AUTH_KEY,	/* key proofs: the peer's is awaited */
	AUTH_HS,	/* the handshake: the peer's next message awaited */
	AUTH_HS_HELD,	/* responder: message 2 went, and nothing else
			   may go until message 3 (see send_hs) */
	AUTH_DONE	/* the peer proved itself */
};

/* A resume, as the client that offers it sees it (engine_resume). */
enum res_ask {
	RES_ASK_NONE = 0,
	RES_OFFERED,	/* RESUME offered; the server's proof awaited */
	RES_DENIED,	/* the server refused it */
	RES_NAMING,	/* proven: RESUME_STREAMs go out, from res.name on,
			   before any OPEN (version 5) */
	RES_PROVEN	/* proven, or below version 5 need not be */
};

/* A resume, as the server that is offered one sees it (eng_rec_resume). */
enum res_serve {
	RES_SERVE_NONE = 0,
	RES_DENYING,	/* refused: our RESUME_DENIED to send */
	RES_REFUSED,	/* ... and sent */
	RES_PROVING,	/* taken: our RESUME_PROOF to send (version 5) */
	RES_TAKEN	/* taken, and proven where the version asks */
};

/* What a stream with bytes to send is waiting for (eng_wait_update). */
enum { W_NONE, W_CREDIT, W_SQ };

/* What an outstanding send WR was, to release ring space on completion. */
struct wrinfo {
	uint32_t stream;	/* NIL for SENDs */
	uint32_t bytes;		/* data bytes (0 for SENDs) */
	uint64_t end;		/* tx cursor after this WRITE */
	uint8_t signaled;
	struct window_mark mark;	/* if signaled */
	/* A sealed WRITE: what eng_seal_restore needs (tag in the slot). */
	uint8_t sealed;
	uint32_t imm;
	uint64_t addr;		/* its bytes in the send ring */
	uint64_t seal_n;	/* its message number */
};

/*
 * A lane: one queue pair's send queue and receive queue.  Message
 * credits: receives the peer posted, SENDs and WRITEs we did.  Our
 * receives: handed out for posting, reported, completed.  The send
 * queue: next sequence number, oldest not yet completed, the last
 * signalled, and what each outstanding WR was (sq_size entries, by seq %
 * sq_size).
 */
struct lane {
	uint64_t peer_posted, msgs_sent;
	uint64_t recv_posted, recv_reported, recv_done;
	uint64_t seq, seq_done, last_signaled;
	/* Fenced links (eng_fenced): the peer has every WR below
	 * seq_arrived; our FENCE out, the seq of its SEND (FENCE_NONE:
	 * none) and its number; a stream's WR went since the last one. */
	uint64_t seq_arrived, fence_seq, fence_num;
	uint8_t fence_want;
	struct wrinfo *wri;
};

#define FENCE_NONE	UINT64_MAX

/* Lane ${l} has a signalled WR outstanding: its completion will come
 * (those after the last signalled one never report). */
#define ENG_SIGNAL_PENDING(l)						\
	((l)->last_signaled != UINT64_MAX && (l)->last_signaled >= (l)->seq_done)

struct engine {
	struct engine_conf conf;
	int up;
	int failed;
	int fail_due;	/* failed, but not yet finished (eng_fail_finish) */
	int stopped;	/* no work request runs any more (engine_stopped) */
	enum engine_err err_kind;
	char err[200];

	struct stream *s;
	uint32_t free_head;
	/*
	 * Slots ever handed out are below ${used}; those above have never
	 * been touched, so a link sized for 16384 streams that carries ten
	 * costs the memory of ten (calloc's pages stay unmapped).
	 */
	uint32_t used;

	struct queue q[Q_N];

	/* Each queue pair's own state (struct lane); lane 1 on links of
	 * two lanes only (version 8): how many the link runs, our lane-0
	 * hello's flags, and lane 1 still to come up (engine_lane_up). */
	struct lane ln[WIRE_LANES_MAX];
	unsigned lanes;
	int notify;		/* engine_notify: once connected */
	uint8_t said_flags;
	int lane_wait;
	uint32_t peer_rq;
	unsigned rx_lane;	/* the lane of the message being read */
	unsigned tx_lane;	/* the lane of the SEND being built */
	/* Lane 1 opens once lane 0's SENDs up to lane1_at completed, after
	 * the peer proved itself and any resume settled (engine_send.c);
	 * send0_end: lane 0's sequence number after its last SEND. */
	int lane1_latched;
	uint64_t lane1_at, send0_end;
	/* Fences: our last FENCE's number; the peer's FENCE of each of its
	 * lanes to answer (bit L of fence_ans_due: one due from lane L). */
	uint64_t fence_last, fence_ans[WIRE_LANES_MAX];
	uint8_t fence_ans_due;
	struct idq repost;	/* slots to post, lanes * rq_size entries */
	uint32_t msg_credit_threshold;
	uint32_t signal_every;
	struct window win;	/* data bytes outstanding, and their bound */
	uint64_t busy_mark;	/* bytes_tx at the last engine_data_busy */

	/* Refusals to send: (peer id << 16 | reason), and ids in use. */
	struct idq refusals;	/* WIRE_STREAMS_MAX entries */
	uint8_t *peer_ids;	/* bitmap of the peer's ids mapped to ours */

	/* Authentication: where it stands (enum auth_phase), the key
	 * proof to send, and the identity handshake's next message. */
	enum auth_phase auth;
	struct engine_auth a;
	int auth_send;	/* our AUTH is due */
	struct {
		uint8_t out[WIRE_HS_MAX];
		size_t out_len;
		int seal_after;	/* seal from the SEND after this one */
	} hs;

	/* The hello's version: at most ver_cap; what this side said; what
	 * the link speaks once connected (the older hello's). */
	uint8_t ver_cap, ver_said, ver_link;
	/* ORIGIN records (version 3): both hellos said 3. */
	int can_origin;
	/* Ring resizes (version 4, no resume): both said 4; memory for it. */
	int can_resize;
	struct engine_mem mem;

	/* Resume (version 2): both sides can; what this link did of it. */
	int can_resume;
	struct engine_resume r;
	int opened_any;		/* the peer opened a stream on this link */
	/* Version 5: the responder proves the secret too (RESUME_PROOF). */
	int can_res_proof;
	/* Version 10: the initiator says how many streams it names only
	 * after that proof (RESUME_COUNT), not in its RESUME. */
	int can_res_count;
	struct {
		enum res_ask ask;	/* client */
		enum res_serve serve;	/* server */
		int offer_due;	/* client: the RESUME header to send */
		int count_due;	/* client, RES_NAMING: the RESUME_COUNT to
				   send first (version 10) */
		int count_wait;	/* server: the RESUME_COUNT still to come
				   (version 10) */
		uint32_t name;	/* client, RES_NAMING: the next to name */
		uint32_t wait;	/* client: answers still expected */
		uint16_t reason;	/* server: RESUME_DENIED's */
		uint32_t left;	/* server: RESUME_STREAMs still to come */
		uint8_t token[WIRE_NONCE_LEN];
		uint8_t proof[WIRE_AUTH_LEN];	/* ours: RESUME or
						   RESUME_PROOF */
		uint16_t count;	/* RESUME_STREAMs of the RESUME */
		struct idq gone;	/* server: GONE answers, (peer id << 16
					   | id) */
	} res;

	/* Sealing: the embedder's AEAD; sealing what goes, opening what
	 * comes. */
	struct {
		int on;
		struct engine_seal ops;
		int tx, rx;
		int tag_due;	/* the last WRITE's tag goes next */
		uint32_t tag_imm;	/* ... with this immediate */
	} seal;

	/* Control records that are not a stream's. */
	struct {
		int keepalive;	/* a KEEPALIVE to send */
		int goaway;	/* a GOAWAY to send, with goaway_reason */
		uint16_t goaway_reason;
		int goaway_sent;
		int peer_goaway;	/* the peer sent its GOAWAY */
	} ctl;

	struct engine_stats st;
};

/* ---- engine_core.c */

/* The link failed: record why, of which kind, once; returns -1. */
int eng_fail(struct engine *, enum engine_err, const char *, ...)
    __attribute__((format(printf, 3, 4)));

/* The peer broke the protocol: fail with "protocol violation: ". */
int eng_violation(struct engine *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

/* Queue stream ${id} last in q[which], unless it is there. */
void eng_qpush(struct engine *e, int which, uint32_t id);

/* Queue stream ${id} first in q[which], unless it is there. */
void eng_qpush_head(struct engine *e, int which, uint32_t id);

/* Is stream ${s} in any queue? */
int eng_queued(const struct stream *s);

/* Take stream ${id}, which follows ${prev} (NIL: first), out of q[which]. */
void eng_qunlink(struct engine *e, int which, uint32_t prev, uint32_t id);

/* Take the first stream of q[which]; NIL if it is empty. */
uint32_t eng_qpop(struct engine *e, int which);

/* Report ${ev} on stream ${id} (the application's next event). */
void eng_event(struct engine *e, uint32_t id, uint32_t ev);

/* Stream ${id} has control record ${c} (C_*) to send. */
void eng_ctrl(struct engine *e, uint32_t id, uint8_t c);

/* Mark the peer's id ${peer_id} mapped to one of ours, or not. */
void eng_peer_bit(struct engine *e, uint32_t peer_id, int set);

/* Is the peer's id ${peer_id} mapped to one of ours? */
int eng_peer_bit_isset(const struct engine *e, uint32_t peer_id);

/* A zeroed stream slot, low ids first; NIL when none is left. */
uint32_t eng_slot_alloc(struct engine *e);

/* A slot left a queue: free it for reuse once no queue holds it. */
void eng_queue_drop(struct engine *e, uint32_t id);

/* Free stream ${id}'s slot (reused once it is in no queue). */
void eng_slot_free(struct engine *e, uint32_t id);

/* Release stream ${id} once both sides said their last word. */
void eng_maybe_release(struct engine *e, uint32_t id);

/* Stream ${id}'s slot while in use (live or S_DEAD), else NULL. */
struct stream *eng_held(const struct engine *e, uint32_t id);

/* A live stream by our id (in use and not released), or NULL. */
struct stream *eng_live(const struct engine *e, uint32_t id);

/* Does stream ${s} keep its bytes for a resume? */
void eng_keep_decide(const struct engine *e, struct stream *s);

/* Queue SHUTDOWN once every committed byte has been written. */
void eng_check_shutdown(struct engine *e, uint32_t id);

/* Queue EOF once the peer shut down and every byte was consumed. */
void eng_check_eof(struct engine *e, uint32_t id);

/* Does stream ${s} wait for a resume when the link fails (${kind})? */
int eng_suspendable(const struct stream *s, enum engine_err kind);

/* Free private copy ${*clear} of ${size} bytes (eng_seal_open_write's),
 * if any: the engine's rx_private counts it no more. */
void eng_clear_free(struct engine *e, uint8_t **clear, uint32_t size);

/* ---- engine_seal.c */

/* Seal SEND ${w} in place, if the link seals what goes. */
void eng_seal_send(struct engine *e, struct engine_wr *w);

/* Seal data WRITE ${w} in place; its tag goes next (eng_take_tag). */
void eng_seal_write(struct engine *e, struct engine_wr *w);

/* Sealed WRITE ${wi} finished: a kept stream gets its plaintext. */
void eng_seal_restore(struct engine *e, struct wrinfo *wi, uint64_t wr_id);

/* The link fails: the WRITEs outstanding are over (eng_seal_restore),
 * if they are stopped; else their kept streams wait for the stop. */
void eng_seal_restore_outstanding(struct engine *e, enum engine_err kind);

/* A failed link's queue pairs stopped: suspended streams' WRITEs
 * outstanding are over now. */
void eng_seal_restore_stopped(struct engine *e);

/* Open a sealed SEND into ${clear}; ${*buf} then points there. */
int eng_seal_open_send(struct engine *e, unsigned lane, const uint8_t **buf,
    uint32_t *len, uint8_t clear[WIRE_MSG_SIZE]);

/* Open sealed WRITE ${imm} out of stream ${s}'s ring, tag ${tag}. */
int eng_seal_open_write(struct engine *e, struct stream *s, uint32_t imm,
    uint32_t n, const uint8_t *tag);

/* Put DATA's ${n} bytes ${data} where stream ${s}'s reader finds them. */
int eng_seal_put(struct engine *e, struct stream *s, const uint8_t *data,
    uint32_t n);

/* ---- engine_auth.c */

/* Do both hellos agree on how the link authenticates? */
int eng_auth_agree(struct engine *e, const struct wire_hello *peer);

/* AUTH: the peer's proof of the key. */
int eng_rec_auth(struct engine *e, const struct wire_rec *r);

/* HANDSHAKE: the peer's handshake message, for the embedder. */
int eng_rec_handshake(struct engine *e, const struct wire_rec *r);

/* ---- engine_sched.c */

/* Charge stream ${id}'s wait up to now; what it waits for now. */
void eng_wait_update(struct engine *e, uint32_t id);

/* Stream ${id} may be ready to send: into the scheduler's queue. */
void eng_tx_queue(struct engine *e, uint32_t id);

/* Lane ${lane}'s message credits left: receives the peer posted that we
 * did not use. */
uint64_t eng_msg_avail(const struct engine *e, unsigned lane);

/* Are control records due on lane ${lane} (a SEND to build there)? */
int eng_ctrl_pending(const struct engine *e, unsigned lane);

/* The lane's sequence number of work request ${wr_id} (eng_emit's). */
#define ENG_WR_SEQ(wr_id)	((wr_id) & ~((uint64_t)1 << ENGINE_WR_LANE_SHIFT))

/* Number work request ${w} on ${lane}, decide whether it is signalled. */
void eng_emit(struct engine *e, unsigned lane, struct engine_wr *w,
    uint32_t stream, uint64_t end, int force);

/*
 * Does the link fence its lane switches: two lanes without immediates
 * (iWARP, version 12), where a WR completes once TCP took its bytes,
 * before the peer has them?
 */
int eng_fenced(const struct engine *e);

/* Lane ${lane}'s WRs below this the peer has: those completed, or on a
 * fenced link those up to the last FENCE's SEND that was answered. */
uint64_t eng_lane_arrived(const struct engine *e, unsigned lane);

/* A FENCE due on lane ${lane}, in its next SEND (build_send)? */
int eng_fence_due(const struct engine *e, unsigned lane);

/* The lane our FENCED answers go on: lane 1 once open, else lane 0. */
unsigned eng_fence_ans_lane(const struct engine *e);

/* Does the link carry streams' records and eager data on lane 1 now
 * (as engine_send.c last found, taking WRs)? */
int eng_lane1_open(const struct engine *e);

/* May stream ${s} post on ${lane}: none of its WRs on the other that
 * the peer may not have yet (eng_lane_arrived)? */
int eng_lane_free(const struct engine *e, const struct stream *s,
    unsigned lane);

/* The lane stream ${s}'s records go on now. */
unsigned eng_rec_lane(const struct engine *e, const struct stream *s);

/* Stream ${s} has a WR in the one lane ${lane} is building (its seq). */
void eng_lane_mark(struct engine *e, struct stream *s, unsigned lane);

/* Stream ${id}'s send ring freed bytes: WRITABLE if it waited. */
void eng_tx_freed(struct engine *e, uint32_t id);

/*
 * May stream ${s} send what it has as DATA records on lane 1: little
 * (ENGINE_EAGER_MAX at most, and the peer's ring has room for it all),
 * no resize under way, none of its WRs outstanding on lane 0?
 */
int eng_eager_ok(const struct engine *e, const struct stream *s);

/* Has any stream ready to send bytes that may go eager? */
int eng_eager_any(const struct engine *e);

/* Lane 1 completed WRs: the streams whose WRITEs waited for it go on. */
void eng_fence_lift(struct engine *e);

/* The tag of the sealed WRITE just taken, as a SEND WITH IMMEDIATE. */
void eng_take_tag(struct engine *e, struct engine_wr *w);

/* The scheduler's next WRITE: 1 if it emitted ${w}, 0, or -1. */
int eng_take_data(struct engine *e, struct engine_wr *w);

/* ---- engine_resize.c */

/* The engine is done with ring ${r}: hand it back. */
void eng_ring_drop(struct engine *e, const struct stream *s,
    struct engine_ring *r);

/* Double stream ${id}'s receive ring if it held the peer back. */
void eng_rx_grow(struct engine *e, uint32_t id);

/* Double stream ${id}'s send ring if it held the application back. */
void eng_tx_grow(struct engine *e, uint32_t id);

/* The peer writes into our announced ring from now on. */
void eng_rx_switch(struct engine *e, uint32_t id);

/* The ring the application reads now, and the cursor it ends at. */
const struct engine_ring *eng_rx_read_ring(const struct stream *s,
    uint64_t *end);

/* Where the application reads that ring (engine_rx_base). */
uint64_t eng_rx_read_base(const struct stream *s);

/* The application read the last byte of the ring before the switch. */
void eng_rx_old_drop(struct engine *e, struct stream *s);

/* Has our RING for stream ${s} gone unanswered for too many ticks? */
int eng_ring_at_overdue(struct stream *s);

/* ---- engine_resume.c */

/* End stream ${id} here and now: RELEASED (and RESET unless closed). */
void eng_release_now(struct engine *e, uint32_t id, uint16_t reason);

/* RESUME: the peer asks for a failed link's streams (server). */
int eng_rec_resume(struct engine *e, const struct wire_rec *r);

/* RESUME_STREAM: a stream named, or the answer for one of ours. */
int eng_rec_resume_stream(struct engine *e, const struct wire_rec *r);

/* RESUME_DENIED: the server refused our resume (client). */
int eng_rec_resume_denied(struct engine *e, const struct wire_rec *r);

/* RESUME_PROOF: the server proves the resume secret (client). */
int eng_rec_resume_proof(struct engine *e, const struct wire_rec *r);

/* RESUME_COUNT: how many streams the peer names, after our proof
 * (server, version 10). */
int eng_rec_resume_count(struct engine *e, const struct wire_rec *r);

/* The bytes a SEND's notice takes: WIRE_NOTICE_LEN without immediates. */
#define ENG_NOTICE(e)	((e)->notify ? (size_t)WIRE_NOTICE_LEN : (size_t)0)

/* Store ${v} big-endian at ${p}; read it back. */
void eng_put32(uint8_t *p, uint32_t v);
uint32_t eng_get32(const uint8_t *p);

/* Finish the failure eng_fail() recorded: streams suspended or ended. */
void eng_fail_finish(struct engine *e);

#endif /* !ENGINE_INT_H */
