/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * sock: the local side's sockets: listeners for clients, non-blocking
 * connects to targets, and ending a connection with a reset.
 */
#ifndef SOCK_H
#define SOCK_H

#include <sys/types.h>
#include <sys/socket.h>

#include <stddef.h>

#include "conf.h"

/*
 * A Unix socket file rstreamd bound: what it was when made, so that later
 * changes (permissions on a reload, removal at exit) touch that file only,
 * never a symbolic link or another file put in its place.
 */
struct sock_file {
	int set;
	dev_t dev;
	ino_t ino;
};

/* A socket file's permissions, to put back when a reload is undone. */
struct sock_perms {
	mode_t mode;
	uid_t uid;
	gid_t gid;
};

/* A socket file's owner and group as ids: (uid_t)-1, (gid_t)-1: keep. */
struct sock_ids {
	uid_t uid;
	gid_t gid;
};

/**
 * sock_ids(owner, group, ids, err, errlen):
 * The ids of user ${owner} and group ${group} (names, or numbers as
 * chown(1) takes them; "": keep), looked up in the name service, which
 * may block: never call it on the data path.  Returns 0, or -1 with the
 * reason in ${err} ("unknown user 'NAME'").
 */
int sock_ids(const char *owner, const char *group, struct sock_ids *ids,
    char *err, size_t errlen);

/**
 * sock_listen(a, mode, ids, sf, bound, boundlen, err, errlen):
 * A non-blocking listening socket for ${a}.  TCP: the address actually
 * bound (port 0 picks one) is written to ${bound} as tcp://HOST:PORT.
 * Unix: a stale socket file (nobody accepting on it) is replaced; a live
 * one (even one whose backlog is full), or a file that is not a socket, is
 * an error.  The new file is created with ${mode} and gets the owner and
 * group ${ids} say; ${*sf} records it.  Returns the descriptor, or -1
 * with the reason in ${err} and no file left behind.
 */
int sock_listen(const struct conf_addr *a, unsigned mode,
    const struct sock_ids *ids, struct sock_file *sf, char *bound,
    size_t boundlen, char *err, size_t errlen);

/**
 * sock_unix_perms(path, sf, mode, ids, old, err, errlen):
 * Give the socket file ${path} ${mode} and the owner and group ${ids}
 * say, storing what it had into ${old} (NULL: not wanted).  Only the
 * file ${sf} recorded is changed: a symbolic link or any other file found
 * at ${path} is an error and is left alone.  Returns 0, or -1 with the
 * reason in ${err}.
 */
int sock_unix_perms(const char *path, const struct sock_file *sf,
    unsigned mode, const struct sock_ids *ids, struct sock_perms *old,
    char *err, size_t errlen);

/**
 * sock_unix_restore(path, sf, old):
 * Put back the permissions sock_unix_perms stored in ${old}, on the same
 * terms.  Returns 0 or -1.
 */
int sock_unix_restore(const char *path, const struct sock_file *sf,
    const struct sock_perms *old);

/**
 * sock_unix_unlink(path, sf):
 * Remove ${path} if it is still the socket file ${sf} recorded.
 */
void sock_unix_unlink(const char *path, const struct sock_file *sf);

/* How long a listener rests when the process is out of descriptors. */
#define SOCK_ACCEPT_PAUSE_MS	200

/**
 * sock_accept(lfd, w):
 * Accept a connection on listening socket ${lfd} (non-blocking,
 * close-on-exec).  Returns it, or -1 with errno set; out of descriptors
 * (EMFILE, ENFILE), ${lfd}'s watcher ${w} rests SOCK_ACCEPT_PAUSE_MS
 * instead of waking the loop for ever.
 */
struct loop_fd;
int sock_accept(int lfd, struct loop_fd *w);

/**
 * sock_nodelay(fd):
 * Turn Nagle's algorithm off on TCP socket ${fd}: a tunnel forwards what
 * it reads at once, and a small request must not wait for an ACK.
 */
void sock_nodelay(int fd);

/**
 * sock_local_text(fd, buf, len):
 * The address listening socket ${fd} is bound to, as tcp://HOST:PORT or
 * unix:PATH (for sockets systemd passed).
 */
void sock_local_text(int fd, char *buf, size_t len);

/**
 * sock_connect_unix(path):
 * Connect to the Unix socket ${path} (such connects finish at once).
 * Returns the non-blocking descriptor, or -1 with errno set (ECONNREFUSED:
 * nobody listens; EAGAIN: its backlog is full).
 */
int sock_connect_unix(const char *path);

/**
 * sock_connect_addr(sa, len):
 * Start a non-blocking TCP connect to ${sa}, with TCP_NODELAY.  Returns
 * the descriptor (the connect may still be in progress: wait for
 * writability, then sock_connect_result), or -1 with errno set
 * (ECONNREFUSED: refused).
 */
int sock_connect_addr(const struct sockaddr *sa, socklen_t len);

/**
 * sock_connect_result(fd):
 * 0 if the connect on ${fd} succeeded, else its errno.
 */
int sock_connect_result(int fd);

/**
 * sock_unread(fd):
 * Whether connected socket ${fd} holds bytes not read yet (0 when it
 * cannot say).
 */
int sock_unread(int fd);

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

/**
 * sock_peer_uid(fd, uid):
 * The user id of the process at the other end of Unix socket ${fd}, as
 * the kernel recorded it at connect (SO_PEERCRED), into ${*uid}.  Returns
 * 0, or -1 when the kernel cannot tell.
 */
int sock_peer_uid(int fd, uid_t *uid);

#endif /* !SOCK_H */
