#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A fleet with node identities (identity_file, peers_file) and no keys:
# three daemons (a at ADDR_A; b and c at ADDR_B, ports 7471 and 7472),
# streams sealed and in clear checked byte for byte, the peer's name in
# what both ends say, an identity nobody listed refused (its own link
# never up: the serving side confirms only whom it took), a key
# rotated by reload while a stream runs, a key removed by reload
# ending its live link, and a peer taken out of a target tunnel's peers
# by reload losing that tunnel's streams but not its links; both counted.

load helpers

setup() {
	rs_setup
}

teardown() {
	rs_teardown
}

# fleet_conf NAME LISTEN TUNNELS: NAME's config with its identity and the
# shared peers file (LISTEN "": none).
fleet_conf() {
	{
		[ -z "$2" ] || echo "listen = \"$2\";"
		echo "control = \"$W/$1.ctl\";"
		echo "identity_file = \"$W/$1.id\";"
		echo "peers_file = \"$W/peers\";"
		echo "tunnels = ( $3 );"
	} >"$W/$1.conf"
}

# through PORT NAME [MIB]: MIB MiB (default 2) of random bytes through
# the echo at 127.0.0.1:PORT; succeeds if they come back intact.
through() {
	head -c "${3:-2}M" /dev/urandom >"$W/$2.in"
	timeout 120 socat -t 30 - TCP:127.0.0.1:"$1" <"$W/$2.in" >"$W/$2.out"
	[ "$(sha "$W/$2.in")" = "$(sha "$W/$2.out")" ]
}

# bats test_tags=iwarp
@test "identities: a fleet of three carries streams sealed and in clear; both ends name their peer" {
	ident a
	ident b
	ident c
	run cat "$W/a.pub"
	assert_output --regexp '^[A-Za-z0-9+/]{43}=$'
	[ "$(stat -c %a "$W/a.id")" = 600 ]
	run "$RSTREAMD_BIN" --genkey "$W/a.id"
	assert_failure
	assert_output --partial "File exists"
	printf '# the fleet\n%s node-a\n%s node-b\n%s node-c\n' \
	    "$(cat "$W/a.pub")" "$(cat "$W/b.pub")" "$(cat "$W/c.pub")" >"$W/peers"
	echo_target
	fleet_conf b "$B:7471" "{ name = \"sec\"; target = \"tcp://127.0.0.1:$tp\"; },
	    { name = \"clear\"; target = \"tcp://127.0.0.1:$tp\"; encrypt = false; }"
	fleet_conf c "$B:7472" "{ name = \"toc\"; target = \"tcp://127.0.0.1:$tp\";
	    peers = [ \"node-a\" ]; }"
	fleet_conf a "" "{ name = \"sec\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; },
	    { name = \"clear\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\";
	      encrypt = false; },
	    { name = \"toc\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7472\";
	      peers = [ \"node-c\" ]; }"
	sed -i "1i source = \"$A\";" "$W/a.conf"
	run "$RSTREAMD_BIN" -n -c "$W/a.conf"
	assert_success
	start_daemon b
	start_daemon c
	start_daemon a
	# With a key, no core dump (PR_SET_DUMPABLE 0 too, not seen by root).
	grep -Eq '^Max core file size +0 +0 ' "/proc/$PID_a/limits"
	link_up a sec
	link_up a clear
	link_up a toc
	through "$(accept_port a sec)" sec 4
	through "$(accept_port a clear)" clear 4
	through "$(accept_port a toc)" toc 1
	# Each end names the other, and says whether the link is sealed.
	run ctl_json a links '.[] | select(.tunnel == "sec") | "\(.identity) \(.sealing)"'
	assert_output --regexp '^node-b (aes-256-gcm|chacha20-poly1305)$'
	# A sealed link runs both lanes (version 9 and later; version 12 on
	# iWARP), as both ends say.
	run ctl_json a links '.[] | select(.tunnel == "sec") | "\(.version) \(.lanes)"'
	assert_output "12 2"
	run ctl_json b links '[.[] | select(.direction == "in" and .sealing != "") | .lanes] | map(tostring) | join(",")'
	assert_output "2"
	run ctl_json a links '.[] | select(.tunnel == "clear") | "\(.identity) [\(.sealing)]"'
	assert_output "node-b []"
	run ctl_json a links '.[] | select(.tunnel == "toc") | .identity'
	assert_output "node-c"
	run ctl_json b links '[.[] | select(.direction == "in") | .identity] | unique | join(",")'
	assert_output "node-a"
	run ctl_json b links '[.[] | select(.direction == "in") | .sealing] | sort | join(",")'
	assert_output --regexp '^,(aes-256-gcm|chacha20-poly1305)$'
	wait_log b "link from $A:[0-9]* authenticated as node-a, sealed with "
	wait_log b "link from $A:[0-9]* authenticated as node-a, not sealed"
	grep -q "tunnel sec: link to .* is up (.*authenticated as node-b, sealed with" "$W/a.log"
	run "$CTL" -s "$W/b.ctl" metrics
	# Its two links from node-a (sec sealed, clear not) under one label
	# set, the peer's name: one sample that counts them, and an info
	# line each.
	assert_line 'rstreamd_link_up{tunnel="",peer="node-a",direction="in"} 2'
	assert_line --regexp '^rstreamd_link_peer_info\{tunnel="",peer="node-a",direction="in",identity="node-a",sealing="(aes-256-gcm|chacha20-poly1305)"\} 1$'
	assert_line 'rstreamd_link_peer_info{tunnel="",peer="node-a",direction="in",identity="node-a",sealing=""} 1'
	run "$CTL" -s "$W/a.ctl" metrics
	assert_line --regexp "^rstreamd_link_peer_info\{tunnel=\"sec\",peer=\"$B:7471\",direction=\"out\",identity=\"node-b\",sealing=\"(aes-256-gcm|chacha20-poly1305)\"\} 1$"
	# Streams name the node too.  Its bytes, sealed both ways, are read
	# from private copies of the receive rings, which both ends count.
	spawn timeout 600 socat SYSTEM:"printf hello; sleep 1000" \
	    TCP:127.0.0.1:"$(accept_port a sec)" </dev/null >/dev/null 2>&1
	wait_ctl b streams '[.[] | select(.tunnel == "sec") | .identity] | join(",")' node-a
	wait_ctl a links '[.[] | select(.tunnel == "sec") | .private_bytes > 0 and .private_bytes <= .ring_bytes][0]' true
	wait_ctl b links '[.[] | select(.direction == "in" and .sealing != "") | .private_bytes > 0 and .private_bytes <= .ring_bytes][0]' true
	# No key anywhere: nothing was refused or failed.
	[ "$(metric rstreamd_auth_failures_total b)" = 0 ]
	[ "$(metric rstreamd_auth_failures_total c)" = 0 ]

	# b's reload takes node-a out of sec's peers: b resets node-a's
	# stream there at once and counts it; both links from node-a stay
	# up, clear carries on, and sec takes no new stream from node-a.
	fleet_conf b "$B:7471" "{ name = \"sec\"; target = \"tcp://127.0.0.1:$tp\"; peers = [ \"node-c\" ]; },
	    { name = \"clear\"; target = \"tcp://127.0.0.1:$tp\"; encrypt = false; }"
	kill -HUP "$PID_b"
	wait_log b "tunnel sec stream [0-9]* (target, .*): revoked by a reload: the peer is node-a, which the tunnel no longer names in its peers; resetting the stream"
	wait_ctl b streams '[.[] | select(.tunnel == "sec")] | length' 0
	[ "$(metric rstreamd_streams_revoked_total b)" = 1 ]
	[ "$(metric rstreamd_links_revoked_total b)" = 0 ]
	[ "$(ctl_json b status .streams_revoked)" = 1 ]
	[ "$(metric rstreamd_streams_revoked_total a)" = 0 ]
	run "$CTL" -s "$W/b.ctl" status
	assert_line "revoked by reloads: 0 links, 1 stream"
	run ctl_json b links '[.[] | select(.direction == "in" and .state == "up")] | length'
	assert_output 2
	run ctl_json a links '[.[] | select(.tunnel == "sec" or .tunnel == "clear") | .state] | join(",")'
	assert_output "up,up"
	through "$(accept_port a clear)" clear2 1
	run through "$(accept_port a sec)" denied 1
	assert_failure
}

@test "identities: an identity nobody listed is refused; a key rotates by reload under a stream; a removed one's link ends" {
	ident a
	ident b
	ident x
	printf '%s node-a\n%s node-b\n' "$(cat "$W/a.pub")" "$(cat "$W/b.pub")" >"$W/peers"
	echo_target
	fleet_conf b "$B:7471" "{ name = \"sec\"; target = \"tcp://127.0.0.1:$tp\"; }"
	fleet_conf a "" "{ name = \"sec\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	sed -i "1i source = \"$A\";" "$W/a.conf"
	# x: a node with an identity b does not list.
	sed -e "s|a.id|x.id|" -e "s|a.ctl|x.ctl|" "$W/a.conf" >"$W/x.conf"
	start_daemon b
	start_daemon x
	wait_log b "failed authentication: .*identity .* is not among the peers"
	# b refused x at message 3 and never confirmed: x's own link is not
	# up, nor ever was, and x counts the failure as one of
	# authentication.
	run ctl_json x tunnels '.[] | select(.tunnel == "sec") | .link'
	refute_output up
	wait_log x "tunnel sec: link to $B:7471 failed: "
	[ "$(link_ups x sec)" = 0 ]
	run ctl_json x tunnels '.[] | select(.tunnel == "sec") | .link'
	refute_output up
	[ "$(metric rstreamd_auth_failures_total x)" -ge 1 ]
	kill "$PID_x"
	[ "$(metric rstreamd_auth_failures_total b)" -ge 1 ]

	# Rotation: b learns a's next key, a's stream runs on while a moves
	# to it, and the link that comes up next proves the new key.
	start_daemon a
	link_up a sec
	port=$(accept_port a sec)
	paced_stream "$port" rot 2
	ident a2
	printf '%s node-a2\n' "$(cat "$W/a2.pub")" >>"$W/peers"
	kill -HUP "$PID_b"
	wait_log b "reloaded"
	sed -i "s|a.id|a2.id|" "$W/a.conf"
	kill -HUP "$PID_a"
	wait_log a "reloaded"
	touch "$W/rot.go"
	wait_pid "$sp" 120
	[ "$(sha "$W/rot.in")" = "$(sha "$W/rot.out")" ]
	# The old link stays up through the reloads; a new one (b restarted)
	# is a2's.
	ups=$(link_ups a sec)
	kill "$PID_b"
	start_daemon b
	link_up_after a sec "$ups" 60
	wait_log b "authenticated as node-a2"
	through "$port" after 1
	# However often the link comes up, its name says the peer once.
	grep -q "link to $B:7471 \[node-b\]" "$W/a.log"
	run grep -c "link to $B:7471 \[node-b\] \[" "$W/a.log"
	assert_output 0

	# Revocation: b's reload without node-a2 ends the live link at
	# once, as both daemons say, and b refuses a's next one.
	refused=$(metric rstreamd_auth_failures_total b)
	downs=$(count_log a "tunnel sec: link to $B:7471 \[node-b\] went down: ")
	printf '%s node-a\n%s node-b\n' "$(cat "$W/a.pub")" "$(cat "$W/b.pub")" >"$W/peers"
	kill -HUP "$PID_b"
	wait_log b "link from $A:[0-9]* \[node-a2\] ended: revoked by a reload: the peer's identity .* is not among the peers"
	wait_log_more a "tunnel sec: link to $B:7471 \[node-b\] went down: " "$downs"
	wait_until 20 at_least $((refused + 1)) metric rstreamd_auth_failures_total b
	wait_ctl b links '[.[] | select(.direction == "in" and .state == "up")] | length' 0
	# b counts the link it revoked; a revoked nothing.
	[ "$(metric rstreamd_links_revoked_total b)" = 1 ]
	[ "$(ctl_json b status .links_revoked)" = 1 ]
	[ "$(metric rstreamd_links_revoked_total a)" = 0 ]
	run ctl_json a links '.[] | select(.tunnel == "sec") | .state'
	refute_output up
	run through "$port" revoked 1
	assert_failure
}

@test "identities: a PROXY v2 target learns the node's name, and believes only nodes trusted for origin" {
	ident a
	ident b
	printf '%s node-a origin\n%s node-b\n' "$(cat "$W/a.pub")" "$(cat "$W/b.pub")" >"$W/peers"
	tp=$(free_port)
	spawn socat -u TCP-LISTEN:"$tp",bind=127.0.0.1,reuseaddr,fork \
	    CREATE:"$W/px.rec"
	wait_port "$tp"
	fleet_conf b "$B:7471" "{ name = \"px\"; target = \"tcp://127.0.0.1:$tp\"; proxy_protocol = \"v2\"; }"
	fleet_conf a "" "{ name = \"px\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	sed -i "1i source = \"$A\";" "$W/a.conf"
	start_daemon b
	start_daemon a
	link_up a px
	port=$(accept_port a px)
	printf 'hello' | timeout 30 socat -t 5 -u - TCP:127.0.0.1:"$port"
	wait_until 30 grep -q hello "$W/px.rec"
	# 21 bytes after the header: 12 of addresses, then TLV 0xE0 of 6
	# bytes, "node-a".
	run bash -c "od -An -v -tx1 '$W/px.rec' | tr -d ' \n'"
	assert_output --regexp "^0d0a0d0a000d0a515549540a21110015.{24}e000066e6f64652d6168656c6c6f$"
	# node-a no longer trusted for client addresses: refused, and said.
	printf '%s node-a\n%s node-b\n' "$(cat "$W/a.pub")" "$(cat "$W/b.pub")" >"$W/peers"
	kill -HUP "$PID_b"
	wait_log b "reloaded"
	printf 'not believed' | timeout 30 socat -t 5 -u - TCP:127.0.0.1:"$port" || true
	wait_log b "the peer node-a is not trusted for client addresses"
	run grep -c "not believed" "$W/px.rec"
	assert_output 0
}
