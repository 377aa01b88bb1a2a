/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/types.h>
#include <sys/ioctl.h>
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

#include "addr.h"
#include "conf.h"
#include "loop.h"
#include "sock.h"

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
 * One that answers belongs to a running process: never touch it.  The
 * probe does not block: a live listener whose backlog is full answers
 * EAGAIN, which means "in use" as much as an accepted connect does.
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
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return (-1);
	}
	rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	if (rc != 0)
		rc = errno;
	close(fd);
	if (rc == 0 || rc == EAGAIN || rc == EINPROGRESS) {
		snprintf(err, errlen, "%s is in use by a running process",
		    path);
		return (-1);
	}
	if (rc != ECONNREFUSED) {
		snprintf(err, errlen, "cannot check %s: %s", path,
		    strerror(rc));
		return (-1);
	}
	if (unlink(path) != 0) {
		snprintf(err, errlen, "cannot remove stale %s: %s", path,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

int
sock_ids(const char *owner, const char *group, struct sock_ids *ids,
    char *err, size_t errlen)
{
	struct passwd *pw;
	struct group *gr;

	ids->uid = (uid_t)-1;
	ids->gid = (gid_t)-1;
	if (owner[0] != '\0' && owner[strspn(owner, "0123456789")] == '\0') {
		ids->uid = (uid_t)strtoul(owner, NULL, 10);
	} else if (owner[0] != '\0') {
		if ((pw = getpwnam(owner)) == NULL) {
			snprintf(err, errlen, "unknown user '%s'", owner);
			return (-1);
		}
		ids->uid = pw->pw_uid;
	}
	if (group[0] != '\0' && group[strspn(group, "0123456789")] == '\0') {
		ids->gid = (gid_t)strtoul(group, NULL, 10);
	} else if (group[0] != '\0') {
		if ((gr = getgrnam(group)) == NULL) {
			snprintf(err, errlen, "unknown group '%s'", group);
			return (-1);
		}
		ids->gid = gr->gr_gid;
	}
	return (0);
}

/*
 * Open ${path} itself, never what a symbolic link there points to, and
 * only if it is still the socket file ${sf} recorded.  O_PATH opens
 * without reading: a socket cannot be opened otherwise.
 */
static int
unix_open_own(const char *path, const struct sock_file *sf, char *err,
    size_t errlen)
{
	struct stat st;
	int fd;

	/* With O_PATH, O_NOFOLLOW opens a symbolic link itself. */
	if ((fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path,
		    strerror(errno));
		return (-1);
	}
	if (fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
		snprintf(err, errlen, "%s is a symbolic link, not the socket "
		    "rstreamd made; leaving it alone", path);
		close(fd);
		return (-1);
	}
	if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode) || !sf->set ||
	    st.st_dev != sf->dev || st.st_ino != sf->ino) {
		snprintf(err, errlen, "%s is no longer the socket rstreamd "
		    "made (replaced?); leaving it alone", path);
		close(fd);
		return (-1);
	}
	return (fd);
}

/*
 * chmod on the file an O_PATH descriptor holds: through /proc, which
 * names that very file (Linux has no fchmod for O_PATH descriptors).
 */
static int
fd_chmod(int fd, mode_t mode)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return (chmod(proc, mode));
}

static int
fd_chown(int fd, uid_t uid, gid_t gid)
{

	return (fchownat(fd, "", uid, gid, AT_EMPTY_PATH));
}

/*
 * A failed chown or chmod of a socket file.  Refused (EPERM), it is the
 * capability rstreamd.service leaves out: say so, and where it is given.
 * For a group alone (${group_only}), a daemon that is not root needs no
 * capability if it is a member of that group.
 */
static void
perms_error(char *err, size_t errlen, const char *op, const char *path,
    const char *cap, int group_only)
{

	if (errno == EPERM && group_only && geteuid() != 0)
		snprintf(err, errlen, "%s %s: %s (rstreamd lacks %s and is not "
		    "in that group: under systemd, add the group to the "
		    "service's SupplementaryGroups=, or add the drop-in "
		    "rstreamd-unix-owner.conf; see rstreamd(8))", op, path,
		    strerror(EPERM), cap);
	else if (errno == EPERM)
		snprintf(err, errlen, "%s %s: %s (rstreamd lacks %s: under "
		    "systemd, add the drop-in rstreamd-unix-owner.conf; see "
		    "rstreamd(8))", op, path, strerror(EPERM), cap);
	else
		snprintf(err, errlen, "%s %s: %s", op, path, strerror(errno));
}

int
sock_unix_perms(const char *path, const struct sock_file *sf,
    unsigned mode, const struct sock_ids *ids, struct sock_perms *old,
    char *err, size_t errlen)
{
	struct stat st;
	int fd, rc = -1;

	if ((fd = unix_open_own(path, sf, err, errlen)) < 0)
		return (-1);
	if (fstat(fd, &st) != 0) {
		snprintf(err, errlen, "cannot check %s: %s", path,
		    strerror(errno));
		goto out;
	}
	if (old != NULL) {
		old->mode = st.st_mode & 07777;
		old->uid = st.st_uid;
		old->gid = st.st_gid;
	}
	if ((st.st_mode & 07777) != mode && fd_chmod(fd, (mode_t)mode) != 0) {
		perms_error(err, errlen, "chmod", path, "CAP_FOWNER", 0);
		goto out;
	}
	if ((ids->uid != (uid_t)-1 || ids->gid != (gid_t)-1) &&
	    fd_chown(fd, ids->uid, ids->gid) != 0) {
		perms_error(err, errlen, "chown", path, "CAP_CHOWN",
		    ids->uid == (uid_t)-1);
		if (old != NULL)
			(void)fd_chmod(fd, old->mode);
		goto out;
	}
	rc = 0;
out:
	close(fd);
	return (rc);
}

int
sock_unix_restore(const char *path, const struct sock_file *sf,
    const struct sock_perms *old)
{
	char err[256];
	int fd, rc;

	if ((fd = unix_open_own(path, sf, err, sizeof(err))) < 0)
		return (-1);
	rc = fd_chown(fd, old->uid, old->gid) | fd_chmod(fd, old->mode);
	close(fd);
	return (rc);
}

void
sock_unix_unlink(const char *path, const struct sock_file *sf)
{
	struct stat st;

	if (sf->set && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    st.st_dev == sf->dev && st.st_ino == sf->ino)
		unlink(path);
}

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

/* Whether ${sa}'s port is one only CAP_NET_BIND_SERVICE may bind. */
static int
low_port(const struct sockaddr *sa)
{
	unsigned port = 0;

	if (sa->sa_family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)(const void *)sa)->
		    sin_port);
	else if (sa->sa_family == AF_INET6)
		port = ntohs(((const struct sockaddr_in6 *)(const void *)sa)->
		    sin6_port);
	return (port > 0 && port < 1024);
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

int
sock_listen(const struct conf_addr *a, unsigned mode,
    const struct sock_ids *ids, struct sock_file *sf, char *bound,
    size_t boundlen, char *err, size_t errlen)
{
	struct addrinfo *ai = NULL;
	struct sockaddr_storage ss;
	struct sockaddr_un sun;
	socklen_t sl = sizeof(ss);
	struct stat st;
	char text[128];
	mode_t old_umask;
	int fd = -1, one = 1, rc;

	memset(sf, 0, sizeof(*sf));
	if (a->kind == CONF_ADDR_UNIX) {
		if (unix_addr(a, &sun)) {
			snprintf(err, errlen, "path too long: %s", a->path);
			goto fail;
		}
		if (unix_clear_stale(a->path, err, errlen))
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
		/* From here on a failure removes the file it made. */
		if (lstat(a->path, &st) != 0 || !S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "%s changed under rstreamd while "
			    "it was being created", a->path);
			goto fail;
		}
		sf->set = 1;
		sf->dev = st.st_dev;
		sf->ino = st.st_ino;
		if ((ids->uid != (uid_t)-1 || ids->gid != (gid_t)-1) &&
		    sock_unix_perms(a->path, sf, mode, ids, NULL, err, errlen))
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
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		if (errno != EACCES || !low_port(ai->ai_addr))
			goto syserr;
		snprintf(err, errlen, "cannot listen on %s: %s (a port below "
		    "1024 needs CAP_NET_BIND_SERVICE: under systemd, see "
		    "\"Ports below 1024\" in rstreamd(8))", a->text,
		    strerror(EACCES));
		goto fail;
	}
	if (listen(fd, 512) != 0 ||
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
	if (a->kind == CONF_ADDR_UNIX) {
		sock_unix_unlink(a->path, sf);
		memset(sf, 0, sizeof(*sf));
	}
	return (-1);
}

int
sock_accept(int lfd, struct loop_fd *w)
{
	int fd, e;

	if ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
		return (fd);
	if ((e = errno) == EMFILE || e == ENFILE) {
		/* Back off instead of spinning (or dying). */
		loop_fd_pause(w, SOCK_ACCEPT_PAUSE_MS);
		errno = e;
	}
	return (-1);
}

void
sock_nodelay(int fd)
{
	int one = 1;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Close fd after a failed call, keeping that call's errno; -1. */
static int
close_failed(int fd)
{
	int e = errno;

	close(fd);
	errno = e;
	return (-1);
}

int
sock_connect_unix(const char *path)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) < 0)
		return (-1);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		return (close_failed(fd));
	}
	return (fd);
}

int
sock_connect_addr(const struct sockaddr *sa, socklen_t len)
{
	int fd;

	if ((fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) < 0)
		return (-1);
	if (sa->sa_family != AF_UNIX)
		sock_nodelay(fd);
	if (connect(fd, sa, len) != 0 && errno != EINPROGRESS) {
		return (close_failed(fd));
	}
	return (fd);
}

int
sock_connect_result(int fd)
{
	int e = 0;
	socklen_t l = sizeof(e);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l) != 0)
		return (errno);
	return (e);
}

int
sock_unread(int fd)
{
	int n = 0;

	return (ioctl(fd, FIONREAD, &n) == 0 && n > 0);
}

void
sock_close_reset(int fd)
{
	struct linger lg = { 1, 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

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

int
sock_peer_uid(int fd, uid_t *uid)
{
	struct ucred cr;
	socklen_t l = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0 ||
	    l != sizeof(cr))
		return (-1);
	*uid = cr.uid;
	return (0);
}
