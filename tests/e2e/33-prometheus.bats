#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The metrics Prometheus scrapes (metrics_listen): the daemon's uptime and
# start time right after it started; the HTTP endpoint as clients meet it
# (methods, paths, versions, limits, slow and silent clients) and scrapes
# that stop no worker; link series whose labels outlive a reconnect,
# refusals by reason; and a real Prometheus server (Debian's) scraping
# both daemons: the series there with their labels, and the shipped
# link-down alert firing once the serving daemon stops and clearing once
# it is back.

load helpers

setup() {
	rs_setup
}

teardown() {
	rs_teardown
}

# with_metrics NAME PORT: NAME's config gets metrics_listen 127.0.0.1:PORT.
with_metrics() {
	sed -i "1i metrics_listen = \"127.0.0.1:$2\";" "$W/$1.conf"
}

# scrape PORT [CURL ARGS...]: GET /metrics on 127.0.0.1:PORT.
scrape() {
	curl -sS --max-time 20 "${@:2}" "http://127.0.0.1:$1/metrics"
}

# value PORT SERIES: the value of SERIES (name and labels, as written) in
# a scrape of PORT.
value() {
	scrape "$1" | awk -v s="$2" 'substr($0, 1, length(s) + 1) == s " " {
	    print $2 }'
}

# raw PORT TEXT: send TEXT (printf escapes) to 127.0.0.1:PORT, print the
# answer's status line (or "closed" when the server closes saying
# nothing).
raw() {
	python3 - "$1" "$2" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
print(data.split(b"\r\n")[0].decode() if data else "closed")
EOF
}

@test "metrics: uptime and start time are the daemon's, right after it started; the process's figures" {
	echo_tunnel echo
	ma=$(free_port)
	with_metrics a "$ma"
	start_daemon b
	t0=$(date +%s)
	start_daemon a
	wait_port "$ma"
	up=$(ctl_json a status .uptime_s)
	now=$(date +%s)
	echo "# uptime ${up} s, started ${t0}, now ${now}" >&3
	[ "$up" -le $((now - t0)) ]
	run scrape "$ma"
	assert_success
	now=$(date +%s)
	up=$(echo "$output" | sed -n 's/^rstreamd_uptime_seconds \([0-9]*\)$/\1/p')
	[ "$up" -le $((now - t0)) ]
	st=$(echo "$output" | sed -n 's/^process_start_time_seconds \([0-9]*\)\.[0-9]\{3\}$/\1/p')
	[ "$st" -ge "$t0" ]
	[ "$st" -le "$now" ]
	assert_line --regexp '^process_cpu_seconds_total [0-9]+\.[0-9]{3}$'
	assert_line --regexp '^process_resident_memory_bytes [1-9][0-9]+$'
	assert_line --regexp '^process_virtual_memory_bytes [1-9][0-9]+$'
	assert_line --regexp '^process_open_fds [1-9][0-9]*$'
	soft=$(awk '/^Max open files/ { print $4 }' "/proc/$PID_a/limits")
	assert_line "process_max_fds $soft"
	assert_line "# TYPE process_start_time_seconds gauge"
	assert_line "# TYPE process_cpu_seconds_total counter"
	# The reload gauges say the start's load worked; no reload revoked
	# anything yet, which a scrape says from the start.
	assert_line "rstreamd_config_last_reload_successful 1"
	assert_line "rstreamd_links_revoked_total 0"
	assert_line "rstreamd_forged_messages_total 0"
	assert_line "# TYPE rstreamd_streams_revoked_total counter"
	assert_line "rstreamd_streams_revoked_total 0"
	assert_line "rstreamd_config_last_reload_success_timestamp_seconds $(echo "$output" |
	    sed -n 's/^process_start_time_seconds //p')"
}

@test "metrics: the endpoint speaks HTTP/1.0 and 1.1, refuses the rest, bounds clients; scrapes stop no worker" {
	echo_tunnel echo
	ma=$(free_port)
	with_metrics a "$ma"
	start_pair echo
	wait_port "$ma"

	run curl -sS --max-time 20 -o "$W/body" -D "$W/head" \
	    -w '%{http_code} %{content_type}\n' "http://127.0.0.1:$ma/metrics"
	assert_output "200 text/plain; version=0.0.4; charset=utf-8"
	grep -qix 'connection: close.' "$W/head"
	grep -q '^rstreamd_link_up{tunnel="echo",' "$W/body"
	[ "$(sed -n 's/^Content-Length: \([0-9]*\).$/\1/ip' "$W/head")" = "$(wc -c <"$W/body")" ]
	# What Prometheus' own linter says of the text: nothing, but that
	# rstreamd_rdma_port_counter has "counter" in its name (it names what
	# it carries: the adapter's counters, whatever their driver makes
	# them; it keeps the name it had).
	run bash -c "promtool check metrics <'$W/body' 2>&1 |
	    grep -vx \"rstreamd_rdma_port_counter metric name should not include type 'counter'\""
	assert_output ""
	run curl -sS --max-time 20 --http1.0 -o /dev/null -w '%{http_code}' \
	    "http://127.0.0.1:$ma/metrics?x=1"
	assert_output 200
	run curl -sS --max-time 20 -I -o /dev/null -w '%{http_code} %{size_download}' \
	    "http://127.0.0.1:$ma/metrics"
	assert_output "200 0"
	run curl -sS --max-time 20 -o /dev/null -w '%{http_code}' \
	    "http://127.0.0.1:$ma/"
	assert_output 404
	run curl -sS --max-time 20 -D - -o /dev/null -X POST \
	    "http://127.0.0.1:$ma/metrics"
	assert_line --regexp '^HTTP/1.1 405 Method Not Allowed'
	assert_line --regexp '^Allow: GET, HEAD'
	run raw "$ma" 'nonsense\r\n\r\n'
	assert_output "HTTP/1.1 400 Bad Request"
	run raw "$ma" 'GET /metrics HTTP/2.0\r\n\r\n'
	assert_output "HTTP/1.1 505 HTTP Version Not Supported"
	run raw "$ma" "GET /metrics HTTP/1.1\\r\\nX: $(head -c 9000 /dev/zero | tr '\0' a)\\r\\n\\r\\n"
	assert_output "HTTP/1.1 431 Request Header Fields Too Large"
	# A client that says nothing is closed (SCRAPE_REQ_MS, 5 s).
	run raw "$ma" 'GET /metrics HTTP/1.1\r\n'
	assert_output "closed"
	# More silent clients than there are slots (8) keep no scrape out:
	# the oldest of them makes room.
	spawn python3 -c 'import socket, sys, time
ss = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for i in range(20)]
time.sleep(60)' "$ma"
	wait_until 10 bash -c "[ \$(ss -Htn state established 'dport = :$ma' | wc -l) -ge 8 ]"
	run scrape "$ma" -o /dev/null -w '%{http_code}'
	assert_output 200

	# Scrapes, by HTTP and by rstreamctl, take no exclusive turn (the
	# daemon has two workers: the guest's CPUs): 10 of each take fewer
	# than 10 (what turns there are come from the idle link's own work,
	# none in the runs so far).
	[ "$(ctl_json a status .workers)" -ge 2 ]
	e0=$(value "$ma" rstreamd_exclusive_turns_total)
	python3 -c 'import socket, sys
for i in range(10):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    assert data.startswith(b"HTTP/1.1 200 OK\r\n"), data[:80]
    s.close()' "$ma"
	for i in $(seq 10); do
		"$CTL" -s "$W/a.ctl" metrics >/dev/null
	done
	e1=$(value "$ma" rstreamd_exclusive_turns_total)
	echo "# 20 scrapes: $((e1 - e0)) exclusive turns" >&3
	[ $((e1 - e0)) -lt 10 ]
}

# value_is PORT SERIES VALUE: value PORT SERIES says VALUE.
value_is() {
	[ "$(value "$1" "$2")" = "$3" ]
}

# has_rtt PORT: a link's round trip is in a scrape of PORT.
has_rtt() {
	scrape "$1" | grep -q '^rstreamd_link_rtt_seconds{'
}

# series PORT: the link series of a scrape of PORT (names and labels, the
# info metrics' aside), sorted.
series() {
	scrape "$1" | grep '^rstreamd_link' | grep -v '_info{' |
	    sed 's/ [^ ]*$//' | sort
}

# same_series PORT FILE: series PORT says what FILE does.
same_series() {
	[ "$(series "$1")" = "$(cat "$2")" ]
}

@test "metrics: link series keep their labels across a reconnect; refusals by reason; failures, reconnects, RTT" {
	echo_tunnel echo
	# Tunnel gone's target has nobody listening: its streams are refused.
	gone=$(free_port)
	sed -i "s|^tunnels = ( \(.*\) );|tunnels = ( \1, { name = \"gone\"; target = \"tcp://127.0.0.1:$gone\"; } );|" "$W/b.conf"
	sed -i "s|^tunnels = ( \(.*\) );|tunnels = ( \1, { name = \"gone\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; } );|" "$W/a.conf"
	grep -q '"gone"; target' "$W/b.conf"
	grep -q '"gone"; accept' "$W/a.conf"
	ma=$(free_port)
	mb=$(free_port)
	with_metrics a "$ma"
	with_metrics b "$mb"
	start_pair echo
	wait_port "$mb"
	up_a="rstreamd_link_up{tunnel=\"echo\",peer=\"$B:7471\",direction=\"out\"}"
	up_b="rstreamd_link_up{tunnel=\"\",peer=\"$A\",direction=\"in\"}"
	[ "$(value "$ma" "$up_a")" = 1 ]
	# b has two links from a (one per tunnel), under one set of labels.
	wait_until 20 value_is "$mb" "$up_b" 2
	run scrape "$ma"
	assert_line --regexp "^rstreamd_link_info\{tunnel=\"echo\",peer=\"$B:7471\",direction=\"out\",address=\"$B:7471\",device=\"$RSTREAMD_TEST_DEV_A\",port=\"[0-9]+\",qpn=\"[0-9]+\"\} 1$"
	assert_line --regexp "^rstreamd_link_fabric_info\{tunnel=\"echo\",peer=\"$B:7471\",direction=\"out\",device=\"$RSTREAMD_TEST_DEV_A\",.*\} 1$"
	# No label holds a sentence or a port a peer picked.
	scrape "$ma" >"$W/both"
	scrape "$mb" >>"$W/both"
	run cat "$W/both"
	refute_line --regexp '^rstreamd_link_[a-z_]+\{.*link='
	refute_line --regexp '^rstreamd_link_(up|sq_depth|rtt_seconds)\{.*peer="[^"]*:[0-9]+",direction="in"'
	# The round trip, once a keepalive came back.
	wait_until 20 has_rtt "$ma"
	run value "$ma" "rstreamd_link_rtt_seconds{tunnel=\"echo\",peer=\"$B:7471\",direction=\"out\"}"
	assert_output --regexp '^0\.[0-9]{9}$'

	# b cannot reach gone's target and refuses the stream; a hears it.
	link_up a gone
	run client "$(accept_port a gone)" "nobody there" 20
	assert_output ""
	wait_until 20 value_is "$mb" 'rstreamd_stream_refusals_total{tunnel="gone",reason="target"}' 1
	wait_until 20 value_is "$ma" 'rstreamd_stream_refusals_total{tunnel="gone",reason="peer"}' 1
	# Each refusal once: the reasons add up to REFUSED of stats.
	for d in a b; do
		p=$ma
		[ $d = a ] || p=$mb
		sum=$(scrape "$p" | awk '/^rstreamd_stream_refusals_total\{tunnel="gone",/ { s += $2 } END { print s }')
		[ "$sum" = 1 ]
		[ "$(ctl_json $d stats '.tunnels[] | select(.tunnel == "gone") | .refused')" = 1 ]
	done
	run scrape "$mb"
	assert_line 'rstreamd_stream_refusals_total{tunnel="echo",reason="target"} 0'
	assert_line 'rstreamd_stream_refusals_total{tunnel="gone",reason="limit"} 0'
	refute_line --partial 'rstreamd_tunnel_streams_refused_total'
	# Links ended by error completions: every status from the start, 0
	# included; target tunnels have no link of their own.
	assert_line 'rstreamd_link_completion_errors_total{tunnel="",direction="in",status="remote"} 0'
	refute_line --partial 'rstreamd_link_completion_errors_total{tunnel="echo"'
	run scrape "$ma"
	assert_line 'rstreamd_link_completion_errors_total{tunnel="echo",direction="out",status="retry_exceeded"} 0'
	assert_line 'rstreamd_link_completion_errors_total{tunnel="gone",direction="out",status="local"} 0'
	assert_line 'rstreamd_link_completion_errors_total{tunnel="",direction="in",status="rnr_retry_exceeded"} 0'
	refute_line --partial 'status="none"'

	# b restarts: the same series, no new ones.
	wait_until 20 has_rtt "$mb"
	series "$ma" >"$W/before.a"
	series "$mb" >"$W/before.b"
	n=$(link_ups a echo)
	kill -TERM "$PID_b"
	wait_pid "$PID_b" 30
	wait_until 20 value_is "$ma" "$up_a" 0
	start_daemon b
	link_up_after a echo "$n"
	wait_port "$mb"
	wait_until 30 same_series "$ma" "$W/before.a" ||
	    { diff "$W/before.a" <(series "$ma"); false; }
	wait_until 30 same_series "$mb" "$W/before.b" ||
	    { diff "$W/before.b" <(series "$mb"); false; }
	[ "$(value "$ma" "$up_a")" = 1 ]
	[ "$(value "$ma" 'rstreamd_tunnel_link_failures_total{tunnel="echo"}')" -ge 1 ]
	[ "$(value "$ma" 'rstreamd_tunnel_link_reconnects_total{tunnel="echo"}')" = 1 ]
}

# prom PATH [CURL ARGS...]: GET PATH of the test's Prometheus server.
prom() {
	curl -sS --max-time 20 "${@:2}" "http://127.0.0.1:$pp$1"
}

# query EXPR: the values of the instant query EXPR, one a line.
query() {
	prom /api/v1/query --data-urlencode "query=$1" |
	    jq -r '.data.result[].value[1]'
}

# alert STATE: the RstreamdLinkDown alerts in STATE (pending or firing)
# of tunnel echo's link to b, one line each.
alert() {
	prom /api/v1/alerts | jq -r --arg peer "$B:7471" --arg state "$1" \
	    '.data.alerts[] | select(.labels.alertname == "RstreamdLinkDown" and
	    .state == $state and .labels.tunnel == "echo" and
	    .labels.peer == $peer) | .labels.instance'
}

@test "prometheus: a real server scrapes both daemons; the link-down alert fires when b stops and clears when it is back" {
	command -v prometheus >/dev/null || skip "needs Debian's prometheus package (tools/install-deps)"
	echo_tunnel echo
	ma=$(free_port)
	mb=$(free_port)
	pp=$(free_port)
	with_metrics a "$ma"
	with_metrics b "$mb"
	start_pair echo
	wait_port "$ma"
	wait_port "$mb"
	mkdir "$W/prom"
	# The shipped rules, but RstreamdLinkDown waits 3 s, not 2 minutes:
	# promtool test rules (tests/prometheus-rules.sh) holds the real
	# duration to its word.
	sed 's/^\(        for: \)2m$/\13s/' \
	    "$RSTREAMD_SRCDIR/contrib/prometheus/rstreamd.rules.yml" >"$W/prom/rules.yml"
	grep -q '^        for: 3s$' "$W/prom/rules.yml"
	cat >"$W/prom/prometheus.yml" <<-EOF
		global:
		  scrape_interval: 1s
		  scrape_timeout: 1s
		  evaluation_interval: 1s
		rule_files:
		  - rules.yml
		scrape_configs:
		  - job_name: rstreamd
		    static_configs:
		      - targets: ["127.0.0.1:$ma", "127.0.0.1:$mb"]
	EOF
	promtool check config "$W/prom/prometheus.yml"
	spawn prometheus --config.file="$W/prom/prometheus.yml" \
	    --storage.tsdb.path="$W/prom/data" \
	    --web.listen-address="127.0.0.1:$pp" >"$W/prometheus.log" 2>&1
	wait_until 90 prom /-/ready -o /dev/null -f

	# Both daemons scraped, the series there with their stable labels.
	wait_until 30 bash -c "[ \"\$(curl -s --data-urlencode 'query=count(up{job=\"rstreamd\"} == 1)' http://127.0.0.1:$pp/api/v1/query | jq -r '.data.result[0].value[1]')\" = 2 ]"
	run query "rstreamd_link_up{instance=\"127.0.0.1:$ma\",tunnel=\"echo\",peer=\"$B:7471\",direction=\"out\"}"
	assert_output 1
	run query "rstreamd_link_up{instance=\"127.0.0.1:$mb\",tunnel=\"\",peer=\"$A\",direction=\"in\"}"
	assert_output 1
	prom /api/v1/query --data-urlencode 'query=rstreamd_link_up' |
	    jq -c '.data.result[] | [.metric, .value[1]]' | sed 's/^/# /' >&3
	run query "count by (instance) (rstreamd_stream_refusals_total{tunnel=\"echo\"})"
	assert_output $'8\n8'
	run query "count(process_start_time_seconds > 0)"
	assert_output 2
	# Every metric the rules name is there, on both.
	for m in $(grep -o 'rstreamd_[a-z_]*' "$W/prom/rules.yml" | sort -u); do
		run query "count(count by (instance) ($m))"
		assert_output 2
	done
	run alert firing
	assert_output ""

	# b stops: a's link is down, and after 3 s of it the alert fires.
	kill -TERM "$PID_b"
	wait_pid "$PID_b" 30
	wait_until 60 bash -c "[ -n \"\$(curl -s http://127.0.0.1:$pp/api/v1/alerts | jq -r '.data.alerts[] | select(.labels.alertname == \"RstreamdLinkDown\" and .state == \"firing\") | .labels.tunnel')\" ]"
	run alert firing
	assert_output "127.0.0.1:$ma"
	run prom /api/v1/alerts
	echo "# $(echo "$output" | jq -c '.data.alerts[] | {state, labels}')" >&3

	# b is back: the link comes up, and the alert clears.
	start_daemon b
	link_up a echo
	wait_until 60 bash -c "[ -z \"\$(curl -s http://127.0.0.1:$pp/api/v1/alerts | jq -r '.data.alerts[] | select(.labels.alertname == \"RstreamdLinkDown\") | .state')\" ]"
	run query "rstreamd_link_up{instance=\"127.0.0.1:$ma\",tunnel=\"echo\",direction=\"out\"}"
	assert_output 1
	echo "# b is back: no RstreamdLinkDown alert pending or firing" >&3
	run grep -iE 'level=(error|warn)' "$W/prometheus.log"
	echo "# prometheus said: ${output:-nothing above info}" >&3
}
