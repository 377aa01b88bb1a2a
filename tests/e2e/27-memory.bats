#!/usr/bin/env bats
# Ring memory that follows the traffic: a stream's rings start at ring_min
# and grow with a bulk transfer (protocol version 4, RING and RING_AT),
# shrink back once the stream idles, and max_memory caps what all streams
# may pin, refusing streams (and growth) beyond it.

load helpers

setup() {
	rs_setup
}

teardown() {
	rs_teardown
}

# resizes DAEMON KIND: DAEMON's ring resizes of KIND (grow, shrink,
# refused) over its links.
resizes() {
	"$CTL" -s "$W/$1.ctl" metrics |
	    sed -n "s/^rstreamd_link_ring_resizes_total{.*,kind=\"$2\"} \([0-9]*\)$/\1/p" |
	    awk '{ n += $1 } END { print n + 0 }'
}

# size FILE: its size in bytes (0 if missing).
size() {
	stat -c %s "$1" 2>/dev/null || echo 0
}

@test "rings grow with a bulk stream, shrink back while it idles, and the tunnel's pinned bytes follow" {
	echo_tunnel mem
	start_pair mem
	# An idle stream holds its two 16384-byte rings on each side.
	hold_stream "$(accept_port a mem)"
	hold=$cp
	wait_ctl a stats '.tunnels[0].pinned' 32768
	wait_ctl b stats '.tunnels[0].pinned' 32768
	# 4 MiB each way, then the stream waits (open, idle) for its go.
	paced_stream "$(accept_port a mem)" bulk 8
	wait_until 180 at_least 4194304 size "$W/bulk.out"
	run resizes a grow
	assert_success
	[ "$output" -gt 0 ]
	run resizes b grow
	[ "$output" -gt 0 ]
	# Idle for a keepalive period or two: back to 16384-byte rings.
	wait_ctl a stats '.tunnels[0].pinned' 65536 30
	wait_ctl b stats '.tunnels[0].pinned' 65536 30
	run resizes a shrink
	[ "$output" -gt 0 ]
	run resizes b shrink
	[ "$output" -gt 0 ]
	# The rest flows through the small rings (growing again), intact.
	touch "$W/bulk.go"
	wait_pid "$sp" 180
	[ "$(sha "$W/bulk.in")" = "$(sha "$W/bulk.out")" ]
	kill "$hold"
	wait_ctl a stats '.tunnels[0].pinned' 0
	wait_ctl b stats '.tunnels[0].pinned' 0
	[ "$(tunnel_metric rstreamd_tunnel_ring_bytes b mem)" = 0 ]
	run resizes b refused
	assert_output 0
}

@test "max_memory: streams beyond it are refused and counted, growth stops at it, bytes stay intact" {
	echo_target
	# Fixed rings: a "fixed" stream pins 512 KiB on b, a "fill" one
	# 384 KiB; with one of each open, 128 KiB of the MiB are left.
	conf_b "{ name = \"fixed\"; target = \"tcp://127.0.0.1:$tp\"; ring_min = 0; },
	    { name = \"fill\"; target = \"tcp://127.0.0.1:$tp\"; ring_min = 0; recvbuf = 131072; },
	    { name = \"grow\"; target = \"tcp://127.0.0.1:$tp\"; sendbuf = 1048576; recvbuf = 1048576; }"
	sed -i '1i max_memory = 1;' "$W/b.conf"
	conf_a "{ name = \"fixed\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; },
	    { name = \"fill\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; },
	    { name = \"grow\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; sendbuf = 1048576; recvbuf = 1048576; }"
	start_pair fixed
	link_up a fill
	link_up a grow
	wait_ctl b status '.max_memory' 1048576
	hold_stream "$(accept_port a fixed)"
	h1=$cp
	hold_stream "$(accept_port a fill)"
	h2=$cp
	wait_ctl b stats '.tunnels[] | select(.tunnel == "fixed") | .pinned' 524288
	wait_ctl b stats '.tunnels[] | select(.tunnel == "fill") | .pinned' 393216
	# Another "fixed" stream does not fit: refused before the target.
	run client "$(accept_port a fixed)" "no room"
	assert_output ""
	wait_log b "tunnel fixed: max_memory: 917504 bytes of ring memory are registered, the limit is 1048576"
	[ "$(ctl_json b stats '.tunnels[] | select(.tunnel == "fixed") | .ring_refusals')" = 1 ]
	[ "$(ctl_json b stats '.tunnels[] | select(.tunnel == "fixed") | .limited')" = 1 ]
	run "$CTL" -s "$W/b.ctl" status
	assert_line "ring memory: 917504 of 1048576 bytes (max_memory)"

	# A stream that could grow to 2 MiB of rings on b gets what is left.
	head -c 6M /dev/urandom >"$W/g.in"
	timeout 300 socat -t 60 - TCP:127.0.0.1:"$(accept_port a grow)" <"$W/g.in" >"$W/g.out" 3>&- &
	wait_pid $! 300
	[ "$(sha "$W/g.in")" = "$(sha "$W/g.out")" ]
	run resizes b refused
	[ "$output" -gt 0 ]
	[ "$(ctl_json b stats '.tunnels[] | select(.tunnel == "grow") | .ring_refusals')" -gt 0 ]
	run resizes a refused
	assert_output 0
	kill "$h1" "$h2"
	wait_ctl b status '.streams' 0
}
