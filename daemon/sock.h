/*
 * sock: the local side's sockets: listeners for clients, non-blocking
 * connects to targets, and ending a connection with a reset.
 */
#ifndef SOCK_H
#define SOCK_H

#include <stddef.h>

#include "conf.h"

/**
 * sock_listen(a, mode, owner, group, bound, boundlen, err, errlen):
 * A non-blocking listening socket for ${a}.  TCP: the address actually
 * bound (port 0 picks one) is written to ${bound} as tcp://HOST:PORT.
 * Unix: a stale socket file (nobody accepting on it) is replaced, a live
 * one or a non-socket file is an error; the file gets ${mode} and, if not
 * empty, ${owner} and ${group}.  Returns the descriptor or -1.
 */
int sock_listen(const struct conf_addr *a, unsigned mode, const char *owner,
    const char *group, char *bound, size_t boundlen, char *err,
    size_t errlen);

/**
 * sock_unix_perms(path, mode, owner, group, err, errlen):
 * Give the socket file ${path} ${mode} and, if not empty, ${owner} and
 * ${group}.  Returns 0, or -1 with the reason in ${err}.
 */
int sock_unix_perms(const char *path, unsigned mode, const char *owner,
    const char *group, char *err, size_t errlen);

/**
 * sock_local_text(fd, buf, len):
 * The address listening socket ${fd} is bound to, as tcp://HOST:PORT or
 * unix:PATH (for sockets systemd passed).
 */
void sock_local_text(int fd, char *buf, size_t len);

/**
 * sock_connect(a, err, errlen):
 * Start a non-blocking connect to ${a}.  Returns the descriptor (the
 * connect may still be in progress: wait for writability, then
 * sock_connect_result) or -1 with errno set (ECONNREFUSED: refused).
 */
int sock_connect(const struct conf_addr *a, char *err, size_t errlen);

/**
 * sock_connect_result(fd):
 * 0 if the connect on ${fd} succeeded, else its errno.
 */
int sock_connect_result(int fd);

/**
 * sock_close_reset(fd):
 * Close ${fd} so that the other end sees a reset, not a clean end.
 */
void sock_close_reset(int fd);

/**
 * sock_peer_text(fd, buf, len):
 * The peer address of connected ${fd} as text, for logs.
 */
void sock_peer_text(int fd, char *buf, size_t len);

#endif /* !SOCK_H */
