#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Worker threads (workers = N): each link, with its streams, runs on one
# worker, given out in turn; two tunnels' links land on two workers, which
# both carry bytes at once; reloads and rstreamctl work meanwhile; and
# workers = 1 runs everything on the daemon's one thread.  (Every other
# e2e file runs with the default, one worker per CPU of the guest: 2.)

load helpers

setup() {
	rs_setup
}

teardown() {
	rs_teardown
}

# worker_ticks PID N: CPU ticks (user + system) worker thread N of PID has
# used, found by its name (rstreamd-wN).
worker_ticks() {
	local t
	for t in /proc/"$1"/task/*; do
		[ "$(cat "$t/comm")" = "rstreamd-w$2" ] || continue
		awk '{ print $14 + $15 }' "$t/stat"
		return 0
	done
	echo "no thread rstreamd-w$2 in $1" >&2
	return 1
}

# workers_of NAME: the workers NAME's links run on, sorted, one line.
workers_of() {
	ctl_json "$1" links '[.[].worker] | sort | map(tostring) | join(" ")'
}

# bulk PORT NAME MIB: send MIB MiB of random bytes through PORT (an echo
# tunnel) and keep what comes back, in the background; its PID is appended
# to $bulk_pids.
bulk() {
	head -c "${3}M" /dev/urandom >"$W/$2.in"
	spawn timeout 300 socat -t 60 - TCP:127.0.0.1:"$1" <"$W/$2.in" \
	    >"$W/$2.out" 2>"$W/$2.err"
	bulk_pids+=("$!")
}

@test "workers = 2: two tunnels' links run on two workers, both carry bytes at once, intact, through reloads" {
	echo_target
	conf_b "{ name = \"w1\"; target = \"tcp://127.0.0.1:$tp\"; },
	    { name = \"w2\"; target = \"tcp://127.0.0.1:$tp\"; }"
	conf_a "{ name = \"w1\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; },
	    { name = \"w2\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	sed -i '1i workers = 2;' "$W/a.conf" "$W/b.conf"
	start_pair w1
	link_up a w2
	grep -q "control socket .*, 2 workers$" "$W/a.log"
	[ "$(ctl_json a status .workers)" = 2 ]
	run "$CTL" -s "$W/b.ctl" status
	assert_output --partial "workers: 2"
	# Two links on each side, one per worker.
	wait_ctl b links 'length' 2
	[ "$(workers_of a)" = "1 2" ]
	[ "$(workers_of b)" = "1 2" ]
	a1=$(worker_ticks "$PID_a" 1)
	a2=$(worker_ticks "$PID_a" 2)
	b1=$(worker_ticks "$PID_b" 1)
	b2=$(worker_ticks "$PID_b" 2)
	# 16 MiB through each tunnel and back (echo), at once.
	bulk_pids=()
	bulk "$(accept_port a w1)" one 16
	bulk "$(accept_port a w2)" two 16
	wait_until 120 at_least 1048576 stat -c %s "$W/one.out"
	wait_until 120 at_least 1048576 stat -c %s "$W/two.out"
	# Reloads (a new tunnel on each side) while both stream.
	conf_b "{ name = \"w1\"; target = \"tcp://127.0.0.1:$tp\"; },
	    { name = \"w2\"; target = \"tcp://127.0.0.1:$tp\"; },
	    { name = \"w3\"; target = \"tcp://127.0.0.1:$tp\"; }"
	conf_a "{ name = \"w1\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; },
	    { name = \"w2\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; },
	    { name = \"w3\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	sed -i '1i workers = 2;' "$W/a.conf" "$W/b.conf"
	run "$CTL" -s "$W/b.ctl" reload
	assert_success
	run "$CTL" -s "$W/a.ctl" reload
	assert_success
	link_up a w3
	[ "$(client "$(accept_port a w3)" "third")" = "third" ]
	for p in "${bulk_pids[@]}"; do
		wait_pid "$p" 240
	done
	[ "$(sha "$W/one.in")" = "$(sha "$W/one.out")" ]
	[ "$(sha "$W/two.in")" = "$(sha "$W/two.out")" ]
	# Both workers of each daemon moved bytes (CPU time went up on each).
	[ "$(worker_ticks "$PID_a" 1)" -gt "$a1" ]
	[ "$(worker_ticks "$PID_a" 2)" -gt "$a2" ]
	[ "$(worker_ticks "$PID_b" 1)" -gt "$b1" ]
	[ "$(worker_ticks "$PID_b" 2)" -gt "$b2" ]
	# Counted once each, and nothing left open.
	[ "$(ctl_json a stats '.tunnels[] | select(.tunnel == "w1") | .bytes_in')" = 16777216 ]
	[ "$(ctl_json a stats '.tunnels[] | select(.tunnel == "w2") | .bytes_out')" = 16777216 ]
	wait_ctl a status .streams 0
	wait_ctl b status .streams 0
	run grep "^rstreamd: error" "$W/a.log" "$W/b.log"
	assert_failure
}

@test "workers = 1: one thread does everything; a change of workers waits for a restart" {
	echo_tunnel one
	sed -i '1i workers = 1;' "$W/a.conf" "$W/b.conf"
	start_pair one
	grep -q "control socket .*, 1 worker$" "$W/a.log"
	[ "$(ctl_json b status .workers)" = 1 ]
	[ "$(workers_of a)" = 1 ]
	run grep -l "rstreamd-w" /proc/"$PID_a"/task/*/comm
	assert_failure
	[ "$(client "$(accept_port a one)" "hello")" = "hello" ]
	sed -i 's/^workers = 1;/workers = 2;/' "$W/a.conf"
	run "$CTL" -s "$W/a.ctl" reload
	assert_success
	wait_log a "workers changed; that takes effect when rstreamd restarts (still 1)"
	[ "$(ctl_json a status .workers)" = 1 ]
	[ "$(client "$(accept_port a one)" "again")" = "again" ]
}
