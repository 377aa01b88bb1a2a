/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include "log.h"

static int cur_level = LOG_INFO;
static int journal;		/* stderr is the journal */
static int file_fd = -1;
static char file_path[4096];

/* True if systemd connected stderr to the journal (see systemd.exec(5)). */
static int
stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (e == NULL || sscanf(e, "%llu:%llu", &dev, &ino) != 2 ||
	    fstat(STDERR_FILENO, &st) != 0)
		return (0);
	return ((unsigned long long)st.st_dev == dev &&
	    (unsigned long long)st.st_ino == ino);
}

void
log_init(int level)
{

	cur_level = level;
	journal = stderr_is_journal();
}

void
log_set_level(int level)
{

	cur_level = level;
}

int
log_level(void)
{

	return (cur_level);
}

const char *
log_destination(void)
{

	if (file_fd >= 0)
		return (file_path);
	return (journal ? "journal" : "stderr");
}

static int
open_file(const char *path, char *err, size_t errlen)
{
	int fd;

	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0)
		snprintf(err, errlen, "cannot open log file %s: %s", path,
		    strerror(errno));
	return (fd);
}

int
log_file_open(const char *path, char *err, size_t errlen)
{
	int fd = -1;

	if (path[0] != '\0' && strcmp(path, file_path) == 0 && file_fd >= 0)
		return (0);
	if (strlen(path) >= sizeof(file_path)) {
		snprintf(err, errlen, "log file name too long");
		return (-1);
	}
	if (path[0] != '\0' && (fd = open_file(path, err, errlen)) < 0)
		return (-1);
	if (file_fd >= 0)
		close(file_fd);
	file_fd = fd;
	strcpy(file_path, path);
	return (0);
}

void
log_reopen(void)
{
	char err[4200];
	int fd;

	if (file_fd < 0)
		return;
	if ((fd = open_file(file_path, err, sizeof(err))) < 0) {
		/* Keep writing where we were: nothing is lost. */
		log_msg(LOG_ERR, "%s; still logging to the old file", err);
		return;
	}
	close(file_fd);
	file_fd = fd;
	log_msg(LOG_NOTICE, "log file reopened");
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

static int
to_journal(int level, const struct log_about *a, const char *text)
{
	char f[6][1200];
	struct iovec iov[6];
	int n = 0, i;

	snprintf(f[n++], sizeof(f[0]), "MESSAGE=%s", text);
	snprintf(f[n++], sizeof(f[0]), "PRIORITY=%d", level);
	snprintf(f[n++], sizeof(f[0]), "SYSLOG_IDENTIFIER=rstreamd");
	if (a != NULL && a->tunnel != NULL)
		snprintf(f[n++], sizeof(f[0]), "TUNNEL=%s", a->tunnel);
	if (a != NULL && a->stream != 0)
		snprintf(f[n++], sizeof(f[0]), "STREAM=%llu",
		    (unsigned long long)a->stream);
	if (a != NULL && a->peer != NULL && a->peer[0] != '\0')
		snprintf(f[n++], sizeof(f[0]), "PEER=%s", a->peer);
	for (i = 0; i < n; i++) {
		iov[i].iov_base = f[i];
		iov[i].iov_len = strlen(f[i]);
	}
	return (sd_journal_sendv(iov, n));
}

static void __attribute__((format(printf, 3, 0)))
emit(int level, const struct log_about *a, const char *fmt, va_list ap)
{
	char buf[1024], line[1200], stamp[40];
	struct timespec ts;
	struct tm tm;
	int n;

	if (level > cur_level)
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (file_fd >= 0) {
		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
		n = snprintf(line, sizeof(line), "%s.%03ld rstreamd[%ld]: "
		    "%s: %s\n", stamp, ts.tv_nsec / 1000000L, (long)getpid(),
		    level_name(level), buf);
		if (n > (int)sizeof(line) - 1)
			n = (int)sizeof(line) - 1;
		/* One write per line: lines never interleave. */
		if (write(file_fd, line, (size_t)n) == n)
			return;
	} else if (journal && to_journal(level, a, buf) == 0) {
		return;
	}
	fprintf(stderr, "rstreamd: %s: %s\n", level_name(level), buf);
	fflush(stderr);
}

/*
 * Bursts: workers' shared turns may count the same burst at once (a
 * daemon-wide one such as max_memory's), so a burst is "atomic" (Threads
 * in loop.h) through this lock; it is never on the data path.
 */
static pthread_mutex_t burst_mu = PTHREAD_MUTEX_INITIALIZER;

static int
burst_count(struct log_burst *b, uint64_t now_ms, char *held, size_t len)
{

	if (now_ms < b->quiet_until) {
		if (b->logged < b->allow) {
			b->logged++;
			if (len > 0)
				held[0] = '\0';
			return (1);
		}
		b->held++;
		return (0);
	}
	if (b->held > 0)
		snprintf(held, len, " (%u more since the last message)",
		    b->held);
	else if (len > 0)
		held[0] = '\0';
	b->held = 0;
	b->logged = 1;
	b->quiet_until = now_ms + LOG_BURST_MS;
	return (1);
}

int
log_burst(struct log_burst *b, uint64_t now_ms, char *held, size_t len)
{
	int r;

	pthread_mutex_lock(&burst_mu);
	r = burst_count(b, now_ms, held, len);
	pthread_mutex_unlock(&burst_mu);
	return (r);
}

int
log_burst_about(struct log_burst *b, uint64_t now_ms, int level,
    const struct log_about *about, const char *fmt, ...)
{
	char msg[1024], held[64];
	va_list ap;

	if (!log_burst(b, now_ms, held, sizeof(held)))
		return (0);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (about != NULL)
		log_about(level, about, "%s%s", msg, held);
	else
		log_msg(level, "%s%s", msg, held);
	return (1);
}

void
log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(level, NULL, fmt, ap);
	va_end(ap);
}

void
log_about(int level, const struct log_about *about, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(level, about, fmt, ap);
	va_end(ap);
}
