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
	# Still retrying, still alive.  (Each attempt shows "connecting"
	# until it is refused: wait for the state between attempts.)
	wait_ctl a links '.[0].state' retrying
	kill -0 "$PID_a"
	start_daemon b
	link_up a echo 30
	run client "$port" "now it works" 30
	assert_output "now it works"
}

@test "a link to a dead peer says why, since when and how often; check says so until it is up" {
	echo_tunnel echo
	t0=$(date -u +%s)
	start_daemon a
	wait_log a "tunnel echo: link to $B:7471 failed: .*retrying"
	# Why: a reason the log gave for a failure (-v logs each), in links
	# and in tunnels.
	why=$(ctl_json a links '.[0].last_error')
	[ -n "$why" ]
	grep -qF "tunnel echo: link to $B:7471 failed: $why; retrying" "$W/a.log"
	why=$(ctl_json a tunnels '.[0].link_error')
	grep -qF "tunnel echo: link to $B:7471 failed: $why; retrying" "$W/a.log"
	# Since when: a UTC time, from this test's start, and no later than now.
	since=$(ctl_json a links '.[0].down_since')
	run date -u -d "$since" +%Y-%m-%dT%H:%M:%SZ
	assert_output "$since"
	[ "$(date -u -d "$since" +%s)" -ge "$t0" ]
	[ "$(date -u -d "$since" +%s)" -le "$(date -u +%s)" ]
	# The failures grow with each attempt; since when stays.
	n=$(ctl_json a links '.[0].failures')
	[ "$n" -ge 1 ]
	wait_until 30 at_least $((n + 2)) ctl_json a links '.[0].failures'
	run ctl_json a links '.[0].down_since'
	assert_output "$since"
	run ctl_json a links ".[0].failures_total >= $((n + 2))"
	assert_output true
	# Between attempts: the back-off it waits, doubled twice by now.
	wait_ctl a links '.[0] | .state == "retrying" and .retry_wait_ms >= 400 and .retry_wait_ms <= 2000' true
	run ctl_json a tunnels ".[0] | (.link_failures >= $((n + 2))) and .link_down_since == \"$since\""
	assert_output true
	# The table shows them by default, the message last.
	run "$CTL" -s "$W/a.ctl" links
	assert_success
	assert_line --index 0 --regexp '  FAILS +DOWN +ERROR$'
	assert_line --index 1 --regexp "^$B:7471 +echo +(retrying|connecting) .* [0-9]+ +[0-9][0-9hdms]* +[a-z].*[a-z)]\$"
	# check: status 3 and a line about the tunnel; -q: the status alone.
	run "$CTL" -s "$W/a.ctl" check
	assert_failure 3
	assert_output --regexp "^tunnel echo: link to $B:7471 (retrying|connecting), not up for [0-9hdms]+, [0-9]+ failures in a row: [a-z].*[a-z)]\$"
	why=${output##*in a row: }
	grep -qF "tunnel echo: link to $B:7471 failed: $why; retrying" "$W/a.log"
	run "$CTL" -q -s "$W/a.ctl" check echo
	assert_failure 3
	assert_output ""
	run ctl_json a check '"\(.up) \(.checked) \(.down) \(.tunnels[0].tunnel)"'
	assert_output "false 1 1 echo"
	run "$CTL" -s "$W/a.ctl" check nosuch
	assert_failure 1
	assert_output "rstreamctl: no tunnel called 'nosuch' (check takes client tunnels' names)"
	# Up: nothing to say any more, but the failures in all.
	start_daemon b
	link_up a echo 30
	run "$CTL" -s "$W/a.ctl" check
	assert_success
	assert_output "every link is up (1 tunnel)"
	run ctl_json a links '.[0] | "\(.failures) \(.down_since) \(.retry_wait_ms) [\(.last_error)]"'
	assert_output "0 null null []"
	run ctl_json a links ".[0].failures_total >= $((n + 2))"
	assert_output true
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
	# Down: since when, why, and the going down as a failure.
	wait_ctl a links '.[0] | .down_since != null and .last_error != "" and .failures >= 1' true
	wait_pid "$cp" 20
	n=$(link_ups a echo)
	start_daemon b
	link_up_after a echo "$n"
	wait_ctl a links '.[0] | "\(.state) \(.failures) \(.down_since)"' "up 0 null"
	run client "$port" "back again" 30
	assert_output "back again"
}
