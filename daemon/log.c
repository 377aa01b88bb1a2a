#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "log.h"

static int cur_level = LOG_INFO;

/**
 * log_init(level):
 * Print messages at ${level} and more severe (LOG_ERR..LOG_DEBUG).
 */
void
log_init(int level)
{

	cur_level = level;
}

/**
 * log_level():
 * The current level.
 */
int
log_level(void)
{

	return (cur_level);
}

static const char *
level_name(int level)
{

	switch (level) {
	case LOG_EMERG:
	case LOG_ALERT:
	case LOG_CRIT:
	case LOG_ERR:
		return ("error");
	case LOG_WARNING:
		return ("warning");
	case LOG_NOTICE:
		return ("notice");
	case LOG_INFO:
		return ("info");
	default:
		return ("debug");
	}
}

/**
 * log_msg(level, fmt, ...):
 * Log one message.
 */
void
log_msg(int level, const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	if (level > cur_level)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* One write per line, so lines from a busy daemon never interleave. */
	fprintf(stderr, "rstreamd: %s: %s\n", level_name(level), buf);
	fflush(stderr);
}
