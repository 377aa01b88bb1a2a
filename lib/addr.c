/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdio.h>
#include <string.h>

#include "addr.h"

void
addr_text(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa == NULL) {
		snprintf(buf, len, "?");
	} else if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else if (sa->sa_family == AF_UNIX) {
		snprintf(buf, len, "unix");
	} else {
		snprintf(buf, len, "(family %d)", sa->sa_family);
	}
}

int
addr_same(const struct sockaddr *x, const struct sockaddr *y, int ports)
{
	const struct sockaddr_in *x4 = (const void *)x, *y4 = (const void *)y;
	const struct sockaddr_in6 *x6 = (const void *)x, *y6 = (const void *)y;

	if (x->sa_family != y->sa_family)
		return (0);
	if (x->sa_family == AF_INET)
		return (x4->sin_addr.s_addr == y4->sin_addr.s_addr &&
		    (!ports || x4->sin_port == y4->sin_port));
	if (x->sa_family == AF_INET6)
		return (memcmp(&x6->sin6_addr, &y6->sin6_addr,
		    sizeof(x6->sin6_addr)) == 0 &&
		    (!ports || x6->sin6_port == y6->sin6_port));
	return (0);
}
