/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * sockaddrs: socket addresses built from text, for the tests that take
 * them (test_addr, test_proxy).
 */
#ifndef SOCKADDRS_H
#define SOCKADDRS_H

#include <sys/socket.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdio.h>
#include <string.h>

/* IPv4 address ${a}, port ${port}. */
static inline struct sockaddr_in
v4(const char *a, unsigned port)
{
	struct sockaddr_in s;

	memset(&s, 0, sizeof(s));
	s.sin_family = AF_INET;
	s.sin_port = htons(port);
	inet_pton(AF_INET, a, &s.sin_addr);
	return (s);
}

/* IPv6 address ${a}, port ${port}. */
static inline struct sockaddr_in6
v6(const char *a, unsigned port)
{
	struct sockaddr_in6 s;

	memset(&s, 0, sizeof(s));
	s.sin6_family = AF_INET6;
	s.sin6_port = htons(port);
	inet_pton(AF_INET6, a, &s.sin6_addr);
	return (s);
}

/* The Unix socket at ${path}. */
static inline struct sockaddr_un
un(const char *path)
{
	struct sockaddr_un s;

	memset(&s, 0, sizeof(s));
	s.sun_family = AF_UNIX;
	snprintf(s.sun_path, sizeof(s.sun_path), "%s", path);
	return (s);
}

/* Any of them as a struct sockaddr. */
#define SA(x)	((const struct sockaddr *)(const void *)&(x))

#endif /* !SOCKADDRS_H */
