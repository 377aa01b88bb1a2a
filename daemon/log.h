/*
 * log: the daemon's messages.
 *
 * Levels are syslog's.  Messages go to stderr as "rstreamd: LEVEL: text"
 * (the systemd issue adds the journal); a message about a stream names
 * its tunnel, stream and peer, so one grep follows a connection.
 */
#ifndef LOG_H
#define LOG_H

#include <syslog.h>

/**
 * log_init(level):
 * Print messages at ${level} and more severe (LOG_ERR..LOG_DEBUG).
 */
void log_init(int level);

/**
 * log_level():
 * The current level.
 */
int log_level(void);

/**
 * log_msg(level, fmt, ...):
 * Log one message.
 */
void log_msg(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define log_err(...)	log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)	log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	log_msg(LOG_DEBUG, __VA_ARGS__)

#endif /* !LOG_H */
