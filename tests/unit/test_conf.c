/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for daemon/conf: every setting parsed with its default, every
 * error reported with the right file, line and words, and the address
 * parsers on their own.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sys/socket.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <libconfig.h>
#include <sodium.h>

#include "conf.h"
#include "conf_int.h"
#include "ident.h"
#include "secmem.h"
#include "tap.h"

#define MAXFILES	512
#define DIRMAX		256
#define FILEMAX		(DIRMAX + 16)

static char dir[DIRMAX];
static char files[MAXFILES][FILEMAX];
static int nfiles;
static char err[2048];

/* Write ${text} to a new file in the test directory; return its path. */
static const char *
put(const char *text)
{
	char *path;
	FILE *f;

	if (nfiles == MAXFILES) {
		fprintf(stderr, "test_conf: MAXFILES too small\n");
		exit(1);
	}
	path = files[nfiles];
	snprintf(path, FILEMAX, "%s/t%03d.conf", dir, nfiles);
	if ((f = fopen(path, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) != 0) {
		perror(path);
		exit(1);
	}
	nfiles++;
	return (path);
}

/* Load ${text}; the configuration, or NULL with the error shown. */
static struct conf *
load(const char *text)
{
	struct conf *c = NULL;

	if (conf_load(put(text), 0, &c, err, sizeof(err)) != 0) {
		printf("# unexpected error: %s\n", err);
		return (NULL);
	}
	return (c);
}

/*
 * True if loading ${text} fails with a message that starts with
 * "FILE:LINE: " (just "FILE: " if ${line} is 0) and contains ${words};
 * FILE is ${file}, or the configuration's own if NULL.
 */
static int
fails_in(const char *text, const char *file, int line, const char *words)
{
	struct conf *c = NULL;
	const char *path = put(text);
	char prefix[PATH_MAX + 32];
	size_t plen;
	int good;

	if (file == NULL)
		file = path;
	if (line > 0)
		snprintf(prefix, sizeof(prefix), "%s:%d: ", file, line);
	else
		snprintf(prefix, sizeof(prefix), "%s: ", file);
	plen = strlen(prefix);
	err[0] = '\0';
	good = conf_load(path, 0, &c, err, sizeof(err)) == -1 && c == NULL &&
	    strncmp(err, prefix, plen) == 0 &&
	    strstr(err + plen, words) != NULL;
	if (!good)
		printf("# got: %s\n#  want: %s...%s\n", err, prefix, words);
	conf_free(c);
	return (good);
}

static int
fails(const char *text, int line, const char *words)
{

	return (fails_in(text, NULL, line, words));
}

/* True if conf_parse_addr(text) fails with a reason containing ${words}. */
static int
addr_fails(const char *text, int allow_port0, const char *words)
{
	struct conf_addr a;
	char why[256] = "";
	int good;

	good = conf_parse_addr(text, allow_port0, &a, why, sizeof(why)) == -1
	    && strstr(why, words) != NULL;
	if (!good)
		printf("# %s: got '%s', want '%s'\n", text, why, words);
	return (good);
}

static int
hp_fails(const char *text, const char *dflt, const char *words)
{
	struct conf_addr a;
	char why[256] = "";
	int good;

	good = conf_parse_hostport(text, dflt, &a, why, sizeof(why)) == -1 &&
	    strstr(why, words) != NULL;
	if (!good)
		printf("# %s: got '%s', want '%s'\n", text, why, words);
	return (good);
}

static int
sizes_are(const struct conf_sizes *s, uint32_t sendbuf, uint32_t recvbuf,
    uint32_t sq, uint32_t rq, uint32_t inl, uint32_t streams)
{

	return (s->sendbuf == sendbuf && s->recvbuf == recvbuf &&
	    s->sq_size == sq && s->rq_size == rq && s->inline_size == inl &&
	    s->max_streams == streams);
}

static void
test_full(void)
{
	struct conf *c;
	const struct conf_tunnel *t;

	c = load(
	    "listen = \"192.0.2.20\";\n"				/* 1 */
	    "log_level = \"debug\";\n"					/* 2 */
	    "defaults = { sendbuf = 65536; sq_size = 128L;\n"		/* 3 */
	    "  max_streams = 100; };\n"					/* 4 */
	    "tunnels = (\n"						/* 5 */
	    "  { name = \"pg\"; accept = \"tcp://127.0.0.1:15432\";\n"	/* 6 */
	    "    peer = \"192.0.2.20:7000\"; recvbuf = 1048576; },\n"	/* 7 */
	    "  { name = \"sock\"; accept = \"unix:/run/x/pg.sock\";\n"	/* 8 */
	    "    peer = \"[2001:db8::1]\"; unix_mode = \"600\";\n"	/* 9 */
	    "    unix_owner = \"root\"; unix_group = \"4242\"; },\n"	/* 10 */
	    "  { name = \"v6\"; accept = \"tcp://[::1]:0\";\n"		/* 11 */
	    "    peer = \"[fe80::1%eth0]:9000\"; inline_size = 0; },\n"	/* 12 */
	    "  {\n"							/* 13 */
	    "    name = \"redis\"; target = \"tcp://127.0.0.1:6379\";\n"	/* 14 */
	    "    rq_size = 32768; sendbuf = 1073741824L; },\n"		/* 15 */
	    "  { name = \"usock\"; target = \"unix:/var/run/r.sock\"; proxy_protocol = \"v2\"; proxy_trust_any_peer = true; }\n" /* 16 */
	    ");\n");
	ok(c != NULL, "full config loads");
	if (c == NULL)
		return;

	ok(strcmp(c->file, files[nfiles - 1]) == 0, "file name kept");
	ok(c->log_level == LOG_DEBUG, "log_level debug");
	ok(c->nlisten == 1 && c->listen[0].addr.kind == CONF_ADDR_TCP &&
	    strcmp(c->listen[0].addr.host, "192.0.2.20") == 0 &&
	    strcmp(c->listen[0].addr.port, "7471") == 0 &&
	    c->listen[0].line == 1, "listen string, default port 7471");
	ok(sizes_are(&c->defaults, 65536, 262144, 128, 256, 128, 100),
	    "defaults block overrides some built-in defaults (int64 too)");
	ok(c->ntunnels == 5, "five tunnels");

	t = conf_tunnel_find(c, "pg");
	ok(t == &c->tunnels[0] && t->line == 6, "tunnel pg found, line 6");
	ok(t != NULL && t->has_accept && !t->has_target &&
	    t->accept.kind == CONF_ADDR_TCP &&
	    strcmp(t->accept.host, "127.0.0.1") == 0 &&
	    strcmp(t->accept.port, "15432") == 0 &&
	    strcmp(t->accept.text, "tcp://127.0.0.1:15432") == 0,
	    "pg: tcp accept");
	ok(t != NULL && t->peer.kind == CONF_ADDR_TCP &&
	    strcmp(t->peer.host, "192.0.2.20") == 0 &&
	    strcmp(t->peer.port, "7000") == 0, "pg: peer with port");
	ok(t != NULL && sizes_are(&t->sz, 65536, 1048576, 128, 256, 128, 100),
	    "pg: sizes from defaults, recvbuf overridden");
	ok(t != NULL && t->unix_mode == 0660 && t->unix_owner[0] == '\0' &&
	    t->unix_group[0] == '\0' && t->unix_uid == -1 &&
	    t->unix_gid == -1, "pg: unix settings at their defaults");

	t = conf_tunnel_find(c, "sock");
	ok(t != NULL && t->has_accept && t->accept.kind == CONF_ADDR_UNIX &&
	    strcmp(t->accept.path, "/run/x/pg.sock") == 0,
	    "sock: unix accept");
	ok(t != NULL && strcmp(t->peer.host, "2001:db8::1") == 0 &&
	    strcmp(t->peer.port, "7471") == 0,
	    "sock: v6 peer without port gets 7471");
	ok(t != NULL && t->unix_mode == 0600 &&
	    strcmp(t->unix_owner, "root") == 0 &&
	    strcmp(t->unix_group, "4242") == 0,
	    "sock: unix_mode \"600\" is octal, owner and group");
	ok(t != NULL && t->unix_uid == 0 && t->unix_gid == 4242,
	    "sock: the owner looked up, the numeric group taken as it is");
	ok(t != NULL && t->peer.line == 9 && t->accept.line == 8,
	    "sock: its addresses know their lines");

	t = conf_tunnel_find(c, "v6");
	ok(t != NULL && t->accept.kind == CONF_ADDR_TCP &&
	    strcmp(t->accept.host, "::1") == 0 &&
	    strcmp(t->accept.port, "0") == 0,
	    "v6: bracketed accept, port 0 allowed");
	ok(t != NULL && strcmp(t->peer.host, "fe80::1%eth0") == 0 &&
	    strcmp(t->peer.port, "9000") == 0, "v6: peer with zone");
	ok(t != NULL && t->sz.inline_size == 0, "v6: inline_size 0");

	t = conf_tunnel_find(c, "redis");
	ok(t != NULL && t->has_target && !t->has_accept && t->line == 13 &&
	    t->target.kind == CONF_ADDR_TCP &&
	    strcmp(t->target.host, "127.0.0.1") == 0 &&
	    strcmp(t->target.port, "6379") == 0, "redis: tcp target");
	ok(t != NULL && sizes_are(&t->sz, 1073741824, 262144, 128, 32768, 128,
	    100), "redis: rq_size and 1 GiB sendbuf at their maxima");
	ok(t != NULL && t->proxy_protocol == 0, "redis: no PROXY header");
	ok(t != NULL && t->sz.min_version == 4,
	    "redis: min_version 4 (rings grow from ring_min)");

	t = conf_tunnel_find(c, "usock");
	ok(t != NULL && t->proxy_protocol == 2 && t->proxy_trust_any_peer,
	    "usock: proxy_protocol v2, trusting any peer");
	ok(t != NULL && t->sz.min_version == 4,
	    "usock: min_version 4 (RING, which has ORIGIN too)");
	ok(t != NULL && t->has_target && t->target.kind == CONF_ADDR_UNIX &&
	    strcmp(t->target.path, "/var/run/r.sock") == 0,
	    "usock: unix target");

	ok(conf_tunnel_find(c, "nope") == NULL, "unknown tunnel not found");
	ok(conf_tunnel_find(NULL, "pg") == NULL, "find on NULL config");
	conf_free(c);
}

static void
test_minimal(void)
{
	struct conf *c;
	static const char name64[] =
	    "bcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_";
	char text[512];

	c = load(
	    "listen = ( \"10.0.0.1:7000\",\n"
	    "  \"[::]:7472\" );\n"
	    "tunnels = ( { name = \"a\"; target = \"tcp://h:1\"; } );\n");
	ok(c != NULL && c->log_level == LOG_INFO, "log_level defaults to info");
	ok(c != NULL && c->nlisten == 2 &&
	    strcmp(c->listen[0].addr.host, "10.0.0.1") == 0 &&
	    strcmp(c->listen[0].addr.port, "7000") == 0 &&
	    c->listen[0].line == 1 &&
	    strcmp(c->listen[1].addr.host, "::") == 0 &&
	    strcmp(c->listen[1].addr.port, "7472") == 0 &&
	    c->listen[1].line == 2, "listen as a list, with lines");
	ok(c != NULL && sizes_are(&c->tunnels[0].sz, 262144, 262144, 256, 256,
	    128, 1024) && sizes_are(&c->defaults, 262144, 262144, 256, 256,
	    128, 1024), "built-in defaults without a defaults block");
	conf_free(c);

	c = load("listen = [ \"a:1\", \"b\" ];\n"
	    "log_level = \"warning\";\n"
	    "tunnels = ( { name = \"x\"; target = \"unix:/s\"; } );\n");
	ok(c != NULL && c->nlisten == 2 &&
	    strcmp(c->listen[1].addr.port, "7471") == 0 &&
	    c->log_level == LOG_WARNING, "listen as an array; warning level");
	conf_free(c);

	c = load("source = \"10.77.0.1\";\n"
	    "tunnels = ( { name = \"x\"; accept = \"tcp://127.0.0.1:0\";\n"
	    "  peer = \"10.77.0.2\"; } );\n");
	ok(c != NULL && c->has_source &&
	    strcmp(c->source.host, "10.77.0.1") == 0,
	    "source address for outgoing links");
	conf_free(c);
	ok(fails("tunnels = ( { name = \"x\"; accept = \"tcp://h:0\";\n"
	    "  peer = \"p\"; } );\nsource = \"somehost\";\n", 3,
	    "source 'somehost' is not an IPv4 or IPv6 address"),
	    "source must be an address");
	ok(fails("source = 7;\n", 1, "source must be a string"),
	    "source must be a string");

	/* listen without any target is allowed (nothing uses it). */
	c = load("listen = \"1.2.3.4\";\n"
	    "tunnels = ( { name = \"x\"; accept = \"tcp://[::1]:0\";\n"
	    "  peer = \"p\"; },\n"
	    "  { name = \"y\"; accept = \"tcp://[::1]:0\"; peer = \"p\"; } );\n");
	ok(c != NULL && c->ntunnels == 2,
	    "listen without targets; two accepts on port 0 do not clash");
	conf_free(c);

	snprintf(text, sizeof(text), "tunnels = ( { name = \"%s\"; "
	    "target = \"tcp://h:1\"; } );\nlisten = \"h\";\n", name64);
	c = load(text);
	ok(c != NULL && strcmp(c->tunnels[0].name, name64) == 0,
	    "a 64-character name with every allowed character");
	conf_free(c);

	conf_free(NULL);
	ok(1, "conf_free(NULL) is a no-op");
}

#define TUN1	"tunnels = ( { name = \"pg\"; accept = \"tcp://127.0.0.1:1\";\n"
#define PEER	"  peer = \"p\";\n"

/* min_version: what each tunnel's own settings need, unless set. */
static void
test_versions(void)
{
	static const struct {
		const char *tunnel;
		unsigned want;
		const char *why;
	} cases[] = {
		{ "accept = \"tcp://h:0\"; peer = \"p\";", 4,
		    "ring_min below the ring size" },
		{ "accept = \"tcp://h:0\"; peer = \"p\"; ring_min = 0;", 1,
		    "nothing newer" },
		{ "accept = \"tcp://h:0\"; peer = \"p\"; ring_min = 262144;",
		    1, "nothing newer" },
		{ "accept = \"tcp://h:0\"; peer = \"p\"; resume_time = 5; "
		    "resume_without_key = true;", 5, "resume_time" },
		{ "accept = \"tcp://h:0\"; peer = \"p\"; resume_time = 5; "
		    "ring_min = 0; resume_without_key = true;", 5,
		    "resume_time" },
		{ "target = \"tcp://h:1\"; ring_min = 0; proxy_protocol = "
		    "\"v1\"; proxy_trust_any_peer = true;", 3,
		    "proxy_protocol" },
		{ "target = \"tcp://h:1\"; resume_time = 5; proxy_protocol = "
		    "\"v2\"; proxy_trust_any_peer = true; "
		    "resume_without_key = true;", 5, "resume_time" },
		{ "target = \"tcp://h:1\"; resume_time = 5; min_version = 2; "
		    "resume_without_key = true;", 2, NULL },
		{ "target = \"tcp://h:1\";", 4,
		    "ring_min below the ring size" },
		{ "target = \"tcp://h:1\"; min_version = 1;", 1, NULL },
	};
	const char *why;
	struct conf *c;
	char text[512];
	size_t k;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		snprintf(text, sizeof(text), "listen = \"h\";\ntunnels = ( { "
		    "name = \"t\"; %s } );\n", cases[k].tunnel);
		c = load(text);
		why = "";
		ok(c != NULL && c->tunnels[0].sz.min_version == cases[k].want &&
		    (cases[k].why == NULL || (conf_tunnel_needs(&c->tunnels[0],
		    &why) == cases[k].want && strcmp(why, cases[k].why) == 0)),
		    "min_version %u for { %s } (%s)", cases[k].want,
		    cases[k].tunnel, cases[k].why ? cases[k].why : "set");
		conf_free(c);
	}
	c = load("defaults = { min_version = 2; };\nlisten = \"h\";\n"
	    "tunnels = ( { name = \"a\"; target = \"tcp://h:1\"; },\n"
	    "  { name = \"b\"; target = \"tcp://h:1\"; min_version = 3; } );\n");
	ok(c != NULL && c->tunnels[0].sz.min_version == 2 &&
	    c->tunnels[1].sz.min_version == 3,
	    "defaults' min_version for every tunnel that sets none");
	conf_free(c);
}

/* traffic_class, service_level and priority: wrong, each at its line. */
static const struct {
	const char *text;
	int line;
	const char *words;
} class_errors[] = {
	{ TUN1 PEER "  traffic_class = 256; } );\n", 3,
	    "tunnel pg: traffic_class 256 is above the maximum 255" },
	{ TUN1 PEER "  traffic_class = -1; } );\n", 3,
	    "tunnel pg: traffic_class -1 is below the minimum 0" },
	{ TUN1 PEER "  traffic_class = \"ef\"; } );\n", 3,
	    "tunnel pg: traffic_class must be an integer" },
	{ "defaults = {\n traffic_class = 300; };\n", 2,
	    "defaults: traffic_class 300 is above the maximum 255" },
	{ "listen = \"h\";\ntunnels = ( { name = \"pg\";\n"
	    " target = \"unix:/s\";\n traffic_class = 184; } );\n", 4,
	    "tunnel pg: traffic_class does nothing on a target tunnel" },
	{ TUN1 PEER "  service_level = 16; } );\n", 3,
	    "tunnel pg: service_level 16 is above the maximum 15" },
	{ "listen = \"h\";\ntunnels = ( { name = \"pg\";\n"
	    " target = \"unix:/s\"; service_level = 1; } );\n", 3,
	    "tunnel pg: service_level does nothing on a target tunnel" },
	{ TUN1 PEER "  priority = 0; } );\n", 3,
	    "tunnel pg: priority 0 is below the minimum 1" },
	{ TUN1 PEER "\n  priority = 17; } );\n", 4,
	    "tunnel pg: priority 17 is above the maximum 16" },
	{ "defaults = { priority = 0; };\n", 1,
	    "defaults: priority 0 is below the minimum 1" },
};

/* traffic_class, service_level and priority: per tunnel, with defaults,
 * in range. */
static void
test_classes(void)
{
	struct conf *c;
	size_t k;

	c = load("defaults = { traffic_class = 104; service_level = 3; "
	    "priority = 2; };\nlisten = \"h\";\n"
	    "tunnels = ( { name = \"a\"; accept = \"tcp://h:0\"; "
	    "peer = \"p\"; },\n"
	    "  { name = \"b\"; accept = \"tcp://h:0\"; peer = \"p\";\n"
	    "    traffic_class = 184; service_level = 15; priority = 16; },\n"
	    "  { name = \"c\"; target = \"tcp://h:1\"; } );\n");
	ok(c != NULL && c->tunnels[0].sz.traffic_class == 104 &&
	    c->tunnels[0].sz.service_level == 3 &&
	    c->tunnels[0].sz.priority == 2 &&
	    c->tunnels[1].sz.traffic_class == 184 &&
	    c->tunnels[1].sz.service_level == 15 &&
	    c->tunnels[1].sz.priority == 16 &&
	    c->tunnels[2].sz.traffic_class == 104,
	    "traffic_class, service_level, priority: a tunnel's own, else "
	    "defaults'");
	conf_free(c);
	c = load("tunnels = ( { name = \"a\"; accept = \"tcp://h:0\"; "
	    "peer = \"p\"; traffic_class = 0; } );\n");
	ok(c != NULL && c->defaults.traffic_class == CONF_UNSET &&
	    c->defaults.service_level == CONF_UNSET &&
	    c->defaults.priority == 4 && c->tunnels[0].sz.traffic_class == 0,
	    "built in: traffic_class and service_level unset (the RDMA CM's), "
	    "priority 4; 0 is a value");
	conf_free(c);
	for (k = 0; k < sizeof(class_errors) / sizeof(class_errors[0]); k++)
		ok(fails(class_errors[k].text, class_errors[k].line,
		    class_errors[k].words), "refused: %s",
		    class_errors[k].words);
}

static void
test_errors(void)
{
	struct conf *c = NULL;
	char text[1024], longpath[200];
	const char *path;

	/* Files. */
	snprintf(text, sizeof(text), "%s/missing.conf", dir);
	snprintf(longpath, sizeof(longpath), "%.150s: cannot read: ", text);
	ok(conf_load(text, 0, &c, err, sizeof(err)) == -1 && c == NULL &&
	    strncmp(err, longpath, strlen(longpath)) == 0 &&
	    strstr(err, "No such file or directory") != NULL,
	    "missing file: %s", err);
	snprintf(longpath, sizeof(longpath), "%.150s: cannot read: ", dir);
	ok(conf_load(dir, 0, &c, err, sizeof(err)) == -1 && c == NULL &&
	    strncmp(err, longpath, strlen(longpath)) == 0 &&
	    strstr(err, "is a directory") != NULL, "directory: %s", err);
	ok(fails("log_level = \"info\";\n"
	    "tunnels = ( { name = \"pg\"; accept = ; } );\n", 2,
	    "syntax error"),
	    "syntax error with its line");
	ok(fails("log_level = \"info\";\nlog_level = \"debug\";\n", 2,
	    "duplicate setting"), "libconfig's own errors keep their line");

	/* Unknown settings, wrong types. */
	ok(fails("log_level = \"info\";\nfoo = 1;\n", 2,
	    "unknown setting 'foo'"), "unknown global setting");
	ok(fails("defaults = {\n sendbuf = 4096;\n sendbuff = 4096; };\n", 3,
	    "unknown setting 'sendbuff' in defaults"),
	    "unknown setting in defaults");
	ok(fails(TUN1 PEER "  recvbuff = 4096; } );\n", 3,
	    "unknown setting 'recvbuff' in tunnel pg"),
	    "unknown setting in a tunnel");
	ok(fails(TUN1 PEER "  sendbuf = \"big\"; } );\n", 3,
	    "tunnel pg: sendbuf must be an integer"), "string for an integer");
	ok(fails(TUN1 PEER "  sq_size = 1.5; } );\n", 3,
	    "tunnel pg: sq_size must be an integer"), "float for an integer");
	ok(fails(TUN1 "  peer = 7; } );\n", 2,
	    "tunnel pg: peer must be a string"), "integer for a string");
	ok(fails("log_level = \"verbose\";\n", 1,
	    "log_level 'verbose' is not one of"), "bad log_level");
	ok(fails("\nlog_level = 3;\n", 2, "log_level must be a string"),
	    "log_level of the wrong type");
	ok(fails("defaults = ( 1 );\n", 1, "defaults must be a group"),
	    "defaults not a group");

	/* Tunnels list. */
	ok(fails("log_level = \"info\";\n", 0, "no tunnels defined"),
	    "no tunnels at all");
	ok(fails("log_level = \"info\";\n/* the tunnels:\ntunnels = ( );\n", 0,
	    "no tunnels defined: the comment opened with /* at line 2 is never "
	    "closed, so everything after it is comment"),
	    "a comment never closed hides the rest, which libconfig accepts: "
	    "said");
	ok((c = load("\ntunnels = ( );\n")) != NULL && c->ntunnels == 0,
	    "an empty tunnels list says \"none yet\"");
	conf_free(c);
	ok(fails("tunnels = { a = 1; };\n", 1, "tunnels must be a list"),
	    "tunnels as a group");
	ok(fails("tunnels = (\n \"pg\" );\n", 2,
	    "each tunnel must be a group"), "a tunnel that is not a group");
	ok(fails("tunnels = (\n { target = \"tcp://h:1\"; } );\n", 2,
	    "tunnel without a name"), "tunnel without a name");
	ok(fails("tunnels = ( {\n name = \"a b\"; } );\n", 2,
	    "tunnel name 'a b' is not valid"), "bad tunnel name");
	ok(fails("tunnels = ( {\n name = \"abcdefghijklmnopqrstuvwxyzabcdefghij"
	    "klmnopqrstuvwxyzabcdefghijklm\"; } );\n", 2, "is not valid"),
	    "65-character tunnel name");
	ok(fails("tunnels = ( { name = \"\"; } );\n", 1, "is not valid"),
	    "empty tunnel name");
	ok(fails("tunnels = ( { name = 5; } );\n", 1,
	    "tunnel name must be a string"), "tunnel name not a string");
	ok(fails("listen = \"h\";\n"
	    "tunnels = ( { name = \"pg\"; target = \"tcp://h:1\"; },\n"
	    "  { name = \"x\"; target = \"tcp://h:1\"; },\n"
	    "  {\n name = \"pg\"; target = \"tcp://h:2\"; } );\n", 5,
	    "tunnel pg is defined twice (first at line 2)"),
	    "duplicate tunnel name");

	/* Kinds of tunnel. */
	ok(fails("tunnels = ( { name = \"pg\";\n accept = \"tcp://h:1\"; } );\n",
	    2, "tunnel pg: accept needs a peer"), "accept without peer");
	ok(fails("tunnels = ( { name = \"pg\";\n peer = \"h\"; } );\n", 2,
	    "tunnel pg: peer needs an accept address"), "peer without accept");
	ok(fails("tunnels = (\n { name = \"pg\"; sq_size = 8; } );\n", 2,
	    "tunnel pg: needs either accept and peer, or target"),
	    "neither accept nor target");
	ok(fails("listen = \"h\";\n" TUN1 PEER " target = \"tcp://h:1\"; } );\n",
	    4, "tunnel pg: has both accept/peer and target; define two tunnels"),
	    "both accept/peer and target");
	ok(fails("listen = \"h\";\ntunnels = ( { name = \"pg\";\n"
	    " peer = \"h\"; target = \"tcp://h:1\"; } );\n", 3,
	    "has both accept/peer and target"), "both peer and target");
	ok(fails("log_level = \"info\";\n"
	    "tunnels = ( { name = \"pg\";\n target = \"tcp://h:1\"; } );\n", 3,
	    "tunnel pg: a target needs a global listen address"),
	    "target without listen");

	/* Addresses in context. */
	ok(fails("tunnels = ( { name = \"pg\"; peer = \"p\";\n"
	    "  accept = \"tcp://127.0.0.1\"; } );\n", 2,
	    "tunnel pg: accept 'tcp://127.0.0.1': missing port"),
	    "accept without port");
	ok(fails("tunnels = ( { name = \"pg\"; peer = \"p\";\n"
	    "  accept = \"tcp://127.0.0.1:abc\"; } );\n", 2,
	    "tunnel pg: accept 'tcp://127.0.0.1:abc': bad port 'abc'"),
	    "accept with a bad port");
	ok(fails("tunnels = ( { name = \"pg\"; peer = \"p\";\n"
	    "  accept = \"udp://127.0.0.1:53\"; } );\n", 2,
	    "tunnel pg: accept 'udp://127.0.0.1:53': unknown scheme 'udp'; "
	    "use tcp://HOST:PORT or unix:/PATH"), "accept with a bad scheme");
	ok(fails("tunnels = ( { name = \"pg\"; peer = \"p\";\n"
	    "  accept = \"unix:run/pg.sock\"; } );\n", 2,
	    "tunnel pg: accept 'unix:run/pg.sock': unix path must be absolute"),
	    "relative unix path");
	memset(longpath, 'a', 108);
	longpath[0] = '/';
	longpath[108] = '\0';
	snprintf(text, sizeof(text), "listen = \"h\";\n"
	    "tunnels = ( { name = \"pg\";\n target = \"unix:%s\"; } );\n",
	    longpath);
	ok(fails(text, 3, "tunnel pg: target 'unix:/aaa"),
	    "long unix path: names the address");
	ok(fails(text, 3, "': unix path too long (max 107 bytes)"),
	    "long unix path: says why");
	ok(fails("listen = \"h\";\ntunnels = ( { name = \"pg\";\n"
	    "  target = \"tcp://127.0.0.1:0\"; } );\n", 3,
	    "tunnel pg: target 'tcp://127.0.0.1:0': port 0 is not allowed"),
	    "target on port 0");
	ok(fails(TUN1 "  peer = \"h:99999\"; } );\n", 2,
	    "tunnel pg: peer 'h:99999': port 99999 is out of range"),
	    "peer port out of range");
	ok(fails(TUN1 "  peer = \"tcp://h:1\"; } );\n", 2,
	    "tunnel pg: peer 'tcp://h:1': no scheme here"),
	    "peer with a scheme");
	ok(fails("tunnels = ( { name = \"pg\"; peer = \"p\";\n"
	    " accept = 5; } );\n", 2, "tunnel pg: accept must be a string"),
	    "accept not a string");
	ok(fails("tunnels = (\n"
	    " { name = \"a\"; accept = \"tcp://127.0.0.1:5000\"; peer = \"p\"; },\n"
	    " { name = \"b\"; peer = \"p\";\n"
	    "   accept = \"tcp://127.0.0.1:05000\"; } );\n", 4,
	    "tunnel b: accept 'tcp://127.0.0.1:05000' is already used by "
	    "tunnel a"), "two tunnels on one tcp address");
	ok(fails("tunnels = (\n"
	    " { name = \"a\"; accept = \"unix:/run/s\"; peer = \"p\"; },\n"
	    " { name = \"b\"; peer = \"p\"; accept = \"unix:/run/s\"; } );\n", 3,
	    "tunnel b: accept 'unix:/run/s' is already used by tunnel a"),
	    "two tunnels on one unix path");

	/* Sizes. */
	ok(fails(TUN1 PEER "  recvbuf = 1000; } );\n", 3,
	    "tunnel pg: recvbuf 1000 is below the minimum 4096"),
	    "recvbuf below the minimum");
	ok(fails(TUN1 PEER "  sendbuf = 6000; } );\n", 3,
	    "tunnel pg: sendbuf 6000 is not a power of two"),
	    "sendbuf not a power of two");
	ok(fails(TUN1 PEER "  sendbuf = -4096; } );\n", 3,
	    "tunnel pg: sendbuf -4096 is below the minimum 4096"),
	    "negative sendbuf");
	ok(fails(TUN1 PEER "  sendbuf = 2147483648L; } );\n", 3,
	    "tunnel pg: sendbuf 2147483648 is above the maximum"),
	    "int64 sendbuf above the maximum");
	ok(fails(TUN1 PEER "  recvbuf = 4294971392; } );\n", 3,
	    "tunnel pg: recvbuf 4294971392 is above the maximum"),
	    "a number libconfig wraps to 4096 is still refused");
	ok(fails(TUN1 PEER "  sq_size = 2; } );\n", 3,
	    "tunnel pg: sq_size 2 is below the minimum 4"), "sq_size too small");
	ok(fails(TUN1 PEER "  sq_size = 65537; } );\n", 3,
	    "tunnel pg: sq_size 65537 is above the maximum 65536"),
	    "sq_size too big");
	ok(fails(TUN1 PEER "  rq_size = 32769; } );\n", 3,
	    "tunnel pg: rq_size 32769 is above the maximum 32768"),
	    "rq_size too big");
	ok(fails(TUN1 PEER "  inline_size = 1025; } );\n", 3,
	    "tunnel pg: inline_size 1025 is above the maximum 1024"),
	    "inline_size too big");
	ok(fails(TUN1 PEER "  inline_size = -1; } );\n", 3,
	    "tunnel pg: inline_size -1 is below the minimum 0"),
	    "negative inline_size");
	ok(fails(TUN1 PEER "  max_streams = 0; } );\n", 3,
	    "tunnel pg: max_streams 0 is below the minimum 1"),
	    "max_streams 0");
	ok(fails(TUN1 PEER "  max_streams = 16385; } );\n", 3,
	    "tunnel pg: max_streams 16385 is above the maximum 16384"),
	    "max_streams too big");
	ok(fails(TUN1 PEER "  rq_size =\n 3; } );\n", 3,
	    "tunnel pg: rq_size 3 is below the minimum 4"),
	    "a value on the next line is reported at its setting");
	ok(fails("defaults = {\n  recvbuf = 8192;\n  sendbuf = 6000; };\n", 3,
	    "defaults: sendbuf 6000 is not a power of two"),
	    "defaults: sendbuf checked");
	ok(fails("defaults = { sq_size = 2; };\n", 1,
	    "defaults: sq_size 2 is below the minimum 4"),
	    "defaults: sq_size checked");
	ok(fails("defaults = { max_streams = 20000; };\n", 1,
	    "defaults: max_streams 20000 is above the maximum 16384"),
	    "defaults: max_streams checked");

	/* PROXY protocol. */
	ok(fails(TUN1 PEER "  proxy_protocol = \"v1\"; } );\n", 3,
	    "tunnel pg: proxy_protocol needs a target"),
	    "proxy_protocol on a client tunnel");
	ok(fails("listen = \"h\";\ntunnels = ( { name = \"pg\";\n"
	    " target = \"unix:/s\"; proxy_protocol = \"v3\"; } );\n", 3,
	    "tunnel pg: proxy_protocol 'v3': use \"v1\", \"v2\" or \"off\""),
	    "proxy_protocol v3");
	ok(fails("listen = \"h\";\ntunnels = ( { name = \"pg\";\n"
	    " target = \"unix:/s\";\n proxy_protocol = \"v1\"; } );\n", 4,
	    "tunnel pg: proxy_protocol without a key_file would tell the "
	    "target whatever client address any host on the fabric claims; "
	    "set key_file, or proxy_trust_any_peer = true"),
	    "proxy_protocol without a key needs proxy_trust_any_peer");
	ok(fails("listen = \"h\";\ntunnels = ( { name = \"pg\";\n"
	    " target = \"unix:/s\";\n proxy_trust_any_peer = true; } );\n",
	    4, "tunnel pg: proxy_trust_any_peer goes with proxy_protocol"),
	    "proxy_trust_any_peer without proxy_protocol");
	ok(fails("listen = \"h\";\ntunnels = ( { name = \"pg\";\n"
	    " target = \"unix:/s\"; proxy_protocol = \"v1\";\n"
	    " proxy_trust_any_peer = 1; } );\n", 4,
	    "tunnel pg: proxy_trust_any_peer must be true or false"),
	    "proxy_trust_any_peer is a boolean");

	/* Protocol versions. */
	ok(fails(TUN1 PEER "  min_version = 0; } );\n", 3,
	    "tunnel pg: min_version 0 is below the minimum 1"),
	    "min_version 0");
	ok(fails("defaults = { min_version = 13; };\n", 1,
	    "defaults: min_version 13 is above the maximum 12"),
	    "defaults: min_version checked");

	/* Unix socket settings. */
	ok(fails(TUN1 PEER "  unix_mode = \"0600\"; } );\n", 3,
	    "tunnel pg: unix_mode needs a unix: accept address"),
	    "unix_mode with a tcp accept");
	ok(fails("listen = \"h\";\ntunnels = ( { name = \"pg\";\n"
	    " target = \"unix:/s\"; unix_group = \"g\"; } );\n", 3,
	    "tunnel pg: unix_group needs a unix: accept address"),
	    "unix_group with a target");
	ok(fails("tunnels = ( { name = \"pg\"; accept = \"unix:/s\"; peer = \"p\";\n"
	    "  unix_mode = 0660; } );\n", 2,
	    "tunnel pg: unix_mode must be a string of octal digits"),
	    "unix_mode as an integer");
	ok(fails("tunnels = ( { name = \"pg\"; accept = \"unix:/s\"; peer = \"p\";\n"
	    "  unix_mode = \"0680\"; } );\n", 2,
	    "tunnel pg: unix_mode '0680' is not octal digits"),
	    "unix_mode with a non-octal digit");
	ok(fails("tunnels = ( { name = \"pg\"; accept = \"unix:/s\"; peer = \"p\";\n"
	    "  unix_owner = \"\"; } );\n", 2,
	    "tunnel pg: unix_owner is empty"), "empty unix_owner");

	/* listen. */
	ok(fails("listen = \"h:abc\";\n", 1, "listen 'h:abc': bad port 'abc'"),
	    "listen with a bad port");
	ok(fails("listen = ( \"h:1\",\n  \"::1\" );\n", 2,
	    "listen '::1': an IPv6 address must be in brackets"),
	    "bad listen element reported at its line");
	ok(fails("listen = ( \"h:1\",\n  \"h:01\" );\n", 2,
	    "listen 'h:01' is given twice"), "duplicate listen");
	ok(fails("\nlisten = 5;\n", 2, "listen must be a string or a list"),
	    "listen of the wrong type");
	ok(fails("listen = ( );\n", 1, "listen is an empty list"),
	    "empty listen list");

	/* Errors in an included file name that file. */
	path = put("sendbuf = 6000;\n");
	snprintf(text, sizeof(text), TUN1 PEER "@include \"%s\"\n} );\n", path);
	snprintf(longpath, sizeof(longpath), "%.150s:1: tunnel pg: sendbuf",
	    path);
	ok(conf_load(put(text), 0, &c, err, sizeof(err)) == -1 &&
	    strncmp(err, longpath, strlen(longpath)) == 0,
	    "error in an included file: %s", err);

	/* A short buffer still gets a terminated, truncated message. */
	ok(conf_load(put("foo = 1;\n"), 0, &c, err, 8) == -1 && strlen(err) == 7,
	    "error truncated to the buffer");
}

static void
test_addr(void)
{
	struct conf_addr a;
	char why[256], longtext[600], path[120];

	ok(conf_parse_addr("tcp://[::1]:80", 0, &a, why, sizeof(why)) == 0 &&
	    a.kind == CONF_ADDR_TCP && strcmp(a.host, "::1") == 0 &&
	    strcmp(a.port, "80") == 0 && strcmp(a.text, "tcp://[::1]:80") == 0,
	    "tcp v6 with brackets");
	ok(conf_parse_addr("tcp://db.example-1.net:5432", 0, &a, why,
	    sizeof(why)) == 0 && strcmp(a.host, "db.example-1.net") == 0 &&
	    strcmp(a.port, "5432") == 0, "tcp host name");
	ok(conf_parse_addr("tcp://h:0", 1, &a, why, sizeof(why)) == 0 &&
	    strcmp(a.port, "0") == 0, "port 0 where allowed");
	ok(addr_fails("tcp://h:0", 0, "port 0 is not allowed"),
	    "port 0 where not allowed");
	ok(conf_parse_addr("tcp://h:007471", 0, &a, why, sizeof(why)) == 0 &&
	    strcmp(a.port, "7471") == 0 && strcmp(a.text, "tcp://h:007471") == 0,
	    "port normalized, text kept");
	ok(conf_parse_addr("tcp://h:65535", 0, &a, why, sizeof(why)) == 0,
	    "port 65535");
	ok(addr_fails("tcp://h:65536", 1, "port 65536 is out of range"),
	    "port 65536");
	ok(addr_fails("tcp://h:", 1, "missing port"), "empty port");
	ok(addr_fails("tcp://h:8x", 1, "bad port '8x'"), "port with garbage");
	ok(addr_fails("tcp://[::1]", 1, "missing port"), "v6 without port");
	ok(addr_fails("tcp://[::1", 1, "missing ']'"), "v6 without ']'");
	ok(addr_fails("tcp://[::1]80", 1, "expected ':PORT' after ']'"),
	    "v6 without ':' after ']'");
	ok(addr_fails("tcp://::1:80", 1, "must be in brackets"),
	    "v6 without brackets");
	ok(addr_fails("tcp://[zz::1]:80", 1, "bad IPv6 address 'zz::1'"),
	    "bad v6 address");
	ok(addr_fails("tcp://[]:80", 1, "missing host"), "empty brackets");
	ok(addr_fails("tcp://:80", 1, "missing host"), "missing host");
	ok(addr_fails("tcp://a b:80", 1, "bad host 'a b'"), "host with a space");
	ok(addr_fails("tcp://300.1.1.1:80", 1, "bad IPv4 address"),
	    "bad v4 address");
	ok(addr_fails("127.0.0.1:80", 1, "missing scheme"), "no scheme");
	ok(addr_fails("", 1, "missing scheme"), "empty address");
	ok(addr_fails("TCP://h:1", 1, "unknown scheme 'TCP'"),
	    "schemes are lower case");
	ok(conf_parse_addr("unix:///run/x.sock", 0, &a, why, sizeof(why)) == 0 &&
	    a.kind == CONF_ADDR_UNIX && strcmp(a.path, "/run/x.sock") == 0,
	    "unix:///path is unix:/path");
	ok(addr_fails("unix://run/x.sock", 0, "must be absolute"),
	    "unix://relative");
	ok(addr_fails("unix:", 0, "must be absolute"), "unix: without a path");
	memset(path, 'p', sizeof(path));
	path[0] = '/';
	path[107] = '\0';
	snprintf(longtext, sizeof(longtext), "unix:%s", path);
	ok(conf_parse_addr(longtext, 0, &a, why, sizeof(why)) == 0 &&
	    strlen(a.path) == 107, "unix path of 107 bytes");
	path[107] = 'p';
	path[108] = '\0';
	snprintf(longtext, sizeof(longtext), "unix:%s", path);
	ok(addr_fails(longtext, 0, "unix path too long (max 107 bytes)"),
	    "unix path of 108 bytes");
	memset(longtext, 'h', sizeof(longtext));
	memcpy(longtext, "tcp://", 6);
	longtext[500] = '\0';
	ok(addr_fails(longtext, 0, "address too long"), "500-byte address");

	ok(conf_parse_hostport("h", CONF_DEFAULT_PORT, &a, why,
	    sizeof(why)) == 0 && a.kind == CONF_ADDR_TCP &&
	    strcmp(a.host, "h") == 0 && strcmp(a.port, "7471") == 0,
	    "hostport: default port");
	ok(conf_parse_hostport("[::1]", CONF_DEFAULT_PORT, &a, why,
	    sizeof(why)) == 0 && strcmp(a.host, "::1") == 0 &&
	    strcmp(a.port, "7471") == 0, "hostport: v6 with default port");
	ok(conf_parse_hostport("[fe80::1%ib0]:9", NULL, &a, why,
	    sizeof(why)) == 0 && strcmp(a.host, "fe80::1%ib0") == 0 &&
	    strcmp(a.port, "9") == 0, "hostport: v6 with zone and port");
	ok(hp_fails("h", NULL, "missing port"), "hostport: no default port");
	ok(hp_fails("h:0", CONF_DEFAULT_PORT, "port 0 is not allowed"),
	    "hostport: port 0 refused");
	ok(hp_fails("fe80::1", CONF_DEFAULT_PORT, "must be in brackets"),
	    "hostport: bare v6");
	ok(hp_fails("[fe80::1%]:1", NULL, "bad IPv6 zone"),
	    "hostport: empty zone");
	ok(hp_fails("tcp://h:1", NULL, "no scheme here"),
	    "hostport: scheme refused");
	ok(hp_fails("h/x:1", NULL, "bad host"), "hostport: garbage host");
}

/* ${name} in the source tree's conf/, or NULL (a SKIP is printed). */
static const char *
conf_file(const char *name, char *path, size_t len)
{
	const char *srcdir = getenv("RSTREAMD_SRCDIR");

	snprintf(path, len, "%s/conf/%s", srcdir != NULL ? srcdir : ".", name);
	if (srcdir == NULL && access(path, R_OK) != 0) {
		printf("ok %d - # SKIP %s not found (set RSTREAMD_SRCDIR)\n",
		    ++tap_n, name);
		return (NULL);
	}
	return (path);
}

static const char *identity(const char *, uint8_t [IDENT_KEY_LEN]);

/*
 * ${path}'s text with "/etc/rstreamd/" pointing at the test directory,
 * where the files the example names are made: a new file's path.
 */
static const char *
sandboxed(const char *path)
{
	static char text[65536];
	char line[1024], *at;
	size_t len = 0;
	FILE *f;

	if ((f = fopen(path, "r")) == NULL) {
		perror(path);
		exit(1);
	}
	while (fgets(line, sizeof(line), f) != NULL && len < sizeof(text)) {
		if ((at = strstr(line, "/etc/rstreamd/")) != NULL) {
			*at = '\0';
			len += (size_t)snprintf(text + len, sizeof(text) - len,
			    "%s%s/%s", line, dir, at + strlen("/etc/rstreamd/"));
		} else {
			len += (size_t)snprintf(text + len, sizeof(text) - len,
			    "%s", line);
		}
	}
	fclose(f);
	return (put(text));
}

static void
test_example(void)
{
	uint8_t pub[IDENT_KEY_LEN];
	char path[PATH_MAX];
	struct conf *c = NULL;
	const struct conf_tunnel *t;
	int r;

	if (conf_file("rstreamd.conf.example", path, sizeof(path)) != NULL) {
		/* Its identity, which it names, as its comments say. */
		(void)identity("node.key", pub);
		r = conf_load(sandboxed(path), 0, &c, err, sizeof(err));
		ok(r == 0, "example %s loads%s%s", path, r != 0 ? ": " : "",
		    r != 0 ? err : "");
		t = conf_tunnel_find(c, "pg");
		ok(c != NULL && c->nlisten > 0 && t != NULL && t->has_accept &&
		    (t = conf_tunnel_find(c, "redis")) != NULL &&
		    t->has_target, "example has a client and a server tunnel");
		ok(c != NULL && sizes_are(&c->defaults, 262144, 262144, 256,
		    256, 128, 1024),
		    "example's defaults block shows the built-in defaults");
		conf_free(c);
		c = NULL;
		snprintf(path, sizeof(path), "%s/node.key", dir);
		unlink(path);
	}
	/* What make install puts in place must start as it is. */
	if (conf_file("rstreamd.conf", path, sizeof(path)) != NULL) {
		r = conf_load(path, 0, &c, err, sizeof(err));
		ok(r == 0 && c->ntunnels == 0 && !c->key.set,
		    "the installed %s loads: no tunnels (so nothing "
		    "listens), no key%s%s", path, r != 0 ? ": " : "",
		    r != 0 ? err : "");
		conf_free(c);
	}
}

/* metrics_listen: off by default; an address and a port, or "". */
static void
test_metrics_listen(void)
{
	struct conf *c;
#define T2 "tunnels = ( );\n"

	c = load(T2);
	ok(c != NULL && c->metrics_listen.kind == 0,
	    "metrics_listen is off by default");
	conf_free(c);
	c = load("metrics_listen = \"127.0.0.1:9477\";\n" T2);
	ok(c != NULL && c->metrics_listen.kind == CONF_ADDR_TCP &&
	    strcmp(c->metrics_listen.host, "127.0.0.1") == 0 &&
	    strcmp(c->metrics_listen.port, "9477") == 0,
	    "metrics_listen 127.0.0.1:9477");
	conf_free(c);
	c = load("metrics_listen = \"[::1]:9477\";\n" T2);
	ok(c != NULL && c->metrics_listen.kind == CONF_ADDR_TCP &&
	    strcmp(c->metrics_listen.host, "::1") == 0,
	    "metrics_listen [::1]:9477");
	conf_free(c);
	c = load("metrics_listen = \"\";\n" T2);
	ok(c != NULL && c->metrics_listen.kind == 0,
	    "metrics_listen = \"\" is off");
	conf_free(c);
	ok(fails("\nmetrics_listen = \"127.0.0.1\";\n" T2, 2,
	    "metrics_listen '127.0.0.1': missing port"), "a port is needed");
	ok(fails("metrics_listen = \"localhost:9477\";\n" T2, 1,
	    "the host must be an IPv4 or IPv6 address"), "not a host name");
	ok(fails("metrics_listen = \"127.0.0.1:0\";\n" T2, 1,
	    "metrics_listen '127.0.0.1:0'"), "not port 0");
	ok(fails("metrics_listen = 9477;\n" T2, 1,
	    "metrics_listen must be a string"), "not a number");
	ok(fails("metrics_listen = \"tcp://127.0.0.1:9477\";\n" T2, 1,
	    "metrics_listen 'tcp://127.0.0.1:9477'"), "not a URL");
#undef T2
}

/* The service settings: control socket, drain time, log file. */
static void
test_service(void)
{
	struct conf *c, *c2;
#define T1 "listen = \"10.0.0.1\";\n" \
	"tunnels = ( { name = \"a\"; target = \"tcp://h:1\"; } );\n"

	c = load(T1);
	ok(c != NULL && strcmp(c->control, "/run/rstreamd/control.sock") == 0 &&
	    c->control_mode == 0660 && c->control_group[0] == '\0',
	    "control defaults to /run/rstreamd/control.sock, mode 0660");
	ok(c != NULL && c->drain_time == 30, "drain_time defaults to 30 s");
	ok(c != NULL && c->log_file[0] == '\0', "no log file by default");
	conf_free(c);
	c = load("control = \"/tmp/x.sock\";\ncontrol_mode = \"0600\";\n"
	    "control_group = \"adm\";\ndrain_time = 0;\n"
	    "log_file = \"/var/log/rstreamd.log\";\n" T1);
	ok(c != NULL && strcmp(c->control, "/tmp/x.sock") == 0 &&
	    c->control_mode == 0600 && strcmp(c->control_group, "adm") == 0,
	    "control, control_mode and control_group are read");
	ok(c != NULL && c->drain_time == 0 &&
	    strcmp(c->log_file, "/var/log/rstreamd.log") == 0,
	    "drain_time 0 and log_file are read");
	conf_free(c);
	c = load("control = \"\";\n" T1);
	ok(c != NULL && c->control[0] == '\0', "control = \"\" turns it off");
	conf_free(c);
	ok(fails("\ncontrol = \"run/x.sock\";\n" T1, 2,
	    "control 'run/x.sock' is not an absolute path"),
	    "a relative control path is refused");
	ok(fails("control = \"/0123456789/0123456789/0123456789/0123456789/"
	    "0123456789/0123456789/0123456789/0123456789/0123456789/0123456789"
	    "\";\n" T1, 1, "is too long"), "a control path beyond sun_path");
	ok(fails("control_mode = \"0860\";\n" T1, 1,
	    "control_mode '0860' is not octal digits"), "bad control_mode");
	ok(fails("drain_time = 3601;\n" T1, 1,
	    "drain_time 3601 is outside 0 to 3600 seconds"),
	    "drain_time above an hour");
	ok(fails("drain_time = -1;\n" T1, 1, "is outside 0 to 3600"),
	    "negative drain_time");
	ok(fails("drain_time = 4294967326;\n" T1, 1, "is outside 0 to 3600"),
	    "drain_time that wraps in 32 bits");
	ok(fails("drain_time = \"30\";\n" T1, 1,
	    "drain_time must be an integer"), "drain_time as a string");
	ok(fails("log_file = \"\";\n" T1, 1, "log_file is empty"),
	    "an empty log_file");
	ok(fails("log_file = \"rstreamd.log\";\n" T1, 1,
	    "is not an absolute path"), "a relative log_file");

	/* Limits. */
	c = load(T1);
	ok(c != NULL && c->max_links == 64 && c->max_pending == 16,
	    "max_links defaults to 64, max_pending to 16");
	ok(c != NULL && c->tunnels[0].sz.connect_timeout == 10 &&
	    c->tunnels[0].sz.idle_timeout == 0,
	    "connect_timeout defaults to 10 s, idle_timeout to none");
	ok(c != NULL && c->max_pending_per_addr == 4 &&
	    c->max_unauth_links == 16 && c->link_idle_timeout == 60 &&
	    c->max_connect_rate == 32,
	    "max_pending_per_addr defaults to 4, max_unauth_links to 16, "
	    "link_idle_timeout to 60 s, max_connect_rate to 32");
	ok(c != NULL && c->ack_timeout == 14 && c->retry_count == 7,
	    "ack_timeout defaults to 14, retry_count to 7");
	ok(c != NULL && c->ring_pool == 16777216, "ring_pool defaults to 16 MiB");
	conf_free(c);
	c = load("max_pending_per_addr = 2;\nmax_unauth_links = 0;\n"
	    "link_idle_timeout = 0;\nack_timeout = 18;\nretry_count = 3;\n"
	    "ring_pool = 0;\nmax_connect_rate = 1;\n" T1);
	ok(c != NULL && c->max_pending_per_addr == 2 && c->max_connect_rate == 1 &&
	    c->max_unauth_links == 0 && c->link_idle_timeout == 0 &&
	    c->ack_timeout == 18 && c->retry_count == 3 && c->ring_pool == 0,
	    "the link admission, transport and ring pool settings are read");
	ok(fails("ring_pool = 2147483648;\n" T1, 1, "ring_pool 2147483648 is "
	    "outside 0 to 1073741824"), "a ring_pool over 1 GiB");
	ok(fails("max_connect_rate = 0;\n" T1, 1, "max_connect_rate 0 is "
	    "outside 1 to 100000"), "max_connect_rate 0");
	conf_free(c);
	/* The loops' busy-poll window. */
	c = load(T1);
	ok(c != NULL && c->busy_poll == 0, "busy_poll defaults to 0 (off)");
	conf_free(c);
	c = load("busy_poll = 50;\n" T1);
	ok(c != NULL && c->busy_poll == 50, "busy_poll is read");
	conf_free(c);
	ok(fails("\nbusy_poll = 100001;\n" T1, 2, "busy_poll 100001 is "
	    "outside 0 to 100000"), "a busy_poll over 100 ms, at its line");

	/* Memory that follows the traffic: ring_min and max_memory. */
	c = load(T1);
	ok(c != NULL && c->max_memory == 0 && c->defaults.ring_min == 16384 &&
	    c->tunnels[0].sz.ring_min == 16384,
	    "max_memory defaults to none, ring_min to 16384");
	conf_free(c);
	c = load("max_memory = 4096;\ndefaults = { ring_min = 4096; };\n"
	    "tunnels = ( { name = \"a\"; accept = \"tcp://127.0.0.1:1\"; "
	    "peer = \"p:1\"; },\n { name = \"b\"; accept = "
	    "\"tcp://127.0.0.1:2\"; peer = \"p:1\"; ring_min = 0; } );\n");
	ok(c != NULL && c->max_memory == 4096 &&
	    c->tunnels[0].sz.ring_min == 4096 && c->tunnels[1].sz.ring_min == 0,
	    "max_memory is read; ring_min from defaults, 0 in a tunnel");
	conf_free(c);
	ok(fails(TUN1 PEER "  ring_min = 1000; } );\n", 3,
	    "tunnel pg: ring_min 1000 is below the minimum 4096"),
	    "a ring_min below 4096 (and not 0)");
	ok(fails(TUN1 PEER "  ring_min = 6000; } );\n", 3,
	    "tunnel pg: ring_min 6000 is not a power of two"),
	    "a ring_min not a power of two");
	ok(fails("max_memory = 2000000;\n" T1, 1, "max_memory 2000000 is "
	    "outside 0 to 1048576"), "a max_memory over 1 TiB");

	/* Each tunnel's budget: its own max_memory, or an equal share. */
	c = load(T1);
	ok(c != NULL && c->tunnels[0].sz.max_memory == CONF_MEMORY_SHARE &&
	    conf_tunnel_max_memory(c, &c->tunnels[0]) == 0,
	    "no max_memory anywhere: no tunnel has a limit of its own");
	conf_free(c);
	c = load("max_memory = 10;\n" T1);
	ok(c != NULL && conf_tunnel_max_memory(c, &c->tunnels[0]) ==
	    10 << 20, "one tunnel: its share is the whole max_memory");
	conf_free(c);
	c = load("max_memory = 12;\ndefaults = { max_memory = 0; };\n"
	    "listen = \"10.0.0.1\";\ntunnels = ( { name = \"a\"; "
	    "target = \"tcp://h:1\"; },\n { name = \"b\"; target = "
	    "\"tcp://h:2\"; max_memory = 5; },\n { name = \"c\"; target = "
	    "\"tcp://h:3\"; max_memory = 0; } );\n");
	ok(c != NULL && conf_tunnel_max_memory(c, &c->tunnels[0]) == 0 &&
	    conf_tunnel_max_memory(c, &c->tunnels[1]) == 5 << 20 &&
	    conf_tunnel_max_memory(c, &c->tunnels[2]) == 0,
	    "max_memory = 0 in defaults: one pool, as without budgets; a "
	    "tunnel's own max_memory is its limit");
	conf_free(c);
	c = load("max_memory = 12;\n"
	    "listen = \"10.0.0.1\";\ntunnels = ( { name = \"a\"; "
	    "target = \"tcp://h:1\"; },\n { name = \"b\"; target = "
	    "\"tcp://h:2\"; max_memory = 8; },\n { name = \"c\"; accept = "
	    "\"tcp://127.0.0.1:1\"; peer = \"p:1\"; } );\n");
	ok(c != NULL && conf_tunnel_max_memory(c, &c->tunnels[0]) == 4 << 20 &&
	    conf_tunnel_max_memory(c, &c->tunnels[1]) == 8 << 20 &&
	    conf_tunnel_max_memory(c, &c->tunnels[2]) == 4 << 20,
	    "unset: an equal share of max_memory among all tunnels, client "
	    "ones too");
	conf_free(c);
	ok(fails(TUN1 PEER "  max_memory = 2000000; } );\n", 3,
	    "tunnel pg: max_memory 2000000 is above the maximum 1048576"),
	    "a tunnel's max_memory over 1 TiB");
	ok(fails("max_memory = 3;\ntunnels = ( { name = \"a\";\n"
	    " accept = \"tcp://127.0.0.1:1\"; peer = \"p\"; },\n"
	    " { name = \"b\"; accept = \"tcp://127.0.0.1:2\"; peer = \"p\";\n"
	    "  sendbuf = 1048576; recvbuf = 1048576; ring_min = 0; } );\n", 4,
	    "tunnel b: max_memory leaves it 1572864 bytes (its share of the "
	    "daemon's), less than one stream's first rings (2097152 bytes): "
	    "no stream could open"),
	    "a share that cannot hold one stream's rings, at its tunnel's line");
	c = load("max_memory = 3;\ntunnels = ( { name = \"a\";\n"
	    " accept = \"tcp://127.0.0.1:1\"; peer = \"p\"; },\n"
	    " { name = \"b\"; accept = \"tcp://127.0.0.1:2\"; peer = \"p\";\n"
	    "  sendbuf = 1048576; recvbuf = 1048576; } );\n");
	ok(c != NULL, "the same, with rings that start at ring_min, fits");
	conf_free(c);
	ok(fails("defaults = { max_memory = -1; };\n" T1, 1,
	    "defaults: max_memory -1 is below the minimum 0"),
	    "a negative max_memory in defaults");
	ok(fails("ack_timeout = 4;\n" T1, 1, "ack_timeout 4 is outside 8 to "
	    "24"), "an ack_timeout too short for any fabric");
	ok(fails("retry_count = 8;\n" T1, 1, "retry_count 8 is outside 1 to "
	    "7"), "a retry_count the transport cannot take");
	ok(fails("max_pending_per_addr = 0;\n" T1, 1, "is outside 1 to"),
	    "max_pending_per_addr 0");
	c = load("max_links = 2;\nmax_pending = 1;\n"
	    "defaults = { idle_timeout = 600; };\n"
	    "listen = \"10.0.0.1\";\ntunnels = ( { name = \"a\"; "
	    "target = \"tcp://h:1\"; connect_timeout = 3; } );\n");
	ok(c != NULL && c->max_links == 2 && c->max_pending == 1 &&
	    c->tunnels[0].sz.connect_timeout == 3 &&
	    c->tunnels[0].sz.idle_timeout == 600,
	    "limits are read, timeouts from defaults and the tunnel");
	conf_free(c);
	ok(fails("max_links = 0;\n" T1, 1,
	    "max_links 0 is outside 1 to 4096 links"), "max_links 0");
	ok(fails("max_pending = 1025;\n" T1, 1,
	    "max_pending 1025 is outside 1 to 1024 links"),
	    "max_pending above 1024");
	ok(fails("listen = \"10.0.0.1\";\ntunnels = ( { name = \"a\"; "
	    "target = \"tcp://h:1\";\n connect_timeout = 0; } );\n", 3,
	    "connect_timeout 0 is below the minimum 1"), "connect_timeout 0");
	ok(fails("defaults = { idle_timeout = 604801; };\n" T1, 1,
	    "idle_timeout 604801 is above the maximum 604800"),
	    "idle_timeout above a week");

	/* Resume: resume_time, and a peer tried at several addresses. */
	c = load("defaults = { resume_time = 30; };\n"
	    "tunnels = ( { name = \"a\"; accept = \"tcp://127.0.0.1:1\";\n"
	    " peer = [ \"10.0.0.2\", \"[fd00::2]:7000\" ];"
	    " resume_without_key = true; },\n"
	    " { name = \"b\"; accept = \"tcp://127.0.0.1:2\"; peer = \"h\";"
	    " resume_time = 0; } );\n");
	ok(c != NULL && c->tunnels[0].sz.resume_time == 30 &&
	    c->tunnels[1].sz.resume_time == 0,
	    "resume_time from defaults and the tunnel");
	ok(c != NULL && c->tunnels[0].npeers == 2 &&
	    strcmp(c->tunnels[0].peers[0].host, "10.0.0.2") == 0 &&
	    strcmp(c->tunnels[0].peers[0].port, "7471") == 0 &&
	    strcmp(c->tunnels[0].peers[1].host, "fd00::2") == 0 &&
	    strcmp(c->tunnels[0].peers[1].port, "7000") == 0 &&
	    strcmp(c->tunnels[0].peer.host, "10.0.0.2") == 0,
	    "a peer array: every address, the first is peer");
	ok(c != NULL && c->tunnels[1].npeers == 1, "a peer string is one");
	conf_free(c);
	c = NULL;
	ok(fails("defaults = { resume_time = 3601; };\n" T1, 1,
	    "resume_time 3601 is above the maximum 3600"),
	    "resume_time above an hour");
	/* Without a key, anyone who saw the hellos could take the streams. */
	ok(fails("tunnels = ( { name = \"a\"; accept = \"tcp://127.0.0.1:1\";"
	    "\n peer = \"h\";\n resume_time = 30; } );\n", 3, "tunnel a: "
	    "resume_time without a key_file would let any host that saw this "
	    "tunnel's links come up take its streams over; set key_file, or "
	    "resume_without_key = true to allow it"),
	    "resume_time without a key: the line, and the setting to use");
	ok(fails("listen = \"h\";\ndefaults = { resume_time = 30; };\n"
	    "tunnels = ( { name = \"a\";\n target = \"tcp://h:1\"; } );\n",
	    3, "tunnel a: resume_time (from defaults) without a key_file"),
	    "a target tunnel too; resume_time from defaults: the tunnel's "
	    "line");
	ok(fails("tunnels = ( { name = \"a\"; accept = \"tcp://127.0.0.1:1\";"
	    "\n peer = \"h\";\n resume_without_key = true; } );\n", 3,
	    "tunnel a: resume_without_key goes with resume_time"),
	    "resume_without_key without resume_time");
	ok(fails("tunnels = ( { name = \"a\"; accept = \"tcp://127.0.0.1:1\";"
	    "\n peer = \"h\"; resume_time = 3;\n resume_without_key = 1; } );"
	    "\n", 3, "tunnel a: resume_without_key must be true or false"),
	    "resume_without_key is a boolean");
	ok(fails("tunnels = ( { name = \"a\"; accept = \"tcp://127.0.0.1:1\";"
	    "\n peer = [ ]; } );\n", 2, "peer lists 1 to 8 addresses"),
	    "an empty peer array");
	ok(fails("tunnels = ( { name = \"a\"; accept = \"tcp://127.0.0.1:1\";"
	    "\n peer = [ \"a\", \"b\", \"c\", \"d\", \"e\", \"f\", \"g\", "
	    "\"h\", \"i\" ]; } );\n", 2, "peer lists 1 to 8 addresses"),
	    "nine peers");
	ok(fails("tunnels = ( { name = \"a\"; accept = \"tcp://127.0.0.1:1\";"
	    "\n peer = [ \"h:0\" ]; } );\n", 2, "peer 'h:0'"),
	    "a bad address in a peer array names it");

	/* What a reload compares. */
	c = load("listen = \"10.0.0.1\";\ntunnels = ( { name = \"a\"; accept = \"tcp://127.0.0.1:1\";"
	    " peer = \"h\"; }, { name = \"b\"; target = \"unix:/s\"; } );\n");
	c2 = load("listen = \"10.0.0.1\";\ntunnels = ( { name = \"b\"; target = \"unix:/s\"; },\n"
	    "{ name = \"a\"; accept = \"tcp://127.0.0.1:1\"; peer = \"h\";"
	    " recvbuf = 8192; } );\n");
	ok(c != NULL && c2 != NULL &&
	    conf_tunnel_same(&c->tunnels[1], &c2->tunnels[0]),
	    "the same tunnel elsewhere in the file is the same");
	ok(c != NULL && c2 != NULL &&
	    !conf_tunnel_same(&c->tunnels[0], &c2->tunnels[1]),
	    "a tunnel with another recvbuf is not the same");
	ok(c != NULL && c2 != NULL &&
	    conf_addr_same(&c->tunnels[0].accept, &c2->tunnels[1].accept),
	    "its accept address is the same");
	conf_free(c);
	conf_free(c2);
#undef T1
}

/* Write a key file of ${n} bytes with ${mode}; return its path. */
static const char *
keyfile(const char *name, size_t n, mode_t mode)
{
	static char paths[8][FILEMAX];
	static int np;
	char *path = paths[np++ % 8];
	FILE *f;
	size_t i;

	snprintf(path, FILEMAX, "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL) {
		perror(path);
		exit(1);
	}
	for (i = 0; i < n; i++)
		fputc((int)(i * 7 + 3) & 0xff, f);
	if (fclose(f) != 0 || chmod(path, mode) != 0) {
		perror(path);
		exit(1);
	}
	return (path);
}

static void
test_keys(void)
{
	char text[2048], gl[300];
	const char *k32 = keyfile("k32", 32, 0600);
	const char *k40 = keyfile("k40", 40, 0400);
	const char *open = keyfile("open", 32, 0644);
	const char *grp = keyfile("grp", 64, 0620);
	const char *k16 = keyfile("k16", 16, 0600);
	const char *big = keyfile("big", 1025, 0600);
	struct conf *c;
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;

	/* The global key is every tunnel's unless it has its own or "". */
	snprintf(text, sizeof(text), "listen = \"10.0.0.1\";\n"
	    "key_file = \"%s\";\n"
	    "tunnels = ( { name = \"a\"; target = \"tcp://127.0.0.1:1\"; },\n"
	    "  { name = \"b\"; target = \"tcp://127.0.0.1:1\"; key_file = \"%s\"; },\n"
	    "  { name = \"c\"; target = \"tcp://127.0.0.1:1\"; key_file = \"\"; } );\n",
	    k32, k40);
	c = load(text);
	ok(c != NULL && c->key.set && c->key.len == 32 &&
	    c->tunnels[0].key.set && conf_key_same(&c->tunnels[0].key,
	    &c->key), "a global key_file is read and inherited");
	ok(c != NULL && c->tunnels[1].key.len == 40 &&
	    !conf_key_same(&c->tunnels[1].key, &c->key),
	    "a tunnel's own key_file replaces it");
	ok(c != NULL && !c->tunnels[2].key.set,
	    "key_file = \"\" leaves a tunnel without a key");
	ok(c != NULL && c->handshake_timeout == 5 && c->nallow == 0,
	    "handshake_timeout defaults to 5 s; no allow list");
	if (c != NULL) {
		struct conf_tunnel t = c->tunnels[1];

		ok(!conf_tunnel_same(&c->tunnels[0], &t) &&
		    conf_tunnel_same(&c->tunnels[1], &t),
		    "a tunnel whose key changed is a changed tunnel");
	}
	conf_free(c);

#define KEYCONF(g, t) (snprintf(text, sizeof(text), "listen = \"10.0.0.1\";\n" \
	"%s\ntunnels = ( { name = \"a\"; target = \"tcp://127.0.0.1:1\"; %s } );\n", \
	(g), (t)), text)
	snprintf(gl, sizeof(gl), "key_file = \"%s\";", open);
	ok(fails(KEYCONF(gl, ""), 2, "is accessible by group or others "
	    "(mode 0644); a key must be private: chmod 600"),
	    "a world-readable key is refused, with file and line");
	{
		char t[300];

		snprintf(t, sizeof(t), "key_file = \"%s\";", grp);
		ok(fails(KEYCONF("", t), 3, "tunnel a: key_file"),
		    "a group-writable key is refused in a tunnel");
		snprintf(t, sizeof(t), "key_file = \"%s\";", k16);
		ok(fails(KEYCONF("", t), 3, "holds 16 bytes; a key needs at "
		    "least 32 random bytes"), "a 16-byte key is refused");
		snprintf(t, sizeof(t), "key_file = \"%s\";", big);
		ok(fails(KEYCONF("", t), 3, "is longer than 1024 bytes"),
		    "a 1025-byte file is refused");
		snprintf(t, sizeof(t), "key_file = \"%s/none\";", dir);
		ok(fails(KEYCONF("", t), 3, "cannot read: No such file"),
		    "a missing key file is refused");
		snprintf(t, sizeof(t), "key_file = \"%s\";", dir);
		ok(fails(KEYCONF("", t), 3, "is not a regular file"),
		    "a directory is refused");
		/* A FIFO must not hang the daemon: alarm() ends a hang. */
		snprintf(t, sizeof(t), "%s/fifo", dir);
		if (mkfifo(t, 0600) != 0) {
			perror(t);
			exit(1);
		}
		snprintf(t, sizeof(t), "key_file = \"%s/fifo\";", dir);
		alarm(10);
		ok(fails(KEYCONF("", t), 3, "is not a regular file"),
		    "a FIFO is refused at once, not waited on");
		alarm(0);
		/* Another user's key could be swapped by that user. */
		snprintf(t, sizeof(t), "key_file = \"%s\";", k32);
		if (geteuid() != 0) {
			printf("ok %d - # SKIP a key of another user (needs "
			    "root to chown)\n", ++tap_n);
		} else if (chown(k32, 65534, 65534) != 0) {
			perror(k32);
			exit(1);
		} else {
			ok(fails(KEYCONF("", t), 3, "belongs to uid 65534; a "
			    "key must belong to root"),
			    "a key owned by another user is refused");
			(void)chown(k32, 0, 0);
		}
		/* rstreamctl reads no key: CONF_NO_KEYS. */
		snprintf(gl, sizeof(gl), "key_file = \"%s\";", open);
		c = NULL;
		ok(conf_load(put(KEYCONF(gl, "")), CONF_NO_KEYS, &c, err,
		    sizeof(err)) == 0 && !c->key.set && !c->tunnels[0].key.set,
		    "CONF_NO_KEYS leaves key files unread");
		conf_free(c);
	}
	ok(fails(KEYCONF("key_file = \"\";", ""), 2, "key_file is empty"),
	    "the global key_file cannot be empty");
	ok(fails(KEYCONF("key_file = \"relative\";", ""), 2,
	    "is not an absolute path"), "a relative key path is refused");

	/* allow and handshake_timeout. */
	c = load(KEYCONF("allow = [ \"192.0.2.0/24\", \"10.1.2.3\", "
	    "\"2001:db8::/32\" ]; handshake_timeout = 30;", ""));
	ok(c != NULL && c->nallow == 3 && c->allow[0].prefix == 24 &&
	    c->allow[1].prefix == 32 && c->allow[2].prefix == 32 &&
	    c->handshake_timeout == 30, "allow and handshake_timeout parse");
	if (c != NULL) {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		inet_pton(AF_INET, "192.0.2.200", &sin.sin_addr);
		ok(conf_net_match(c->allow, c->nallow,
		    (struct sockaddr *)&sin), "192.0.2.200 is in 192.0.2.0/24");
		inet_pton(AF_INET, "192.0.3.1", &sin.sin_addr);
		ok(!conf_net_match(c->allow, c->nallow,
		    (struct sockaddr *)&sin), "192.0.3.1 is not");
		inet_pton(AF_INET, "10.1.2.3", &sin.sin_addr);
		ok(conf_net_match(c->allow, c->nallow,
		    (struct sockaddr *)&sin), "a single address matches itself");
		memset(&sin6, 0, sizeof(sin6));
		sin6.sin6_family = AF_INET6;
		inet_pton(AF_INET6, "2001:db8:ffff::1", &sin6.sin6_addr);
		ok(conf_net_match(c->allow, c->nallow,
		    (struct sockaddr *)&sin6), "IPv6 prefixes match");
		inet_pton(AF_INET6, "::ffff:192.0.2.9", &sin6.sin6_addr);
		ok(conf_net_match(c->allow, c->nallow,
		    (struct sockaddr *)&sin6),
		    "a v4-mapped address matches as IPv4");
		inet_pton(AF_INET6, "2001:db9::1", &sin6.sin6_addr);
		ok(!conf_net_match(c->allow, c->nallow,
		    (struct sockaddr *)&sin6), "2001:db9::1 does not");
	}
	conf_free(c);
	c = load(KEYCONF("allow = \"0.0.0.0/0\";", ""));
	ok(c != NULL && c->nallow == 1 && c->allow[0].prefix == 0,
	    "allow as one string; /0 allowed");
	conf_free(c);
	ok(fails(KEYCONF("allow = [ \"192.0.2.0/33\" ];", ""), 2,
	    "prefix must be 0 to 32"), "an IPv4 prefix above 32 is refused");
	ok(fails(KEYCONF("allow = [ \"192.0.2.0/\" ];", ""), 2,
	    "prefix must be"), "an empty prefix is refused");
	ok(fails(KEYCONF("allow = [ \"host.example\" ];", ""), 2,
	    "is not an IPv4 or IPv6 address"), "names are refused");
	ok(fails(KEYCONF("allow = [ ];", ""), 2, "empty list"),
	    "an empty allow list is refused");
	ok(fails(KEYCONF("handshake_timeout = 0;", ""), 2,
	    "outside 1 to 300 seconds"), "handshake_timeout 0 is refused");
	/* A key, the global one or the tunnel's, lets resume_time be. */
	snprintf(gl, sizeof(gl), "key_file = \"%s\";", k32);
	c = load(KEYCONF(gl, "resume_time = 9;"));
	ok(c != NULL && c->tunnels[0].sz.resume_time == 9 &&
	    c->tunnels[0].sz.min_version == 5,
	    "resume_time with the global key; min_version 5");
	ok(c != NULL && conf_keyed(c), "conf_keyed: a tunnel's key");
	conf_free(c);
	snprintf(gl, sizeof(gl), "resume_time = 9; key_file = \"%s\";", k32);
	c = load(KEYCONF("", gl));
	ok(c != NULL && c->tunnels[0].sz.resume_time == 9,
	    "resume_time with the tunnel's own key");
	conf_free(c);
	c = load(KEYCONF("", "resume_time = 9; resume_without_key = true;"));
	if (c != NULL) {
		struct conf_tunnel t = c->tunnels[0];

		t.resume_without_key = 0;
		ok(!conf_tunnel_same(&c->tunnels[0], &t),
		    "resume_without_key changes a tunnel");
	}
	conf_free(c);
#undef KEYCONF
	unlink(k32);
	unlink(k40);
	unlink(open);
	unlink(grp);
	unlink(k16);
	unlink(big);
}

/* A new identity file ${name} (its public key in ${pub}); its path. */
static const char *
identity(const char *name, uint8_t pub[IDENT_KEY_LEN])
{
	static char paths[4][FILEMAX];
	static int np;
	char *path = paths[np++ % 4];

	snprintf(path, FILEMAX, "%s/%s", dir, name);
	unlink(path);
	if (ident_write_new(path, pub, err, sizeof(err)) != 0) {
		printf("# %s\n", err);
		exit(1);
	}
	return (path);
}

/* Write ${text} to file ${name} of the test directory; its path. */
static const char *
side_file(const char *name, const char *text, mode_t mode)
{
	static char paths[4][FILEMAX];
	static int np;
	char *path = paths[np++ % 4];
	FILE *f;

	snprintf(path, FILEMAX, "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) != 0 || chmod(path, mode) != 0) {
		perror(path);
		exit(1);
	}
	return (path);
}

static char kb[IDENT_B64_LEN], kc[IDENT_B64_LEN], kd[IDENT_B64_LEN];
static char ke[IDENT_B64_LEN];

/* Four peers' public keys in kb, kc, kd, ke. */
static void
peer_keys(void)
{
	uint8_t k[IDENT_KEY_LEN];
	size_t i;

	for (i = 0; i < sizeof(k); i++)
		k[i] = (uint8_t)(i + 1);
	ident_b64(k, kb);
	k[0] = 0x80;
	ident_b64(k, kc);
	k[0] = 0x81;
	ident_b64(k, kd);
	k[0] = 0x82;
	ident_b64(k, ke);
}

static void
test_identity(void)
{
	uint8_t pub[IDENT_KEY_LEN], pk[IDENT_KEY_LEN];
	char text[4096], pf[FILEMAX + 16];
	const char *id = identity("id", pub), *pfile;
	const struct conf_peer *p;
	struct conf *c;

	peer_keys();
	/* Without identity_file: nothing sealed, no peers. */
	c = load("tunnels = ( { name = \"a\"; accept = \"tcp://127.0.0.1:0\"; "
	    "peer = \"10.0.0.1\"; } );\n");
	ok(c != NULL && !c->identity.set && c->identity.file[0] == '\0' &&
	    c->npeers == 0 && c->tunnels[0].encrypt == 0 &&
	    c->tunnels[0].peer_mask_n == 0,
	    "no identity_file: encrypt off, no peers");
	ok(c != NULL && !conf_keyed(c), "conf_keyed: no key, no identity");
	conf_free(c);

	/* Comments, blank lines, a comment after the fields, origin. */
	snprintf(pf, sizeof(pf), "# the fleet\n\n%s node-c origin\n"
	    "   \t\n  %s node-d   # rack 4\n", kc, kd);
	pfile = side_file("peers", pf, 0644);
	snprintf(text, sizeof(text), "listen = \"10.0.0.9\";\n"
	    "identity_file = \"%s\";\n"
	    "peers = ( { name = \"node-b\"; key = \"%s\"; },\n"
	    "  { name = \"web.1\"; key = \"%s\"; origin = true; } );\n"
	    "peers_file = \"%s\";\n"
	    "tunnels = ( { name = \"a\"; accept = \"tcp://127.0.0.1:0\"; "
	    "peer = \"10.0.0.1\"; peers = [ \"node-b\", \"node-c\" ]; },\n"
	    "  { name = \"t\"; target = \"tcp://127.0.0.1:1\"; },\n"
	    "  { name = \"u\"; target = \"tcp://127.0.0.1:2\"; "
	    "encrypt = false; peers = \"node-d\"; } );\n", id, kb, ke, pfile);
	c = load(text);
	ok(c != NULL && c->identity.set &&
	    memcmp(c->identity.pub, pub, sizeof(pub)) == 0 &&
	    crypto_scalarmult_base(pk, c->identity.priv) == 0 &&
	    memcmp(pk, pub, sizeof(pub)) == 0,
	    "identity_file is read: its private key and its public key");
	ok(c != NULL && c->npeers == 4 &&
	    strcmp(c->peers[0].name, "node-b") == 0 &&
	    strcmp(c->peers[1].name, "web.1") == 0 &&
	    strcmp(c->peers[2].name, "node-c") == 0 &&
	    strcmp(c->peers[3].name, "node-d") == 0,
	    "peers, then peers_file's, in order");
	ok(c != NULL && c->npeers == 4 && !c->peers[0].origin &&
	    c->peers[1].origin && c->peers[2].origin && !c->peers[3].origin,
	    "origin from both (default false)");
	snprintf(pf, sizeof(pf), "%s:3", files[nfiles - 1]);
	ok(c != NULL && c->npeers == 4 && c->peers[0].line == 3 &&
	    strcmp(c->peers[0].where, pf) == 0,
	    "an inline peer's where: the configuration's file and line");
	snprintf(pf, sizeof(pf), "%s:5", pfile);
	ok(c != NULL && c->npeers == 4 && c->peers[3].line == 5 &&
	    strcmp(c->peers[3].where, pf) == 0,
	    "a peers_file peer's where: its own file and line");
	ok(c != NULL && c->tunnels[0].encrypt && c->tunnels[1].encrypt &&
	    !c->tunnels[2].encrypt,
	    "encrypt defaults on with an identity; encrypt = false");
	ok(c != NULL && c->tunnels[0].peer_mask_n == 2 &&
	    strcmp(c->tunnels[0].peer_names[1], "node-c") == 0 &&
	    c->tunnels[1].peer_mask_n == 0 &&
	    c->tunnels[2].peer_mask_n == 1, "a tunnel's peers, list or "
	    "string");
	if (c != NULL && c->npeers == 4) {
		struct conf_tunnel t = c->tunnels[0];

		ident_from_b64(kc, pk);
		p = conf_peer_by_pub(c, pk);
		ok(p == &c->peers[2], "conf_peer_by_pub finds node-c");
		ok(conf_peer_by_pub(c, pub) == NULL,
		    "conf_peer_by_pub: a key of no peer is NULL");
		ok(conf_tunnel_trusts(c, &c->tunnels[0], &c->peers[0]) &&
		    conf_tunnel_trusts(c, &c->tunnels[0], &c->peers[2]),
		    "a tunnel trusts the peers it names");
		ok(!conf_tunnel_trusts(c, &c->tunnels[0], &c->peers[1]) &&
		    !conf_tunnel_trusts(c, &c->tunnels[0], &c->peers[3]),
		    "and no other");
		ok(conf_tunnel_trusts(c, &c->tunnels[1], &c->peers[1]) &&
		    conf_tunnel_trusts(c, &c->tunnels[1], &c->peers[3]),
		    "a tunnel without peers trusts every peer of the list");
		ok(!conf_tunnel_trusts(c, &c->tunnels[1], NULL),
		    "but no unknown one");
		ok(conf_tunnel_same(&c->tunnels[0], &t), "a copy is the same");
		t.peer_mask_n = 1;
		ok(!conf_tunnel_same(&c->tunnels[0], &t),
		    "a tunnel with other peers is a changed tunnel");
		t = c->tunnels[0];
		t.encrypt = 0;
		ok(!conf_tunnel_same(&c->tunnels[0], &t),
		    "a tunnel that seals no more is a changed tunnel");
	}
	conf_free(c);

	/* rstreamctl: no identity or peers_file read, names unchecked. */
	chmod(id, 0644);
	snprintf(text, sizeof(text), "listen = \"10.0.0.9\";\n"
	    "identity_file = \"%s\";\npeers_file = \"%s/none\";\n"
	    "tunnels = ( { name = \"t\"; target = \"tcp://127.0.0.1:1\"; "
	    "peers = [ \"node-x\" ]; } );\n", id, dir);
	c = NULL;
	ok(conf_load(put(text), CONF_NO_KEYS, &c, err, sizeof(err)) == 0 &&
	    !c->identity.set && c->npeers == 0 && c->tunnels[0].encrypt,
	    "CONF_NO_KEYS leaves identity_file and peers_file unread");
	if (c == NULL)
		printf("# %s\n", err);
	conf_free(c);
	chmod(id, 0600);

	/* An identity proves peers: resume and PROXY need no key_file. */
	snprintf(text, sizeof(text), "listen = \"10.0.0.9\";\n"
	    "identity_file = \"%s\";\n"
	    "tunnels = ( { name = \"t\"; target = \"tcp://127.0.0.1:1\"; "
	    "resume_time = 5; proxy_protocol = \"v2\"; } );\n", id);
	c = load(text);
	ok(c != NULL, "resume_time and proxy_protocol with an identity and "
	    "no key_file");
	ok(c != NULL && c->tunnels[0].sz.min_version == 6,
	    "with an identity, min_version is 6 unless set");
	ok(c != NULL && conf_keyed(c), "conf_keyed: an identity");
	conf_free(c);
	snprintf(text, sizeof(text), "listen = \"10.0.0.9\";\n"
	    "identity_file = \"%s\";\ndefaults = { min_version = 7; };\n"
	    "tunnels = ( { name = \"t\"; target = \"tcp://127.0.0.1:1\"; },"
	    "\n  { name = \"u\"; target = \"tcp://127.0.0.1:2\"; "
	    "min_version = 6; } );\n", id);
	c = load(text);
	ok(c != NULL && c->tunnels[0].sz.min_version == 7 &&
	    c->tunnels[1].sz.min_version == 6,
	    "with an identity, a min_version of 6 or more is kept");
	conf_free(c);
	unlink(pfile);
}

/* Errors in the global peers list: its entries (@ is a good key). */
static const struct peer_case {
	const char *entries;
	int line;
	const char *words;
	const char *desc;
} peer_cases[] = {
	{ "{ name = \"node-b\";\n"
	    "key = \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA!=\"; }", 5,
	    "peer node-b: key '", "bad base64 in a key, at its line" },
	{ "{ name = \"node-b\";\n"
	    "key = \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\"; }", 5,
	    "is not a public key (44 base64 characters", "a key of 31 bytes" },
	{ "{ name = \"node-b\"; key = \"@\"; },\n"
	    "{ name = \"node-c\"; key = \"@\"; }", 5,
	    "peer node-c has the key of peer node-b", "a key twice" },
	{ "{ name = \"node b\"; key = \"@\"; }", 4,
	    "peer name 'node b' is not valid", "a peer name with a blank" },
	{ "{ name = \"node-b\"; }", 4, "a peer needs a name and a key",
	    "a peer without a key" },
	{ "{ name = \"node-b\"; key = \"@\";\n pubkey = \"x\"; }", 5,
	    "unknown setting 'pubkey' in a peer",
	    "an unknown setting in a peer" },
	{ "{ name = \"node-b\"; key = \"@\"; },\n"
	    "{ name = \"node-b\"; key = \"@\"; }", 5,
	    "peer node-b is defined twice (first at ", "a name twice" },
	{ "\"node-b\"", 4, "each peer must be a group",
	    "a peer that is a string is refused" },
};

/* ${text} with each @ replaced by ${key}, in a static buffer. */
static const char *
with_key(const char *text, const char *key)
{
	static char out[1024];
	size_t n = 0, klen = strlen(key);

	for (; *text != '\0' && n + klen < sizeof(out); text++) {
		if (*text == '@') {
			memcpy(out + n, key, klen);
			n += klen;
		} else {
			out[n++] = *text;
		}
	}
	out[n] = '\0';
	return (out);
}

static void
test_identity_errors(void)
{
	uint8_t pub[IDENT_KEY_LEN];
	char text[4096], gl[2048], pf[1024], why[1300], sub[FILEMAX];
	const char *id = identity("id", pub), *pfile;
	size_t i;

	peer_keys();
#define IDCONF(g, t) (snprintf(text, sizeof(text), "listen = \"10.0.0.9\";\n" \
	"%s\ntunnels = ( { name = \"a\"; target = \"tcp://127.0.0.1:1\";\n" \
	"  %s } );\n", (g), (t)), text)
	snprintf(gl, sizeof(gl), "identity_file = \"%s\";", id);
	ok(fails(IDCONF("", "encrypt = true;"), 4, "tunnel a: encrypt = true "
	    "needs an identity_file"), "encrypt = true without an identity");
	ok(fails(IDCONF("", "peers = [ \"b\" ];"), 4, "tunnel a: peers "
	    "names identities, which need an identity_file"),
	    "a tunnel's peers without an identity");
	ok(fails(IDCONF(gl, "peers = [ \"node-b\", \"node-x\" ];"), 4,
	    "tunnel a: peers: no peer called node-b"),
	    "a tunnel naming an unknown peer (none defined)");
	snprintf(gl, sizeof(gl), "identity_file = \"%s\";\n"
	    "peers = ( { name = \"node-b\"; key = \"%s\"; } );", id, kb);
	ok(fails(IDCONF(gl, "peers = [ \"node-b\",\n\"node-x\" ];"), 6,
	    "tunnel a: peers: no peer called node-x in the global peers or "
	    "peers_file"), "a tunnel naming an unknown peer, at its line");
	ok(fails(IDCONF(gl, "peers = [ \"node-b\", \"node-b\" ];"), 5,
	    "peers names node-b twice"), "a name twice in a tunnel");
	ok(fails(IDCONF(gl, "peers = [ ];"), 5, "peers lists 1 to 32 names"),
	    "an empty peers list");

	/* The global list. */
	snprintf(gl, sizeof(gl), "peers = ( { name = \"node-b\"; key = \"%s\"; "
	    "} );", kb);
	ok(fails(IDCONF(gl, ""), 2, "peers without an identity_file"),
	    "peers without an identity_file");
	for (i = 0; i < sizeof(peer_cases) / sizeof(peer_cases[0]); i++) {
		const struct peer_case *pc = &peer_cases[i];

		snprintf(gl, sizeof(gl), "identity_file = \"%s\";\npeers = (\n"
		    "  %s );", id, with_key(pc->entries, kb));
		ok(fails(IDCONF(gl, ""), pc->line, pc->words), "%s", pc->desc);
	}

	/* peers_file: its own file and line. */
	snprintf(pf, sizeof(pf), "# fleet\n%s node-c\n\n%s\n", kc, kd);
	pfile = side_file("peers", pf, 0600);
	snprintf(gl, sizeof(gl), "identity_file = \"%s\";\n"
	    "peers_file = \"%s\";", id, pfile);
	ok(fails_in(IDCONF(gl, ""), pfile, 4, "a peer is a line KEY NAME "
	    "[origin]"), "a peers_file line without a name, at its line");
	snprintf(pf, sizeof(pf), "%s node-c origin yes\n", kc);
	side_file("peers", pf, 0600);
	ok(fails_in(IDCONF(gl, ""), pfile, 1, "a peer is a line"),
	    "four fields");
	snprintf(pf, sizeof(pf), "\n%s node-c trusted\n", kc);
	side_file("peers", pf, 0600);
	ok(fails_in(IDCONF(gl, ""), pfile, 2, "a peer is a line"),
	    "a third field other than origin");
	snprintf(pf, sizeof(pf), "%s node-c\n%.40s node-d\n", kc, kd);
	side_file("peers", pf, 0600);
	ok(fails_in(IDCONF(gl, ""), pfile, 2, "peer node-d: key"),
	    "a short key in the peers_file");
	snprintf(pf, sizeof(pf), "%s node-c\n%s node-c\n", kc, kd);
	side_file("peers", pf, 0600);
	snprintf(why, sizeof(why), "defined twice (first at %s:1)", pfile);
	ok(fails_in(IDCONF(gl, ""), pfile, 2, why),
	    "a name twice in the peers_file");
	snprintf(gl, sizeof(gl), "identity_file = \"%s\";\n"
	    "peers = ( { name = \"node-c\"; key = \"%s\"; } );\n"
	    "peers_file = \"%s\";", id, kb, pfile);
	snprintf(pf, sizeof(pf), "%s node-c\n", kc);
	side_file("peers", pf, 0600);
	ok(fails_in(IDCONF(gl, ""), pfile, 1, "peer node-c is defined twice "
	    "(first at "), "a peers_file name that peers has");
	chmod(pfile, 0666);
	snprintf(gl, sizeof(gl), "identity_file = \"%s\";\n"
	    "peers_file = \"%s\";", id, pfile);
	ok(fails(IDCONF(gl, ""), 3, "is writable by group or others (mode "
	    "0666)"), "a peers_file others may write is refused");
	/* Like a key, it is trusted only from root or the daemon's user. */
	chmod(pfile, 0644);
	if (geteuid() != 0) {
		printf("ok %d - # SKIP a peers_file of another user (needs "
		    "root to chown)\n", ++tap_n);
	} else if (chown(pfile, 65534, 65534) != 0) {
		perror(pfile);
		exit(1);
	} else {
		ok(fails(IDCONF(gl, ""), 3, "belongs to uid 65534; it must "
		    "belong to root"), "a peers_file of another user is "
		    "refused");
		(void)chown(pfile, 0, 0);
	}
	snprintf(why, sizeof(why), "identity_file = \"%s\";\n"
	    "peers_file = \"%s\";", id, dir);
	ok(fails(IDCONF(why, ""), 3, "is not a regular file"),
	    "a directory as peers_file is refused");
	snprintf(why, sizeof(why), "identity_file = \"%s\";\n"
	    "peers = { name = \"node-b\"; };", id);
	ok(fails(IDCONF(why, ""), 3, "peers must be a list"),
	    "peers as a group is refused");
	unlink(pfile);
	ok(fails(IDCONF(gl, ""), 3, "peers_file ") &&
	    strstr(err, ": cannot read: No such file") != NULL,
	    "a missing peers_file, at the configuration's line");

	/* The directories above them, as ssh's StrictModes holds them. */
	snprintf(sub, sizeof(sub), "%s/open", dir);
	if (mkdir(sub, 0700) != 0 || chmod(sub, 0777) != 0) {
		perror(sub);
		exit(1);
	}
	snprintf(pf, sizeof(pf), "%s node-c\n", kc);
	pfile = side_file("open/peers", pf, 0644);
	snprintf(gl, sizeof(gl), "identity_file = \"%s\";\n"
	    "peers_file = \"%s\";", id, pfile);
	snprintf(why, sizeof(why), "peers_file %s: directory %s is writable "
	    "by group or others (mode 0777), who could put another file in "
	    "its place: chmod go-w %s", pfile, sub, sub);
	ok(fails(IDCONF(gl, ""), 3, why), "a peers_file in a directory others "
	    "may write is refused, at its line");
	unlink(pfile);
	rmdir(sub);
	chmod(dir, 0770);
	snprintf(gl, sizeof(gl), "identity_file = \"%s\";", id);
	snprintf(why, sizeof(why), "identity_file %s: directory %s is "
	    "writable by group or others (mode 0770)", id, dir);
	ok(fails(IDCONF(gl, ""), 2, why), "so is an identity_file, at its "
	    "line");
	chmod(dir, 0700);

	/* No step-down below the handshake's version. */
	snprintf(gl, sizeof(gl), "identity_file = \"%s\";", id);
	ok(fails(IDCONF(gl, "min_version = 5;"), 4, "tunnel a: min_version 5 "
	    "with an identity_file: links below version 6 cannot "
	    "authenticate"), "min_version below 6 with an identity, at its "
	    "line");
	snprintf(gl, sizeof(gl), "defaults = { min_version = 3; };\n"
	    "identity_file = \"%s\";", id);
	ok(fails(IDCONF(gl, ""), 4, "tunnel a: min_version 3 (from defaults) "
	    "with an identity_file"), "the defaults' min_version below 6 "
	    "with an identity, at the tunnel's line");
	snprintf(gl, sizeof(gl), "max_version = 5;\nidentity_file = \"%s\";",
	    id);
	ok(fails(IDCONF(gl, ""), 2, "max_version 5 with an identity_file: "
	    "identities need version 6 or more"),
	    "max_version below 6 with an identity, at its line");

	/* identity_file itself. */
	chmod(id, 0644);
	snprintf(gl, sizeof(gl), "identity_file = \"%s\";", id);
	ok(fails(IDCONF(gl, ""), 2, "identity_file ") &&
	    strstr(err, "is accessible by group or others (mode 0644)") !=
	    NULL, "an identity_file others may read is refused");
	side_file("id", "not a key\n", 0600);
	ok(fails(IDCONF(gl, ""), 2, "does not hold a private key"),
	    "an identity_file that is no key is refused");
	ok(fails(IDCONF("identity_file = \"id\";", ""), 2,
	    "is not an absolute path"), "a relative identity_file");
#undef IDCONF
	unlink(id);
}

/* proxy_trust_key_holders: only where it can change something. */
static void
test_key_holders(void)
{
	uint8_t pub[IDENT_KEY_LEN];
	char text[4096], gl[2048];
	const char *id = identity("id", pub);
	const char *key = keyfile("holders.key", 32, 0600);
	struct conf *c;

	peer_keys();
#define KHCONF(g, t) (snprintf(text, sizeof(text), "listen = \"10.0.0.9\";\n" \
	"%s\ntunnels = ( { name = \"a\"; target = \"tcp://127.0.0.1:1\";\n" \
	"  %s\n  proxy_trust_key_holders = true; } );\n", (g), (t)), text)
	snprintf(gl, sizeof(gl), "identity_file = \"%s\";\n"
	    "peers = ( { name = \"node-b\"; key = \"%s\"; } );\n"
	    "key_file = \"%s\";", id, kb, key);
	c = load(KHCONF(gl, "proxy_protocol = \"v2\";"));
	ok(c != NULL && c->tunnels[0].proxy_trust_key_holders,
	    "proxy_trust_key_holders with an identity and a key");
	conf_free(c);
	ok(fails(KHCONF(gl, ""), 7, "tunnel a: proxy_trust_key_holders goes "
	    "with proxy_protocol"), "proxy_trust_key_holders without "
	    "proxy_protocol, at its line");
	ok(fails(KHCONF(gl, "proxy_protocol = \"v2\"; peers = [ \"node-b\" ];"),
	    7, "tunnel a: proxy_trust_key_holders with peers"),
	    "proxy_trust_key_holders with the tunnel's peers");
	snprintf(gl, sizeof(gl), "key_file = \"%s\";", key);
	ok(fails(KHCONF(gl, "proxy_protocol = \"v2\";"), 5, "tunnel a: "
	    "proxy_trust_key_holders does nothing without an identity_file"),
	    "proxy_trust_key_holders without an identity");
	snprintf(gl, sizeof(gl), "identity_file = \"%s\";\n"
	    "peers = ( { name = \"node-b\"; key = \"%s\"; } );", id, kb);
	ok(fails(KHCONF(gl, "proxy_protocol = \"v2\";"), 6, "tunnel a: "
	    "proxy_trust_key_holders without a key_file"),
	    "proxy_trust_key_holders without a key");
#undef KHCONF
	unlink(key);
	unlink(id);
}

/*
 * libconfig's bare "syntax error", explained from the text: each case as
 * a person writes it, the line libconfig names, and the hint after it.
 */
static const struct {
	const char *text;
	int line;
	const char *words;
} syntax_cases[] = {
	/* The shipped examples once ended in "},". */
	{ "listen = \"192.0.2.1\";\n"
	  "tunnels = (\n"
	  "  { name = \"a\"; target = \"tcp://127.0.0.1:1\"; },\n"
	  ");\n", 4,
	  "syntax error: a comma before ')' (line 3): libconfig "
	  "1.5 allows none after the last element" },
	{ "allow = [ \"192.0.2.1\",\n  \"192.0.2.2\", ];\ntunnels = ( );\n", 2,
	  "syntax error: a comma before ']' (line 2): libconfig" },
	{ "log_level = info;\ntunnels = ( );\n", 1,
	  "syntax error: 'info' is not quoted: strings take double quotes, "
	  "as in \"info\"" },
	{ "tunnels = ( { name = \"a\"; accept = tcp://127.0.0.1:0;\n"
	  "  peer = \"p\"; } );\n", 1,
	  "'tcp://127.0.0.1:0' is not quoted" },
	{ "log_file = /var/log/rstreamd.log;\ntunnels = ( );\n", 1,
	  "'/var/log/rstreamd.log' is not quoted" },
	{ "source = 10.0.0.1;\ntunnels = ( );\n", 1,
	  "'10.0.0.1' is not quoted" },
	{ "log_level = 'info';\ntunnels = ( );\n", 1,
	  "syntax error: strings take double quotes (\"...\"), not single "
	  "ones" },
	{ "log_level = \xe2\x80\x9cinfo\xe2\x80\x9d;\ntunnels = ( );\n", 1,
	  "syntax error: '\xe2\x80\x9c' is a typographic quote: strings take "
	  "plain double quotes" },
	{ "\xef\xbb\xbflog_level = \"info\";\ntunnels = ( );\n", 1,
	  "syntax error: the file starts with a UTF-8 byte order mark (BOM), "
	  "which libconfig cannot read" },
	{ "log_level = \"info;\ntunnels = ( );\n", 3,
	  "syntax error: the string opened at line 1 is not closed on its "
	  "line: a '\"' is missing" },
	{ "log_file = \"/var/log/x.log;\nlog_level = \"info\";\n"
	  "tunnels = ( );\n", 4,
	  "the string opened at line 1 is not closed on its line" },
	{ "tunnels = (\n  { name = \"a\"; target = \"tcp://127.0.0.1:1\"; }\n"
	  "  { name = \"b\"; target = \"tcp://127.0.0.1:2\"; }\n);\n", 3,
	  "syntax error: a ',' is missing before this element of the list "
	  "opened at line 1" },
	{ "tunnels = (\n  { name = \"a\"; target = \"tcp://127.0.0.1:1\"; };\n"
	  ");\n", 2,
	  "syntax error: ';' inside the list opened at line 1: its elements "
	  "are separated by ','" },
	{ "tunnels = (\n  { name = \"a\"; target = \"tcp://127.0.0.1:1\";\n"
	  ");\n", 3,
	  "syntax error: ')' does not close the '{' opened at line 2" },
	{ "tunnels = ( );\n);\n", 2, "syntax error: ')' closes nothing" },
	{ "tunnels = (\n  { name = \"a\"; target = \"tcp://127.0.0.1:1\"; }\n",
	  3, "syntax error: the '(' opened at line 1 is not closed" },
	{ "tunnels = [ { name = \"a\"; } ];\n", 1,
	  "syntax error: an array [ ] (line 1) holds only strings, numbers "
	  "and booleans: groups and lists go in a list ( )" },
	{ "log_level == \"info\";\n", 1,
	  "syntax error: '==': a setting takes one '=' (or ':')" },
	{ "tunnels = ( { name = \"a\"; target = \"tcp://127.0.0.1:1\";\n"
	  "  proxy_protocol = \"v1\"; proxy_trust_any_peer = yes; } );\n", 2,
	  "syntax error: 'yes' is not a value: booleans are true or false" },
	{ "drain_time = 1,000;\ntunnels = ( );\n", 1,
	  "syntax error: numbers are written without separators: 1,000 "
	  "reads as 1 and then 000" },
	{ "ring_pool = 16M;\ntunnels = ( );\n", 1,
	  "syntax error: '16M': a number takes no unit" },
	{ "\"log_level\" = \"info\";\ntunnels = ( );\n", 1,
	  "syntax error: setting names are not quoted" },
	{ "log_level \"info\";\ntunnels = ( );\n", 1,
	  "syntax error: 'log_level' is not followed by '=' (write NAME = "
	  "VALUE;)" },
	{ "log_level = ;\ntunnels = ( );\n", 1,
	  "syntax error: 'log_level =' has no value" },
	{ "tunnels = ( { name = \"a\";\n/* target = \"tcp://x:1\";\n } );\n",
	  4, "syntax error: the comment opened with /* at line 2 is not "
	  "closed" },
	{ "drain_time = 5 6;\ntunnels = ( );\n", 1,
	  "syntax error: '6' after the value of 'drain_time', where ';' and "
	  "the next setting should be" },
	/* Uncommenting a second example where one is set already. */
	{ "log_level = \"info\";\n\nlog_level = \"debug\";\ntunnels = ( );\n",
	  3, "duplicate setting name: 'log_level' is set at line 1 too, in "
	  "the same group" },
	{ "tunnels = ( { name = \"a\"; accept = \"tcp://127.0.0.1:1\";\n"
	  "  peer = \"p\";\n  peer = \"q\"; } );\n", 3,
	  "duplicate setting name: 'peer' is set at line 2 too" },
};

static void
test_syntax(void)
{
	const char *inc;
	char text[1024];
	struct conf *c;
	size_t i;

	for (i = 0; i < sizeof(syntax_cases) / sizeof(syntax_cases[0]); i++) {
		/* libconfig 1.7 takes a comma after the last element. */
		if (LIBCONFIG_VER_MAJOR * 100 + LIBCONFIG_VER_MINOR >= 107 &&
		    strstr(syntax_cases[i].words, "a comma before") != NULL) {
			c = load(syntax_cases[i].text);
			ok(c != NULL, "this libconfig takes a comma after the "
			    "last element");
			conf_free(c);
			continue;
		}
		ok(fails(syntax_cases[i].text, syntax_cases[i].line,
		    syntax_cases[i].words), "hint: %s", syntax_cases[i].words);
	}

	/* What is fine in libconfig is not called a mistake. */
	c = load("log_level : \"info\"  # no ';' needed\n"
	    "drain_time = 5 // a comment\n"
	    "control = \"/run/x\" \"/c.sock\"\n"
	    "tunnels = ( )\n");
	ok(c != NULL && c->drain_time == 5 && c->log_level == LOG_INFO &&
	    strcmp(c->control, "/run/x/c.sock") == 0,
	    "':' for '=', no ';', # and // comments, strings joined");
	conf_free(c);

	/* In an @include, the hint is about the included file. */
	inc = side_file("inc.conf", "drain_time = 10;\nlog_level = debug;\n",
	    0644);
	snprintf(text, sizeof(text), "@include \"%s\"\ntunnels = ( );\n", inc);
	ok(fails_in(text, inc, 2, "syntax error: 'debug' is not quoted"),
	    "a hint in an included file names that file and line");
	unlink(inc);

	/* An @include that cannot be read: conffile says so before libconfig. */
	ok(fails("tunnels = ( );\nlog_level = \"info\"\n@include \"/nonexistent\"\n",
	    3, "@include \"/nonexistent\": No such file or directory"),
	    "an @include that cannot be read, at its line");
}

/* Users and groups exist: looked up, with the line at fault. */
static void
test_ids(void)
{
	struct conf *c = NULL;
	const char *path;

#define UNIX_TUN(x) "tunnels = ( { name = \"pg\"; accept = \"unix:/run/x.sock\";\n" \
	"  peer = \"p\";\n" x " } );\n"
	ok(fails(UNIX_TUN("  unix_owner = \"no-such-user-rstreamd\";"), 3,
	    "tunnel pg: unix_owner: unknown user 'no-such-user-rstreamd'"),
	    "an unknown unix_owner, at its line");
	ok(fails(UNIX_TUN("  unix_mode = \"0600\";\n"
	    "  unix_group = \"no-such-group-rstreamd\";"), 4,
	    "tunnel pg: unix_group: unknown group 'no-such-group-rstreamd'"),
	    "an unknown unix_group, at its line");
	ok(fails("tunnels = ( );\ncontrol_group = \"no-such-group-rstreamd\";\n",
	    2, "control_group: unknown group 'no-such-group-rstreamd'"),
	    "an unknown control_group, at its line");
	ok(fails(UNIX_TUN("  unix_owner = \"99999999999\";"), 3,
	    "unix_owner: user id 99999999999 is out of range"),
	    "a numeric id beyond 32 bits");
	c = load("control_group = \"root\";\n" UNIX_TUN(
	    "  unix_owner = \"root\"; unix_group = \"7\";"));
	ok(c != NULL && c->control_gid == 0 && c->tunnels[0].unix_uid == 0 &&
	    c->tunnels[0].unix_gid == 7, "names looked up, numbers as they are");
	conf_free(c);
	c = NULL;
	/* rstreamctl reads the file for the control socket only. */
	path = put("control_group = \"no-such-group-rstreamd\";\n" UNIX_TUN(
	    "  unix_owner = \"no-such-user-rstreamd\";"));
	ok(conf_load(path, CONF_NO_KEYS, &c, err, sizeof(err)) == 0 &&
	    c->control_gid == -1 && c->tunnels[0].unix_uid == -1,
	    "under CONF_NO_KEYS nothing is looked up");
	conf_free(c);
#undef UNIX_TUN
}

static char warned[4096];
static int nwarned;

static void
warn_to(void *arg, const char *msg)
{
	size_t len = strlen(warned);

	(void)arg;
	nwarned++;
	snprintf(warned + len, sizeof(warned) - len, "%s\n", msg);
}

/* Run conf_warn on ${c}: what it returned. */
static int
warn_of(const struct conf *c, int keyless)
{

	warned[0] = '\0';
	nwarned = 0;
	return (conf_warn(c, keyless, warn_to, NULL));
}

/* Valid, but likely not what was meant. */
static void
test_warn(void)
{
	uint8_t pub[IDENT_KEY_LEN];
	char text[2048], want[PATH_MAX + 200];
	const char *id;
	struct conf *c;
	int r;

	c = load("listen = \"10.0.0.9\";\nallow = [ \"10.0.0.1/8\",\n"
	    "  \"10.1.0.0/16\", \"192.0.2.7\", \"0.0.0.0/0\",\n"
	    "  \"2001:db8::1/32\", \"2001:db8::/127\" ];\n"
	    "tunnels = ( { name = \"t\"; target = \"tcp://127.0.0.1:1\"; },\n"
	    "  { name = \"u\"; target = \"tcp://127.0.0.1:2\"; } );\n");
	r = c != NULL ? warn_of(c, 1) : -1;
	ok(r == 1 && nwarned == 3, "host bits twice, keyless once: %d "
	    "warnings", nwarned);
	snprintf(want, sizeof(want), "%s:2: allow '10.0.0.1/8' has host bits "
	    "set: it allows 10.0.0.0/8; write that, or the address alone for "
	    "one host\n%s:4: allow '2001:db8::1/32' has host bits set: it "
	    "allows 2001:db8::/32;", files[nfiles - 1], files[nfiles - 1]);
	ok(strstr(warned, want) != NULL, "allow's host bits, at their lines");
	snprintf(want, sizeof(want), "%s:5: links are not authenticated for 2 "
	    "tunnels without a key_file (t, u): any host", files[nfiles - 1]);
	ok(strstr(warned, want) != NULL, "keyless tunnels, at the first one");
	ok(c != NULL && warn_of(c, 0) == 0 && nwarned == 2,
	    "keyless ones not said when not asked for");
	conf_free(c);

	id = identity("wid", pub);
	snprintf(text, sizeof(text), "listen = \"10.0.0.9\";\n\n"
	    "identity_file = \"%s\";\n"
	    "tunnels = ( { name = \"t\"; target = \"tcp://127.0.0.1:1\"; } );\n",
	    id);
	c = load(text);
	snprintf(want, sizeof(want), "%s:3: identity_file without a peer "
	    "(peers, peers_file): with an identity only listed nodes carry "
	    "streams, so none would", files[nfiles - 1]);
	ok(c != NULL && warn_of(c, 1) == 0 && nwarned == 1 &&
	    strstr(warned, want) != NULL,
	    "an identity without peers (and it authenticates every link)");
	conf_free(c);
	peer_keys();
	snprintf(text, sizeof(text), "listen = \"10.0.0.9\";\n"
	    "identity_file = \"%s\";\n"
	    "peers = ( { name = \"b\"; key = \"%s\"; } );\n"
	    "allow = \"10.0.0.0/8\";\n"
	    "tunnels = ( { name = \"t\"; target = \"tcp://127.0.0.1:1\"; } );\n",
	    id, kb);
	c = load(text);
	ok(c != NULL && warn_of(c, 1) == 0 && nwarned == 0,
	    "nothing to say: %s", warned);
	conf_free(c);
	unlink(id);
}

/* Run conf_qos_warn on ${t}: how many lines it said. */
static int
qos_of(const struct conf_tunnel *t, int tos_ignored, int sl_ignored)
{

	warned[0] = '\0';
	nwarned = 0;
	return (conf_qos_warn(t, tos_ignored, sl_ignored, "dev0", warn_to,
	    NULL));
}

/* What an iWARP device ignores, said at the line that sets it. */
static void
test_qos_warn(void)
{
	char want[PATH_MAX + 300];
	const char *f;
	struct conf *c;
	int n;

	c = load("source = \"10.0.0.1\";\n"
	    "defaults = {\n  service_level = 3;\n};\n"
	    "tunnels = (\n"
	    "  { name = \"a\"; accept = \"tcp://127.0.0.1:1\";\n"
	    "    peer = \"10.0.0.2\";\n    traffic_class = 32; },\n"
	    "  { name = \"b\"; accept = \"tcp://127.0.0.1:2\";\n"
	    "    peer = \"10.0.0.2\"; service_level = 5; },\n"
	    "  { name = \"c\"; accept = \"tcp://127.0.0.1:3\";\n"
	    "    peer = \"10.0.0.2\"; service_level = 3; traffic_class = 8; }"
	    " );\n");
	if (c == NULL || c->ntunnels != 3) {
		ok(0, "the configuration loads");
		conf_free(c);
		return;
	}
	f = files[nfiles - 1];
	n = qos_of(&c->tunnels[0], 1, 1);
	snprintf(want, sizeof(want), "%s:3: tunnel a: service_level 3 does "
	    "nothing on iWARP, which has no service levels, and dev0 is "
	    "iWARP\n%s:8: tunnel a: traffic_class 32 does nothing on "
	    "Soft-iWARP (siw), which gives its TCP connections no IP TOS, and "
	    "dev0 is Soft-iWARP\n", f, f);
	ok(n == 2 && strcmp(warned, want) == 0, "Soft-iWARP: the SL where "
	    "defaults set it, the TOS where the tunnel does");
	ok(qos_of(&c->tunnels[0], 0, 1) == 1 &&
	    strstr(warned, "traffic_class") == NULL,
	    "other iWARP devices take the TOS: the SL alone");
	ok(qos_of(&c->tunnels[0], 0, 0) == 0 && nwarned == 0,
	    "InfiniBand and RoCE: nothing to say");
	snprintf(want, sizeof(want), "%s:10: tunnel b: service_level 5 ", f);
	ok(qos_of(&c->tunnels[1], 1, 1) == 1 && strstr(warned, want) ==
	    warned, "a tunnel's own SL, at its own line; no TOS set, none "
	    "said");
	snprintf(want, sizeof(want), "%s:12: tunnel c: service_level 3 ", f);
	ok(qos_of(&c->tunnels[2], 1, 1) == 2 && strstr(warned, want) ==
	    warned, "a tunnel that sets what defaults do: its own line");
	conf_free(c);

	c = load("listen = \"10.0.0.9\";\n"
	    "defaults = { service_level = 3; };\n"
	    "tunnels = ( { name = \"t\"; target = \"tcp://127.0.0.1:1\"; }"
	    " );\n");
	ok(c != NULL && qos_of(&c->tunnels[0], 1, 1) == 0 && nwarned == 0,
	    "a target tunnel sets neither (the peer's link does)");
	conf_free(c);
}

int
main(void)
{
	const char *tmp = getenv("TMPDIR");
	int i;

	if (secmem_init() != 0)
		abort();
	if (tmp == NULL || *tmp == '\0' ||
	    strlen(tmp) > sizeof(dir) - sizeof("/test_conf.XXXXXX"))
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/test_conf.XXXXXX", tmp);
	if (mkdtemp(dir) == NULL) {
		perror(dir);
		return (1);
	}

	test_full();
	test_minimal();
	test_errors();
	test_addr();
	test_versions();
	test_classes();
	test_example();
	test_service();
	test_metrics_listen();
	test_keys();
	test_identity();
	test_identity_errors();
	test_key_holders();
	test_syntax();
	test_ids();
	test_warn();
	test_qos_warn();

	for (i = 0; i < nfiles; i++)
		unlink(files[i]);
	rmdir(dir);
	return (tap_done());
}
