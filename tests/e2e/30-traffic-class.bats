#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A tunnel's traffic_class: in both daemons' queue pairs, and in the IP
# header of the link's RoCE v2 packets both ways, as tcpdump sees them on
# the veth; a tunnel without it keeps the RDMA CM's default (0).

load helpers

setup() {
	rs_setup
}

teardown() {
	rs_teardown
}

# tos_from PCAP: "TOS SOURCE" for each packet of the capture.
tos_from() {
	tcpdump -r "$1" -n -v 2>/dev/null | awk '
	    / IP \(tos / { t = $0; sub(/.*\(tos /, "", t); sub(/,.*/, "", t) }
	    / > .*: UDP/ { n = split($1, a, "."); print t, a[1] "." a[2] "." a[3] "." a[4] }'
}

# qp_of TUNNEL: daemon a's link of TUNNEL, as "QPN PEER_QPN".
qp_of() {
	ctl_json a links ".[] | select(.tunnel == \"$1\") | \"\(.qpn) \(.peer_qpn)\""
}

@test "traffic_class = 184 is the link's TOS byte at both ends, on the wire too; unset stays 0" {
	echo_target
	conf_b "{ name = \"ef\"; target = \"tcp://127.0.0.1:$tp\"; },
	    { name = \"plain\"; target = \"tcp://127.0.0.1:$tp\"; }"
	conf_a "{ name = \"ef\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\";
	    traffic_class = 184; },
	    { name = \"plain\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	# A bad value is the file's line, before anything starts.
	sed 's/traffic_class = 184/traffic_class = 256/' "$W/a.conf" >"$W/bad.conf"
	run "$RSTREAMD_BIN" -n -c "$W/bad.conf"
	assert_failure
	assert_output --partial "$W/bad.conf:4: tunnel ef: traffic_class 256 is above the maximum 255"
	dev=$(ip -o addr show to "$A" | awk '{ print $2; exit }')
	tcpdump -i "$dev" -n -U -w "$W/rdma.pcap" udp port 4791 2>"$W/tcpdump.err" &
	RS_PIDS+=("$!")
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
	run ctl_json a links ".[] | select(.qpn == $qpn) | .traffic_class"
	assert_output 0
	run ctl_json b links ".[] | select(.qpn == $peer) | .traffic_class"
	assert_output 0
	run "$CTL" -s "$W/a.ctl" metrics
	assert_line --regexp "^rstreamd_link_fabric_info\{link=\"tunnel ef: link to $B:7471\",.*,traffic_class=\"184\",service_level=\"[0-9]+\"\} 1$"

	# On the wire: DSCP 46 both ways, and the other link's packets 0.
	run tos_from "$W/rdma.pcap"
	assert_line "0xb8 $A"
	assert_line "0xb8 $B"
	assert_line "0x0 $A"
	assert_line "0x0 $B"
}
