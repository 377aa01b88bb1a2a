#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The peer daemon is not running: clients are closed, the link keeps being
# retried, and streams flow as soon as the peer starts.

load helpers

setup() {
	rs_setup
}

teardown() {
	rs_teardown
}

@test "a peer that is not running: clients closed, link retried, streams flow once it starts" {
	echo_tunnel echo
	start_daemon a
	wait_log a "tunnel echo: link to $B:7471 failed: .*retrying"
	port=$(accept_port a echo)
	start=$(date +%s)
	run client "$port" "nobody home" 20
	assert_output ""
	[ $(($(date +%s) - start)) -lt 10 ]
	run grep -E "tunnel echo stream [0-9]+ .*(link to $B:7471 is down|failed).*closing the client" "$W/a.log"
	assert_success
	# Still retrying, still alive.
	[ "$(ctl_json a links '.[0].state')" = retrying ]
	kill -0 "$PID_a"
	start_daemon b
	link_up a echo 30
	run client "$port" "now it works" 30
	assert_output "now it works"
}

@test "the link is reset when the peer stops; clients see the end; it comes back" {
	echo_tunnel echo
	# The stop drains for a second, then ends the stream still open.
	sed -i '1i drain_time = 1;' "$W/b.conf"
	start_pair echo
	port=$(accept_port a echo)
	# A long-lived client: its connection ends when the peer goes.
	hold_stream "$port"
	wait_log a "tunnel echo stream .*opening over"
	wait_log b "tunnel echo stream .*accepted from 127.0.0.1:[0-9]* over"
	kill -TERM "$PID_b"
	wait_pid "$PID_b" 20
	wait_log a "tunnel echo: link to $B:7471 went down"
	wait_pid "$cp" 20
	n=$(link_ups a echo)
	start_daemon b
	link_up_after a echo "$n"
	run client "$port" "back again" 30
	assert_output "back again"
}
