#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Host names for targets and peers: looked up off the event loop, every
# address tried in turn.  Each daemon under test gets its own /etc/hosts,
# resolv.conf and nsswitch.conf (private_etc), the host's stay untouched.

load helpers

setup() {
	rs_setup
	mkdir -p "$W/etc"
	echo "hosts: files dns" >"$W/etc/nsswitch.conf"
	# No name server answers unless a test starts one.
	printf 'nameserver 127.0.0.1\noptions timeout:5 attempts:1\n' \
	    >"$W/etc/resolv.conf"
	RS_WRAP=(private_etc hosts resolv.conf nsswitch.conf --)
}

teardown() {
	rs_teardown
}

@test "names: a target resolving to ::1 first reaches 127.0.0.1; a peer name's dead first address gives way to the next" {
	echo_target
	# The echo listens on 127.0.0.1 only; the name gives ::1 first.  The
	# peer's name gives a's own address first: nobody listens there.
	printf '127.0.0.1 localhost\n::1 rs-target\n127.0.0.1 rs-target\n%s rs-peer\n%s rs-peer\n' \
	    "$A" "$B" >"$W/etc/hosts"
	conf_b "{ name = \"echo\"; target = \"tcp://rs-target:$tp\"; }"
	conf_a "{ name = \"echo\"; accept = \"tcp://127.0.0.1:0\"; peer = \"rs-peer:7471\"; }"
	start_daemon b
	start_daemon a
	link_up a echo
	grep -q "tunnel echo: link to rs-peer:7471: connecting to $A:7471" "$W/a.log"
	grep -q "tunnel echo: link to rs-peer:7471: connecting to $B:7471" "$W/a.log"
	run client "$(accept_port a echo)" "by name"
	assert_output "by name"
	grep -q "target tcp://rs-target:$tp at \[::1\]:$tp: Connection refused" "$W/b.log"
}

@test "names: a name server that does not answer blocks nothing; the stream is refused once the lookup fails" {
	echo_target
	printf '127.0.0.1 localhost\n' >"$W/etc/hosts"
	# The lookup must outlast the other stream's round trip and two
	# rstreamctl calls, which took more than 5 s in a loaded CI run: the
	# resolver's own time limit is far beyond them, and the name server
	# says SERVFAIL once the test has seen them (a failed lookup either
	# way, without waiting out the limit).
	printf 'nameserver 127.0.0.1\noptions timeout:30 attempts:1\n' \
	    >"$W/etc/resolv.conf"
	# A name server that takes the questions and does not answer until
	# $W/dns.go exists; then each, and any later one, gets its question
	# back as an answer with SERVFAIL.
	spawn python3 -c 'import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
s.settimeout(0.1)
print("bound", flush=True)
held = []
while True:
    try:
        held.append(s.recvfrom(4096))
    except socket.timeout:
        pass
    if os.path.exists(sys.argv[1]):
        for q, peer in held:
            s.sendto(q[:2] + bytes([0x80 | q[2] & 0x79, 0x82]) + q[4:], peer)
        held = []' "$W/dns.go" >"$W/dns.out"
	wait_until 30 grep -q bound "$W/dns.out"
	# connect_timeout (10 s by default) outlasts the lookup: the failed
	# lookup, not the time limit, must end the stream.
	conf_b "{ name = \"slow\"; target = \"tcp://rs-slow.invalid:$tp\";
	    connect_timeout = 60; },
	    { name = \"echo\"; target = \"tcp://127.0.0.1:$tp\"; }"
	conf_a "{ name = \"slow\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B\"; },
	    { name = \"echo\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B\"; }"
	start_daemon b
	start_daemon a
	link_up a slow
	link_up a echo
	spawn client "$(accept_port a slow)" "waiting" 60 >"$W/slow.out"
	sc=$!
	# While the lookup waits, b answers and other streams flow.
	wait_ctl b streams '.[] | select(.tunnel == "slow") | .state' resolving
	run client "$(accept_port a echo)" "not blocked"
	assert_output "not blocked"
	[ "$(ctl_json b streams '.[] | select(.tunnel == "slow") | .state')" = resolving ]
	# Then the lookup fails and the stream is refused, and said why.
	touch "$W/dns.go"
	wait_pid "$sc" 30
	wait_log b "tunnel slow stream .*cannot connect to target tcp://rs-slow.invalid:$tp: cannot resolve rs-slow.invalid:$tp"
	wait_log a "tunnel slow stream .*refused by $B:7471: target unreachable"
	[ ! -s "$W/slow.out" ]
}

@test "names: a reload whose user lookup hangs stops no worker; it goes on once the lookup answers" {
	echo_tunnel echo
	printf '127.0.0.1 localhost\n' >"$W/etc/hosts"
	# A name service that hangs on "nobody": getpwnam and getpwnam_r
	# wait for a file, then ask the real one (the C library's, through
	# /etc/passwd).  (The reload's file is read, and its users looked
	# up, by a child of the daemon, which inherits LD_PRELOAD.)
	cat >"$W/slow.c" <<-'EOC'
		#define _GNU_SOURCE
		#include <dlfcn.h>
		#include <pwd.h>
		#include <stdlib.h>
		#include <string.h>
		#include <unistd.h>
		static void
		gate(const char *name)
		{
			while (strcmp(name, "nobody") == 0 &&
			    access(getenv("SLOW_GATE"), F_OK) != 0)
				usleep(10000);
		}
		struct passwd *
		getpwnam(const char *name)
		{
			struct passwd *(*real)(const char *) =
			    (struct passwd *(*)(const char *))dlsym(RTLD_NEXT, "getpwnam");
			gate(name);
			return (real(name));
		}
		int
		getpwnam_r(const char *name, struct passwd *pw, char *buf,
		    size_t len, struct passwd **res)
		{
			int (*real)(const char *, struct passwd *, char *, size_t,
			    struct passwd **) = (int (*)(const char *, struct passwd *,
			    char *, size_t, struct passwd **))dlsym(RTLD_NEXT,
			    "getpwnam_r");
			gate(name);
			return (real(name, pw, buf, len, res));
		}
	EOC
	cc -shared -fPIC -o "$W/slow.so" "$W/slow.c" -ldl
	start_daemon b
	start_daemon a LD_PRELOAD="$W/slow.so" SLOW_GATE="$W/slow.go"
	link_up a echo
	paced_stream "$(accept_port a echo)" s1
	wait_until 30 at_least 524288 stat -c %s "$W/s1.out"
	# The reload adds a Unix tunnel whose owner must be looked up.
	sed -i "s|^tunnels = ( \(.*\) );|tunnels = ( \1, { name = \"u\"; accept = \"unix:$W/u.sock\"; peer = \"$B:7471\"; unix_owner = \"nobody\"; } );|" "$W/a.conf"
	grep -q 'unix_owner = "nobody"' "$W/a.conf"
	n=$(count_log a "reloading")
	kill -HUP "$PID_a"
	wait_log_more a "reloading" "$n"
	# While the lookup hangs, the open stream's second half goes through
	# on its worker.
	touch "$W/s1.go"
	wait_pid "$sp" 60
	[ "$(sha "$W/s1.in")" = "$(sha "$W/s1.out")" ]
	run grep "reloaded" "$W/a.log"
	assert_failure
	# It is the reload's reader that waits, a process of its own.
	run pgrep -f -- "--read-conf 3 -c $W/a.conf"
	assert_success
	# The name service answers: the reload completes.
	touch "$W/slow.go"
	wait_log a "reloaded .*: 2 tunnels"
	[ "$(stat -c %U "$W/u.sock")" = nobody ]
}
