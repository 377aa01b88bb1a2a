/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for daemon/ident: a new identity file reads back as the pair
 * it was written with, private files only, never overwritten, and base64
 * that is exactly one key or refused; the same through pipes.  Whose files
 * are trusted: root's, the effective user's and the service user's, not
 * another user's; a daemon that is not root is told why it cannot read
 * root's.  The directories above a file are held to the same owners, and
 * none may be writable by group or others unless it is sticky, whether
 * the path names them or a symbolic link leads through them.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "ident.h"
#include "tap.h"

static char dir[256];

/* ${name} in the test directory, in ${out}. */
static const char *
at(char out[300], const char *name)
{

	snprintf(out, 300, "%s/%s", dir, name);
	return (out);
}

/* Write ${text} to ${path} with ${mode}. */
static void
put(const char *path, const char *text, mode_t mode)
{
	FILE *f;

	if ((f = fopen(path, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) != 0 || chmod(path, mode) != 0) {
		perror(path);
		exit(1);
	}
}

/* True if ident_read(path) fails with ${words} in its message. */
static int
read_fails(const char *path, const char *words)
{
	uint8_t priv[IDENT_KEY_LEN], pub[IDENT_KEY_LEN];
	char err[1200] = "";
	int good;

	good = ident_read(path, priv, pub, err, sizeof(err)) == -1 &&
	    strncmp(err, path, strlen(path)) == 0 && strstr(err, words) != NULL;
	if (!good)
		printf("# got '%s', want '%s ...%s'\n", err, path, words);
	return (good);
}

static void
test_new(void)
{
	uint8_t priv[IDENT_KEY_LEN], pub[IDENT_KEY_LEN], pub2[IDENT_KEY_LEN];
	uint8_t other[IDENT_KEY_LEN], check[IDENT_KEY_LEN];
	char path[300], path2[300], err[1200], text[IDENT_B64_LEN + 1];
	struct stat st;
	FILE *f;

	ok(ident_write_new(at(path, "id"), pub, err, sizeof(err)) == 0,
	    "ident_write_new writes a new file");
	ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600 &&
	    st.st_size == IDENT_B64_LEN, "mode 0600, 44 characters and a "
	    "newline");
	f = fopen(path, "r");
	ok(f != NULL && fgets(text, sizeof(text), f) != NULL &&
	    strlen(text) == IDENT_B64_LEN && text[IDENT_B64_LEN - 1] == '\n',
	    "one line");
	if (f != NULL)
		fclose(f);
	ok(ident_read(path, priv, pub2, err, sizeof(err)) == 0 &&
	    memcmp(pub, pub2, sizeof(pub)) == 0, "it reads back with the "
	    "public key ident_write_new gave");
	ok(crypto_scalarmult_base(check, priv) == 0 &&
	    memcmp(check, pub, sizeof(pub)) == 0,
	    "the public key is the private key's");
	ok((priv[0] & 7) == 0 && (priv[31] & 0xc0) == 0x40,
	    "the private key is stored clamped, as wg genkey writes it");
	ok(ident_write_new(at(path2, "id2"), other, err, sizeof(err)) == 0 &&
	    memcmp(other, pub, sizeof(pub)) != 0, "a second key differs");

	/* Never overwritten: the file keeps its key. */
	ok(ident_write_new(path, other, err, sizeof(err)) == -1 &&
	    strstr(err, "File exists") != NULL &&
	    strncmp(err, path, strlen(path)) == 0,
	    "an existing file is refused: 'FILE: File exists'");
	ok(ident_read(path, priv, pub2, err, sizeof(err)) == 0 &&
	    memcmp(pub, pub2, sizeof(pub)) == 0, "and keeps its key");
	ok(ident_write_new(at(path2, "none/id"), other, err,
	    sizeof(err)) == -1 && strstr(err, "No such file") != NULL,
	    "a missing directory is an error");

	/* Others' access: refused as key files are. */
	chmod(path, 0644);
	ok(read_fails(path, "is accessible by group or others (mode 0644); "
	    "a key must be private: chmod 600"), "mode 0644 is refused");
	chmod(path, 0640);
	ok(read_fails(path, "mode 0640"), "mode 0640 is refused");
	chmod(path, 0400);
	ok(ident_read(path, priv, pub2, err, sizeof(err)) == 0,
	    "mode 0400 is fine");
	ok(read_fails(at(path2, "absent"), ": cannot read: No such file"),
	    "a missing file is refused");
	ok(read_fails(dir, "is not a regular file"), "a directory is refused");
	unlink(path);
	unlink(at(path2, "id2"));
}

static void
test_file_forms(void)
{
	uint8_t key[IDENT_KEY_LEN], priv[IDENT_KEY_LEN], pub[IDENT_KEY_LEN];
	char path[300], b64[IDENT_B64_LEN], text[200], err[1200];

	memset(key, 0x41, sizeof(key));
	ident_b64(key, b64);
	snprintf(text, sizeof(text), "%s", b64);
	put(at(path, "nonl"), text, 0600);
	ok(ident_read(path, priv, pub, err, sizeof(err)) == 0 &&
	    memcmp(priv, key, sizeof(key)) == 0, "no newline is fine");
	snprintf(text, sizeof(text), "%s \r\n", b64);
	put(path, text, 0600);
	ok(ident_read(path, priv, pub, err, sizeof(err)) == 0,
	    "CR LF and blanks after the key are fine");
	snprintf(text, sizeof(text), "%s\n%s\n", b64, b64);
	put(path, text, 0600);
	ok(read_fails(path, "does not hold a private key (44 base64 "
	    "characters on one line"), "two lines are refused");
	snprintf(text, sizeof(text), "%s%40s", b64, "");
	put(path, text, 0600);
	ok(read_fails(path, "does not hold a private key"),
	    "a key with 40 blanks after it is longer than any key file");
	put(path, "", 0600);
	ok(read_fails(path, "does not hold a private key"),
	    "an empty file is refused");
	/* 32 raw bytes, as a key_file holds: the wrong file. */
	put(path, "0123456789abcdef0123456789abcdef", 0600);
	ok(read_fails(path, "does not hold a private key"),
	    "a raw 32-byte key_file is refused");
	unlink(path);
}

static void
test_b64(void)
{
	uint8_t key[IDENT_KEY_LEN], back[IDENT_KEY_LEN];
	char b64[IDENT_B64_LEN], bad[IDENT_B64_LEN + 8];
	size_t i;

	for (i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(i * 37 + 250);
	ident_b64(key, b64);
	ok(strlen(b64) == 44 && b64[43] == '=', "44 characters, padded");
	ok(ident_from_b64(b64, back) == 0 &&
	    memcmp(key, back, sizeof(key)) == 0, "round trip");
	/* fb ef be is "++++", ff ff ff "////". */
	memset(key, 0xff, sizeof(key));
	key[0] = 0xfb;
	key[1] = 0xef;
	key[2] = 0xbe;
	ident_b64(key, b64);
	ok(strncmp(b64, "++++////", 8) == 0,
	    "standard alphabet (+ and /), not URL-safe");
	ok(ident_from_b64(b64, back) == 0 &&
	    memcmp(key, back, sizeof(key)) == 0, "round trip of + and /");

	ok(ident_from_b64("", back) == -1, "empty is refused");
	snprintf(bad, sizeof(bad), "%.43s", b64);
	ok(ident_from_b64(bad, back) == -1, "43 characters are refused");
	snprintf(bad, sizeof(bad), "%s=", b64);
	ok(ident_from_b64(bad, back) == -1, "45 characters are refused");
	snprintf(bad, sizeof(bad), "%s", b64);
	bad[5] = '-';
	ok(ident_from_b64(bad, back) == -1, "a URL-safe character is refused");
	bad[5] = '*';
	ok(ident_from_b64(bad, back) == -1, "a non-base64 character is "
	    "refused");
	snprintf(bad, sizeof(bad), "%s", b64);
	bad[43] = 'A';
	ok(ident_from_b64(bad, back) == -1, "missing padding is refused");
	/* 33 bytes encode to 44 characters without padding. */
	ok(ident_from_b64("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
	    back) == -1, "44 characters of 33 bytes are refused");
	/* 31 bytes: 44 characters with two '='. */
	ok(ident_from_b64("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
	    back) == -1, "44 characters of 31 bytes are refused");
}

/*
 * Standard I/O: a key written to a pipe reads back from one as the pair
 * it is; what is no key is refused, named as the caller says.
 */
static void
test_fd(void)
{
	uint8_t priv[IDENT_KEY_LEN], pub[IDENT_KEY_LEN], check[IDENT_KEY_LEN];
	char err[1200], line[IDENT_B64_LEN + 8];
	ssize_t n;
	int p[2];

	if (pipe(p) != 0) {
		perror("pipe");
		exit(1);
	}
	ok(ident_write_fd(p[1], "standard output", err, sizeof(err)) == 0,
	    "ident_write_fd writes a key to a pipe");
	close(p[1]);
	n = read(p[0], line, sizeof(line) - 1);
	close(p[0]);
	line[n > 0 ? n : 0] = '\0';
	ok(n == IDENT_B64_LEN && line[IDENT_B64_LEN - 1] == '\n',
	    "one line of 44 characters, and nothing else");
	if (pipe(p) != 0 || write(p[1], line, (size_t)n) != n) {
		perror("pipe");
		exit(1);
	}
	close(p[1]);
	ok(ident_read_fd(p[0], "standard input", priv, pub, err,
	    sizeof(err)) == 0 && crypto_scalarmult_base(check, priv) == 0 &&
	    memcmp(check, pub, sizeof(pub)) == 0 && (priv[0] & 7) == 0,
	    "ident_read_fd reads it back from a pipe, clamped, with its "
	    "public key");
	close(p[0]);
	if (pipe(p) != 0 || write(p[1], "nope\n", 5) != 5) {
		perror("pipe");
		exit(1);
	}
	close(p[1]);
	ok(ident_read_fd(p[0], "standard input", priv, pub, err,
	    sizeof(err)) == -1 && strncmp(err, "standard input does not hold "
	    "a private key", 41) == 0, "no key: 'standard input does not "
	    "hold a private key'");
	close(p[0]);
}

/* The user "nobody" on Debian; no owner ident trusts. */
#define OTHER	65534

/*
 * Run as OTHER: ${path}, OTHER's key, is read; ${rpath}, root's, is not,
 * and the message says who rstreamd runs as.  Bit 0 and bit 1 of the exit
 * status; 255 if the child could not become OTHER.
 */
static int
as_other(const char *path, const char *rpath)
{
	uint8_t priv[IDENT_KEY_LEN], pub[IDENT_KEY_LEN];
	char err[1200];
	int r = 0;

	if (setgroups(0, NULL) != 0 || setresgid(OTHER, OTHER, OTHER) != 0 ||
	    setresuid(OTHER, OTHER, OTHER) != 0)
		return (255);
	if (ident_read(path, priv, pub, err, sizeof(err)) == 0)
		r |= 1;
	else
		printf("# as uid %d: %s\n", OTHER, err);
	if (ident_read(rpath, priv, pub, err, sizeof(err)) == -1 &&
	    strstr(err, ": cannot read: Permission denied (rstreamd runs as "
	    "uid 65534)") != NULL)
		r |= 2;
	else
		printf("# as uid %d, root's key: '%s'\n", OTHER, err);
	fflush(stdout);
	return (r);
}

static void
test_owners(void)
{
	uint8_t priv[IDENT_KEY_LEN], pub[IDENT_KEY_LEN];
	char path[300], rpath[300], err[1200];
	struct passwd *pw;
	int fd, status = 0;
	pid_t pid;

	if (geteuid() != 0) {
		printf("ok %d - # SKIP owners of key files (needs root to "
		    "chown)\n", ++tap_n);
		return;
	}
	if (ident_write_new(at(path, "other"), pub, err, sizeof(err)) != 0 ||
	    ident_write_new(at(rpath, "root"), pub, err, sizeof(err)) != 0 ||
	    chown(path, OTHER, OTHER) != 0) {
		printf("# %s\n", err);
		exit(1);
	}
	ok(read_fails(path, "belongs to uid 65534; a key must belong to "
	    "root"), "another user's key is refused");
	ok((fd = ident_open_trusted(path, err, sizeof(err))) == -1 &&
	    strstr(err, "belongs to uid 65534; it must belong to root") !=
	    NULL, "ident_open_trusted refuses another user's file too");
	if (fd >= 0)
		close(fd);
	ok(ident_read(rpath, priv, pub, err, sizeof(err)) == 0,
	    "root's key is read");
	/* The child must reach its files. */
	chmod(dir, 0711);
	fflush(stdout);
	if ((pid = fork()) < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0)
		_exit(as_other(path, rpath));
	while (waitpid(pid, &status, 0) < 0)
		;
	chmod(dir, 0700);
	ok(WIFEXITED(status) && WEXITSTATUS(status) != 255 &&
	    (WEXITSTATUS(status) & 1), "run as uid 65534, its own key is "
	    "read");
	ok(WIFEXITED(status) && WEXITSTATUS(status) != 255 &&
	    (WEXITSTATUS(status) & 2), "run as uid 65534, root's private key "
	    "is not, and the message says who rstreamd runs as");
	/* Root reads the keys of the service's user (rstreamd -n by hand,
	 * or the drop-in that makes the service root). */
	if ((pw = getpwnam(IDENT_USER)) == NULL) {
		printf("ok %d - # SKIP root reads a key of user %s (no such "
		    "user here)\n", ++tap_n, IDENT_USER);
	} else {
		if (chown(path, pw->pw_uid, pw->pw_gid) != 0) {
			perror(path);
			exit(1);
		}
		ok(ident_read(path, priv, pub, err, sizeof(err)) == 0,
		    "root reads a key of user %s", IDENT_USER);
	}
	unlink(path);
	unlink(rpath);
}

/* Make directory ${path} (if it is not there) with ${mode}. */
static void
mkdir_mode(const char *path, mode_t mode)
{

	if ((mkdir(path, mode) != 0 && errno != EEXIST) ||
	    chmod(path, mode) != 0) {
		perror(path);
		exit(1);
	}
}

/* ${path} opens as a key (and as a trusted file) only if ${good}; if not,
 * the message has ${words}. */
static int
opens(const char *path, int good, const char *words)
{
	uint8_t priv[IDENT_KEY_LEN], pub[IDENT_KEY_LEN];
	char err[1200] = "";
	int fd;

	if (!good)
		return (read_fails(path, words) &&
		    (fd = ident_open_trusted(path, err, sizeof(err))) == -1 &&
		    strstr(err, words) != NULL);
	if (ident_read(path, priv, pub, err, sizeof(err)) != 0 ||
	    (fd = ident_open_trusted(path, err, sizeof(err))) < 0) {
		printf("# %s\n", err);
		return (0);
	}
	close(fd);
	return (1);
}

static void
test_dirs(void)
{
	uint8_t pub[IDENT_KEY_LEN];
	char sub[300], key[300], safe[300], link[300], err[1200], words[1000];

	at(sub, "open");
	at(safe, "safe");
	mkdir_mode(sub, 0755);
	mkdir_mode(safe, 0700);
	at(key, "open/key");
	if (ident_write_new(key, pub, err, sizeof(err)) != 0) {
		printf("# %s\n", err);
		exit(1);
	}
	ok(opens(key, 1, NULL), "a key in a directory only its owner "
	    "writes is read");
	chmod(sub, 0777);
	snprintf(words, sizeof(words), ": directory %s is writable by group "
	    "or others (mode 0777), who could put another file in its place: "
	    "chmod go-w %s", sub, sub);
	ok(opens(key, 0, words), "a key in a directory others may write is "
	    "refused, and so is a peers_file");
	chmod(sub, 0775);
	ok(opens(key, 0, "(mode 0775)"), "group may not write it either");
	chmod(sub, 01777);
	ok(opens(key, 1, NULL), "a sticky one (as /tmp) is trusted: only an "
	    "entry's owner may replace it");
	chmod(sub, 0777);
	at(link, "safe/link");
	if (symlink(key, link) != 0) {
		perror(link);
		exit(1);
	}
	ok(opens(link, 0, words), "a link from a safe directory to a key in "
	    "one others may write is refused");
	chmod(sub, 0755);
	unlink(link);
	at(link, "open/link");
	if (symlink("../safe", link) != 0) {
		perror(link);
		exit(1);
	}
	at(link, "open/link/key");
	snprintf(words, sizeof(words), "%s", key);
	if (rename(words, at(key, "safe/key")) != 0) {
		perror(key);
		exit(1);
	}
	ok(opens(link, 1, NULL), "a path through a link in a safe directory "
	    "is read");
	chmod(sub, 0757);
	ok(opens(link, 0, "(mode 0757)"), "but not once others may write the "
	    "link's directory");
	chmod(sub, 0755);
	if (geteuid() != 0) {
		printf("ok %d - # SKIP a directory of another user (needs root "
		    "to chown)\n", ++tap_n);
	} else if (chown(safe, OTHER, OTHER) != 0) {
		perror(safe);
		exit(1);
	} else {
		snprintf(words, sizeof(words), ": %s belongs to uid 65534; a "
		    "directory above it must belong to root", safe);
		ok(opens(key, 0, words), "a key in a directory of another user "
		    "is refused");
		(void)chown(safe, 0, 0);
	}
	unlink(key);
	unlink(at(link, "open/link"));
	rmdir(safe);
	rmdir(sub);
}

int
main(void)
{
	const char *tmp = getenv("TMPDIR");

	if (sodium_init() < 0)
		return (1);
	if (tmp == NULL || *tmp == '\0' || strlen(tmp) > 200)
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/test_ident.XXXXXX", tmp);
	if (mkdtemp(dir) == NULL) {
		perror(dir);
		return (1);
	}
	umask(022);
	test_new();
	test_file_forms();
	test_b64();
	test_fd();
	test_owners();
	test_dirs();
	rmdir(dir);
	return (tap_done());
}
