#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# IPv6 all the way: an RDMA link between two hosts over IPv6 (listen, peer
# and source as IPv6 addresses), a client and a target on ::1.  Two hosts,
# because one host's RDMA CM does not connect two of its own devices over
# IPv6 (see tests/vm/softroce-run): tests/run-bats runs *-2host.bats in
# the runner's two-guest mode, where the serving daemon "b" runs on host B.

load helpers

setup() {
	rs_setup
	rs_setup_2host
}

teardown() {
	rs_teardown
}

@test "a tunnel over an IPv6 link: v6 listen, peer, source, client and target; sha256 both ways across a half-close" {
	# B's target keeps what arrives until the client's FIN, and only then
	# answers: the half-close must reach it, and the other direction
	# must keep flowing after it.
	tp=$(on_b 'shuf -i 20000-60000 -n 1')
	on_b "head -c 2M /dev/urandom >$(q "$W/reply")"
	b_spawn target socat -t 60 TCP6-LISTEN:"$tp",bind='[::1]',reuseaddr \
	    SYSTEM:"cat >$(q "$W/got"); cat $(q "$W/reply")"
	b_wait_port "$tp"
	b_write "$W/b.conf" <<EOC
listen = "[$B6]:7471";
control = "$W/b.ctl";
tunnels = ( { name = "v6"; target = "tcp://[::1]:$tp"; } );
EOC
	b_start_daemon b
	cat >"$W/a.conf" <<EOC
source = "$A6";
control = "$W/a.ctl";
tunnels = ( { name = "v6"; accept = "tcp://[::1]:0"; peer = "[$B6]:7471"; } );
EOC
	start_daemon a
	link_up a v6
	port=$(accept_port a v6)
	[ -n "$port" ]
	run ctl_json a tunnels '.[] | select(.tunnel == "v6" and .state == "active") | .address'
	assert_output "tcp://[::1]:$port"

	head -c 2M /dev/urandom >"$W/in"
	timeout 120 socat -t 60 - TCP6:"[::1]:$port" <"$W/in" >"$W/out"
	run on_b "sha256sum <$(q "$W/got") | cut -d' ' -f1"
	assert_output "$(sha "$W/in")"
	run on_b "sha256sum <$(q "$W/reply") | cut -d' ' -f1"
	assert_output "$(sha "$W/out")"

	# Both ends name the IPv6 addresses, and the GIDs are the IPv6 ones
	# (a RoCE GID is the address; not a v4-mapped ::ffff:a.b.c.d).
	run ctl_json a links '.[0] | "\(.gid) \(.peer_gid)"'
	assert_output "$A6 $B6"
	run b_ctl_json b links '.[0] | "\(.gid) \(.peer_gid)"'
	assert_output "$B6 $A6"
	run "$CTL" -s "$W/a.ctl" -o peer links
	assert_line "[$B6]:7471"
	run b_ctl_json b links '.[0].peer'
	assert_output --regexp "^\[$A6\]:[0-9]+$"
	grep -q "tunnel v6: link to \[$B6\]:7471 is up" "$W/a.log"
	grep -qE "tunnel v6 stream [0-9]+ \(client, \[::1\]:[0-9]+\): opening over \[$B6\]:7471" "$W/a.log"
	run on_b "grep -c 'link from \[$A6\]:[0-9]* is up' $(q "$W/b.log")"
	assert_output 1
}

@test "IPv6 wildcard listen, default port, an IPv6 allow prefix, no source" {
	b_spawn target socat UNIX-LISTEN:"$W/t.sock",fork EXEC:cat
	b_wait_sock "$W/t.sock"
	b_write "$W/b.conf" <<EOC
listen = "[::]";
allow = [ "fd77::/64" ];
control = "$W/b.ctl";
tunnels = ( { name = "echo"; target = "unix:$W/t.sock"; } );
EOC
	b_start_daemon b
	cat >"$W/a.conf" <<EOC
control = "$W/a.ctl";
tunnels = ( { name = "echo"; accept = "tcp://[::1]:0"; peer = "[$B6]"; } );
EOC
	start_daemon a
	link_up a echo
	run timeout 30 socat -t 20 - TCP6:"[::1]:$(accept_port a echo)" <<<"over v6"
	assert_success
	assert_output "over v6"
	run b_ctl_json b links '.[0].peer'
	assert_output --regexp "^\[$A6\]:[0-9]+$"
}
