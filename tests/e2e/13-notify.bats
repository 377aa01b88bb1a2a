#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The systemd notify protocol, checked on a real notify socket: READY=1
# only when the daemon is ready, readable STATUS= lines, WATCHDOG=1 when
# asked for, STOPPING=1 at the end.

load helpers

setup() {
	rs_setup
	notify_socket
}

# watchdogs_at_least N: N or more WATCHDOG=1 messages have arrived.
watchdogs_at_least() {
	[ "$(grep -o 'WATCHDOG=1' "$W/notify.log" | wc -l)" -ge "$1" ]
}

# notify_flushed: everything sent to the notify socket so far is in
# $W/notify.log (a marker datagram sent now arrives after it).
notify_flushed() {
	echo "MARKER=$$" | socat -u - UNIX-SENDTO:"$W/notify.sock"
	wait_log notify "MARKER=$$" 10
}

teardown() {
	rs_teardown
}

@test "systemd notify: READY with STATUS, STATUS follows the links, WATCHDOG, STOPPING" {
	echo_tunnel echo
	start_daemon b
	start_daemon a NOTIFY_SOCKET="$W/notify.sock" WATCHDOG_USEC=600000
	wait_log notify "READY=1" 10
	wait_log notify "STATUS=1 tunnel, 0 streams, [01] of 1 link up" 10
	# READY came after the listener was bound: its address was logged.
	run grep "tunnel echo: accepting on tcp://127.0.0.1:" "$W/a.log"
	assert_success
	link_up a echo
	wait_log notify "STATUS=1 tunnel, 0 streams, 1 of 1 link up" 10
	wait_log notify "WATCHDOG=1" 10
	# Every 300 ms: three of them come soon.
	wait_until 10 watchdogs_at_least 3
	grep -q "systemd watchdog: WATCHDOG=1 every 300 ms" "$W/a.log"
	kill -TERM "$PID_a"
	wait_pid "$PID_a" 20
	wait_log notify "STOPPING=1" 10
}

@test "systemd notify: no READY when the RDMA listener cannot start" {
	conf_b "{ name = \"echo\"; target = \"tcp://127.0.0.1:9\"; }"
	# An address no RDMA device has.
	sed -i "s/^listen = .*/listen = \"10.77.0.99:7471\";/" "$W/b.conf"
	run env NOTIFY_SOCKET="$W/notify.sock" "$RSTREAMD_BIN" -f -c "$W/b.conf"
	assert_failure 1
	assert_output --partial "cannot listen for RDMA links on 10.77.0.99"
	notify_flushed
	run grep -c "READY=1" "$W/notify.log"
	assert_output "0"
}
