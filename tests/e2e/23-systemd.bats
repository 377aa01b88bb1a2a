#!/usr/bin/env bats
# rstreamd as users run it: `make install`, then the commands of README's
# "As a service" under a real systemd as PID 1 (the runner boots one for
# this file, see SOFTROCE_SYSTEMD in tests/vm/softroce-run).
# rstreamd.service, on /etc/rstreamd.conf, is the client side; the
# instance rstreamd@b, on /etc/rstreamd/b.conf with its control socket in
# /run/rstreamd-b, serves the tunnel.  READY and STATUS as systemd shows
# them, rstreamctl on both daemons, the journal with TUNNEL=, socat and nc
# through the tunnel, a reload of both during a transfer, a stop that
# drains one, an instance without its own control socket refused, and
# systemd-analyze security's verdict on both units.
# 25-activation-systemd.bats has socket activation and the watchdog.
#
# Only in the runner's systemd guest: it installs into the root file
# system (an overlay there, thrown away at power-off).

load helpers

setup_file() {
	in_systemd_guest || return 0
	sd_install
	systemctl daemon-reload
}

setup() {
	rs_setup
	pa=$(free_port)
	sd_pair "$pa"
}

teardown() {
	systemctl stop rstreamd rstreamd@b rstreamd@x 2>/dev/null || true
	if [ -z "${BATS_TEST_COMPLETED:-}" ]; then
		journalctl -b --no-pager -u rstreamd -u rstreamd@b -u rstreamd@x |
		    tail -60 | sed 's/^/# /' >&3
	fi
	systemctl reset-failed rstreamd rstreamd@b rstreamd@x 2>/dev/null || true
	rs_teardown
}

# status_of UNIT: the unit's STATUS= text as systemd shows it.
status_of() {
	systemctl show -P StatusText "$1"
}

# link_up: rstreamd's link is up, as its STATUS says.
link_up() {
	[[ "$(status_of rstreamd)" == *"1 of 1 link up"* ]]
}


# state_is UNIT STATE: the unit's ActiveState is STATE.
state_is() {
	[ "$(systemctl show -P ActiveState "$1")" = "$2" ]
}

@test "systemd: systemctl enable --now on both sides, READY and STATUS, rstreamctl on both daemons, the journal by tunnel, socat and nc through the tunnel" {
	[[ "$(systemctl show -P ExecStart rstreamd)" == *"/rstreamd -c /etc/rstreamd.conf"* ]]
	[[ "$(systemctl show -P ExecStart rstreamd@b)" == *"/rstreamd -c /etc/rstreamd/b.conf"* ]]
	run systemctl enable --now rstreamd@b rstreamd
	assert_success
	wait_until 60 link_up
	# Type=notify: active means the daemon sent READY=1.
	run systemctl is-active rstreamd rstreamd@b
	assert_output "active
active"
	run systemctl status --no-pager rstreamd
	assert_success
	assert_output --partial 'Status: "1 tunnel'
	[[ "$(status_of rstreamd@b)" == "1 tunnel"* ]]
	# The installed rstreamctl reaches each daemon: by the default
	# configuration, by the instance's, by the instance's socket.
	run rstreamctl status
	assert_success
	assert_output --partial "config: /etc/rstreamd.conf ("
	run rstreamctl stats
	assert_success
	assert_output --partial "pg"
	run rstreamctl metrics
	assert_success
	assert_output --partial "rstreamd_"
	run rstreamctl -c /etc/rstreamd/b.conf status
	assert_success
	assert_output --partial "config: /etc/rstreamd/b.conf ("
	run rstreamctl -s /run/rstreamd-b/control.sock status
	assert_success
	assert_output --partial "config: /etc/rstreamd/b.conf ("
	head -c 4M /dev/urandom >"$W/4m"
	timeout 60 socat -t 30 - TCP:127.0.0.1:"$pa" <"$W/4m" >"$W/4m.out"
	[ "$(sha "$W/4m")" = "$(sha "$W/4m.out")" ]
	run bash -c "echo 'through nc' | timeout 20 nc -q 5 127.0.0.1 $pa"
	assert_output "through nc"
	# Stream lines carry TUNNEL=, on both sides.
	run journalctl -b --no-pager -o cat -u rstreamd TUNNEL=pg
	assert_output --partial "tunnel pg stream 1 (client"
	run journalctl -b --no-pager -o cat -u rstreamd@b TUNNEL=pg
	assert_output --partial "tunnel pg stream 1 (target"
	# An instance whose file leaves control at rstreamd.service's socket
	# does not start, and says why.
	echo 'tunnels = ( );' >/etc/rstreamd/x.conf
	run systemctl start rstreamd@x
	assert_failure
	run journalctl -b --no-pager -o cat -u rstreamd@x
	assert_output --partial "control socket: /run/rstreamd/control.sock is in use by a running process"
	# (Restart=on-failure would try again and again.)
	systemctl stop rstreamd@x
	run systemctl is-active rstreamd
	assert_output active
}

@test "systemd: systemctl reload of both during a transfer, which completes intact; systemctl stop drains an open stream" {
	run systemctl start rstreamd@b rstreamd
	assert_success
	wait_until 60 link_up
	paced_stream "$pa" r 8
	wait_until 30 at_least 1 sd_streams
	run systemctl reload rstreamd rstreamd@b
	assert_success
	run journalctl -b --no-pager -o cat -u rstreamd
	assert_output --partial "reloaded"
	run journalctl -b --no-pager -o cat -u rstreamd@b
	assert_output --partial "reloaded"
	touch "$W/r.go"
	wait_pid "$sp" 120
	[ "$(sha "$W/r.in")" = "$(sha "$W/r.out")" ]
	# A stop while a stream is open: no new streams, the open one finishes.
	paced_stream "$pa" s 8
	wait_until 30 at_least 1 sd_streams
	systemctl stop --no-block rstreamd
	wait_until 30 state_is rstreamd deactivating
	touch "$W/s.go"
	wait_pid "$sp" 120
	[ "$(sha "$W/s.in")" = "$(sha "$W/s.out")" ]
	wait_until 60 state_is rstreamd inactive
	run journalctl -b --no-pager -o cat -u rstreamd
	assert_output --partial "every stream has finished"
}

@test "systemd: systemd-analyze security's exposure of both units is at most tests/systemd-units.sh's bound" {
	max=$(sed -n 's/^max_exposure=\([0-9.]*\)$/\1/p' \
	    "$RSTREAMD_SRCDIR/tests/systemd-units.sh")
	[ -n "$max" ]
	for u in rstreamd rstreamd@b; do
		run systemd-analyze security --no-pager "$u"
		assert_success
		line=$(grep -m 1 "Overall exposure level" <<<"$output")
		echo "# systemd-analyze security $u: ${line#*: }" >&3
		level=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$line")
		[ -n "$level" ]
		awk -v l="$level" -v m="$max" 'BEGIN { exit !(l <= m) }'
	done
}
