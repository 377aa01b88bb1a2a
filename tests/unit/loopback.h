/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * loopback: a TCP listener on 127.0.0.1, on a port the kernel picks, for
 * tests that need a real socket peer (test_dial, bridge-sim).  A machine
 * without a loopback interface cannot run them: it aborts.
 */
#ifndef LOOPBACK_H
#define LOOPBACK_H

#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdlib.h>
#include <string.h>

/* Listen on 127.0.0.1 with ${backlog}; the address, port included, in
 * ${sa}.  Returns the listening socket. */
static inline int
loopback_listen(int backlog, struct sockaddr_in *sa)
{
	socklen_t sl = sizeof(*sa);
	int fd;

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    bind(fd, (struct sockaddr *)sa, sizeof(*sa)) != 0 ||
	    listen(fd, backlog) != 0 ||
	    getsockname(fd, (struct sockaddr *)sa, &sl) != 0)
		abort();
	return (fd);
}

#endif
