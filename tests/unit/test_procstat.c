/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for daemon/procstat: /proc/PID/stat lines as the kernel
 * writes them (a command name with spaces and parentheses included), and
 * this process's own figures against what it knows of itself.
 */
#include <sys/resource.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procstat.h"
#include "tap.h"

/* fields 3..24 of a stat line: utime 250, stime 150, vsize 123456789,
 * rss 300 pages; then the rest of the line. */
#define TAIL	"S 1 2 3 0 -1 4194560 1000 0 5 0 250 150 0 0 20 0 3 0 " \
	"987654 123456789 300 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 " \
	"0 0 17 1 0 0 0 0 0\n"

int
main(void)
{
	struct procstat ps, ps2;
	struct rlimit rl;
	int fds[4], i;

	memset(&ps, 0, sizeof(ps));
	ok(procstat_parse_stat("1234 (rstreamd) " TAIL, 100, 4096, &ps) ==
	    0 && ps.have_stat, "a stat line parses");
	ok(ps.cpu_ms == 4000, "CPU time: (250 + 150) ticks of 1/100 s = 4 s "
	    "(%llu ms)", (unsigned long long)ps.cpu_ms);
	ok(ps.vsize == 123456789, "virtual memory");
	ok(ps.rss == 300 * 4096, "resident memory: 300 pages");
	memset(&ps, 0, sizeof(ps));
	ok(procstat_parse_stat("1234 (a) b) (c ) " TAIL, 250, 65536, &ps) ==
	    0 && ps.cpu_ms == 1600 && ps.rss == 300 * 65536,
	    "a name with spaces and parentheses; other ticks and pages");
	memset(&ps, 0, sizeof(ps));
	ok(procstat_parse_stat("1234 rstreamd " TAIL, 100, 4096, &ps) < 0 &&
	    !ps.have_stat, "no name in parentheses: refused");
	ok(procstat_parse_stat("1234 (rstreamd) S 1 2 3\n", 100, 4096, &ps) <
	    0, "a short line: refused");
	ok(procstat_parse_stat("1234 (rstreamd) S 1 2 x 0 -1 4194560 1000 0 "
	    "5 0 250 150 0 0 20 0 3 0 987654 123456789 300\n", 100, 4096,
	    &ps) < 0, "a field that is no number: refused");
	ok(procstat_parse_stat("1234 (rstreamd) " TAIL, 0, 4096, &ps) < 0,
	    "no clock ticks: refused");

	/* This process, as it is now, and with four more descriptors. */
	procstat_read(&ps);
	ok(ps.have_stat && ps.rss > 0 && ps.vsize >= ps.rss,
	    "this process: resident %llu of %llu bytes",
	    (unsigned long long)ps.rss, (unsigned long long)ps.vsize);
	ok(getrlimit(RLIMIT_NOFILE, &rl) == 0 && ps.have_max_fds &&
	    ps.max_fds == (uint64_t)rl.rlim_cur, "max_fds is RLIMIT_NOFILE's "
	    "soft limit (%llu)", (unsigned long long)ps.max_fds);
	for (i = 0; i < 4; i++)
		fds[i] = open("/dev/null", O_RDONLY);
	procstat_read(&ps2);
	ok(ps.have_fds && ps2.have_fds && ps.open_fds >= 3 &&
	    ps2.open_fds == ps.open_fds + 4, "open_fds counts descriptors, "
	    "not the directory's own (%llu, then %llu)",
	    (unsigned long long)ps.open_fds, (unsigned long long)ps2.open_fds);
	for (i = 0; i < 4; i++)
		close(fds[i]);
	return (tap_done());
}
