#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Faults: a peer killed mid-transfer, resets from either end, a target that
# stops reading, a burst of connections.  Each case checks what the client
# and the target see, and that the daemons keep serving.

load helpers

setup() {
	rs_setup
}

teardown() {
	rs_teardown
}

# ring_stalls: how often a's link has waited for ring credit.
ring_stalls() {
	ctl_json a links '.[0].stall_ring'
}

# some_then_quiet: 4 MiB of $W/in, then a minute with nothing more (the
# stream stays open).
some_then_quiet() {
	head -c 4M "$W/in"
	sleep 60
}

# no_streams: neither daemon has a stream open.
no_streams() {
	[ "$(open_streams a)" = 0 ] && [ "$(open_streams b)" = 0 ]
}

# fds_back: both daemons are down to their $base_a/$base_b descriptors.
fds_back() {
	[ "$(fd_count "$PID_a")" -le "$base_a" ] &&
	    [ "$(fd_count "$PID_b")" -le "$base_b" ]
}

@test "the peer is killed with SIGKILL mid-transfer: every client ends in time, the survivor serves again" {
	echo_tunnel echo
	start_pair echo
	port=$(accept_port a echo)
	head -c 16M /dev/urandom >"$W/in"
	cps=()
	for i in 1 2 3; do
		# -t 1: socat exits a second after the connection ends.
		spawn_fed some_then_quiet -- \
		    timeout 120 socat -t 1 - TCP:127.0.0.1:"$port" >/dev/null 2>&1
		cps+=("$!")
	done
	wait_log b "tunnel echo stream 3 .*accepted from 127.0.0.1:[0-9]* over"
	# Bytes in flight when the peer dies.
	wait_until 20 at_least 1 ctl_json b stats '.tunnels[0].bytes_out'
	kill -KILL "$PID_b"
	killed=$(date +%s)
	# Documented bound: about 2 s of keepalive plus 0.6 s of retries
	# (rstreamd(8)); emulation is slow, so allow a generous margin.
	for cp in "${cps[@]}"; do
		wait_pid "$cp" 20
	done
	echo "clients ended $(( $(date +%s) - killed )) s after the kill" >&3
	wait_log a "tunnel echo: link to $B:7471 went down"
	kill -0 "$PID_a"
	n=$(link_ups a echo)
	start_daemon b
	link_up_after a echo "$n"
	run client "$port" "after the crash"
	assert_output "after the crash"
}

@test "the target resets mid-stream: the client sees a reset, not a clean end" {
	tool_tunnel t
	start_pair t
	# The target reads 1000 bytes, then resets the connection; the
	# client, reading, must see a reset.
	run $TOOL probe "$(accept_port a t)" reset
	assert_output "reset"
	# A clean end is passed on as one, for contrast.
	run $TOOL probe "$(accept_port a t)" sink
	assert_output "clean"
	wait_log b "tunnel t stream .*resetting the stream"
	wait_log a "tunnel t stream .*reset: "
	echo_port=$(accept_port a t)
	run client "$echo_port" "echo
next one"
	assert_output "next one"
}

@test "the client resets mid-stream: the target sees a reset, not a clean end" {
	tool_tunnel t
	start_pair t
	$TOOL reset-client "$(accept_port a t)"
	wait_log record "reset" 30
	run cat "$W/record.log"
	refute_output --partial "clean"
	wait_log a "tunnel t stream .*resetting the stream"
	# A clean end is reported as one, for contrast.
	run client "$(accept_port a t)" "record
clean end"
	wait_log record "clean 10" 30
}

@test "a target that stops reading does not slow another stream on the same link" {
	tool_tunnel t
	start_pair t
	port=$(accept_port a t)
	head -c 16M /dev/urandom >"$W/in"
	sink() {
		local s e
		s=$(date +%s%N)
		out=$( (printf 'sink\n'; cat "$W/in") |
		    timeout 120 socat -t 60 - TCP:127.0.0.1:"$port")
		e=$(date +%s%N)
		[ "$out" = 16777216 ] || return 1
		echo $(( (e - s) / 1000000 ))
	}
	alone=$(sink)
	# The stalled stream fills its ring, the peer's socket buffers, and
	# stays stuck; the link carries on.
	stalls=$(ring_stalls)
	spawn_fed tool_feed stall 16M -- \
	    timeout 300 socat -t 300 - TCP:127.0.0.1:"$port" >/dev/null 2>&1
	wait_log a "tunnel t stream 2 .*opening over"
	# Stuck: the stalled stream has filled what it may and waits for
	# ring credit that does not come (counted from before it started).
	wait_until 30 at_least $((stalls + 1)) ring_stalls
	stalled=$(sink)
	echo "16 MiB alone: $alone ms; beside a stalled stream: $stalled ms" >&3
	[ "$stalled" -lt $(( alone * 4 + 3000 )) ]
}

@test "a burst of 1000 connections: none hangs, each is served or refused by a limit, descriptors return" {
	tool_tunnel t
	sed -i 's|peer = \(.*\); }|peer = \1; max_streams = 100; }|' "$W/a.conf"
	start_pair t
	port=$(accept_port a t)
	run client "$port" "echo
warm up"
	assert_output "warm up"
	wait_until 20 no_streams
	base_a=$(fd_count "$PID_a")
	base_b=$(fd_count "$PID_b")
	run bash -c "ulimit -n 4096; $TOOL burst $port 1000 120"
	echo "$output" >&3
	assert_output --regexp "^served [0-9]+ refused [0-9]+ hung 0$"
	served=$(echo "$output" | cut -d' ' -f2)
	refused=$(echo "$output" | cut -d' ' -f4)
	[ $(( served + refused )) = 1000 ]
	[ "$served" -ge 100 ]
	# Every refusal was a limit, and said so.
	if [ "$refused" -gt 0 ]; then
		grep -q "stream limit 100 reached" "$W/a.log"
	fi
	# Back to the baseline once everything has closed.
	wait_until 20 fds_back || true
	[ "$(fd_count "$PID_a")" -le "$base_a" ]
	[ "$(fd_count "$PID_b")" -le "$base_b" ]
	run client "$port" "echo
after the burst"
	assert_output "after the burst"
}
