#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Reload on SIGHUP and "rstreamctl reload": tunnels are added, changed and
# removed while a long transfer keeps flowing; a configuration that fails
# to load or to apply leaves the old one running and says so.

load helpers

setup() {
	rs_setup
	notify_socket
}

teardown() {
	rs_teardown
}

# start_a_notify: start daemon a with NOTIFY_SOCKET pointing at the test.
start_a_notify() {
	start_daemon a NOTIFY_SOCKET="$W/notify.sock"
	link_up a echo
}

# bats test_tags=iwarp
@test "reload: a transfer crossing two reloads completes intact; tunnels are added, changed, removed" {
	echo_tunnel echo
	p2=$(free_port)
	start_daemon b
	start_a_notify
	port=$(accept_port a echo)
	# 24 MiB, half now, the rest once both reloads are done: the stream
	# spans both.
	paced_stream "$port" r 24
	wait_log a "tunnel echo stream 1 .*opening over"

	# a: the echo tunnel gets other rings (changed), "two" is added.
	sed -i "s|peer = \"$B:7471\"; }|peer = \"$B:7471\"; recvbuf = 131072; }, { name = \"two\"; accept = \"tcp://127.0.0.1:$p2\"; peer = \"$B:7471\"; }|" "$W/a.conf"
	grep -q 'name = "two"' "$W/a.conf"
	# b: a second target tunnel, and bigger queues for new links.
	sed -i "s|target = \"tcp://127.0.0.1:$tp\"; }|target = \"tcp://127.0.0.1:$tp\"; }, { name = \"two\"; target = \"tcp://127.0.0.1:$tp\"; sq_size = 256; }|" "$W/b.conf"
	kill -HUP "$PID_b"
	wait_log b "reloaded .*b.conf: 2 tunnels"
	n=$(link_ups a echo)
	kill -HUP "$PID_a"
	wait_log a "reloaded .*a.conf: 2 tunnels"
	grep -q "tunnel echo: configuration changed; its 1 open stream carries on" "$W/a.log"
	wait_log a "tunnel two: link to .* is up"
	link_up_after a echo "$n"
	touch "$W/r.go"

	# The notify protocol around the reload.
	wait_log notify "RELOADING=1"
	[ "$(grep -c 'READY=1' "$W/notify.log")" -ge 2 ]

	# New streams: "two" works; "echo" now has the new receive ring.
	run client "$p2" "via two"
	assert_output "via two"
	run client "$port" "via the changed echo"
	assert_output "via the changed echo"
	grep -q "tunnel echo stream .*rings: send 16384, receive 16384 bytes, growing up to 262144 and 131072" "$W/a.log"

	# The old stream finished on the old link, every byte intact.
	wait_pid "$sp" 200
	[ "$(sha "$W/r.in")" = "$(sha "$W/r.out")" ]
	wait_log a "tunnel echo: the last stream of the old configuration ended"

	# Remove "two": its port stops accepting; echo goes on.
	sed -i 's|, { name = "two"; accept = [^}]*}||' "$W/a.conf"
	run grep -q '"two"' "$W/a.conf"
	assert_failure
	run "$CTL" -s "$W/a.ctl" reload
	assert_success
	assert_output --partial "1 tunnels"
	grep -q "tunnel two: removed from the configuration" "$W/a.log"
	run timeout 10 socat -u - TCP:127.0.0.1:"$p2" <<<"x"
	assert_failure
	run client "$port" "still here"
	assert_output "still here"
	# Nothing was lost or reset along the way.
	run grep -E "reset|resetting" "$W/a.log" "$W/b.log"
	assert_failure
}

@test "reload: a changed tunnel's old link that fails under its last stream says why" {
	echo_tunnel echo
	start_pair echo
	hold_stream "$(accept_port a echo)"
	wait_ctl a status .streams 1
	sed -i "s|peer = \"$B:7471\"; }|peer = \"$B:7471\"; recvbuf = 131072; }|" "$W/a.conf"
	kill -HUP "$PID_a"
	wait_log a "tunnel echo: configuration changed; its 1 open stream carries on"
	kill -KILL "$PID_b"
	wait_log a "warning: tunnel echo: link to $B:7471 closed: [a-z]"
}

@test "reload: a broken configuration keeps the old one running, and says so" {
	echo_tunnel echo
	start_daemon b
	start_a_notify
	port=$(accept_port a echo)
	cp "$W/a.conf" "$W/a.good"

	# A syntax error: SIGHUP logs file:line and keeps serving.
	printf 'log_level = "info";\nsource = ;\n' >"$W/a.conf"
	kill -HUP "$PID_a"
	wait_log a "reload failed, still running the previous configuration: $W/a.conf:2:"
	wait_log notify "STATUS=.*reload failed, running the previous configuration: $W/a.conf:2:" 10
	run client "$port" "old config serves"
	assert_output "old config serves"
	run "$CTL" -s "$W/a.ctl" status
	assert_success
	assert_output --partial "last reload failed"

	# One that loads but cannot be applied (its port is taken): undone.
	cp "$W/a.good" "$W/a.conf"
	sed -i "s|tunnels = ( |tunnels = ( { name = \"busy\"; accept = \"tcp://127.0.0.1:$tp\"; peer = \"$B:7471\"; }, |" "$W/a.conf"
	sed -i "s|peer = \"$B:7471\"; } );|peer = \"$B:7471\"; recvbuf = 65536; } );|" "$W/a.conf"
	grep -q "recvbuf = 65536" "$W/a.conf"
	run "$CTL" -s "$W/a.ctl" reload
	assert_failure 1
	assert_output --partial "reload failed, still running the previous configuration"
	assert_output --partial "tunnel busy: cannot listen on tcp://127.0.0.1:$tp"
	run client "$port" "still the old echo"
	assert_output "still the old echo"
	# The echo tunnel was not changed: no new link, no second listener.
	[ "$(count_log a 'tunnel echo: link to .* is up')" = 1 ]

	# Fixed: the reload works and STATUS no longer complains.
	cp "$W/a.good" "$W/a.conf"
	run "$CTL" -s "$W/a.ctl" reload
	assert_success
	run "$CTL" -s "$W/a.ctl" status
	refute_output --partial "failed"
	last=$(grep -o 'STATUS=.*' "$W/notify.log" | tail -n 1)
	[[ $last == "STATUS=1 tunnel, 0 streams, 1 of 1 link up"* ]]
	# Unchanged, so kept as it was: still one link and the same port.
	[ "$(count_log a 'tunnel echo: link to .* is up')" = 1 ]
	[ "$(accept_port a echo)" = "$port" ]
}

# tun_a NAME [SETTINGS]: a client tunnel of daemon a, on a port of its own.
tun_a() {
	echo "{ name = \"$1\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; ${2:-} }"
}

# tun_state NAME TUNNEL STATE: how many streams daemon NAME's tunnel
# TUNNEL in STATE (active, draining) has ("" if there is no such tunnel).
tun_streams() {
	ctl_json "$1" tunnels ".[] | select(.tunnel == \"$2\" and .state == \"$3\") | .streams"
}

@test "reload: the first, middle and last tunnels changed, removed and reordered under open streams; nothing lost" {
	echo_target
	conf_b "{ name = \"t1\"; target = \"tcp://127.0.0.1:$tp\"; },
	    { name = \"t2\"; target = \"tcp://127.0.0.1:$tp\"; },
	    { name = \"t3\"; target = \"tcp://127.0.0.1:$tp\"; }"
	conf_a "$(tun_a t1), $(tun_a t2), $(tun_a t3)"
	start_daemon b
	start_daemon a NOTIFY_SOCKET="$W/notify.sock"
	for k in 1 2 3; do
		link_up a "t$k"
		eval "p$k=\$(accept_port a t$k)"
	done
	# A stream on every tunnel, each paused half-way.
	paced_stream "$p1" s1; sp1=$sp
	paced_stream "$p2" s2; sp2=$sp
	paced_stream "$p3" s3; sp3=$sp
	wait_ctl a status .streams 3

	# 1. The first tunnel changes: its stream drains with the old one.
	conf_a "$(tun_a t1 'recvbuf = 131072;'), $(tun_a t2), $(tun_a t3)"
	kill -HUP "$PID_a"
	wait_log a "reloaded .*a.conf: 3 tunnels"
	wait_ctl a status .streams 3
	[ "$(tun_streams a t1 draining)" = 1 ]
	[ "$(tun_streams a t1 active)" = 0 ]
	# The listener was handed over, not closed and bound again.
	[ "$(ctl_json a tunnels '.[] | select(.tunnel == "t1" and .state == "active") | .address')" = "tcp://127.0.0.1:$p1" ]

	# 2. The middle one goes; a second reload in a row.
	conf_a "$(tun_a t1 'recvbuf = 131072;'), $(tun_a t3)"
	run "$CTL" -s "$W/a.ctl" reload
	assert_success
	assert_output --partial "2 tunnels"
	wait_ctl a status .streams 3
	[ "$(tun_streams a t2 draining)" = 1 ]
	[ "$(tun_streams a t2 active)" = "" ]

	# 3. The last one changes and moves first.
	conf_a "$(tun_a t3 'sendbuf = 131072;'), $(tun_a t1 'recvbuf = 131072;')"
	run "$CTL" -s "$W/a.ctl" reload
	assert_success
	wait_ctl a status .streams 3
	[ "$(tun_streams a t3 draining)" = 1 ]
	[ "$(ctl_json a tunnels '.[0].tunnel')" = t3 ]
	[ "$(ctl_json a tunnels '.[] | select(.tunnel == "t3" and .state == "active") | .address')" = "tcp://127.0.0.1:$p3" ]
	# STATUS counts every open stream, the draining tunnels' too.
	wait_log notify "STATUS=2 tunnels, 3 streams" 10

	# New streams take the new tunnels; the removed one's port is closed.
	run client "$p3" "via the new t3"
	assert_output "via the new t3"
	run client "$p1" "via the new t1"
	assert_output "via the new t1"
	run timeout 10 socat -u - TCP:127.0.0.1:"$p2" <<<"x"
	assert_failure

	# The old streams finish, every byte back.
	touch "$W/s1.go" "$W/s2.go"
	wait_pid "$sp1" 120
	wait_pid "$sp2" 120
	[ "$(sha "$W/s1.in")" = "$(sha "$W/s1.out")" ]
	[ "$(sha "$W/s2.in")" = "$(sha "$W/s2.out")" ]

	# A stop drains the stream left on the old t3, and counts it.
	wait_ctl a status .streams 1
	kill -TERM "$PID_a"
	wait_log a "waiting up to 30 s for 1 open stream"
	touch "$W/s3.go"
	wait_pid "$sp3" 120
	[ "$(sha "$W/s3.in")" = "$(sha "$W/s3.out")" ]
	wait_log a "every stream has finished"
	wait_pid "$PID_a" 20
	run grep -E "reset|resetting" "$W/a.log" "$W/b.log"
	assert_failure
}

@test "reload: a Unix socket's new permissions never follow a symbolic link planted in its place" {
	conf_a "{ name = \"u\"; accept = \"unix:$W/u.sock\"; peer = \"$B\"; unix_mode = \"0600\"; }"
	start_daemon a
	[ "$(stat -c %a "$W/u.sock")" = 600 ]
	# A changed mode is applied to the socket file on reload...
	sed -i 's/"0600"/"0640"/' "$W/a.conf"
	run "$CTL" -s "$W/a.ctl" reload
	assert_success
	[ "$(stat -c %a "$W/u.sock")" = 640 ]
	# ...but not through a link to another file put in its place.
	head -c 32 /dev/urandom >"$W/secret"
	chmod 600 "$W/secret"
	rm "$W/u.sock"
	ln -s "$W/secret" "$W/u.sock"
	sed -i 's/"0640"/"0666"/' "$W/a.conf"
	run "$CTL" -s "$W/a.ctl" reload
	assert_failure 1
	assert_output --partial "$W/u.sock is a symbolic link, not the socket rstreamd made"
	[ "$(stat -c %a:%u "$W/secret")" = 600:0 ]
	run "$CTL" -s "$W/a.ctl" status
	assert_output --partial "last reload failed"
}
