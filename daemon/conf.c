/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <libconfig.h>

#include "cfg.h"
#include "cfghint.h"
#include "conf.h"
#include "conf_int.h"
#include "conffile.h"
#include "secmem.h"

/* What every tunnel gets unless defaults or the tunnel say otherwise. */
static const struct conf_sizes builtin_sizes = {
	.sendbuf = 262144,
	.recvbuf = 262144,
	.ring_min = 16384,
	.max_memory = CONF_MEMORY_SHARE,
	.sq_size = 256,
	.rq_size = 256,
	.inline_size = 64,
	.max_streams = 1024,
	.connect_timeout = 10,
	.idle_timeout = 0,
	.traffic_class = CONF_UNSET,
	.service_level = CONF_UNSET,
	.priority = 4
};

/* Explain why config_read_file() failed. */
static void
read_error(const struct cfg *p, const config_t *cf, int saved_errno)
{
	struct stat st;
	const char *file, *text;
	char hint[512];
	int line;

	if (config_error_type(cf) == CONFIG_ERR_FILE_IO) {
		/* libconfig refuses directories without setting errno. */
		if (saved_errno == 0)
			saved_errno = (stat(p->path, &st) == 0 &&
			    S_ISDIR(st.st_mode)) ? EISDIR : EIO;
		snprintf(p->err, p->errlen, "%s: cannot read: %s", p->path,
		    strerror(saved_errno));
		return;
	}
	file = config_error_file(cf) != NULL ? config_error_file(cf) :
	    p->path;
	/* libconfig says what, by its text only; the file says why. */
	text = config_error_text(cf);
	line = config_error_line(cf);
	if ((strcmp(text, "syntax error") == 0 &&
	    cfghint_syntax(file, line, hint, sizeof(hint)) == 0) ||
	    (strcmp(text, "duplicate setting name") == 0 &&
	    cfghint_duplicate(file, line, hint, sizeof(hint)) == 0))
		snprintf(p->err, p->errlen, "%s:%d: %s: %s", file, line, text,
		    hint);
	else
		snprintf(p->err, p->errlen, "%s:%d: %s", file, line, text);
}

/* A configuration of ${path} with every built-in default, or NULL. */
static struct conf *
conf_new(const char *path, char *err, size_t errlen)
{
	struct conf *c;
	size_t len;

	/* It holds the keys: out of core dumps, wiped when freed. */
	if ((c = secmem_alloc(sizeof(*c))) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (NULL);
	}
	if ((len = strlen(path)) >= sizeof(c->file)) {
		snprintf(err, errlen, "%.64s...: file name too long", path);
		conf_free(c);
		return (NULL);
	}
	memcpy(c->file, path, len + 1);
	c->log_level = LOG_INFO;
	c->defaults = builtin_sizes;
	strcpy(c->control, CONF_DEFAULT_CONTROL);
	c->control_mode = 0660;
	c->control_gid = -1;
	c->drain_time = CONF_DEFAULT_DRAIN_TIME;
	c->max_links = CONF_DEFAULT_MAX_LINKS;
	c->max_pending = CONF_DEFAULT_MAX_PENDING;
	c->max_pending_per_addr = CONF_DEFAULT_MAX_PENDING_PER_ADDR;
	c->max_connect_rate = CONF_DEFAULT_MAX_CONNECT_RATE;
	c->max_unauth_links = CONF_DEFAULT_MAX_UNAUTH_LINKS;
	c->link_idle_timeout = CONF_DEFAULT_LINK_IDLE_TIMEOUT;
	c->handshake_timeout = CONF_DEFAULT_HANDSHAKE_TIMEOUT;
	c->ack_timeout = CONF_DEFAULT_ACK_TIMEOUT;
	c->retry_count = CONF_DEFAULT_RETRY_COUNT;
	c->ring_pool = CONF_DEFAULT_RING_POOL;
	return (c);
}

/*
 * The settings of ${root} into ${c}: the top level's first, then the
 * identity settings, then the tunnels, which inherit the top level's
 * defaults and key and name the peers; then the whole.
 */
static int
parse_root(struct cfg *p, const config_setting_t *root, struct conf *c)
{

	if (conf_globals_parse(p, root, c))
		return (-1);
	if (conf_peers_parse(p, root, c))
		return (-1);
	if (conf_tunnels_parse(p, config_setting_get_member(root,
	    "tunnels"), c) || conf_check_memory(p, c))
		return (-1);
	return (0);
}

int
conf_load(const char *path, int flags, struct conf **out, char *err,
    size_t errlen)
{
	struct cfg p = { path, err, errlen, NULL, flags };
	config_t cf;
	struct conf *c;
	int rc = -1;

	if (errlen > 0)
		err[0] = '\0';
	if ((c = conf_new(path, err, errlen)) == NULL)
		return (-1);
	/* Only what libconfig can read without exiting or hanging. */
	if (conffile_check(path, err, errlen) != 0) {
		conf_free(c);
		return (-1);
	}
	config_init(&cf);
	errno = 0;
	if (config_read_file(&cf, path) != CONFIG_TRUE)
		read_error(&p, &cf, errno);
	else
		rc = parse_root(&p, config_root_setting(&cf), c);
	config_destroy(&cf);
	if (rc != 0) {
		conf_free(c);
		return (-1);
	}
	*out = c;
	return (0);
}

void
conf_free(struct conf *c)
{

	if (c == NULL)
		return;
	free(c->allow);
	free(c->peers);
	secmem_free(c->tunnels);
	free(c->listen);
	secmem_free(c);
}

int
conf_key_same(const struct conf_key *x, const struct conf_key *y)
{

	if (!x->set || !y->set)
		return (x->set == y->set);
	return (x->len == y->len && memcmp(x->key, y->key, x->len) == 0);
}

const struct conf_tunnel *
conf_tunnel_find(const struct conf *c, const char *name)
{
	size_t i;

	if (c == NULL || name == NULL)
		return (NULL);
	for (i = 0; i < c->ntunnels; i++)
		if (strcmp(c->tunnels[i].name, name) == 0)
			return (&c->tunnels[i]);
	return (NULL);
}
