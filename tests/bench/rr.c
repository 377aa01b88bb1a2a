/*
 * rr: request/response round trips over TCP, for the tunnel benchmark.
 * Sends SIZE bytes, waits for SIZE bytes back (an echo server answers),
 * N times, and prints the median and mean round trip in microseconds.
 *
 * Usage: rr -p PORT [-H HOST] [-s SIZE] [-n N]
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3);
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

int
main(int argc, char **argv)
{
	const char *host = "127.0.0.1";
	struct sockaddr_in sin;
	int port = 0, size = 64, n = 1000, ch, fd, one = 1, i;
	char buf[65536];
	double *rtt, sum = 0, t0;
	ssize_t r, got;

	while ((ch = getopt(argc, argv, "H:p:s:n:")) != -1) {
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
		default:
			return (2);
		}
	}
	if (port <= 0 || size < 1 || size > (int)sizeof(buf) || n < 1)
		return (2);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sin.sin_addr) != 1 ||
	    (fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
		perror("rr: connect");
		return (1);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if ((rtt = calloc((size_t)n, sizeof(double))) == NULL)
		return (1);
	memset(buf, 'x', sizeof(buf));
	for (i = 0; i < n; i++) {
		t0 = now_us();
		if (write(fd, buf, (size_t)size) != size) {
			perror("rr: write");
			return (1);
		}
		for (got = 0; got < size; got += r) {
			if ((r = read(fd, buf, (size_t)(size - got))) <= 0) {
				fprintf(stderr, "rr: read failed after %d\n", i);
				return (1);
			}
		}
		rtt[i] = now_us() - t0;
		sum += rtt[i];
	}
	qsort(rtt, (size_t)n, sizeof(double), cmp);
	printf("rr: %d round trips of %d bytes: median %.1f us, mean %.1f us\n",
	    n, size, rtt[n / 2], sum / n);
	close(fd);
	free(rtt);
	return (0);
}
