#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A tunnel's traffic_class and service_level: the class in both daemons'
# queue pairs and in the IP header of the link's RoCE v2 packets both ways,
# as tcpdump sees them on the veth; the SL (which rxe drops from queue
# pairs, and untagged Ethernet does not carry) in the connect request the
# serving side takes it from.  A tunnel without them keeps the RDMA CM's
# defaults (0).  And priority: a tunnel's link keeps a share of its send
# window while a busier tunnel of higher priority shares its device.

load helpers

setup() {
	rs_setup
}

teardown() {
	rs_teardown
}

# qp_of TUNNEL: daemon a's link of TUNNEL, as "QPN PEER_QPN".
qp_of() {
	ctl_json a links ".[] | select(.tunnel == \"$1\") | \"\(.qpn) \(.peer_qpn)\""
}

@test "traffic_class 184 and service_level 5: both ends' QPs, the wire and the connect request; unset: 0" {
	echo_target
	conf_b "{ name = \"ef\"; target = \"tcp://127.0.0.1:$tp\"; },
	    { name = \"plain\"; target = \"tcp://127.0.0.1:$tp\"; }"
	conf_a "{ name = \"ef\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\";
	    traffic_class = 184; service_level = 5; },
	    { name = \"plain\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	# A bad value is the file's line, before anything starts.
	sed 's/traffic_class = 184/traffic_class = 256/' "$W/a.conf" >"$W/bad.conf"
	run "$RSTREAMD_BIN" -n -c "$W/bad.conf"
	assert_failure
	assert_output --partial "$W/bad.conf:4: tunnel ef: traffic_class 256 is above the maximum 255"
	dev=$(ip -o addr show to "$A" | awk '{ print $2; exit }')
	spawn tcpdump -i "$dev" -n -U -w "$W/rdma.pcap" udp port 4791 2>"$W/tcpdump.err"
	wait_until 20 grep -q "listening on" "$W/tcpdump.err"
	start_pair ef
	link_up a plain
	run client "$(accept_port a ef)" "expedited"
	assert_output "expedited"
	run client "$(accept_port a plain)" "plain"
	assert_output "plain"

	# Both ends of each link: the serving side took the connect
	# request's class.
	read -r qpn peer <<<"$(qp_of ef)"
	run ctl_json a links ".[] | select(.qpn == $qpn) | .traffic_class"
	assert_output 184
	run ctl_json b links ".[] | select(.qpn == $peer) | .traffic_class"
	assert_output 184
	read -r qpn peer <<<"$(qp_of plain)"
	run ctl_json a links ".[] | select(.qpn == $qpn) | \"\(.traffic_class) \(.service_level)\""
	assert_output "0 0"
	run ctl_json b links ".[] | select(.qpn == $peer) | \"\(.traffic_class) \(.service_level)\""
	assert_output "0 0"
	run "$CTL" -s "$W/a.ctl" metrics
	assert_line --regexp "^rstreamd_link_fabric_info\{tunnel=\"ef\",peer=\"$B:7471\",direction=\"out\",.*,traffic_class=\"184\",service_level=\"[0-9]+\"\} 1$"

	# On the wire: DSCP 46 both ways, and the other link's packets 0; the
	# SL, which rxe keeps in no queue pair, in the connect requests.
	run python3 "$RSTREAMD_SRCDIR/tests/e2e/roce-pcap.py" "$W/rdma.pcap"
	assert_line "tos 0xb8 from $A"
	assert_line "tos 0xb8 from $B"
	assert_line "tos 0x00 from $A"
	assert_line "tos 0x00 from $B"
	assert_line "req tc 184 sl 5 from $A"
	assert_line "req tc 0 sl 0 from $A"
}

@test "priority: a bulk tunnel keeps a quarter of its window while a priority-16 tunnel is busy, on both daemons; all of it after" {
	echo_target
	sink=$(free_port)
	spawn socat -u TCP-LISTEN:"$sink",bind=127.0.0.1,reuseaddr,fork OPEN:/dev/null
	wait_port "$sink"
	conf_b "{ name = \"fast\"; target = \"tcp://127.0.0.1:$tp\"; priority = 16; },
	    { name = \"bulk\"; target = \"tcp://127.0.0.1:$sink\"; }"
	conf_a "{ name = \"fast\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; priority = 16; },
	    { name = \"bulk\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	start_pair fast
	link_up a bulk
	spawn socat -u OPEN:/dev/zero TCP:127.0.0.1:"$(accept_port a bulk)"
	# A line through the echo every 50 ms: the fast tunnel stays busy.
	printf 'while true; do echo ping; sleep 0.05; done\n' >"$W/ping.sh"
	spawn socat EXEC:"sh $W/ping.sh" TCP:127.0.0.1:"$(accept_port a fast)"
	pinger=$!
	read -r qpn peer <<<"$(qp_of bulk)"
	wait_ctl a links ".[] | select(.qpn == $qpn) | \"\(.priority) \(.share)\"" "4 250"
	wait_ctl b links ".[] | select(.qpn == $peer) | \"\(.priority) \(.share)\"" "4 250"
	read -r fqpn fpeer <<<"$(qp_of fast)"
	run ctl_json a links ".[] | select(.qpn == $fqpn) | \"\(.priority) \(.share)\""
	assert_output "16 1000"
	run ctl_json b links ".[] | select(.qpn == $fpeer) | \"\(.priority) \(.share)\""
	assert_output "16 1000"
	# The fast tunnel goes quiet; the bulk one, still moving, gets its
	# whole window back on both sides.
	kill "$pinger"
	wait_ctl a links ".[] | select(.qpn == $qpn) | .share" 1000
	wait_ctl b links ".[] | select(.qpn == $peer) | .share" 1000
	run ctl_json a links ".[] | select(.qpn == $qpn) | .bytes_tx > 0"
	assert_output true
}
