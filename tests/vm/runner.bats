#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Tests of softroce-run itself.  Runs on the host (not inside the runner):
#   bats tests/vm/runner.bats
# Most cases boot a VM (several seconds each under TCG), so they are few
# and each checks several things.
# shellcheck disable=SC2154 # $stderr is set by run --separate-stderr

bats_require_minimum_version 1.5.0

setup() {
	bats_load_library bats-support
	bats_load_library bats-assert
	RUNNER=$BATS_TEST_DIRNAME/softroce-run
}

@test "usage errors are reported without running anything" {
	run --separate-stderr "$RUNNER"
	assert_failure 2
	assert_output ''
	[[ $stderr == *usage:* ]] || fail "no usage message: $stderr"

	run --separate-stderr "$RUNNER" --timeout soon true
	assert_failure 2
	assert_output ''
	[[ $stderr == *"bad timeout"* ]] || fail "no timeout complaint: $stderr"
}

@test "COMMAND's exit status, arguments, stdout and stderr come through unchanged" {
	# shellcheck disable=SC2016 # $HOME must reach the command literally
	run --separate-stderr "$RUNNER" -- sh -c 'printf "<%s>\n" "$@"; echo to-stderr >&2; exit 1' \
		sh 'two words' "it's" '$HOME' ''
	assert_failure 1
	# Exactly the command's stdout: no boot messages or diagnostics.
	assert_output "<two words>
<it's>
<\$HOME>
<>"
	[[ $stderr == *to-stderr* ]] || fail "command's stderr missing: $stderr"
}

@test "COMMAND runs in the caller's directory with the RDMA environment" {
	# The cwd is under /tmp, which the guest covers with a tmpfs; it must
	# still be the host's directory.
	cd "$BATS_TEST_TMPDIR"
	echo host-file >marker
	export RSTREAMD_RUNNER_TEST='a b'"'"'c'
	export UNRELATED_RUNNER_TEST=leak
	# shellcheck disable=SC2016 # expanded by the command's shell
	local script='
		set -e
		echo "cwd=$(pwd -P) marker=$(cat marker)"
		echo "mode=$RSTREAMD_TEST_MODE"
		echo "passed=$RSTREAMD_RUNNER_TEST unrelated=${UNRELATED_RUNNER_TEST-unset}"
		for v in ADDR_A ADDR_B; do
			eval "a=\$RSTREAMD_TEST_$v"
			expr "$a" : "[0-9]*\.[0-9]*\.[0-9]*\.[0-9]*$" >/dev/null || { echo "bad $v=$a"; exit 9; }
		done
		for d in "$RSTREAMD_TEST_DEV_A" "$RSTREAMD_TEST_DEV_B"; do
			test -e "/sys/class/infiniband/$d" || { echo "no device $d"; exit 9; }
		done
		if [ "$RSTREAMD_TEST_ADDR_A" != "$RSTREAMD_TEST_ADDR_B" ] &&
			[ "$RSTREAMD_TEST_DEV_A" != "$RSTREAMD_TEST_DEV_B" ]; then
			echo distinct
		fi
		echo result >"$RSTREAMD_TEST_OUTDIR/result"
		echo "outdir=$RSTREAMD_TEST_OUTDIR"
	'
	SOFTROCE_KEEP=1 run --separate-stderr "$RUNNER" sh -c "$script"
	assert_success
	assert_line "cwd=$(pwd -P) marker=host-file"
	assert_line --regexp '^mode=(native|vm)$'
	assert_line --partial "passed=a b'c unrelated="
	if [[ $output == *mode=vm* ]]; then
		# Only the documented variables cross into the guest, and a guest
		# has two distinct endpoints.
		assert_line "passed=a b'c unrelated=unset"
		assert_line distinct
	fi

	# What the command wrote to RSTREAMD_TEST_OUTDIR is visible here, and
	# SOFTROCE_KEEP kept it.
	local outdir
	outdir=$(sed -n 's/^outdir=//p' <<<"$output")
	[[ -n $outdir && -f $outdir/result ]] || fail "no result file in '$outdir'"
	assert_equal "$(cat "$outdir/result")" result
	[[ $stderr == *"kept ${outdir%/out}"* ]] || fail "kept dir not reported: $stderr"
	rm -rf -- "${outdir%/out}"
}

@test "SOFTROCE_SYSTEMD=1: systemd is PID 1, the root is writable, the command's status comes back" {
	command -v qemu-system-x86_64 >/dev/null || skip "no qemu"
	[ -x /lib/systemd/systemd ] || skip "no systemd on this host"
	cd "$BATS_TEST_TMPDIR"
	echo host-file >marker
	# shellcheck disable=SC2016 # expanded by the command's shell
	local script='
		echo "pid1=$(ps -p 1 -o comm=) cwd=$(pwd -P) marker=$(cat marker)"
		touch /etc/written && echo "etc writable"
		systemctl is-active softroce-test.service
		rdma link show "$RSTREAMD_TEST_DEV_A/1" | grep -q "state ACTIVE" && echo "rxe up"
		exit 3
	'
	SOFTROCE_FORCE_VM=1 SOFTROCE_SYSTEMD=1 run --separate-stderr "$RUNNER" \
		--timeout 600 sh -c "$script"
	assert_failure 3
	assert_line "pid1=systemd cwd=$(pwd -P) marker=host-file"
	assert_line "etc writable"
	assert_line activating
	assert_line "rxe up"
	# The host's /etc is untouched.
	[ ! -e /etc/written ]
}

@test "SOFTROCE_GUESTS=2: two guests on one wire, with IPv6; guest B's agent runs scripts and returns their status" {
	command -v qemu-system-x86_64 >/dev/null || skip "no qemu"
	cd "$BATS_TEST_TMPDIR"
	echo host-file >marker
	cat >on-b.sh <<-'EOF'
		cat marker; ls /sys/class/infiniband
		ip -6 -o addr show | grep -q " $RSTREAMD_TEST_ADDR6_B/" && echo "B has $RSTREAMD_TEST_ADDR6_B"
		echo to-stderr >&2
		exit 5
	EOF
	cat >on-a.sh <<-'EOF'
		echo "hosts=$RSTREAMD_TEST_HOSTS devices=$(ls /sys/class/infiniband)"
		ip -6 -o addr show | grep -q " $RSTREAMD_TEST_ADDR6_A/" && echo "A has $RSTREAMD_TEST_ADDR6_A"
		socat -t 60 - TCP:"$RSTREAMD_TEST_AGENT_B" <on-b.sh
		exit 3
	EOF
	SOFTROCE_FORCE_VM=1 SOFTROCE_GUESTS=2 run --separate-stderr "$RUNNER" \
		--timeout 600 bash on-a.sh
	assert_failure 3
	# A has its own device only; B's answer is the script's status, then
	# its output; it ran in the command's directory.
	assert_output --regexp "^hosts=2 devices=rxe0
A has [0-9a-f:]+
5
host-file
rxe1
B has [0-9a-f:]+
to-stderr$"
}

@test "a hanging COMMAND is killed at the time limit" {
	local start=$SECONDS
	# The limit leaves a busy machine's guest time to boot and start it
	# (CI runs two guests at once; 30 s was once not enough).
	run --separate-stderr "$RUNNER" --timeout 60 sh -c 'echo started; sleep 1000'
	local elapsed=$((SECONDS - start))
	assert_failure 124
	[[ $stderr == *"timed out after 60 s"* ]] || fail "no timeout message: $stderr"
	((elapsed < 150)) || fail "took $elapsed s"
	# The partial output is still delivered, and nothing else.
	assert_output started
}

@test "native mode uses existing devices, else a private rxe pair" {
	command -v qemu-system-x86_64 >/dev/null || skip "no qemu"
	# A guest is a host with RDMA where rdma_rxe can be loaded: run the
	# runner there, once with the guest's devices, once without any.
	cd "$BATS_TEST_TMPDIR"
	cat >inner.sh <<-'EOF'
		export SOFTROCE_WORKDIR=/tmp/inner SOFTROCE_FORCE_VM=0
		show='echo "$RSTREAMD_TEST_MODE $RSTREAMD_TEST_DEV_A $RSTREAMD_TEST_ADDR_A $RSTREAMD_TEST_DEV_B $RSTREAMD_TEST_ADDR_B"'
		"$1" sh -c "$show"
		echo "status=$?"
		for d in $(ls /sys/class/infiniband); do rdma link delete "$d"; done
		"$1" sh -c "$show; exit 7"
		echo "status=$?"
		echo "left: $(ls /sys/class/infiniband)"
	EOF
	SOFTROCE_FORCE_VM=1 run --separate-stderr "$RUNNER" --timeout 300 bash inner.sh "$RUNNER"
	assert_success
	assert_line --index 0 --regexp '^native rxe0 [0-9.]+ rxe1 [0-9.]+$'
	assert_line --index 1 status=0
	assert_line --index 2 --regexp '^native rxe[0-9]+a [0-9.]+ rxe[0-9]+b [0-9.]+$'
	assert_line --index 3 status=7
	# The private pair is gone again.
	assert_line --index 4 'left: '
}

@test "a guest that dies is reported as a failure" {
	command -v qemu-system-x86_64 >/dev/null || skip "no qemu"
	# Crashing the kernel is only acceptable in a VM.
	SOFTROCE_FORCE_VM=1 run --separate-stderr "$RUNNER" --timeout 120 \
		sh -c 'echo c >/proc/sysrq-trigger; sleep 100'
	assert_failure 99
	assert_output ''
	[[ $stderr == *"guest ended without reporting a status"* ]] || fail "no message: $stderr"
	[[ $stderr == *"guest kernel: "*"Kernel panic"*"sysrq triggered crash"* ]] ||
		fail "panic not reported: $stderr"
	[[ $stderr == *"last lines of the guest console"* ]] || fail "no console tail: $stderr"
}

@test "a QEMU older than 8.1 is named as a cause of boot failures" {
	# A stand-in QEMU that answers --version and fails to boot, so that
	# nothing but the version check runs: before 8.1, TCG may run stale
	# code after the guest kernel patched itself (an "Oops: int3" at boot).
	mkdir "$BATS_TEST_TMPDIR/bin"
	local v
	for v in 7.2.19 8.0.5 8.1.0 10.0.2; do
		printf '#!/bin/sh\n[ "$1" = --version ] && echo "QEMU emulator version %s (Debian)" && exit 0\nexit 1\n' \
			"$v" >"$BATS_TEST_TMPDIR/bin/qemu-system-x86_64"
		chmod +x "$BATS_TEST_TMPDIR/bin/qemu-system-x86_64"
		PATH=$BATS_TEST_TMPDIR/bin:$PATH SOFTROCE_FORCE_VM=1 \
			run --separate-stderr "$RUNNER" --timeout 60 true
		assert_failure 99
		[[ $stderr == *"qemu failed (exit status 1)"* ]] || fail "$v: no qemu failure: $stderr"
		case $v in
		7.* | 8.0.*)
			[[ $stderr == *"warning: QEMU ${v%.*} is older than 8.1"*"Oops: int3"* ]] ||
				fail "$v: no warning: $stderr"
			;;
		*)
			[[ $stderr != *"older than 8.1"* ]] || fail "$v: warned: $stderr"
			;;
		esac
	done
}

@test "SOFTROCE_TCG_THREAD=single: one host thread for the guest's vCPUs, still two CPUs; multi by default" {
	command -v qemu-system-x86_64 >/dev/null || skip "no qemu"
	# A qemu first in PATH that notes its arguments and runs the real one.
	local real
	real=$(command -v qemu-system-x86_64)
	mkdir "$BATS_TEST_TMPDIR/bin"
	# shellcheck disable=SC2016 # expanded by the shim's shell
	printf '#!/bin/sh\n[ "$1" = --version ] || echo "$*" >>%s/args\nexec %s "$@"\n' \
		"$BATS_TEST_TMPDIR" "$real" >"$BATS_TEST_TMPDIR/bin/qemu-system-x86_64"
	chmod +x "$BATS_TEST_TMPDIR/bin/qemu-system-x86_64"
	PATH=$BATS_TEST_TMPDIR/bin:$PATH SOFTROCE_FORCE_VM=1 SOFTROCE_TCG_THREAD=single \
		run --separate-stderr "$RUNNER" --timeout 120 nproc
	assert_success
	assert_output 2
	run grep -c -- '-accel tcg,thread=single .*-smp 2 ' "$BATS_TEST_TMPDIR/args"
	assert_output 1
	rm "$BATS_TEST_TMPDIR/args"
	PATH=$BATS_TEST_TMPDIR/bin:$PATH SOFTROCE_FORCE_VM=1 SOFTROCE_TCG_THREAD='' \
		run --separate-stderr "$RUNNER" --timeout 120 nproc
	assert_success
	assert_output 2
	run grep -c -- '-accel tcg,thread=multi .*-smp 2 ' "$BATS_TEST_TMPDIR/args"
	assert_output 1
}

# fake_failing_qemu MODE: a qemu-system-x86_64 first in PATH that answers
# --version as the real one and, when asked to boot, counts the boot in
# $BATS_TEST_TMPDIR/boots and then: "first": aborts on the first boot and
# runs the real qemu on the next; "always": always aborts; "started": acts
# as if the command had started (its stdout exists in the run share), then
# aborts; "hang-first" and "hang-always": as "first" and "always", but the
# boot hangs instead of aborting.  Its abort says what QEMU 10.0's TCG says.
fake_failing_qemu() {
	local real
	real=$(command -v qemu-system-x86_64)
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	: >"$BATS_TEST_TMPDIR/boots"
	cat >"$BATS_TEST_TMPDIR/bin/qemu-system-x86_64" <<-SH
		#!/bin/sh
		[ "\$1" = --version ] && exec $real --version
		echo boot >>$BATS_TEST_TMPDIR/boots
		n=\$(wc -l <$BATS_TEST_TMPDIR/boots)
		case $1 in
		first | hang-first) [ "\$n" -gt 1 ] && exec $real "\$@" ;;
		esac
		case $1 in
		hang-*) exec sleep 600 ;;
		esac
		if [ $1 = started ]; then
			for a; do
				case \$a in
				local,path=*,mount_tag=softroce,*)
					p=\${a#local,path=}
					echo partial >"\${p%%,mount_tag=*}/stdout"
					;;
				esac
			done
		fi
		echo "qemu-system-x86_64: ../system/physmem.c:2678: iotlb_to_section: Assertion 'section_index < d->map.sections_nb' failed." >&2
		kill -ABRT \$\$
	SH
	chmod +x "$BATS_TEST_TMPDIR/bin/qemu-system-x86_64"
}

# run_with_fake_qemu MODE RUNNER-ARGS...: bats' run of the runner in VM
# mode with fake_failing_qemu MODE first in PATH.
run_with_fake_qemu() {
	fake_failing_qemu "$1"
	shift
	PATH=$BATS_TEST_TMPDIR/bin:$PATH SOFTROCE_FORCE_VM=1 \
		run --separate-stderr "$RUNNER" "$@"
}

boots() {
	wc -l <"$BATS_TEST_TMPDIR/boots"
}

@test "a qemu crash before the command started boots once more; a later or second crash fails" {
	command -v qemu-system-x86_64 >/dev/null || skip "no qemu"
	run_with_fake_qemu first --timeout 120 sh -c 'echo ran; exit 3'
	assert_failure 3
	assert_output ran
	[[ $stderr == *"warning: qemu crashed (exit status 134, signal 6) before the command started; booting again (once)"* ]] ||
		fail "no warning: $stderr"
	[[ $stderr == *"iotlb_to_section: Assertion"* ]] || fail "qemu's words not shown: $stderr"
	assert_equal "$(boots)" 2

	run_with_fake_qemu always --timeout 60 true
	assert_failure 99
	[[ $stderr == *"qemu failed (exit status 134)"* ]] || fail "no failure: $stderr"
	assert_equal "$(boots)" 2

	run_with_fake_qemu started --timeout 60 true
	assert_failure 99
	assert_output partial
	[[ $stderr == *"qemu failed (exit status 134)"* ]] || fail "no failure: $stderr"
	[[ $stderr != *"booting again"* ]] || fail "booted again after the command started: $stderr"
	assert_equal "$(boots)" 1
}

@test "a guest that has not started the command within SOFTROCE_BOOT_TIMEOUT boots once more; a second stall fails" {
	command -v qemu-system-x86_64 >/dev/null || skip "no qemu"
	# Long enough for the real boot that follows the stall.
	SOFTROCE_BOOT_TIMEOUT=30 run_with_fake_qemu hang-first --timeout 120 sh -c 'echo ran; exit 3'
	assert_failure 3
	assert_output ran
	[[ $stderr == *"warning: the guest did not start the command within 30 s; booting again (once)"* ]] ||
		fail "no warning: $stderr"
	assert_equal "$(boots)" 2

	SOFTROCE_BOOT_TIMEOUT=2 run_with_fake_qemu hang-always --timeout 60 true
	assert_failure 99
	[[ $stderr == *"softroce-run: the guest did not start the command within 2 s"* ]] || fail "no failure: $stderr"
	assert_equal "$(boots)" 2
}

@test "SOFTROCE_DRIVER=siw without the kernel's source exits 77 and says why, once; a bad driver is refused" {
	command -v qemu-system-x86_64 >/dev/null || skip "no qemu"
	SOFTROCE_FORCE_VM=1 SOFTROCE_DRIVER=siw SOFTROCE_KERNEL_SOURCE=$BATS_TEST_TMPDIR/none.tar.xz \
		run --separate-stderr "$RUNNER" --timeout 60 echo ran
	assert_failure 77
	assert_output ''
	[[ $stderr == *"SOFTROCE_DRIVER=siw: iWARP skipped: "*"no $BATS_TEST_TMPDIR/none.tar.xz; install linux-source-"*" and linux-headers-"* ]] ||
		fail "no reason: $stderr"
	assert_equal "$(grep -c 'iWARP skipped' <<<"$stderr")" 1

	SOFTROCE_DRIVER=ib run --separate-stderr "$RUNNER" --timeout 60 echo ran
	assert_failure 99
	assert_output ''
	[[ $stderr == *"SOFTROCE_DRIVER must be rxe or siw, not 'ib'"* ]] || fail "no complaint: $stderr"
}

@test "SOFTROCE_DRIVER=siw: iWARP devices on the pair; rping and ib_write_bw -R run across them" {
	command -v qemu-system-x86_64 >/dev/null || skip "no qemu"
	command -v rping >/dev/null && command -v ib_write_bw >/dev/null ||
		skip "no rping or ib_write_bw (rdmacm-utils, perftest)"
	cd "$BATS_TEST_TMPDIR"
	# The logs go to the output directory: the guest sees this one
	# read-only.  A client that comes before its server's listen is
	# refused: it tries again.
	cat >siw.sh <<-'EOF'
		b=$RSTREAMD_TEST_ADDR_B
		cd "$RSTREAMD_TEST_OUTDIR" || exit 9
		echo "devices=$RSTREAMD_TEST_DEV_A $RSTREAMD_TEST_DEV_B"
		for d in "$RSTREAMD_TEST_DEV_A" "$RSTREAMD_TEST_DEV_B"; do
			echo "$d: $(ibv_devinfo -d "$d" | grep -o 'transport:.*' | tr -s '\t ' ' ')"
		done
		client() {
			for _ in $(seq 20); do
				timeout 60 "$@" && return 0
				sleep 0.5
			done
			return 1
		}
		timeout 120 rping -s -a "$b" -C 3 -v >rping-s.log 2>&1 &
		client rping -c -a "$b" -C 3 -v | grep -c 'ping data: rdma-ping-'
		wait $! && echo "rping server ok"
		timeout 120 ib_write_bw -R -F -d "$RSTREAMD_TEST_DEV_B" -s 65536 -n 500 >bw-s.log 2>&1 &
		client ib_write_bw -R -F -d "$RSTREAMD_TEST_DEV_A" -s 65536 -n 500 "$b" >bw-c.log 2>&1
		echo "client=$? $(grep -E '^ *65536 +500 ' bw-c.log | awk '{ $1 = $1; print }')"
		wait $! && echo "ib_write_bw server ok"
		cat rping-s.log bw-c.log >&2
	EOF
	run --separate-stderr env SOFTROCE_DRIVER=siw "$RUNNER" --timeout 600 bash siw.sh
	((status == 0)) || fail "exit status $status; stdout: $output; stderr: $stderr"
	assert_line --index 0 --regexp '^devices=siw[0-9a-z]+ siw[0-9a-z]+$'
	assert_line --index 1 --regexp '^siw[0-9a-z]+: transport: iWARP \(1\)$'
	assert_line --index 2 --regexp '^siw[0-9a-z]+: transport: iWARP \(1\)$'
	assert_line --index 3 3
	assert_line --index 4 "rping server ok"
	# #bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]
	assert_line --index 5 --regexp '^client=0 65536 500 [0-9.]+ [0-9.]+ [0-9.]+$'
	assert_line --index 6 "ib_write_bw server ok"
	echo "# siw ib_write_bw (bytes, iterations, peak and average MB/s, Mpps): ${lines[5]#client=0 }" >&3
}
