#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The shipped alerting rules, contrib/prometheus/rstreamd.rules.yml (TAP):
# promtool check rules accepts them, promtool test rules runs their tests
# (rstreamd.rules.test.yml: each alert fires when it should, with the
# durations as shipped, and clears), and every metric they name is one
# rstreamctl(8) documents.  That the daemon exports them, and a real
# Prometheus fires one, is tests/e2e/33-prometheus.bats's to show.
#
# Skipped without promtool (Debian's prometheus package; tools/install-deps
# installs it).
srcdir=${RSTREAMD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
# shellcheck source=tests/tap.sh
. "$srcdir/tests/tap.sh"
dir=$srcdir/contrib/prometheus

# check DESCRIPTION COMMAND...: one test, its output shown on failure.
check() {
	d=$1
	shift
	if out=$("$@" 2>&1); then
		ok "$d"
	else
		not_ok "$d"
		printf '%s\n' "$out" | tail -n 60 | sed 's/^/# /'
	fi
}

if ! command -v promtool >/dev/null; then
	echo "1..0 # SKIP promtool is not installed (apt-get install prometheus; tools/install-deps does)"
	exit 0
fi
check "promtool check rules rstreamd.rules.yml" \
    promtool check rules "$dir/rstreamd.rules.yml"
# promtool finds rule_files relative to the test file's directory.
tests() {
	cd "$dir" && promtool test rules rstreamd.rules.test.yml
}
check "promtool test rules rstreamd.rules.test.yml" tests
for m in $(grep -o 'rstreamd_[a-z_]*' "$dir/rstreamd.rules.yml" | sort -u); do
	if grep -q "^\.B $m\(\\\\\?{\| \|\$\)" "$srcdir/man/rstreamctl.8"; then
		ok "rstreamctl(8) documents $m, which the rules use"
	else
		not_ok "rstreamctl(8) documents $m, which the rules use"
	fi
done
echo "1..$n"
exit $fail
