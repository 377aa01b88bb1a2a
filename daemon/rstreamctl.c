/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * rstreamctl: ask a running rstreamd what it is doing, or to reload; and
 * make or read a node's identity.
 *
 * It speaks the control socket protocol of ctl.h: one request line, then
 * "ok", "down" (check) or "error: REASON" and the body.  The daemon
 * renders tables and JSON, so what rstreamctl prints is exactly what the
 * daemon knows.  The commands are the daemon's (ctlcmd.h) and its own
 * (LOCAL_COMMANDS below): help and dispatch come from those two tables.
 *
 * Exit status: 0 on success, 1 when the daemon answered with an error
 * (or the arguments or the -c file were wrong), 2 when the daemon could
 * not be reached, 3 when check found a link that is not up.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <sodium.h>

#include "conf.h"
#include "ctlcmd.h"
#include "ident.h"
#include "secmem.h"
#include "wire.h"

/* Long enough for a reload of a large configuration. */
#define TIMEOUT_MS	30000

/* The exit statuses (see the top of this file). */
#define EXIT_ERROR	1
#define EXIT_UNREACHED	2
#define EXIT_DOWN	3

/* What the options asked for. */
struct opts {
	const char *sock, *cfile;
	const char *cols;		/* -o's columns; NULL: the default */
	int json, quiet;
};

/* A command of rstreamctl's own: its arguments ${argc}, ${argv}. */
typedef int local_fn(int argc, char **argv, const struct opts *o);
static local_fn local_help, local_keygen, local_pubkey;

/*
 * rstreamctl's own commands, which need no daemon: X(name, arguments,
 * what it does in a line, and more), as ctlcmd.h's.
 */
#define LOCAL_COMMANDS(X)						\
	X(help, "[COMMAND]", "the commands, or what COMMAND does",	\
	    "Without COMMAND, what rstreamctl -h prints: the commands and\n" \
	    "options.  With one, what it does, its arguments and which\n"	\
	    "options change its answer.\n")				\
	X(keygen, "[FILE | -]", "a new identity: its private key",	\
	    "Make a new identity (an X25519 key pair).  With FILE, write its\n" \
	    "private key to FILE, which must not exist (mode 0600), and\n" \
	    "print its public key.  Without FILE, or with -, print the\n"	\
	    "private key on standard output and nothing else, as wg genkey\n" \
	    "does:\n"							\
	    "    umask 077; rstreamctl keygen | tee FILE | rstreamctl pubkey\n") \
	X(pubkey, "[FILE | -]", "the public key of an identity",	\
	    "Print the public key of the identity in FILE, checked as\n"	\
	    "identity_file is (private, one key); without FILE, or with -,\n" \
	    "of the private key read from standard input.  It is the line\n" \
	    "the other nodes put in their peers or peers_file.\n")

/* Every command: the daemon's first, then rstreamctl's own. */
static const struct cmd {
	const char *name;
	const char *args;		/* "" none, "[TUNNEL...]" */
	const char *help, *more;
	local_fn *local;		/* NULL: the daemon's */
	enum ctl_who who;
	enum ctl_out out;
} cmds[] = {
#define X(name, who, first, out, args, help, more)			\
	{ #name, args, help, more, NULL, who, out },
	CTL_COMMANDS(X)
#undef X
#define X(name, args, help, more)					\
	{ #name, args, help, more, local_##name, CTL_ANYONE, CTL_OUT_TEXT },
	LOCAL_COMMANDS(X)
#undef X
};
#define NCMDS	(sizeof(cmds) / sizeof(cmds[0]))

static const struct cmd *
find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < NCMDS; i++)
		if (strcmp(cmds[i].name, name) == 0)
			return (&cmds[i]);
	return (NULL);
}

/* Command ${c} and its arguments, as a usage line shows them. */
static const char *
synopsis(const struct cmd *c, char *buf, size_t len)
{

	snprintf(buf, len, "%s%s%s", c->name, c->args[0] ? " " : "",
	    c->args);
	return (buf);
}

static void
usage(FILE *f)
{
	char syn[64];
	size_t i;

	fprintf(f,
	    "usage: rstreamctl [-j | -o FORMAT] [-q] [-s SOCKET | -c FILE] "
	    "[COMMAND [ARG...]]\n"
	    "\n"
	    "Show what a running rstreamd is doing, or make it reload.\n"
	    "\n"
	    "commands (rstreamctl help COMMAND says more):\n");
	for (i = 0; i < NCMDS; i++) {
		if (i > 0 && cmds[i].local != NULL && cmds[i - 1].local == NULL)
			fprintf(f, "\ncommands that need no daemon:\n");
		fprintf(f, "  %-18s %s\n", synopsis(&cmds[i], syn,
		    sizeof(syn)), cmds[i].help);
		if (cmds[i].who == CTL_ADMIN)
			fprintf(f, "  %-18s (root and rstreamd's own user "
			    "only)\n", "");
	}
	fprintf(f,
	    "\n"
	    "options:\n"
	    "  -j, --json          print JSON instead of tables (every column)\n"
	    "  -o, --output FORMAT json (as -j), table (the default columns,\n"
	    "                      those that fit 120 characters), wide (every\n"
	    "                      column), or the columns to show, named as\n"
	    "                      the headings or JSON keys: peer,state,bytes_tx\n"
	    "  -q, --quiet         print nothing on standard output: the exit\n"
	    "                      status says how it went (errors still go to\n"
	    "                      standard error)\n"
	    "  -s, --socket PATH   the control socket (default: as the "
	    "configuration says,\n"
	    "                      else %s)\n"
	    "  -c, --config FILE   read the control socket path from FILE\n"
	    "                      (default %s)\n"
	    "  -h, --help          show this help, or with a COMMAND its own,\n"
	    "                      and exit\n"
	    "  -V, --version       show the version and exit\n"
	    "\n"
	    "exit status: 0 done, 1 an error, 2 the daemon could not be "
	    "reached,\n"
	    "3 check found a link that is not up.\n",
	    CONF_DEFAULT_CONTROL, RSTREAMD_CONF);
}

/* What help COMMAND prints about ${c}. */
static void
cmd_usage(FILE *f, const struct cmd *c)
{
	char syn[64];

	fprintf(f, "usage: rstreamctl [OPTIONS] %s\n\n%s",
	    synopsis(c, syn, sizeof(syn)), c->more);
	if (c->local != NULL) {
		fprintf(f, "\nIt needs no daemon.\n");
		return;
	}
	switch (c->out) {
	case CTL_OUT_TABLE:
		fprintf(f, "\nOutput: tables, of the columns -o picks (table,"
		    " wide, or names),\nor JSON with -j or -o json (every "
		    "column).\n");
		break;
	case CTL_OUT_JSON:
		fprintf(f, "\nOutput: text, or JSON with -j or -o json.\n");
		break;
	case CTL_OUT_TEXT:
		fprintf(f, "\nOutput: text only (-j changes nothing).\n");
		break;
	}
	fprintf(f, "%s\nSee rstreamctl(8).\n", c->who == CTL_ADMIN ?
	    "Only root and the user rstreamd runs as may use it.\n" :
	    "Whoever can connect to the control socket may use it.\n");
}

/* Every command's name, after "the commands:", for a mistake. */
static void
list_cmds(FILE *f)
{
	size_t i;

	for (i = 0; i < NCMDS; i++)
		fprintf(f, "%s %s", i ? "," : ":", cmds[i].name);
	fprintf(f, "\n");
}

static int
local_help(int argc, char **argv, const struct opts *o)
{
	const struct cmd *c;

	(void)o;
	if (argc == 0) {
		usage(stdout);
		return (0);
	}
	if (argc > 1) {
		fprintf(stderr, "rstreamctl: usage: rstreamctl help "
		    "[COMMAND]\n");
		return (EXIT_ERROR);
	}
	if ((c = find_cmd(argv[0])) == NULL) {
		fprintf(stderr, "rstreamctl: no command '%s'; the commands",
		    argv[0]);
		list_cmds(stderr);
		return (EXIT_ERROR);
	}
	cmd_usage(stdout, c);
	return (0);
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

/* Whether the argument ${argv} of ${argc} (0 or 1) means standard I/O. */
static int
std_io(int argc, char **argv)
{

	return (argc == 0 || strcmp(argv[0], "-") == 0);
}

/*
 * keygen [FILE | -]: with FILE, the private key there and the public key
 * on stdout; else the private key alone on stdout, as wg genkey.
 */
static int
local_keygen(int argc, char **argv, const struct opts *o)
{
	uint8_t pub[IDENT_KEY_LEN];
	char b64[IDENT_B64_LEN], err[1200];
	struct stat st;

	if (argc > 1) {
		fprintf(stderr, "rstreamctl: usage: rstreamctl keygen "
		    "[FILE | -]\n");
		return (EXIT_ERROR);
	}
	if (std_io(argc, argv)) {
		/* A file others can read, as > FILE makes it without umask
		 * 077, is a key that leaked: said, as wg genkey does. */
		if (fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode) &&
		    (st.st_mode & 077) != 0)
			fprintf(stderr, "rstreamctl: warning: standard output "
			    "is a file group or others can read (mode %04o); "
			    "a key must be private: umask 077 first\n",
			    (unsigned)(st.st_mode & 07777));
		if (ident_write_fd(STDOUT_FILENO, "standard output", err,
		    sizeof(err)) != 0) {
			fprintf(stderr, "rstreamctl: %s\n", err);
			return (EXIT_ERROR);
		}
		return (0);
	}
	if (ident_write_new(argv[0], pub, err, sizeof(err)) != 0) {
		fprintf(stderr, "rstreamctl: %s\n", err);
		return (EXIT_ERROR);
	}
	ident_b64(pub, b64);
	if (!o->quiet)
		printf("%s\n", b64);
	return (0);
}

/* pubkey [FILE | -]: the public key of FILE's, or stdin's, private key. */
static int
local_pubkey(int argc, char **argv, const struct opts *o)
{
	uint8_t priv[IDENT_KEY_LEN], pub[IDENT_KEY_LEN];
	char b64[IDENT_B64_LEN], err[1200];
	int rc;

	if (argc > 1) {
		fprintf(stderr, "rstreamctl: usage: rstreamctl pubkey "
		    "[FILE | -]\n");
		return (EXIT_ERROR);
	}
	if (std_io(argc, argv)) {
		if (isatty(STDIN_FILENO))
			fprintf(stderr, "rstreamctl: reading a private key "
			    "from standard input\n");
		rc = ident_read_fd(STDIN_FILENO, "standard input", priv, pub,
		    err, sizeof(err));
	} else {
		rc = ident_read(argv[0], priv, pub, err, sizeof(err));
	}
	sodium_memzero(priv, sizeof(priv));
	if (rc != 0) {
		fprintf(stderr, "rstreamctl: %s\n", err);
		return (EXIT_ERROR);
	}
	ident_b64(pub, b64);
	if (!o->quiet)
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

/*
 * Daemon command ${c}'s request line, with its arguments ${argv} (${argc}
 * of them) and the options ${o}, into ${req}; 0, or -1 said.
 */
static int
request(const struct cmd *c, int argc, char **argv, const struct opts *o,
    char req[CTL_REQ_MAX])
{
	char names[CTL_REQ_MAX] = "";
	size_t len = 0;
	int i;

	if (argc > 0 && c->args[0] == '\0') {
		fprintf(stderr, "rstreamctl: unexpected argument: %s (%s "
		    "takes none)\n", argv[0], c->name);
		return (-1);
	}
	for (i = 0; i < argc; i++) {
		if (!wire_name_valid(argv[i], strlen(argv[i]))) {
			fprintf(stderr, "rstreamctl: '%s' is no tunnel name "
			    "(letters, digits, '.', '_' and '-')\n", argv[i]);
			return (-1);
		}
		len += (size_t)snprintf(names + len, sizeof(names) - len,
		    "%s%s", i ? "," : "", argv[i]);
		if (len >= sizeof(names))
			break;
	}
	/* Only tables have columns to pick. */
	if (o->cols != NULL && c->out != CTL_OUT_TABLE) {
		fprintf(stderr, "rstreamctl: -o %s: %s shows no table; -o "
		    "takes json or table for it\n", o->cols, c->name);
		return (-1);
	}
	if (len >= sizeof(names) || (size_t)snprintf(req, CTL_REQ_MAX,
	    "%s%s%s%s%s%s\n", c->name, o->json ? " json" : "",
	    argc > 0 ? " " CTL_TUNNELS : "", names, o->cols != NULL ?
	    " " CTL_COLS : "", o->cols != NULL ? o->cols : "") >=
	    CTL_REQ_MAX || strchr(req, '\n')[1] != '\0') {
		fprintf(stderr, "rstreamctl: the request is too long, or -o "
		    "has a newline in it\n");
		return (-1);
	}
	return (0);
}

/* Answer ${resp} (its first line), ${body} (NULL: none): the exit status. */
static int
answer(char *resp, const char *body, const struct opts *o)
{
	int down = strcmp(resp, CTL_DOWN) == 0;

	if (strcmp(resp, "ok") == 0 || down) {
		if (body != NULL && !o->quiet)
			fputs(body, stdout);
		return (down ? EXIT_DOWN : 0);
	}
	fprintf(stderr, "rstreamctl: %s\n", strncmp(resp, "error: ", 7) == 0 ?
	    resp + 7 : resp[0] ? resp :
	    "the daemon closed the connection without an answer");
	if (body != NULL)
		fputs(body, stderr);
	return (EXIT_ERROR);
}

/* Ask the daemon ${c} with arguments ${argv}: the exit status. */
static int
ask(const struct cmd *c, int argc, char **argv, const struct opts *o)
{
	char path[108], req[CTL_REQ_MAX], *resp, *body;
	size_t len;
	int wait, waited, rc;

	if (request(c, argc, argv, o, req) != 0)
		return (EXIT_ERROR);
	if (socket_path(o->sock, o->cfile, path, sizeof(path)) != 0)
		return (EXIT_ERROR);
	for (waited = 0;; waited += wait) {
		if (talk(path, req, &resp, &len) != 0)
			return (EXIT_UNREACHED);
		if ((body = strchr(resp, '\n')) != NULL)
			*body++ = '\0';
		if ((wait = retry_after(resp)) < 0 ||
		    waited + wait > TIMEOUT_MS)
			break;
		fprintf(stderr, "rstreamctl: %s\n", resp + 7);
		free(resp);
		usleep((useconds_t)wait * 1000);
	}
	rc = answer(resp, body, o);
	free(resp);
	return (rc);
}

/* -o ${arg} into ${o}: a format, or columns for the daemon to check. */
static void
output(const char *arg, struct opts *o)
{

	if (strcasecmp(arg, "json") == 0)
		o->json = 1;
	else if (strcasecmp(arg, "table") == 0)
		o->cols = NULL;
	else
		o->cols = arg;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "socket", required_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { NULL, NULL, NULL, 0, 0 };
	const struct cmd *c;
	const char *name = "status";
	int ch, help = 0;

	/* The configuration, which socket_path reads, lives in secmem. */
	if (secmem_init() != 0) {
		fprintf(stderr, "rstreamctl: cannot initialise libsodium\n");
		return (EXIT_ERROR);
	}
	while ((ch = getopt_long(argc, argv, "jo:qs:c:hV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'j':
			o.json = 1;
			break;
		case 'o':
			output(optarg, &o);
			break;
		case 'q':
			o.quiet = 1;
			break;
		case 's':
			o.sock = optarg;
			break;
		case 'c':
			o.cfile = optarg;
			break;
		case 'h':
			help = 1;
			break;
		case 'V':
			printf("rstreamctl %s\n", PACKAGE_VERSION);
			return (0);
		default:
			usage(stderr);
			return (EXIT_ERROR);
		}
	}
	if (optind < argc)
		name = argv[optind++];
	else if (help) {
		usage(stdout);
		return (0);
	}
	if ((c = find_cmd(name)) == NULL) {
		fprintf(stderr, "rstreamctl: unknown command '%s'; the "
		    "commands", name);
		list_cmds(stderr);
		return (EXIT_ERROR);
	}
	if (help) {
		cmd_usage(stdout, c);
		return (0);
	}
	if (c->local != NULL)
		return (c->local(argc - optind, argv + optind, &o));
	return (ask(c, argc - optind, argv + optind, &o));
}
