/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * verbs_cm: the RDMA CM channels, the links' and the listeners': open,
 * freed, and the tick that ends dying links and lists the devices again.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "verbs.h"
#include "verbs_int.h"
#include "wire.h"

struct verbs_cm *
verbs_cm_new(char *err, size_t errlen)
{
	struct verbs_cm *cm;

	if ((cm = calloc(1, sizeof(*cm))) == NULL) {
		say(err, errlen, "out of memory");
		return (NULL);
	}
	TAILQ_INIT(&cm->dying);
	TAILQ_INIT(&cm->links);
	TAILQ_INIT(&cm->reqs);
	snprintf(cm->why, sizeof(cm->why), "the RDMA CM is not open");
	return (cm);
}

enum verbs_rdma
verbs_cm_open(struct verbs_cm *cm, char *why, size_t whylen)
{
	enum verbs_rdma r;
	int e;

	if (cm->ch != NULL) {
		say(why, whylen, "%s", "");
		return (VERBS_RDMA_READY);
	}
	errno = 0;
	if ((cm->ch = rdma_create_event_channel()) == NULL ||
	    (cm->lch = rdma_create_event_channel()) == NULL ||
	    verbs_nonblock(cm->ch->fd) || verbs_nonblock(cm->lch->fd)) {
		e = errno;
		if (cm->lch != NULL)
			rdma_destroy_event_channel(cm->lch);
		if (cm->ch != NULL)
			rdma_destroy_event_channel(cm->ch);
		cm->ch = cm->lch = NULL;
		r = verbs_rdma_missing(e, cm->why, sizeof(cm->why));
		say(why, whylen, "%s", cm->why);
		return (r);
	}
	cm->why[0] = '\0';
	say(why, whylen, "%s", "");
	cm->held = rdma_get_devices(NULL);	/* none yet is fine */
	(void)verbs_devices_changed(cm);
	return (VERBS_RDMA_READY);
}

int
verbs_cm_is_open(const struct verbs_cm *cm)
{

	return (cm->ch != NULL);
}

int
verbs_cm_moved(struct verbs_cm *cm)
{
	struct stat st;

	if (stat("/dev/infiniband", &st) != 0)
		memset(&st, 0, sizeof(st));
	if (st.st_ino == cm->moved_dir.st_ino &&
	    st.st_mtim.tv_sec == cm->moved_dir.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == cm->moved_dir.st_mtim.tv_nsec &&
	    st.st_nlink == cm->moved_dir.st_nlink)
		return (0);
	cm->moved_dir = st;
	return (1);
}

void
verbs_cm_free(struct verbs_cm *cm)
{

	if (cm == NULL)
		return;
	while (!TAILQ_EMPTY(&cm->reqs))
		verbs_request_refuse(TAILQ_FIRST(&cm->reqs), WIRE_NOTE_REFUSED);
	while (!TAILQ_EMPTY(&cm->dying))
		verbs_dying_end(TAILQ_FIRST(&cm->dying));
	if (cm->held != NULL)
		rdma_free_devices(cm->held);
	if (cm->lch != NULL)
		rdma_destroy_event_channel(cm->lch);
	if (cm->ch != NULL)
		rdma_destroy_event_channel(cm->ch);
	free(cm);
}

int
verbs_cm_fd(const struct verbs_cm *cm)
{

	return (cm->ch != NULL ? cm->ch->fd : -1);
}

int
verbs_cm_listen_fd(const struct verbs_cm *cm)
{

	return (cm->lch != NULL ? cm->lch->fd : -1);
}

int
verbs_cm_tick_due(struct verbs_cm *cm)
{

	if (cm->ch == NULL)
		return (0);
	if (verbs_devices_changed(cm))
		cm->sync_due = SYNC_TICKS;
	return (!TAILQ_EMPTY(&cm->dying) || cm->sync_due > 0);
}

void
verbs_cm_tick(struct verbs_cm *cm)
{
	struct verbs_link *l, *next;

	if (cm->ch == NULL)
		return;
	for (l = TAILQ_FIRST(&cm->dying); l != NULL; l = next) {
		next = TAILQ_NEXT(l, dentry);
		if (--l->dying_ticks <= 0)
			verbs_dying_end(l);
	}
	if (verbs_devices_changed(cm))
		cm->sync_due = SYNC_TICKS;
	if (cm->sync_due > 0 && verbs_devices_sync(cm))
		cm->sync_due--;
}
