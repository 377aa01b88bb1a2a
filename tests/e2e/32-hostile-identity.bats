#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A hostile peer with a node identity (tests/hostile/hostile, version 7:
# the Noise handshake, the responder's confirmation and sealed records)
# against a daemon with identity_file and peers_file: an identity nobody
# listed, a replayed handshake and a stripped capability never
# authenticate; a sealed write with a bit flipped, or a stream opened in
# clear on a sealed link, ends the link and reaches no target, while the
# same write unflipped does (at version 6 too); bytes an injector writes
# over a sealed write's (its address and rkey) never reach the target;
# and a serving peer whose confirmation is missing, wrong or early never
# gets a client's link up.

load helpers

setup() {
	rs_setup
}

teardown() {
	rs_teardown
}

# sink NAME: a target that appends what it gets to $W/NAME.out; its
# port in $sp.
sink() {
	sp=$(free_port)
	spawn socat -u TCP-LISTEN:"$sp",bind=127.0.0.1,reuseaddr,fork \
	    OPEN:"$W/$1.out",creat,append
	wait_port "$sp"
}

# serve TUNNELS: b's config with its identity, node-h the only peer.
serve() {
	ident b
	ident h
	printf '%s node-h\n' "$(cat "$W/h.pub")" >"$W/peers"
	conf_b "$1"
	printf 'identity_file = "%s";\npeers_file = "%s";\n' \
	    "$W/b.id" "$W/peers" >>"$W/b.conf"
	start_daemon b
}

# bats test_tags=iwarp
@test "a hostile identity: one nobody listed, a replayed handshake, a stripped SEAL never authenticate" {
	sink sink
	serve "{ name = \"sink\"; target = \"tcp://127.0.0.1:$sp\"; }"
	ident x

	hostile wrong-identity "$W/x.id"
	assert_success
	assert_output "wrong-identity: disconnected"
	wait_log b "link from $A:[0-9]* failed authentication: .* is not among the peers"
	grep -qF "identity $(cat "$W/x.pub") is not among the peers" "$W/b.log"
	[ "$(metric rstreamd_auth_failures_total b)" = 1 ]

	# The first link authenticates (a stream opens on it); the replay of
	# its messages on a second one does not.
	hostile replayed-handshake "$W/h.id" sink
	assert_success
	assert_output "replayed-handshake: disconnected"
	wait_log b "link from $A:[0-9]* failed authentication: authentication failed: the handshake failed"
	[ "$(count_log b "authenticated as node-h")" = 1 ]
	[ "$(metric rstreamd_auth_failures_total b)" = 2 ]

	hostile stripped-capability "$W/h.id"
	assert_success
	assert_output "stripped-capability: message 2 failed authentication"

	# One link authenticated, one stream opened: the replay's first.
	[ "$(count_log b "authenticated as node-h")" = 1 ]
	run ctl_json b stats '.tunnels[] | select(.tunnel == "sink") | .opened'
	assert_output 1
	stops_clean
}

# bats test_tags=iwarp
@test "a hostile identity's WRITE over a sealed write's bytes (its address and rkey, no immediate) never reaches the target" {
	sink over
	serve "{ name = \"over\"; target = \"tcp://127.0.0.1:$sp\"; }"
	# Right after the sealed write's tag, other bytes over the same ring
	# bytes: landed before the daemon copied the write out of the ring,
	# they fail its open; after, they change nothing it reads.
	hostile overwritten-write "$W/h.id" over
	assert_success
	if [ "$output" = "overwritten-write: disconnected" ]; then
		wait_log b "link from $A:[0-9]* \\[node-h\\] ended: sealed record failed authentication (tampered or injected)"
	else
		assert_output --regexp '^overwritten-write: [0-9]+ bytes written, credit returned$'
		n=$(cut -d' ' -f2 <<<"$output")
		wait_until 20 at_least "$n" stat -c %s "$W/over.out"
		[ "$(stat -c %s "$W/over.out")" = "$n" ]
		run sh -c "fold -w 16 '$W/over.out' | sort -u"
		assert_output "SEALED-PAYLOAD--"
	fi
	run grep -qs FORGED "$W/over.out"
	assert_failure
	stops_clean
}

# bats test_tags=iwarp
@test "a hostile identity's sealed write with a bit flipped, or a stream in clear on a sealed link, ends its link and reaches no target" {
	sink good
	gp=$sp
	sink bad
	serve "{ name = \"good\"; target = \"tcp://127.0.0.1:$gp\"; },
	    { name = \"bad\"; target = \"tcp://127.0.0.1:$sp\"; }"

	# The control: sealed as the daemon seals, the bytes get through; and
	# with ChaCha20-Poly1305 too, which a hello without AESGCM asks for.
	hostile sealed-write "$W/h.id" good
	assert_success
	assert_output --regexp '^sealed-write: [0-9]+ bytes written, credit returned$'
	n=$(cut -d' ' -f2 <<<"$output")
	HOSTILE_NO_AESGCM=1 hostile sealed-write "$W/h.id" good
	assert_success
	assert_output --regexp '^sealed-write: [0-9]+ bytes written, credit returned$'
	n=$((n + $(cut -d' ' -f2 <<<"$output")))
	wait_log b "link from $A:[0-9]* authenticated as node-h, sealed with chacha20-poly1305"
	# At version 6 there is no confirmation: sealed from after message 2.
	# On iWARP a link below version 11 cannot carry data: b ends it
	# before the handshake is done.
	if iwarp; then
		HOSTILE_VERSION=6 hostile sealed-write "$W/h.id" good
		assert_failure
		wait_log b "link from $A:[0-9]* ended: this device has no immediate data (iWARP), and the link runs protocol version 6: version 11 or later runs without"
	else
		HOSTILE_VERSION=6 hostile sealed-write "$W/h.id" good
		assert_success
		assert_output --regexp '^sealed-write: [0-9]+ bytes written, credit returned$'
		n=$((n + $(cut -d' ' -f2 <<<"$output")))
		wait_log b "link from $A:[0-9]* authenticated as node-h, .*protocol version 6, 1 lane)"
	fi
	wait_until 20 at_least "$n" stat -c %s "$W/good.out"
	[ "$(stat -c %s "$W/good.out")" = "$n" ]
	run sh -c "fold -w 16 '$W/good.out' | sort -u"
	assert_output "SEALED-PAYLOAD--"

	hostile flipped-payload "$W/h.id" bad
	assert_success
	assert_output "flipped-payload: disconnected"
	wait_log b "link from $A:[0-9]* \\[node-h\\] ended: sealed record failed authentication (tampered or injected)"
	n=$(count_log b "sealed record failed authentication (tampered or injected)")
	# Counted where operators look; a never saw one.
	[ "$(ctl_json b status .forged_messages)" -ge 1 ]
	[ "$(metric rstreamd_forged_messages_total b)" -ge 1 ]
	hostile flipped-tag "$W/h.id" bad
	assert_success
	assert_output "flipped-tag: disconnected"
	wait_log_more b "sealed record failed authentication (tampered or injected)" "$n"
	# Every target of b encrypts, so b's hello asks for sealing: a peer
	# that says no SEAL gets a sealed link all the same.  (Its OPEN may
	# come before b has said the link is up: "failed authentication"
	# then, not "ended".)
	n=$(count_log b "sealed record failed authentication (tampered or injected)")
	hostile unsealed "$W/h.id" bad
	assert_success
	assert_output "unsealed: the daemon's hello asks for sealing; disconnected"
	wait_log_more b "sealed record failed authentication (tampered or injected)" "$n"

	# bad's target was dialled for both flipped writes (the only streams
	# it opened), and got nothing.
	run ctl_json b stats '.tunnels[] | select(.tunnel == "bad") | .opened'
	assert_output 2
	[ -e "$W/bad.out" ]
	run test -s "$W/bad.out"
	assert_failure
	stops_clean
}

@test "a serving peer whose confirmation is missing, wrong or early: the client's link never comes up" {
	ident a
	ident h
	printf '%s node-h\n' "$(cat "$W/h.pub")" >"$W/peers"
	p1=$(free_port)
	p2=$(free_port)
	p3=$(free_port)
	spawn "$HOSTILE" "$A" "$B" "$p1" no-confirm "$W/h.id" >"$W/no-confirm.out" 2>&1
	spawn "$HOSTILE" "$A" "$B" "$p2" wrong-confirm "$W/h.id" >"$W/wrong-confirm.out" 2>&1
	spawn "$HOSTILE" "$A" "$B" "$p3" early-confirm "$W/h.id" >"$W/early-confirm.out" 2>&1
	for cs in no-confirm wrong-confirm early-confirm; do
		wait_until 20 grep -q "$cs: listening" "$W/$cs.out"
	done
	conf_a "{ name = \"t1\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:$p1\"; },
	    { name = \"t2\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:$p2\"; },
	    { name = \"t3\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:$p3\"; }"
	printf 'identity_file = "%s";\npeers_file = "%s";\n' \
	    "$W/a.id" "$W/peers" >>"$W/a.conf"
	start_daemon a
	for cs in no-confirm wrong-confirm early-confirm; do
		wait_until 30 grep -q -v "listening" "$W/$cs.out"
		run grep -v "listening" "$W/$cs.out"
		assert_output "$cs: disconnected; no stream opened"
	done
	# Each failed as authentication, for what the peer did; none was up.
	wait_log a "tunnel t1: link to $B:$p1 failed: authentication not finished within handshake_timeout"
	wait_log a "tunnel t2: link to $B:$p2 failed: authentication failed: the peer's confirmation is wrong"
	wait_log a "tunnel t3: link to $B:$p3 failed: .*\(unexpected HANDSHAKE\|the peer's confirmation is wrong\)"
	for t in t1 t2 t3; do
		[ "$(link_ups a "$t")" = 0 ]
		run ctl_json a tunnels ".[] | select(.tunnel == \"$t\") | .link"
		refute_output up
	done
	[ "$(metric rstreamd_auth_failures_total a)" -ge 3 ]
}
