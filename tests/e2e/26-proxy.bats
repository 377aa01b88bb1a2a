#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The client's address at the target: a target tunnel with proxy_protocol
# starts each stream with haproxy's PROXY header, carrying the client as
# the client-side daemon saw it (its ORIGIN record).  Checked byte for
# byte for both versions (IPv4, IPv6 and Unix clients), and by a real
# server that parses it: nginx with proxy_protocol on its listen line,
# through a serving daemon killed and restarted under the client side's
# reconnects (no step-down may stick and cost the address).

load helpers

setup() {
	rs_setup
}

teardown() {
	rs_teardown
}

# recorder NAME: a target that writes what it receives to $W/NAME.rec and
# answers nothing; sets $tp.
recorder() {
	tp=$(free_port)
	spawn socat -u TCP-LISTEN:"$tp",bind=127.0.0.1,reuseaddr,fork \
	    CREATE:"$W/$1.rec"
	wait_port "$tp"
}

# send_from SRC DST PAYLOAD: connect from SRC (socat's bind=) to DST
# (socat address) and send PAYLOAD.
send_from() {
	printf '%s' "$3" | timeout 30 socat -t 5 -u - "$2${1:+,bind=$1}"
}

# hexof FILE: its bytes as one line of hex.
hexof() {
	od -An -v -tx1 "$1" | tr -d ' \n'
}

@test "PROXY v1 and v2 headers, byte for byte: IPv4, IPv6 and Unix clients" {
	recorder v1
	tp1=$tp
	recorder v2
	tp2=$tp
	recorder v2u
	tp3=$tp
	# Keyless: the operator says any peer is believed.
	conf_b "{ name = \"v1\"; target = \"tcp://127.0.0.1:$tp1\"; proxy_protocol = \"v1\"; proxy_trust_any_peer = true; },
	    { name = \"v2\"; target = \"tcp://127.0.0.1:$tp2\"; proxy_protocol = \"v2\"; proxy_trust_any_peer = true; },
	    { name = \"v2u\"; target = \"tcp://127.0.0.1:$tp3\"; proxy_protocol = \"v2\"; proxy_trust_any_peer = true; }"
	p1=$(free_port)
	p2=$(free_port)
	conf_a "{ name = \"v1\"; accept = \"tcp://127.0.0.1:$p1\"; peer = \"$B\"; },
	    { name = \"v2\"; accept = \"tcp://[::1]:$p2\"; peer = \"$B\"; },
	    { name = \"v2u\"; accept = \"unix:$W/v2u.sock\"; peer = \"$B\"; }"
	start_pair v1
	s1=$(free_port)
	send_from "127.0.0.1:$s1" "TCP:127.0.0.1:$p1" "hello v1"
	s2=$(free_port)
	send_from "[::1]:$s2" "TCP6:[::1]:$p2" "hello v2"
	send_from "" "UNIX-CONNECT:$W/v2u.sock" "hello unix"
	wait_until 30 test -s "$W/v1.rec"
	wait_until 30 test -s "$W/v2.rec"
	wait_until 30 test -s "$W/v2u.rec"
	wait_until 30 grep -q "hello v1" "$W/v1.rec"
	run cat "$W/v1.rec"
	assert_output "$(printf 'PROXY TCP4 127.0.0.1 127.0.0.1 %s %s\r\nhello v1' "$s1" "$p1")"
	# Version 2: signature, PROXY, AF_INET6/STREAM, 36 bytes of addresses.
	wait_until 30 grep -q "hello v2" "$W/v2.rec"
	want=0d0a0d0a000d0a515549540a2121002400000000000000000000000000000001
	want+=00000000000000000000000000000001
	want+=$(printf '%04x%04x' "$s2" "$p2")
	want+=$(printf 'hello v2' | od -An -v -tx1 | tr -d ' \n')
	run hexof "$W/v2.rec"
	assert_output "$want"
	# A Unix client: AF_UNIX/STREAM, two empty 108-byte paths.
	wait_until 30 grep -q "hello unix" "$W/v2u.rec"
	want=0d0a0d0a000d0a515549540a213100d8
	want+=$(head -c 216 /dev/zero | od -An -v -tx1 | tr -d ' \n')
	want+=$(printf 'hello unix' | od -An -v -tx1 | tr -d ' \n')
	run hexof "$W/v2u.rec"
	assert_output "$want"
}

@test "nginx behind a keyed proxy_protocol tunnel sees the real client, also after the serving daemon's restarts" {
	command -v nginx || skip "nginx not installed (tools/install-deps installs it)"
	np=$(free_port)
	mkdir -p "$W/nginx/logs"
	cat >"$W/nginx/nginx.conf" <<-EOF
		worker_processes 1;
		pid $W/nginx/nginx.pid;
		error_log $W/nginx/logs/error.log;
		events { worker_connections 64; }
		http {
		    access_log $W/nginx/logs/access.log;
		    client_body_temp_path $W/nginx/body;
		    proxy_temp_path $W/nginx/proxy;
		    fastcgi_temp_path $W/nginx/fastcgi;
		    uwsgi_temp_path $W/nginx/uwsgi;
		    scgi_temp_path $W/nginx/scgi;
		    server {
		        listen 127.0.0.1:$np proxy_protocol;
		        location / {
		            return 200 "client \$proxy_protocol_addr:\$proxy_protocol_port via \$remote_addr\n";
		        }
		    }
		}
	EOF
	spawn nginx -e "$W/nginx/logs/error.log" -p "$W/nginx" \
	    -c "$W/nginx/nginx.conf" -g "daemon off;"
	wait_port "$np"
	conf_b "{ name = \"web\"; target = \"tcp://127.0.0.1:$np\"; proxy_protocol = \"v2\"; },
	    { name = \"web1\"; target = \"tcp://127.0.0.1:$np\"; proxy_protocol = \"v1\"; }"
	pw=$(free_port)
	pw1=$(free_port)
	# Clients come from the host's RDMA address, not from loopback.
	conf_a "{ name = \"web\"; accept = \"tcp://$A:$pw\"; peer = \"$B\"; },
	    { name = \"web1\"; accept = \"tcp://$A:$pw1\"; peer = \"$B\"; }"
	(umask 077; head -c 32 /dev/urandom >"$W/k.key")
	echo "key_file = \"$W/k.key\";" | tee -a "$W/a.conf" >>"$W/b.conf"
	start_pair web
	sp=$(free_port)
	run timeout 30 socat -t 10 - "TCP:$A:$pw,bind=$A:$sp" <<<$'GET / HTTP/1.0\r\n\r'
	assert_success
	assert_output --partial "200 OK"
	assert_output --partial "client $A:$sp via 127.0.0.1"
	sp=$(free_port)
	run timeout 30 socat -t 10 - "TCP:$A:$pw1,bind=$A:$sp" <<<$'GET / HTTP/1.0\r\n\r'
	assert_success
	assert_output --partial "client $A:$sp via 127.0.0.1"

	# b dies hard and comes back, again and again, while a reconnects
	# (connect requests pending when it dies get the kernel's reject,
	# which carries no refusal note); then new streams still carry the
	# client's address, at the newest version, and nothing stepped down.
	for i in 1 2 3 4 5; do
		kill -KILL "$PID_b"
		wait "$PID_b" || true
		start_daemon b
	done
	link_up a web
	link_up a web1
	sp=$(free_port)
	run timeout 30 socat -t 10 - "TCP:$A:$pw,bind=$A:$sp" <<<$'GET / HTTP/1.0\r\n\r'
	assert_output --partial "client $A:$sp via 127.0.0.1"
	run ctl_json a links '[.[] | .version] | map(tostring) | join(" ")'
	assert_output "12 12"
	[ "$(metric rstreamd_link_stepdowns_total a)" = 0 ]
	# nginx found nothing wrong with either header.
	run grep -c "broken header" "$W/nginx/logs/error.log"
	assert_output 0
}
