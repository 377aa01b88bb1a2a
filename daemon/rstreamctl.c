/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * rstreamctl: ask a running rstreamd what it is doing, or to reload.
 *
 * It speaks the control socket protocol of ctl.h: one request line, then
 * "ok" or "error: REASON" and the body.  The daemon renders tables and
 * JSON, so what rstreamctl prints is exactly what the daemon knows.
 *
 * Exit status: 0 on success, 1 when the daemon answered with an error
 * (or the arguments or the -c file were wrong), 2 when the daemon could
 * not be reached.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "conf.h"
#include "ctlcmd.h"
#include "ident.h"

/* Long enough for a reload of a large configuration. */
#define TIMEOUT_MS	30000

static const char *const commands[] = {
#define X(name, who, first, help) #name,
	CTL_COMMANDS(X)
#undef X
	NULL
};

static void
usage(FILE *f)
{

	fprintf(f,
	    "usage: rstreamctl [-j] [-o wide | -o COL,...] [-s SOCKET | -c FILE] "
	    "[COMMAND]\n"
	    "       rstreamctl keygen FILE | pubkey FILE\n"
	    "\n"
	    "Show what a running rstreamd is doing, or make it reload.\n"
	    "\n"
	    "commands:\n");
#define X(name, who, first, help) fprintf(f, "  %-9s %s\n%s", #name, help,	\
	(who) == CTL_ADMIN ? "            (root and rstreamd's own user only)\n" : "");
	CTL_COMMANDS(X)
#undef X
	fprintf(f,
	    "\n"
	    "identities (no daemon needed):\n"
	    "  keygen FILE  write a new identity (private key) to FILE, which\n"
	    "               must not exist, and print its public key\n"
	    "  pubkey FILE  print the public key of identity FILE\n"
	    "\n"
	    "  -j, --json          print JSON instead of tables (every column)\n"
	    "  -o, --output COLS   the columns the tables show: \"wide\" for all\n"
	    "                      of them, or names from the headings, such as\n"
	    "                      peer,state,bytes_tx (default: those that fit\n"
	    "                      120 characters)\n"
	    "  -s, --socket PATH   the control socket (default: as the "
	    "configuration says,\n"
	    "                      else %s)\n"
	    "  -c, --config FILE   read the control socket path from FILE\n"
	    "                      (default %s)\n"
	    "  -h, --help          show this help and exit\n"
	    "  -V, --version       show the version and exit\n",
	    CONF_DEFAULT_CONTROL, RSTREAMD_CONF);
}

/*
 * The socket path: -s, else the configuration's, else the default.  Key
 * files are never read: a control_group member may not read them, and
 * only the control socket matters here.
 */
static int
socket_path(const char *sock, const char *cfile, char *out, size_t outlen)
{
	const char *file = cfile != NULL ? cfile : RSTREAMD_CONF;
	struct conf *c;
	char err[1100];

	if (sock != NULL) {
		snprintf(out, outlen, "%s", sock);
		return (0);
	}
	if (conf_load(file, CONF_NO_KEYS, &c, err, sizeof(err)) != 0) {
		if (cfile != NULL) {
			fprintf(stderr, "rstreamctl: %s\n", err);
			return (-1);
		}
		/* No configuration at all is normal; a broken one is news. */
		if (access(file, F_OK) == 0 || errno != ENOENT)
			fprintf(stderr, "rstreamctl: %s; trying the default "
			    "control socket %s\n", err, CONF_DEFAULT_CONTROL);
		snprintf(out, outlen, "%s", CONF_DEFAULT_CONTROL);
		return (0);
	}
	if (c->control[0] == '\0') {
		fprintf(stderr, "rstreamctl: %s sets control = \"\": the "
		    "daemon has no control socket\n", c->file);
		conf_free(c);
		return (-1);
	}
	snprintf(out, outlen, "%s", c->control);
	conf_free(c);
	return (0);
}

static int
talk(const char *path, const char *req, char **resp, size_t *resplen)
{
	struct sockaddr_un sun;
	struct pollfd pfd;
	size_t len = 0, cap = 0;
	char *buf = NULL, *nb;
	ssize_t n;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "rstreamctl: %s: path too long\n", path);
		return (-1);
	}
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		fprintf(stderr, "rstreamctl: cannot connect to %s: %s%s\n",
		    path, strerror(errno), errno == ENOENT ||
		    errno == ECONNREFUSED ? " (is rstreamd running?)" : "");
		if (fd >= 0)
			close(fd);
		return (-1);
	}
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
		fprintf(stderr, "rstreamctl: %s: %s\n", path, strerror(errno));
		close(fd);
		return (-1);
	}
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 65536;
			if ((nb = realloc(buf, cap + 1)) == NULL) {
				fprintf(stderr, "rstreamctl: out of memory\n");
				goto fail;
			}
			buf = nb;
		}
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, TIMEOUT_MS) == 0) {
			fprintf(stderr, "rstreamctl: %s: no answer in %d s\n",
			    path, TIMEOUT_MS / 1000);
			goto fail;
		}
		if ((n = recv(fd, buf + len, cap - len, 0)) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "rstreamctl: %s: %s\n", path,
			    strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (buf == NULL)
		buf = malloc(1);
	if (buf == NULL)
		return (-1);
	buf[len] = '\0';
	*resp = buf;
	*resplen = len;
	return (0);

fail:
	free(buf);
	close(fd);
	return (-1);
}

/*
 * keygen FILE or pubkey FILE (${cmd}, ${argv} its ${argc} arguments): the
 * public key on stdout; the exit status.
 */
static int
key_command(const char *cmd, int argc, char **argv)
{
	uint8_t priv[IDENT_KEY_LEN], pub[IDENT_KEY_LEN];
	char b64[IDENT_B64_LEN], err[1200];
	int rc;

	if (argc != 1) {
		fprintf(stderr, "rstreamctl: usage: rstreamctl %s FILE\n", cmd);
		return (1);
	}
	if (strcmp(cmd, "keygen") == 0)
		rc = ident_write_new(argv[0], pub, err, sizeof(err));
	else
		rc = ident_read(argv[0], priv, pub, err, sizeof(err));
	sodium_memzero(priv, sizeof(priv));
	if (rc != 0) {
		fprintf(stderr, "rstreamctl: %s\n", err);
		return (1);
	}
	ident_b64(pub, b64);
	printf("%s\n", b64);
	return (0);
}

/*
 * The milliseconds after which a refused request may be asked again, if
 * answer line ${line} says so (CTL_RETRY_IN); else -1.
 */
static int
retry_after(const char *line)
{
	const char *p;
	double s;

	if (strncmp(line, "error: ", 7) != 0 ||
	    (p = strstr(line, CTL_RETRY_IN)) == NULL ||
	    sscanf(p + strlen(CTL_RETRY_IN), "%lf", &s) != 1 || s < 0 ||
	    s > TIMEOUT_MS / 1000)
		return (-1);
	/* A little late rather than early: the daemon's clock said it. */
	return ((int)(s * 1000) + 100);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "socket", required_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *sock = NULL, *cfile = NULL, *cmd = "status", *cols = NULL;
	char path[108], req[CTL_REQ_MAX], *resp, *body;
	size_t len;
	int c, json = 0, i, wait, waited;

	while ((c = getopt_long(argc, argv, "jo:s:c:hV", longopts, NULL)) !=
	    -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'o':
			cols = optarg;
			break;
		case 's':
			sock = optarg;
			break;
		case 'c':
			cfile = optarg;
			break;
		case 'h':
			usage(stdout);
			return (0);
		case 'V':
			printf("rstreamctl %s\n", PACKAGE_VERSION);
			return (0);
		default:
			usage(stderr);
			return (1);
		}
	}
	if (optind < argc)
		cmd = argv[optind++];
	if (strcmp(cmd, "keygen") == 0 || strcmp(cmd, "pubkey") == 0)
		return (key_command(cmd, argc - optind, argv + optind));
	if (optind < argc) {
		fprintf(stderr, "rstreamctl: unexpected argument: %s\n",
		    argv[optind]);
		return (1);
	}
	for (i = 0; commands[i] != NULL && strcmp(commands[i], cmd) != 0; i++)
		;
	if (commands[i] == NULL) {
		fprintf(stderr, "rstreamctl: unknown command '%s'\n", cmd);
		usage(stderr);
		return (1);
	}
	if (socket_path(sock, cfile, path, sizeof(path)) != 0)
		return (1);
	if ((size_t)snprintf(req, sizeof(req), "%s%s%s%s\n", cmd, json ?
	    " json" : "", cols != NULL ? " " CTL_COLS : "", cols != NULL ?
	    cols : "") >= sizeof(req) || strchr(req, '\n')[1] != '\0') {
		fprintf(stderr, "rstreamctl: -o: too long, or a newline in "
		    "it\n");
		return (1);
	}
	for (waited = 0;; waited += wait) {
		if (talk(path, req, &resp, &len) != 0)
			return (2);
		if ((body = strchr(resp, '\n')) != NULL)
			*body++ = '\0';
		if ((wait = retry_after(resp)) < 0 ||
		    waited + wait > TIMEOUT_MS)
			break;
		fprintf(stderr, "rstreamctl: %s\n", resp + 7);
		free(resp);
		usleep((useconds_t)wait * 1000);
	}
	if (strcmp(resp, "ok") != 0) {
		fprintf(stderr, "rstreamctl: %s\n", strncmp(resp, "error: ",
		    7) == 0 ? resp + 7 : resp[0] ? resp :
		    "the daemon closed the connection without an answer");
		free(resp);
		return (1);
	}
	if (body != NULL)
		fputs(body, stdout);
	free(resp);
	return (0);
}
