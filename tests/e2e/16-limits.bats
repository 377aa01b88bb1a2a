#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Limits: connect_timeout to targets, idle_timeout, max_links and
# max_pending, and running out of file descriptors.  Each limit is logged
# once per burst and counted, and the daemons keep serving.

load helpers

setup() {
	rs_setup
}

teardown() {
	rs_teardown
}

@test "connect_timeout: a target that does not answer is refused in time; the others flow" {
	echo_target
	# Nobody has this address on the veth's subnet: the SYN goes nowhere.
	conf_b "{ name = \"echo\"; target = \"tcp://127.0.0.1:$tp\"; },
	    { name = \"void\"; target = \"tcp://10.77.0.99:9\"; connect_timeout = 1; }"
	conf_a "{ name = \"echo\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; },
	    { name = \"void\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	start_pair void
	link_up a echo
	run client "$(accept_port a void)" "into the void" 20
	assert_output ""
	wait_log b "tunnel void stream .*cannot connect to target tcp://10.77.0.99:9: no answer in 1 s"
	wait_log a "tunnel void stream .*refused by $B:7471: timed out"
	run client "$(accept_port a echo)" "still served"
	assert_output "still served"
}

@test "idle_timeout: an idle stream is reset, a busy one is not" {
	echo_tunnel echo
	sed -i 's|peer = \(.*\); }|peer = \1; idle_timeout = 2; }|' "$W/a.conf"
	grep -q "idle_timeout = 2" "$W/a.conf"
	start_pair echo
	port=$(accept_port a echo)
	hold_stream "$port"
	# The held stream is stream 1: open before the busy one starts.  (Not
	# the active count: the stream may be idle, and reset, before a poll
	# of it sees it on a loaded machine; the log line stays.)
	wait_log a "tunnel echo stream 1 .*opening over"
	# A line every half second: never idle for 2 s.
	run bash -c "for i in 1 2 3 4 5 6 7 8; do echo tick \$i; sleep 0.5; done |
	    timeout 30 socat -t 5 - TCP:127.0.0.1:$port"
	assert_line "tick 8"
	wait_pid "$cp" 20
	wait_log a "tunnel echo stream 1 .*idle for 2 s; resetting the stream"
	wait_log b "tunnel echo stream .*reset: timed out"
	[ "$(grep -c "idle for 2 s" "$W/a.log")" = 1 ]
}

# bats test_tags=iwarp
@test "max_links: extra links are rejected, logged once per burst, counted; the first keeps working" {
	echo_target
	conf_b "{ name = \"one\"; target = \"tcp://127.0.0.1:$tp\"; },
	    { name = \"two\"; target = \"tcp://127.0.0.1:$tp\"; }"
	sed -i '1i max_links = 1;' "$W/b.conf"
	conf_a "{ name = \"one\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	start_pair one
	# A second daemon's link would be one too many.
	cat >"$W/c.conf" <<EOC
source = "$A";
control = "$W/c.ctl";
tunnels = ( { name = "two"; accept = "tcp://127.0.0.1:0"; peer = "$B:7471"; } );
EOC
	start_daemon c
	wait_log c "tunnel two: link to $B:7471 failed"
	# c retries (back-off from 0.1 s): three rejections come soon.
	wait_until 30 at_least 3 metric rstreamd_links_rejected_total b
	n=$(metric rstreamd_links_rejected_total b)
	# Several rejections, one message per 10 s burst window.
	msgs=$(grep -c "rejected: max_links 1 reached" "$W/b.log")
	[ "$msgs" -ge 1 ]
	[ "$msgs" -le 2 ]
	[ "$n" -gt "$msgs" ]
	run client "$(accept_port a one)" "the first link serves"
	assert_output "the first link serves"
	kill -0 "$PID_b"
}

@test "out of file descriptors: accepting pauses and resumes, logged once per burst" {
	echo_tunnel echo
	start_daemon b
	# Few descriptors: a few dozen clients exhaust them.
	RS_WRAP=(bash -c 'ulimit -n 48 && exec "$@"' ulimit)
	start_daemon a
	link_up a echo
	port=$(accept_port a echo)
	start=$SECONDS
	holders=()
	for i in $(seq 60); do
		hold_stream "$port"
		holders+=("$cp")
	done
	wait_log a "tunnel echo: out of file descriptors" 30
	# Stay exhausted for a while: the pauses over that time are what is
	# counted.  (Not a wait for a condition: with no descriptor left, the
	# daemon cannot take a control connection to be asked.)
	sleep 2
	# Free the descriptors: the daemon is still there and serves again.
	kill "${holders[@]}" 2>/dev/null || true
	kill -0 "$PID_a"
	# The log first, then the counter: pauses go on until the daemon has
	# descriptors again (asking it for the counter takes one), and each
	# is counted before it is logged, so the counter read last covers
	# every pause the log read before it speaks of.
	msgs=$(grep -c "out of file descriptors" "$W/a.log")
	held=$(sed -n 's/.*out of file descriptors.*(\([0-9]*\) more since the last message)$/\1/p' \
	    "$W/a.log" | awk '{ s += $1 } END { print s + 0 }')
	pauses=$(tunnel_metric rstreamd_tunnel_accept_pauses_total a echo)
	elapsed=$((SECONDS - start))
	# A pause every 200 ms at most (fewer in a busy guest), a message per
	# 10 s burst window at most, each later one counting those held back.
	echo "# $pauses pauses, $msgs messages, $held held back, over $elapsed s" >&3
	[ "$pauses" -gt "$msgs" ]
	[ "$msgs" -le $((elapsed / 10 + 1)) ]
	[ $((msgs + held)) -le "$pauses" ]
	run client "$port" "back in business" 60
	assert_output "back in business"
}

@test "ten tunnels to one peer come up with no warning on either side; a busy peer is waited for, not failed" {
	echo_target
	(umask 077; head -c 32 /dev/urandom >"$W/k.key")
	bt= at=
	for i in 0 1 2 3 4 5 6 7 8 9; do
		bt+="${bt:+,} { name = \"t$i\"; target = \"tcp://127.0.0.1:$tp\"; }"
		at+="${at:+,} { name = \"t$i\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	done
	conf_b "$bt"
	conf_a "$at"
	# Keys, so that no warning about keyless links is expected either.
	echo "key_file = \"$W/k.key\";" | tee -a "$W/a.conf" >>"$W/b.conf"
	start_daemon b
	start_daemon a
	for i in 0 1 2 3 4 5 6 7 8 9; do
		link_up a "t$i"
	done
	run grep -E "^rstreamd: (warning|error|critical)" "$W/a.log" "$W/b.log"
	assert_failure
	[ "$(metric rstreamd_links_rejected_total b)" = 0 ]
	run client "$(accept_port a t9)" "the tenth"
	assert_output "the tenth"

	# A peer with a lower limit turns some away as busy (it says so,
	# once per burst): a waits for its links up, and warns of nothing.
	sed -i '1i max_pending_per_addr = 2;' "$W/b.conf"
	run "$CTL" -s "$W/b.ctl" reload
	assert_success
	kill -TERM "$PID_a"
	wait "$PID_a" || true
	start_daemon a
	for i in 0 1 2 3 4 5 6 7 8 9; do
		link_up a "t$i"
	done
	[ "$(metric rstreamd_links_rejected_total b)" -ge 1 ]
	grep -q "rejected: max_pending_per_addr 2 reached" "$W/b.log"
	grep -q "info: tunnel t[0-9]: link to $B:7471: the peer has too many links from here connecting; trying again when one is up" "$W/a.log"
	run grep -E "^rstreamd: (warning|error|critical)" "$W/a.log"
	assert_failure
}
