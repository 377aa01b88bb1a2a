#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The Debian package (TAP): dpkg-buildpackage -us -uc builds it from the
# tracked files of this checkout, lintian finds nothing it does not explain
# (debian/rstreamd.lintian-overrides), and the .deb holds what it should,
# with /etc/rstreamd.conf a conffile, /etc/rstreamd 0700, the sysusers.d
# file of the user rstreamd and a postinst that makes the user and gives
# it /etc/rstreamd.
#
# With CI=true or RSTREAMD_TEST_DEB_INSTALL=1, as root, and no rstreamd
# installed (no /etc/rstreamd.conf), it also installs the package with
# apt-get, checks what dpkg recorded, the user rstreamd and its
# directory, and that the installed daemon accepts the installed
# configuration, and purges it again (the user stays, as Debian's system
# users do): that changes the machine, so it is for CI's fresh machines
# and throwaway ones.
#
# Skipped without debhelper, lintian or a git checkout.
srcdir=${RSTREAMD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
# shellcheck source=tests/tap.sh
. "$srcdir/tests/tap.sh"

# check DESCRIPTION COMMAND...: one test, its output shown on failure.
check() {
	d=$1
	shift
	if out=$("$@" 2>&1); then
		ok "$d"
	else
		not_ok "$d"
		printf '%s\n' "$out" | tail -n 40 | sed 's/^/# /'
	fi
}
skip_all() {
	echo "1..0 # SKIP $1"
	exit 0
}

command -v dpkg-buildpackage >/dev/null &&
    [ -e /usr/share/perl5/Debian/Debhelper/Dh_Lib.pm ] ||
    skip_all "debhelper is not installed (tools/install-deps installs it)"
command -v lintian >/dev/null || skip_all "lintian is not installed"
git -C "$srcdir" rev-parse --git-dir >/dev/null 2>&1 ||
    skip_all "not a git checkout: the package is built from its tracked files"

[ -z "${RSTREAMD_BUILDDIR:-}" ] || rm -f "$RSTREAMD_BUILDDIR/tests/rstreamd.deb"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rstreamd-deb.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
src=$tmp/rstreamd-0.1.0
mkdir "$src" || exit 1
# The working tree's version of every tracked file: uncommitted changes in,
# build directories and untracked files out.
git -C "$srcdir" ls-files -z | (cd "$srcdir" && tar --null -T - -cf -) |
    tar -C "$src" -xf - || exit 1

build() {
	cd "$src" && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc
}
check "dpkg-buildpackage -us -uc builds the source and binary packages" build
deb=$(ls "$tmp"/rstreamd_*_amd64.deb "$tmp"/rstreamd_*_"$(dpkg --print-architecture)".deb 2>/dev/null | head -n 1)
if [ -z "$deb" ]; then
	not_ok "a .deb was made"
	echo "1..$n"
	exit 1
fi
# Kept for tests/e2e/34-no-rdma-systemd.bats, which installs it in a guest
# without RDMA (Makefile.am runs this first).
if [ -n "${RSTREAMD_BUILDDIR:-}" ] && [ -d "$RSTREAMD_BUILDDIR/tests" ]; then
	cp "$deb" "$RSTREAMD_BUILDDIR/tests/rstreamd.deb"
fi

# Every tag is an error or warning unless overridden, and none may be.
lint() {
	out=$(lintian --fail-on none "$tmp"/rstreamd_*.changes 2>&1)
	printf '%s\n' "$out"
	! printf '%s\n' "$out" | grep -E '^[EW]: '
}
check "lintian: no error or warning that debian/ does not explain" lint

contents() {
	c=$(dpkg-deb -c "$deb") || return 1
	for f in ./usr/sbin/rstreamd ./usr/sbin/rstreamctl \
	    ./usr/share/man/man8/rstreamd.8.gz ./usr/share/man/man8/rstreamctl.8.gz \
	    ./usr/share/man/man5/rstreamd.conf.5.gz \
	    ./usr/share/man/man7/rstreamd-protocol.7.gz \
	    ./etc/rstreamd.conf ./lib/systemd/system/rstreamd.service \
	    ./lib/systemd/system/rstreamd@.service \
	    ./usr/share/doc/rstreamd/examples/rstreamd.conf.example \
	    ./usr/share/doc/rstreamd/examples/rstreamd-pg.socket \
	    ./usr/share/doc/rstreamd/examples/rstreamd-unix-owner.conf \
	    ./usr/share/doc/rstreamd/examples/rstreamd.rules.yml \
	    ./usr/share/doc/rstreamd/examples/rstreamd.rules.test.yml \
	    ./usr/lib/sysusers.d/rstreamd.conf \
	    ./usr/share/doc/rstreamd/copyright \
	    ./usr/share/bash-completion/completions/rstreamctl; do
		printf '%s\n' "$c" | grep -q " $f\$" ||
		    { echo "missing: $f"; return 1; }
	done
	printf '%s\n' "$c" | grep -q '^drwx------ root/root .* \./etc/rstreamd/$' ||
	    { echo "/etc/rstreamd is not 0700 root:root"; return 1; }
	# The unit runs what the package installs, with Debian's config.
	dpkg-deb --fsys-tarfile "$deb" |
	    tar -xOf - ./lib/systemd/system/rstreamd.service |
	    grep -qx 'ExecStart=/usr/sbin/rstreamd -c /etc/rstreamd.conf' ||
	    { echo "the unit does not run /usr/sbin/rstreamd -c /etc/rstreamd.conf"; return 1; }
	# The units run it as rstreamd, which postinst makes (dh_installsysusers)
	# before it gives it /etc/rstreamd.
	for u in rstreamd rstreamd@; do
		dpkg-deb --fsys-tarfile "$deb" |
		    tar -xOf - "./lib/systemd/system/$u.service" |
		    grep -qx 'User=rstreamd' ||
		    { echo "$u.service does not run the daemon as rstreamd"; return 1; }
	done
	dpkg-deb --fsys-tarfile "$deb" |
	    tar -xOf - ./usr/lib/sysusers.d/rstreamd.conf |
	    grep -qE '^u[[:space:]]+rstreamd[[:space:]]' ||
	    { echo "the sysusers.d file makes no user rstreamd"; return 1; }
	dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./postinst >"$tmp/postinst" ||
	    { echo "no postinst"; return 1; }
	grep -q '^ *systemd-sysusers .*rstreamd\.conf' "$tmp/postinst" ||
	    { echo "postinst does not run systemd-sysusers rstreamd.conf"; return 1; }
	sed -n '/systemd-sysusers/,$p' "$tmp/postinst" |
	    grep -q '^[[:space:]]*chown rstreamd:rstreamd /etc/rstreamd$' ||
	    { echo "postinst does not give /etc/rstreamd to rstreamd after making the user"; return 1; }
	# An instance's configuration sits beside the key files.
	dpkg-deb --fsys-tarfile "$deb" |
	    tar -xOf - ./lib/systemd/system/rstreamd@.service |
	    grep -qx 'ExecStart=/usr/sbin/rstreamd -c /etc/rstreamd/%i.conf' ||
	    { echo "rstreamd@.service does not run /usr/sbin/rstreamd -c /etc/rstreamd/%i.conf"; return 1; }
}
check "the .deb holds the daemon, rstreamctl and its bash completion, the man pages, the units (User=rstreamd), the configuration, the alerting rules, /etc/rstreamd (0700), the sysusers.d file, and a postinst that makes the user and gives it /etc/rstreamd" contents

conffile() {
	dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./conffiles |
	    grep -qx /etc/rstreamd.conf
}
check "/etc/rstreamd.conf is a conffile" conffile

if [ "${CI:-}" != true ] && [ "${RSTREAMD_TEST_DEB_INSTALL:-}" != 1 ]; then
	echo "# not installing it: set RSTREAMD_TEST_DEB_INSTALL=1 (it changes the machine)"
elif [ "$(id -u)" != 0 ]; then
	echo "# not installing it: not root"
elif [ -e /etc/rstreamd.conf ] || dpkg -s rstreamd >/dev/null 2>&1; then
	echo "# not installing it: rstreamd is installed here already"
else
	do_install() {
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb" &&
		    dpkg-query -W -f '${Status}\n' rstreamd |
		    grep -qx 'install ok installed'
	}
	check "apt-get installs it, dependencies and all" do_install
	installed() {
		dpkg-query -W -f '${Conffiles}\n' rstreamd | grep -q '/etc/rstreamd.conf ' &&
		    [ "$(stat -c %a:%U:%G /etc/rstreamd)" = 700:rstreamd:rstreamd ] &&
		    [ "$(stat -c %a:%U /etc/rstreamd.conf)" = 644:root ] &&
		    /usr/sbin/rstreamd -n -c /etc/rstreamd.conf &&
		    /usr/sbin/rstreamd -V &&
		    [ -L /etc/systemd/system/multi-user.target.wants/rstreamd.service ]
	}
	check "installed: the conffile recorded, /etc/rstreamd 0700 and rstreamd's, the daemon accepts the configuration as shipped, the service enabled" installed
	# A system user: no login, no home of its own.
	user() {
		getent passwd rstreamd &&
		    getent group rstreamd &&
		    [ "$(id -u rstreamd)" -lt 1000 ] &&
		    [ "$(id -g rstreamd)" = "$(getent group rstreamd | cut -d: -f3)" ] &&
		    getent passwd rstreamd | cut -d: -f7 | grep -qx -e /usr/sbin/nologin -e /sbin/nologin
	}
	check "installed: the system user and group rstreamd, without a login" user
	purge() {
		DEBIAN_FRONTEND=noninteractive apt-get purge -y -q rstreamd &&
		    ! [ -e /etc/rstreamd.conf ] && ! [ -e /usr/sbin/rstreamd ] &&
		    ! [ -e /etc/rstreamd ] &&
		    ! [ -e /usr/lib/sysusers.d/rstreamd.conf ] &&
		    ! [ -e /etc/systemd/system/multi-user.target.wants/rstreamd.service ]
	}
	check "apt-get purge removes it, the configuration, /etc/rstreamd and the service's link" purge
	# Debian leaves system users behind: files they own may remain, and a
	# new user could inherit them under a reused id.
	kept() {
		getent passwd rstreamd
	}
	check "apt-get purge leaves the user rstreamd, as Debian does" kept
fi
echo "1..$n"
exit $fail
