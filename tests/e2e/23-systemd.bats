#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rstreamd as users run it: `make install`, then the commands of README's
# quick start and of rstreamd(8)'s service sections, under a real systemd
# as PID 1 (the runner boots one for this file, see SOFTROCE_SYSTEMD in
# tests/vm/softroce-run).
# rstreamd.service, on /etc/rstreamd.conf, is the client side; the
# instance rstreamd@b, on /etc/rstreamd/b.conf with its control socket in
# /run/rstreamd-b, serves the tunnel.  READY and STATUS as systemd shows
# them, rstreamctl on both daemons, the journal with TUNNEL=, socat and nc
# through the tunnel, a reload of both during a transfer, a stop that
# drains one, an instance without its own control socket refused, and
# systemd-analyze security's verdict on both units.  The units' sandbox
# as the running daemons have it, with traffic flowing: the user rstreamd
# with no capability at all (ring memory pinned all the same), a /dev
# without raw devices, a device allow-list that refuses them, /proc without
# other processes, IPC of their own; the system call filter kills neither
# daemon through a transfer, a reload and a stop; unix_owner fails without
# the drop-in rstreamd-unix-owner.conf, naming it, and works with it, as
# root, with rstreamd's key.  Keys made as README says (sudo -u rstreamd
# rstreamd --genkey) seal a link, a key of root's is refused with the fix;
# ports below 1024 and control_group without root: refused with the fix,
# then given by the drop-in rstreamd(8) shows.  A configuration error
# fails the start once (exit 78, RestartPreventExitStatus=78), not in a
# loop of restarts.
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
	if [ -e /etc/systemd/system/rstreamd.service.d ] ||
	    [ -e /etc/systemd/system/rstreamd@b.service.d ]; then
		rm -rf /etc/systemd/system/rstreamd.service.d \
		    /etc/systemd/system/rstreamd@b.service.d
		systemctl daemon-reload
	fi
	systemctl reset-failed rstreamd rstreamd@b rstreamd@x 2>/dev/null || true
	rs_teardown
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
	# User=, Group=, CapabilityBoundingSet=: rstreamd, no capability.
	sd_unprivileged "$1"
	# ... and its rings registered all the same: pinned memory (the
	# verbs driver counts it in VmPin), under LimitMEMLOCK=infinity,
	# without CAP_IPC_LOCK.
	[ "$(sd_status "$1" VmPin | sed 's/ kB$//')" -gt 0 ]
}

# cap_set UNIT SET HEX: UNIT's main process has capability set SET
# (CapEff, CapBnd, ...) HEX.
cap_set() {
	[ "$(sd_status "$1" "$2")" = "$3" ]
}

# no_access USER PATH: USER cannot connect to the control socket PATH.
no_access() {
	run runuser -u "$1" -- rstreamctl -s "$2" status
	assert_failure
	assert_output --partial "Permission denied"
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
	# -N: nc shuts down writing at the end of its input and ends with
	# the reply's end (-q 5 would wait out its 5 s whatever came back).
	run bash -c "echo 'through nc' | timeout 20 nc -N 127.0.0.1 $pa"
	assert_success
	assert_output "through nc"
	# In the sandbox, with a link up and traffic through both.
	sandboxed rstreamd
	sandboxed rstreamd@b
	# RuntimeDirectory=: the user's, and so is the control socket (mode
	# 0660), which root's rstreamctl used above and others may not.
	run stat -c '%U:%G %a' /run/rstreamd /run/rstreamd/control.sock \
	    /run/rstreamd-b /run/rstreamd-b/control.sock
	assert_output "rstreamd:rstreamd 755
rstreamd:rstreamd 660
rstreamd:rstreamd 755
rstreamd:rstreamd 660"
	no_access nobody /run/rstreamd/control.sock
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

@test "systemd: unix_owner needs the drop-in rstreamd-unix-owner.conf: without it the start fails and says so; with it the daemon is root with CAP_CHOWN and co. and reads rstreamd's key, the socket is the owner's, a reload changes its mode, and a stream goes through it" {
	# A pre-shared key as rstreamd(8) ("Keys of the service") makes it.
	runuser -u rstreamd -- sh -c \
	    'umask 077; head -c 32 /dev/urandom >/etc/rstreamd/fabric.key'
	cat >/etc/rstreamd.conf <<-EOF
		source = "$A";
		key_file = "/etc/rstreamd/fabric.key";
		tunnels = ( { name = "pg"; accept = "unix:/run/rstreamd/pg.sock";
		    unix_owner = "nobody"; unix_mode = "0600";
		    peer = "$B:7471"; } );
	EOF
	sed -i '1i key_file = "/etc/rstreamd/fabric.key";' /etc/rstreamd/b.conf
	run systemctl start rstreamd@b
	assert_success
	run systemctl start rstreamd
	assert_failure
	run journalctl -b --no-pager -o cat -u rstreamd
	assert_output --partial "tunnel pg: chown /run/rstreamd/pg.sock: Operation not permitted (rstreamd lacks CAP_CHOWN: under systemd, add the drop-in rstreamd-unix-owner.conf; see rstreamd(8))"
	# (Restart=on-failure would try again and again.)
	systemctl stop rstreamd
	# As rstreamd(8) ("Unix sockets of other users") installs it.
	examples=$(sed -n 's/^prefix = //p' "$RSTREAMD_BUILDDIR/Makefile")/share/doc/rstreamd/examples
	mkdir -p /etc/systemd/system/rstreamd.service.d
	cp "$examples/rstreamd-unix-owner.conf" /etc/systemd/system/rstreamd.service.d/
	systemctl daemon-reload
	run systemctl start rstreamd
	assert_success
	wait_until 60 sd_link_up
	# Root, with CAP_CHOWN (0), CAP_DAC_OVERRIDE (1) and CAP_FOWNER (3)
	# and nothing else, in the group rstreamd still; the instance is
	# unprivileged.
	[ "$(sd_status rstreamd Uid)" = "0 0 0 0" ]
	g=$(id -g rstreamd)
	[ "$(sd_status rstreamd Gid)" = "$g $g $g $g" ]
	cap_set rstreamd CapBnd 000000000000000b
	cap_set rstreamd CapEff 000000000000000b
	run stat -c %G /run/rstreamd/control.sock
	assert_output rstreamd
	sd_unprivileged rstreamd@b
	# The key is rstreamd's: root took it (and proved it to the peer).
	run stat -c '%U %a' /etc/rstreamd/fabric.key
	assert_output "rstreamd 600"
	run rstreamctl links
	assert_output --partial "up"
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

@test "systemd: node identities made as rstreamd (rstreamd --genkey, rstreamctl keygen) seal the link; a key of root's is refused, naming the fix; root's rstreamd -n reads rstreamd's keys; a reload reads them as rstreamd" {
	# As README's quick start does it, with sudo -u rstreamd.
	run runuser -u rstreamd -- rstreamd --genkey /etc/rstreamd/a.key
	assert_success
	ka=$output
	run runuser -u rstreamd -- sh -c \
	    'rstreamctl keygen /etc/rstreamd/b.key && rstreamctl pubkey /etc/rstreamd/b.key'
	assert_success
	kb=${output##*$'\n'}
	run stat -c '%U %a' /etc/rstreamd/a.key /etc/rstreamd/b.key
	assert_output "rstreamd 600
rstreamd 600"
	# The peers file stays root's, readable by all.
	printf '%s node-a\n%s node-b\n' "$ka" "$kb" >/etc/rstreamd/peers
	chmod 0644 /etc/rstreamd/peers
	sed -i '1i identity_file = "/etc/rstreamd/a.key"; peers_file = "/etc/rstreamd/peers";' \
	    /etc/rstreamd.conf
	sed -i '1i identity_file = "/etc/rstreamd/b.key"; peers_file = "/etc/rstreamd/peers";' \
	    /etc/rstreamd/b.conf
	# Root checks both files, reading rstreamd's keys.
	run rstreamd -n
	assert_success
	run rstreamd -n -c /etc/rstreamd/b.conf
	assert_success
	# A key of root's is none the daemon can read: its check says so,
	# and how to fix it.
	chown root:root /etc/rstreamd/a.key
	run systemctl start rstreamd@b rstreamd
	assert_failure
	run journalctl -b --no-pager -o cat -u rstreamd
	assert_output --partial "identity_file /etc/rstreamd/a.key: cannot read: Permission denied (rstreamd runs as user rstreamd: give it the file, chown rstreamd /etc/rstreamd/a.key)"
	systemctl stop rstreamd
	chown rstreamd:rstreamd /etc/rstreamd/a.key
	run systemctl start rstreamd
	assert_success
	n0=$(sd_prop rstreamd NRestarts)
	wait_until 60 sd_link_up
	run rstreamctl -o wide links
	assert_output --partial "node-b"
	head -c 2M /dev/urandom >"$W/k.in"
	timeout 60 socat -t 30 - TCP:127.0.0.1:"$pa" <"$W/k.in" >"$W/k.out"
	[ "$(sha "$W/k.in")" = "$(sha "$W/k.out")" ]
	# A reload reads the file and the keys again, in a child process
	# (/proc/self/exe) under the same user and sandbox.
	run rstreamctl reload
	assert_success
	run rstreamctl -c /etc/rstreamd/b.conf reload
	assert_success
	run rstreamctl status
	refute_output --partial "reload failed"
	sd_unprivileged rstreamd
	sd_unprivileged rstreamd@b
	[ "$(sd_prop rstreamd NRestarts)" = "$n0" ]
	[ "$(sd_prop rstreamd@b NRestarts)" = 0 ]
}

@test "systemd: ports below 1024 and control_group without root: refused, naming the fix; with CAP_NET_BIND_SERVICE ambient and SupplementaryGroups= the daemons, still rstreamd, listen there and the group's members use rstreamctl" {
	# control_group: rstreamd is no member of nogroup.
	sed -i '1i control_group = "nogroup";' /etc/rstreamd.conf
	run systemctl start rstreamd
	assert_failure
	run journalctl -b --no-pager -o cat -u rstreamd
	assert_output --partial "chown /run/rstreamd/control.sock: Operation not permitted (rstreamd lacks CAP_CHOWN and is not in that group: under systemd, add the group to the service's SupplementaryGroups=, or add the drop-in rstreamd-unix-owner.conf; see rstreamd(8))"
	systemctl stop rstreamd
	mkdir -p /etc/systemd/system/rstreamd.service.d \
	    /etc/systemd/system/rstreamd@b.service.d
	printf '[Service]\nSupplementaryGroups=nogroup\n' \
	    >/etc/systemd/system/rstreamd.service.d/group.conf
	systemctl daemon-reload
	# An accept port below 1024, and a listen port for the instance.
	sed -i "s|tcp://127.0.0.1:$pa|tcp://127.0.0.1:999|" /etc/rstreamd.conf
	sed -i "s|$B:7471|$B:998|" /etc/rstreamd.conf /etc/rstreamd/b.conf
	run systemctl start rstreamd
	assert_failure
	run journalctl -b --no-pager -o cat -u rstreamd
	assert_output --partial 'cannot listen on tcp://127.0.0.1:999: Permission denied (a port below 1024 needs CAP_NET_BIND_SERVICE: under systemd, see "Ports below 1024" in rstreamd(8))'
	systemctl stop rstreamd
	run systemctl start rstreamd@b
	assert_failure
	run journalctl -b --no-pager -o cat -u rstreamd@b
	assert_output --partial "cannot listen for RDMA links on $B:998: Permission denied (a port below 1024 needs CAP_NET_BIND_SERVICE"
	systemctl stop rstreamd@b
	# The drop-in of rstreamd(8)'s "Ports below 1024".
	for u in rstreamd rstreamd@b; do
		printf '[Service]\nCapabilityBoundingSet=CAP_NET_BIND_SERVICE\nAmbientCapabilities=CAP_NET_BIND_SERVICE\n' \
		    >"/etc/systemd/system/$u.service.d/ports.conf"
	done
	systemctl daemon-reload
	run systemctl start rstreamd@b rstreamd
	assert_success
	wait_until 60 sd_link_up
	# Still rstreamd, with CAP_NET_BIND_SERVICE (bit 10) alone.
	for u in rstreamd rstreamd@b; do
		[ "$(sd_status "$u" Uid | cut -d' ' -f1)" = "$(id -u rstreamd)" ]
		cap_set "$u" CapBnd 0000000000000400
		cap_set "$u" CapEff 0000000000000400
		cap_set "$u" CapAmb 0000000000000400
	done
	[[ " $(sd_status rstreamd Groups) " == *" $(getent group nogroup | cut -d: -f3) "* ]]
	run stat -c '%U:%G %a' /run/rstreamd/control.sock
	assert_output "rstreamd:nogroup 660"
	run runuser -u nobody -g nogroup -- rstreamctl status
	assert_success
	assert_output --partial "config: /etc/rstreamd.conf ("
	head -c 2M /dev/urandom >"$W/p.in"
	timeout 60 socat -t 30 - TCP:127.0.0.1:999 <"$W/p.in" >"$W/p.out"
	[ "$(sha "$W/p.in")" = "$(sha "$W/p.out")" ]
}

@test "systemd: systemd-analyze security's exposure of both units is at most tests/systemd-units.sh's bound, 2.0" {
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
