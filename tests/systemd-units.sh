#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rstreamd.service, the instance unit rstreamd@.service, the
# socket-activation example and the drop-in rstreamd-unix-owner.conf pass
# systemd-analyze verify without a word about them, the service keeps the
# settings the daemon depends on and its sandbox (the user rstreamd, no
# capability), the instance unit differs from it only where it names the
# instance, and systemd-sysusers takes the sysusers.d file that makes the
# user (TAP).
#
# About systemd-analyze verify, found by trying it in a container where
# systemd is installed but is not PID 1:
# - It needs no running systemd, no --root and no generators (they are off
#   by default for verify).
# - It exits 0 on unknown keys and values it cannot parse: those are only
#   warnings on its output, hence the output check below.
# - It checks that every Exec*= binary exists, so the service is generated
#   with sbindir pointing at the build tree's daemon/.
# - --man=no: otherwise it runs man(1) on every Documentation= page, and
#   they are not installed when the tests run (man-pages.sh checks ours).
# - SYSTEMD_LOG_TARGET=console: under a systemd service whose stderr is
#   the journal (JOURNAL_STREAM), its warnings would go to the journal and
#   this test would see none.  SYSTEMD_LOG_LEVEL=info (its default) and
#   SYSTEMD_LOG_COLOR=0 pin what it prints.
# - rdma-hw.target comes from rdma-core (/lib/systemd/system).  After= a
#   unit that does not exist is not an error, so verify passes without
#   rdma-core as well; test 2 only reports whether it is installed.
# shellcheck disable=SC2317 # the checks are called through check()
srcdir=${RSTREAMD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${RSTREAMD_BUILDDIR:-$srcdir}
sbindir=$builddir/daemon
configfile=$srcdir/conf/rstreamd.conf

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rstreamd-units.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
svc=$tmp/rstreamd.service
inst=$tmp/rstreamd@.service
sock=$tmp/rstreamd-pg.socket
dropin=$srcdir/systemd/rstreamd-unix-owner.conf
instancedir=$(dirname "$configfile")/rstreamd

# The replacement side of a sed s|||, with |, & and \ escaped.
sedrepl() {
	printf '%s\n' "$1" | sed 's/[|&\\]/\\&/g'
}
# The same substitutions as the systemd/rstreamd.service rule in Makefile.am.
sed -e "s|@sbindir@|$(sedrepl "$sbindir")|g" \
    -e "s|@configfile@|$(sedrepl "$configfile")|g" \
    "$srcdir/systemd/rstreamd.service.in" >"$svc" || exit 1
# And those of the systemd/rstreamd@.service rule.
sed -e "s|@sbindir@|$(sedrepl "$sbindir")|g" \
    -e "s|@instancedir@|$(sedrepl "$instancedir")|g" \
    "$srcdir/systemd/rstreamd@.service.in" >"$inst" || exit 1
cp "$srcdir/systemd/rstreamd-pg.socket" "$sock" || exit 1
# The service once more, with the drop-in where systemd looks for it
# (verify reads the drop-in directory beside a unit file).
mkdir "$tmp/owner" "$tmp/owner/rstreamd.service.d" &&
    cp "$svc" "$tmp/owner/" &&
    cp "$dropin" "$tmp/owner/rstreamd.service.d/" || exit 1

# shellcheck source=tests/tap.sh
. "$srcdir/tests/tap.sh"
# check DESCRIPTION COMMAND...: one test, passing when COMMAND succeeds.
check() {
	desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
# values KEY FILE: the value of every KEY= line in FILE, one per line.
values() {
	sed -n "s/^$1[[:space:]]*=[[:space:]]*//p" "$2"
}
# is KEY FILE VALUE: FILE sets KEY exactly once, to VALUE.
is() {
	got=$(values "$1" "$2")
	[ "$got" = "$3" ] && return 0
	echo "# $(basename "$2"): expected:"
	printf '%s\n' "$3" | sed "s/^/#   $1=/"
	echo "# found:"
	printf '%s\n' "${got:-(nothing)}" | sed "s/^/#   $1=/"
	return 1
}
# has KEY FILE WORD...: the KEY= lines of FILE, together, list every WORD.
has() {
	key=$1
	file=$2
	shift 2
	all=" $(values "$key" "$file" | tr '\n' ' ') "
	for w in "$@"; do
		case $all in
		*" $w "*) ;;
		*)
			echo "# $(basename "$file"): $key= lacks $w"
			return 1
			;;
		esac
	done
}
# verify UNIT: systemd-analyze verify exits 0 and says nothing about our
# units (every line naming them is a warning or an error).  UNIT is under
# $tmp.
verify() {
	out=$(cd "$tmp" && SYSTEMD_LOG_TARGET=console SYSTEMD_LOG_LEVEL=info \
	    SYSTEMD_LOG_COLOR=0 systemd-analyze verify --man=no "$tmp/$1" 2>&1)
	rc=$?
	ours=$(printf '%s\n' "$out" | grep -e rstreamd)
	other=$(printf '%s\n' "$out" | grep -v -e rstreamd -e '^$')
	[ -n "$other" ] && printf '%s\n' "$other" | sed 's/^/# (not ours) /'
	[ -n "$ours" ] && printf '%s\n' "$ours" | sed 's/^/# /'
	[ "$rc" -ne 0 ] && echo "# systemd-analyze verify exited with $rc"
	[ "$rc" -eq 0 ] && [ -z "$ours" ]
}
# exposure UNIT: systemd-analyze security's overall exposure of UNIT (0 to
# 10, lower is tighter), reported, and at most $max_exposure: what is left
# is a daemon that needs the network, /dev/infiniband and the host's file
# system (see the unit's comments).  23-systemd.bats holds the installed
# units to the same bound.
max_exposure=2.0
exposure() {
	out=$(cd "$tmp" && SYSTEMD_LOG_TARGET=console SYSTEMD_LOG_COLOR=0 \
	    systemd-analyze security --offline=yes --no-pager "$tmp/$1" 2>&1)
	level=$(printf '%s\n' "$out" |
	    sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
	echo "# systemd-analyze security $1: overall exposure ${level:-?}"
	[ -n "$level" ] || { printf '%s\n' "$out" | tail -n 5 | sed 's/^/# /'; return 1; }
	awk -v l="$level" -v m="$max_exposure" 'BEGIN { exit !(l <= m) }'
}
# Whether FILE's TimeoutStopSec= exceeds the default drain_time, 30 s.
stop_outlasts_drain() {
	v=$(values TimeoutStopSec "$1")
	case $v in
	*min) num=${v%min} mult=60 ;;
	*s) num=${v%s} mult=1 ;;
	*) num=$v mult=1 ;;
	esac
	case $num in
	'' | *[!0-9]*) ;;
	*) [ $((num * mult)) -gt 30 ] && return 0 ;;
	esac
	echo "# TimeoutStopSec=$v, not more than drain_time's default 30 s"
	return 1
}
# settings FILE: every setting of FILE as SECTION.KEY=VALUE, sorted, but
# those that name the instance.
settings() {
	awk '/^\[/ { sec = $0; next } /^[A-Za-z]/ { print sec "." $0 }' "$1" |
	    grep -v -e '^\[Unit\]\.Description=' \
	    -e '^\[Service\]\.ExecStart=' -e '^\[Service\]\.ExecReload=' \
	    -e '^\[Service\]\.RuntimeDirectory=' | LC_ALL=C sort
}
# same_settings A B: A and B say the same but for the instance's names.
same_settings() {
	d=$(settings "$1" >"$tmp/a.set" && settings "$2" >"$tmp/b.set" &&
	    diff "$tmp/a.set" "$tmp/b.set")
	rc=$?
	[ -n "$d" ] && printf '%s\n' "$d" | sed 's/^/# /'
	return "$rc"
}
no_placeholders() {
	! grep -n '@[a-z_]*@' "$1" | sed 's/^/# left unsubstituted: /' | grep .
}
# The configuration check, run as systemd would: it passes on the example
# configuration.
config_check_passes() {
	# shellcheck disable=SC2086 # split into words like systemd does
	out=$(set -f; $1 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/# /'
	return "$rc"
}

if command -v systemd-analyze >/dev/null 2>&1; then
	check "systemd-analyze verify: rstreamd.service" verify rstreamd.service
	found=
	for d in $(systemd-analyze unit-paths 2>/dev/null); do
		[ -f "$d/rdma-hw.target" ] && found=$d/rdma-hw.target && break
	done
	if [ -n "$found" ]; then
		ok "rdma-hw.target is installed ($found)"
	else
		skip "rdma-hw.target is installed" "no rdma-core here; After= it is harmless"
	fi
	check "systemd-analyze verify: rstreamd@.service" verify rstreamd@.service
	check "systemd-analyze verify: rstreamd-pg.socket" verify rstreamd-pg.socket
	check "systemd-analyze verify: rstreamd.service with the drop-in rstreamd-unix-owner.conf" \
	    verify owner/rstreamd.service
	# systemd 252 and later judge a unit file offline.
	if systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
		check "systemd-analyze security: exposure at most $max_exposure (the sandboxing is still there)" \
		    exposure rstreamd.service
		check "systemd-analyze security: rstreamd@.service's exposure at most $max_exposure" \
		    exposure rstreamd@.service
	else
		skip "systemd-analyze security" "this systemd has no --offline"
		skip "systemd-analyze security: rstreamd@.service" "this systemd has no --offline"
	fi
else
	why="no systemd-analyze (apt-get install systemd)"
	skip "systemd-analyze verify: rstreamd.service" "$why"
	skip "rdma-hw.target is installed" "$why"
	skip "systemd-analyze verify: rstreamd@.service" "$why"
	skip "systemd-analyze verify: rstreamd-pg.socket" "$why"
	skip "systemd-analyze verify: rstreamd.service with the drop-in rstreamd-unix-owner.conf" "$why"
fi

check "every @variable@ is substituted" no_placeholders "$svc"
check "every @variable@ is substituted in rstreamd@.service" no_placeholders "$inst"
check "Type=notify" is Type "$svc" notify
check "NotifyAccess=main" is NotifyAccess "$svc" main
precmd="$sbindir/rstreamd -n -c $configfile"
# RestartPreventExitStatus= looks at the main process only: a check in
# ExecStartPre= that exits 78 would still be restarted, again and again.
check "no ExecStartPre=: the daemon checks its configuration itself" \
    is ExecStartPre "$svc" ""
check "ExecStart= runs the daemon on the configuration" \
    is ExecStart "$svc" "$sbindir/rstreamd -c $configfile"
check "ExecReload= checks the configuration (-n), then sends SIGHUP" \
    is ExecReload "$svc" "$precmd
/bin/kill -HUP \$MAINPID"
check "RestartPreventExitStatus=78: a configuration error (EX_CONFIG) is not restarted" \
    is RestartPreventExitStatus "$svc" 78
check "Restart=on-failure" is Restart "$svc" on-failure
check "LimitMEMLOCK=infinity" is LimitMEMLOCK "$svc" infinity
check "After= network-online.target, rdma-hw.target and modprobe@rdma_ucm.service" \
    has After "$svc" network-online.target rdma-hw.target modprobe@rdma_ucm.service
check "Wants= network-online.target and modprobe@rdma_ucm.service (rdma_ucm loaded before the sandbox is made)" \
    has Wants "$svc" network-online.target modprobe@rdma_ucm.service
check "RestrictAddressFamilies= allows AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_IB" \
    has RestrictAddressFamilies "$svc" AF_UNIX AF_INET AF_INET6 AF_NETLINK AF_IB
check "RuntimeDirectory=rstreamd" is RuntimeDirectory "$svc" rstreamd
check "TimeoutStopSec= outlasts the default drain_time" stop_outlasts_drain "$svc"
# The sandbox: rstreamd(8) and the unit's comments say why each is there,
# 23-systemd.bats checks them on the running daemons.
check "PrivateDevices=yes" is PrivateDevices "$svc" yes
check "/dev/infiniband is bound into the private /dev, if it exists" \
    is BindReadOnlyPaths "$svc" -/dev/infiniband
check "DeviceAllow= the verbs devices and rdma_cm, nothing else" \
    is DeviceAllow "$svc" "char-infiniband_verbs rw
/dev/infiniband/rdma_cm rw"
check "SystemCallFilter=@system-service" is SystemCallFilter "$svc" @system-service
check "ProtectProc=invisible" is ProtectProc "$svc" invisible
check "ProcSubset=pid" is ProcSubset "$svc" pid
check "PrivateIPC=yes" is PrivateIPC "$svc" yes
check "User=rstreamd" is User "$svc" rstreamd
check "Group=rstreamd" is Group "$svc" rstreamd
check "RemoveIPC=yes" is RemoveIPC "$svc" yes
# One empty assignment: no capability at all, and a drop-in adds to it.
check "CapabilityBoundingSet= empty (no capability)" \
    is CapabilityBoundingSet "$svc" ""
check "CapabilityBoundingSet= is there (an empty assignment, not left out)" grep -qx 'CapabilityBoundingSet=' "$svc"
check "no AmbientCapabilities= (CAP_NET_BIND_SERVICE only in a drop-in)" \
    is AmbientCapabilities "$svc" ""
check "the drop-in rstreamd-unix-owner.conf runs the daemon as root" \
    is User "$dropin" root
# Added to the unit's, not in place of them: no empty assignment.
check "the drop-in rstreamd-unix-owner.conf adds CAP_CHOWN, CAP_FOWNER and CAP_DAC_OVERRIDE, and nothing else" \
    is CapabilityBoundingSet "$dropin" "CAP_CHOWN CAP_FOWNER CAP_DAC_OVERRIDE"
check "the drop-in leaves the group rstreamd (the control socket keeps it)" \
    is Group "$dropin" ""
iprecmd="$sbindir/rstreamd -n -c $instancedir/%i.conf"
check "rstreamd@.service: no ExecStartPre=" is ExecStartPre "$inst" ""
check "rstreamd@.service: ExecStart= runs the daemon on $instancedir/%i.conf" \
    is ExecStart "$inst" "$sbindir/rstreamd -c $instancedir/%i.conf"
check "rstreamd@.service: ExecReload= checks its configuration, then sends SIGHUP" \
    is ExecReload "$inst" "$iprecmd
/bin/kill -HUP \$MAINPID"
check "rstreamd@.service: RuntimeDirectory=rstreamd-%i" \
    is RuntimeDirectory "$inst" rstreamd-%i
check "rstreamd@.service says what rstreamd.service says, but for the instance's names" \
    same_settings "$svc" "$inst"
check "the socket example: ListenStream=127.0.0.1:15432" \
    is ListenStream "$sock" 127.0.0.1:15432
check "the socket example: FileDescriptorName=pg" is FileDescriptorName "$sock" pg
check "the socket example: Service=rstreamd.service" \
    is Service "$sock" rstreamd.service
# The user: systemd-sysusers, on an empty root of its own, would make the
# user and the group rstreamd from it, and nothing else.
sysusers_makes_user() {
	out=$(SYSTEMD_LOG_TARGET=console SYSTEMD_LOG_COLOR=0 \
	    systemd-sysusers --dry-run --root="$tmp/root" \
	    "$srcdir/systemd/rstreamd.sysusers" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/# /'
	[ "$rc" -eq 0 ] &&
	    printf '%s\n' "$out" | grep -q "^Creating group 'rstreamd'" &&
	    printf '%s\n' "$out" | grep -q "^Creating user 'rstreamd'" &&
	    [ "$(printf '%s\n' "$out" | grep -c '^Creating')" -eq 2 ]
}
if command -v systemd-sysusers >/dev/null 2>&1; then
	mkdir -p "$tmp/root/etc"
	check "systemd-sysusers takes systemd/rstreamd.sysusers: the user and group rstreamd" \
	    sysusers_makes_user
else
	skip "systemd-sysusers takes systemd/rstreamd.sysusers" "no systemd-sysusers"
fi
# Only the command asserted above: anything else might start a daemon.
if [ ! -x "$sbindir/rstreamd" ]; then
	skip "ExecReload='s check passes on conf/rstreamd.conf" "$sbindir/rstreamd is not built"
elif [ "$(values ExecReload "$svc" | head -n 1)" != "$precmd" ]; then
	skip "ExecReload='s check passes on conf/rstreamd.conf" "it is not the check"
else
	check "ExecReload='s check passes on conf/rstreamd.conf" \
	    config_check_passes "$precmd"
fi

echo "1..$n"
exit $fail
