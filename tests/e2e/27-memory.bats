#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Ring memory that follows the traffic: a stream's rings start at ring_min
# and grow with a bulk transfer (protocol version 4, RING and RING_AT),
# shrink back once the stream idles (a receive ring halves while its
# client reads slower than the peer sends), and max_memory caps what all
# streams (and the links' control buffers) may pin, refusing streams (and
# growth) beyond it; each tunnel gets a share of it, so a peer that fills
# one tunnel's leaves the others theirs.

load helpers

setup() {
	rs_setup
}

teardown() {
	rs_teardown
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

# slow_reader PORT OUT GO: read what the stream at 127.0.0.1:PORT brings
# into OUT, 64 KiB every 50 ms until the file GO exists, then at once.
slow_reader() {
	socat -u TCP:127.0.0.1:"$1" STDOUT | {
		while [ ! -e "$3" ]; do
			dd bs=64k count=1 iflag=fullblock status=none
			sleep 0.05
		done
		cat
	} >"$2"
}

@test "a receive ring halves while its client reads slower than the peer sends, and every byte arrives" {
	# The target sends 48 MiB as fast as the link takes them; the client
	# reads 1.25 MiB/s until told to go on.
	head -c 48M /dev/urandom >"$W/slow.in"
	tp=$(free_port)
	spawn socat -t 60 TCP-LISTEN:"$tp",bind=127.0.0.1,reuseaddr \
	    OPEN:"$W/slow.in",rdonly
	wait_port "$tp"
	conf_b "{ name = \"slow\"; target = \"tcp://127.0.0.1:$tp\"; }"
	conf_a "{ name = \"slow\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	start_pair slow
	spawn slow_reader "$(accept_port a slow)" "$W/slow.out" "$W/slow.go"
	rp=$!
	# a's receive ring grew while the sockets behind it filled; full
	# since, it halves at a check (every 2 s) after a whole period.
	wait_until 30 at_least 1 resizes a shrink
	run resizes a grow
	[ "$output" -gt 0 ]
	# Meanwhile the sending side's rings kept their sizes, and the
	# stream still flows.
	run resizes b shrink
	assert_output 0
	kill -0 "$rp"
	touch "$W/slow.go"
	wait_pid "$rp" 180
	[ "$(sha "$W/slow.in")" = "$(sha "$W/slow.out")" ]
	run resizes a refused
	assert_output 0
}

@test "max_memory: streams beyond it are refused and counted, growth stops at it, bytes stay intact" {
	echo_target
	# Fixed rings: a "fixed" stream pins 512 KiB on b, a "fill" one
	# 320 KiB; the three links' control buffers 32 KiB each (16 + 16
	# messages for each of the two lanes a link may run); with one
	# stream of each open, 96 KiB of the MiB are left.  One pool for all tunnels (max_memory = 0 in defaults: no
	# tunnel has a share of its own).
	conf_b "{ name = \"fixed\"; target = \"tcp://127.0.0.1:$tp\"; ring_min = 0; },
	    { name = \"fill\"; target = \"tcp://127.0.0.1:$tp\"; ring_min = 0; recvbuf = 65536; },
	    { name = \"grow\"; target = \"tcp://127.0.0.1:$tp\"; sendbuf = 1048576; recvbuf = 1048576; }"
	sed -i '1i max_memory = 1;\ndefaults = { max_memory = 0; sq_size = 16; rq_size = 16; };' "$W/b.conf"
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
	wait_ctl b stats '.tunnels[] | select(.tunnel == "fill") | .pinned' 327680
	# Another "fixed" stream does not fit: refused before the target.
	run client "$(accept_port a fixed)" "no room"
	assert_output ""
	wait_log b "tunnel fixed: max_memory: 950272 bytes of ring memory are registered, the limit is 1048576"
	[ "$(ctl_json b stats '.tunnels[] | select(.tunnel == "fixed") | .ring_refusals')" = 1 ]
	[ "$(ctl_json b stats '.tunnels[] | select(.tunnel == "fixed") | .limited')" = 1 ]
	[ "$(ctl_json b stats '.tunnels[] | select(.tunnel == "fixed") | .max_memory')" = 0 ]
	run "$CTL" -s "$W/b.ctl" status
	assert_line "ring memory: 950272 of 1048576 bytes (max_memory); links' control buffers 98304, suspended streams' rings 0"

	# A stream that could grow to 2 MiB of rings on b gets what is left.
	head -c 6M /dev/urandom >"$W/g.in"
	spawn timeout 300 socat -t 60 - TCP:127.0.0.1:"$(accept_port a grow)" <"$W/g.in" >"$W/g.out"
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

@test "max_memory shares: a peer that fills a keyless tunnel's share cannot keep a keyed tunnel's next stream out" {
	(umask 077; head -c 32 /dev/urandom >"$W/k.key")
	echo_target
	# On b every stream pins 1 MiB (fixed 512 KiB rings); each of the
	# two tunnels has an equal share of the 4 MiB, 2 MiB; the two links'
	# control buffers take 32 KiB each (two lanes' worth).
	conf_b "{ name = \"open\"; target = \"tcp://127.0.0.1:$tp\"; },
	    { name = \"keyed\"; target = \"tcp://127.0.0.1:$tp\"; key_file = \"$W/k.key\"; }"
	sed -i '1i max_memory = 4;\ndefaults = { ring_min = 0; sendbuf = 524288; recvbuf = 524288; sq_size = 16; rq_size = 16; };' "$W/b.conf"
	conf_a "{ name = \"open\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; },
	    { name = \"keyed\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; key_file = \"$W/k.key\"; }"
	start_pair open
	link_up a keyed
	# A greedy peer: streams on the keyless tunnel until its share is full.
	hold_stream "$(accept_port a open)"
	hold_stream "$(accept_port a open)"
	wait_ctl b stats '.tunnels[] | select(.tunnel == "open") | .pinned' 2097152
	run client "$(accept_port a open)" "no room"
	assert_output ""
	wait_ctl b stats '.tunnels[] | select(.tunnel == "open") | .ring_refusals' 1
	wait_log b "tunnel open: max_memory of the tunnel (its share of the daemon's): its streams hold 2097152 bytes of ring memory, the limit is 2097152"
	# The keyed tunnel's next stream opens and carries its bytes.
	run client "$(accept_port a keyed)" "still room for the keyed tunnel"
	assert_output "still room for the keyed tunnel"

	# What each daemon says: b refused on the tunnel that hit its share,
	# a's client saw the refusal; b's keyed tunnel refused nothing.
	[ "$(ctl_json b stats '.tunnels[] | select(.tunnel == "open") | .limited')" = 1 ]
	[ "$(ctl_json b stats '.tunnels[] | select(.tunnel == "open") | .max_memory')" = 2097152 ]
	[ "$(ctl_json b stats '.tunnels[] | select(.tunnel == "keyed") | .ring_refusals')" = 0 ]
	[ "$(ctl_json b stats '.tunnels[] | select(.tunnel == "keyed") | .refused')" = 0 ]
	[ "$(ctl_json b stats '.tunnels[] | select(.tunnel == "keyed") | .opened')" = 1 ]
	[ "$(tunnel_metric rstreamd_tunnel_ring_refusals_total b open)" = 1 ]
	[ "$(tunnel_metric rstreamd_tunnel_ring_bytes_max b keyed)" = 2097152 ]
	[ "$(ctl_json a stats '.tunnels[] | select(.tunnel == "open") | .refused')" = 1 ]
	[ "$(ctl_json a stats '.tunnels[] | select(.tunnel == "open") | .opened')" = 2 ]
	[ "$(ctl_json a stats '.tunnels[] | select(.tunnel == "keyed") | .refused')" = 0 ]
	[ "$(ctl_json a stats '.tunnels[] | select(.tunnel == "keyed") | .opened')" = 1 ]
	wait_ctl b status '.ring_bytes' $((2097152 + 65536))
	[ "$(ctl_json b status '.control_bytes')" = 65536 ]
	[ "$(metric rstreamd_control_bytes b)" = 65536 ]
}
