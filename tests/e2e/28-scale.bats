#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Scale: ten thousand streams on one link, and a hundred links to one
# daemon, each stream carrying its own bytes, checked both ways
# (tests/bench/swarm: an epoll echo server and client).  The figures (open
# rate, memory per idle stream and per link, a round trip with all open)
# go to the TAP output as comments; nothing here asserts a timing.

load helpers

setup() {
	rs_setup
	SWARM=${RSTREAMD_BUILDDIR:?}/tests/bench/swarm
	# Two descriptors per stream on each side: the hard limit allows it,
	# and the daemons (and swarm) raise the soft limit of 1024 to it.
	ulimit -Hn 65536
	ulimit -Sn 1024
}

teardown() {
	rs_teardown
}

# say TEXT: a figure for the TAP output.
say() {
	echo "# $*" >&3
}

@test "ten thousand streams on one link: opened, every byte checked both ways, held, one more on top, closed, nothing left" {
	tp=$(free_port)
	spawn "$SWARM" serve "$tp"
	wait_port "$tp"
	conf_b "{ name = \"many\"; target = \"tcp://127.0.0.1:$tp\"; max_streams = 12000; ring_min = 4096; }"
	conf_a "{ name = \"many\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; max_streams = 12000; ring_min = 4096; }"
	start_pair many
	run grep "^Max open files" "/proc/$PID_a/limits"
	assert_output --regexp '^Max open files +65536 +65536 +files *$'
	ra=$(rss_kib "$PID_a")
	rb=$(rss_kib "$PID_b")
	spawn "$SWARM" open "$(accept_port a many)" 10000 1000 "$W/go" >"$W/swarm.out" 2>&1
	sw=$!
	wait_until 900 grep -q "^holding" "$W/swarm.out"
	wait_ctl a status '.streams' 10000
	wait_ctl b status '.streams' 10000
	[ "$(ctl_json a status '.links_up')" = 1 ]
	[ "$(ctl_json b status '.links_up')" = 1 ]
	# Idle streams hold their 4096-byte rings, two per stream and side.
	wait_ctl a stats '.tunnels[0].pinned' 81920000
	wait_ctl b stats '.tunnels[0].pinned' 81920000
	ra2=$(rss_kib "$PID_a")
	rb2=$(rss_kib "$PID_b")
	say "$(grep -E '^(opened|one more|round trip)' "$W/swarm.out" | tr '\n' ';')"
	say "per idle stream: a $(((ra2 - ra) * 1024 / 10000)) B RSS, b $(((rb2 - rb) * 1024 / 10000)) B RSS; 8192 B of rings pinned on each side"
	touch "$W/go"
	wait_pid "$sw" 900
	run cat "$W/swarm.out"
	assert_line --regexp '^closed 10000 streams in .*, every byte checked$'
	assert_line --regexp '^opened 10000 streams in .*, every byte checked$'
	wait_ctl a status '.streams' 0 60
	wait_ctl b status '.streams' 0 60
	[ "$(ctl_json a stats '.tunnels[0].pinned')" = 0 ]
	[ "$(ctl_json b stats '.tunnels[0].pinned')" = 0 ]
	[ "$(ctl_json a stats '.tunnels[0].opened')" = 10001 ]
	[ "$(ctl_json b stats '.tunnels[0].failed')" = 0 ]
}

@test "a hundred links to one daemon: each up, streams on every one, counted and freed" {
	tp=$(free_port)
	spawn "$SWARM" serve "$tp"
	wait_port "$tp"
	ta="" tb=""
	for i in $(seq 1 100); do
		tb+="${tb:+, }{ name = \"t$i\"; target = \"tcp://127.0.0.1:$tp\"; }"
		ta+="${ta:+, }{ name = \"t$i\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	done
	conf_b "$tb"
	sed -i '1i max_links = 128; max_pending = 128; max_pending_per_addr = 128; max_unauth_links = 128;' "$W/b.conf"
	conf_a "$ta"
	start_daemon b
	rb=$(rss_kib "$PID_b")
	start_daemon a
	wait_ctl a status '.links_up' 100 300
	wait_ctl b status '.links_up' 100 60
	rb2=$(rss_kib "$PID_b")
	say "per link: b $(((rb2 - rb) / 100)) kB RSS"
	ports=$(ctl_json a tunnels '.[].address' | sed -n 's/^tcp:.*:\([0-9]*\)$/\1/p' | paste -sd,)
	[ "$(tr , '\n' <<<"$ports" | wc -l)" = 100 ]
	spawn "$SWARM" open "$ports" 1000 4000 "$W/go" >"$W/swarm.out" 2>&1
	sw=$!
	wait_until 600 grep -q "^holding" "$W/swarm.out"
	wait_ctl b status '.streams' 1000
	# Ten on each tunnel, on each side.
	run ctl_json b stats '[.tunnels[] | select(.active == 10)] | length'
	assert_output 100
	say "$(grep -E '^(opened|one more|round trip)' "$W/swarm.out" | tr '\n' ';')"
	touch "$W/go"
	wait_pid "$sw" 600
	run cat "$W/swarm.out"
	assert_line --regexp '^closed 1000 streams in .*, every byte checked$'
	wait_ctl a status '.streams' 0 60
	wait_ctl b status '.streams' 0 60
	run ctl_json b stats '[.tunnels[].pinned] | add'
	assert_output 0
	[ "$(ctl_json b status '.links_up')" = 100 ]
}
