# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# What the benchmarks share, sourced by them inside the runner's guest
# (after they set ${build}, the build directory, ${A}, A's address, and
# ${w}, their scratch directory).
#
#   log TEXT...        to standard error
#   now                seconds since the epoch, with nanoseconds
#   ratio X Y          X / Y to two places; "?" when Y is 0
#   bootmode           the guest kernel's idle and preemption, as a
#                      table's title says them (doc/benchmarks.md: ratios
#                      to idle rows depend on them); empty when native
#   wait_port PORT     until something listens on TCP port PORT (10 s)
#   cpuns PID          nanoseconds PID's threads ran (schedstat: exact,
#                      where /proc/PID/stat's utime and stime come in
#                      ticks of 10 ms, a few per idle row)
#   sched PID          nanoseconds PID's threads waited runnable for a
#                      CPU, and the times they were put on one (schedstat)
#   runq               the same summed over the guest's CPUs, every task
#                      (/proc/schedstat)
#   cpu                the guest's total and idle jiffies (/proc/stat)
#   settle             until the guest's CPUs were 90% idle over half a
#                      second (at most 20 s), so that a row starts idle;
#                      if they never were, it lists the tasks that ran most
#   server_wait FILE   until the server writing FILE says it is waiting
#   vrelay_start NAME LPORT RDMA-PORT TARGET-PORT [OPTIONS]  the raw verbs
#                      relay pair (see below)
#   relay_start LPORT MID-PORT TARGET-PORT [SOCAT-OPTIONS]  the socat relay
#                      pair (see below)
#   p50p99             of rr's or verbs_rr's report on standard input,
#                      "p50 p99" in us; "- -" when it has none
#   $awk_med           an awk function for awk programs to start with:
#                      med(a, k, m), the median of a[k, 1..m] (for an
#                      even m the mean of the middle two)
#   $awk_q             another: q(a, m, f), the f-quantile of a[1..m]
#                      (0.5: the median, the lower middle for an even m;
#                      0.25 and 0.75: the quartiles)
#   wait_up LOG [N [SECS]]
#                      until the daemon logging to LOG has said "is up"
#                      N times (1: a link; at most SECS, 30), else says
#                      so, prints every log in $w and fails
#   bulk_start PORT DIR N [CAP]
#                      N bulk streams (tests/bench/rr -b DIR: up or down)
#                      through 127.0.0.1:PORT, together at most CAP MiB/s
#                      (each its share), their reports in $w/bulk.I;
#                      returns once every one has started, their pids in
#                      the array bpids
#   bulk_mark          the bulk streams note what they moved so far;
#                      sets bulk_tm to the time it asked them
#   bulk_wait SECS     until SECS after the mark
#   bulk_stop          stops them and waits for them; sets bulk_early to
#                      "*" if one ended before, else empty, and bulk_t1
#                      to the time it asked them (so bulk_bytes over
#                      bulk_t1 - bulk_tm is their rate, with no time
#                      counted that a command between took)
#   bulk_bytes         what they moved since the mark, in bytes
#   identities NAME... a node identity for each NAME, $w/NAME.id (its
#                      public key in $w/NAME.pub), and $w/peers, which
#                      names each node-NAME
#   ident NAME         the settings for a daemon of identity NAME that
#                      knows $w/peers: its links seal (encrypt's default)
#   verbs_rtt PORT OUT N [-e]
#                      N 64-byte round trips of tests/bench/verbs_rr over
#                      one rdma_cm queue pair, B's device to A's (the
#                      runner routes A's own traffic to A over the veth),
#                      polling, or with -e sleeping on completion events as
#                      the daemons do; prints "p50 p99" in us,
#                      "- -" when it failed; its outputs in OUT.s, OUT.c

log() { echo "$*" >&2; }
now() { date +%s.%N; }
ratio() { awk "BEGIN{if ($2 + 0 == 0) print \"?\"; else printf \"%.2f\", $1 / $2}"; }
bootmode() {
	local a m=
	[ "${RSTREAMD_TEST_MODE:-}" = vm ] || return 0
	for a in $(cat /proc/cmdline); do
		case $a in idle=* | preempt=*) m="$m${m:+ }$a" ;; esac
	done
	echo ", guest kernel ${m:-with the default idle and preemption}"
}
wait_port() {
	for _ in $(seq 100); do
		ss -Hltn "sport = :$1" | grep -q . && return
		sleep 0.1
	done
}
awk_med='function med(a, k, m,   i, j, t, v) {
	for (i = 1; i <= m; i++) v[i] = a[k, i]
	for (i = 2; i <= m; i++)
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}'
awk_q='function q(a, m, f,   i, j, b, x) {
	for (i = 1; i <= m; i++)
		b[i] = a[i]
	for (i = 2; i <= m; i++) {
		x = b[i]
		for (j = i - 1; j >= 1 && b[j] > x; j--)
			b[j + 1] = b[j]
		b[j + 1] = x
	}
	return b[int(f * (m - 1)) + 1]
}'
wait_up() {
	for _ in $(seq $((${3:-30} * 10))); do
		[ "$(grep -c 'is up' "$1")" -ge "${2:-1}" ] && return
		sleep 0.1
	done
	log "the daemon logging to $1 did not bring its links up"
	cat "$w"/*.log >&2
	return 1
}
bulk_start() {
	local i
	rm -f "$w"/bulk.*
	bpids=()
	for i in $(seq "$3"); do
		"$build/tests/bench/rr" -p "$1" -b "$2" ${4:+-r $(($4 * 1024 / $3))} \
		    >"$w/bulk.$i" &
		bpids+=($!)
	done
	for i in $(seq "$3"); do
		for _ in $(seq 600); do
			grep -q started "$w/bulk.$i" && break
			sleep 0.05
		done
	done
}
bulk_mark() {
	bulk_tm=$(now)
	[ "${#bpids[@]}" = 0 ] || kill -USR1 "${bpids[@]}"
}
bulk_wait() {
	sleep "$(awk "BEGIN{d = $1 - ($(now) - $bulk_tm); print (d > 0 ? d : 0)}")"
}
bulk_stop() {
	bulk_early=
	bulk_t1=$(now)
	[ "${#bpids[@]}" != 0 ] || return 0
	kill -TERM "${bpids[@]}" 2>/dev/null || true
	wait "${bpids[@]}" || true
	! grep -q 'ended before' "$w"/bulk.* || bulk_early="*"
}
bulk_bytes() {
	local f e m b=0
	for f in "$w"/bulk.*; do
		[ -e "$f" ] || continue
		e=$(sed -n 's/^rr: bulk [a-z]* \([0-9]*\) bytes.*/\1/p' "$f")
		m=$(sed -n 's/^rr: mark \([0-9]*\)$/\1/p' "$f")
		b=$((b + ${e:-0} - ${m:-0}))
	done
	echo "$b"
}
cpuns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null |
	    awk '{ s += $1 } END { printf "%.0f\n", s }'
}
sched() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null |
	    awk '{ w += $2; n += $3 } END { printf "%.0f %.0f\n", w, n }'
}
runq() {
	awk '/^cpu[0-9]/ { w += $9; n += $10 } END { printf "%.0f %.0f\n", w, n }' \
	    /proc/schedstat 2>/dev/null
}
cpu() { awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i;
	print t, $5 + $6 }' /proc/stat; }
# Soft-RoCE's workers go on for a while after ib_write_bw or bulk ends,
# and an upload's bytes still on their way go on to the target after its
# client is gone: without settle, the next row runs beside its leftovers.
settle() {
	local c0 c1
	for _ in $(seq 40); do
		c0=$(cpu)
		sleep 0.5
		c1=$(cpu)
		awk -v a="$c0" -v b="$c1" 'BEGIN { split(a, x, " "); split(b, y, " ")
			t = y[1] - x[1]; exit !(t > 0 && (y[2] - x[2]) / t >= 0.9) }' && return
	done
	log "the guest stayed busy for 20 s before a row; the tasks that ran most:"
	ps -eo pid,stat,time,comm --sort=-time 2>/dev/null | head -n 6 >&2
}
server_wait() {
	for _ in $(seq 100); do
		grep -qi "waiting" "$1" && return
		sleep 0.1
	done
}
p50p99() {
	sed -n 's/.*median \([0-9.]*\) us, p99 \([0-9.]*\) us.*/\1 \2/p' |
	    grep . || echo "- -"
}
# relay_start LPORT MID-PORT TARGET-PORT [SOCAT-OPTIONS]: the relay pair,
# as two daemons carry a tunnel: socat on 127.0.0.1:LPORT forwards across
# the veth to socat on B's address (MID-PORT), which forwards to
# 127.0.0.1:TARGET-PORT; both with SOCAT-OPTIONS, their pids added to pids,
# what they say in $w/relay.err (a download's end makes each fork say
# "Broken pipe", which cluttered every table).
relay_start() {
	socat ${4:-} TCP-LISTEN:"$2",bind="$B",reuseaddr,fork \
	    TCP:127.0.0.1:"$3" 3>&- 2>>"$w/relay.err" &
	pids+=($!)
	socat ${4:-} TCP-LISTEN:"$1",bind=127.0.0.1,reuseaddr,fork \
	    TCP:"$B":"$2",bind="$A" 3>&- 2>>"$w/relay.err" &
	pids+=($!)
	wait_port "$1"
}
# vrelay_start NAME LPORT RDMA-PORT TARGET-PORT [OPTIONS]: the raw verbs
# relay pair (tests/bench/verbs_relay), its back on B's address
# (RDMA-PORT) to 127.0.0.1:TARGET-PORT, its front on 127.0.0.1:LPORT,
# with OPTIONS each; their output in $w/NAME-b.s and $w/NAME-a.s, their
# pids added to pids and set in pvb_NAME and pva_NAME.  With vrelay_via,
# each side runs as "$vrelay_via" NAME.b (or NAME.a) COMMAND...
vrelay_start() {
	local bk=() fr=()
	if [ -n "${vrelay_via:-}" ]; then
		bk=("$vrelay_via" "$1.b") fr=("$vrelay_via" "$1.a")
	fi
	"${bk[@]}" "$build/tests/bench/verbs_relay" -l -b "$B" -p "$3" \
	    -t "127.0.0.1:$4" ${5:-} >"$w/$1-b.s" 2>&1 &
	pids+=($!)
	printf -v "pvb_$1" %s $!
	server_wait "$w/$1-b.s"
	"${fr[@]}" "$build/tests/bench/verbs_relay" -a "$2" -H "$B" -p "$3" \
	    ${5:-} >"$w/$1-a.s" 2>&1 &
	pids+=($!)
	printf -v "pva_$1" %s $!
	wait_port "$2"
}
identities() {
	local i
	for i in "$@"; do
		"$build/daemon/rstreamd" --genkey "$w/$i.id" >"$w/$i.pub"
		printf '%s node-%s\n' "$(cat "$w/$i.pub")" "$i"
	done >"$w/peers"
}
ident() { echo "identity_file = \"$w/$1.id\"; peers_file = \"$w/peers\";"; }
verbs_rtt() {
	local vrr=$build/tests/bench/verbs_rr sp
	timeout 60 stdbuf -oL "$vrr" -l -b "$A" -p "$1" ${4:-} >"$2.s" 2>&1 &
	sp=$!
	server_wait "$2.s"
	timeout 60 "$vrr" -H "$A" -p "$1" -s 64 -n "$3" ${4:-} >"$2.c" 2>&1 || true
	wait "$sp" || true
	p50p99 <"$2.c"
}
