/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * aead_bench: what sealing a link costs one core.  One thread, pinned to
 * the CPU it starts on, seals and opens records in place (in cache) at
 * 64 bytes (a small eager write's records), 256 (SEAL_SMALL), 512 bytes,
 * 16 KiB and 64 KiB with a 4-byte associated datum (a WRITE's
 * immediate), for each AEAD: lib/crypto/seal's AES-256-GCM and
 * ChaCha20-Poly1305 (libsodium's up to SEAL_SMALL bytes, OpenSSL's EVP
 * above), the same two called on OpenSSL's EVP directly (what
 * lib/crypto/seal adds: the nonce, the rekey check) and libsodium's
 * AES-256-GCM (its precomputed key), ChaCha20-Poly1305 and
 * XChaCha20-Poly1305.
 *
 * Opening needs a sealed record each time, so a loop seals and opens the
 * same buffer; open's rate is that pair's time less seal's alone, and
 * restore's likewise.  Time is the thread's CPU time, and each figure
 * the best of several runs, so other processes on a shared machine cost
 * little (they still share its caches).  The last columns are the
 * cores a 100 Gb/s (12.5 GB/s) flow would keep busy sealing at the
 * sender and opening at the receiver.  A last row per size is memcpy
 * (in cache too): the copy a sealed WRITE's bytes take from the receive
 * ring, which the fabric can write, to its private copy before they are
 * opened there (lib/protocol/engine_seal.c), in its "seal" columns.
 *
 * Usage: aead_bench [-t SECONDS_PER_FIGURE]   (prints a Markdown table)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <sodium.h>

#include "seal.h"

#define MAXLEN	65536
#define RUNS	5
#define LINK_RATE 12.5e9	/* 100 Gb/s in bytes per second */

static const uint8_t imm[4] = { 0, 1, 2, 3 };
static _Alignas(64) uint8_t buf[MAXLEN];
static _Alignas(64) uint8_t ring[MAXLEN];	/* memcpy's source */
static uint8_t key[32];

/* One AEAD: seal and open the next record of its direction in place. */
struct impl {
	const char *name;
	int (*setup)(struct impl *);
	void (*seal)(struct impl *, size_t len, uint8_t tag[16]);
	void (*open)(struct impl *, size_t len, const uint8_t tag[16]);
	/* NULL, or: undo the last record sealed (lib/crypto/seal only). */
	void (*restore)(struct impl *, size_t len, const uint8_t tag[16]);
	enum seal_aead aead;	/* lib/crypto/seal, libsodium: which AEAD */
	struct seal_dir tx, rx;
	uint64_t ntx, nrx, last;
	crypto_aead_aes256gcm_state aes;
	EVP_CIPHER_CTX *ectx, *dctx;
	const EVP_CIPHER *cipher;
};

static void
fail(const char *what)
{
	fprintf(stderr, "aead_bench: %s\n", what);
	exit(1);
}

/* ---------------------------------------------------------- lib/crypto/seal */

/* setup: start both directions at message 0 (again). */
static int
dir_setup(struct impl *im)
{
	if (im->aead == SEAL_AESGCM && !seal_aesgcm_available())
		return (-1);
	seal_dir_wipe(&im->tx);
	seal_dir_wipe(&im->rx);
	if (seal_dir_init(&im->tx, im->aead, key) != 0 ||
	    seal_dir_init(&im->rx, im->aead, key) != 0)
		fail("seal_dir_init failed");
	return (0);
}

static void
dir_seal(struct impl *im, size_t len, uint8_t tag[16])
{
	im->last = seal_dir_seal(&im->tx, buf, len, imm, sizeof(imm), tag);
}

static void
dir_open(struct impl *im, size_t len, const uint8_t tag[16])
{
	if (seal_dir_open(&im->rx, buf, len, imm, sizeof(imm), tag) != 0)
		fail("seal_dir_open failed");
}

static void
dir_restore(struct impl *im, size_t len, const uint8_t tag[16])
{
	if (seal_dir_restore(&im->tx, buf, len, imm, sizeof(imm), im->last,
	    tag) != 0)
		fail("seal_dir_restore failed");
}

/* ------------------------------------------------------------ libsodium */

/* aead: SEAL_AESGCM, SEAL_CHACHAPOLY, or 0 for XChaCha20-Poly1305. */
static int
na_setup(struct impl *im)
{
	if (im->aead == SEAL_AESGCM) {
		if (!crypto_aead_aes256gcm_is_available())
			return (-1);
		crypto_aead_aes256gcm_beforenm(&im->aes, key);
	}
	im->ntx = im->nrx = 0;
	return (0);
}

static void
na_nonce(uint64_t n, uint8_t nonce[24])
{
	memset(nonce, 0, 24);
	memcpy(nonce, &n, sizeof(n));
}

static void
na_seal(struct impl *im, size_t len, uint8_t tag[16])
{
	uint8_t nonce[24];

	na_nonce(im->ntx++, nonce);
	if (im->aead == SEAL_AESGCM)
		crypto_aead_aes256gcm_encrypt_detached_afternm(buf, tag, NULL,
		    buf, len, imm, sizeof(imm), NULL, nonce, &im->aes);
	else if (im->aead == SEAL_CHACHAPOLY)
		crypto_aead_chacha20poly1305_ietf_encrypt_detached(buf, tag,
		    NULL, buf, len, imm, sizeof(imm), NULL, nonce, key);
	else
		crypto_aead_xchacha20poly1305_ietf_encrypt_detached(buf, tag,
		    NULL, buf, len, imm, sizeof(imm), NULL, nonce, key);
}

static void
na_open(struct impl *im, size_t len, const uint8_t tag[16])
{
	uint8_t nonce[24];
	int r;

	na_nonce(im->nrx++, nonce);
	if (im->aead == SEAL_AESGCM)
		r = crypto_aead_aes256gcm_decrypt_detached_afternm(buf, NULL,
		    buf, len, tag, imm, sizeof(imm), nonce, &im->aes);
	else if (im->aead == SEAL_CHACHAPOLY)
		r = crypto_aead_chacha20poly1305_ietf_decrypt_detached(buf,
		    NULL, buf, len, tag, imm, sizeof(imm), nonce, key);
	else
		r = crypto_aead_xchacha20poly1305_ietf_decrypt_detached(buf,
		    NULL, buf, len, tag, imm, sizeof(imm), nonce, key);
	if (r != 0)
		fail("libsodium open failed");
}

/* ------------------------------------------------------- OpenSSL EVP */

static int
evp_setup(struct impl *im)
{
	if (im->ectx == NULL)
		im->ectx = EVP_CIPHER_CTX_new();
	if (im->dctx == NULL)
		im->dctx = EVP_CIPHER_CTX_new();
	if (im->ectx == NULL || im->dctx == NULL ||
	    EVP_EncryptInit_ex(im->ectx, im->cipher, NULL, key, NULL) != 1 ||
	    EVP_DecryptInit_ex(im->dctx, im->cipher, NULL, key, NULL) != 1)
		return (-1);
	im->ntx = im->nrx = 0;
	return (0);
}

static void
evp_nonce(uint64_t n, uint8_t nonce[12])
{
	memset(nonce, 0, 12);
	memcpy(nonce + 4, &n, sizeof(n));
}

static void
evp_seal(struct impl *im, size_t len, uint8_t tag[16])
{
	uint8_t nonce[12];
	int outl;

	evp_nonce(im->ntx++, nonce);
	if (EVP_EncryptInit_ex(im->ectx, NULL, NULL, NULL, nonce) != 1 ||
	    EVP_EncryptUpdate(im->ectx, NULL, &outl, imm, sizeof(imm)) != 1 ||
	    EVP_EncryptUpdate(im->ectx, buf, &outl, buf, (int)len) != 1 ||
	    EVP_EncryptFinal_ex(im->ectx, buf + outl, &outl) != 1 ||
	    EVP_CIPHER_CTX_ctrl(im->ectx, EVP_CTRL_AEAD_GET_TAG, 16, tag) != 1)
		fail("EVP seal failed");
}

static void
evp_open(struct impl *im, size_t len, const uint8_t tag[16])
{
	uint8_t nonce[12];
	int outl;

	evp_nonce(im->nrx++, nonce);
	if (EVP_DecryptInit_ex(im->dctx, NULL, NULL, NULL, nonce) != 1 ||
	    EVP_CIPHER_CTX_ctrl(im->dctx, EVP_CTRL_AEAD_SET_TAG, 16,
	    (void *)(uintptr_t)tag) != 1 ||
	    EVP_DecryptUpdate(im->dctx, NULL, &outl, imm, sizeof(imm)) != 1 ||
	    EVP_DecryptUpdate(im->dctx, buf, &outl, buf, (int)len) != 1 ||
	    EVP_DecryptFinal_ex(im->dctx, buf + outl, &outl) != 1)
		fail("EVP open failed");
}

/* ------------------------------------------------------------ timing */

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

enum what { SEAL_ONLY, SEAL_OPEN, SEAL_RESTORE };

/* Seconds per byte of `what`, the best of RUNS runs of `secs` each. */
static double
measure(struct impl *im, size_t len, enum what w, double secs)
{
	uint8_t tag[16];
	double best = 1e9;
	int r;

	for (r = 0; r < RUNS; r++) {
		double t0, t;
		uint64_t iters = 0, i, batch = (4u << 20) / len + 1;

		if (im->setup(im) != 0)
			fail("setup failed");
		t0 = now();

		do {
			for (i = 0; i < batch; i++) {
				im->seal(im, len, tag);
				if (w == SEAL_OPEN)
					im->open(im, len, tag);
				else if (w == SEAL_RESTORE)
					im->restore(im, len, tag);
			}
			iters += batch;
			t = now() - t0;
		} while (t < secs / RUNS);
		if (t / (double)(iters * len) < best)
			best = t / (double)(iters * len);
	}
	return (best);
}

static void
row(struct impl *im, size_t len, double secs)
{
	double seal = measure(im, len, SEAL_ONLY, secs);
	double open = measure(im, len, SEAL_OPEN, secs) - seal;
	char rest[32] = "-";

	if (im->restore != NULL)
		snprintf(rest, sizeof(rest), "%.2f",
		    1e-9 / (measure(im, len, SEAL_RESTORE, secs) - seal));
	printf("| %s | %zu | %.2f | %.2f | %s | %.0f | %.0f | %.2f | %.2f | "
	    "%.2f |\n", im->name, len, 1e-9 / seal, 1e-9 / open, rest,
	    1e9 * seal * (double)len, 1e9 * open * (double)len,
	    LINK_RATE * seal, LINK_RATE * open, LINK_RATE * (seal + open));
	fflush(stdout);
}

/* memcpy, as an impl that only seals: ring to buf, ${len} bytes. */
static int
copy_setup(struct impl *im)
{
	(void)im;
	return (0);
}

static void
copy_seal(struct impl *im, size_t len, uint8_t tag[16])
{
	(void)im;
	(void)tag;
	memcpy(buf, ring, len);
}

static void
copy_row(size_t len, double secs)
{
	static struct impl copy = { .setup = copy_setup, .seal = copy_seal };
	double best = measure(&copy, len, SEAL_ONLY, secs);

	printf("| memcpy (a sealed WRITE, ring to private copy) | %zu | %.2f "
	    "| - | - | %.0f | - | %.2f | - | - |\n", len, 1e-9 / best,
	    1e9 * best * (double)len, LINK_RATE * best);
	fflush(stdout);
}

static void
pin(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		perror("aead_bench: sched_setaffinity");
}

int
main(int argc, char **argv)
{
	static const size_t lens[] = { 64, 256, 512, 16384, 65536 };
	static struct impl impls[] = {
		{ .name = "aes-256-gcm (lib/crypto/seal)",
		  .setup = dir_setup, .seal = dir_seal, .open = dir_open,
		  .restore = dir_restore, .aead = SEAL_AESGCM },
		{ .name = "chacha20-poly1305 (lib/crypto/seal)",
		  .setup = dir_setup, .seal = dir_seal, .open = dir_open,
		  .restore = dir_restore, .aead = SEAL_CHACHAPOLY },
		{ .name = "aes-256-gcm (OpenSSL EVP)",
		  .setup = evp_setup, .seal = evp_seal, .open = evp_open },
		{ .name = "chacha20-poly1305 (OpenSSL EVP)",
		  .setup = evp_setup, .seal = evp_seal, .open = evp_open },
		{ .name = "aes-256-gcm (libsodium)",
		  .setup = na_setup, .seal = na_seal, .open = na_open,
		  .aead = SEAL_AESGCM },
		{ .name = "chacha20-poly1305 (libsodium)",
		  .setup = na_setup, .seal = na_seal, .open = na_open,
		  .aead = SEAL_CHACHAPOLY },
		{ .name = "xchacha20-poly1305 (libsodium)",
		  .setup = na_setup, .seal = na_seal, .open = na_open },
	};
	double secs = 1.0;
	size_t i, j;
	int c;

	while ((c = getopt(argc, argv, "t:")) != -1) {
		if (c != 't' || (secs = atof(optarg)) <= 0) {
			fprintf(stderr, "usage: aead_bench [-t SECONDS]\n");
			return (2);
		}
	}
	if (sodium_init() < 0)
		fail("sodium_init failed");
	randombytes_buf(key, sizeof(key));
	randombytes_buf(buf, sizeof(buf));
	impls[2].cipher = EVP_aes_256_gcm();
	impls[3].cipher = EVP_chacha20_poly1305();
	pin();
	printf("| AEAD | record bytes | seal GB/s | open GB/s | restore GB/s "
	    "| seal ns per record | open ns | cores for 100 Gb/s: seal | "
	    "open | both |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (i = 0; i < sizeof(impls) / sizeof(impls[0]); i++) {
		if (impls[i].setup(&impls[i]) != 0) {
			printf("| %s | - | not available on this CPU |||||||\n",
			    impls[i].name);
			continue;
		}
		for (j = 0; j < sizeof(lens) / sizeof(lens[0]); j++)
			row(&impls[i], lens[j], secs);
	}
	randombytes_buf(ring, sizeof(ring));
	for (j = 0; j < sizeof(lens) / sizeof(lens[0]); j++)
		copy_row(lens[j], secs);
	return (0);
}
