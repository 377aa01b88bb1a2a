#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The rstreamd binary's command line, run where the daemon will run.

load helpers

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
}

@test "the configuration make install puts in place starts as it is" {
	run "$RSTREAMD_BIN" -n -c "$RSTREAMD_SRCDIR/conf/rstreamd.conf"
	assert_success
	assert_output --partial "configuration is valid (0 tunnels"
	# Started, it is ready and answers on the default control socket,
	# which rstreamctl finds with no arguments at all.
	W=$BATS_TEST_TMPDIR
	"$RSTREAMD_BIN" -c "$RSTREAMD_SRCDIR/conf/rstreamd.conf" \
	    >"$W/d.log" 2>&1 3>&- &
	pid=$!
	wait_log d "ready:" 10
	run "${RSTREAMD_BIN%/*}/rstreamctl" status
	kill -TERM "$pid"
	wait "$pid"
	assert_success
	assert_output --partial "0 tunnels, 0 streams"
}

@test "a configuration error exits 1 with file and line" {
	f=$BATS_TEST_TMPDIR/bad.conf
	cat >"$f" <<'EOC'
tunnels = ( { name = "pg";
  accept = "tcp://127.0.0.1:0"; peer = "192.0.2.20";
  recvbuf = 1000; } );
EOC
	run "$RSTREAMD_BIN" -n -c "$f"
	assert_failure 1
	assert_output "rstreamd: $f:3: tunnel pg: recvbuf 1000 is below the minimum 4096"
	# The daemon itself refuses to start on it, with the same message.
	run "$RSTREAMD_BIN" -f -c "$f"
	assert_failure 1
	assert_output --partial "$f:3: tunnel pg: recvbuf 1000"
}

@test "unknown settings and syntax errors name their line" {
	f=$BATS_TEST_TMPDIR/bad.conf
	printf 'log_level = "info";\nlisten_on = "x";\n' >"$f"
	run "$RSTREAMD_BIN" -n -c "$f"
	assert_failure 1
	assert_output --partial "$f:2: unknown setting 'listen_on'"
	printf 'tunnels = ( { name = "pg"; accept = ; } );\n' >"$f"
	run "$RSTREAMD_BIN" -n -c "$f"
	assert_failure 1
	assert_output --partial "$f:1: syntax error"
	run "$RSTREAMD_BIN" -n -c "$BATS_TEST_TMPDIR/missing.conf"
	assert_failure 1
	assert_output --partial "missing.conf: cannot read: No such file or directory"
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
	assert_failure 1
	assert_output "rstreamd: $W/bad.conf:4: tunnel pg: peers: no peer called node-x in the global peers or peers_file"
}
