#!/usr/bin/env bats
# rstreamd as users run it: `make install`, then `systemctl start` under a
# real systemd as PID 1 (the runner boots one for this file, see
# SOFTROCE_SYSTEMD in tests/vm/softroce-run), /etc/rstreamd.conf for the
# serving daemon and a second unit, rstreamd-a, for the client side.
# READY and STATUS as systemd shows them, the journal with TUNNEL=, socat
# and nc through the tunnel, a reload during a transfer, a stop that
# drains one.
#
# Only in the runner's systemd guest: it installs into the root file
# system (an overlay there, thrown away at power-off).

load helpers

setup_file() {
	[ "$(ps -p 1 -o comm=)" = systemd ] && [ "${RSTREAMD_TEST_MODE:-}" = vm ] ||
	    return 0
	make -s -C "$RSTREAMD_BUILDDIR" install >"$BATS_FILE_TMPDIR/install.log" 2>&1
}

setup() {
	rs_setup
	[ "$(ps -p 1 -o comm=)" = systemd ] && [ "$RSTREAMD_TEST_MODE" = vm ] ||
	    skip "needs the runner's systemd guest (SOFTROCE_SYSTEMD=1)"
	tp=$(free_port)
	spawn socat -t 600 TCP-LISTEN:"$tp",bind=127.0.0.1,reuseaddr,fork EXEC:cat
	wait_port "$tp"
	pa=$(free_port)
	cat >/etc/rstreamd.conf <<-EOF
		listen = "$B:7471";
		tunnels = ( { name = "echo"; target = "tcp://127.0.0.1:$tp"; } );
	EOF
	cat >/etc/rstreamd-a.conf <<-EOF
		source = "$A";
		control = "/run/rstreamd-a/control.sock";
		tunnels = ( { name = "echo"; accept = "tcp://127.0.0.1:$pa";
		    peer = "$B:7471"; } );
	EOF
	# The second daemon: the installed unit, on its own file and runtime
	# directory (its control socket lives there).
	unit=$(systemctl show -P FragmentPath rstreamd.service)
	sed -e 's|/rstreamd\.conf|/rstreamd-a.conf|g' \
	    -e 's|^RuntimeDirectory=rstreamd$|RuntimeDirectory=rstreamd-a|' \
	    "$unit" >/etc/systemd/system/rstreamd-a.service
	systemctl daemon-reload
}

teardown() {
	systemctl stop rstreamd-a rstreamd 2>/dev/null || true
	if [ -z "${BATS_TEST_COMPLETED:-}" ]; then
		journalctl -b --no-pager -u rstreamd -u rstreamd-a | tail -60 |
		    sed 's/^/# /' >&3
	fi
	rs_teardown
}

# status_of UNIT: the unit's STATUS= text as systemd shows it.
status_of() {
	systemctl show -P StatusText "$1"
}

# link_up_a: rstreamd-a's link is up, as its STATUS says.
link_up_a() {
	[[ "$(status_of rstreamd-a)" == *"1 of 1 link up"* ]]
}

# streams_a: streams rstreamd-a has open.
streams_a() {
	"$CTL" -j -s /run/rstreamd-a/control.sock status | jq -r .streams
}

start_both() {
	run systemctl start rstreamd rstreamd-a
	assert_success
	wait_until 60 link_up_a
}

@test "systemd: systemctl start on both sides, READY and STATUS, the journal by tunnel, socat and nc through the tunnel" {
	[[ "$(systemctl show -P ExecStart rstreamd)" == *"/rstreamd -c /etc/rstreamd.conf"* ]]
	start_both
	# Type=notify: active means the daemon sent READY=1.
	run systemctl is-active rstreamd rstreamd-a
	assert_output "active
active"
	[[ "$(status_of rstreamd)" == "1 tunnel"* ]]
	head -c 4M /dev/urandom >"$W/4m"
	timeout 60 socat -t 30 - TCP:127.0.0.1:"$pa" <"$W/4m" >"$W/4m.out"
	[ "$(sha "$W/4m")" = "$(sha "$W/4m.out")" ]
	run bash -c "echo 'through nc' | timeout 20 nc -q 5 127.0.0.1 $pa"
	assert_output "through nc"
	# Stream lines carry TUNNEL=, on both sides.
	run journalctl -b --no-pager -o cat -u rstreamd TUNNEL=echo
	assert_output --partial "tunnel echo stream 1 (target"
	run journalctl -b --no-pager -o cat -u rstreamd-a TUNNEL=echo
	assert_output --partial "tunnel echo stream 1 (client"
}

@test "systemd: systemctl reload during a transfer, which completes intact; systemctl stop drains an open stream" {
	start_both
	paced_stream "$pa" r 8
	wait_until 30 at_least 1 streams_a
	run systemctl reload rstreamd-a
	assert_success
	run journalctl -b --no-pager -o cat -u rstreamd-a
	assert_output --partial "reloaded"
	touch "$W/r.go"
	wait_pid "$sp" 120
	[ "$(sha "$W/r.in")" = "$(sha "$W/r.out")" ]
	# A stop while a stream is open: no new streams, the open one finishes.
	paced_stream "$pa" s 8
	wait_until 30 at_least 1 streams_a
	systemctl stop --no-block rstreamd-a
	wait_until 30 bash -c '[ "$(systemctl show -P ActiveState rstreamd-a)" = deactivating ]'
	touch "$W/s.go"
	wait_pid "$sp" 120
	[ "$(sha "$W/s.in")" = "$(sha "$W/s.out")" ]
	wait_until 60 bash -c '[ "$(systemctl show -P ActiveState rstreamd-a)" = inactive ]'
	run journalctl -b --no-pager -o cat -u rstreamd-a
	assert_output --partial "every stream has finished"
}
