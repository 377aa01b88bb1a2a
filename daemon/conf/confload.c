/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libconfig.h>

#include "cfg.h"
#include "cfghint.h"
#include "conf.h"
#include "conf_int.h"
#include "conffile.h"

/*
 * conf_load: the file checked for what libconfig cannot read safely,
 * read by libconfig (and why not, when it cannot), then its settings in
 * their order, into a new configuration.
 */

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
