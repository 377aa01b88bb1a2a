#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The documentation's numbers and paths against the code's (TAP), where
# conf-docs.sh checks only that every setting is named:
#  - each integer setting's range in rstreamd.conf(5) ("Integer: ..., MIN
#    to MAX") is the range daemon/conf/conf*.c's tables accept (globals[],
#    size_keys[]), with their macros expanded by the preprocessor;
#  - every "min_version" range and every statement of the newest protocol
#    version, in the README, the man pages and the example configurations,
#    says lib/protocol/wire.h's WIRE_VERSION_MIN and WIRE_VERSION;
#  - the default configuration file is configure's (/etc/rstreamd.conf,
#    whatever the prefix): no page puts it under /usr/local/etc.
srcdir=${RSTREAMD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$srcdir" || exit 1
CPP=${CPP:-cpp}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0

ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
not_ok() {
	n=$((n + 1))
	echo "not ok $n - $1"
	[ -z "$2" ] || printf '%s\n' "$2" | sed 's/^/# /'
	fail=1
}

# The rows of globals[] and size_keys[] with a range: NAME MIN MAX, as C.
awk '
/^static const struct [a-z_]+ (globals|size_keys)\[\] = \{/ { t = 1; row = ""; next }
t && /^};/ { t = 0 }
t {
	row = row " " $0
	if (row !~ /\},?[ \t]*$/)
		next
	gsub(/[ \t]+/, " ", row)
	if (match(row, /\{ "[a-z_]+", G_UINT, FIELD\([a-z_]+\), [^,]+, [^,]+,/)) {
		split(substr(row, RSTART, RLENGTH - 1), f, ", ")
		nm = substr(row, RSTART + 3); sub(/".*/, "", nm)
		print nm, "(" f[4] ")", "(" f[5] ")"
	} else if (match(row, /\{ "[a-z_]+", offsetof\(struct conf_sizes, [a-z_]+\), [^,]+, [^,]+, [0-9]+ \}/)) {
		s = substr(row, RSTART, RLENGTH)
		nm = s; sub(/^\{ "/, "", nm); sub(/".*/, "", nm)
		sub(/^[^)]*\), /, "", s)
		split(s, f, ", ")
		# 0, 0: a ring size (a power of two, checked by the parser alone).
		if (f[1] != "0" || f[2] != "0")
			print nm, "(" f[1] ")", "(" f[2] ")"
	}
	row = ""
}' daemon/conf/conf*.c >"$tmp/ranges.in"
if [ ! -s "$tmp/ranges.in" ]; then
	not_ok "the ranges of daemon/conf/conf*.c's tables can be read"
	echo "1..$n"
	exit 1
fi
# Expand the macros: the tables' own headers, as their files include them.
{
	echo '#include "engine.h"'
	echo '#include "ring.h"'
	echo '#include "wire.h"'
	echo '#include "conf.h"'
	grep -hE '^#define (INLINE_MAX|TRAILING)' daemon/conf/conf*.c
	sed 's/^/RANGE /' "$tmp/ranges.in"
	echo 'VERSION WIRE_VERSION_MIN WIRE_VERSION'
} >"$tmp/ranges.c"
if ! $CPP -P -I daemon -I daemon/conf -I lib -I lib/protocol -I lib/crypto \
    -I "${RSTREAMD_BUILDDIR:-.}" "$tmp/ranges.c" \
    2>"$tmp/cpp.err" | grep -E '^(RANGE|VERSION) ' >"$tmp/ranges.cpp"; then
	not_ok "the preprocessor expands the tables' limits" "$(cat "$tmp/cpp.err")"
	echo "1..$n"
	exit 1
fi

# The text of entry NAME of rstreamd.conf(5): from its tag to the next.
entry() {
	awk -v k="$1" '
	/^\.TP/ { tp = 1; next }
	tp { tp = 0; p = ($0 ~ "^\\.BR? (\\\\fB)?" k "([ ,\\\\]|$)") ; if (p) print; next }
	/^\.(SH|SS)/ { p = 0 }
	p' man/rstreamd.conf.5
}

# C constants as the shell evaluates them: no suffixes.
num() {
	echo "$1" | sed -E 's/([0-9])[uUlL]+/\1/g'
}

while read -r tag name lo hi; do
	[ "$tag" = RANGE ] || continue
	lo=$(($(num "$lo")))
	hi=$(($(num "$hi")))
	text=$(entry "$name" | tr '\n' ' ' | sed 's/\\ / /g')
	if echo "$text" | grep -Eq "(^|[^0-9])$lo( \([^)]*\))? to $hi([^0-9]|$)"; then
		ok "rstreamd.conf(5) gives $name the range the parser takes, $lo to $hi"
	else
		not_ok "rstreamd.conf(5) gives $name the range the parser takes, $lo to $hi" \
		    "$(echo "$text" | grep -Eo '[0-9]+( \([^)]*\))? to [0-9]+' | head -3)"
	fi
done <"$tmp/ranges.cpp"

read -r _ vmin vmax <<EOF
$(grep '^VERSION ' "$tmp/ranges.cpp")
EOF
vmin=$(($(num "$vmin")))
vmax=$(($(num "$vmax")))
docs="README.md HACKING.md man/rstreamd.8 man/rstreamctl.8 man/rstreamd.conf.5
man/rstreamd-protocol.7 conf/rstreamd.conf conf/rstreamd.conf.example"

# min_version's range wherever it is given: "1 to 7", "1-7", "1..7".
bad=$(for f in $docs; do
	[ -e "$f" ] || continue
	tr '\n' ' ' <"$f" | sed 's/\\ / /g; s/\\-/-/g' |
	    grep -Eo 'min_version[^.;]{0,80}[0-9]+ ?(to|-|\.\.) ?[0-9]+' |
	    sed -E 's/.*[^0-9]([0-9]+) ?(to|-|\.\.) ?([0-9]+)$/\1 \3/' |
	    while read -r a b; do
		[ "$a $b" = "$vmin $vmax" ] || echo "$f: min_version $a to $b"
	    done
done)
if [ -z "$bad" ]; then
	ok "min_version's range is $vmin to $vmax wherever it is given"
else
	not_ok "min_version's range is $vmin to $vmax wherever it is given" "$bad"
fi

# The newest version, wherever a page says what a daemon offers or speaks.
bad=$(for f in $docs; do
	[ -e "$f" ] || continue
	tr '\n' ' ' <"$f" | sed 's/\\ / /g; s/\\f[BRI]//g' |
	    grep -Eio '(offers|newest|latest|current) (protocol )?version [0-9]+' |
	    while read -r line; do
		v=${line##* }
		[ "$v" = "$vmax" ] || echo "$f: \"$line\""
	    done
done)
if [ -z "$bad" ]; then
	ok "where a page says which version a daemon offers, it is $vmax"
else
	not_ok "where a page says which version a daemon offers, it is $vmax" "$bad"
fi

# The configuration file's place.
conf=$(sed -n 's/.*\[\], \[with_config_file=\(\/[^]]*\)\].*/\1/p' configure.ac)
if [ "$conf" = /etc/rstreamd.conf ]; then
	ok "configure's default configuration file is /etc/rstreamd.conf"
else
	not_ok "configure's default configuration file is /etc/rstreamd.conf" "configure.ac says: ${conf:-nothing}"
fi
bad=$(grep -n '/usr/local/etc' $docs 2>/dev/null)
if [ -z "$bad" ]; then
	ok "no page puts the configuration under /usr/local/etc"
else
	not_ok "no page puts the configuration under /usr/local/etc" "$bad"
fi
for f in man/rstreamd.8 man/rstreamctl.8 man/rstreamd.conf.5; do
	if grep -q '^\.I /etc/rstreamd.conf$' "$f"; then
		ok "$f lists /etc/rstreamd.conf among its FILES"
	else
		not_ok "$f lists /etc/rstreamd.conf among its FILES"
	fi
done
echo "1..$n"
exit $fail
