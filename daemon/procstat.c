/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <sys/resource.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procstat.h"

int
procstat_parse_stat(const char *text, long ticks, long pagesize,
    struct procstat *ps)
{
	unsigned long long f[25];
	const char *p;
	char *end;
	int i;

	/* The command's name may hold anything, spaces and ')' included. */
	if ((p = strrchr(text, ')')) == NULL || ticks <= 0 || pagesize <= 0)
		return (-1);
	/* Field 3 is the state, a letter; 4 and on are numbers (proc(5)). */
	p++;
	while (*p == ' ')
		p++;
	if (*p == '\0' || p[1] != ' ')
		return (-1);
	p += 2;
	for (i = 4; i <= 24; i++) {
		f[i] = strtoull(p, &end, 10);
		if (end == p || (*end != ' ' && *end != '\n' && *end != '\0'))
			return (-1);
		p = end;
	}
	/* utime and stime (14, 15), vsize (23), rss in pages (24). */
	ps->cpu_ms = (uint64_t)((f[14] + f[15]) * 1000 / (unsigned long)ticks);
	ps->vsize = f[23];
	/* rss is signed in the kernel; a negative one reads as huge here. */
	ps->rss = f[24] > (1ull << 48) ? 0 : (uint64_t)f[24] *
	    (uint64_t)pagesize;
	ps->have_stat = 1;
	return (0);
}

/* /proc/self/stat, read whole: one line, well under a page. */
static void
read_stat(struct procstat *ps)
{
	char buf[4096];
	ssize_t n;
	int fd;

	if ((fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	(void)procstat_parse_stat(buf, sysconf(_SC_CLK_TCK),
	    sysconf(_SC_PAGESIZE), ps);
}

/* One entry per open descriptor, the directory's own not counted. */
static void
count_fds(struct procstat *ps)
{
	struct dirent *de;
	uint64_t n = 0;
	DIR *dir;

	if ((dir = opendir("/proc/self/fd")) == NULL)
		return;
	while ((de = readdir(dir)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(dir);
	ps->open_fds = n > 0 ? n - 1 : 0;
	ps->have_fds = 1;
}

void
procstat_read(struct procstat *ps)
{
	struct rlimit rl;

	memset(ps, 0, sizeof(*ps));
	read_stat(ps);
	count_fds(ps);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		ps->max_fds = (uint64_t)rl.rlim_cur;
		ps->have_max_fds = 1;
	}
}
