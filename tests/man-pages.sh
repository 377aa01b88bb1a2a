#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Every man page renders without a single groff warning, and its
# maintainer header (the comments before .TH) names only files that exist
# (TAP).  In the header, a name with a slash (daemon/conf/conf.c, systemd/) is
# from the top of the tree and says where the bare names after it
# (sock.c) are, until the next one.
srcdir=${RSTREAMD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
n=0
fail=0
for page in "$srcdir"/man/*.[1-8]; do
	n=$((n + 1))
	out=$(groff -ww -z -man "$page" 2>&1)
	if [ -z "$out" ]; then
		echo "ok $n - $(basename "$page") renders without warnings"
	else
		echo "not ok $n - $(basename "$page") renders with warnings"
		echo "$out" | sed 's/^/# /'
		fail=1
	fi
	n=$((n + 1))
	missing=
	dir=.
	for w in $(sed -n '/^\.TH/q; s/^\.\\"//p' "$page" |
	    tr -s ' \t,;:()' '\n\n\n\n\n\n\n'); do
		w=${w%.}
		case $w in
		*/*) f=$w; dir=$(dirname "$w") ;;
		*.[ch]) f=$dir/$w ;;
		*) continue ;;
		esac
		[ -e "$srcdir/$f" ] || missing="$missing $f"
	done
	if [ -z "$missing" ]; then
		echo "ok $n - $(basename "$page")'s header names files that exist"
	else
		echo "not ok $n - $(basename "$page")'s header names files that exist; not:$missing"
		fail=1
	fi
done
echo "1..$n"
exit $fail
