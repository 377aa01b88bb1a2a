#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rstreamd as a service: graceful stop, the control socket and rstreamctl,
# logging to the journal and to a file, and socket activation.

load helpers

setup() {
	rs_setup
}

teardown() {
	rs_teardown
	rm -rf /run/systemd/journal
}

@test "stop: SIGTERM takes no new streams, lets open ones finish, exits 0" {
	echo_tunnel echo
	# And a tunnel whose peer is not there: its retries stop with the drain.
	conf_a "{ name = \"echo\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; },
	    { name = \"dead\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7999\"; }"
	notify_socket
	start_daemon b
	start_daemon a NOTIFY_SOCKET="$W/notify.sock"
	link_up a echo
	port=$(accept_port a echo)
	# 8 MiB, the second half held back until the drain has begun.
	paced_stream "$port" t 8
	wait_log a "tunnel echo stream 1 .*opening over"
	# Bytes are on their way back: the drain has a transfer to finish.
	wait_until 20 test -s "$W/t.out"
	kill -TERM "$PID_a"
	wait_log a "received SIGTERM; taking no new streams, waiting up to 30 s for 1 open stream"
	wait_log notify "STOPPING=1"
	wait_log notify "STATUS=stopping: waiting for 1 stream to finish"
	wait_log notify "EXTEND_TIMEOUT_USEC=40000000"
	# New clients are turned away at once: nothing listens any more.
	run timeout 10 socat -u - TCP:127.0.0.1:"$port" <<<"x"
	assert_failure
	# The open one finishes with every byte, then the daemon exits 0.
	touch "$W/t.go"
	wait_pid "$sp" 100
	[ "$(sha "$W/t.in")" = "$(sha "$W/t.out")" ]
	rc=0
	wait "$PID_a" || rc=$?
	[ "$rc" = 0 ]
	grep -q "every stream has finished" "$W/a.log"
	grep -q "stopped" "$W/a.log"
	# No connection attempt after SIGTERM, though its retries were due
	# (an attempt under way at SIGTERM may still end, "closed").
	grep -q "tunnel dead: link to $B:7999 failed" "$W/a.log"
	grep -q "tunnel dead: link to $B:7999: connecting to" "$W/a.log"
	run sh -c "sed -n '/received SIGTERM/,\$p' '$W/a.log' | grep 'tunnel dead: link to .*: connecting to'"
	assert_failure
}

@test "rstreamctl -c: a control_group member needs the control socket, not the keys, and may not reload; root reloads one at a time" {
	(umask 077; head -c 32 /dev/urandom >"$W/k.key")
	conf_a "{ name = \"k\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; key_file = \"$W/k.key\"; }"
	printf 'control_group = "nogroup";\n' >>"$W/a.conf"
	start_daemon a
	# nobody (group nogroup) may read the file and reach the socket, not the key.
	chmod 0644 "$W/a.conf"
	d=$W
	while [ "$d" != / ]; do
		chmod o+x "$d"
		d=${d%/*}
		d=${d:-/}
	done
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" -c "$W/a.conf" status
	assert_success
	assert_output --partial "1 tunnel, 0 streams"
	# A reload is root's and the daemon's own user's (here both root).
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" -c "$W/a.conf" reload
	assert_failure
	assert_output "rstreamctl: reload is only for root and rstreamd's own user (uid 0); this client is uid 65534"
	wait_log a "control socket: reload refused to uid 65534 (only root and uid 0 may)"
	run grep "reloading" "$W/a.log"
	assert_failure
	# Root's reloads come a second apart: of eight asked at once, the
	# first runs and the rest are told when to try again.
	python3 -c 'import socket, sys
ss = [socket.socket(socket.AF_UNIX) for i in range(8)]
for s in ss:
    s.connect(sys.argv[1])
for s in ss:
    s.sendall(b"reload\n")
for s in ss:
    print(s.makefile().readline().strip())' "$W/a.ctl" >"$W/burst.out"
	run grep -c "^ok$" "$W/burst.out"
	[ "$output" -ge 1 ]
	# The rest come while the first is read, or in the second after it.
	run grep -c -E "^error: reload refused: (the previous one is still under way|the previous one ended [0-9.]* s ago, and reloads over the control socket come at least 1 s apart); try again in [0-9.]* s$" "$W/burst.out"
	[ "$output" -ge 1 ]
	[ "$(grep -c . "$W/burst.out")" = 8 ]
	[ "$(grep -c "^ok$" "$W/burst.out")" = "$(grep -c "reloaded $W/a.conf" "$W/a.log")" ]
	wait_log a "control socket: reload refused: \([0-9.]* s after\|the previous one is still under way\)"
	# rstreamctl waits as told and asks again.
	run "$CTL" -s "$W/a.ctl" reload
	assert_success
	assert_output --partial "reloaded $W/a.conf"
	run "$CTL" -s "$W/a.ctl" reload
	assert_success
	assert_output --partial "reloaded $W/a.conf"
}

@test "stop: streams still open at the end of drain_time are closed; a second SIGTERM stops at once" {
	echo_tunnel echo
	sed -i '1i drain_time = 2;' "$W/a.conf"
	start_pair echo
	port=$(accept_port a echo)
	hold_stream "$port"
	wait_log a "tunnel echo stream 1 .*opening over"
	kill -TERM "$PID_a"
	# Exits on its own after about 2 s (not killed by anybody).
	wait_pid "$PID_a" 20
	rc=0
	wait "$PID_a" || rc=$?
	[ "$rc" = 0 ]
	grep -q "drain time over; closing the 1 stream still open" "$W/a.log"
	wait_pid "$cp" 20

	# With the default 30 s, a second SIGTERM does not wait.
	sed -i '/^drain_time/d' "$W/a.conf"
	start_daemon a
	link_up a echo
	port=$(accept_port a echo)
	hold_stream "$port"
	wait_log a "tunnel echo stream [0-9]* .*opening over"
	kill -TERM "$PID_a"
	wait_log a "waiting up to 30 s for 1 open stream"
	kill -TERM "$PID_a"
	wait_pid "$PID_a" 5
	grep -q "received SIGTERM again; stopping now" "$W/a.log"
}

# tables_fit NAME COMMAND...: each COMMAND's default text from daemon NAME
# (kept in $W/COMMAND.NAME) is at most 120 characters wide.
tables_fit() {
	local d=$1 cmd w
	shift
	for cmd in "$@"; do
		"$CTL" -s "$W/$d.ctl" "$cmd" >"$W/$cmd.$d"
		w=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$W/$cmd.$d")
		echo "# $d: rstreamctl $cmd: $w columns" >&3
		[ "$w" -le 120 ] || return 1
	done
}

@test "rstreamctl: status, tunnels, streams, links, stats, metrics, JSON, errors" {
	echo_tunnel echo
	start_pair echo
	port=$(accept_port a echo)
	[ "$(stat -c %a "$W/a.ctl")" = 660 ]
	# One stream stays open while we look.
	hold_stream "$port"
	run client "$port" "twelve bytes"
	assert_output "twelve bytes"
	wait_log a "tunnel echo stream 2 .*opening over"

	# The tables' cells, in the columns named (-o): the default set
	# is for people and may change.
	run "$CTL" -s "$W/a.ctl" status
	assert_success
	assert_output --partial "rstreamd 0."
	assert_output --partial "config: $W/a.conf"
	assert_output --partial "1 tunnel, 1 stream, 1 of 1 link up"
	run "$CTL" -s "$W/a.ctl" -o tunnel,side,address,peer,state,streams,max_streams,link status
	assert_line --regexp "^echo +client +tcp://127.0.0.1:$port +$B:7471 +active +1 +[0-9]+ +up$"

	s_cols=tunnel,stream,side,address,peer,origin,state,bytes_in,bytes_out,age_s
	run "$CTL" -s "$W/a.ctl" -o "$s_cols" streams
	assert_success
	assert_line --regexp "^TUNNEL +STREAM +SIDE +ADDRESS +PEER +ORIGIN +STATE +BYTES IN +BYTES OUT +AGE S$"
	assert_line --regexp "^echo +[0-9]+ +client +127.0.0.1:[0-9]+ +$B:7471 +127.0.0.1:[0-9]+ +open +0 +0 +[0-9]+$"
	# The serving side names the client on a's host (the peer's ORIGIN).
	client=$(ctl_json a streams '.[0].address')
	run "$CTL" -s "$W/b.ctl" -o "$s_cols" streams
	assert_success
	assert_line --regexp "^echo +[0-9]+ +target +tcp://127.0.0.1:[0-9]+ +$A:[0-9]+ +$client +open "
	[ "$(ctl_json b streams '.[0].origin')" = "$client" ]
	grep -q "tunnel echo stream [0-9]* (target, .*): accepted from $client over $A:" "$W/b.log"

	l_cols=link,direction,peer,tunnel,state,device,streams
	run "$CTL" -s "$W/a.ctl" -o "$l_cols" links
	assert_success
	assert_line --regexp "^tunnel echo: link to $B:7471 +out +$B:7471 +echo +up +rxe[01] +1$"
	run "$CTL" -s "$W/b.ctl" --output "$l_cols" links
	assert_line --regexp "^link from $A:[0-9]+ +in +$A:[0-9]+ +up +rxe[01] +1$"

	# Counters: the 13 bytes of the finished stream went both ways.
	# (PINNED: the held stream's rings, and the finished one's until its
	# release; MAX MEMORY: none; RING REFUSALS: none.)
	run "$CTL" -s "$W/a.ctl" -o tunnel,bytes_in,bytes_out,opened,active,refused,limited,denied,failed,credit_stalls,suspended,resumes,resume_failures,pinned,max_memory,ring_refusals,link stats
	assert_success
	assert_line --regexp "^echo +13 +13 +2 +1 +0 +0 +0 +0 +[0-9]+ +0 +0 +0 +[0-9]+ +0 +0 +up$"

	# By default each table fits 120 columns; -o wide shows the rest.
	tables_fit a status tunnels streams links stats
	tables_fit b status tunnels streams links stats
	run grep -c "PEER QPN" "$W/links.a"
	assert_output 0
	run "$CTL" -s "$W/a.ctl" -o wide links
	assert_line --regexp "^LINK +DIRECTION +PEER .* PEER QPN +WORKER +VERSION +TRAFFIC CLASS +SERVICE LEVEL +RNR TIMER +INLINE SIZE +PRIORITY +SHARE +FAILS +FAILURES TOTAL +DOWN +RETRY WAIT +ERROR$"
	[ "$(ctl_json a links '.[0].qpn')" -gt 0 ]
	assert_line --partial "  $(ctl_json a links '.[0].qpn')  "
	# An unknown column is a usage error naming the ones there are.
	run "$CTL" -s "$W/a.ctl" -o peer,frob links
	assert_failure 1
	assert_output --partial "unknown column or format 'frob'; the formats are table, wide and json, the columns: link, direction, peer,"
	# JSON carries every column whatever -o says.
	[ "$(ctl_json a links 'length')" = 1 ]
	run "$CTL" -s "$W/a.ctl" -j -o peer links
	assert_success
	echo "$output" | jq -e '.[0] | has("qpn") and has("bytes_tx")'

	run "$CTL" --json -s "$W/a.ctl" stats
	assert_success
	echo "$output" | jq -e '.tunnels[0] | .tunnel == "echo" and
	    .bytes_in == 13 and .bytes_out == 13 and .opened == 2 and .active == 1'
	echo "$output" | jq -e '.links[0].state == "up"'
	for cmd in status tunnels streams links; do
		"$CTL" -j -s "$W/a.ctl" "$cmd" | jq -e . >/dev/null
	done
	run "$CTL" -j -s "$W/a.ctl" status
	echo "$output" | jq -e '.state == "running" and .streams == 1 and
	    .links_up == 1 and .tunnels[0].tunnel == "echo"'

	# Prometheus text format, as a textfile collector reads it.
	run "$CTL" -s "$W/a.ctl" metrics
	assert_success
	assert_line 'rstreamd_tunnel_bytes_total{tunnel="echo",direction="in"} 13'
	assert_line 'rstreamd_tunnel_streams_active{tunnel="echo"} 1'
	assert_line "rstreamd_link_up{tunnel=\"echo\",peer=\"$B:7471\",direction=\"out\"} 1"
	assert_line --regexp "^rstreamd_link_credit_stalls_total\{tunnel=\"echo\",peer=\"$B:7471\",direction=\"out\",kind=\"ring\"\} [0-9]+$"
	assert_line --regexp '^rstreamd_tunnel_ring_bytes\{tunnel="echo"\} [0-9]+$'
	assert_line --regexp '^rstreamd_ring_bytes [0-9]+$'
	# Every other line is a sample: name, optional labels, a value.
	bad=$(echo "$output" | grep -v '^# \(HELP\|TYPE\) ' |
	    grep -Ev '^[a-z_]+(\{([a-z_]+="[^"]*",?)+\})? [0-9]+(\.[0-9]+)?$' || true)
	assert_equal "$bad" ""
	# The ports' counters too; and a request stops no worker, neither to
	# be accepted, read or written nor to be answered: fewer exclusive
	# turns than half the requests (those there are come from the
	# daemon's STATUS line, refreshed every 2 s in an exclusive turn).
	assert_line --regexp '^rstreamd_rdma_port_counter\{device="[^"]*",port="[0-9]+",set="[a-z_]+",counter="[^"]*"\} [0-9]+$'
	e0=$(metric rstreamd_exclusive_turns_total a)
	for i in $(seq 30); do
		"$CTL" -s "$W/a.ctl" metrics >/dev/null
	done
	e1=$(metric rstreamd_exclusive_turns_total a)
	echo "# 30 metrics requests: $((e1 - e0)) exclusive turns" >&3
	[ $((e1 - e0)) -lt 15 ]

	# The path can come from the configuration file.
	run "$CTL" -c "$W/a.conf" tunnels
	assert_success
	assert_output --partial "echo"

	# Errors: an unknown command, no daemon.
	run "$CTL" -s "$W/a.ctl" frobnicate
	assert_failure 1
	assert_output --partial "unknown command 'frobnicate'"
	run "$CTL" -s "$W/nothing.sock" status
	assert_failure 2
	assert_output --partial "cannot connect to $W/nothing.sock"
	assert_output --partial "is rstreamd running?"
}

# hol_fields NAME: whether daemon NAME's first link has a window and the
# send queue's figures and waits, as numbers.
hol_fields() {
	ctl_json "$1" links '.[0] | .window > 0 and ([.sq_depth, .inflight,
	    .credit_wait_s, .sq_wait_s, .stall_window] | map(type) | unique) ==
	    ["number"]'
}

@test "rstreamctl: the send queue and the streams' waits, during a bulk transfer" {
	tool_tunnel hol
	start_pair hol
	port=$(accept_port a hol)
	# A stream whose target stops reading waits for ring credit on a;
	# a bulk transfer beside it keeps the link busy.
	spawn_fed tool_feed stall 16M -- \
	    timeout 120 socat -t 120 - TCP:127.0.0.1:"$port" >/dev/null 2>&1
	spawn_fed tool_feed sink 8G -- \
	    timeout 120 socat -t 120 - TCP:127.0.0.1:"$port" >"$W/sink.out" 2>&1
	bulk=$!
	wait_ctl a links '.[0].streams' 2
	wait_ctl a streams 'any(.[]; .credit_wait_s > 0)' true
	run ctl_json a streams '[.[] | .queued, .unacked, .sq_wait_s] | map(type) | unique[]'
	assert_output number
	[ "$(hol_fields a)" = true ]
	[ "$(hol_fields b)" = true ]

	# Tables: within 120 columns on both daemons; -o wide adds the rest.
	tables_fit a streams links
	tables_fit b streams links
	run grep -c "WINDOW" "$W/links.a"
	assert_output 0
	run "$CTL" -s "$W/a.ctl" -o wide links
	assert_line --regexp "^LINK .* SQ DEPTH +INFLIGHT +LANES +NOTIFY +LANE0 DEPTH +LANE0 INFLIGHT +LANE1 DEPTH +LANE1 INFLIGHT +LANE0 FENCES +LANE1 FENCES +WINDOW +RTT US +RATE B/S +CREDIT WAIT +SQ WAIT +.* STALL WINDOW "
	run "$CTL" -s "$W/a.ctl" -o wide streams
	assert_line --regexp "^TUNNEL .* QUEUED +UNACKED +CREDIT WAIT +SQ WAIT +AGE S$"
	kill "$bulk"

	# The metrics, with their HELP and TYPE, on both daemons.
	for d in a b; do
		run "$CTL" -s "$W/$d.ctl" metrics
		assert_success
		for m in sq_depth inflight_bytes window_bytes; do
			assert_line "# TYPE rstreamd_link_$m gauge"
			assert_line --regexp "^rstreamd_link_$m\{tunnel=\"(hol|)\",peer=\"[^\"]+\",direction=\"(out|in)\"\} [0-9]+$"
		done
		for m in credit_wait sq_wait; do
			assert_line --regexp "^# HELP rstreamd_link_${m}_seconds_total "
			assert_line "# TYPE rstreamd_link_${m}_seconds_total counter"
			assert_line --regexp "^rstreamd_link_${m}_seconds_total\{tunnel=\"(hol|)\",peer=\"[^\"]+\",direction=\"(out|in)\"\} [0-9]+\.[0-9]{9}$"
		done
	done
}

@test "rstreamctl: clients that connect and never speak cannot keep it out" {
	echo_tunnel echo
	start_pair echo
	# More silent connections than the control socket has slots.
	spawn python3 -c 'import socket, sys, time
ss = []
for i in range(24):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    ss.append(s)
print("holding", flush=True)
time.sleep(60)' "$W/a.ctl" >"$W/hog.out"
	wait_until 30 grep -q holding "$W/hog.out"
	run "$CTL" -s "$W/a.ctl" status
	assert_success
	assert_output --partial "1 tunnel, 0 streams, 1 of 1 link up"
	run "$CTL" -s "$W/a.ctl" -j stats
	assert_success
}

@test "logging: to the journal with TUNNEL=, STREAM= and PEER= fields" {
	echo_tunnel echo
	start_daemon b
	mkdir -p /run/systemd/journal
	spawn socat -u UNIX-RECV:/run/systemd/journal/socket OPEN:"$W/journal.log",creat,append
	wait_sock /run/systemd/journal/socket
	: >"$W/a.log"
	# What systemd does for StandardError=journal: name stderr's inode
	# (spawn_daemon truncates a.log, the same inode, and writes stderr
	# there).
	spawn_daemon a JOURNAL_STREAM="$(stat -c %d:%i "$W/a.log")"
	wait_log journal "MESSAGE=ready:" 20
	wait_log journal "MESSAGE=tunnel echo: link to .* is up" 30
	port=$(sed -n 's/.*MESSAGE=tunnel echo: accepting on tcp:\/\/127.0.0.1:\([0-9]*\),.*/\1/p' "$W/journal.log")
	run client "$port" "journal me"
	assert_output "journal me"
	wait_log journal "MESSAGE=tunnel echo stream 1 (client, 127.0.0.1:[0-9]*): opening over $B:7471"
	grep -q "^TUNNEL=echo$" "$W/journal.log"
	grep -q "^STREAM=1$" "$W/journal.log"
	grep -q "^PEER=$B:7471$" "$W/journal.log"
	grep -q "^SYSLOG_IDENTIFIER=rstreamd$" "$W/journal.log"
	grep -q "^PRIORITY=6$" "$W/journal.log"
	# Nothing went to stderr.
	[ ! -s "$W/a.log" ]
}

@test "logging: log_file, reopened on SIGUSR1 after it was moved" {
	echo_tunnel echo
	sed -i "1i log_file = \"$W/rs.log\";" "$W/a.conf"
	start_daemon b
	spawn_daemon a
	wait_log rs "rstreamd\[$PID_a\]: notice: ready:" 20
	wait_log rs "tunnel echo: link to .* is up" 30
	mv "$W/rs.log" "$W/rs.log.1"
	kill -USR1 "$PID_a"
	wait_log rs "log file reopened" 10
	port=$(sed -n 's/.*tunnel echo: accepting on tcp:\/\/127.0.0.1:\([0-9]*\),.*/\1/p' "$W/rs.log.1")
	run client "$port" "logged"
	assert_output "logged"
	wait_log rs "tunnel echo stream 1 .*opening over"
	[ ! -s "$W/a.log" ]
	grep -q "ready:" "$W/rs.log.1"
	run grep -c "ready:" "$W/rs.log"
	assert_output 0
}

@test "socket activation: the accept socket comes from systemd, matched by name, kept over a reload" {
	echo_tunnel echo
	port=$(free_port)
	p2=$(free_port)
	sed -i "s|tcp://127.0.0.1:0|tcp://127.0.0.1:$port|" "$W/a.conf"
	start_daemon b
	# systemd-socket-activate starts rstreamd on the first connection
	# (it execs it: $PID_a is the daemon's).
	RS_WRAP=(systemd-socket-activate -l 127.0.0.1:"$port"
	    -l 127.0.0.1:"$p2" --fdname=echo:stray)
	spawn_daemon a
	wait_port "$port"
	run client "$port" "activated"
	assert_output "activated"
	grep -q "tunnel echo: accepting on tcp://127.0.0.1:$port (socket from systemd)" "$W/a.log"
	grep -q "the socket systemd passed as 'stray' matches no client tunnel" "$W/a.log"
	# A changed tunnel keeps the socket systemd gave.
	sed -i "s|peer = \"$B:7471\"; }|peer = \"$B:7471\"; recvbuf = 65536; }|" "$W/a.conf"
	kill -HUP "$PID_a"
	wait_log a "reloaded"
	[ "$(grep -c "accepting on tcp://127.0.0.1:$port (socket from systemd)" "$W/a.log")" = 2 ]
	run client "$port" "still activated"
	assert_output "still activated"
}
