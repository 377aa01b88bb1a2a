#!/usr/bin/env bats
# The rstreamd binary's command line, run where the daemon will run.

bats_load_library bats-support
bats_load_library bats-assert

@test "rstreamd --version prints the package version" {
	run "$RSTREAMD" --version
	assert_success
	assert_output --regexp '^rstreamd [0-9]+\.[0-9]+\.[0-9]+$'
}

@test "rstreamd --help describes the options" {
	run "$RSTREAMD" --help
	assert_success
	assert_output --partial "usage: rstreamd"
	assert_output --partial "--config"
}

@test "rstreamd rejects an unknown option" {
	run "$RSTREAMD" --no-such-option
	assert_failure 1
	assert_output --partial "usage: rstreamd"
}
