#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Volume through one tunnel: 32 MiB each way, both ways at once, and a
# burst of 50 streams, every byte checked by sha256 at the far end; the
# burst meets no receiver-not-ready NAK and no completion queue overflow.
# 32 MiB is 128 times the largest ring a stream grows to by default
# (sendbuf and recvbuf, 256 KiB): every ring wraps over and over.
# A bulk stream takes turns: both daemons count the turns their budget
# ended, in the direction they carried it.

load helpers

MIB32=33554432

setup() {
	rs_setup
	echo_target
	sink=$(free_port)
	src=$(free_port)
	conf_b "{ name = \"echo\"; target = \"tcp://127.0.0.1:$tp\"; },
	    { name = \"sink\"; target = \"tcp://127.0.0.1:$sink\"; },
	    { name = \"src\"; target = \"tcp://127.0.0.1:$src\"; }"
	conf_a "{ name = \"echo\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B\"; },
	    { name = \"sink\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B\"; },
	    { name = \"src\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B\"; }"
	start_daemon b
	start_daemon a
	link_up a echo
	link_up a sink
	link_up a src
}

teardown() {
	rs_teardown
}

# budget_stops NAME TUNNEL DIRECTION: daemon NAME's count of the turns
# that the per-turn budget ended for TUNNEL's streams, DIRECTION in (read
# from local sockets) or out (written to them).
budget_stops() {
	ctl_json "$1" stats ".tunnels[] | select(.tunnel == \"$2\") | .budget_stops_$3"
}

# stopped_both READER WRITER TUNNEL: a bulk stream of TUNNEL went through;
# its worker stopped it at its turn's budget on both sides: daemon READER
# reading the local socket, daemon WRITER writing the other; READER's
# metrics say the same as its stats.
stopped_both() {
	local in out
	in=$(budget_stops "$1" "$3" in)
	out=$(budget_stops "$2" "$3" out)
	echo "# budget stops: $1 in $in, $2 out $out" >&3
	[ "$in" -gt 0 ]
	[ "$out" -gt 0 ]
	run "$CTL" -s "$W/$1.ctl" metrics
	assert_line "rstreamd_tunnel_budget_stops_total{tunnel=\"$3\",direction=\"in\"} $in"
}

@test "32 MiB from the client side to the target, then 32 MiB from the target to the client side, sha256 equal" {
	# One setup for both directions: the same daemons and links carry
	# the one transfer, then the other.
	head -c "$MIB32" /dev/urandom >"$W/in"
	spawn socat -u TCP-LISTEN:"$sink",bind=127.0.0.1,reuseaddr OPEN:"$W/out",creat,trunc
	sp=$!
	wait_port "$sink"
	run timeout 300 socat -u OPEN:"$W/in" TCP:127.0.0.1:"$(accept_port a sink)"
	assert_success
	wait_pid "$sp" 120
	[ "$(sha "$W/in")" = "$(sha "$W/out")" ]
	# a reading the client, b writing to the target.
	stopped_both a b sink

	rm -f "$W/out"
	spawn socat -U TCP-LISTEN:"$src",bind=127.0.0.1,reuseaddr OPEN:"$W/in"
	wait_port "$src"
	run timeout 300 socat -u TCP:127.0.0.1:"$(accept_port a src)" OPEN:"$W/out",creat,trunc
	assert_success
	[ "$(sha "$W/in")" = "$(sha "$W/out")" ]
	# And the other way: b reading the target, a writing to the client.
	stopped_both b a src
}

# bats test_tags=iwarp
@test "32 MiB both ways at once through an echo target, sha256 equal" {
	head -c "$MIB32" /dev/urandom >"$W/in"
	# Not "run": it would capture the output instead of the file getting it.
	timeout 400 socat -t 120 TCP:127.0.0.1:"$(accept_port a echo)" STDIO \
	    <"$W/in" >"$W/out"
	[ "$(stat -c %s "$W/out")" -eq "$MIB32" ]
	[ "$(sha "$W/in")" = "$(sha "$W/out")" ]
}

# rnr_naks: the receiver-not-ready NAKs both test devices sent and got,
# summed over every hw_counters file of theirs that counts them
# (Soft-RoCE's rcvd_rnr_err and send_rnr_err; 0 where a driver has none).
rnr_naks() {
	cat /sys/class/infiniband/{"$RSTREAMD_TEST_DEV_A","$RSTREAMD_TEST_DEV_B"}/ports/*/hw_counters/*rnr_err \
	    2>/dev/null | awk '{ n += $1 } END { print n + 0 }'
}

# cq_overflows: the kernel's reports of a completion queue overflowing
# (Soft-RoCE says "queue full"; hardware ends the queue pair, which the
# links' failures show).
cq_overflows() {
	dmesg 2>/dev/null | grep -c 'queue full' || true
}

# bats test_tags=iwarp
@test "a burst of 50 streams opening and sending both ways at once: every payload back, no RNR NAK, no CQ overflow, no link failure" {
	port=$(accept_port a echo)
	rnr0=$(rnr_naks)
	cq0=$(cq_overflows)
	fa=$(ctl_json a links '[.[].failures_total // 0] | add')
	fb=$(ctl_json b links '[.[].failures_total // 0] | add')
	# The 50 payloads first, by one process (in the guest a program costs
	# a start), so that the streams open in one burst.
	python3 -c 'import os, sys
for i in range(1, 51):
    with open("%s/in.%d" % (sys.argv[1], i), "wb") as f:
        f.write(os.urandom(100000 + i * 1000))' "$W"
	pids=()
	for i in $(seq 50); do
		spawn timeout 300 socat -t 120 - TCP:127.0.0.1:"$port" <"$W/in.$i" >"$W/out.$i"
		pids+=("$!")
	done
	for p in "${pids[@]}"; do
		wait "$p"
	done
	# Every payload back: the sha256 of each, by one sha256sum.
	declare -A sums
	while read -r h f; do
		sums[${f##*/}]=$h
	done < <(sha256sum "$W"/in.* "$W"/out.*)
	for i in $(seq 50); do
		# (A file missing on either side: "none" is no "gone".)
		[ "${sums[in.$i]:-none}" = "${sums[out.$i]:-gone}" ] || {
			echo "stream $i differs" >&2
			return 1
		}
	done
	# Every one of them was a stream of its own.
	[ "$(grep -c 'tunnel echo stream .* opening over' "$W/a.log")" -ge 50 ]
	# Credits kept a receive posted for every message, on both devices.
	assert_equal "$(rnr_naks)" "$rnr0"
	assert_equal "$(cq_overflows)" "$cq0"
	assert_equal "$(ctl_json a links '[.[].failures_total // 0] | add')" "$fa"
	assert_equal "$(ctl_json b links '[.[].failures_total // 0] | add')" "$fb"
	# Were a receive queue ever to run dry, the sender would wait 0.64 ms,
	# not the RDMA CM's 655: both ends of the link say so.  iWARP has no
	# RNR (an empty receive queue ends the connection): neither says one.
	if iwarp; then
		assert_equal "$(ctl_json a links '[.[] | .rnr_timer_us] | unique | map(tostring) | join(",")')" null
		assert_equal "$(ctl_json b links '[.[] | .rnr_timer_us] | unique | map(tostring) | join(",")')" null
		return
	fi
	assert_equal "$(ctl_json a links '[.[] | select(.tunnel == "echo")][0].rnr_timer_us')" 640
	qpn=$(ctl_json a links '[.[] | select(.tunnel == "echo")][0].peer_qpn')
	assert_equal "$(ctl_json b links "[.[] | select(.qpn == $qpn)][0].rnr_timer_us")" 640
}
