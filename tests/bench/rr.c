/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * rr: request/response round trips over TCP, for the tunnel benchmark.
 * Sends SIZE bytes, waits for SIZE bytes back (an echo server answers),
 * N times on one connection, and prints the median, 99th percentile and
 * mean round trip in microseconds.  With -c, every round trip is a new
 * connection (connect, request, response, close): it prints the time from
 * connect() to the response's last byte, and the connections per second.
 * With -g US, each request is written in two halves US microseconds apart
 * (an echo then answers in two pieces: what Nagle's algorithm delays).
 * With -b up or -b down, it is a bulk stream instead (tests/bench/hol-bench):
 * it sends one byte, 'U' or 'D', that tells that benchmark's target to
 * be a sink or a source, then writes zeros to it or reads what comes,
 * until SIGTERM; it prints the bytes moved, and on each SIGUSR1 the bytes
 * moved so far ("mark N"), so a rate can leave the start out.  With
 * -r KIB, it moves at most KIB KiB a second, in pieces of 5 ms (reading
 * down too: the sender is held back by what the stream holds), so that
 * two paths that carry different bulk rates can be compared at one; the
 * pace counts from the last mark, so a stream that fell behind before it
 * catches up with nothing after (its rate from the mark is at most KIB).
 * With -l, it is the echo instead: it listens on HOST:PORT, says
 * "waiting", and echoes each connection, one at a time, until it ends:
 * the other end of a round trip with no relay at all, whose cost is that
 * of verbs_rr -l's over RDMA (one read and one write per request).
 *
 * Usage: rr -p PORT [-H HOST] [-s SIZE] [-n N] [-c] [-g US]
 *        rr -p PORT [-H HOST] -b up|down [-r KIB]
 *        rr -l -p PORT [-H HOST]
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rtt.h"

static int
dial(const struct sockaddr_in *sin)
{
	int fd, one = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    connect(fd, (const struct sockaddr *)sin, sizeof(*sin)) != 0) {
		perror("rr: connect");
		exit(1);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return (fd);
}

/* One request of ${size} bytes (in two halves ${gap} us apart if not 0)
 * and its whole echo. */
static void
round_trip(int fd, char *buf, int size, int gap, int i)
{
	ssize_t r, got;
	int first = gap > 0 ? size / 2 : size;

	if (write(fd, buf, (size_t)first) != first) {
		perror("rr: write");
		exit(1);
	}
	if (first < size) {
		usleep((useconds_t)gap);
		if (write(fd, buf + first, (size_t)(size - first)) !=
		    size - first) {
			perror("rr: write");
			exit(1);
		}
	}
	for (got = 0; got < size; got += r) {
		if ((r = read(fd, buf, (size_t)(size - got))) <= 0) {
			fprintf(stderr, "rr: read failed after %d\n", i);
			exit(1);
		}
	}
}

static volatile sig_atomic_t stop, mark;

static void
on_signal(int sig)
{

	if (sig == SIGTERM)
		stop = 1;
	else
		mark = 1;
}

/* -r: wait until ${moved} bytes are no more than ${kib} KiB a second
 * since ${start} (us) allows. */
static void
pace(unsigned long long moved, int kib, double start)
{
	double due = start + (double)moved * 1e6 / 1024 / kib, d;
	struct timespec ts;

	if ((d = due - rtt_now_us()) <= 0)
		return;
	ts.tv_sec = (time_t)(d / 1e6);
	ts.tv_nsec = (long)((d - (double)ts.tv_sec * 1e6) * 1e3);
	nanosleep(&ts, NULL);	/* a signal cuts it short: the loop looks */
}

/* -b: moves bytes one way until SIGTERM, at most ${kib} KiB a second if
 * not 0; 0 if it was stopped, 1 if the stream ended first.  It says
 * "started" once SIGUSR1 would not kill it. */
static int
bulk(const struct sockaddr_in *sin, int up, int kib, char *buf, size_t len)
{
	struct sigaction sa;
	unsigned long long moved = 0, paced = 0;
	double start;
	ssize_t r = 1;
	char c = up ? 'U' : 'D';
	int fd;

	/* No SA_RESTART: a write or read blocked when it comes returns. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	fd = dial(sin);
	if (write(fd, &c, 1) != 1) {
		perror("rr: write");
		return (1);
	}
	memset(buf, 0, len);
	printf("rr: bulk started\n");	/* signals are handled now */
	fflush(stdout);
	if (kib > 0) {
		size_t piece = (size_t)kib * 1024 / 200;	/* 5 ms */

		if (piece < 1024)
			piece = 1024;
		if (piece < len)
			len = piece;
	}
	start = rtt_now_us();
	while (!stop) {
		if (mark) {
			mark = 0;
			printf("rr: mark %llu\n", moved);
			fflush(stdout);
			start = rtt_now_us();
			paced = moved;
		}
		r = up ? write(fd, buf, len) : read(fd, buf, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		moved += (unsigned long long)r;
		if (kib > 0)
			pace(moved - paced, kib, start);
	}
	printf("rr: bulk %s %llu bytes%s\n", up ? "up" : "down", moved,
	    stop ? "" : ", ended before it was stopped");
	return (!stop);
}

/* -l: echo every connection to ${sin}, one after another, for ever. */
static int
echo(const struct sockaddr_in *sin, char *buf, size_t len)
{
	int lfd, fd, one = 1;
	ssize_t r;

	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(lfd, (const struct sockaddr *)sin, sizeof(*sin)) != 0 ||
	    listen(lfd, 8) != 0) {
		perror("rr: listen");
		return (1);
	}
	printf("rr: waiting on port %u\n", (unsigned)ntohs(sin->sin_port));
	fflush(stdout);
	for (;;) {
		if ((fd = accept(lfd, NULL, NULL)) < 0) {
			if (errno == EINTR)
				continue;
			perror("rr: accept");
			return (1);
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		while ((r = read(fd, buf, len)) > 0)
			if (write(fd, buf, (size_t)r) != r)
				break;
		close(fd);
	}
}

int
main(int argc, char **argv)
{
	const char *host = "127.0.0.1";
	struct sockaddr_in sin;
	int port = 0, size = 64, n = 1000, per_conn = 0, gap = 0, ch, fd = -1;
	int i, dir = -1, listener = 0, kib = 0;
	static char buf[65536];
	double *rtt, t0, start;

	while ((ch = getopt(argc, argv, "H:p:s:n:cg:b:lr:")) != -1) {
		switch (ch) {
		case 'H':
			host = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 's':
			size = atoi(optarg);
			break;
		case 'n':
			n = atoi(optarg);
			break;
		case 'c':
			per_conn = 1;
			break;
		case 'l':
			listener = 1;
			break;
		case 'r':
			kib = atoi(optarg);
			break;
		case 'g':
			gap = atoi(optarg);
			break;
		case 'b':
			dir = strcmp(optarg, "up") == 0 ? 1 :
			    strcmp(optarg, "down") == 0 ? 0 : -2;
			break;
		default:
			return (2);
		}
	}
	if (port <= 0 || size < (gap > 0 ? 2 : 1) || size > (int)sizeof(buf) ||
	    n < 1 || gap < 0 || dir == -2 || kib < 0)
		return (2);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
		return (2);
	if (listener)
		return (echo(&sin, buf, sizeof(buf)));
	if (dir >= 0)
		return (bulk(&sin, dir, kib, buf, sizeof(buf)));
	if ((rtt = calloc((size_t)n, sizeof(double))) == NULL)
		return (1);
	memset(buf, 'x', sizeof(buf));
	if (!per_conn)
		fd = dial(&sin);
	start = rtt_now_us();
	for (i = 0; i < n; i++) {
		t0 = rtt_now_us();
		if (per_conn)
			fd = dial(&sin);
		round_trip(fd, buf, size, gap, i);
		rtt[i] = rtt_now_us() - t0;
		if (per_conn)
			close(fd);
	}
	start = rtt_now_us() - start;
	rtt_report(rtt, n, per_conn ? "connections with one round trip" :
	    "round trips", size, start);
	if (!per_conn)
		close(fd);
	free(rtt);
	return (0);
}
