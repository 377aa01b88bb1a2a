/*
 * rstreamd: tunnel local TCP and Unix-socket byte streams across RDMA RC
 * connections to a peer rstreamd.
 *
 * This is the command-line front end; the event loop, configuration and
 * tunnels grow here in later stages (see ../shared/DESIGN.md).
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: rstreamd [-f] [-n] [-v] [-c FILE]\n"
	    "\n"
	    "Tunnel local TCP and Unix-socket streams over RDMA to a peer rstreamd.\n"
	    "\n"
	    "  -c, --config FILE  configuration file (default %s)\n"
	    "  -f, --foreground   stay in the foreground, log to stderr\n"
	    "  -n, --check        check the configuration and exit\n"
	    "  -v, --verbose      more log output (repeat for more)\n"
	    "  -h, --help         show this help and exit\n"
	    "  -V, --version      show the version and exit\n",
	    SYSCONFDIR "/rstreamd.conf");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "check", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:fnvhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return (0);
		case 'V':
			printf("rstreamd %s\n", PACKAGE_VERSION);
			return (0);
		case 'c':
		case 'f':
		case 'n':
		case 'v':
			break;
		default:
			usage(stderr);
			return (1);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rstreamd: unexpected argument: %s\n",
		    argv[optind]);
		usage(stderr);
		return (1);
	}
	fprintf(stderr, "rstreamd: the daemon is not implemented yet; "
	    "only --help and --version work in this version\n");
	return (1);
}
