#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Every example in conf/rstreamd.conf (installed as /etc/rstreamd.conf)
# and conf/rstreamd.conf.example, uncommented alone, passes rstreamd -n;
# and each file passes it as it is (TAP).
#
# The convention both files state at their top, which this test reads
# them by: paragraphs are separated by blank lines; a "#" followed by a
# space, or by nothing, starts an explanation; a "#" directly followed
# by anything else starts a line of an example, commented out.  To use a
# paragraph's example, delete the "#" at the start of each of its example
# lines.  The test does exactly that, one paragraph at a time.
#
# The examples name key files under /etc/rstreamd/, which their comments
# say how to make: the test makes them (keys of random bytes, an identity
# from rstreamd --genkey, a peers file) in a directory of its own and
# points the paths there.  Users and groups are looked up by rstreamd -n,
# so the examples name ones every Debian system has (adm, users).
srcdir=${RSTREAMD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${RSTREAMD_BUILDDIR:-$srcdir}
bin=${RSTREAMD_BIN:-$builddir/daemon/rstreamd}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rstreamd-examples.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# shellcheck source=tests/tap.sh
. "$srcdir/tests/tap.sh"

# What the comments tell the user to make first.
keys=$tmp/etc
mkdir -m 0700 "$keys" || exit 1
(
	umask 077
	for k in fabric pg web; do
		head -c 32 /dev/urandom >"$keys/$k.key" || exit 1
	done
	"$bin" --genkey "$keys/node.key" >/dev/null || exit 1
	"$bin" --genkey "$tmp/other.key" >"$tmp/other.pub" || exit 1
) || exit 1
printf '# the fleet\n%s node-c\n' "$(cat "$tmp/other.pub")" >"$keys/peers"
chmod 0644 "$keys/peers"

# The replacement side of a sed s|||, with |, & and \ escaped.
sedrepl() {
	printf '%s\n' "$1" | sed 's/[|&\\]/\\&/g'
}
here=$(sedrepl "$keys/")

# examples FILE: the first line of each paragraph with an example line.
examples() {
	awk '
	/^[ \t]*$/ { start = 0; next }
	!start { start = NR; said = 0 }
	/^[ \t]*#[^ ]/ && !said { print start; said = 1 }
	' "$1"
}

# uncomment FILE LINE: FILE with the example lines of the paragraph that
# starts at LINE uncommented (LINE 0: none), its paths in the test's.
uncomment() {
	awk -v want="$2" '
	/^[ \t]*$/ { start = 0; print; next }
	!start { start = NR }
	start == want && /^[ \t]*#[^ ]/ { sub(/#/, "") }
	{ print }
	' "$1" | sed "s|/etc/rstreamd/|$here|g"
}

# check DESCRIPTION FILE: rstreamd -n passes FILE.
check() {
	if "$bin" -n -c "$2" >"$tmp/out" 2>&1; then
		ok "$1"
	else
		not_ok "$1"
		sed 's/^/# /' "$tmp/out"
		echo "# the file checked:"
		sed 's/^/#   /' "$2"
	fi
}

for f in rstreamd.conf rstreamd.conf.example; do
	src=$srcdir/conf/$f
	uncomment "$src" 0 >"$tmp/$f" || exit 1
	check "$f as it is passes rstreamd -n" "$tmp/$f"
	lines=$(examples "$src")
	if [ -n "$lines" ]; then
		ok "$f has examples ($(echo "$lines" | wc -l) paragraphs)"
	else
		not_ok "$f has examples (paragraphs with lines that start with \"#\" and no space)"
	fi
	for l in $lines; do
		uncomment "$src" "$l" >"$tmp/$f.$l" || exit 1
		check "$f: the example of the paragraph at line $l, uncommented alone, passes rstreamd -n" "$tmp/$f.$l"
	done
done
echo "1..$n"
exit "$fail"
