/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ident: a node's identity, an X25519 key pair.  The private key lives in
 * a file of its own, 32 bytes as standard base64 on one line (44
 * characters, like "wg genkey" writes), readable by its owner only; the
 * public key follows from it and is what peers list.
 *
 * Also the checks every secret file of the configuration passes before it
 * is read (key_file and identity_file alike, and peers_file, which grants
 * what it lists).
 */
#ifndef IDENT_H
#define IDENT_H

#include <stddef.h>
#include <stdint.h>

#define IDENT_KEY_LEN	32
#define IDENT_B64_LEN	45	/* 44 characters and NUL */

/* The system user the units run rstreamd as (systemd/rstreamd.sysusers). */
#define IDENT_USER	"rstreamd"

/**
 * ident_open_private(path, err, errlen):
 * Open ${path} for reading as a secret: a regular file (a FIFO is refused
 * at once, not waited on) with no access for group or others, that
 * belongs to root, to the effective user, or to IDENT_USER (looked up only
 * for another owner: a daemon run as root, by hand or through the drop-in
 * rstreamd-unix-owner.conf, reads the keys the service's user owns).  The
 * descriptor, or -1 with one of "PATH: cannot read: REASON" (where
 * permission is denied to a daemon that is not root, with a hint: "(rstreamd
 * runs as user rstreamd: give it the file, chown rstreamd PATH)"), "PATH is
 * not a regular file", "PATH belongs to uid N; a key must belong to root
 * ...", "PATH is accessible by group or others (mode 0644); a key must be
 * private: chmod 600 PATH" in ${err}.
 */
int ident_open_private(const char *path, char *err, size_t errlen);

/**
 * ident_open_trusted(path, err, errlen):
 * As ident_open_private, for a file others may read but not write (a
 * peers_file): refused if group or others may write it ("PATH is writable
 * by group or others (mode 0664); whoever can write it can add a peer:
 * chmod go-w PATH"), or if it belongs to anyone but root, the effective
 * user or IDENT_USER ("PATH belongs to uid N; it must belong to root ...").
 */
int ident_open_trusted(const char *path, char *err, size_t errlen);

/**
 * ident_read(path, priv, pub, err, errlen):
 * Read the private key file ${path} (checked as ident_open_private does)
 * into ${priv} and its public key into ${pub}; 0, or -1 with a message
 * that starts with ${path} in ${err}.
 */
int ident_read(const char *path, uint8_t priv[IDENT_KEY_LEN],
    uint8_t pub[IDENT_KEY_LEN], char *err, size_t errlen);

/**
 * ident_read_fd(fd, what, priv, pub, err, errlen):
 * As ident_read, from the open descriptor ${fd} (standard input, a
 * pipe), read to its end with no check of who else may read it; its
 * messages start with ${what} ("standard input").
 */
int ident_read_fd(int fd, const char *what, uint8_t priv[IDENT_KEY_LEN],
    uint8_t pub[IDENT_KEY_LEN], char *err, size_t errlen);

/**
 * ident_write_fd(fd, what, err, errlen):
 * Make a new key pair and write its private key, one line as
 * ident_write_new writes it, to the open descriptor ${fd} (standard
 * output); 0, or -1 with "WHAT: REASON" in ${err}, ${what} naming ${fd}.
 */
int ident_write_fd(int fd, const char *what, char *err, size_t errlen);

/**
 * ident_write_new(path, pub, err, errlen):
 * Make a new key pair, write its private key to ${path}, a file that must
 * not exist yet (never overwritten; created mode 0600), and its public
 * key into ${pub}; 0, or -1 with "PATH: REASON" in ${err} (an existing
 * file: "PATH: File exists").
 */
int ident_write_new(const char *path, uint8_t pub[IDENT_KEY_LEN], char *err,
    size_t errlen);

/**
 * ident_b64(key, out):
 * ${key} as standard base64 with padding (44 characters) into ${out}.
 */
void ident_b64(const uint8_t key[IDENT_KEY_LEN], char out[IDENT_B64_LEN]);

/**
 * ident_from_b64(s, key):
 * Decode ${s}, exactly 44 characters of standard base64 with padding for
 * 32 bytes and nothing else, into ${key}: 0, or -1 (${key} then
 * undefined).
 */
int ident_from_b64(const char *s, uint8_t key[IDENT_KEY_LEN]);

#endif /* !IDENT_H */
