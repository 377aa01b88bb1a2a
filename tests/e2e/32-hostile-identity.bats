#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A hostile peer with a node identity (tests/hostile/hostile, version 7:
# the Noise handshake, the responder's confirmation and sealed records)
# against a daemon with identity_file and peers_file: an identity nobody
# listed, a replayed handshake and a stripped capability never
# authenticate; a sealed write with a bit flipped, or a stream opened in
# clear on a sealed link, ends the link and reaches no target, while the
# same write unflipped does (at version 6 too).

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
	HOSTILE_VERSION=6 hostile sealed-write "$W/h.id" good
	assert_success
	assert_output --regexp '^sealed-write: [0-9]+ bytes written, credit returned$'
	n=$((n + $(cut -d' ' -f2 <<<"$output")))
	wait_log b "link from $A:[0-9]* authenticated as node-h, .*protocol version 6)"
	wait_until 20 at_least "$n" stat -c %s "$W/good.out"
	[ "$(stat -c %s "$W/good.out")" = "$n" ]
	run sh -c "fold -w 16 '$W/good.out' | sort -u"
	assert_output "SEALED-PAYLOAD--"

	hostile flipped-payload "$W/h.id" bad
	assert_success
	assert_output "flipped-payload: disconnected"
	wait_log b "link from $A:[0-9]* \\[node-h\\] ended: sealed record failed authentication (tampered or injected)"
	n=$(count_log b "sealed record failed authentication (tampered or injected)")
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
