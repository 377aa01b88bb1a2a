# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Shared helpers for the end-to-end tests.  They run where two RDMA
# endpoints exist (tests/vm/softroce-run sets RSTREAMD_TEST_ADDR_A/B): a
# client-side daemon "a" links from ADDR_A to a serving daemon "b" on
# ADDR_B.  Every process a test starts is recorded and stopped by PID in
# teardown, never by name.

# rs_load_library NAME: bats_load_library NAME, but where NAME has the
# usual layout (load.bash sourcing src/*.bash, files that only define
# functions), its files are sourced here: load.bash runs dirname(1) once
# a file, which for bats-support and bats-assert took half a second of
# every test in the emulated guest.
rs_load_library() {
	local lib f
	if declare -F find_in_bats_lib_path >/dev/null &&
	    find_in_bats_lib_path lib "$1" && [[ $lib == */load.bash ]] &&
	    [ -d "${lib%/load.bash}/src" ]; then
		for f in "${lib%/load.bash}"/src/*.bash; do
			# shellcheck disable=SC1090 # the library's own files
			source "$f"
		done
	else
		bats_load_library "$1"
	fi
}
rs_load_library bats-support
rs_load_library bats-assert

rs_setup() {
	W=$BATS_TEST_TMPDIR
	RS_PIDS=()
	RS_DAEMONS=()
	: "${RSTREAMD_BIN:?RSTREAMD_BIN must point at the rstreamd binary}"
	: "${RSTREAMD_TEST_ADDR_A:?run under tests/vm/softroce-run}"
	: "${RSTREAMD_TEST_ADDR_B:?run under tests/vm/softroce-run}"
	A=$RSTREAMD_TEST_ADDR_A
	B=$RSTREAMD_TEST_ADDR_B
	CTL=${RSTREAMD_BIN%/*}/rstreamctl
	RS_WRAP=()
	# The python helper for what socat cannot do (tcp-tool.py -h).
	TOOL="python3 $RSTREAMD_SRCDIR/tests/e2e/tcp-tool.py"
	# The raw-verbs peer that misbehaves (see hostile below).
	HOSTILE=${RSTREAMD_BUILDDIR:-}/tests/hostile/hostile
	B_PIDS=()
}

rs_teardown() {
	local pid rc
	# A failing test's daemon that had ended before the teardown: how
	# (one with a key dumps no core, and a signal leaves its log silent),
	# and what the kernel said of a fault.
	[ -n "${BATS_TEST_COMPLETED:-}" ] || {
		for pid in "${RS_DAEMONS[@]}"; do
			! running "$pid" || continue
			rc=0
			wait "$pid" 2>/dev/null || rc=$?
			# 127: the test waited for it itself.
			if ((rc == 127)); then
				continue
			elif ((rc > 128)); then
				echo "# ---- rstreamd $pid had ended: signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null))" >&3
			else
				echo "# ---- rstreamd $pid had ended: exit status $rc" >&3
			fi
		done
		dmesg 2>/dev/null | grep -E 'segfault|general protection|traps:|invalid opcode|Killed process' |
		    tail -5 | sed 's/^/# /' >&3 || true
	}
	reap
	((${#B_PIDS[@]} == 0)) || b_teardown
	# A daemon that crashed (in the runner, cores land in /tmp, see
	# guest-init): its backtrace.
	for pid in "${RS_PIDS[@]}"; do
		[ -f "/tmp/core.rstreamd.$pid" ] || continue
		echo "# ---- rstreamd $pid crashed; backtrace:" >&3
		gdb -q -batch -ex "bt full" "$RSTREAMD_BIN" "/tmp/core.rstreamd.$pid" \
		    2>&1 | head -120 | sed 's/^/# /' >&3 || true
	done
	# A failing test shows what the daemons said: the first warnings
	# (often the cause) and the end; whole logs go to the runner's
	# output directory when there is one.
	if [ -z "${BATS_TEST_COMPLETED:-}" ]; then
		for f in "$W"/*.log; do
			[ -e "$f" ] || continue
			echo "# ---- $f: first warnings" >&3
			grep -m 15 -E "^rstreamd: (warning|error|critical)" "$f" |
			    sed 's/^/# /' >&3
			echo "# ---- $f: last lines" >&3
			# (awk ends every line: a log whose last line has no
			# newline, as notify.log's never does, would run into
			# bats' "not ok" line, which TAP would then not see.)
			awk '{ print "# " $0 }' "$f" | tail -40 >&3
			[ -d "${RSTREAMD_TEST_OUTDIR:-}" ] &&
			    cp "$f" "$RSTREAMD_TEST_OUTDIR/${BATS_TEST_FILENAME##*/}.$BATS_TEST_NUMBER.${f##*/}" ||
			    true
		done
	fi
}

# iwarp: whether the devices under test are iWARP ones (Soft-iWARP in
# the runner, for the *-iwarp.bats files: see tests/run-bats).
iwarp() {
	[[ $(cat "/sys/class/infiniband/$RSTREAMD_TEST_DEV_A/node_type" \
	    2>/dev/null) == *RNIC* ]]
}

# spawn CMD...: run CMD in the background, its PID in $! and in RS_PIDS
# (teardown stops it, and what it started).  CMD may be a function, for a
# pipeline or a list.  Redirections on the call are CMD's: spawn CMD <IN
# >OUT 2>&1 (without one, the test's own: /dev/null in the runner).
spawn() {
	# fd 3 is bats' own output: a child holding it would stall bats.
	# 0<&0: an asynchronous command with no redirection of its standard
	# input gets /dev/null from bash, whatever the call said.
	"$@" 0<&0 3>&- &
	RS_PIDS+=("$!")
}

# spawn_fed FEED... -- CMD...: spawn CMD with what the command FEED (a
# function, say) writes as its standard input: `FEED | CMD &`, CMD's PID
# in $! as there, so that waiting for it or killing it is CMD's, not
# FEED's.  CMD is a program (it is exec'd); while it runs, teardown stops
# FEED with it.
spawn_fed() {
	local n=1
	while ((n <= $#)) && [ "${!n}" != -- ]; do
		n=$((n + 1))
	done
	((n > 1 && n < $#)) || {
		echo "usage: spawn_fed FEED... -- CMD..." >&2
		return 1
	}
	spawn fed "$n" "$@"
}

# fed N FEED... -- CMD...: spawn_fed's child (N: where -- is).
fed() {
	local n=$1
	shift
	exec "${@:n+1}" < <("${@:1:n-1}")
}

# feed_paused FILE BYTES SECONDS: FILE's first BYTES bytes, then after
# SECONDS the rest (a FEED for spawn_fed: a stream that spans something).
feed_paused() {
	head -c "$2" "$1"
	sleep "$3"
	tail -c "+$(($2 + 1))" "$1"
}

# tool_feed WORD SIZE: the line WORD for tcp-tool's server (stall, sink),
# then SIZE zero bytes (as head -c reads it: 16M); a FEED for spawn_fed.
tool_feed() {
	printf '%s\n' "$1"
	head -c "$2" /dev/zero
}

# reap: stop what spawn started: each process of RS_PIDS that is still
# this shell's child (one that ended and was waited for may have left its
# PID to another), and what each started in turn (a function's pipeline;
# a timeout wrapper's command, which sits in a process group of its own,
# out of reach of a signal to the wrapper's), all found before the first
# signal: SIGTERM, up to 5 s for them to end, then SIGKILL.
reap() {
	local pid ppid i all=() left=() q=()
	local -A kids=()
	while read -r pid ppid; do
		kids[$ppid]+=" $pid"
	done < <(ps -e -o pid=,ppid=)
	for pid in "${RS_PIDS[@]}"; do
		if [[ "${kids[$BASHPID]:-} " == *" $pid "* ]]; then
			q+=("$pid")
		fi
	done
	while ((${#q[@]})); do
		all+=("${q[0]}")
		# shellcheck disable=SC2206 # PIDs, split on the blanks
		q+=(${kids[${q[0]}]:-})
		q=("${q[@]:1}")
	done
	((${#all[@]})) || return 0
	kill -TERM "${all[@]}" 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do
		left=()
		for pid in "${all[@]}"; do
			running "$pid" && left+=("$pid")
		done
		((${#left[@]})) || return 0
		sleep 0.1
	done
	# A failing test's daemon that did not stop: where its threads were.
	[ -n "${BATS_TEST_COMPLETED:-}" ] || for pid in "${left[@]}"; do
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = rstreamd ] || continue
		echo "# ---- rstreamd $pid did not stop within 5 s of SIGTERM; its threads:" >&3
		timeout 60 gdb -q -batch -p "$pid" -ex "thread apply all bt" 2>&1 |
		    grep -E '^(Thread|#)' | head -150 | sed 's/^/# /' >&3 || true
	done
	kill -KILL "${left[@]}" 2>/dev/null || true
}

# running PID: PID exists and is no zombie (an orphan's is its new
# parent's to reap).
running() {
	local s
	{ read -r s <"/proc/$1/stat"; } 2>/dev/null || return 1
	s=${s##*) }
	[ "${s%% *}" != Z ]
}

# wait_until SECONDS CMD...: wait until CMD succeeds, polled SECONDS x 10
# times, 0.1 s apart: longer than SECONDS where CMD itself is slow (an
# rstreamctl under emulation), which the message on timing out says.
wait_until() {
	local i t0=$SECONDS
	for ((i = 0; i < $1 * 10; i++)); do
		"${@:2}" && return 0
		sleep 0.1
	done
	echo "timed out after $(($1 * 10)) polls ($((SECONDS - t0)) s) waiting for: ${*:2}" >&2
	return 1
}

# at_least N CMD...: CMD prints a number, N or more.
at_least() {
	local v
	v=$("${@:2}") && [[ $v =~ ^[0-9]+$ ]] && [ "$v" -ge "$1" ]
}

# wait_log NAME PATTERN [SECONDS]: wait until NAME.log matches PATTERN.
wait_log() {
	local name=$1 pat=$2 secs=${3:-20} i
	for ((i = 0; i < secs * 10; i++)); do
		grep -q -- "$pat" "$W/$name.log" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "timed out after ${secs}s waiting for '$pat' in $name.log" >&2
	cat "$W/$name.log" >&2 || true
	return 1
}

# count_log NAME PATTERN: how many lines of NAME.log match.
count_log() {
	grep -c -- "$2" "$W/$1.log" || true
}

# wait_log_more NAME PATTERN N [SECONDS]: wait until more than N lines of
# NAME.log match (N from count_log before the event).
wait_log_more() {
	wait_until "${4:-20}" at_least $(($3 + 1)) count_log "$1" "$2"
}

# ident NAME: a fresh identity at $W/NAME.id; its public key in $W/NAME.pub.
ident() {
	"$RSTREAMD_BIN" --genkey "$W/$1.id" >"$W/$1.pub"
}

# hostile CASE ARGS...: run the hostile peer (tests/hostile/hostile.c)
# from A against b's listener.
hostile() {
	run timeout 120 "$HOSTILE" "$A" "$B" 7471 "$@"
}

# stops_clean: daemon b exits 0 on SIGTERM, and a sanitizer build said
# nothing in its log.
stops_clean() {
	kill -TERM "$PID_b"
	rc=0
	wait "$PID_b" || rc=$?
	[ "$rc" = 0 ]
	run grep -E "AddressSanitizer|LeakSanitizer|runtime error" "$W/b.log"
	assert_failure
}

# spawn_daemon NAME [VAR=VALUE...]: start rstreamd with $W/NAME.conf (and
# those variables in its environment), its stdout and stderr in
# $W/NAME.log, its PID in $PID_NAME; do not wait.  With RS_WRAP set (a
# command and its arguments, as an array), the daemon runs under it, e.g.
# RS_WRAP=(private_etc hosts) (see private_etc); the wrapper must exec it,
# so that $PID_NAME is the daemon's.
spawn_daemon() {
	local name=$1
	spawn "${RS_WRAP[@]}" env "${@:2}" "$RSTREAMD_BIN" -f -v -c "$W/$name.conf" \
	    </dev/null >"$W/$name.log" 2>&1
	eval "PID_$name=$!"
	RS_DAEMONS+=("$!")
}

# start_daemon NAME [VAR=VALUE...]: spawn_daemon, then wait until the
# daemon is ready.
start_daemon() {
	spawn_daemon "$@"
	wait_log "$1" "ready:" 20
}

# link_up NAME TUNNEL [SECONDS]: wait until the (active) tunnel's link to
# its peer is up, as rstreamctl says.
link_up() {
	wait_ctl "$1" tunnels ".[] | select(.tunnel == \"$2\" and
	    .state == \"active\") | .link" up "${3:-30}"
}

# link_ups NAME TUNNEL: how many times the tunnel's link has come up.
link_ups() {
	grep -c -- "tunnel $2: link to .* is up" "$W/$1.log" || true
}

# link_up_after NAME TUNNEL N [SECONDS]: wait until the tunnel's link has
# come up more than N times (N from link_ups before the peer restarted).
# Clients that arrive while the link is still in back-off are closed, so
# tests wait for this before sending.
link_up_after() {
	wait_until "${4:-30}" at_least $(($3 + 1)) link_ups "$1" "$2"
}

# accept_port NAME TUNNEL: the TCP port the daemon has bound for the
# (active) TUNNEL, as rstreamctl says.
accept_port() {
	ctl_json "$1" tunnels ".[] | select(.tunnel == \"$2\" and
	    .state == \"active\") | .address" | sed -n 's/^tcp:.*:\([0-9]*\)$/\1/p'
}

# free_port: a TCP port no socket uses (checked, not guessed): not only
# no listener, but no connection either, since a socket still closing on
# it (FIN_WAIT2, say, tens of thousands of them after 28-scale's first
# test) keeps a listener from binding it even with SO_REUSEADDR.
free_port() {
	local p
	for p in $(shuf -i 20000-60000 -n 100); do
		if ! ss -Htan "sport = :$p" | grep -q .; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# listening PORT: something listens on TCP port PORT.
listening() {
	ss -Htln "sport = :$1" | grep -q .
}

# wait_port PORT: wait until something listens on 127.0.0.1:PORT.
wait_port() {
	wait_until 10 listening "$1"
}

# wait_sock PATH [SECONDS]: wait until the Unix socket file PATH exists.
wait_sock() {
	wait_until "${2:-5}" test -S "$1"
}

# wait_pid PID [SECONDS]: wait for a background process to end.
wait_pid() {
	local i
	for ((i = 0; i < ${2:-60} * 10; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	echo "process $1 still running after ${2:-60}s" >&2
	return 1
}

# fd_count PID: open descriptors of PID.
fd_count() {
	ls /proc/"$1"/fd | wc -l
}

# rss_kib PID: resident memory of PID in KiB.
rss_kib() {
	sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB$/\1/p' "/proc/$1/status"
}

# conf_a TUNNELS / conf_b TUNNELS: write the two daemons' configs; TUNNELS
# is the body of the tunnels list.
conf_a() {
	cat >"$W/a.conf" <<EOC
source = "$A";
control = "$W/a.ctl";
tunnels = ( $1 );
EOC
}
conf_b() {
	cat >"$W/b.conf" <<EOC
listen = "$B:7471";
control = "$W/b.ctl";
tunnels = ( $1 );
EOC
}

# client PORT|unix:PATH INPUT [SECONDS]: send INPUT through socat, print
# the reply; socat's own complaints (a reset, say) go to the bin.
client() {
	local to=TCP:127.0.0.1:$1
	case $1 in unix:*) to=UNIX-CONNECT:${1#unix:} ;; esac
	timeout "${3:-30}" socat -t 20 - "$to" <<<"$2" 2>/dev/null
}

# echo_target: start an echo server on a free port; sets $tp.
echo_target() {
	tp=$(free_port)
	spawn socat -t 600 TCP-LISTEN:"$tp",bind=127.0.0.1,reuseaddr,fork EXEC:cat
	wait_port "$tp"
}

# echo_tunnel NAME: an echo target behind daemon b, reached through tunnel
# NAME of daemon a; the configs are written, the daemons not started.
echo_tunnel() {
	echo_target
	conf_b "{ name = \"$1\"; target = \"tcp://127.0.0.1:$tp\"; }"
	conf_a "{ name = \"$1\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
}

# tool_tunnel NAME: tcp-tool's server (tcp-tool.py -h) as the target of
# tunnel NAME, recording to $W/record.log; $tp is its port.  The configs
# are written, the daemons not started.
tool_tunnel() {
	tp=$(free_port)
	spawn $TOOL server "$tp" "$W/record.log"
	wait_port "$tp"
	conf_b "{ name = \"$1\"; target = \"tcp://127.0.0.1:$tp\"; }"
	conf_a "{ name = \"$1\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
}

# start_pair TUNNEL: start b then a, and wait for a's link for TUNNEL.
start_pair() {
	start_daemon b
	start_daemon a
	link_up a "$1"
}

# notify_socket: a socket standing in for systemd's notify socket at
# $W/notify.sock; what arrives is appended to $W/notify.log.
notify_socket() {
	spawn socat -u UNIX-RECV:"$W/notify.sock" OPEN:"$W/notify.log",creat,append
	wait_sock "$W/notify.sock"
}

# hold_stream PORT: a client that keeps a stream open (sending nothing)
# for up to ten minutes (a test under load can take well over one);
# its PID is $cp, and teardown ends it.
hold_stream() {
	spawn timeout 600 socat EXEC:"sleep 1000" TCP:127.0.0.1:"$1" \
	    </dev/null >/dev/null 2>&1
	cp=$!
}

sha() {
	sha256sum "$1" | cut -d' ' -f1
}

# paced_stream PORT NAME [MIB]: a client that sends half of $W/NAME.in (MIB
# MiB, default 2, made here) through 127.0.0.1:PORT, then waits until
# $W/NAME.go exists, sends the rest and shuts down writing; what comes back
# goes to $W/NAME.out.  Its PID is $sp.  The stream stays open until go.
paced_stream() {
	local mib=${3:-2}
	head -c "${mib}M" /dev/urandom >"$W/$2.in"
	spawn paced_client "$1" "$2" "$mib"
	sp=$!
}

# paced_client PORT NAME MIB: paced_stream's client and its feeder (spawn
# keeps fd 3, bats' own, from both: a failed test would wait for ever on
# a feeder still waiting for its go).
paced_client() {
	local i
	( head -c "$(($3 * 512))K" "$W/$2.in"
	    for ((i = 0; i < 3000; i++)); do
		[ -e "$W/$2.go" ] && break
		sleep 0.1
	    done
	    tail -c "+$(($3 * 524288 + 1))" "$W/$2.in" ) |
	    timeout 300 socat -t 60 - TCP:127.0.0.1:"$1" >"$W/$2.out" \
	    2>"$W/$2.err"
}

# ctl_json NAME COMMAND FILTER: jq FILTER over daemon NAME's answer to
# COMMAND, as JSON.
ctl_json() {
	"$CTL" -j -s "$W/$1.ctl" "$2" | jq -r "$3"
}

# open_streams [NAME]: streams daemon NAME has open, as its status says;
# without NAME, the installed rstreamd's (on its default control socket,
# as the installed rstreamctl finds it: the systemd guest's).
open_streams() {
	if [ $# -eq 0 ]; then
		rstreamctl -j status | jq -r .streams
	else
		ctl_json "$1" status .streams
	fi
}

# metric NAME DAEMON: the value of DAEMON's unlabelled metric NAME.
metric() {
	"$CTL" -s "$W/$2.ctl" metrics | sed -n "s/^$1 \([0-9]*\)$/\1/p"
}

# resizes DAEMON KIND: DAEMON's ring resizes of KIND (grow, shrink,
# refused) over its links.
resizes() {
	"$CTL" -s "$W/$1.ctl" metrics |
	    sed -n "s/^rstreamd_link_ring_resizes_total{.*,kind=\"$2\"} \([0-9]*\)$/\1/p" |
	    awk '{ n += $1 } END { print n + 0 }'
}

# tunnel_metric NAME DAEMON TUNNEL: the value of DAEMON's metric NAME for
# TUNNEL (its only label).
tunnel_metric() {
	"$CTL" -s "$W/$2.ctl" metrics |
	    sed -n "s/^$1{tunnel=\"$3\"} \([0-9]*\)$/\1/p"
}

# wait_ctl NAME COMMAND FILTER VALUE [SECONDS]: wait until ctl_json gives
# VALUE.
wait_ctl() {
	local i v
	for ((i = 0; i < ${5:-20} * 10; i++)); do
		v=$(ctl_json "$1" "$2" "$3" 2>/dev/null) && [ "$v" = "$4" ] &&
		    return 0
		sleep 0.1
	done
	echo "timed out waiting for '$3' of $1 $2 to be '$4' (last: '$v')" >&2
	return 1
}

# private_etc FILE... -- COMMAND...: run COMMAND in a mount namespace of
# its own where each $W/etc/FILE is bind-mounted over /etc/FILE: name
# resolution under test, the host's /etc untouched.  It execs all the way,
# so COMMAND keeps the PID the caller got (start_daemon's RS_WRAP).
private_etc() {
	local files=()
	while [ "$1" != -- ]; do
		files+=("$1")
		shift
	done
	shift
	exec unshare -m sh -c 'w=$1; shift
	while [ "$1" != -- ]; do
		mount --bind "$w/etc/$1" "/etc/$1" || exit 99
		shift
	done
	shift
	exec "$@"' sh "$W" "${files[@]}" -- "$@"
}

# ---- Two hosts: tests/e2e/*-2host.bats run in the runner's two-guest
# mode (SOFTROCE_GUESTS=2, chosen by tests/run-bats), where daemon "b"
# runs on host B, reached through its agent (see tests/vm/softroce-run).
# Host B sees the same files as A, but its own /tmp: $W exists there too,
# empty at first.

# rs_setup_2host: after rs_setup; skips where there is one host (natively:
# the runner cannot bring a second one), else prepares $W on B and sets
# A6 and B6 to the two hosts' IPv6 addresses.
rs_setup_2host() {
	[ "${RSTREAMD_TEST_HOSTS:-1}" = 2 ] ||
	    skip "needs two hosts: the runner's two-guest VM mode (SOFTROCE_GUESTS=2, SOFTROCE_FORCE_VM=1 where the host has RDMA)"
	A6=$RSTREAMD_TEST_ADDR6_A
	B6=$RSTREAMD_TEST_ADDR6_B
	on_b "mkdir -p $(q "$W")"
}

# q ARGS...: ARGS quoted as bash source (separated by spaces), for on_b's
# scripts.
q() {
	local s
	printf -v s '%q ' "$@"
	printf '%s' "${s% }"
}

# on_b SCRIPT: run SCRIPT (bash source) on host B, in the test command's
# environment and directory; print its stdout and stderr, return its
# status (99 when B's agent gives no answer).  Each call costs a
# connection and a bash: loops that wait belong inside SCRIPT.
on_b() {
	local out status
	out=$(printf '%s\n' "$1" |
	    timeout 300 socat -t 300 - TCP:"$RSTREAMD_TEST_AGENT_B" 2>&1) || true
	status=${out%%$'\n'*}
	if ! [[ $status =~ ^[0-9]+$ ]]; then
		echo "on_b: no answer from host B's agent at $RSTREAMD_TEST_AGENT_B: $out" >&2
		return 99
	fi
	[[ $out == *$'\n'* ]] && printf '%s\n' "${out#*$'\n'}"
	return "$status"
}

# b_spawn NAME CMD...: run CMD on host B in the background, its output in
# B's $W/NAME.log; its PID there is $bpid, stopped in teardown.
b_spawn() {
	local name=$1
	shift
	bpid=$(on_b "setsid $(q "$@") </dev/null >$(q "$W/$name.log") 2>&1 & echo \$!") ||
	    return 1
	B_PIDS+=("$bpid")
}

# b_write PATH: stdin into the file PATH on host B.
b_write() {
	on_b "base64 -d >$(q "$1") <<'EOF'
$(base64)
EOF"
}

# b_wait_log NAME PATTERN [SECONDS]: wait_log on host B.
b_wait_log() {
	on_b "for ((i = 0; i < ${3:-20} * 10; i++)); do
		grep -q -- $(q "$2") $(q "$W/$1.log") 2>/dev/null && exit 0
		sleep 0.1
	done
	echo 'timed out after ${3:-20}s waiting for '$(q "$2")' in B:$1.log'
	cat $(q "$W/$1.log")
	exit 1"
}

# b_wait_port PORT: wait until something listens on PORT on host B.
b_wait_port() {
	on_b "for ((i = 0; i < 100; i++)); do
		ss -Htln 'sport = :$1' | grep -q . && exit 0
		sleep 0.1
	done
	exit 1"
}

# b_wait_sock PATH: wait until the Unix socket file PATH exists on host B.
b_wait_sock() {
	on_b "for ((i = 0; i < 50; i++)); do
		[ -S $(q "$1") ] && exit 0
		sleep 0.1
	done
	echo 'timed out after 5 s waiting for the socket '$(q "$1")' on B'
	exit 1"
}

# b_start_daemon NAME: start_daemon on host B, with B's $W/NAME.conf.
b_start_daemon() {
	b_spawn "$1" "$RSTREAMD_BIN" -f -v -c "$W/$1.conf" || return 1
	b_wait_log "$1" "ready:" 20
}

# b_ctl_json NAME COMMAND FILTER: ctl_json for a daemon on host B.
b_ctl_json() {
	on_b "$(q "$CTL") -j -s $(q "$W/$1.ctl") $(q "$2")" | jq -r "$3"
}

# b_teardown: rs_teardown's part on host B: its processes stopped, a
# crashed daemon's backtrace, and a failed test's logs.
b_teardown() {
	local failed=0
	[ -n "${BATS_TEST_COMPLETED:-}" ] || failed=1
	on_b "pids=($(q "${B_PIDS[@]}"))
	kill -TERM \"\${pids[@]}\" 2>/dev/null
	for pid in \"\${pids[@]}\"; do
		for ((i = 0; i < 50; i++)); do
			kill -0 \"\$pid\" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL \"\$pid\" 2>/dev/null
		[ -f /tmp/core.rstreamd.\$pid ] || continue
		echo \"---- rstreamd \$pid on host B crashed; backtrace:\"
		gdb -q -batch -ex 'bt full' $(q "$RSTREAMD_BIN") /tmp/core.rstreamd.\$pid 2>&1 | head -120
	done
	[ $failed = 1 ] || exit 0
	for f in $(q "$W")/*.log; do
		[ -e \"\$f\" ] || continue
		echo \"---- host B: \$f: first warnings\"
		grep -m 15 -E '^rstreamd: (warning|error|critical)' \"\$f\"
		echo \"---- host B: \$f: last lines\"
		tail -40 \"\$f\"
		[ -d \"\${RSTREAMD_TEST_OUTDIR:-}\" ] &&
		    cp \"\$f\" \"\$RSTREAMD_TEST_OUTDIR/\"$(q "${BATS_TEST_FILENAME##*/}.$BATS_TEST_NUMBER.b-")\"\${f##*/}\"
	done
	exit 0" 2>&1 | sed 's/^/# /' >&3 || true
	B_PIDS=()
}

# ---- the runner's systemd guest (*-systemd.bats) ----

# in_systemd_guest: systemd is PID 1 in the runner's guest.
in_systemd_guest() {
	[ "$(ps -p 1 -o comm=)" = systemd ] && [ "${RSTREAMD_TEST_MODE:-}" = vm ]
}

# sd_install: make install into the guest's root (an overlay there), which
# as root also makes the user rstreamd (systemd-sysusers).
sd_install() {
	make -s -C "$RSTREAMD_BUILDDIR" install >"$BATS_FILE_TMPDIR/install.log" 2>&1 ||
	    { cat "$BATS_FILE_TMPDIR/install.log"; return 1; }
	getent passwd rstreamd >/dev/null
}

# sd_pair ACCEPT_PORT: an echo target ($tp), /etc/rstreamd.conf for the
# client side (tunnel pg accepting on 127.0.0.1:ACCEPT_PORT) and
# /etc/rstreamd/b.conf for the instance rstreamd@b serving pg, as README's
# "As a service" writes them.  Skips the test outside the systemd guest.
sd_pair() {
	in_systemd_guest ||
	    skip "needs the runner's systemd guest (SOFTROCE_SYSTEMD=1)"
	tp=$(free_port)
	spawn socat -t 600 TCP-LISTEN:"$tp",bind=127.0.0.1,reuseaddr,fork EXEC:cat
	wait_port "$tp"
	cat >/etc/rstreamd.conf <<-EOF
		source = "$A";
		tunnels = ( { name = "pg"; accept = "tcp://127.0.0.1:$1";
		    peer = "$B:7471"; } );
	EOF
	install -d -m 0700 -o rstreamd -g rstreamd /etc/rstreamd
	cat >/etc/rstreamd/b.conf <<-EOF
		listen = "$B:7471";
		control = "/run/rstreamd-b/control.sock";
		tunnels = ( { name = "pg"; target = "tcp://127.0.0.1:$tp"; } );
	EOF
}

# sd_prop UNIT PROPERTY: the unit's property as systemctl shows it.
sd_prop() {
	systemctl show -P "$2" "$1"
}

# sd_state_is UNIT STATE: the unit's ActiveState is STATE.
sd_state_is() {
	[ "$(sd_prop "$1" ActiveState)" = "$2" ]
}

# sd_status UNIT FIELD: FIELD (Uid, CapEff, ...) of /proc/PID/status of
# UNIT's main process, blanks squeezed.
sd_status() {
	sed -n "s/^$2:[[:space:]]*//p" "/proc/$(sd_prop "$1" MainPID)/status" |
	    tr -s '[:space:]' ' ' | sed 's/ $//'
}

# sd_unprivileged UNIT: UNIT's main process runs as the user and group
# rstreamd, real, effective, saved and file system ids alike, with no
# capability in any set.
sd_unprivileged() {
	local u g
	u=$(id -u rstreamd)
	g=$(id -g rstreamd)
	[ "$(sd_status "$1" Uid)" = "$u $u $u $u" ]
	[ "$(sd_status "$1" Gid)" = "$g $g $g $g" ]
	[ "$(ps -o user= -p "$(sd_prop "$1" MainPID)")" = rstreamd ]
	[ "$(sd_status "$1" CapInh)" = 0000000000000000 ]
	[ "$(sd_status "$1" CapPrm)" = 0000000000000000 ]
	[ "$(sd_status "$1" CapEff)" = 0000000000000000 ]
	[ "$(sd_status "$1" CapBnd)" = 0000000000000000 ]
	[ "$(sd_status "$1" CapAmb)" = 0000000000000000 ]
}

# sd_link_up: the installed rstreamd's (the client side's) link is up, as
# its STATUS= says (not link_up: no control socket is asked).
sd_link_up() {
	[[ "$(sd_prop rstreamd StatusText)" == *"1 of 1 link up"* ]]
}

# ---- RDMA that comes later (*-no-rdma*.bats: the runner's SOFTROCE_RDMA=later) ----

# rdma_later: skip the test unless the runner's guest left RDMA out.
rdma_later() {
	[ "${RSTREAMD_TEST_RDMA:-}" = later ] ||
	    skip "needs a host without RDMA yet: the runner's guest with SOFTROCE_RDMA=later (here RDMA devices exist already${RSTREAMD_TEST_MODE:+, $RSTREAMD_TEST_MODE mode})"
}

# no_rdma: no RDMA module is loaded and no RDMA device exists.
no_rdma() {
	[ ! -e /sys/module/rdma_ucm ] && [ ! -e /sys/module/ib_uverbs ] &&
	    [ ! -e /sys/module/rdma_rxe ] && [ ! -e /dev/infiniband ] &&
	    ! compgen -G '/sys/class/infiniband/*' >/dev/null
}

# netdev_of ADDR: the network interface that has IPv4 address ADDR.
netdev_of() {
	ip -o -4 addr show to "$1/32" | awk '{ print $2; exit }'
}

# rdma_up: what the guest left out, with its own steps (guest-init
# rdma-up): the RDMA modules, and a Soft-RoCE device on the interfaces of
# A and B; returns once both ports are ACTIVE.
rdma_up() {
	sh "$RSTREAMD_SRCDIR/tests/vm/guest-init" rdma-up "$(netdev_of "$A")" \
	    "$(netdev_of "$B")" "$RSTREAMD_TEST_DEV_A" "$RSTREAMD_TEST_DEV_B"
}

# rdma_down: no RDMA again: the devices go, then the modules (guest-init
# rdma-down); no process may still hold them.
rdma_down() {
	sh "$RSTREAMD_SRCDIR/tests/vm/guest-init" rdma-down \
	    "$RSTREAMD_TEST_DEV_A" "$RSTREAMD_TEST_DEV_B"
}
