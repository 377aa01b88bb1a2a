#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Tunnels across real RDMA: TCP and Unix sockets at either end, half-close,
# refusals, unknown tunnels, per-tunnel sizes, the ring pool, and what a
# link tells of the fabric under it.

load helpers

setup() {
	rs_setup
}

teardown() {
	rs_teardown
}

# bats test_tags=iwarp
@test "socat through a TCP to TCP tunnel" {
	echo_tunnel echo
	start_pair echo
	port=$(accept_port a echo)
	run client "$port" "hello through rdma" 30
	assert_success
	assert_output "hello through rdma"
	# The log names the tunnel, the stream and the peer.
	run grep -E "tunnel echo stream [0-9]+ \(client, 127\.0\.0\.1:[0-9]+\): opening over $B:7471" "$W/a.log"
	assert_success
	# Small writes go inline: 128 bytes by default, or the most the
	# device takes (Soft-iWARP 80), which the link's line says, and
	# both daemons' links.
	case $RSTREAMD_TEST_DEV_A in
	siw*) run grep "link to $B:7471 is up (.*, inline_size 80 (the most $RSTREAMD_TEST_DEV_A takes; 128 asked), " "$W/a.log"
	      assert_success
	      inl=80 ;;
	rxe*) run grep "link to $B:7471 is up (.*, inline_size 128, " "$W/a.log"
	      assert_success
	      inl=128 ;;
	*) inl=$(ctl_json a links '.[0].inline_size') ;;
	esac
	run ctl_json a links '.[0].inline_size'
	assert_output "$inl"
	run ctl_json b links '.[0].inline_size'
	assert_output "$inl"
}

@test "socat through a Unix to TCP tunnel" {
	echo_target
	conf_b "{ name = \"u2t\"; target = \"tcp://127.0.0.1:$tp\"; }"
	conf_a "{ name = \"u2t\"; accept = \"unix:$W/u2t.sock\"; peer = \"$B\"; unix_mode = \"0600\"; }"
	start_pair u2t
	run stat -c %a "$W/u2t.sock"
	assert_output "600"
	run client "unix:$W/u2t.sock" "from a unix socket"
	assert_success
	assert_output "from a unix socket"
}

@test "socat through a TCP to Unix tunnel" {
	spawn socat -t 600 UNIX-LISTEN:"$W/target.sock",fork EXEC:cat
	wait_sock "$W/target.sock"
	conf_b "{ name = \"t2u\"; target = \"unix:$W/target.sock\"; }"
	conf_a "{ name = \"t2u\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	start_pair t2u
	port=$(accept_port a t2u)
	run client "$port" "to a unix target" 30
	assert_success
	assert_output "to a unix target"
}

@test "a stale Unix socket is replaced, a live one is not" {
	spawn socat -t 600 UNIX-LISTEN:"$W/live.sock",fork EXEC:cat
	wait_sock "$W/live.sock"
	conf_a "{ name = \"x\"; accept = \"unix:$W/live.sock\"; peer = \"$B\"; }"
	run "$RSTREAMD_BIN" -f -c "$W/a.conf"
	assert_failure
	assert_output --partial "in use by a running process"
	# A socket file nobody listens on is left over: replaced.
	spawn socat UNIX-LISTEN:"$W/stale.sock" /dev/null
	sp=$!
	wait_sock "$W/stale.sock"
	kill -KILL "$sp"; wait "$sp" 2>/dev/null || true
	[ -S "$W/stale.sock" ]
	conf_a "{ name = \"x\"; accept = \"unix:$W/stale.sock\"; peer = \"$B\"; }"
	start_daemon a
	run grep "accepting on unix:$W/stale.sock" "$W/a.log"
	assert_success
}

@test "Unix socket files: a full backlog means in use; a failed start leaves none behind" {
	# A live listener that accepts nothing: the probe must not block.
	spawn $TOOL unix-deaf "$W/deaf.sock" >"$W/deaf.out"
	wait_until 60 grep -q full "$W/deaf.out"
	conf_a "{ name = \"x\"; accept = \"unix:$W/deaf.sock\"; peer = \"$B\"; }"
	run timeout -k 2 10 "$RSTREAMD_BIN" -f -c "$W/a.conf"
	assert_failure 1
	assert_output --partial "$W/deaf.sock is in use by a running process"
	# Bound, then failed (the next tunnel's socket is in use): the new
	# file goes with it.
	conf_a "{ name = \"x\"; accept = \"unix:$W/new.sock\"; peer = \"$B\"; },
	    { name = \"y\"; accept = \"unix:$W/deaf.sock\"; peer = \"$B\"; }"
	run timeout -k 2 10 "$RSTREAMD_BIN" -f -c "$W/a.conf"
	assert_failure 1
	assert_output --partial "$W/deaf.sock is in use by a running process"
	[ ! -e "$W/new.sock" ]
	# An unknown user is the configuration's fault, found before any
	# socket is bound.
	conf_a "{ name = \"x\"; accept = \"unix:$W/new.sock\"; peer = \"$B\";
	    unix_owner = \"no-such-user-here\"; }"
	run timeout -k 2 10 "$RSTREAMD_BIN" -f -c "$W/a.conf"
	assert_failure 78
	assert_output --partial "tunnel x: unix_owner: unknown user 'no-such-user-here'"
	[ ! -e "$W/new.sock" ]
}

# bats test_tags=iwarp
@test "half-close: the client shuts down writing and still gets the whole reply" {
	tp=$(free_port)
	# The target answers with the sha256 of everything it read.
	spawn socat -t 600 TCP-LISTEN:"$tp",bind=127.0.0.1,reuseaddr,fork SYSTEM:sha256sum
	wait_port "$tp"
	conf_b "{ name = \"hc\"; target = \"tcp://127.0.0.1:$tp\"; }"
	conf_a "{ name = \"hc\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B\"; }"
	start_pair hc
	port=$(accept_port a hc)
	head -c 3000000 /dev/urandom >"$W/in"
	want=$(sha "$W/in")
	run timeout 60 socat -t 30 - TCP:127.0.0.1:"$port" <"$W/in"
	assert_success
	assert_output "$want  -"
}

# bats test_tags=iwarp
@test "a target that refuses: the client's connection ends, other streams go on" {
	echo_target
	dead=$(free_port)
	conf_b "{ name = \"dead\"; target = \"tcp://127.0.0.1:$dead\"; },
	    { name = \"echo\"; target = \"tcp://127.0.0.1:$tp\"; }"
	conf_a "{ name = \"dead\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B\"; },
	    { name = \"echo\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B\"; }"
	start_daemon b
	start_daemon a
	link_up a dead
	link_up a echo
	start=$(date +%s)
	run client "$(accept_port a dead)" "anyone?" 20
	elapsed=$(($(date +%s) - start))
	assert_output ""
	[ "$elapsed" -lt 15 ]
	wait_log b "tunnel dead stream .*cannot connect to target tcp://127.0.0.1:$dead: Connection refused"
	wait_log a "refused by $B:7471: target refused the connection"
	run client "$(accept_port a echo)" "still here"
	assert_output "still here"
	kill -0 "$PID_a"
	kill -0 "$PID_b"
}

@test "a tunnel the serving side does not have is refused and logged on both sides" {
	conf_b "{ name = \"other\"; target = \"tcp://127.0.0.1:9\"; }"
	conf_a "{ name = \"ghost\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B\"; }"
	start_pair ghost
	run client "$(accept_port a ghost)" "boo" 20
	assert_output ""
	wait_log b "refused a stream for tunnel 'ghost', which is not configured here"
	wait_log a "tunnel ghost stream .*refused by $B:7471: no such tunnel on the peer"
}

@test "per-tunnel sizes are applied, and two tunnels with different rings run side by side" {
	echo_target
	conf_b "{ name = \"small\"; target = \"tcp://127.0.0.1:$tp\"; sendbuf = 8192; recvbuf = 4096; },
	    { name = \"big\"; target = \"tcp://127.0.0.1:$tp\"; sendbuf = 1048576; recvbuf = 2097152; ring_min = 0; }"
	conf_a "{ name = \"small\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B\";
	      sendbuf = 4096; recvbuf = 16384; sq_size = 16; rq_size = 8; inline_size = 0; },
	    { name = \"big\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B\";
	      sendbuf = 2097152; recvbuf = 1048576; sq_size = 512; rq_size = 128;
	      inline_size = 1024; }"
	start_daemon b
	start_daemon a
	link_up a small
	link_up a big
	wait_log a "tunnel small: link to .* is up (device .*, sq_size 16, rq_size 8, inline_size 0, not authenticated; port [0-9]*, "
	# More inline data than the device takes: the most it does (Soft-RoCE
	# 512, Soft-iWARP 80), and the line says so.
	wait_log a "tunnel big: link to .* is up (device .*, sq_size 512, rq_size 128, inline_size [0-9]*\( (the most $RSTREAMD_TEST_DEV_A takes; 1024 asked)\)\?, not authenticated; port [0-9]*, "
	case $RSTREAMD_TEST_DEV_A in
	rxe*) run grep "tunnel big: link to .* is up (.*, inline_size 512 (the most $RSTREAMD_TEST_DEV_A takes; 1024 asked), " "$W/a.log"
	      assert_success
	      run ctl_json a links '[.[] | select(.tunnel == "big")][0].inline_size'
	      assert_output 512 ;;
	esac
	head -c 2000000 /dev/urandom >"$W/in1"
	head -c 2000000 /dev/urandom >"$W/in2"
	spawn timeout 120 socat -t 60 - TCP:127.0.0.1:"$(accept_port a small)" <"$W/in1" >"$W/out1"
	p1=$!
	spawn timeout 120 socat -t 60 - TCP:127.0.0.1:"$(accept_port a big)" <"$W/in2" >"$W/out2"
	p2=$!
	wait "$p1"
	wait "$p2"
	[ "$(sha "$W/in1")" = "$(sha "$W/out1")" ]
	[ "$(sha "$W/in2")" = "$(sha "$W/out2")" ]
	run grep "tunnel small stream .*rings: send 4096, receive 16384 bytes" "$W/a.log"
	assert_success
	# Rings start at ring_min (16384 by default) and grow; 0 fixes them.
	run grep "tunnel big stream .*rings: send 16384, receive 16384 bytes, growing up to 2097152 and 1048576$" "$W/a.log"
	assert_success
	run grep "tunnel small stream .*rings: send 8192, receive 4096 bytes" "$W/b.log"
	assert_success
	run grep "tunnel big stream .*rings: send 1048576, receive 2097152 bytes$" "$W/b.log"
	assert_success
}

@test "stream rings come from the link's pool, which empties when idle; ring_pool = 0 turns it off" {
	echo_target
	conf_b "{ name = \"echo\"; target = \"tcp://127.0.0.1:$tp\"; }"
	echo "ring_pool = 0;" >>"$W/b.conf"
	conf_a "{ name = \"echo\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B\"; sendbuf = 65536; recvbuf = 131072; }"
	start_pair echo
	port=$(accept_port a echo)
	for i in 1 2 3 4; do
		run client "$port" "stream $i"
		assert_output "stream $i"
		wait_ctl a links '.[0].streams' 0
	done
	# a registered one send and one receive ring (16384 bytes each: rings
	# start at ring_min); the three streams after the first took both
	# from the pool, where they are now.
	run ctl_json a links '.[0] | "\(.rings_reused) \(.ring_bytes)"'
	assert_output "6 32768"
	run "$CTL" -s "$W/a.ctl" metrics
	# The peer label is the setting as written, here without its port.
	assert_line "rstreamd_link_rings_total{tunnel=\"echo\",peer=\"$B\",direction=\"out\",how=\"registered\"} 2"
	assert_line "rstreamd_link_ring_bytes{tunnel=\"echo\",peer=\"$B\",direction=\"out\",kind=\"pooled\"} 32768"
	# b keeps none: every stream registered its own.
	wait_ctl b links '.[0].streams' 0
	run ctl_json b links '.[0] | "\(.rings_reused) \(.ring_bytes)"'
	assert_output "0 0"
	# Unused for about 10 s, a's pool empties.
	wait_ctl a links '.[0].ring_bytes' 0 30
}

# port_counters NAME DEVICE: the sum of every counter daemon NAME exports
# for port 1 of DEVICE (packets and bytes grow with traffic, whatever the
# driver calls them).
port_counters() {
	"$CTL" -s "$W/$1.ctl" metrics | awk -v d="$2" '
	    /^rstreamd_rdma_port_counter\{/ && index($0, "device=\"" d "\"") {
		s += $NF } END { printf "%.0f\n", s }'
}

@test "each link says where it runs on the fabric (device, port, transport, GIDs, path MTU, QPs) and exports its port's counters" {
	echo_tunnel echo
	start_pair echo
	run client "$(accept_port a echo)" "where"
	assert_output "where"
	run ctl_json a links '.[0] | "\(.device) \(.port) \(.transport) \(.gid_index)"'
	assert_output --regexp "^$RSTREAMD_TEST_DEV_A [0-9]+ (IB|RoCEv1|RoCEv2|iWARP) [0-9]+$"
	transport=$(ctl_json a links '.[0].transport')
	mtu=$(ctl_json a links '.[0].path_mtu')
	[[ "$mtu" =~ ^(256|512|1024|2048|4096)$ ]]
	# The two ends of one connection: each one's QP and GID is the
	# other's peer.
	[ "$(ctl_json a links '.[0].qpn')" = "$(ctl_json b links '.[0].peer_qpn')" ]
	[ "$(ctl_json a links '.[0].peer_qpn')" = "$(ctl_json b links '.[0].qpn')" ]
	[ "$(ctl_json a links '.[0].gid')" = "$(ctl_json b links '.[0].peer_gid')" ]
	[ "$(ctl_json a links '.[0].peer_gid')" = "$(ctl_json b links '.[0].gid')" ]
	# The same for the latency lane's queue pairs.
	[ "$(ctl_json a links '.[0].lane1_qpn')" = "$(ctl_json b links '.[0].lane1_peer_qpn')" ]
	[ "$(ctl_json a links '.[0].lane1_peer_qpn')" = "$(ctl_json b links '.[0].lane1_qpn')" ]
	[ "$(ctl_json a links '.[0].lane1_qpn')" != "$(ctl_json a links '.[0].qpn')" ]
	[ "$(ctl_json b links '.[0].device')" = "$RSTREAMD_TEST_DEV_B" ]
	grep -q "link to $B:7471 is up (device $RSTREAMD_TEST_DEV_A, .*; port [0-9]*, $transport, GID [0-9]* .* to .*, path MTU $mtu, QP [0-9]* to [0-9]*, lane 1 QP [0-9]* to [0-9]*)" "$W/a.log"
	grep -q "link from $A:[0-9]* is up (port [0-9]*, $transport, GID" "$W/b.log"
	run "$CTL" -s "$W/a.ctl" metrics
	assert_line --regexp "^rstreamd_link_fabric_info\{tunnel=\"echo\",peer=\"$B:7471\",direction=\"out\",device=\"$RSTREAMD_TEST_DEV_A\",port=\"[0-9]+\",transport=\"$transport\",.*,path_mtu=\"$mtu\",.*\} 1$"
	assert_line --regexp "^rstreamd_rdma_port_counter\{device=\"$RSTREAMD_TEST_DEV_A\",port=\"[0-9]+\",set=\"(hw_counters|counters)\",counter=\"[a-z_0-9]+\"\} [0-9]+$"
	# The adapter's counters move with the link's traffic.
	before=$(port_counters a "$RSTREAMD_TEST_DEV_A")
	head -c 1M /dev/urandom >"$W/1m"
	timeout 60 socat -t 30 - TCP:127.0.0.1:"$(accept_port a echo)" \
	    <"$W/1m" >"$W/1m.out"
	[ "$(sha "$W/1m")" = "$(sha "$W/1m.out")" ]
	after=$(port_counters a "$RSTREAMD_TEST_DEV_A")
	[ "$after" -gt "$before" ]
}

# bats test_tags=iwarp
@test "a link of version 12 runs two lanes on both daemons (fenced on iWARP), and traffic crosses them" {
	echo_tunnel echo
	start_pair echo
	# Bulk and small messages at once: WRITEs and control records.
	head -c 4M /dev/urandom >"$W/4m"
	timeout 60 socat -t 30 - TCP:127.0.0.1:"$(accept_port a echo)" \
	    <"$W/4m" >"$W/4m.out" &
	bulk=$!
	for i in 1 2 3 4 5; do
		run client "$(accept_port a echo)" "small $i"
		assert_output "small $i"
	done
	wait "$bulk"
	[ "$(sha "$W/4m")" = "$(sha "$W/4m.out")" ]
	# Small messages alone: each daemon sleeps with its completion queue
	# armed for the messages that arrive only, not for its own sends'
	# completions, at least once a message.
	qa=$(ctl_json a links '.[0].cq_arms_quiet')
	qb=$(ctl_json b links '.[0].cq_arms_quiet')
	for i in 1 2 3 4 5; do
		run client "$(accept_port a echo)" "quiet $i"
		assert_output "quiet $i"
	done
	qa=$(( $(ctl_json a links '.[0].cq_arms_quiet') - qa ))
	qb=$(( $(ctl_json b links '.[0].cq_arms_quiet') - qb ))
	echo "# quiet arms over 5 small streams: a $qa, b $qb" >&3
	[ "$qa" -ge 5 ]
	[ "$qb" -ge 5 ]
	run ctl_json a links '.[0] | .cq_arms >= .cq_arms_quiet'
	assert_output true
	# iWARP has no immediate data: a SEND after each WRITE says it.  And
	# it completes a WR once TCP took its bytes, so a stream changes
	# lanes there only after the peer answered a FENCE: both daemons
	# fenced lane 0 before lane 1 opened.  Elsewhere nothing is fenced.
	notify=imm
	lanes="2 lanes"
	fenced=false
	if iwarp; then
		notify=send
		lanes="2 lanes, no immediates"
		fenced=true
	fi
	run ctl_json a links '.[0] | "\(.version) \(.lanes) \(.notify) \(.lane0_fences > 0)"'
	assert_output "12 2 $notify $fenced"
	run ctl_json b links '.[0] | "\(.version) \(.lanes) \(.notify) \(.lane0_fences > 0)"'
	assert_output "12 2 $notify $fenced"
	# Each lane's queue: both known on an up link of two lanes.
	run ctl_json a links '.[0] | [.lane0_depth, .lane0_inflight, .lane1_depth, .lane1_inflight, .lane0_fences, .lane1_fences] | map(type) | join(" ")'
	assert_output "number number number number number number"
	grep -q "link to $B:7471 is up (device $RSTREAMD_TEST_DEV_A, protocol version 12, $lanes, sq_size" "$W/a.log"
	grep -q "link from $A:[0-9]* is up (.*; protocol version 12, $lanes)" "$W/b.log"
	# Both up lines, in the TAP output as comments.
	grep -h "is up (" "$W/a.log" "$W/b.log" | sed 's/^/# /' >&3
	run "$CTL" -s "$W/a.ctl" -o wide links
	assert_line --index 0 --regexp " LANES +NOTIFY +LANE0 DEPTH +LANE0 INFLIGHT +LANE1 DEPTH +LANE1 INFLIGHT +LANE0 FENCES +LANE1 FENCES "
	run "$CTL" -s "$W/b.ctl" metrics
	assert_line --regexp "^rstreamd_link_lanes\\{tunnel=\"\",peer=\"[^\"]*\",direction=\"in\"\\} 2\$"
	assert_line --regexp '^rstreamd_link_lane_inflight_bytes\{tunnel="",peer="[^"]*",direction="in",lane="0"\} [0-9]+$'
	assert_line --regexp '^rstreamd_link_lane_sq_depth\{tunnel="",peer="[^"]*",direction="in",lane="1"\} [0-9]+$'
	assert_line --regexp '^rstreamd_link_lane_fences_total\{tunnel="",peer="[^"]*",direction="in",lane="0"\} [0-9]+$'
}

# bats test_tags=iwarp
@test "a daemon held to version 11: a link of 11, on one lane on iWARP (which fences from 12), and no fence" {
	echo_tunnel echo
	sed -i "1i max_version = 11;" "$W/b.conf"
	start_pair echo
	run client "$(accept_port a echo)" "at 11"
	assert_output "at 11"
	nl=2
	if iwarp; then
		nl=1
	fi
	run ctl_json a links '.[0] | "\(.version) \(.lanes) \(.lane0_fences)"'
	assert_output "11 $nl 0"
	run ctl_json b links '.[0] | "\(.version) \(.lanes) \(.lane0_fences)"'
	assert_output "11 $nl 0"
}

@test "version 7 and newer daemons (max_version = 7 on either side): links of version 7, one lane, traffic crosses" {
	for old in a b; do
		echo_tunnel echo
		sed -i "1i max_version = 7;" "$W/$old.conf"
		start_pair echo
		run client "$(accept_port a echo)" "old $old"
		assert_output "old $old"
		run ctl_json a links '.[0] | "\(.version) \(.lanes) \(.lane1_depth)"'
		assert_output "7 1 null"
		run ctl_json b links '.[0] | "\(.version) \(.lanes)"'
		assert_output "7 1"
		# No step-down: the newer one answers, or asks, in 7.
		[ "$(metric rstreamd_link_stepdowns_total a)" = 0 ]
		grep -q "notice: tunnel echo: link to $B:7471 is up (device $RSTREAMD_TEST_DEV_A, protocol version 7, 1 lane, " "$W/a.log"
		# Both go before the other side's turn.
		kill -TERM "$PID_a" "$PID_b"
		wait "$PID_a" "$PID_b" || true
	done
}
