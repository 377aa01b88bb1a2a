/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "ident.h"

/* The longest file ident_read takes: a key, a CR LF and some blanks. */
#define FILE_MAX	64

#define FORMAT_HINT	"44 base64 characters on one line, as rstreamd " \
	"--genkey writes"

/* IDENT_USER's uid into ${uid}: 0, or -1 where there is no such user. */
static int
service_uid(uid_t *uid)
{
	struct passwd pw, *r = NULL;
	char buf[4096];

	if (getpwnam_r(IDENT_USER, &pw, buf, sizeof(buf), &r) != 0 ||
	    r == NULL)
		return (-1);
	*uid = pw.pw_uid;
	return (0);
}

/*
 * Why ${path} cannot be opened (${e}) into ${err}; where permission is
 * denied to a daemon that is not root, who it runs as and the fix.
 */
static void
open_error(const char *path, int e, char *err, size_t errlen)
{
	uid_t self = geteuid(), svc;

	if (e == EACCES && self != 0 && service_uid(&svc) == 0 && svc == self)
		snprintf(err, errlen, "%s: cannot read: %s (rstreamd runs as "
		    "user %s: give it the file, chown %s %s)", path,
		    strerror(e), IDENT_USER, IDENT_USER, path);
	else if (e == EACCES && self != 0)
		snprintf(err, errlen, "%s: cannot read: %s (rstreamd runs as "
		    "uid %u)", path, strerror(e), (unsigned)self);
	else
		snprintf(err, errlen, "%s: cannot read: %s", path,
		    strerror(e));
}

/*
 * Whether a file of ${uid} may be trusted; if not, why into ${err}
 * (${noun}: "a key", "it").  IDENT_USER is looked up only for an owner
 * that is neither root nor the effective user.
 */
static int
owner_ok(const char *path, uid_t uid, const char *noun, char *err,
    size_t errlen)
{
	uid_t self = geteuid(), svc;
	int has_svc;

	if (uid == 0 || uid == self)
		return (1);
	if ((has_svc = service_uid(&svc) == 0) && uid == svc)
		return (1);
	if (has_svc && svc != self)
		snprintf(err, errlen, "%s belongs to uid %u; %s must belong to "
		    "root, to the user rstreamd runs as (uid %u) or to user %s "
		    "(uid %u): chown %s %s", path, (unsigned)uid, noun,
		    (unsigned)self, IDENT_USER, (unsigned)svc, IDENT_USER,
		    path);
	else if (has_svc)
		snprintf(err, errlen, "%s belongs to uid %u; %s must belong to "
		    "root or to the user rstreamd runs as (%s, uid %u): chown "
		    "%s %s", path, (unsigned)uid, noun, IDENT_USER,
		    (unsigned)self, IDENT_USER, path);
	else
		snprintf(err, errlen, "%s belongs to uid %u; %s must belong to "
		    "root or to the user rstreamd runs as (uid %u)", path,
		    (unsigned)uid, noun, (unsigned)self);
	return (0);
}

/*
 * Whether every directory above ${dirs} (an absolute path) is one that
 * only an owner owner_ok trusts can change; if not, why into ${err},
 * about the file ${path}.  Group or others may write a sticky directory
 * (/tmp): there only an entry's owner can rename or remove it, and the
 * entry below is held to the same owners.
 */
static int
dirs_ok(const char *path, const char *dirs, char *err, size_t errlen)
{
	char dir[PATH_MAX], why[600];
	struct stat st;
	char *slash;

	if (snprintf(dir, sizeof(dir), "%s", dirs) >= (int)sizeof(dir)) {
		snprintf(err, errlen, "%s: the path is too long", path);
		return (0);
	}
	while ((slash = strrchr(dir, '/')) != NULL) {
		/* Up one: "/a/b" becomes "/a", and "/a" becomes "/". */
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(dir, &st) != 0) {
			snprintf(err, errlen, "%s: cannot check directory %s: "
			    "%s", path, dir, strerror(errno));
			return (0);
		}
		if (!owner_ok(dir, st.st_uid, "a directory above it", why,
		    sizeof(why))) {
			snprintf(err, errlen, "%s: %s", path, why);
			return (0);
		}
		if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)) {
			snprintf(err, errlen, "%s: directory %s is writable by "
			    "group or others (mode %04o), who could put "
			    "another file in its place: chmod go-w %s", path,
			    dir, (unsigned)(st.st_mode & 07777), dir);
			return (0);
		}
		if (slash == dir)
			return (1);
	}
	return (1);
}

/*
 * Like ssh's StrictModes, the directories above ${path}: those it names,
 * and those it resolves to (a symbolic link's own directory and its
 * target's).
 */
static int
path_ok(const char *path, char *err, size_t errlen)
{
	char real[PATH_MAX];

	if (path[0] == '/' && !dirs_ok(path, path, err, errlen))
		return (0);
	if (realpath(path, real) == NULL) {
		snprintf(err, errlen, "%s: cannot resolve: %s", path,
		    strerror(errno));
		return (0);
	}
	return (dirs_ok(path, real, err, errlen));
}

/*
 * Open ${path}, refused unless it is a regular file whose owner is one
 * ident_open_private trusts, in directories path_ok trusts, and whose
 * mode has none of ${forbid}; ${noun}
 * and ${modewhy} make the messages ("a key", "... a key must be private:
 * chmod 600").
 */
static int
open_checked(const char *path, mode_t forbid, const char *noun,
    const char *modewhy, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	/* O_NONBLOCK: a FIFO put there must not hang the daemon (it is
	 * refused below). */
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC |
	    O_NOCTTY)) < 0) {
		open_error(path, errno, err, errlen);
		return (-1);
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		snprintf(err, errlen, "%s is not a regular file", path);
	else if (owner_ok(path, st.st_uid, noun, err, errlen)) {
		if (st.st_mode & forbid)
			snprintf(err, errlen, "%s is %s by group or others "
			    "(mode %04o); %s %s", path, forbid & 044 ?
			    "accessible" : "writable",
			    (unsigned)(st.st_mode & 07777), modewhy, path);
		else if (path_ok(path, err, errlen))
			return (fd);
	}
	close(fd);
	return (-1);
}

int
ident_open_private(const char *path, char *err, size_t errlen)
{

	/* Like spiped and stunnel, refuse a secret others could read or
	 * replace: a key that leaked is no key. */
	return (open_checked(path, 077, "a key", "a key must be private: "
	    "chmod 600", err, errlen));
}

int
ident_open_trusted(const char *path, char *err, size_t errlen)
{

	/* Like ssh's authorized_keys: whoever can write it can add a
	 * peer. */
	return (open_checked(path, 022, "it", "whoever can write it can add "
	    "a peer: chmod go-w", err, errlen));
}

void
ident_b64(const uint8_t key[IDENT_KEY_LEN], char out[IDENT_B64_LEN])
{

	sodium_bin2base64(out, IDENT_B64_LEN, key, IDENT_KEY_LEN,
	    sodium_base64_VARIANT_ORIGINAL);
}

int
ident_from_b64(const char *s, uint8_t key[IDENT_KEY_LEN])
{
	size_t len;

	/* No end pointer: all of it must decode. */
	if (strlen(s) != IDENT_B64_LEN - 1 ||
	    sodium_base642bin(key, IDENT_KEY_LEN, s, IDENT_B64_LEN - 1, NULL,
	    &len, NULL, sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    len != IDENT_KEY_LEN)
		return (-1);
	return (0);
}

/* ${fd}'s bytes, up to one more than FILE_MAX, into ${buf}; or -1. */
static ssize_t
read_all(int fd, char buf[FILE_MAX + 1])
{
	size_t len = 0;
	ssize_t n;

	while (len <= FILE_MAX) {
		if ((n = read(fd, buf + len, FILE_MAX + 1 - len)) < 0 &&
		    errno == EINTR)
			continue;
		if (n < 0)
			return (-1);
		if (n == 0)
			break;
		len += (size_t)n;
	}
	return ((ssize_t)len);
}

int
ident_read(const char *path, uint8_t priv[IDENT_KEY_LEN],
    uint8_t pub[IDENT_KEY_LEN], char *err, size_t errlen)
{
	int fd, rc;

	if ((fd = ident_open_private(path, err, errlen)) < 0)
		return (-1);
	rc = ident_read_fd(fd, path, priv, pub, err, errlen);
	close(fd);
	return (rc);
}

int
ident_read_fd(int fd, const char *path, uint8_t priv[IDENT_KEY_LEN],
    uint8_t pub[IDENT_KEY_LEN], char *err, size_t errlen)
{
	char buf[FILE_MAX + 2];
	ssize_t len;
	int rc = -1;

	if ((len = read_all(fd, buf)) < 0) {
		snprintf(err, errlen, "%s: cannot read: %s", path,
		    strerror(errno));
		return (-1);
	}
	/* The line's end, and blanks an editor left, are no part of it; a
	 * file longer than FILE_MAX is kept whole, too long to decode. */
	while (len > 0 && len <= FILE_MAX && (buf[len - 1] == '\n' ||
	    buf[len - 1] == '\r' || buf[len - 1] == ' ' ||
	    buf[len - 1] == '\t'))
		len--;
	buf[len] = '\0';
	if (ident_from_b64(buf, priv) != 0)
		snprintf(err, errlen, "%s does not hold a private key (%s)",
		    path, FORMAT_HINT);
	else if (crypto_scalarmult_base(pub, priv) != 0)
		snprintf(err, errlen, "%s: not a usable X25519 private key",
		    path);
	else
		rc = 0;
	sodium_memzero(buf, sizeof(buf));
	if (rc != 0)
		sodium_memzero(priv, IDENT_KEY_LEN);
	return (rc);
}

/* Write all of ${buf} to ${fd}: 0, or -1 with errno set. */
static int
write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, buf, len)) < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return (-1);
		buf += n;
		len -= (size_t)n;
	}
	return (0);
}

/*
 * A new key pair's private key, as one line, to ${fd} (${what} in
 * messages), fsync'd when it is a file (${sync}); its public key into
 * ${pub}.  0, or -1 with the reason in ${err} and errno set.
 */
static int
write_key(int fd, const char *what, int sync, uint8_t pub[IDENT_KEY_LEN],
    char *err, size_t errlen)
{
	uint8_t priv[IDENT_KEY_LEN];
	char line[IDENT_B64_LEN + 1];
	int saved, rc = -1;

	if (sodium_init() < 0) {
		snprintf(err, errlen, "%s: libsodium failed to start", what);
		return (-1);
	}
	/* Clamped as X25519 uses it, as wg genkey writes it. */
	randombytes_buf(priv, sizeof(priv));
	priv[0] &= 248;
	priv[31] = (uint8_t)((priv[31] & 127) | 64);
	ident_b64(priv, line);
	line[IDENT_B64_LEN - 1] = '\n';
	if (crypto_scalarmult_base(pub, priv) != 0)
		snprintf(err, errlen, "%s: X25519 failed", what);
	else if (write_all(fd, line, IDENT_B64_LEN) != 0 ||
	    (sync && fsync(fd) != 0))
		snprintf(err, errlen, "%s: %s", what, strerror(errno));
	else
		rc = 0;
	saved = errno;
	sodium_memzero(priv, sizeof(priv));
	sodium_memzero(line, sizeof(line));
	errno = saved;
	return (rc);
}

int
ident_write_fd(int fd, const char *what, char *err, size_t errlen)
{
	uint8_t pub[IDENT_KEY_LEN];

	return (write_key(fd, what, 0, pub, err, errlen));
}

int
ident_write_new(const char *path, uint8_t pub[IDENT_KEY_LEN], char *err,
    size_t errlen)
{
	int fd, saved, rc;

	/* O_EXCL: a key in use is never replaced by mistake. */
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW | O_NOCTTY, 0600)) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	rc = write_key(fd, path, 1, pub, err, errlen);
	saved = errno;
	if (close(fd) != 0 && rc == 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		rc = -1;
	}
	if (rc != 0)
		(void)unlink(path);
	errno = saved;
	return (rc);
}
