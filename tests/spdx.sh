#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Every source file names its license in an SPDX line near its top (the
# first 3 lines), so that a file copied out of the tree still says it.
# The files are git's: in a tree that is not a git checkout (a release
# tarball) there is nothing to compare against, and the test skips.
# TAP output.
srcdir=${RSTREAMD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$srcdir" || exit 1
. ./tests/tap.sh
spdx='SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause'

if ! files=$(git ls-files 2>/dev/null) || [ -z "$files" ]; then
	skip "every source file has an SPDX line" "not a git checkout"
	echo "1..$n"
	exit 0
fi
# Sources: code, scripts, build files, man pages, units, configuration.
# Not: test data (fuzz corpora and dictionaries), prose (README, DESIGN),
# COPYING, and debian/, which debian/copyright covers.
sources=$(echo "$files" | grep -v -e '^debian/' -e '/corpus/' -e '\.dict$' \
    -e '\.md$' -e '^COPYING$' -e '^\.gitignore$' -e '^debian/' |
    while read -r f; do
	case $f in
	*.c | *.h | *.sh | *.bats | *.py | *.am | *.ac | *.in | *.conf | \
	    *.example | *.[578] | *.socket | *.service | *.bash)
		echo "$f" ;;
	*)
		head -c 2 "$f" | grep -q '^#!' && echo "$f" ;;
	esac
done)
missing=
for f in $sources; do
	head -n 3 "$f" | grep -qF "$spdx" || missing="$missing $f"
done
if [ -z "$missing" ]; then
	ok "every source file has an SPDX line ($(echo $sources | wc -w) files)"
else
	not_ok "every source file has an SPDX line; not:$missing"
fi
echo "1..$n"
exit $fail
