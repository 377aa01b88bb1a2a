#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A hostile peer (tests/hostile/hostile) connects to the serving daemon
# and misbehaves.  Each time the daemon rejects the connection or ends
# that link with a logged reason, while another daemon's link to it keeps
# working, or gives it nothing it should not have (a reused ring's old
# bytes); at the end it stops cleanly (under a sanitizer build, CI runs
# this file too: any error report fails it).

load helpers

setup() {
	rs_setup
}

teardown() {
	rs_teardown
}

# hold_link SECONDS OUT: a hostile peer holding an idle unauthenticated
# link in the background, saying how it ended into $W/OUT.
hold_link() {
	spawn "$HOSTILE" "$A" "$B" 7471 hold "$1" >"$W/$2" 2>&1
}

# bats test_tags=iwarp
@test "a hostile peer: bad hellos are rejected, protocol violations end its link, nothing else is hurt" {
	echo_target
	# A target that never reads (it never even accepts): the hostile
	# stream's data piles up in a small ring.
	sp=$(free_port)
	spawn $TOOL deaf "$sp"
	wait_port "$sp"
	conf_b "{ name = \"echo\"; target = \"tcp://127.0.0.1:$tp\"; },
	    { name = \"stall\"; target = \"tcp://127.0.0.1:$sp\"; recvbuf = 16384; }"
	conf_a "{ name = \"echo\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	start_pair echo
	port=$(accept_port a echo)

	for c in bad-magic bad-version short-hello bad-credits; do
		hostile "$c"
		assert_success
		assert_output "$c: rejected"
	done
	# Each counted; logged once per burst, however many come.
	hostile flood 40
	assert_success
	assert_output "flood: 40 rejected of 40"
	grep -q "link from $A:[0-9]* rejected: invalid connect data: .*magic" "$W/b.log"
	[ "$(metric rstreamd_links_rejected_total b)" = 44 ]
	[ "$(grep -c "rejected: invalid connect data" "$W/b.log")" -le 2 ]

	hostile garbage
	assert_success
	assert_output "garbage: disconnected"
	wait_log b "link from $A:[0-9]* ended: protocol violation"

	hostile truncated
	assert_success
	assert_output "truncated: disconnected"

	hostile unopened stall
	assert_success
	assert_output "unopened: disconnected"
	wait_log b "link from $A:[0-9]* ended: protocol violation: data for stream"

	hostile beyond-credit stall
	assert_success
	assert_output "beyond-credit: disconnected"
	wait_log b "link from $A:[0-9]* ended: protocol violation: .* bytes for stream"

	# Six links ended, each with its reason; the good one never noticed.
	[ "$(grep -c "link from $A:[0-9]* ended: protocol violation" "$W/b.log")" -ge 4 ]
	run grep "went down" "$W/a.log"
	assert_failure
	run client "$port" "unharmed"
	assert_output "unharmed"

	# And the daemon stops cleanly, with nothing for a sanitizer to say.
	stops_clean
}

# bats test_tags=iwarp
@test "a hostile peer's misplaced write gets a reused receive ring's zeros, not its last stream's bytes" {
	# Two targets that keep what they get, one tunnel each: one link
	# carries both, and a ring of the first is reused for the second.
	p1=$(free_port)
	spawn socat -u TCP-LISTEN:"$p1",bind=127.0.0.1,reuseaddr,fork OPEN:"$W/t1.out",creat,append
	p2=$(free_port)
	spawn socat -u TCP-LISTEN:"$p2",bind=127.0.0.1,reuseaddr,fork OPEN:"$W/t2.out",creat,append
	wait_port "$p1"
	wait_port "$p2"
	conf_b "{ name = \"t1\"; target = \"tcp://127.0.0.1:$p1\"; },
	    { name = \"t2\"; target = \"tcp://127.0.0.1:$p2\"; }"
	start_daemon b
	hostile stale t1 t2
	assert_success
	assert_output "stale: ring reused"
	# t2's target got the bytes the write claimed: the ring's start,
	# zeros, not t1's marker.
	wait_until 20 test -s "$W/t2.out"
	run grep -c STALE "$W/t2.out"
	assert_output 0
	[ "$(tr -d '\000' <"$W/t2.out" | wc -c)" = 0 ]
	stops_clean
}

# bats test_tags=iwarp
@test "a hostile peer and authentication: no proof, a wrong one, an OPEN first or silence end its link; the cap holds" {
	(umask 077; head -c 32 /dev/urandom >"$W/k1.key"; head -c 32 /dev/urandom >"$W/k2.key")
	echo_target
	conf_b "{ name = \"echo\"; target = \"tcp://127.0.0.1:$tp\"; }"
	cat >>"$W/b.conf" <<EOC
key_file = "$W/k1.key";
handshake_timeout = 8;
max_pending = 1;
EOC
	conf_a "{ name = \"echo\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; key_file = \"$W/k1.key\"; }"
	start_pair echo
	port=$(accept_port a echo)

	# The control case: the hostile peer's proofs are computed right.
	hostile right-key "$W/k1.key" echo
	assert_success
	assert_output "right-key: authenticated, stream accepted"

	hostile no-auth
	assert_success
	assert_output "no-auth: rejected"
	wait_log b "link from $A:[0-9]* rejected: it does not authenticate"

	hostile open-first echo
	assert_success
	assert_output "open-first: disconnected"
	wait_log b "link from $A:[0-9]* failed authentication: protocol violation: OPEN before authentication"

	hostile wrong-key "$W/k2.key"
	assert_success
	assert_output "wrong-key: disconnected"
	wait_log b "link from $A:[0-9]* failed authentication: authentication failed: the peer's proof is wrong"

	# Silence: the handshake deadline ends it.  While it hangs there, it
	# holds the only max_pending slot: another peer is turned away.
	n=$(count_log b "accepted (.*authenticating)")
	spawn "$HOSTILE" "$A" "$B" 7471 silent >"$W/silent.out" 2>&1
	sp=$!
	wait_log_more b "accepted (.*authenticating)" "$n"
	hostile right-key "$W/k1.key" echo
	assert_failure
	wait_log b "link from $A:[0-9]* rejected: max_pending 1 reached"
	rc=0
	wait "$sp" || rc=$?
	[ "$rc" = 0 ]
	grep -q "silent: disconnected" "$W/silent.out"
	wait_log b "failed authentication: authentication not finished within handshake_timeout (8 s)"

	# Counted: no-auth, open-first, wrong-key, silent.
	run "$CTL" -s "$W/b.ctl" metrics
	assert_output --regexp "rstreamd_auth_failures_total [4-9]"
	# The good link never noticed, and still carries traffic.
	run grep "went down" "$W/a.log"
	assert_failure
	run client "$port" "unharmed"
	assert_output "unharmed"

	stops_clean
}

@test "a hostile peer that goes quiet is noticed, and link admission keeps room for keyed peers" {
	(umask 077; head -c 32 /dev/urandom >"$W/k1.key")
	echo_target
	conf_b "{ name = \"open\"; target = \"tcp://127.0.0.1:$tp\"; },
	    { name = \"keyed\"; target = \"tcp://127.0.0.1:$tp\"; key_file = \"$W/k1.key\"; }"
	cat >>"$W/b.conf" <<EOC
max_links = 4;
max_unauth_links = 2;
link_idle_timeout = 0;
max_pending_per_addr = 1;
handshake_timeout = 8;
EOC
	conf_a "{ name = \"keyed\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; key_file = \"$W/k1.key\"; }"
	start_pair keyed
	port=$(accept_port a keyed)

	# Up, then silent (not even keepalives): ended by what it did not say.
	hostile mute
	assert_success
	assert_output "mute: disconnected"
	wait_log b "link from $A:[0-9]* ended: nothing heard from the peer for [0-9]* s"

	# Two idle unauthenticated links fill max_unauth_links; a third is
	# turned away, and a keyed peer still gets in.
	# (one at a time: max_pending_per_addr is 1 here)
	hold_link 60 h1.out
	wait_ctl b status .links 2
	hold_link 60 h2.out
	wait_ctl b status .links 3
	hostile hold 5
	assert_success
	assert_output "hold: rejected"
	wait_log b "link from $A:[0-9]* rejected: max_unauth_links 2 reached"
	hostile right-key "$W/k1.key" keyed
	assert_success
	assert_output "right-key: authenticated, stream accepted"

	# With link_idle_timeout, a link idle that long gives its slot up.
	sed -i 's/link_idle_timeout = 0;/link_idle_timeout = 1;/' "$W/b.conf"
	run "$CTL" -s "$W/b.ctl" reload
	assert_success
	wait_ctl b status .links 3
	hostile hold 3
	assert_success
	assert_output "hold: held"
	wait_log b "link from $A:[0-9]* closed after [0-9]* s without a stream, to make room for a new link (max_unauth_links reached)"
	[ "$(metric rstreamd_links_evicted_total b)" -ge 1 ]
	wait_until 10 grep -q "hold: disconnected" "$W/h1.out" "$W/h2.out"

	# One peer address may have one link handshaking at a time here.
	n=$(count_log b "accepted (.*authenticating)")
	spawn "$HOSTILE" "$A" "$B" 7471 silent >"$W/silent.out" 2>&1
	wait_log_more b "accepted (.*authenticating)" "$n"
	hostile right-key "$W/k1.key" keyed
	assert_failure
	wait_log b "link from $A:[0-9]* rejected: max_pending_per_addr 1 reached"

	# The keyed daemon's link never noticed any of it.
	run grep "went down" "$W/a.log"
	assert_failure
	run client "$port" "unharmed"
	assert_output "unharmed"
	stops_clean
}

@test "an older peer that cannot read a version-3 hello: the daemon asks again in an older version, if min_version allows" {
	op=$(free_port)
	spawn "$HOSTILE" "$A" "$B" "$op" old-peer >"$W/old.out" 2>&1
	wait_until 20 grep -q "old-peer: listening" "$W/old.out"
	conf_a "{ name = \"old\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:$op\"; min_version = 1; }"
	start_daemon a
	wait_until 30 grep -q "old-peer: offered" "$W/old.out"
	run cat "$W/old.out"
	# Without resume_time the older version is 1 (2 is for resume).
	assert_line "old-peer: offered 12 1"
	run grep -c "warning: tunnel old: link to $B:$op: the peer refused protocol version 12 (an older rstreamd, or a forged reject); trying that address once more with version 1 (min_version 1)" "$W/a.log"
	assert_output 1
	[ "$(metric rstreamd_link_stepdowns_total a)" = 1 ]
	# The note on the second refusal: a refusal, not another step down.
	# The peer prints what it was offered once it has rejected the
	# second request; the daemon logs the refusal when that reaches it.
	wait_log a "link to $B:$op failed: connection rejected by the peer; retrying"
	run grep -c "trying that address once more" "$W/a.log"
	assert_output 1
}

@test "a version-3 peer refuses a version-12 hello with its note: the daemon asks again in version 3" {
	op=$(free_port)
	spawn "$HOSTILE" "$A" "$B" "$op" old-peer 3 >"$W/old3.out" 2>&1
	wait_until 20 grep -q "old-peer: listening" "$W/old3.out"
	conf_a "{ name = \"old3\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:$op\"; resume_time = 5; resume_without_key = true; min_version = 2; }"
	start_daemon a
	wait_until 30 grep -q "old-peer: offered" "$W/old3.out"
	run cat "$W/old3.out"
	assert_line "old-peer: offered 12 3"
	run grep -c "the peer refused protocol version 12 (an older rstreamd, or a forged reject); trying that address once more with version 3 (min_version 2)" "$W/a.log"
	assert_output 1
}

@test "a step-down is for the address that refused, once, and never below min_version: the next address gets the newest version" {
	echo_target
	conf_b "{ name = \"low\"; target = \"tcp://127.0.0.1:$tp\"; },
	    { name = \"dflt\"; target = \"tcp://127.0.0.1:$tp\"; }"
	op1=$(free_port)
	op2=$(free_port)
	spawn "$HOSTILE" "$A" "$B" "$op1" old-peer >"$W/old1.out" 2>&1
	spawn "$HOSTILE" "$A" "$B" "$op2" old-peer >"$W/old2.out" 2>&1
	wait_until 20 grep -q "old-peer: listening" "$W/old1.out"
	wait_until 20 grep -q "old-peer: listening" "$W/old2.out"
	# An older peer (or a forged reject) first, the real daemon second.
	conf_a "{ name = \"low\"; accept = \"tcp://127.0.0.1:0\"; peer = [ \"$B:$op1\", \"$B:7471\" ]; min_version = 1; },
	    { name = \"dflt\"; accept = \"tcp://127.0.0.1:0\"; peer = [ \"$B:$op2\", \"$B:7471\" ]; }"
	start_daemon b
	start_daemon a
	link_up a low
	link_up a dflt
	# low stepped down once, to the address that asked, and went on to
	# the next address in the newest version; dflt (min_version 4, for
	# rings that grow) did not step down at all.
	wait_until 30 grep -q "old-peer: offered" "$W/old1.out"
	run cat "$W/old1.out"
	assert_line "old-peer: offered 12 1"
	grep -q "warning: tunnel low: link to $B:$op1: the peer refused protocol version 12 (an older rstreamd, or a forged reject); trying that address once more with version 1 (min_version 1)" "$W/a.log"
	grep -q "warning: tunnel dflt: link to $B:$op2 failed: the peer refused protocol version 12 and speaks 2 at most (an older rstreamd, or a forged reject); not stepping down below min_version 4" "$W/a.log"
	[ "$(metric rstreamd_link_stepdowns_total a)" = 1 ]
	[ "$(metric rstreamd_link_stepdowns_refused_total a)" -ge 1 ]
	# Both links run at version 12 with the real daemon, as both say.
	run ctl_json a links '.[] | "\(.tunnel) \(.peer) \(.state) \(.version)"'
	assert_line "low $B:7471 up 12"
	assert_line "dflt $B:7471 up 12"
	run ctl_json b links '[.[] | select(.state == "up") | .version] | map(tostring) | join(" ")'
	assert_output "12 12"
	run "$CTL" -s "$W/a.ctl" metrics
	# Labelled with the peer setting, the list as written, whichever
	# address the link runs to.
	assert_line "rstreamd_link_protocol_version{tunnel=\"low\",peer=\"$B:$op1,$B:7471\",direction=\"out\"} 12"
	run client "$(accept_port a low)" "low ok"
	assert_output "low ok"
	run client "$(accept_port a dflt)" "dflt ok"
	assert_output "dflt ok"
}

@test "a hostile peer and the client's address: no ORIGIN, a forged one, an older version" {
	(umask 077; head -c 32 /dev/urandom >"$W/k1.key")
	rp=$(free_port)
	spawn socat -u TCP-LISTEN:"$rp",bind=127.0.0.1,reuseaddr,fork \
	    OPEN:"$W/web.rec",creat,append
	wait_port "$rp"
	echo_target
	# web believes the address only from holders of k1; open is keyless,
	# so keyless links get in at all.
	conf_b "{ name = \"web\"; target = \"tcp://127.0.0.1:$rp\"; proxy_protocol = \"v1\"; key_file = \"$W/k1.key\"; },
	    { name = \"open\"; target = \"tcp://127.0.0.1:$tp\"; }"
	start_daemon b

	# Without the key, no claim about a client reaches the target.
	hostile forged-origin - web
	assert_success
	assert_output "forged-origin: refused (reason 9: not authorised for this tunnel)"
	# With it, a stream that names no client is refused, not written as
	# coming from this host.
	hostile no-origin "$W/k1.key" web
	assert_success
	assert_output "no-origin: refused (reason 13: the stream did not say its client's address)"
	wait_log b "tunnel web: link from $A:[0-9]*: refused a stream that does not say its client's address (no ORIGIN)"
	# So is a link in a version without ORIGIN.
	HOSTILE_VERSION=1 hostile no-origin "$W/k1.key" web
	assert_success
	assert_output "no-origin: refused (reason 12: protocol version too old for this tunnel)"
	wait_log b "tunnel web: link from $A:[0-9]*: refused a stream: the link speaks protocol version 1, below the tunnel's min_version 4"
	run test -s "$W/web.rec"
	assert_failure
	# A key holder may name any client: that is what the key is trusted
	# with (rstreamd(8), SECURITY).
	hostile forged-origin "$W/k1.key" web
	assert_success
	assert_output "forged-origin: accepted"
	wait_until 20 grep -q "PROXY TCP4 203.0.113.7 198.51.100.1 4444 80" "$W/web.rec"
	run ctl_json b stats '.tunnels[] | select(.tunnel == "web") | "\(.opened) \(.refused) \(.denied)"'
	assert_output "1 3 1"
	stops_clean
}

@test "a flood of connect requests from one address meets max_connect_rate first; the links that are up never notice" {
	echo_target
	conf_b "{ name = \"echo\"; target = \"tcp://127.0.0.1:$tp\"; }"
	sed -i '1i max_connect_rate = 1;' "$W/b.conf"
	conf_a "{ name = \"echo\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	start_pair echo
	port=$(accept_port a echo)
	# a's link is up: nothing it does needs a connect request now.  At
	# one a second, two at once, at most a few of 30 get past the rate;
	# none stops the workers (the gate runs alongside them).
	e0=$(metric rstreamd_exclusive_turns_total b)
	hostile flood 30
	assert_success
	assert_output "flood: 30 rejected of 30"
	e1=$(metric rstreamd_exclusive_turns_total b)
	echo "# 30 connect requests: $((e1 - e0)) exclusive turns" >&3
	[ $((e1 - e0)) -lt 20 ]
	wait_log b "link from $A:[0-9]* rejected: more than max_connect_rate 1 connect requests a second from it"
	[ "$(metric rstreamd_links_rejected_total b)" = 30 ]
	[ "$(grep -c "rejected: more than max_connect_rate" "$W/b.log")" -le 2 ]
	run grep "went down" "$W/a.log"
	assert_failure
	run client "$port" "unharmed"
	assert_output "unharmed"
	stops_clean
}

@test "a serving peer that opens streams on a client's link: each refused, said once per burst" {
	op=$(free_port)
	spawn "$HOSTILE" "$A" "$B" "$op" evil-server 40 >"$W/evil.out" 2>&1
	wait_until 20 grep -q "evil-server: listening" "$W/evil.out"
	conf_a "{ name = \"x\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:$op\"; }"
	start_daemon a
	wait_until 60 grep -q "evil-server: [0-9]* refused of 40" "$W/evil.out"
	run cat "$W/evil.out"
	assert_line "evil-server: 40 refused of 40"
	n=$(grep -c "tunnel x: link to $B:$op: the peer opened a stream on it; refused" "$W/a.log")
	[ "$n" -ge 1 ]
	[ "$n" -le 2 ]
}

@test "a peer posing as the server gets no stream: not with the key and a reflected proof, nor at an older version" {
	echo_target
	(umask 077; head -c 32 /dev/urandom >"$W/k.key")
	fp1=$(free_port)
	fp2=$(free_port)
	conf_b "{ name = \"e1\"; target = \"tcp://127.0.0.1:$tp\"; resume_time = 30; },
	    { name = \"e2\"; target = \"tcp://127.0.0.1:$tp\"; resume_time = 30; }"
	# Each tunnel's second address is a fake that holds the key.
	conf_a "{ name = \"e1\"; accept = \"tcp://127.0.0.1:0\"; peer = [ \"$B:7471\", \"$B:$fp1\" ]; resume_time = 30; },
	    { name = \"e2\"; accept = \"tcp://127.0.0.1:0\"; peer = [ \"$B:7471\", \"$B:$fp2\" ]; resume_time = 30; min_version = 4; }"
	printf 'key_file = "%s";\n' "$W/k.key" | tee -a "$W/a.conf" >>"$W/b.conf"
	start_daemon b
	start_daemon a
	link_up a e1
	link_up a e2
	hold_stream "$(accept_port a e1)"
	hold_stream "$(accept_port a e2)"
	wait_until 20 at_least 2 open_streams b
	spawn "$HOSTILE" "$A" "$B" "$fp1" fake-server "$W/k.key" >"$W/fake1.out" 2>&1
	f1=$!
	# A fake of version 4: a forged refusal can steer a link there too
	# (e2 accepts version 4 links; with the default min_version 5 the
	# link would not even come up).
	spawn env HOSTILE_VERSION=4 "$HOSTILE" "$A" "$B" "$fp2" fake-server "$W/k.key" >"$W/fake2.out" 2>&1
	wait_until 20 grep -q "fake-server: listening" "$W/fake1.out"
	wait_until 20 grep -q "fake-server: listening" "$W/fake2.out"
	# b dies; a's links go to their next addresses, the fakes.
	kill -KILL "$PID_b"
	wait "$PID_b" || true
	wait_log a "tunnel e1: link to $B:$fp1 went down: authentication failed: the peer's RESUME_PROOF is wrong" 60
	wait_pid "$f1" 30
	run cat "$W/fake1.out"
	assert_line "fake-server: RESUME"
	assert_line "fake-server: disconnected; no stream named"
	wait_log a "tunnel e2: link to $B:$fp2: the new link speaks an older protocol version than the streams' link, and resumes without the peer's proof; suspended streams reset" 60
	run grep -E "RESUME|named a stream" "$W/fake2.out"
	assert_failure
	run ctl_json a stats '[.tunnels[] | "\(.tunnel) \(.resumes) \(.resume_failures)"] | join(",")'
	assert_output "e1 0 1,e2 0 1"
	run ctl_json a status '.auth_failures'
	assert_output 1
}

# bats test_tags=iwarp
@test "an incoming link's suspended streams each wait for their own tunnel's resume_time" {
	echo_target
	(umask 077; head -c 32 /dev/urandom >"$W/k.key")
	conf_b "{ name = \"short\"; target = \"tcp://127.0.0.1:$tp\"; resume_time = 2; },
	    { name = \"long\"; target = \"tcp://127.0.0.1:$tp\"; resume_time = 900; }"
	printf 'key_file = "%s";\n' "$W/k.key" >>"$W/b.conf"
	start_daemon b
	# One link with a stream of each; then it is gone.
	hostile suspend-two "$W/k.key" short long
	assert_success
	assert_output "suspend-two: 2 streams accepted"
	wait_log b "link from $A:[0-9]* ended: .*; 2 streams suspended for up to 900 s"
	wait_log b "link from $A:[0-9]*: 1 suspended stream of tunnel short reset: no new link within its resume_time (2 s)" 20
	[ "$(ctl_json b links '.[0].suspended')" = 1 ]
	run ctl_json b stats '[.tunnels[] | "\(.tunnel) \(.suspended) \(.resume_failures)"] | join(",")'
	assert_output "short 1 1,long 1 0"
	[ "$(ctl_json b status '.resume_timeouts')" = 1 ]
	stops_clean
}

@test "a serving peer that answers in a version below min_version: the client link does not come up" {
	op=$(free_port)
	spawn env HOSTILE_VERSION=2 "$HOSTILE" "$A" "$B" "$op" evil-server 1 >"$W/old.out" 2>&1
	wait_until 20 grep -q "evil-server: listening" "$W/old.out"
	conf_a "{ name = \"x\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:$op\"; }"
	start_daemon a
	wait_log a "tunnel x: link to $B:$op failed: the peer answered in protocol version 2, below min_version 4"
	[ "$(metric rstreamd_link_stepdowns_refused_total a)" -ge 1 ]
	run grep "tunnel x: link to .* is up" "$W/a.log"
	assert_failure
}

@test "a listener whose links cannot be made: each request rejected, said once per burst" {
	echo_target
	# A completion queue this deep is more than rxe (or most HCAs) makes:
	# every link from a peer fails to be set up, after the gate.
	conf_b "{ name = \"deep\"; target = \"tcp://127.0.0.1:$tp\"; sq_size = 65536; }"
	start_daemon b
	for i in 1 2 3 4 5 6; do
		hostile hold 1
		assert_output "hold: rejected"
	done
	grep -q "link from $A:[0-9]* rejected: .*cannot create" "$W/b.log"
	[ "$(grep -c "link from $A:[0-9]* rejected: " "$W/b.log")" -le 2 ]
	stops_clean
}
