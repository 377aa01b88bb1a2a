#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Socket activation and the watchdog under a real systemd as PID 1 (the
# runner's systemd guest, as for 23-systemd.bats), through `make install`'s
# units.  rstreamd.service is the client side, on /etc/rstreamd.conf; its
# tunnel pg takes its listening socket from the installed example
# rstreamd-pg.socket, copied as it is (127.0.0.1:15432, FileDescriptorName=pg).
# The instance rstreamd@b, on /etc/rstreamd/b.conf, serves pg.  A client
# that connects before the daemon runs, and one that connects while it
# restarts, wait in the socket's backlog and are served.  A daemon stopped
# with SIGSTOP is killed by the watchdog and restarted; a running one is
# left alone.  The daemon that takes the sockets is the unprivileged user
# rstreamd, and a socket unit gives it a port below 1024, which it could
# not bind itself.

load helpers

setup_file() {
	in_systemd_guest || return 0
	sd_install
	# The example socket unit as it is installed, as rstreamd(8)'s "Socket
	# activation" copies it.  Once for every test: a reload runs every
	# generator again, seconds under emulation.
	examples=$(sed -n 's/^prefix = //p' "$RSTREAMD_BUILDDIR/Makefile")/share/doc/rstreamd/examples
	cp "$examples/rstreamd-pg.socket" /etc/systemd/system/
	systemctl daemon-reload
}

setup() {
	rs_setup
	sd_pair 15432
	run systemctl start rstreamd@b
	assert_success
}

teardown() {
	# Whether the socket is enabled matters only at boot: no reload.
	systemctl disable --now --no-reload rstreamd-pg.socket 2>/dev/null || true
	systemctl stop rstreamd rstreamd@b 2>/dev/null || true
	if [ -z "${BATS_TEST_COMPLETED:-}" ]; then
		journalctl -b --no-pager -u rstreamd -u rstreamd@b \
		    -u rstreamd-pg.socket | tail -60 | sed 's/^/# /' >&3
	fi
	local reload=
	if [ -e /etc/systemd/system/rstreamd-low.socket ]; then
		systemctl stop rstreamd-low.socket 2>/dev/null || true
		rm -f /etc/systemd/system/rstreamd-low.socket
		reload=1
	fi
	if [ -e /etc/systemd/system/rstreamd.service.d ]; then
		rm -rf /etc/systemd/system/rstreamd.service.d
		reload=1
	fi
	[ -z "$reload" ] || systemctl daemon-reload
	systemctl reset-failed rstreamd rstreamd@b 2>/dev/null || true
	rs_teardown
}

# clients_in N: N or more client connections to 127.0.0.1:15432 are
# established (the kernel's part, whether or not anyone accepted them).
clients_in() {
	[ "$(ss -Htn state established "dport = :15432" | wc -l)" -ge "$1" ]
}

# through NAME MIB: MIB MiB of $W/NAME.in sent through the tunnel come
# back intact.
through() {
	head -c "$2M" /dev/urandom >"$W/$1.in"
	timeout 120 socat -t 30 - TCP:127.0.0.1:15432 <"$W/$1.in" >"$W/$1.out"
	[ "$(sha "$W/$1.in")" = "$(sha "$W/$1.out")" ]
}

# socket_up: tunnel pg's socket unit listening.
socket_up() {
	run systemctl is-active rstreamd-pg.socket
	assert_output active
	ss -Htln "sport = :15432" | grep -q .
}

# pinged N: systemd has seen N or more distinct watchdog pings from
# rstreamd since the first call (WatchdogTimestamp moves with each).
pinged() {
	local t
	t=$(sd_prop rstreamd WatchdogTimestampMonotonic)
	[ "$t" = "$(tail -n 1 "$W/pings" 2>/dev/null)" ] || echo "$t" >>"$W/pings"
	[ "$(wc -l <"$W/pings")" -ge "$1" ]
}

@test "socket activation: a client that connects before rstreamd runs waits in the socket's backlog and is served; the daemon says it took the socket" {
	# As rstreamd(8)'s "Socket activation" does.
	run systemctl stop rstreamd
	assert_success
	run systemctl enable --now rstreamd-pg.socket
	assert_success
	socket_up
	[ "$(sd_prop rstreamd TriggeredBy)" = rstreamd-pg.socket ]
	run systemctl is-active rstreamd
	assert_output inactive
	# The connection is made before anything runs that could accept it
	# (it also starts the service: that is what the socket unit is for).
	head -c 4M /dev/urandom >"$W/c.in"
	spawn timeout 120 socat -t 30 - TCP:127.0.0.1:15432 <"$W/c.in" >"$W/c.out"
	cl=$!
	wait_until 20 clients_in 1
	run systemctl start rstreamd
	assert_success
	run systemctl is-active rstreamd
	assert_output active
	wait_pid "$cl" 120
	[ "$(sha "$W/c.in")" = "$(sha "$W/c.out")" ]
	pid=$(sd_prop rstreamd MainPID)
	run journalctl -b --no-pager -o cat _PID="$pid"
	assert_output --partial "tunnel pg: accepting on tcp://127.0.0.1:15432 (socket from systemd), peer"
	refute_output --partial "matches no client tunnel"
	# systemd handed the socket to the user rstreamd, with no capability.
	sd_unprivileged rstreamd
}

@test "socket activation below 1024: the socket unit binds 127.0.0.1:998 and the unprivileged rstreamd, which could not, serves it" {
	sed -i 's|tcp://127.0.0.1:15432|tcp://127.0.0.1:998|' /etc/rstreamd.conf
	# Without the socket unit: refused, naming the fix.
	run systemctl start rstreamd
	assert_failure
	run journalctl -b --no-pager -o cat -u rstreamd
	assert_output --partial 'cannot listen on tcp://127.0.0.1:998: Permission denied (a port below 1024 needs CAP_NET_BIND_SERVICE'
	systemctl stop rstreamd
	systemctl reset-failed rstreamd
	# The example, on another port.
	sed -e 's/^ListenStream=.*/ListenStream=127.0.0.1:998/' \
	    /etc/systemd/system/rstreamd-pg.socket \
	    >/etc/systemd/system/rstreamd-low.socket
	systemctl daemon-reload
	run systemctl start rstreamd-low.socket
	assert_success
	run systemctl start rstreamd
	assert_success
	wait_until 60 sd_link_up
	sd_unprivileged rstreamd
	head -c 2M /dev/urandom >"$W/low.in"
	timeout 120 socat -t 30 - TCP:127.0.0.1:998 <"$W/low.in" >"$W/low.out"
	[ "$(sha "$W/low.in")" = "$(sha "$W/low.out")" ]
	run journalctl -b --no-pager -o cat _PID="$(sd_prop rstreamd MainPID)"
	assert_output --partial "tunnel pg: accepting on tcp://127.0.0.1:998 (socket from systemd), peer"
}

@test "socket activation: systemctl restart keeps the listening socket; a client that connects while the old daemon drains is served by the new one" {
	run systemctl start rstreamd-pg.socket
	assert_success
	socket_up
	run systemctl start rstreamd
	assert_success
	wait_until 60 sd_link_up
	pid1=$(sd_prop rstreamd MainPID)
	# A stream open across the restart keeps the old daemon draining.
	paced_stream 15432 r 4
	wait_until 30 clients_in 1
	wait_until 30 at_least 1 open_streams
	run systemctl restart --no-block rstreamd
	assert_success
	wait_until 30 sd_state_is rstreamd deactivating
	head -c 2M /dev/urandom >"$W/c.in"
	spawn timeout 120 socat -t 30 - TCP:127.0.0.1:15432 <"$W/c.in" >"$W/c.out"
	cl=$!
	wait_until 20 clients_in 2
	# It came in during the restart: the old daemon is still draining.
	sd_state_is rstreamd deactivating
	touch "$W/r.go"
	wait_pid "$sp" 120
	[ "$(sha "$W/r.in")" = "$(sha "$W/r.out")" ]
	wait_pid "$cl" 120
	[ "$(sha "$W/c.in")" = "$(sha "$W/c.out")" ]
	run systemctl is-active rstreamd
	assert_output active
	pid2=$(sd_prop rstreamd MainPID)
	[ "$pid2" != "$pid1" ]
	run journalctl -b --no-pager -o cat _PID="$pid2"
	assert_output --partial "tunnel pg: accepting on tcp://127.0.0.1:15432 (socket from systemd), peer"
	assert_output --partial "tunnel pg stream 1 (client"
}

@test "watchdog: with WatchdogSec=3s a running rstreamd stays up; stopped with SIGSTOP, it is killed on the watchdog's timeout and restarted, and traffic flows again" {
	mkdir -p /etc/systemd/system/rstreamd.service.d
	printf '[Service]\nWatchdogSec=3s\n' \
	    >/etc/systemd/system/rstreamd.service.d/watchdog.conf
	systemctl daemon-reload
	run systemctl start rstreamd
	assert_success
	run sd_prop rstreamd WatchdogUSec
	assert_output 3s
	wait_until 60 sd_link_up
	pid1=$(sd_prop rstreamd MainPID)
	n0=$(sd_prop rstreamd NRestarts)
	# Running: it pings every 1.5 s; 7 pings span 3 intervals.
	wait_until 30 pinged 7
	[ "$(sd_prop rstreamd NRestarts)" = "$n0" ]
	[ "$(sd_prop rstreamd MainPID)" = "$pid1" ]
	run systemctl is-active rstreamd
	assert_output active
	through ok 1
	# Stopped: no pings; systemd kills it (SIGABRT) and Restart=on-failure
	# starts a new one.
	kill -STOP "$pid1"
	wait_until 90 at_least $((n0 + 1)) sd_prop rstreamd NRestarts
	wait_until 60 sd_state_is rstreamd active
	pid2=$(sd_prop rstreamd MainPID)
	[ "$pid2" != "$pid1" ]
	run kill -0 "$pid1"
	assert_failure
	run journalctl -b --no-pager -o cat -u rstreamd
	assert_output --partial "Watchdog timeout"
	assert_output --partial "Failed with result 'watchdog'"
	wait_until 60 sd_link_up
	through after 1
}
