#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rstreamd on a host without RDMA yet: the runner's guest sets up the
# network but loads no RDMA module and adds no device (SOFTROCE_RDMA=
# later, from this file's name), and the tests add them when they want
# (rdma_up, the guest's own steps).  A daemon without tunnels runs
# without RDMA; two daemons with tunnels, where rdma_ucm cannot be
# loaded yet, start, report READY, say in STATUS, rstreamctl and their
# log (once) what is missing and what to do, and link by themselves once
# the modules and devices are there: a stream goes through, with the
# same processes.  Then the installed
# units under a real systemd (this file boots systemd as PID 1,
# SOFTROCE_SYSTEMD=1): with the devices and modules gone again, both
# services start and are active, and link once the devices appear, with
# no restart.  Last, the Debian package (tests/deb.sh's, which make check
# builds first) installed on the guest without RDMA: its service starts
# on the shipped configuration, and with a tunnel.
#
# The tests run in order and share the guest's RDMA: the first two need
# none at their start (the second adds it), the third takes it away
# first.  Natively (RDMA devices already there) the file skips.

load helpers

setup_file() {
	in_systemd_guest || return 0
	[ "${RSTREAMD_TEST_RDMA:-}" = later ] || return 0
	sd_install
	systemctl daemon-reload
}

setup() {
	rs_setup
	in_systemd_guest ||
	    skip "needs the runner's systemd guest (SOFTROCE_SYSTEMD=1)"
	rdma_later
}

teardown() {
	autoload_back
	systemctl stop rstreamd rstreamd@b 2>/dev/null || true
	# Notify messages end without a newline: the logs shown next must
	# not run into bats' own lines.
	for f in "$W"/n?.log; do
		[ ! -e "$f" ] || echo >>"$f"
	done
	if [ -z "${BATS_TEST_COMPLETED:-}" ]; then
		journalctl -b --no-pager -u rstreamd -u rstreamd@b |
		    tail -60 | sed 's/^/# /' >&3
	fi
	systemctl reset-failed rstreamd rstreamd@b 2>/dev/null || true
	rs_teardown
}

# notify_at NAME: a socket standing in for systemd's notify socket at
# $W/NAME.sock; what arrives is appended to $W/NAME.log.
notify_at() {
	spawn socat -u UNIX-RECV:"$W/$1.sock" OPEN:"$W/$1.log",creat,append
	wait_sock "$W/$1.sock"
}

# no_autoload: the kernel loads no module by itself (as where the
# modules are not installed, or in a container) until autoload_back.
# librdmacm's first look would have rdma_ucm loaded otherwise: it asks
# the kernel over netlink about the RDMA CM, which loads it if it can.
no_autoload() {
	cat /proc/sys/kernel/modprobe >"$BATS_FILE_TMPDIR/modprobe"
	echo /bin/true >/proc/sys/kernel/modprobe
}

autoload_back() {
	[ -f "$BATS_FILE_TMPDIR/modprobe" ] || return 0
	cat "$BATS_FILE_TMPDIR/modprobe" >/proc/sys/kernel/modprobe
	rm -f "$BATS_FILE_TMPDIR/modprobe"
}

# tries NAME: how many times daemon NAME tried to open the RDMA CM in
# vain and said nothing new (its debug lines).
tries() {
	count_log "$1" "debug: still no RDMA"
}

# through PORT: 1 MiB through the tunnel accepting on PORT, intact.
through() {
	head -c 1M /dev/urandom >"$W/in"
	timeout 60 socat -t 30 - TCP:127.0.0.1:"$1" <"$W/in" >"$W/out"
	[ "$(sha "$W/in")" = "$(sha "$W/out")" ]
}

@test "no RDMA: a daemon without tunnels starts and runs, and touches no RDMA" {
	no_rdma
	cat >"$W/z.conf" <<-EOF
		control = "$W/z.ctl";
		tunnels = ( );
	EOF
	notify_at nz
	start_daemon z NOTIFY_SOCKET="$W/nz.sock"
	wait_log nz "READY=1" 10
	run "$CTL" -s "$W/z.ctl" status
	assert_success
	assert_line "rdma: unused"
	# It never opened the RDMA CM, so it did not miss it.
	run grep -e "no RDMA" -e "RDMA CM" "$W/z.log"
	assert_failure
	kill -0 "$PID_z"
	no_rdma
}

@test "no RDMA: both daemons start, say what is missing, and link by themselves once it is there, without a restart" {
	no_rdma
	echo_tunnel echo
	notify_at na
	notify_at nb
	no_autoload
	start_daemon b NOTIFY_SOCKET="$W/nb.sock"
	start_daemon a NOTIFY_SOCKET="$W/na.sock"
	pa=$PID_a
	pb=$PID_b
	# READY, with a STATUS that says what is missing and what to do.
	wait_log na "READY=1" 10
	wait_log nb "READY=1" 10
	why="no RDMA yet: the RDMA CM is not there: rdma_ucm is not loaded (modprobe rdma_ucm)"
	wait_log na "STATUS=1 tunnel, 0 streams, 0 of 1 link up; $why" 10
	wait_log nb "STATUS=1 tunnel, 0 streams, 0 of 0 links up; $why" 10
	grep -q "ready: 1 tunnels (0 client, 1 target), 0 RDMA listeners (1 waiting for RDMA)" "$W/b.log"
	run "$CTL" -s "$W/a.ctl" status
	assert_line "rdma: $why"
	run ctl_json a status .rdma
	assert_output no-rdma-ucm
	run ctl_json b status .rdma_problem
	assert_output "$why"
	# The tunnel's local socket is bound; a client meanwhile is turned
	# away, as when a link is down.
	port=$(accept_port a echo)
	[ -n "$port" ]
	run client "$port" hello 10
	assert_output ""
	# Both try again and again (a's link, b's RDMA CM), and say it once.
	wait_until 30 at_least 3 count_log a "connecting to"
	wait_until 30 at_least 2 tries b
	[ "$(count_log a "warning: no RDMA yet:")" = 1 ]
	[ "$(count_log b "warning: no RDMA yet:")" = 1 ]
	no_rdma
	# The modules and the devices come: b listens, a's link comes up.
	autoload_back
	rdma_up
	wait_log b "listening for RDMA links on $B:7471" 30
	link_up a echo 60
	through "$port"
	# The same processes, started once; what they said about RDMA.
	[ "$PID_a" = "$pa" ]
	[ "$PID_b" = "$pb" ]
	kill -0 "$pa"
	kill -0 "$pb"
	[ "$(count_log a "ready:")" = 1 ]
	[ "$(count_log b "ready:")" = 1 ]
	for d in a b; do
		grep -q "notice: RDMA is there: the RDMA CM is open" "$W/$d.log"
		# Said once, and again only for another reason (no device
		# yet, between the modules and the devices).
		[ "$(count_log "$d" "warning: $why")" = 1 ]
		run ctl_json "$d" status .rdma
		assert_output ready
	done
	run "$CTL" -s "$W/a.ctl" status
	assert_line "rdma: ready"
	wait_log na "1 of 1 link up" 10
}

@test "systemd: with no RDMA device and rdma_ucm not loaded, both services start and are active, say so in their status, and link once the devices appear, without a restart" {
	rdma_down
	no_rdma
	pa=$(free_port)
	sd_pair "$pa"
	run systemctl start rstreamd@b rstreamd
	assert_success
	# Type=notify: active means READY=1 came.
	run systemctl is-active rstreamd rstreamd@b
	assert_output "active
active"
	# The unit loaded rdma_ucm (modprobe@rdma_ucm.service), so the
	# sandbox has /dev/infiniband; there is no device yet.
	[ -e /sys/module/rdma_ucm ]
	a=$(sd_prop rstreamd MainPID)
	b=$(sd_prop rstreamd@b MainPID)
	[ -e "/proc/$a/root/dev/infiniband/rdma_cm" ]
	run sd_prop rstreamd StatusText
	assert_output --partial "1 tunnel, 0 streams, 0 of 1 link up; no RDMA yet: no RDMA device"
	assert_output --partial "rdma link add rxe0 type rxe netdev IFACE"
	run sd_prop rstreamd@b StatusText
	assert_output --partial "; no RDMA yet: no RDMA device"
	# The devices come; the links follow, in the same processes.
	rdma_up
	wait_until 60 sd_link_up
	through "$pa"
	[ "$(sd_prop rstreamd MainPID)" = "$a" ]
	[ "$(sd_prop rstreamd@b MainPID)" = "$b" ]
	[ "$(sd_prop rstreamd NRestarts)" = 0 ]
	[ "$(sd_prop rstreamd@b NRestarts)" = 0 ]
	# The new devices' nodes in the sandbox, where they may be opened.
	run find "/proc/$a/root/dev/infiniband" -name 'uverbs*'
	assert_line --regexp 'uverbs[0-9]+$'
	for u in rstreamd rstreamd@b; do
		run journalctl -b --no-pager -o cat -u "$u"
		assert_output --partial "RDMA is there: the RDMA CM is open"
		# Said once.  rdma link add makes the device before ib_uverbs
		# gives it a node, and a look in between says that other
		# reason ("no RDMA device libibverbs can use") once more.
		[ "$(grep -c "^no RDMA yet: no RDMA device (rdma link lists" <<<"$output")" = 1 ]
	done
	run rstreamctl status
	assert_line "rdma: ready"
}

@test "package: the .deb installs on a host without RDMA and its service starts, on the shipped file and with a tunnel" {
	deb=$RSTREAMD_BUILDDIR/tests/rstreamd.deb
	[ -e "$deb" ] || skip "no package: tests/deb.sh made none (no debhelper here?)"
	rdma_down
	no_rdma
	systemctl stop rstreamd rstreamd@b 2>/dev/null || true
	# Where the package goes, nothing of make install's may stand in its
	# way: its units and files (systemd would prefer /usr/local's).
	rm -f /etc/rstreamd.conf /usr/local/lib/systemd/system/rstreamd*.service
	systemctl daemon-reload
	# The guest's root is this machine's, a container image whose
	# policy-rc.d keeps packages from starting services; a host has none
	# (the overlay keeps the real one).
	rm -f /usr/sbin/policy-rc.d
	# man-db's trigger would index every manual page on the machine, half
	# of dpkg's time in the emulated guest and nothing of rstreamd's.
	rm -f /var/lib/man-db/auto-update
	run dpkg -i "$deb"
	assert_success
	# The package starts its service (Debian's way), on the file it
	# ships: no tunnel, so no RDMA needed.
	wait_until 30 systemctl is-active -q rstreamd
	[ "$(sd_prop rstreamd MainPID)" != 0 ]
	run /usr/sbin/rstreamctl status
	assert_success
	assert_line "rdma: unused"
	[ "$(sd_status rstreamd Uid | cut -d' ' -f1)" = "$(id -u rstreamd)" ]
	# A tunnel: still no RDMA, still active, and it says what is missing.
	pa=$(free_port)
	cat >/etc/rstreamd.conf <<-EOF
		source = "$A";
		tunnels = ( { name = "pg"; accept = "tcp://127.0.0.1:$pa"; peer = "$B:7471"; } );
	EOF
	run systemctl restart rstreamd
	assert_success
	run systemctl is-active rstreamd
	assert_output active
	run sd_prop rstreamd StatusText
	assert_output --partial "no RDMA yet"
	[ "$(sd_prop rstreamd NRestarts)" = 0 ]
}
