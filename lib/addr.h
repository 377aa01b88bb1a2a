/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * addr: socket addresses as people read them, for logs, status and
 * errors.  One spelling everywhere: "192.0.2.1:7471", "[2001:db8::1]:7471",
 * "unix" for a Unix socket, "?" for none, "(family N)" for anything else.
 */
#ifndef ADDR_H
#define ADDR_H

#include <sys/socket.h>

#include <stddef.h>

/* Longest text addr_text writes, with its NUL. */
#define ADDR_TEXT_MAX 56

/*
 * addr_text(sa, buf, len): write sa (NULL allowed) into buf as above,
 * truncated to len bytes with a NUL.
 */
void addr_text(const struct sockaddr *sa, char *buf, size_t len);

/*
 * addr_same(x, y, ports): whether IPv4 or IPv6 addresses x and y are the
 * same host, and (if ports) the same port.  Other families never are.
 */
int addr_same(const struct sockaddr *x, const struct sockaddr *y, int ports);

#endif
