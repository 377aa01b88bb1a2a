#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The rstreamd binary's command line, run where the daemon will run: -n's
# checks and warnings, and the exit statuses (78, EX_CONFIG, for what the
# configuration is at fault for; 1 for the rest).

load helpers

setup() {
	rs_setup
}

teardown() {
	rs_teardown
}

# sandboxed FILE: FILE with /etc/rstreamd/ pointing at this test's
# directory, where the identity it names is made, as its comments say.
sandboxed() {
	"$RSTREAMD_BIN" --genkey "$BATS_TEST_TMPDIR/node.key" >/dev/null
	sed "s|/etc/rstreamd/|$BATS_TEST_TMPDIR/|g" "$1" \
	    >"$BATS_TEST_TMPDIR/${1##*/}"
	echo "$BATS_TEST_TMPDIR/${1##*/}"
}

@test "rstreamd --version prints the package version" {
	run "$RSTREAMD_BIN" --version
	assert_success
	assert_output --regexp '^rstreamd [0-9]+\.[0-9]+\.[0-9]+$'
}

@test "rstreamd --help describes the options" {
	run "$RSTREAMD_BIN" --help
	assert_success
	assert_output --partial "usage: rstreamd"
	assert_output --partial "--config"
}

@test "rstreamd rejects an unknown option" {
	run "$RSTREAMD_BIN" --no-such-option
	assert_failure 1
	assert_output --partial "usage: rstreamd"
}

@test "rstreamd -n accepts a valid configuration" {
	cat >"$BATS_TEST_TMPDIR/ok.conf" <<'EOC'
tunnels = ( { name = "pg"; accept = "tcp://127.0.0.1:0"; peer = "192.0.2.20"; } );
EOC
	run "$RSTREAMD_BIN" -n -c "$BATS_TEST_TMPDIR/ok.conf"
	assert_success
	assert_output --partial "configuration is valid (1 tunnels: 1 client, 0 target)"
}

@test "the annotated example passes rstreamd -n (once the identity it names exists)" {
	f=$(sandboxed "$RSTREAMD_SRCDIR/conf/rstreamd.conf.example")
	run "$RSTREAMD_BIN" -n -c "$f"
	assert_success
	assert_output --partial "configuration is valid (4 tunnels: 2 client, 2 target)"
	refute_output --partial "warning"
}

@test "the configuration make install puts in place starts as it is" {
	run "$RSTREAMD_BIN" -n -c "$RSTREAMD_SRCDIR/conf/rstreamd.conf"
	assert_success
	assert_output --partial "configuration is valid (0 tunnels"
	# Started, it is ready and answers on the default control socket,
	# which rstreamctl finds with no arguments at all.
	W=$BATS_TEST_TMPDIR
	spawn "$RSTREAMD_BIN" -c "$RSTREAMD_SRCDIR/conf/rstreamd.conf" \
	    </dev/null >"$W/d.log" 2>&1
	pid=$!
	wait_log d "ready:" 10
	run "${RSTREAMD_BIN%/*}/rstreamctl" status
	checked=$("${RSTREAMD_BIN%/*}/rstreamctl" check; echo "status $?")
	kill -TERM "$pid"
	wait "$pid"
	assert_success
	assert_output --partial "0 tunnels, 0 streams"
	# No client tunnel, no link of its own: healthy as long as it answers.
	[ "$checked" = "no client tunnels: no link of this daemon's own to check
status 0" ]
}

@test "a configuration error exits 78 (EX_CONFIG) with file and line, from -n and from a start" {
	f=$BATS_TEST_TMPDIR/bad.conf
	cat >"$f" <<'EOC'
tunnels = ( { name = "pg";
  accept = "tcp://127.0.0.1:0"; peer = "192.0.2.20";
  recvbuf = 1000; } );
EOC
	run "$RSTREAMD_BIN" -n -c "$f"
	assert_failure 78
	assert_output "rstreamd: $f:3: tunnel pg: recvbuf 1000 is below the minimum 4096"
	# The daemon itself refuses to start on it, with the same message.
	run "$RSTREAMD_BIN" -f -c "$f"
	assert_failure 78
	assert_output --partial "$f:3: tunnel pg: recvbuf 1000"
	# So does a syntax error, with its hint.
	printf 'log_level = info;\ntunnels = ( );\n' >"$f"
	run "$RSTREAMD_BIN" -f -c "$f"
	assert_failure 78
	assert_output "rstreamd: $f:1: syntax error: 'info' is not quoted: strings take double quotes, as in \"info\""
	run "$RSTREAMD_BIN" -c "$BATS_TEST_TMPDIR/missing.conf"
	assert_failure 78
	# And a log_file that cannot be opened.
	printf 'log_file = "%s/no/such/dir/d.log";\ntunnels = ( );\n' \
	    "$BATS_TEST_TMPDIR" >"$f"
	run "$RSTREAMD_BIN" -c "$f"
	assert_failure 78
	assert_output --partial "cannot open log file $BATS_TEST_TMPDIR/no/such/dir/d.log"
}

@test "a failure at start that is not the configuration's exits 1" {
	f=$BATS_TEST_TMPDIR/c.conf
	# Valid (-n passes), but the control socket's directory is missing.
	printf 'control = "%s/no/such/dir/c.sock";\ntunnels = ( );\n' \
	    "$BATS_TEST_TMPDIR" >"$f"
	run "$RSTREAMD_BIN" -n -c "$f"
	assert_success
	run timeout -k 2 10 "$RSTREAMD_BIN" -f -c "$f"
	assert_failure 1
	assert_output --partial "$BATS_TEST_TMPDIR/no/such/dir/c.sock"
}

@test "unknown settings and syntax errors name their line, and say why" {
	f=$BATS_TEST_TMPDIR/bad.conf
	printf 'log_level = "info";\nlisten_on = "x";\n' >"$f"
	run "$RSTREAMD_BIN" -n -c "$f"
	assert_failure 78
	assert_output --partial "$f:2: unknown setting 'listen_on'"
	printf 'tunnels = ( { name = "pg"; accept = ; } );\n' >"$f"
	run "$RSTREAMD_BIN" -n -c "$f"
	assert_failure 78
	assert_output "rstreamd: $f:1: syntax error: 'accept =' has no value"
	# An example uncommented as the shipped file once had them.
	cat >"$f" <<'EOC'
tunnels = (
	{ name = "pg"; accept = "tcp://127.0.0.1:15432"; peer = "192.0.2.20"; },
);
EOC
	run "$RSTREAMD_BIN" -n -c "$f"
	assert_failure 78
	assert_output "rstreamd: $f:3: syntax error: a comma before ')' (line 2): libconfig 1.5 allows none after the last element"
	printf '\xef\xbb\xbftunnels = ( );\n' >"$f"
	run "$RSTREAMD_BIN" -n -c "$f"
	assert_failure 78
	assert_output --partial "$f:1: syntax error: the file starts with a UTF-8 byte order mark"
	run "$RSTREAMD_BIN" -n -c "$BATS_TEST_TMPDIR/missing.conf"
	assert_failure 78
	assert_output --partial "missing.conf: cannot read: No such file or directory"
}

@test "rstreamd -n looks users and groups up: an unknown one is an error at its line" {
	f=$BATS_TEST_TMPDIR/u.conf
	cat >"$f" <<EOC
tunnels = ( { name = "u"; accept = "unix:$BATS_TEST_TMPDIR/u.sock";
  peer = "192.0.2.20";
  unix_owner = "no-such-user-here"; } );
EOC
	run "$RSTREAMD_BIN" -n -c "$f"
	assert_failure 78
	assert_output "rstreamd: $f:3: tunnel u: unix_owner: unknown user 'no-such-user-here'"
	sed -i 's/unix_owner = "no-such-user-here"/unix_group = "no-such-group-here"/' "$f"
	run "$RSTREAMD_BIN" -n -c "$f"
	assert_failure 78
	assert_output "rstreamd: $f:3: tunnel u: unix_group: unknown group 'no-such-group-here'"
	printf 'tunnels = ( );\ncontrol_group = "no-such-group-here";\n' >"$f"
	run "$RSTREAMD_BIN" -n -c "$f"
	assert_failure 78
	assert_output "rstreamd: $f:2: control_group: unknown group 'no-such-group-here'"
	# The daemon refuses it as it starts, before it binds anything.
	run "$RSTREAMD_BIN" -f -c "$f"
	assert_failure 78
	printf 'tunnels = ( );\ncontrol_group = "nogroup";\ncontrol = "";\n' >"$f"
	run "$RSTREAMD_BIN" -n -c "$f"
	assert_success
}

@test "rstreamd -n resolves host names as nginx -t does: listen is an error, peer and target warnings" {
	f=$BATS_TEST_TMPDIR/h.conf
	cat >"$f" <<'EOC'
listen = "127.0.0.1";
tunnels = ( { name = "c"; accept = "tcp://127.0.0.1:0";
  peer = [ "192.0.2.20", "no-such-host.invalid:7000" ]; },
  { name = "t"; target = "tcp://no-such-target.invalid:80"; } );
EOC
	run "$RSTREAMD_BIN" -n -c "$f"
	assert_success
	assert_line --regexp "^rstreamd: warning: $f:3: tunnel c: peer 'no-such-host.invalid:7000' does not resolve: .* \\(the daemon tries again at each connection attempt\\)$"
	assert_line --regexp "^rstreamd: warning: $f:4: tunnel t: target 'tcp://no-such-target.invalid:80' does not resolve: "
	assert_line "rstreamd: $f: configuration is valid (2 tunnels: 1 client, 1 target)"
	sed -i 's/^listen = .*/listen = "no-such-listen.invalid";/' "$f"
	run "$RSTREAMD_BIN" -n -c "$f"
	assert_failure 78
	assert_line --regexp "^rstreamd: $f:1: listen 'no-such-listen.invalid' does not resolve: "
	refute_output --partial "configuration is valid"
}

@test "rstreamd -n prints the warnings the daemon logs as it starts" {
	W=$BATS_TEST_TMPDIR
	"$RSTREAMD_BIN" --genkey "$W/id.key" >/dev/null
	cat >"$W/w.conf" <<EOC
control = "$W/w.ctl";
allow = [ "10.0.0.1/8", "192.0.2.0/24" ];
tunnels = ( { name = "open"; accept = "tcp://127.0.0.1:0"; peer = "192.0.2.20"; } );
EOC
	run "$RSTREAMD_BIN" -n -c "$W/w.conf"
	assert_success
	assert_line "rstreamd: warning: $W/w.conf:2: allow '10.0.0.1/8' has host bits set: it allows 10.0.0.0/8; write that, or the address alone for one host"
	assert_line "rstreamd: warning: $W/w.conf:3: links are not authenticated for 1 tunnel without a key_file (open): any host on the fabric that can reach them can use them; see SECURITY in rstreamd(8)"
	# The daemon logs the very same lines.
	spawn "$RSTREAMD_BIN" -f -c "$W/w.conf" </dev/null >"$W/d.log" 2>&1
	pid=$!
	wait_log d "ready:" 10
	kill -TERM "$pid"
	wait "$pid"
	grep -qxF "rstreamd: warning: $W/w.conf:2: allow '10.0.0.1/8' has host bits set: it allows 10.0.0.0/8; write that, or the address alone for one host" "$W/d.log"
	grep -qF "rstreamd: warning: $W/w.conf:3: links are not authenticated for 1 tunnel" "$W/d.log"
	# An identity no peer is listed for.
	printf 'identity_file = "%s";\ntunnels = ( );\n' "$W/id.key" >"$W/i.conf"
	run "$RSTREAMD_BIN" -n -c "$W/i.conf"
	assert_success
	assert_line "rstreamd: warning: $W/i.conf:1: identity_file without a peer (peers, peers_file): with an identity only listed nodes carry streams, so none would; list the other nodes' public keys"
}

@test "rstreamd --genkey writes a private identity; rstreamctl pubkey repeats its key" {
	k=$BATS_TEST_TMPDIR/node.key
	run "$RSTREAMD_BIN" --genkey "$k"
	assert_success
	assert_output --regexp '^[A-Za-z0-9+/]{43}=$'
	pub=$output
	run stat -c %a "$k"
	assert_output 600
	run "${RSTREAMD_BIN%/*}/rstreamctl" pubkey "$k"
	assert_success
	assert_output "$pub"
}

@test "--genkey and rstreamctl keygen never overwrite a file" {
	k=$BATS_TEST_TMPDIR/node.key
	echo keep >"$k"
	run "$RSTREAMD_BIN" --genkey "$k"
	assert_failure 1
	assert_output "rstreamd: $k: File exists"
	run "${RSTREAMD_BIN%/*}/rstreamctl" keygen "$k"
	assert_failure 1
	assert_output "rstreamctl: $k: File exists"
	run cat "$k"
	assert_output keep
}

@test "rstreamd -n checks identities: a fleet passes, an unknown peer fails at its line" {
	W=$BATS_TEST_TMPDIR
	"$RSTREAMD_BIN" --genkey "$W/a.key" >/dev/null
	b=$("${RSTREAMD_BIN%/*}/rstreamctl" keygen "$W/b.key")
	printf '# the fleet\n%s node-b origin\n' "$b" >"$W/peers"
	cat >"$W/ok.conf" <<EOC
identity_file = "$W/a.key";
peers_file = "$W/peers";
tunnels = ( { name = "pg"; accept = "tcp://127.0.0.1:0"; peer = "192.0.2.20";
  peers = [ "node-b" ]; } );
EOC
	run "$RSTREAMD_BIN" -n -c "$W/ok.conf"
	assert_success
	assert_output --partial "configuration is valid (1 tunnels: 1 client"
	sed 's/"node-b"/"node-x"/' "$W/ok.conf" >"$W/bad.conf"
	run "$RSTREAMD_BIN" -n -c "$W/bad.conf"
	assert_failure 78
	assert_output "rstreamd: $W/bad.conf:4: tunnel pg: peers: no peer called node-x in the global peers or peers_file"
}

@test "rstreamctl help: every command, and each on its own; unknown commands and formats are refused" {
	run "$CTL" help
	assert_success
	for c in status tunnels streams links stats check reload metrics version help keygen pubkey; do
		assert_line --regexp "^  $c( |\$)"
	done
	run "$CTL" -h
	assert_success
	assert_line --regexp "^  -o, --output FORMAT json \(as -j\), table"
	run "$CTL" help check
	assert_success
	assert_line --index 0 "usage: rstreamctl [OPTIONS] check [TUNNEL...]"
	assert_output --partial "Output: text, or JSON with -j or -o json."
	help_links=$("$CTL" help links)
	run "$CTL" -h links
	assert_success
	assert_output "$help_links"
	run "$CTL" help reload
	assert_output --partial "Only root and the user rstreamd runs as may use it."
	run "$CTL" help frob
	assert_failure 1
	assert_output --partial "rstreamctl: no command 'frob'; the commands: status, "
	run "$CTL" frob
	assert_failure 1
	assert_output --partial "rstreamctl: unknown command 'frob'; the commands: status, "
	run "$CTL" -o wide version
	assert_failure 1
	assert_output "rstreamctl: -o wide: version shows no table; -o takes json or table for it"
	run "$CTL" links extra
	assert_failure 1
	assert_output "rstreamctl: unexpected argument: extra (links takes none)"
	run "$CTL" check 'no/such'
	assert_failure 1
	assert_output --partial "'no/such' is no tunnel name"
}

@test "rstreamctl keygen | tee FILE | rstreamctl pubkey, as wg genkey | wg pubkey; keygen - makes no file" {
	cd "$W"
	umask 077
	pub=$("$CTL" keygen | tee k | "$CTL" pubkey)
	[[ $pub =~ ^[A-Za-z0-9+/]{43}=$ ]]
	run "$CTL" pubkey k
	assert_success
	assert_output "$pub"
	run "$CTL" pubkey - <k
	assert_output "$pub"
	# stdout holds the private key and nothing else: one line.
	run "$CTL" keygen -
	assert_success
	assert_output --regexp '^[A-Za-z0-9+/]{43}=$'
	[ "$(ls -A "$W")" = k ]
	"$RSTREAMD_BIN" --genkey - >g
	[ "$(ls -A "$W" | tr '\n' ' ')" = "g k " ]
	run "$CTL" pubkey g
	assert_success
	# A file others can read gets the key and a warning.
	umask 022
	"$CTL" keygen >shared 2>warn
	run cat warn
	assert_output "rstreamctl: warning: standard output is a file group or others can read (mode 0644); a key must be private: umask 077 first"
	run "$CTL" pubkey <shared
	assert_success
	run "$CTL" pubkey </dev/null
	assert_failure 1
	assert_output "rstreamctl: standard input does not hold a private key (44 base64 characters on one line, as rstreamd --genkey writes)"
	run "$CTL" keygen a b
	assert_failure 1
}

@test "-o json, -o table and check against running daemons; bash completes check with the client tunnels" {
	conf_b "{ name = \"web\"; target = \"tcp://127.0.0.1:9\"; }"
	conf_a "{ name = \"pg\"; accept = \"tcp://127.0.0.1:0\"; peer = \"$B:7471\"; }"
	start_daemon b
	start_daemon a
	link_up a pg
	# -o json is -j; -o table the default columns; another format, no.
	run "$CTL" -s "$W/a.ctl" -o json tunnels
	assert_success
	run jq -r '.[0] | "\(.tunnel) \(.link) \(.link_error) \(.link_down_since)"' <<<"$output"
	assert_output "pg up  null"
	run "$CTL" -s "$W/a.ctl" -o wide -o table tunnels
	assert_line --index 0 --regexp '^TUNNEL +SIDE +ADDRESS +PEER +STATE +STREAMS +LINK +LINK ERROR$'
	run "$CTL" -s "$W/a.ctl" -o yaml tunnels
	assert_failure 1
	assert_output --partial "rstreamctl: unknown column or format 'yaml'; the formats are table, wide and json, the columns: tunnel, side,"
	# check: the client's link is up; the serving side has none of its own.
	run "$CTL" -s "$W/a.ctl" check
	assert_success
	assert_output "every link is up (1 tunnel)"
	run "$CTL" -s "$W/a.ctl" -o json check pg
	assert_success
	run jq -c '[.up, .checked, .down, .tunnels[0].tunnel]' <<<"$output"
	assert_output '[true,1,0,"pg"]'
	run "$CTL" -s "$W/b.ctl" check
	assert_success
	assert_output "no client tunnels: no link of this daemon's own to check"
	run "$CTL" -s "$W/b.ctl" check web
	assert_failure 1
	assert_output "rstreamctl: tunnel web is a target tunnel: its links are its peers', it has none of its own to check"
	# The completion asks the daemon the -s names for its client tunnels.
	source "$RSTREAMD_SRCDIR/contrib/bash-completion/rstreamctl"
	COMP_WORDS=("$CTL" -s "$W/a.ctl" check "")
	COMP_CWORD=4
	_rstreamctl
	[ "${COMPREPLY[*]}" = pg ]
	COMP_WORDS=("$CTL" -s "$W/b.ctl" check "")
	_rstreamctl
	[ "${#COMPREPLY[@]}" = 0 ]
}
