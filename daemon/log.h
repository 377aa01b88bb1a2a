/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * log: the daemon's messages.
 *
 * Levels are syslog's.  Where messages go:
 *  - a log file, when the configuration names one (log_file); SIGUSR1
 *    makes the daemon reopen it, for logrotate;
 *  - the journal, when stderr is connected to it (systemd sets
 *    JOURNAL_STREAM to stderr's device and inode), with the structured
 *    fields TUNNEL=, STREAM= and PEER= so "journalctl TUNNEL=pg" follows
 *    one tunnel;
 *  - otherwise stderr, as "rstreamd: LEVEL: text".
 * A message about a stream names its tunnel, stream and peer in the text
 * too, so one grep follows a connection whatever the destination.
 */
#ifndef LOG_H
#define LOG_H

#include <stddef.h>
#include <stdint.h>
#include <syslog.h>

/* What a message is about: any field may be NULL / 0. */
struct log_about {
	const char *tunnel;
	uint64_t stream;		/* stream number, 0 = none */
	const char *peer;		/* link peer address */
};

/**
 * log_init(level):
 * Print messages at ${level} and more severe (LOG_ERR..LOG_DEBUG), to
 * the journal if stderr is the journal, else to stderr.
 */
void log_init(int level);

/**
 * log_set_level(level):
 * Change the level (a reload may).
 */
void log_set_level(int level);

/**
 * log_level():
 * The current level.
 */
int log_level(void);

/**
 * log_destination():
 * "journal", "stderr" or the log file's path.
 */
const char *log_destination(void);

/**
 * log_file_open(path, err, errlen):
 * Send messages to the file ${path} (appended; created 0640), or back to
 * stderr/the journal if ${path} is "".  Returns 0, or -1 with the reason
 * in ${err} (the old destination is kept).
 */
int log_file_open(const char *path, char *err, size_t errlen);

/**
 * log_reopen():
 * Reopen the log file (after logrotate moved it); a no-op without one.
 */
void log_reopen(void);

/**
 * log_msg(level, fmt, ...):
 * Log one message.
 */
void log_msg(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * log_about(level, about, fmt, ...):
 * Log one message about a tunnel, stream or peer (${about}); the journal
 * gets them as fields.
 */
void log_about(int level, const struct log_about *about, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

/*
 * A message that can repeat in a storm (out of descriptors, a limit
 * reached) is logged once per burst: the first one, then nothing until
 * LOG_BURST_MS have passed, then the next one with how many were held back.
 * Where each occurrence matters (a peer failing authentication), ${allow}
 * lets that many through in each LOG_BURST_MS before going quiet.
 */
#define LOG_BURST_MS	10000

struct log_burst {
	uint64_t quiet_until;
	unsigned held;
	unsigned logged;	/* in the current burst */
	unsigned allow;		/* per burst; 0 means 1 */
};

/**
 * log_burst(b, now_ms, held, len):
 * True if the message ${b} limits may be logged at ${now_ms}; then
 * ${held} (${len} bytes) says how many were held back since the last one,
 * " (N more since the last message)", or is "" if none were.
 */
int log_burst(struct log_burst *b, uint64_t now_ms, char *held, size_t len);

/**
 * log_burst_about(b, now_ms, level, about, fmt, ...):
 * Log one message about ${about} (NULL: nothing in particular) that ${b}
 * limits (see log_burst), ending with how many were held back since the
 * last one, if any.  Returns 1 if it was logged, 0 if held back.
 */
int log_burst_about(struct log_burst *b, uint64_t now_ms, int level,
    const struct log_about *about, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#define log_err(...)	log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)	log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	log_msg(LOG_DEBUG, __VA_ARGS__)

#endif /* !LOG_H */
