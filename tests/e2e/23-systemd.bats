#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rstreamd as users run it: `make install`, then the commands of README's
# "As a service" under a real systemd as PID 1 (the runner boots one for
# this file, see SOFTROCE_SYSTEMD in tests/vm/softroce-run).
# rstreamd.service, on /etc/rstreamd.conf, is the client side; the
# instance rstreamd@b, on /etc/rstreamd/b.conf with its control socket in
# /run/rstreamd-b, serves the tunnel.  READY and STATUS as systemd shows
# them, rstreamctl on both daemons, the journal with TUNNEL=, socat and nc
# through the tunnel, a reload of both during a transfer, a stop that
# drains one, an instance without its own control socket refused, and
# systemd-analyze security's verdict on both units.  The units' sandbox
# as the running daemons have it, with traffic flowing: a /dev without raw
# devices, a device allow-list that refuses them, /proc without other
# processes, IPC of their own, no CAP_CHOWN and co.; the system call filter
# kills neither daemon through a transfer, a reload and a stop; unix_owner
# fails without the drop-in rstreamd-unix-owner.conf, naming it, and works
# with it.  A configuration error fails the start once (exit 78,
# RestartPreventExitStatus=78), not in a loop of restarts.
# 25-activation-systemd.bats has socket activation and the watchdog.
#
# Only in the runner's systemd guest: it installs into the root file
# system (an overlay there, thrown away at power-off).

load helpers

setup_file() {
	in_systemd_guest || return 0
	sd_install
	systemctl daemon-reload
	# A raw device for the sandbox to keep out: a SCSI generic node (no
	# such driver or disk in the guest: opening it for real would fail
	# with ENXIO, not EPERM).
	if [ ! -e /dev/sg0 ]; then
		mknod -m 0600 /dev/sg0 c 21 0
		export SD_SG0_MADE=1
	fi
}

teardown_file() {
	[ -z "${SD_SG0_MADE:-}" ] || rm -f /dev/sg0
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
	if [ -e /etc/systemd/system/rstreamd.service.d ]; then
		rm -rf /etc/systemd/system/rstreamd.service.d
		systemctl daemon-reload
	fi
	systemctl reset-failed rstreamd rstreamd@b rstreamd@x 2>/dev/null || true
	rs_teardown
}

# has_cap UNIT BIT: capability number BIT is in the bounding set of UNIT's
# main process.
has_cap() {
	local bnd
	bnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' \
	    "/proc/$(sd_prop "$1" MainPID)/status")
	[ -n "$bnd" ]
	(((0x$bnd >> $2) & 1))
}

# sock_is "OWNER MODE": /run/rstreamd/pg.sock has that owner and mode.
sock_is() {
	[ "$(stat -c '%U %a' /run/rstreamd/pg.sock)" = "$1" ]
}

# sandboxed UNIT: UNIT's main process runs in the unit's sandbox.
sandboxed() {
	local pid
	pid=$(sd_prop "$1" MainPID)
	[ "$pid" -gt 0 ]
	# PrivateDevices=, BindReadOnlyPaths=: its /dev has the RDMA devices
	# and the pseudo devices, and nothing else (not setup_file's /dev/sg0).
	run find "/proc/$pid/root/dev" \( -type c -o -type b \) -printf '%P\n'
	assert_success
	assert_line infiniband/rdma_cm
	assert_line --regexp '^infiniband/uverbs[0-9]+$'
	[ -e /dev/sg0 ]
	refute_line sg0
	run grep -vxE 'null|zero|full|random|urandom|tty|ptmx|pts/ptmx|infiniband/(rdma_cm|uverbs[0-9]+)' <<<"$output"
	assert_output ""
	# DeviceAllow=: the device allow-list (the unit's control group's)
	# refuses /dev/sg0 even where a path to it exists, here the real /dev.
	run bash -c 'echo $$ >"$1/cgroup.procs" && exec cat "$2"' _ \
	    "/sys/fs/cgroup$(sd_prop "$1" ControlGroup)" /dev/sg0
	assert_failure
	assert_output --partial "/dev/sg0: Operation not permitted"
	# ProtectProc=invisible, ProcSubset=pid: its /proc.
	run awk '$5 == "/proc" { o = $NF } END { print o }' "/proc/$pid/mountinfo"
	assert_output --partial hidepid=invisible
	assert_output --partial subset=pid
	# PrivateIPC=yes.
	[ "$(readlink "/proc/$pid/ns/ipc")" != "$(readlink /proc/self/ns/ipc)" ]
	# CapabilityBoundingSet=: CAP_NET_BIND_SERVICE (10) and CAP_IPC_LOCK
	# (14), not CAP_CHOWN (0), CAP_DAC_OVERRIDE (1) or CAP_FOWNER (3).
	has_cap "$1" 10
	has_cap "$1" 14
	run has_cap "$1" 0
	assert_failure
	run has_cap "$1" 1
	assert_failure
	run has_cap "$1" 3
	assert_failure
}

@test "systemd: systemctl enable --now on both sides, READY and STATUS, rstreamctl on both daemons, the journal by tunnel, socat and nc through the tunnel" {
	[[ "$(sd_prop rstreamd ExecStart)" == *"/rstreamd -c /etc/rstreamd.conf"* ]]
	[[ "$(sd_prop rstreamd@b ExecStart)" == *"/rstreamd -c /etc/rstreamd/b.conf"* ]]
	run systemctl enable --now rstreamd@b rstreamd
	assert_success
	wait_until 60 sd_link_up
	# Type=notify: active means the daemon sent READY=1.
	run systemctl is-active rstreamd rstreamd@b
	assert_output "active
active"
	run systemctl status --no-pager rstreamd
	assert_success
	assert_output --partial 'Status: "1 tunnel'
	[[ "$(sd_prop rstreamd@b StatusText)" == "1 tunnel"* ]]
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
	# The process's figures come from /proc/self, which the sandbox
	# (ProtectProc=invisible, ProcSubset=pid) leaves the daemon.
	assert_line --regexp '^process_open_fds [1-9][0-9]*$'
	assert_line --regexp '^process_resident_memory_bytes [1-9][0-9]*$'
	assert_line --regexp '^process_cpu_seconds_total [0-9]+\.[0-9]{3}$'
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
	# In the sandbox, with a link up and traffic through both.
	sandboxed rstreamd
	sandboxed rstreamd@b
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
	wait_until 60 sd_link_up
	paced_stream "$pa" r 8
	wait_until 30 at_least 1 open_streams
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
	wait_until 30 at_least 1 open_streams
	systemctl stop --no-block rstreamd
	wait_until 30 sd_state_is rstreamd deactivating
	touch "$W/s.go"
	wait_pid "$sp" 120
	[ "$(sha "$W/s.in")" = "$(sha "$W/s.out")" ]
	wait_until 60 sd_state_is rstreamd inactive
	run journalctl -b --no-pager -o cat -u rstreamd
	assert_output --partial "every stream has finished"
	# SystemCallFilter=: no call through all that was outside it (one
	# would have killed a daemon with SIGSYS, and it would have been
	# restarted).
	[ "$(sd_prop rstreamd Result)" = success ]
	[ "$(sd_prop rstreamd NRestarts)" = 0 ]
	[ "$(sd_prop rstreamd@b NRestarts)" = 0 ]
	run systemctl is-active rstreamd@b
	assert_output active
}

@test "systemd: unix_owner needs the drop-in rstreamd-unix-owner.conf: without it the start fails and says so; with it the socket is the owner's, a reload changes its mode, and a stream goes through it" {
	cat >/etc/rstreamd.conf <<-EOF
		source = "$A";
		tunnels = ( { name = "pg"; accept = "unix:/run/rstreamd/pg.sock";
		    unix_owner = "nobody"; unix_mode = "0600";
		    peer = "$B:7471"; } );
	EOF
	run systemctl start rstreamd@b
	assert_success
	run systemctl start rstreamd
	assert_failure
	run journalctl -b --no-pager -o cat -u rstreamd
	assert_output --partial "tunnel pg: chown /run/rstreamd/pg.sock: Operation not permitted (rstreamd lacks CAP_CHOWN: under systemd, add the drop-in rstreamd-unix-owner.conf; see rstreamd(8))"
	# (Restart=on-failure would try again and again.)
	systemctl stop rstreamd
	# As README's "As a service" installs it.
	examples=$(sed -n 's/^prefix = //p' "$RSTREAMD_BUILDDIR/Makefile")/share/doc/rstreamd/examples
	mkdir -p /etc/systemd/system/rstreamd.service.d
	cp "$examples/rstreamd-unix-owner.conf" /etc/systemd/system/rstreamd.service.d/
	systemctl daemon-reload
	run systemctl start rstreamd
	assert_success
	wait_until 60 sd_link_up
	# It adds to the unit's capabilities.
	has_cap rstreamd 0
	has_cap rstreamd 1
	has_cap rstreamd 3
	has_cap rstreamd 10
	has_cap rstreamd 14
	run stat -c '%U %a' /run/rstreamd/pg.sock
	assert_output "nobody 600"
	# The socket is nobody's now: changing its mode takes CAP_FOWNER.
	sed -i 's/"0600"/"0660"/' /etc/rstreamd.conf
	run systemctl reload rstreamd
	assert_success
	wait_until 30 sock_is "nobody 660"
	head -c 1M /dev/urandom >"$W/u.in"
	timeout 60 runuser -u nobody -- socat -t 30 - \
	    UNIX-CONNECT:/run/rstreamd/pg.sock <"$W/u.in" >"$W/u.out"
	[ "$(sha "$W/u.in")" = "$(sha "$W/u.out")" ]
}

# journal_has UNIT TEXT: UNIT's journal of this boot has a line with TEXT.
journal_has() {
	journalctl -b --no-pager -o cat -u "$1" | grep -qF -- "$2"
}

@test "systemd: a configuration error fails the start once: exit 78 (EX_CONFIG), no restart, the file, line and why in the journal" {
	# An example uncommented with the comma the shipped file once had.
	cat >/etc/rstreamd.conf <<-EOF
		source = "$A";
		tunnels = (
		    { name = "pg"; accept = "tcp://127.0.0.1:$pa"; peer = "$B:7471"; },
		);
	EOF
	run systemctl start rstreamd
	assert_failure
	# Failed for good at once, not "activating (auto-restart)".
	[ "$(sd_prop rstreamd ActiveState)" = failed ]
	[ "$(sd_prop rstreamd Result)" = exit-code ]
	[ "$(sd_prop rstreamd ExecMainStatus)" = 78 ]
	[ "$(sd_prop rstreamd NRestarts)" = 0 ]
	wait_until 10 journal_has rstreamd "/etc/rstreamd.conf:4: syntax error: a comma before ')' (line 3): libconfig"
	# Fixed, it starts.
	sed -i 's/; },$/; }/' /etc/rstreamd.conf
	systemctl reset-failed rstreamd
	run systemctl start rstreamd
	assert_success
	[ "$(sd_prop rstreamd ActiveState)" = active ]
}

@test "systemd: systemd-analyze security's exposure of both units is at most tests/systemd-units.sh's bound, 3.0" {
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
