#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Peer authentication with pre-shared keys (key_file), the allow list, and
# what a daemon says and counts when a peer fails.  The hostile-peer side
# of authentication (no proof, a wrong one, an OPEN before it, silence)
# is in 18-hostile.bats.

load helpers

setup() {
	rs_setup
}

teardown() {
	rs_teardown
}

# key NAME: a fresh 32-byte key at $W/NAME.key, readable by its owner only.
key() {
	(umask 077; head -c 32 /dev/urandom >"$W/$1.key")
}

@test "keys: matching keys carry traffic; -n refuses a key others can read or a short one" {
	key k1
	echo_target
	conf_b "{ name = \"echo\"; target = \"tcp://127.0.0.1:$tp\"; }"
	echo "key_file = \"$W/k1.key\";" >>"$W/b.conf"
	conf_a "{ name = \"echo\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\";
	    key_file = \"$W/k1.key\"; max_streams = 2; }"
	start_pair echo
	grep -q "tunnel echo: link to .* is up (.*, authenticated; " "$W/a.log"
	wait_log b "link from $A:[0-9]* authenticated"
	port=$(accept_port a echo)
	run client "$port" "through an authenticated link"
	assert_output "through an authenticated link"
	# Neither the key nor a stream's bytes (in its rings: the stream
	# stays open, its echo back) would be in a core dump of either daemon.
	printf 'marker-%s' "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$W/mark"
	n=$(ctl_json a stats '.tunnels[0].bytes_out')
	spawn timeout 60 socat SYSTEM:"cat $W/mark; echo; exec sleep 100" \
	    TCP:127.0.0.1:"$(accept_port a echo)" </dev/null >/dev/null 2>&1
	wait_until 30 at_least $((n + 40)) ctl_json a stats '.tunnels[0].bytes_out'
	for pid in "$PID_a" "$PID_b"; do
		run python3 "$RSTREAMD_SRCDIR/tests/e2e/memscan.py" "$pid" "$W/k1.key" "$W/mark"
		assert_success
		assert_line --regexp "k1.key dumped 0 left-out [1-9]"
		assert_line --regexp "mark dumped 0 left-out [1-9]"
	done
	kill "${RS_PIDS[-1]}"
	wait_ctl a stats '.tunnels[] | select(.tunnel == "echo") | .active' 0
	# Every tunnel has a key: no warning about unauthenticated links.
	run grep "not authenticated for" "$W/a.log" "$W/b.log"
	assert_failure
	[ "$(metric rstreamd_auth_failures_total b)" = 0 ]

	# The keyed client tunnel's own max_streams: two streams held, the
	# third client refused by a's limit (its message, its counter), and
	# not one stream counted refused or denied anywhere else.
	hold_stream "$port"
	hold_stream "$port"
	wait_ctl a stats '.tunnels[] | select(.tunnel == "echo") | .active' 2
	run client "$port" "one too many" 20
	refute_output "one too many"
	wait_log a "tunnel echo stream .*stream limit 2 reached"
	run ctl_json a stats '.tunnels[] | select(.tunnel == "echo") | "\(.opened) \(.refused) \(.limited) \(.denied)"'
	assert_output "4 1 1 0"
	run ctl_json b stats '.tunnels[] | select(.tunnel == "echo") | "\(.opened) \(.refused) \(.limited) \(.denied)"'
	assert_output "4 0 0 0"

	# A key the group or others can read is no key.
	chmod 640 "$W/k1.key"
	run "$RSTREAMD_BIN" -n -c "$W/b.conf"
	assert_failure
	assert_output --regexp "b.conf:[0-9]+: key_file $W/k1.key is accessible by group or others \(mode 0640\)"
	chmod 600 "$W/k1.key"
	(umask 077; head -c 16 /dev/urandom >"$W/short.key")
	sed -i "s|k1.key|short.key|" "$W/b.conf"
	run "$RSTREAMD_BIN" -n -c "$W/b.conf"
	assert_failure
	assert_output --partial "holds 16 bytes; a key needs at least 32"
}

@test "keys: a wrong key is rejected, logged with the address and counted, and hurts no other link" {
	key k1
	key k2
	echo_target
	conf_b "{ name = \"echo\"; target = \"tcp://127.0.0.1:$tp\"; },
	    { name = \"bad\"; target = \"tcp://127.0.0.1:$tp\"; }"
	echo "key_file = \"$W/k1.key\";" >>"$W/b.conf"
	conf_a "{ name = \"echo\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\";
	    key_file = \"$W/k1.key\"; },
	    { name = \"bad\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\";
	    key_file = \"$W/k2.key\"; }"
	# notice, plus start_daemon's -v: info, where a link's repeated
	# failures are not all logged (at debug they are).
	echo 'log_level = "notice";' >>"$W/a.conf"
	start_pair echo
	wait_log b "link from $A:[0-9]* failed authentication: authentication failed: the peer's proof is wrong"
	wait_log a "tunnel bad: link to .* failed"
	# Counted on both sides, every retry; a says it once, not per retry.
	[ "$(metric rstreamd_auth_failures_total b)" -ge 1 ]
	wait_until 30 at_least 3 metric rstreamd_auth_failures_total a
	run grep -c "tunnel bad: link to .* failed" "$W/a.log"
	assert_output 1
	run "$CTL" -s "$W/b.ctl" status
	assert_output --regexp "authentication failures: [1-9]"
	# A client of the bad tunnel is closed, not served and not hung.
	run timeout 20 socat -t 5 - TCP:127.0.0.1:"$(accept_port a bad)" <<<"no"
	refute_output "no"
	run grep -c "tunnel bad: link to .* is up" "$W/a.log"
	assert_output 0
	# The good link is untouched.
	run client "$(accept_port a echo)" "unharmed"
	assert_output "unharmed"
	run grep "tunnel echo: link to .* went down" "$W/a.log"
	assert_failure
}

@test "keys: a link opens only the tunnels whose key it proved; a keyless mix warns once" {
	key kp
	key kr
	echo_target
	# b: tunnel pg needs key kp, tunnel redis key kr, tunnel open none.
	conf_b "{ name = \"pg\"; target = \"tcp://127.0.0.1:$tp\"; key_file = \"$W/kp.key\"; },
	    { name = \"redis\"; target = \"tcp://127.0.0.1:$tp\"; key_file = \"$W/kr.key\"; },
	    { name = \"open\"; target = \"tcp://127.0.0.1:$tp\"; }"
	# a proves kp for its "redis" tunnel too: a real key, the wrong tunnel.
	conf_a "{ name = \"pg\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; key_file = \"$W/kp.key\"; },
	    { name = \"redis\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; key_file = \"$W/kp.key\"; },
	    { name = \"open\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	start_pair pg
	link_up a redis
	link_up a open
	grep -q "tunnel open: link to .* is up (.*, not authenticated; " "$W/a.log"
	run client "$(accept_port a pg)" "pg ok"
	assert_output "pg ok"
	run client "$(accept_port a open)" "open ok"
	assert_output "open ok"
	run client "$(accept_port a redis)" "must not pass" 20
	refute_output "must not pass"
	wait_log b "tunnel redis: link from $A:[0-9]*: refused a stream: the link is not authenticated with this tunnel's key"
	wait_log a "not authorised for this tunnel"
	run "$CTL" -s "$W/b.ctl" -j stats
	[ "$(echo "$output" | jq '.tunnels[] | select(.tunnel == "redis") | .denied')" = 1 ]

	# One tunnel on each side lacks a key: each daemon says so once,
	# and not again on reload.
	[ "$(grep -c "links are not authenticated for 1 tunnel without a key_file (open)" "$W/a.log")" = 1 ]
	[ "$(grep -c "links are not authenticated for 1 tunnel without a key_file (open)" "$W/b.log")" = 1 ]
	kill -HUP "$PID_b"
	wait_log b "reloaded"
	[ "$(grep -c "links are not authenticated" "$W/b.log")" = 1 ]
}

@test "keys: a keyed peer meets a keyless daemon, and a keyless peer a daemon that needs keys" {
	key k1
	echo_target
	conf_b "{ name = \"echo\"; target = \"tcp://127.0.0.1:$tp\"; }"
	conf_a "{ name = \"echo\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; key_file = \"$W/k1.key\"; }"
	start_daemon b
	start_daemon a
	wait_log b "link from $A:[0-9]* rejected: it authenticates, but no key_file is configured here"
	wait_log a "tunnel echo: link to .* failed: "
	[ "$(metric rstreamd_auth_failures_total b)" -ge 1 ]

	# Swap: b needs a key now, a has none.  A reload applies it, b's
	# first.  (Until a reloads, a's keyed tunnel may link, and should:
	# b has its key now.)
	echo "key_file = \"$W/k1.key\";" >>"$W/b.conf"
	conf_a "{ name = \"echo\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	kill -HUP "$PID_b"
	wait_log b "reloaded .*b.conf"
	kill -HUP "$PID_a"
	wait_log a "reloaded .*a.conf"
	wait_log b "link from $A:[0-9]* rejected: it does not authenticate, and every tunnel here needs a key_file"
	# No keyless link of a's came up, then or since.  (A keyed one that
	# was connecting as a reloaded may say it came up after the reload's
	# line, and then end: its up line says "authenticated".)
	run sh -c "sed -n '/reloaded .*a.conf/,\$p' '$W/a.log' | grep -c 'tunnel echo: link to .* is up (.*, not authenticated; '"
	assert_output 0
	run ctl_json a tunnels '.[] | select(.tunnel == "echo") | .link'
	refute_output up
}

@test "allow: a peer outside the list is rejected at connect and counted; a reload lets it in" {
	echo_tunnel echo
	echo "allow = [ \"192.0.2.99\", \"2001:db8::/32\" ];" >>"$W/b.conf"
	start_daemon b
	start_daemon a
	wait_log b "link from $A:[0-9]* rejected: not in allow"
	[ "$(metric rstreamd_links_rejected_total b)" -ge 1 ]
	sed -i "s|^allow = .*|allow = [ \"192.0.2.99\", \"$A/24\" ];|" "$W/b.conf"
	kill -HUP "$PID_b"
	link_up a echo
	run client "$(accept_port a echo)" "allowed now"
	assert_output "allowed now"
}
