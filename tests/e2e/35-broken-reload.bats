#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# No file can kill a running daemon: a few hundred broken configurations
# (the shapes people and accidents make, random bytes, every truncation
# of a good one, files that are no files) reach two running daemons
# through "rstreamctl reload" and SIGHUP while streams flow; each reload
# fails with its reason, the daemons stay up on their old configuration,
# and every byte of every stream arrives.  A reload that takes long stops
# neither the streams nor the watchdog.

load helpers

setup() {
	rs_setup
	notify_socket
}

teardown() {
	rs_teardown
}

# broken_files DIR GOOD: write the broken variants of configuration GOOD
# into DIR as NNN-what.conf.
broken_files() {
	python3 - "$1" "$2" <<'EOF'
import os, random, sys
out, good = sys.argv[1], open(sys.argv[2], 'rb').read()
rng = random.Random(36)
n = [0]
def put(what, data):
    n[0] += 1
    with open(os.path.join(out, '%03d-%s.conf' % (n[0], what)), 'wb') as f:
        f.write(data)
tail = good[good.rindex(b')'):]
shapes = {
    'trailing-comma': good.replace(b' );', b', );'),
    'unquoted': b'log_level = info;\n' + good,
    'single-quotes': good.replace(b'"', b"'"),
    'bom': b'\xef\xbb\xbf' + good,
    'unterminated': good[:good.index(b'"') + 3],
    'bad-value': good.replace(b'tunnels = (', b'drain_time = -5;\ntunnels = ('),
    'unknown-setting': b'no_such_setting = 1;\n' + good,
    'nul-bytes': good[:20] + b'\0\0\0' + good[20:],
    'deep-nesting': b'x = ' + b'(' * 20000 + b')' * 20000 + b';\n' + good,
    'long-line': b'#' + b'x' * 200000 + b'\n' + good[:-5],
    'huge': b'# ' + b'y' * (5 << 20) + b'\n' + good,
    'long-string': b'junk = "' + b'z' * (256 << 10) + b'";\n' + good,
    'many-tunnels': good.replace(b'tunnels = (', b'tunnels = (' + b''.join(
        b'{ name = "dup"; accept = "tcp://127.0.0.1:0"; peer = "x"; },'
        for i in range(3000))),
    'binary-after': good + bytes(range(256)) * 4,
}
for what, data in shapes.items():
    put(what, data)
# Every other truncation short of the last ')' (after it, libconfig's optional
# ';' and newline make it the same file again).
for k in range(0, len(good) - len(tail), 2):
    put('cut%d' % k, good[:k])
# (Random bytes never define tunnels; flipped bytes of a good file might
# make another good one, so there are none.)
for i in range(100):
    put('random%d' % i, bytes(rng.randrange(256)
                              for _ in range(rng.randrange(1, 3000))))
EOF
}

# specials DIR: the files that are not files, or include such.
specials() {
	mkfifo "$1/fifo"
	mkdir "$1/dir"
	local inc
	for inc in "$1/dir" "$1/fifo" /proc/self/mem /dev/zero "$1/missing"; do
		printf '@include "%s"\n' "$inc" | cat - "$W/good.conf" \
		    >"$1/include-${inc##*/}.conf.x"
	done
	printf '@include "%s/self.conf.x"\n' "$1" >"$1/self.conf.x"
}

# next_failure FD: wait until daemon log FD (read from where the last
# call stopped) tells of one more failed reload.  Bash alone, and only
# what is new: in the guest a program costs a start, and this is polled
# hundreds of times.
next_failure() {
	local l i
	for ((i = 0; i < 1200; i++)); do
		while :; do
			if ! IFS= read -r l <&"$1"; then
				# A line not yet whole: the rest comes later.
				part=$part$l
				break
			fi
			l=$part$l
			part=
			[[ $l == *"reload failed, still running the previous configuration"* ]] &&
			    return 0
		done
		# A tenth of a second without starting sleep(1).
		read -r -t 0.1 -u "$nap" || true
	done
	return 1
}

# stop_reader FILE: find the process reading FILE for a reload and stop
# it, in one step (found in one and stopped in another, it may have
# finished between them); its pid in $reader.
stop_reader() {
	local p
	p=$(pgrep -f -- "--read-conf 3 -c $1") || return 1
	kill -STOP "$p" 2>/dev/null || return 1
	reader=$p
}

# reload_fails NAME HOW: reload daemon NAME with what its file holds now,
# by "rstreamctl reload" or SIGHUP (HOW), and check that it failed.
reload_fails() {
	if [ "$2" = ctl ]; then
		run "$CTL" -s "$W/$1.ctl" reload
		[ "$status" -ne 0 ] || {
			echo "reload of $1 worked with $f" >&2
			return 1
		}
		[[ $output == *"reload failed, still running the previous configuration"* ]] || {
			echo "reload of $1 with $f: $output" >&2
			return 1
		}
	else
		kill -HUP "$(eval echo "\$PID_$1")"
		next_failure "$lg" && return 0
		echo "reload of $1 with $f: no failure logged" >&2
		return 1
	fi
}

# storm NAME HOW PARITY: every other broken file (those of PARITY) into
# daemon NAME's file, each reloaded by HOW and failing; then the file
# itself a directory, a FIFO, gone.  How many, into $W/storm-NAME.n.
storm() {
	local n=0 i=0 f l lg part=
	# Its log from the end, for next_failure.
	exec {lg}<"$W/$1.log"
	while IFS= read -r l <&"$lg"; do :; done
	for f in "$W"/broken/*.conf "$W"/broken/*.conf.x; do
		i=$((i + 1))
		((i % 2 == $3)) || continue
		cp "$f" "$W/$1.conf"
		reload_fails "$1" "$2"
		n=$((n + 1))
	done
	rm "$W/$1.conf"
	reload_fails "$1" "$2"
	mkdir "$W/$1.conf"
	reload_fails "$1" "$2"
	rmdir "$W/$1.conf"
	mkfifo "$W/$1.conf"
	reload_fails "$1" "$2"
	rm "$W/$1.conf"
	echo $((n + 3)) >"$W/storm-$1.n"
}

# flow_feed: random bytes, 8 KiB every 50 ms, also kept in $W/flow.in,
# until $W/stop exists.
flow_feed() {
	python3 -c '
import os, sys, time
w, stop = sys.argv[1], sys.argv[2]
with open(w, "wb") as kept:
    while not os.path.exists(stop):
        b = os.urandom(8192)
        kept.write(b)
        sys.stdout.buffer.write(b)
        sys.stdout.buffer.flush()
        time.sleep(0.05)
' "$W/flow.in" "$W/stop"
}

@test "broken files by the hundred, by rstreamctl and SIGHUP, under flowing streams: the daemons stay up, their streams intact" {
	echo_tunnel echo
	start_daemon b
	start_daemon a
	link_up a echo
	port=$(accept_port a echo)
	cp "$W/a.conf" "$W/good.conf"
	cp "$W/b.conf" "$W/good-b.conf"
	mkdir "$W/broken"
	# What reload_fails waits on between looks: a FIFO nobody writes.
	mkfifo "$W/nap"
	exec {nap}<>"$W/nap"
	broken_files "$W/broken" "$W/good.conf"
	specials "$W/broken"

	# A stream that keeps flowing through the storm, and one that waits
	# open across it.
	# (One process writes it: a pipeline of programs every 50 ms would
	# take most of the guest's CPU.)
	spawn_fed flow_feed -- timeout 900 socat -t 60 - TCP:127.0.0.1:"$port" \
	    >"$W/flow.out" 2>"$W/flow.err"
	fp=$!
	paced_stream "$port" held 2

	# a by rstreamctl, b by SIGHUP, each half of the files, at once.
	# (Each in a subshell of its own, where a failed check ends it.)
	spawn storm a ctl 0 >"$W/storm-a" 2>&1
	sa=$!
	spawn storm b hup 1 >"$W/storm-b" 2>&1
	sb=$!
	rc=0
	wait "$sa" || rc=$?
	wait "$sb" || rc=$((rc + $?))
	cat "$W/storm-a" "$W/storm-b" >&3
	[ "$rc" = 0 ]
	n=$(($(cat "$W/storm-a.n") + $(cat "$W/storm-b.n")))
	echo "# $n broken files tried" >&3
	[ "$n" -ge 200 ]

	# Both still here, on the configuration they had, and they say why.
	kill -0 "$PID_a"
	kill -0 "$PID_b"
	run ctl_json a status .reload_error
	assert_output --partial "cannot read"
	run ctl_json a tunnels '.[0].tunnel'
	assert_output echo
	run client "$port" "after the storm"
	assert_output "after the storm"
	# Every byte of both streams.
	touch "$W/stop" "$W/held.go"
	wait_pid "$fp" 120
	wait_pid "$sp" 120
	[ -s "$W/flow.in" ]
	[ "$(sha "$W/flow.in")" = "$(sha "$W/flow.out")" ]
	[ "$(sha "$W/held.in")" = "$(sha "$W/held.out")" ]
	# What was tried, and what came through, for the record.
	(cd "$W/broken" && ls | grep -v -e '^fifo$' -e '^dir$' | tr '\n' ' ' |
	    fold -s -w 100 | sed 's/^/# tried: /') >&3
	echo "# tried: the file itself missing, a directory, a FIFO (each daemon)" >&3
	echo "# flowing stream: $(wc -c <"$W/flow.in") bytes, sha256 $(sha "$W/flow.in") in and out" >&3
	echo "# held stream: $(wc -c <"$W/held.in") bytes, sha256 $(sha "$W/held.in") in and out" >&3
	# And the good files load again.
	cp "$W/good.conf" "$W/a.conf"
	cp "$W/good-b.conf" "$W/b.conf"
	run "$CTL" -s "$W/a.ctl" reload
	assert_success
	kill -HUP "$PID_b"
	wait_log b "reloaded .*b.conf: 1 tunnels"
	run grep -E "reset|resetting|AddressSanitizer|runtime error" "$W/a.log" "$W/b.log"
	assert_failure
}

@test "a reload that takes long stops neither the streams nor the watchdog" {
	echo_tunnel echo
	start_daemon b
	start_daemon a NOTIFY_SOCKET="$W/notify.sock" WATCHDOG_USEC=1000000
	link_up a echo
	port=$(accept_port a echo)
	cp "$W/a.conf" "$W/good.conf"
	# libconfig takes seconds over a long string (its buffer grows
	# quadratically); the reader, a process of its own, is caught at it
	# and held there, as a slow name service would hold it.
	# (1.5 MiB: 1 s on a host, some 3.5 s in a guest, long enough to be
	# found by a search every few tenths of a second.)
	python3 -c 'print("junk = \"" + "z" * (3 << 19) + "\";")' >"$W/a.conf"
	cat "$W/good.conf" >>"$W/a.conf"
	kill -HUP "$PID_a"
	wait_until 30 stop_reader "$W/a.conf"
	wait_log notify "RELOADING=1"
	w=$(grep -o 'WATCHDOG=1' "$W/notify.log" | wc -l)
	run client "$port" "while it reads"
	assert_output "while it reads"
	run ctl_json a status .tunnels
	assert_success
	# The watchdog goes on: two more pings (every 500 ms).
	wait_until 20 at_least $((w + 2)) eval "grep -o 'WATCHDOG=1' '$W/notify.log' | wc -l"
	# Another reload meanwhile is refused at once, not queued, and told
	# when to ask again (rstreamctl would wait and ask; here the
	# request is sent by hand to see the answer itself).
	run python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(b"reload\n")
print(s.makefile().readline().strip())' "$W/a.ctl"
	assert_output "error: reload refused: the previous one is still under way; try again in 1.0 s"
	run pgrep -c -f -- "--read-conf"
	assert_output 1
	kill -0 "$reader"
	kill -CONT "$reader"
	# (Usually "unknown setting 'junk'"; in a slow guest, maybe the
	# reader's deadline.)
	wait_log a "reload failed, still running the previous configuration" 120
	run pgrep -f -- "--read-conf"
	assert_failure
	# The next one applies.
	cp "$W/good.conf" "$W/a.conf"
	run "$CTL" -s "$W/a.ctl" reload
	assert_success
	run client "$port" "after it"
	assert_output "after it"
}
