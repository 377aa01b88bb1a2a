#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# iWARP's connection rules, on Soft-iWARP devices (the runner's
# SOFTROCE_DRIVER=siw, which tests/run-bats sets for *-iwarp.bats; on
# other devices the tests skip): a link comes up, its hellos carried as
# MPA private data of the length sent, on two lanes whose switches wait
# for FENCEs to be answered, its receives posted before the connection is
# established; a stream's order holds beside bulk on a path that queues
# (the fences keep a lane from overtaking the other); a refusal's note
# reaches the connecting side (an MPA reject, which the RDMA CM reports
# as a reset): the serving daemon's refusal and an older peer's version;
# and the service level and TOS that Soft-iWARP ignores, said by the
# configuration check and once at connect, at their lines, the link up
# all the same.  One pair of daemons for the file: a's tunnel echo (with
# a key, an SL and a TOS) links to b; its tunnel nokey has no key, which
# b refuses; its tunnel old goes to the hostile old peer (version 3).

load helpers

setup_file() {
	iwarp || return 0
	rs_setup
	W=$BATS_FILE_TMPDIR
	(umask 077; head -c 32 /dev/urandom >"$W/k.key")
	echo_target
	op=$(free_port)
	echo "$op" >"$W/op"
	spawn "$HOSTILE" "$A" "$B" "$op" old-peer 3 >"$W/old.out" 2>&1
	wait_until 20 grep -q "old-peer: listening" "$W/old.out"
	conf_b "{ name = \"echo\"; target = \"tcp://127.0.0.1:$tp\";
	    key_file = \"$W/k.key\"; }"
	# The lines of service_level (6) and traffic_class (7) are the tests'.
	cat >"$W/a.conf" <<-EOC
	source = "$A";
	control = "$W/a.ctl";
	tunnels = (
	  { name = "echo"; accept = "tcp://127.0.0.1:0"; peer = "$B:7471";
	    key_file = "$W/k.key";
	    service_level = 3;
	    traffic_class = 32; },
	  { name = "nokey"; accept = "tcp://127.0.0.1:0"; peer = "$B:7471"; },
	  { name = "old"; accept = "tcp://127.0.0.1:0"; peer = "$B:$op";
	    resume_time = 5; resume_without_key = true; min_version = 2; } );
	EOC
	start_daemon b
	start_daemon a
	printf '%s\n' "${RS_PIDS[@]}" >"$W/pids"
}

teardown_file() {
	local pid i
	[ -f "$BATS_FILE_TMPDIR/pids" ] || return 0
	while read -r pid; do
		kill -TERM "$pid" 2>/dev/null || true
	done <"$BATS_FILE_TMPDIR/pids"
	for ((i = 0; i < 50; i++)); do
		while read -r pid; do
			kill -0 "$pid" 2>/dev/null && continue 2
		done <"$BATS_FILE_TMPDIR/pids"
		return 0
	done
	while read -r pid; do
		kill -KILL "$pid" 2>/dev/null || true
	done <"$BATS_FILE_TMPDIR/pids"
}

setup() {
	SLOW=()
	iwarp || skip "needs iWARP devices (the runner's SOFTROCE_DRIVER=siw, which tests/run-bats sets for *-iwarp.bats)"
	rs_setup
	W=$BATS_FILE_TMPDIR
	op=$(cat "$W/op")
	DA=$RSTREAMD_TEST_DEV_A
}

teardown() {
	local d
	rs_teardown
	for d in "${SLOW[@]}"; do
		tc qdisc del dev "$d" root || true
	done
}

# iWARP completes a work request once TCP took its bytes, so a stream's
# next one on the other lane could arrive first: lane 1 opens, and a
# stream changes lanes, only once the peer answered a FENCE on the old lane.
@test "siw: a link comes up on two lanes, lane 0 fenced, as both daemons say and list; a stream goes through" {
	link_up a echo
	wait_log a "info: tunnel echo: link to $B:7471 is up (device $DA, protocol version 12, 2 lanes, no immediates, .*, authenticated; port 1, iWARP, path MTU [0-9]*, QP [0-9]*, lane 1 QP [0-9]*)$"
	wait_log b "info: link from $A:[0-9]* authenticated (port 1, iWARP, .*; protocol version 12, 2 lanes, no immediates)"
	run client "$(accept_port a echo)" "over iWARP"
	assert_output "over iWARP"
	run ctl_json a links '.[] | select(.tunnel == "echo") | "\(.state) \(.transport) \(.device) \(.lanes) \(.lane1_qpn | type) \(.service_level)"'
	assert_output "up iWARP $DA 2 number null"
	run ctl_json b links '.[] | select(.state == "up") | "\(.peer) \(.transport) \(.lanes)"'
	assert_output --regexp "^$A:[0-9]+ iWARP 2$"
	# a sent its proof on lane 0 before it knew b: its lane 1 opened
	# only once b answered a FENCE after it.  (b may have sent nothing
	# on lane 0 before it knew a, and then fences nothing.)
	run ctl_json a links '.[] | select(.tunnel == "echo") | .lane0_fences > 0'
	assert_output true
	run "$CTL" -s "$W/a.ctl" metrics
	assert_line --regexp '^rstreamd_link_lane_fences_total\{tunnel="echo",peer="[^"]*",direction="out",lane="0"\} [1-9][0-9]*$'
	run "$CTL" -s "$W/b.ctl" metrics
	assert_line --regexp '^rstreamd_link_lane_fences_total\{tunnel="",peer="[^"]*",direction="in",lane="0"\} [0-9]+$'
}

# slow_path: both veths send at 20 Mbit/s, 2 ms late, so bulk streams'
# bytes wait in their TCP connection's buffer long after their WRs
# completed (undone in teardown).  Only the runner's own veth pair: a
# real fabric's interfaces are never slowed (the test skips).
slow_path() {
	local n nets=()
	for n in "$(netdev_of "$A")" "$(netdev_of "$B")"; do
		[ -n "$n" ] && ip -d -o link show "$n" | grep -q ' veth ' ||
		    skip "slows the fabric down: only on the runner's own veth pair"
		nets+=("$n")
	done
	for n in "${nets[@]}"; do
		SLOW+=("$n")
		tc qdisc replace dev "$n" root netem delay 2ms rate 20mbit
	done
}

# Were a stream's records and small writes to move to the other lane
# without a fence, they would pass its WRITEs still queued in the first
# connection: a DATA record or a RING_AT ahead of the bytes before it,
# which the peer takes for a protocol violation and ends the link.
@test "siw: beside bulk streams on a path that queues, round trips of 3000 and 100 bytes keep their order; the link stays up" {
	slow_path
	port=$(accept_port a echo)
	fa=$(ctl_json a links '[.[] | select(.tunnel == "echo")][0].failures_total')
	ga=$(resizes a grow)
	gb=$(resizes b grow)
	head -c 2M /dev/urandom >"$W/bulk"
	bps=()
	for i in 1 2 3 4; do
		spawn timeout 120 socat -t 60 - TCP:127.0.0.1:"$port" \
		    <"$W/bulk" >"$W/bulk.$i" 2>/dev/null
		bps+=("$!")
	done
	run timeout 120 $TOOL rr "$port" 100
	assert_success
	assert_output "rr 100"
	for i in 1 2 3 4; do
		wait_pid "${bps[i - 1]}" 120
		[ "$(sha "$W/bulk")" = "$(sha "$W/bulk.$i")" ]
	done
	# Their rings grew on both sides: RING_ATs went out behind WRITEs.
	[ "$(resizes a grow)" -gt "$ga" ]
	[ "$(resizes b grow)" -gt "$gb" ]
	run grep -c "protocol violation" "$W/a.log" "$W/b.log"
	assert_output "$W/a.log:0
$W/b.log:0"
	assert_equal "$(ctl_json a links '[.[] | select(.tunnel == "echo")][0].failures_total')" "$fa"
	# Both lanes carried it, and both daemons fenced their switches.
	run ctl_json a links '[.[] | select(.tunnel == "echo")][0] | "\(.lanes) \(.lane0_fences > 0) \(.lane1_fences > 0)"'
	echo "# a: $output" >&3
	assert_output "2 true true"
	run ctl_json b links '[.[] | select(.state == "up")][0] | "\(.lanes) \(.lane0_fences > 0) \(.lane1_fences > 0)"'
	echo "# b: $output" >&3
	assert_output "2 true true"
}

@test "siw: a refusal's note reaches the connecting side: the peer refused, or asks for a version iWARP cannot run" {
	# b's refusal note (a link without a key where every tunnel needs
	# one): not just a reset.
	wait_log b "link from $A:[0-9]* rejected: it does not authenticate, and every tunnel here needs a key_file"
	wait_log a "tunnel nokey: link to $B:7471 failed: connection rejected by the peer; retrying"
	# The old peer's note says version 3: read, but a does not step
	# down, since below version 11 an iWARP link could carry nothing.
	wait_until 30 grep -q "old-peer: offered" "$W/old.out"
	run cat "$W/old.out"
	assert_line --regexp "^old-peer: offered 12( 12)*$"
	wait_log a "tunnel old: link to $B:$op failed: the peer refused protocol version 12 and speaks 3 at most (an older rstreamd, or a forged reject); not stepping down: this iWARP device has no immediate data, which links below version 11 need"
	run grep -c "trying that address once more" "$W/a.log"
	assert_output 0
	[ "$(metric rstreamd_link_stepdowns_refused_total a)" -ge 1 ]
	# Gone, nothing listens there: Soft-iWARP's TCP connect says so.
	wait_log a "tunnel old: link to $B:$op failed: connection refused: nothing listening at that address and port"
}

@test "siw: service_level and traffic_class, ignored: said by -n and once at connect, at their lines" {
	run "$RSTREAMD_BIN" -n -c "$W/a.conf"
	assert_success
	assert_output --partial "warning: $W/a.conf:6: tunnel echo: service_level 3 does nothing on iWARP, which has no service levels, and $DA, the device of source $A, is iWARP"
	assert_output --partial "warning: $W/a.conf:7: tunnel echo: traffic_class 32 does nothing on Soft-iWARP (siw), which gives its TCP connections no IP TOS, and $DA, the device of source $A, is Soft-iWARP"
	# Without a source address: every device the host has.
	sed '/^source = /d' "$W/a.conf" >"$W/nosource.conf"
	run "$RSTREAMD_BIN" -n -c "$W/nosource.conf"
	assert_success
	assert_output --regexp "warning: $W/nosource.conf:5: tunnel echo: service_level 3 does nothing on iWARP, which has no service levels, and every RDMA device here \\(siw[^)]*\\) is iWARP"
	# At connect, once, though the link came up (see above) and the
	# other tunnels tried again and again.
	link_up a echo
	run grep -c "warning: $W/a.conf:6: tunnel echo: service_level 3 does nothing on iWARP, which has no service levels, and the device of its link to $B:7471, $DA, is iWARP" "$W/a.log"
	assert_output 1
	run grep -c "warning: $W/a.conf:7: tunnel echo: traffic_class 32 does nothing on Soft-iWARP (siw), which gives its TCP connections no IP TOS, and the device of its link to $B:7471, $DA, is Soft-iWARP" "$W/a.log"
	assert_output 1
	run grep -E "tunnel (nokey|old): .* does nothing" "$W/a.log"
	assert_failure
}
