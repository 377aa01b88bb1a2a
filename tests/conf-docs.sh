#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The settings the parser knows against their documentation (TAP): every
# key of the parser's tables in daemon/conf/conf*.c (globals[], the top level; size_keys[],
# the sizes a tunnel or defaults may set; tunnel_keys[], a tunnel's own)
# must be described in rstreamd.conf(5) and shown in
# conf/rstreamd.conf.example, and neither may name a setting the parser
# does not know.  The script knows no setting: it reads the tables.
#
# From the page: the tags (".TP" then ".B name" or ".BR a \", \" b") of
# GLOBAL SETTINGS (globals[]) and of TUNNEL SETTINGS (tunnel_keys[] and
# size_keys[]); in the entry of defaults, the bold names (\fBname\fR) of
# its text and the "name =" of its example (size_keys[]).
# From the example: "name =" or "#name =" at the top level (globals[]),
# in "defaults = {" ... "};" (size_keys[]), and in the groups of
# "tunnels = (" ... ");" (tunnel_keys[] each, size_keys[] allowed).
#
# POSIX awk (mawk, gawk, busybox); AWK=... picks another.
srcdir=${RSTREAMD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$srcdir" || exit 1
prog=$(mktemp) || exit 1
trap 'rm -f "$prog"' EXIT
cat >"$prog" <<'AWK'
function add(set, name, where) {
	if (!((set, name) in seen)) {
		seen[set, name] = where
		list[set] = list[set] " " name
	}
}
# names(s): the setting names (lower case and _) of a tag line.
function names(s,    out) {
	gsub(/\\f[BRI]|"|,/, " ", s)
	sub(/^\.BR?[ \t]+/, "", s)
	return s
}
# compare(desc, want, got, what): each of the sets want (space-separated
# list names) must be in set got, and got must have nothing beyond
# want and allowed.
function compare(desc, want, got, allowed, where,    d, nw, ws, i, n, k, ns, all, j) {
	d = ""
	nw = split(want, ws, " ")
	for (i = 1; i <= nw; i++) {
		n = split(list[ws[i]], ns, " ")
		for (k = 1; k <= n; k++)
			if (!((got, ns[k]) in seen))
				d = d "\n# " where " does not name " ns[k] " (" tabname[ws[i]] ")"
	}
	all = want " " allowed
	n = split(list[got], ns, " ")
	for (k = 1; k <= n; k++) {
		nw = split(all, ws, " ")
		for (j = 1; j <= nw; j++)
			if ((ws[j], ns[k]) in seen)
				break
		if (j > nw)
			d = d "\n# " seen[got, ns[k]] ": " ns[k] " is no setting the parser knows here"
	}
	ntap++
	if (d == "")
		print "ok " ntap " - " desc
	else {
		print "not ok " ntap " - " desc
		print substr(d, 2)
		failed = 1
	}
}
FNR == 1 {
	file = FILENAME
	table = ""
	sect = ""
	tag = 0
	entry = ""
	ex = 0
	block = ""
}
# daemon/conf/conf*.c: the rows { "name", ... } of the three tables.
file ~ /conf[a-z]*\.c$/ && /^(static const struct [a-z_]+ [a-z_]+|} [a-z_]+)\[\] = \{/ {
	table = $0
	sub(/\[\].*/, "", table)
	sub(/.* /, "", table)
	next
}
file ~ /conf[a-z]*\.c$/ && table != "" && /^};/ {
	table = ""
	next
}
file ~ /conf[a-z]*\.c$/ && table ~ /^(globals|size_keys|tunnel_keys)$/ &&
    match($0, /^[ \t]*\{ "[a-z_]+",/) {
	n = substr($0, RSTART, RLENGTH)
	sub(/^[^"]*"/, "", n)
	sub(/".*/, "", n)
	add(table, n, file ":" FNR)
	next
}
# The page.
file ~ /\.5$/ && /^\.SH / {
	sect = substr($0, 5)
	gsub(/"/, "", sect)
	entry = ""
	next
}
file ~ /\.5$/ && /^\.TP/ {
	tag = 1
	entry = ""
	next
}
file ~ /\.5$/ && tag {
	tag = 0
	s = names($0)
	n = split(s, w, " ")
	for (i = 1; i <= n; i++) {
		if (w[i] !~ /^[a-z_]+$/)
			continue
		if (sect == "GLOBAL SETTINGS")
			add("man_global", w[i], file ":" FNR)
		else if (sect == "TUNNEL SETTINGS")
			add("man_tunnel", w[i], file ":" FNR)
		entry = w[i]
	}
	next
}
file ~ /\.5$/ && /^\.EX/ { ex = 1; next }
file ~ /\.5$/ && /^\.EE/ { ex = 0; next }
file ~ /\.5$/ && sect == "GLOBAL SETTINGS" && entry == "defaults" {
	s = $0
	if (ex) {
		sub(/#.*/, "", s)
		while (match(s, /[a-z_]+[ \t]*=/)) {
			n = substr(s, RSTART, RLENGTH)
			sub(/[ \t]*=$/, "", n)
			s = substr(s, RSTART + RLENGTH)
			if (s !~ /^[ \t]*\{/)		# the group itself
				add("man_defaults", n, file ":" FNR)
		}
	} else {
		while (match(s, /\\fB[a-z_]+\\fR/)) {
			add("man_defaults", substr(s, RSTART + 3, RLENGTH - 6), file ":" FNR)
			s = substr(s, RSTART + RLENGTH)
		}
	}
	next
}
# The example.
file ~ /\.example$/ && block == "" && /^#?[a-z_]+[ \t]*=/ {
	n = $0
	sub(/^#/, "", n)
	sub(/[ \t]*=.*/, "", n)
	add("ex_global", n, file ":" FNR)
	if (n == "defaults" && $0 ~ /\{[ \t]*$/)
		block = "ex_defaults"
	else if (n == "tunnels" && $0 ~ /\([ \t]*$/)
		block = "ex_tunnel"
	next
}
file ~ /\.example$/ && block != "" && /^[\)\}];/ {
	block = ""
	next
}
file ~ /\.example$/ && block != "" && /^[ \t]*#?[a-z_]+[ \t]*=/ {
	n = $0
	sub(/^[ \t]*#?/, "", n)
	sub(/[ \t]*=.*/, "", n)
	add(block, n, file ":" FNR)
	next
}
END {
	tabname["globals"] = "globals[]"
	tabname["size_keys"] = "size_keys[]"
	tabname["tunnel_keys"] = "tunnel_keys[]"
	d = ""
	for (t in tabname)
		if (list[t] == "")
			d = d "\n# daemon/conf/conf*.c: no table " tabname[t] " with rows { \"name\", ... }"
	ntap++
	if (d == "")
		print "ok " ntap " - daemon/conf/conf*.c's tables of settings can be read"
	else {
		print "not ok " ntap " - daemon/conf/conf*.c's tables of settings can be read"
		print substr(d, 2)
		failed = 1
	}
	compare("GLOBAL SETTINGS of rstreamd.conf(5) are globals[]",
	    "globals", "man_global", "", "GLOBAL SETTINGS")
	compare("TUNNEL SETTINGS of rstreamd.conf(5) are tunnel_keys[] and size_keys[]",
	    "tunnel_keys size_keys", "man_tunnel", "", "TUNNEL SETTINGS")
	compare("the entry of defaults in rstreamd.conf(5) names size_keys[]",
	    "size_keys", "man_defaults", "", "the entry of defaults")
	compare("the top level of rstreamd.conf.example is globals[]",
	    "globals", "ex_global", "", "the example's top level")
	compare("defaults in rstreamd.conf.example are size_keys[]",
	    "size_keys", "ex_defaults", "", "the example's defaults")
	compare("the tunnels of rstreamd.conf.example show tunnel_keys[] (and sizes)",
	    "tunnel_keys", "ex_tunnel", "size_keys", "the example's tunnels")
	print "1.." ntap
	exit failed
}
AWK
${AWK:-awk} -f "$prog" daemon/conf/conf*.c man/rstreamd.conf.5 \
    conf/rstreamd.conf.example
