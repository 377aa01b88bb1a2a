#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "sock.h"

static void
addr_text(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET) {
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
		snprintf(buf, len, "?");
	}
}

static int
unix_addr(const struct conf_addr *a, struct sockaddr_un *sun)
{

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(a->path) >= sizeof(sun->sun_path))
		return (-1);
	strcpy(sun->sun_path, a->path);
	return (0);
}

/*
 * A socket file nobody accepts on is left over from a crash: replace it.
 * One that answers belongs to a running process: never touch it.
 */
static int
unix_clear_stale(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return (0);
		snprintf(err, errlen, "cannot check %s: %s", path,
		    strerror(errno));
		return (-1);
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s exists and is not a socket", path);
		return (-1);
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return (-1);
	}
	rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	close(fd);
	if (rc == 0) {
		snprintf(err, errlen, "%s is in use by a running process",
		    path);
		return (-1);
	}
	if (errno != ECONNREFUSED) {
		snprintf(err, errlen, "cannot check %s: %s", path,
		    strerror(errno));
		return (-1);
	}
	if (unlink(path) != 0) {
		snprintf(err, errlen, "cannot remove stale %s: %s", path,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

static int
unix_owner(const char *path, const char *owner, const char *group,
    char *err, size_t errlen)
{
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;
	struct passwd *pw;
	struct group *gr;

	/* Numeric ids are taken as they are, like chown(1) does. */
	if (owner[0] != '\0' && owner[strspn(owner, "0123456789")] == '\0') {
		uid = (uid_t)strtoul(owner, NULL, 10);
	} else if (owner[0] != '\0') {
		if ((pw = getpwnam(owner)) == NULL) {
			snprintf(err, errlen, "unknown user '%s'", owner);
			return (-1);
		}
		uid = pw->pw_uid;
	}
	if (group[0] != '\0' && group[strspn(group, "0123456789")] == '\0') {
		gid = (gid_t)strtoul(group, NULL, 10);
	} else if (group[0] != '\0') {
		if ((gr = getgrnam(group)) == NULL) {
			snprintf(err, errlen, "unknown group '%s'", group);
			return (-1);
		}
		gid = gr->gr_gid;
	}
	if ((uid != (uid_t)-1 || gid != (gid_t)-1) && chown(path, uid, gid)) {
		snprintf(err, errlen, "chown %s: %s", path, strerror(errno));
		return (-1);
	}
	return (0);
}

/**
 * sock_unix_perms(path, mode, owner, group, err, errlen):
 * Give the socket file ${path} ${mode} and, if not empty, ${owner} and
 * ${group}.  Returns 0, or -1 with the reason in ${err}.
 */
int
sock_unix_perms(const char *path, unsigned mode, const char *owner,
    const char *group, char *err, size_t errlen)
{

	if (chmod(path, mode) != 0) {
		snprintf(err, errlen, "chmod %s: %s", path, strerror(errno));
		return (-1);
	}
	return (unix_owner(path, owner, group, err, errlen));
}

/**
 * sock_local_text(fd, buf, len):
 * The address listening socket ${fd} is bound to, as tcp://HOST:PORT or
 * unix:PATH (for sockets systemd passed).
 */
void
sock_local_text(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char text[128];

	memset(&ss, 0, sizeof(ss));
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
		snprintf(buf, len, "?");
	} else if (ss.ss_family == AF_UNIX) {
		const struct sockaddr_un *sun = (const void *)&ss;

		snprintf(buf, len, "unix:%.*s", (int)sizeof(sun->sun_path),
		    sun->sun_path);
	} else {
		addr_text((struct sockaddr *)&ss, text, sizeof(text));
		snprintf(buf, len, "tcp://%s", text);
	}
}

/* getaddrinfo for a TCP address: the first answer is the one used. */
static int
resolve_tcp(const struct conf_addr *a, int passive, struct addrinfo **ai,
    char *err, size_t errlen)
{
	struct addrinfo hints;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
	if ((rc = getaddrinfo(passive && a->host[0] == '\0' ? NULL : a->host,
	    a->port, &hints, ai)) != 0) {
		snprintf(err, errlen, "cannot resolve %s: %s", a->text,
		    gai_strerror(rc));
		return (-1);
	}
	return (0);
}

/**
 * sock_listen(a, mode, owner, group, bound, boundlen, err, errlen):
 * A non-blocking listening socket for ${a}.  TCP: the address actually
 * bound (port 0 picks one) is written to ${bound} as tcp://HOST:PORT.
 * Unix: a stale socket file (nobody accepting on it) is replaced, a live
 * one or a non-socket file is an error; the file gets ${mode} and, if not
 * empty, ${owner} and ${group}.  Returns the descriptor or -1.
 */
int
sock_listen(const struct conf_addr *a, unsigned mode, const char *owner,
    const char *group, char *bound, size_t boundlen, char *err,
    size_t errlen)
{
	struct addrinfo *ai = NULL;
	struct sockaddr_storage ss;
	struct sockaddr_un sun;
	socklen_t sl = sizeof(ss);
	char text[128];
	mode_t old_umask;
	int fd = -1, one = 1, rc;

	if (a->kind == CONF_ADDR_UNIX) {
		if (unix_addr(a, &sun) || unix_clear_stale(a->path, err,
		    errlen))
			goto fail;
		if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0)) < 0)
			goto syserr;
		/* Never exist, even briefly, with more access than asked. */
		old_umask = umask(0777 & ~mode);
		rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
		umask(old_umask);
		if (rc != 0)
			goto syserr;
		if (sock_unix_perms(a->path, mode, owner, group, err, errlen))
			goto fail;
		if (listen(fd, 512) != 0)
			goto syserr;
		snprintf(bound, boundlen, "unix:%s", a->path);
		return (fd);
	}
	if (resolve_tcp(a, 1, &ai, err, errlen))
		goto fail;
	if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) < 0)
		goto syserr;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
	    listen(fd, 512) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		goto syserr;
	addr_text((struct sockaddr *)&ss, text, sizeof(text));
	snprintf(bound, boundlen, "tcp://%s", text);
	freeaddrinfo(ai);
	return (fd);

syserr:
	snprintf(err, errlen, "cannot listen on %s: %s", a->text,
	    strerror(errno));
fail:
	if (fd >= 0)
		close(fd);
	if (ai != NULL)
		freeaddrinfo(ai);
	return (-1);
}

/**
 * sock_connect(a, err, errlen):
 * Start a non-blocking connect to ${a}.  Returns the descriptor (the
 * connect may still be in progress: wait for writability, then
 * sock_connect_result) or -1.
 */
int
sock_connect(const struct conf_addr *a, char *err, size_t errlen)
{
	struct addrinfo *ai = NULL;
	struct sockaddr_un sun;
	int fd = -1, one = 1, e;

	if (a->kind == CONF_ADDR_UNIX) {
		if (unix_addr(a, &sun) ||
		    (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0)) < 0)
			goto syserr;
		/* Unix connects finish at once; EAGAIN means a full backlog. */
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0)
			goto syserr;
		return (fd);
	}
	if (resolve_tcp(a, 0, &ai, err, errlen)) {
		errno = EHOSTUNREACH;
		return (-1);
	}
	if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) < 0)
		goto syserr;
	/* Latency matters more than packet count on a tunnel's far end. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 &&
	    errno != EINPROGRESS)
		goto syserr;
	freeaddrinfo(ai);
	return (fd);

syserr:
	e = errno;
	snprintf(err, errlen, "%s", strerror(e));
	if (fd >= 0)
		close(fd);
	if (ai != NULL)
		freeaddrinfo(ai);
	/* The caller tells "refused" from "unreachable" by errno. */
	errno = e;
	return (-1);
}

/**
 * sock_connect_result(fd):
 * 0 if the connect on ${fd} succeeded, else its errno.
 */
int
sock_connect_result(int fd)
{
	int e = 0;
	socklen_t l = sizeof(e);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l) != 0)
		return (errno);
	return (e);
}

/**
 * sock_close_reset(fd):
 * Close ${fd} so that the other end sees a reset, not a clean end.
 */
void
sock_close_reset(int fd)
{
	struct linger lg = { 1, 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

/**
 * sock_peer_text(fd, buf, len):
 * The peer address of connected ${fd} as text, for logs.
 */
void
sock_peer_text(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) != 0) {
		snprintf(buf, len, "?");
		return;
	}
	addr_text((struct sockaddr *)&ss, buf, len);
}
