# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# TAP for the shell tests (sourced): ok, not_ok and skip number the
# tests in $n; not_ok sets $fail, the test script's exit status.
n=0
fail=0
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
not_ok() {
	n=$((n + 1))
	fail=1
	echo "not ok $n - $1"
}
# skip DESCRIPTION WHY
skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}
