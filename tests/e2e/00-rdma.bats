#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Sanity checks of the RDMA environment that the other e2e tests rely on.
# Runs inside tests/vm/softroce-run, which provides two endpoints:
#   tests/vm/softroce-run -- bats --tap tests/e2e/00-rdma.bats
# If this file fails, the other e2e failures say nothing about rstreamd.

# For spawn and reap alone (and bats-support and bats-assert).
load helpers

setup() {
	local v
	for v in RSTREAMD_TEST_ADDR_A RSTREAMD_TEST_ADDR_B RSTREAMD_TEST_DEV_A RSTREAMD_TEST_DEV_B; do
		[[ -n ${!v:-} ]] || fail "$v not set: run this through tests/vm/softroce-run"
	done
	A=${RSTREAMD_TEST_ADDR_A:?}
	B=${RSTREAMD_TEST_ADDR_B:?}
	DEV_A=${RSTREAMD_TEST_DEV_A:?}
	DEV_B=${RSTREAMD_TEST_DEV_B:?}
	server_pid=
	RS_PIDS=()
}

teardown() {
	reap
}

# Starts a server in the background; its output goes to $BATS_TEST_TMPDIR/server.log.
start_server() {
	spawn "$@" >"$BATS_TEST_TMPDIR/server.log" 2>&1
	server_pid=$!
}

# Waits (bounded) until an rdma_cm listener on PORT exists, so that the
# client does not race the server; gives up early if the server died.
wait_listen() {
	local port=$1 n=0
	until rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN .*src-addr [0-9.]*:$port "; do
		kill -0 "$server_pid" 2>/dev/null || fail "server exited early: $(cat "$BATS_TEST_TMPDIR/server.log")"
		((++n < 200)) || fail "no rdma_cm listener on port $port after 20 s"
		sleep 0.1
	done
}

# Waits (bounded) for the server to exit and checks its exit status.
wait_server() {
	local rc=0
	timeout 30 tail --pid="$server_pid" -f /dev/null || fail "server still running: $(cat "$BATS_TEST_TMPDIR/server.log")"
	wait "$server_pid" || rc=$?
	server_pid=
	((rc == 0)) || fail "server failed with status $rc: $(cat "$BATS_TEST_TMPDIR/server.log")"
}

# Prints the packet counter NAME of soft-RoCE device DEV, or nothing if the
# device has no such counter (hardware devices name theirs differently).
rxe_counter() {
	local f=/sys/class/infiniband/$1/ports/1/hw_counters/$2
	[[ -r $f ]] && cat "$f"
	return 0
}

@test "the environment names two addresses and two devices" {
	[[ $A =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "ADDR_A is not IPv4: $A"
	[[ $B =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "ADDR_B is not IPv4: $B"
	[[ ${RSTREAMD_TEST_MODE:-} == native || ${RSTREAMD_TEST_MODE:-} == vm ]] ||
		fail "bad RSTREAMD_TEST_MODE: ${RSTREAMD_TEST_MODE:-}"
	[[ -d ${RSTREAMD_TEST_OUTDIR:-} && -w $RSTREAMD_TEST_OUTDIR ]] ||
		fail "RSTREAMD_TEST_OUTDIR is not a writable directory"
	if [[ $RSTREAMD_TEST_MODE == vm ]]; then
		assert_not_equal "$A" "$B"
		assert_not_equal "$DEV_A" "$DEV_B"
	fi
}

@test "ibv_devices lists both devices" {
	run ibv_devices
	assert_success
	assert_line --regexp "^[[:space:]]*${DEV_A}[[:space:]]"
	assert_line --regexp "^[[:space:]]*${DEV_B}[[:space:]]"
}

@test "both devices have an active port" {
	local d
	for d in "$DEV_A" "$DEV_B"; do
		run ibv_devinfo -d "$d"
		assert_success
		assert_line --regexp "state:[[:space:]]+PORT_ACTIVE"
	done
}

@test "rping moves data from B to A over an RDMA CM connection" {
	local port=7301 sent_b rcvd_a
	sent_b=$(rxe_counter "$DEV_B" sent_pkts)
	rcvd_a=$(rxe_counter "$DEV_A" rcvd_pkts)

	start_server timeout 60 rping -s -a "$A" -p "$port" -C 10 -S 100 -v
	wait_listen "$port"
	run timeout 60 rping -c -a "$A" -I "$B" -p "$port" -C 10 -S 100 -v
	assert_success
	# rping -v prints each buffer; the pattern starts one letter later
	# each time.
	assert_line --regexp '^ping data: rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ'
	assert_line --regexp '^ping data: rdma-ping-9: JKLMNOPQRSTUVWXYZ'
	[[ $(grep -c '^ping data: rdma-ping-' <<<"$output") -eq 10 ]] || fail "expected 10 pings"
	wait_server
	run grep -c '^server ping data: rdma-ping-' "$BATS_TEST_TMPDIR/server.log"
	assert_output 10

	# With two distinct soft-RoCE devices, the packets must really have
	# gone from one to the other, not looped back inside one device.
	if [[ -n $sent_b && -n $rcvd_a && $DEV_A != "$DEV_B" ]]; then
		(($(rxe_counter "$DEV_B" sent_pkts) > sent_b)) || fail "$DEV_B sent nothing"
		(($(rxe_counter "$DEV_A" rcvd_pkts) > rcvd_a)) || fail "$DEV_A received nothing"
	fi
}

@test "ib_write_bw (rdma_cm) completes between the two addresses" {
	local port=7302
	# 64 KiB messages; few iterations, soft-RoCE under TCG is slow.
	start_server timeout 120 ib_write_bw -R -F -d "$DEV_A" -p "$port" -n 50
	wait_listen "$port"
	run timeout 120 ib_write_bw -R -F -d "$DEV_B" -p "$port" -n 50 "$A"
	assert_success
	# "#bytes #iterations BW-peak BW-average MsgRate"
	assert_line --regexp '^[[:space:]]*65536[[:space:]]+50[[:space:]]+[0-9.]+[[:space:]]+[0-9.]+[[:space:]]+[0-9.]+'
	wait_server
}
