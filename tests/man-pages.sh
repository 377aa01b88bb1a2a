#!/bin/sh
# Every man page renders without a single groff warning (TAP).
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
done
echo "1..$n"
exit $fail
