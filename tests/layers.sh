#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The rooms' layering, checked: every file of lib/ and daemon/ may include
# only headers of its own level or below (the levels are below), and the
# include graph has no cycle.  A folder is one level: its files may
# include each other (the cycle check still holds them), and a new file
# in a folder takes the folder's level; a new file at a top level needs
# a line here.  TAP output.
srcdir=${RSTREAMD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$srcdir" || exit 1

# level PATH: its level; lower levels know nothing of higher ones.
level() {
	case $1 in
	config.h) echo 0 ;;
	lib/protocol/*) echo 2 ;;
	lib/crypto/*) echo 3 ;;
	lib/rdma/*) echo 4 ;;
	lib/*/*) echo unknown ;;
	lib/*) echo 1 ;;
	daemon/conf/*) echo 5 ;;
	daemon/link/*) echo 9 ;;
	daemon/ctl/*) echo 12 ;;
	daemon/*/*) echo unknown ;;
	*)
		m=${1##*/}
		case ${m%.*} in
		timerq | secmem | ident | http | procstat | log | admit | proxy) echo 5 ;;
		loop) echo 6 ;;
		sock | resolve | notify | dial | prio | confread) echo 7 ;;
		rsd) echo 8 ;;
		bridge) echo 10 ;;
		tunnel) echo 11 ;;
		reload) echo 12 ;;
		rstreamd | rstreamctl) echo 13 ;;
		*) echo unknown ;;
		esac
		;;
	esac
}

files=$(find lib daemon -name '*.[ch]' | sort)
# where NAME.h: the path of the header an include names.
where() {
	[ "$1" = config.h ] && { echo config.h; return; }
	echo "$files" | grep -m1 "/$1\$" || echo "$1"
}

n=0
fail=0
edges=$(mktemp) || exit 1
trap 'rm -f "$edges"' EXIT
for f in $files; do
	m=$(basename "$f")
	m=${m%.*}
	lm=$(level "$f")
	n=$((n + 1))
	if [ "$lm" = unknown ]; then
		echo "not ok $n - $f has a level (add it to tests/layers.sh)"
		fail=1
		continue
	fi
	bad=
	for h in $(sed -n 's/^#include "\([a-z_]*\.h\)".*/\1/p' "$f"); do
		[ "$h" = "$m.h" ] && continue
		echo "$m ${h%.h}" >>"$edges"
		lh=$(level "$(where "$h")")
		if [ "$lh" = unknown ] || [ "$lh" -gt "$lm" ]; then
			bad="$bad $h"
		fi
	done
	if [ -n "$bad" ]; then
		echo "not ok $n - $f (level $lm) includes only its level or below; not:$bad"
		fail=1
	else
		echo "ok $n - $f (level $lm) includes only its level or below"
	fi
done
# HACKING.md's Layout says what each of them is for: a new file gets a line.
layout=$(sed -n '/^## Layout/,/^## /p' HACKING.md)
for m in $(echo "$files" | sed -n 's|.*/||; s/\.[ch]$//p' | sort -u); do
	n=$((n + 1))
	if echo "$layout" | grep -qw -- "$m"; then
		echo "ok $n - HACKING.md's Layout names $m"
	else
		echo "not ok $n - HACKING.md's Layout names $m (give it a line there)"
		fail=1
	fi
done
n=$((n + 1))
if tsort "$edges" >/dev/null 2>&1; then
	echo "ok $n - no include loop in lib/ and daemon/"
else
	echo "not ok $n - no include loop in lib/ and daemon/:"
	tsort "$edges" 2>&1 >/dev/null | sed 's/^/# /'
	fail=1
fi
# private HEADER WHO FILES: only FILES (an extended regex of paths)
# include the private HEADER; WHO names them in the message.
private() {
	n=$((n + 1))
	bad=$(grep -l "^#include \"$1\"" $files |
	    grep -Ev "^($3)\$")
	if [ -z "$bad" ]; then
		echo "ok $n - only $2 include $1"
	else
		echo "not ok $n - only $2 include $1, not:" $bad
		fail=1
	fi
}
# link_int.h (struct dlink) is the link rooms' own: the others know a
# link through link.h.
private link_int.h "the link rooms" \
    'daemon/link/[a-z_]+\.c'
# conf_int.h (the parser's shared calls) is the conf files' own: the
# rest of the daemon knows the configuration through conf.h.
private conf_int.h "the conf files" 'daemon/conf/conf(value|global|tunnel|check|addr|peer|load)?\.c'
# verbs_int.h (the objects behind verbs.h's types) is the verbs files'
# own: everyone else knows them through verbs.h.
private verbs_int.h "the verbs files" 'lib/rdma/verbs(_[a-z]+)?\.c'
# verbs_pure.h (what the verbs layer decides without a device) is theirs
# too, and tests/sim/simverbs.c's, which decides it the same way.
private verbs_pure.h "the verbs files" 'lib/rdma/verbs(_[a-z]+)?\.c'
# engine.h's audiences: the stream calls are the bridge's (and those of
# the link rooms that take or refuse a stream); the work requests and
# completions are the transport's.
private engine_stream.h "the engine and the rooms that use streams" \
    'lib/protocol/engine(_[a-z]+)?\.c|daemon/(bridge|tunnel)\.c|daemon/link/(link|resume)\.c|daemon/bridge\.h'
private engine_io.h "the engine and the verbs files" \
    'lib/protocol/engine(_[a-z]+)?\.c|lib/rdma/verbs(_[a-z]+)?\.[ch]'
# engine_int.h (struct engine, struct stream, the layers' shared calls) is
# the engine files' own: everyone else knows the engine through its three
# public headers.
private engine_int.h "the engine's files" 'lib/protocol/engine(_[a-z]+)?\.c'
echo "1..$n"
exit $fail
