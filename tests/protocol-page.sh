#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rstreamd-protocol(7) against the code (TAP): what a second implementation
# written from the page needs in order to interoperate is compared with
# lib/protocol/wire.h and lib/protocol/wire.c, so that neither can change
# without the other.
# The script knows no value of the protocol: it parses both sides.
#
# From the code: #defines (lib/protocol/wire.h, lib/protocol/ring.h,
# lib/protocol/engine.h, lib/crypto/seal.h, lib/protocol/wire.c; continued
# lines too) and the enums of lib/protocol/wire.h; the version
# of a record type or hello flag is the "version N" of its comment there,
# else 1, and must be the one the code enforces where it says so
# (wire_hello_decode's "version < N && (h->flags & FLAG)", FLAG a flag or
# a #define that ors flags together; for record types, the VERSION of
# wire.c's record table, which the engine's rec_version must hold every type
# to: "if (e->ver_link < v)" with v from wire_rec_version), and every hello
# flag of version 2 or later must be refused there below its version; the
# size of each type (the table's HDR + BODY, and VAR 1 for a variable part
# after it), the fields that wire_hello_encode, wire_note_encode and each
# type's put_LAYOUT write (put16/32/64, put_* helpers, "p[i] =", memcpy;
# after the header wire_rec_encode writes) and the texts of
# wire_reason_str.
#
# From the page:
#  - DESCRIPTION: for each version N from 2 to WIRE_VERSION a paragraph
#    "Version N is version N-1 ..." that names (\fBNAME\fR) every record
#    type and hello flag of version N; and no "version N" anywhere outside
#    WIRE_VERSION_MIN to WIRE_VERSION.
#  - .nf tables, told apart by the first word of their header line:
#      offset  a layout: the hello (in CONNECT PRIVATE DATA), the refusal
#              note (The refusal note), the record header (Framing)
#      bit     hello flags: bit, value, name, since (the WIRE_HELLO_*
#              #defines with hex values; WIRE_HELLO_FLAGS is their mask)
#      type    record types: type, name, size (N, or N+word when the
#              type's size is variable: OPEN's name), since (enum wire_type)
#      value   RESUME_STREAM flags: value, name (WIRE_RS_*, WIRE_RS_FLAGS)
#      family  ORIGIN families: family, name (enum wire_family,
#              WIRE_FAM_MAX)
#    A layout row is offset, size (a byte count, u8 to u64, or "..." for
#    the rest), field; a field the encoder does not write must be called
#    reserved.  Under each heading ".B NAME (N), SIZE bytes" of Record
#    types (SIZE: N, or "N + word"), a headerless .nf table is the record's layout (offsets include
#    the header) and a type of version 2 or later says "Version N".
#  - Reason codes: ".B N" and its text, which starts with the code's;
#    anywhere, "reason N" must be a code (but the IB CM's "reject reason
#    N"), and a text after it (", TEXT" or " (TEXT") the code's.
#  - Each ".\" check: EXPR..." comment: the numbers of the next line that
#    is not a comment are the values of the EXPRs, in order.  EXPR, with
#    no spaces: numbers, #define and enum names, + - * / << >> ( ),
#    log2(X), max(ENUM), min(ENUM), since(NAME), size(TYPE) (a record
#    type's size, without its variable part), UINT64_C(N) and its kin
#    (N a literal).  Numbers in a line are decimal, 0x hexadecimal or N^M,
#    and not part of a word (u16, IPv4).
#
# POSIX awk (mawk, gawk, busybox); AWK=... picks another.
srcdir=${RSTREAMD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$srcdir" || exit 1
prog=$(mktemp) || exit 1
trap 'rm -f "$prog"' EXIT
cat >"$prog" <<'EOF'
# ------------------------------------------------------------ expressions
function hex(t,    v, i, c) {
	sub(/^0[xX]/, "", t)
	sub(/[uUlL]+$/, "", t)
	v = 0
	for (i = 1; i <= length(t); i++) {
		c = index("0123456789abcdef", tolower(substr(t, i, 1)))
		if (c == 0)
			return -1
		v = v * 16 + c - 1
	}
	return v
}
function lex(s) {
	NT[D] = 0
	while (s != "") {
		if (match(s, /^[ \t]+/)) {
			s = substr(s, RLENGTH + 1)
			continue
		}
		if (match(s, /^0[xX][0-9A-Fa-f]+[uUlL]*/) ||
		    match(s, /^[0-9]+[uUlL]*/) ||
		    match(s, /^[A-Za-z_][A-Za-z0-9_]*/) ||
		    match(s, /^(<<|>>)/) || match(s, /^[-+*\/(),]/)) {
			T[D, ++NT[D]] = substr(s, 1, RLENGTH)
			s = substr(s, RLENGTH + 1)
			continue
		}
		return 0
	}
	return 1
}
function peek() {
	return P[D] <= NT[D] ? T[D, P[D]] : ""
}
function take() {
	return P[D] <= NT[D] ? T[D, P[D]++] : ""
}
function expect(t) {
	if (take() != t)
		evfail = "expected " t
}
# ev(s): the value of C expression s; sets evfail if it has none.
function ev(s,    r) {
	if (++D > 20) {
		evfail = "names nest too deep"
		D--
		return 0
	}
	if (!lex(s)) {
		evfail = "cannot read \"" s "\""
		D--
		return 0
	}
	P[D] = 1
	r = ev_shift()
	if (P[D] <= NT[D])
		evfail = "cannot read \"" s "\""
	D--
	return r
}
function ev_shift(    v, op, w) {
	v = ev_add()
	while ((op = peek()) == "<<" || op == ">>") {
		P[D]++
		w = ev_add()
		v = op == "<<" ? v * pow(2, w) : int(v / pow(2, w))
	}
	return v
}
function ev_add(    v, op) {
	v = ev_mul()
	while ((op = peek()) == "+" || op == "-") {
		P[D]++
		v = op == "+" ? v + ev_mul() : v - ev_mul()
	}
	return v
}
function ev_mul(    v, op, w) {
	v = ev_unary()
	while ((op = peek()) == "*" || op == "/") {
		P[D]++
		w = ev_unary()
		if (op == "*")
			v *= w
		else if (w == 0)
			evfail = "division by zero"
		else
			v = int(v / w)
	}
	return v
}
function ev_unary() {
	if (peek() == "-") {
		P[D]++
		return -ev_unary()
	}
	return ev_prim()
}
function ev_prim(    t, v, a) {
	t = take()
	if (t == "(") {
		v = ev_shift()
		expect(")")
		return v
	}
	if (t ~ /^0[xX]/)
		return hex(t)
	if (t ~ /^[0-9]/) {
		sub(/[uUlL]+$/, "", t)
		return t + 0
	}
	if (t !~ /^[A-Za-z_]/) {
		evfail = "unexpected \"" t "\""
		return 0
	}
	if (peek() != "(")
		return name_value(t)
	P[D]++
	if (t == "log2") {
		v = ev_shift()
		expect(")")
		return log2(v)
	}
	a = take()
	expect(")")
	if (t == "since")
		return since(a)
	if (t == "size") {
		if (("WIRE_" a) in size_e)
			return ev(size_e["WIRE_" a])
		evfail = "size(" a "): no such record type"
		return 0
	}
	if ((t == "max" || t == "min") && enum_n[a] > 0)
		return t == "max" ? enum_max[a] : enum_min[a]
	# <stdint.h>'s integer constant macros: the value of their literal.
	if (t ~ /^U?INT(8|16|32|64|MAX)_C$/ && a ~ /^(0[xX][0-9A-Fa-f]+|[0-9]+)$/)
		return a ~ /^0[xX]/ ? hex(a) : a + 0
	evfail = "unknown function " t "(" a ")"
	return 0
}
# pow(a, b): a to the b (some awks have no ^).
function pow(a, b,    r) {
	for (r = 1; b > 0; b--)
		r *= a
	return r
}
function log2(v,    n) {
	for (n = 0; pow(2, n) < v; n++)
		;
	if (pow(2, n) != v)
		evfail = v " is not a power of two"
	return n
}
function name_value(n,    v) {
	if (n in mval)
		return mval[n]
	if (!(n in def)) {
		evfail = "unknown name " n
		return 0
	}
	if (n in busy) {
		evfail = n " is defined by itself"
		return 0
	}
	busy[n] = 1
	v = ev(def[n])
	delete busy[n]
	return v
}
# since(n): the version that introduced record type or hello flag n.
function since(n,    c) {
	if (n in mcom)
		c = mcom[n]
	else if (n in defcom)
		c = defcom[n]
	else {
		evfail = "since(" n "): no such record type or flag"
		return 0
	}
	if (match(c, /[Vv]ersion [0-9]+/))
		return substr(c, RSTART + 8, RLENGTH - 8) + 0
	return 1
}
# members(n): the names n stands for, as " NAME NAME ...": those of a
# #define that only ors names together (a mask of flags), else n.
function members(n,    v, k, ps, i) {
	if (!(n in def))
		return n
	v = def[n]
	gsub(/[() \t]/, "", v)
	k = split(v, ps, "|")
	if (k < 2)
		return n
	for (i = 1; i <= k; i++)
		if (ps[i] !~ /^[A-Z_][A-Z0-9_]*$/)
			return n
	gsub(/[|]/, " ", v)
	return v
}
# value(s): ev(s) as text, or "?" with the reason in why.
function value(s,    v) {
	evfail = ""
	v = ev(s)
	if (evfail != "") {
		why = evfail
		return "?"
	}
	return sprintf("%.0f", v)
}
# constant(s): the value of s if it is a constant expression, else "".
function constant(s,    v) {
	v = value(s)
	return v == "?" ? "" : v
}
function perr(msg) {
	errors = errors "\n# " msg
}

# -------------------------------------------------------------- the code
FNR == 1 {
	file = FILENAME
	fn = ""
	cur_enum = ""
	defcont = ""
}
# A #define continued on the next lines (a backslash ends the line) is
# read whole.
defcont != "" {
	defcont = defcont " " $0
	if (sub(/\\$/, "", defcont))
		next
	define_line(defcont)
	defcont = ""
	next
}
file !~ /(\.7|engine(_recv)?\.c)$/ && /^#define[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]/ {
	if (sub(/\\$/, "", $0)) {
		defcont = $0
		next
	}
	define_line($0)
}
function define_line(v,    n, c) {
	n = v
	sub(/^#define[ \t]+/, "", n)
	sub(/[^A-Za-z0-9_].*$/, "", n)
	sub(/^#define[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]+/, "", v)
	c = ""
	if (match(v, /\/\*.*\*\//))
		c = substr(v, RSTART + 2, RLENGTH - 4)
	sub(/[ \t]*\/\*.*$/, "", v)
	if (v != "") {
		def[n] = v
		defcom[n] = c
		ndefs++
		defs[ndefs] = n
	}
}
file ~ /wire\.h$/ && /^enum [a-z_]+ \{/ {
	cur_enum = $2
	next_val = 0
	next
}
file ~ /wire\.h$/ && cur_enum != "" && /^};/ {
	cur_enum = ""
	next
}
file ~ /wire\.h$/ && cur_enum != "" && /^[ \t]*[A-Z_][A-Z0-9_]*/ {
	n = $1
	sub(/[,=].*/, "", n)
	rest = $0
	sub(/^[ \t]*[A-Z_][A-Z0-9_]*/, "", rest)
	c = ""
	if (match(rest, /\/\*.*\*\//))
		c = substr(rest, RSTART + 2, RLENGTH - 4)
	if (rest ~ /^[ \t]*=/) {
		v = rest
		sub(/^[ \t]*=[ \t]*/, "", v)
		sub(/[ \t]*[,\/].*$/, "", v)
		evfail = ""
		v = ev(v)
		if (evfail != "")
			perr(FILENAME ":" FNR ": " evfail)
	} else
		v = next_val
	next_val = v + 1
	mval[n] = v
	mcom[n] = c
	k = ++enum_n[cur_enum]
	enum_m[cur_enum, k] = n
	if (k == 1 || v > enum_max[cur_enum])
		enum_max[cur_enum] = v
	if (k == 1 || v < enum_min[cur_enum])
		enum_min[cur_enum] = v
	next
}
# Functions of wire.c: the name starts a line, the body ends at "}".
file ~ /wire\.c$/ && /^[a-z_0-9]+\(/ {
	fn = $0
	sub(/\(.*/, "", fn)
	seen_fn[fn] = 1
	labels = ""
	last_case = 0
	pbase = ""
	in_switch = 0
	next
}
file ~ /wire\.c$/ && /^}/ {
	fn = ""
	next
}
# The versions the code enforces.
file ~ /wire\.c$/ && fn == "wire_hello_decode" &&
    match($0, /version < [0-9]+ && \(h->flags & [A-Z_0-9]+\)/) {
	split(substr($0, RSTART, RLENGTH), w, " ")
	n = w[7]
	sub(/\)$/, "", n)
	ngate++
	gate_name[ngate] = n
	gate_v[ngate] = w[3]
	gate_where[ngate] = "lib/protocol/wire.c:" FNR
	next
}
file ~ /engine\.c$/ &&
    match($0, /e->can_[a-z_]+ = e->ver_said >= [0-9]+ && peer->version >= [0-9]+/) {
	split(substr($0, RSTART, RLENGTH), w, " ")
	can = w[1]
	sub(/^e->/, "", can)
	can_v[can] = w[5]
	if (w[5] != w[9])
		perr("lib/protocol/engine.c:" FNR ": " can " asks for " w[5] " here, " w[9] " there")
	next
}
file ~ /engine(_recv)?\.c$/ && /^[a-z_0-9]+\(/ {
	fn = $0
	sub(/\(.*/, "", fn)
	labels = ""
	next
}
file ~ /engine_recv\.c$/ && fn == "rec_version" {
	# It holds each record type to the table's version.
	if ($0 ~ /wire_rec_version\(r->type\)/)
		table_ver_read = 1
	if ($0 ~ /if \(e->ver_link < v\)/)
		table_ver_held = 1
	if (match($0, /case WIRE_[A-Z_0-9]+:/)) {
		labels = labels " " substr($0, RSTART + 5, RLENGTH - 6)
		next
	}
	if (match($0, /if \(!e->can_[a-z_]+\)/)) {
		can = substr($0, RSTART + 8, RLENGTH - 9)
		nl = split(labels, ls, " ")
		for (i = 1; i <= nl; i++) {
			ngate++
			gate_name[ngate] = ls[i]
			gate_can[ngate] = can
			gate_where[ngate] = "lib/protocol/engine_recv.c:" FNR
		}
	}
	labels = ""
	next
}
file ~ /wire\.c$/ && fn == "wire_reason_str" {
	if (match($0, /case [A-Z_0-9]+:/))
		rlabel = substr($0, RSTART + 5, RLENGTH - 6)
	else if (match($0, /return \(".*"\);/)) {
		t = substr($0, RSTART + 9, RLENGTH - 12)
		if (rlabel != "")
			reason_c[rlabel] = t
		else
			reason_default = t
		rlabel = ""
	}
	next
}
# The record table of wire.c: one row per line, T(NAME, BODY, VAR, VERSION,
# LAYOUT); the size is the header and BODY (and VAR: a part of its own
# length after it), the version the one rec_version holds every type to,
# and the fields those put_LAYOUT writes, after the header.
file ~ /wire\.c$/ && match($0, /^[ \t]+T\([A-Z_0-9]+,.*\),?$/) {
	t = $0
	sub(/^[ \t]+T\(/, "", t)
	sub(/\),?$/, "", t)
	if (split(t, w, ",") != 5) {
		perr("lib/protocol/wire.c:" FNR ": a row of the record table that is not T(NAME, BODY, VAR, VERSION, LAYOUT): " $0)
		next
	}
	for (i = 1; i <= 5; i++) {
		sub(/^[ \t]+/, "", w[i])
		sub(/[ \t]+$/, "", w[i])
	}
	n = "WIRE_" w[1]
	size_e[n] = "HDR+(" w[2] ")"
	size_var[n] = w[3] + 0
	ngate++
	gate_name[ngate] = n
	gate_v[ngate] = w[4]
	gate_where[ngate] = "lib/protocol/wire.c:" FNR
	gate_table[ngate] = 1
	k = "put_" w[5]
	if (!(k in seen_fn)) {
		perr("lib/protocol/wire.c:" FNR ": " k " is not a layout seen before")
		next
	}
	nh = split(enc[k], hf, " ")
	for (i = 1; i <= nh; i++) {
		split(hf[i], parts, ":")
		enc[n] = enc[n] " " (value("HDR") + parts[1]) ":" parts[2] ":" parts[3]
	}
	next
}
file ~ /wire\.c$/ && (fn ~ /^put_[a-z_]+$/ || fn == "wire_hello_encode" ||
    fn == "wire_note_encode" || fn == "wire_rec_encode") {
	enc_line($0)
	next
}

# offset(ptr): the offset of pointer expression ptr ("buf", "p + 4").
function offset(ptr,    b, e) {
	b = ptr
	sub(/[ \t]*\+.*/, "", b)
	e = ptr
	if (!sub(/^[a-z]+[ \t]*\+[ \t]*/, "", e))
		e = "0"
	if (b == "buf")
		return value(e)
	if (b == "p" && pbase != "")
		return value("(" pbase ")+(" e ")")
	if (b == "p" && fn ~ /^put_/)
		return value(e)
	return "?"
}
# field(off, width, val): the current statement writes width bytes at
# off (val: the constant written, or "").
function field(off, width, val,    g, nl, ls, i) {
	if (off == "?" || width == "?") {
		perr("lib/protocol/wire.c:" FNR ": cannot tell where this writes: " stmt)
		return
	}
	if (fn == "wire_rec_encode") {
		if (!in_switch)
			g = "header"
		else if (labels == "") {
			perr("lib/protocol/wire.c:" FNR ": a write outside any case")
			return
		}
	} else if (fn == "wire_hello_encode")
		g = "hello"
	else if (fn == "wire_note_encode")
		g = "note"
	else
		g = fn
	if (g != "") {
		enc[g] = enc[g] " " off ":" width ":" val
		return
	}
	nl = split(labels, ls, " ")
	for (i = 1; i <= nl; i++)
		enc[ls[i]] = enc[ls[i]] " " off ":" width ":" val
}
function enc_line(l,    a, n, args, w, k, nh, hf, parts, o, v) {
	sub(/^[ \t]+/, "", l)
	sub(/[ \t]+$/, "", l)
	if (l !~ /^\/\*/)
		sub(/[ \t]*\/\*.*\*\/$/, "", l)
	stmt = l
	if (l ~ /;.*;/) {
		perr("lib/protocol/wire.c:" FNR ": one statement per line, please: " l)
		return
	}
	if (match(l, /^case [A-Z_0-9]+:$/)) {
		if (!last_case)
			labels = ""
		labels = labels " " substr(l, 6, length(l) - 6)
		last_case = 1
		return
	}
	last_case = 0
	if (l ~ /^switch \(/) {
		in_switch = 1
		return
	}
	if (l == "break;" || l == "}") {
		if (l == "break;")
			labels = ""
		return
	}
	# (void)x: a layout with nothing to write; the table's put, read
	# from the table's rows.
	if (l ~ /^\(void\)[a-z]+;$/ || l ~ /^rec_type\(r->type\)->put\(buf \+ HDR, r\);$/)
		return
	if (l == "" || l == "{" || l ~ /^(memset|return|if) ?\(/ ||
	    l ~ /^(return|if) / || l ~ /^\/?\*/)
		return
	if (match(l, /^[a-z_0-9]+ \*p = buf \+ /)) {
		pbase = substr(l, RLENGTH + 1)
		sub(/;$/, "", pbase)
		return
	}
	if (l ~ /^(const |static )?(size_t|uint[0-9]+_t|int|struct [a-z_]+) \*?[a-z_]+( = [^;]*)?;$/)
		return
	if (match(l, /^put(16|32|64)\(.*\);$/)) {
		w = substr(l, 4, 2) / 8
		a = substr(l, 7, length(l) - 8)
		n = split(a, args, ",")
		v = args[2]
		sub(/^[ \t]+/, "", v)
		v = constant(v)
		field(offset(args[1]), w, v)
		return
	}
	if (match(l, /^put_[a-z_]+\(.*\);$/)) {
		k = substr(l, 1, index(l, "(") - 1)
		if (!(k in enc)) {
			perr("lib/protocol/wire.c:" FNR ": " k " is not a helper seen before")
			return
		}
		a = substr(l, length(k) + 2, length(l) - length(k) - 3)
		split(a, args, ",")
		o = offset(args[1])
		nh = split(enc[k], hf, " ")
		for (n = 1; n <= nh; n++) {
			split(hf[n], parts, ":")
			field(o == "?" ? "?" : o + parts[1], parts[2], parts[3])
		}
		return
	}
	if (match(l, /^[a-z]+\[[^]]+\] = .*;$/)) {
		a = substr(l, 1, index(l, "]") - 1)
		k = substr(a, 1, index(a, "[") - 1)
		a = substr(a, index(a, "[") + 1)
		v = substr(l, index(l, "=") + 2)
		sub(/;$/, "", v)
		v = constant(v)
		field(offset(k " + " a), 1, v)
		return
	}
	if (match(l, /^memcpy\(.*\);$/)) {
		a = substr(l, 8, length(l) - 9)
		n = split(a, args, ",")
		sub(/^[ \t]+/, "", args[3])
		field(offset(args[1]), args[3] ~ /->/ ? "var" : value(args[3]), "")
		return
	}
	perr("lib/protocol/wire.c:" FNR ": cannot read this line of " fn ": " l)
}

# -------------------------------------------------------------- the page
function plain(s) {
	gsub(/\\f(\(..|\[[^]]*\]|.)/, "", s)
	gsub(/\\\(../, "", s)
	gsub(/\\-/, "-", s)
	gsub(/\\&/, "", s)
	gsub(/\\e/, "\\", s)
	return s
}
# numbers(s): the numbers of page text s, as " N N ...".
function numbers(s,    out, m, b, p) {
	s = plain(s)
	out = ""
	while (match(s, /0[xX][0-9A-Fa-f]+|[0-9]+(\^[0-9]+)?/)) {
		m = substr(s, RSTART, RLENGTH)
		b = RSTART > 1 ? substr(s, RSTART - 1, 1) : ""
		s = substr(s, RSTART + RLENGTH)
		if (b ~ /[A-Za-z0-9_]/)
			continue
		if (m ~ /^0[xX]/)
			m = hex(m)
		else if ((p = index(m, "^")) > 0)
			m = pow(substr(m, 1, p - 1), substr(m, p + 1))
		out = out " " sprintf("%.0f", m)
	}
	return out
}
function heading(l) {
	sub(/^\.S[HS][ \t]+/, "", l)
	gsub(/"/, "", l)
	return l
}
file ~ /\.7$/ {
	l = $0
	if (l ~ /^\.\\"/) {
		if (match(l, /^\.\\" check:[ \t]*/)) {
			if (pending)
				chk_line[pending] = "none"
			nchk++
			chk_at[nchk] = FNR
			chk_e[nchk] = substr(l, RLENGTH + 1)
			pending = nchk
		}
		next
	}
	if (pending) {
		chk_line[pending] = FNR
		chk_text[pending] = l
		pending = 0
	}
	t = plain(l)
	# Every version the page names.
	s = t
	while (match(s, /[Vv]ersions?[- ][0-9]+(( to | and | or |\.\.)[0-9]+)?/)) {
		m = substr(s, RSTART, RLENGTH)
		s = substr(s, RSTART + RLENGTH)
		nm = split(numbers(m), ms, " ")
		for (i = 1; i <= nm; i++) {
			nver++
			ver_n[nver] = ms[i]
			ver_at[nver] = FNR
		}
	}
	# Every reason named by number, and the text after it (", TEXT" or
	# " (TEXT"), to the end of the line at most.
	s = t
	while (match(s, /reason [0-9]+/)) {
		b = substr(s, 1, RSTART - 1)
		m = substr(s, RSTART + 7, RLENGTH - 7)
		s = substr(s, RSTART + RLENGTH)
		if (b ~ /reject \(?$/)
			continue	# the IB CM's
		nrn++
		rn_v[nrn] = m
		rn_at[nrn] = FNR
		rn_text[nrn] = ""
		if (match(s, /^(, | \()[a-z][a-z ]*/))
			rn_text[nrn] = substr(s, 3, RLENGTH - 2)
	}
	if (in_nf) {
		if (l ~ /^\.fi/) {
			in_nf = 0
			next
		}
		if (l ~ /^\./)
			next
		k = ++blk_n[nb]
		blk_row[nb, k] = t
		blk_at[nb, k] = FNR
		next
	}
	if (l ~ /^\.nf/) {
		in_nf = 1
		nb++
		blk_sh[nb] = sh
		blk_ss[nb] = ss
		blk_rec[nb] = rec
		blk_n[nb] = 0
		next
	}
	if (l ~ /^\.SH/) {
		sh = heading(l)
		ss = ""
		rec = ""
		vp = ""
		reason = ""
		next
	}
	if (l ~ /^\.SS/) {
		ss = heading(l)
		rec = ""
		reason = ""
		next
	}
	if (sh == "DESCRIPTION") {
		if (match(t, /^Version [0-9]+ is version [0-9]+/)) {
			split(substr(t, RSTART, RLENGTH), w, " ")
			vp = w[2]
			vp_prev[vp] = w[5]
			vp_at[vp] = FNR
			vp_text[vp] = ""
		} else if (l ~ /^\./ || t ~ /^Everything else/)
			vp = ""
		if (vp != "")
			vp_text[vp] = vp_text[vp] " " l
	}
	if (ss == "Record types" && l ~ /^\.B [A-Z_]+ \([0-9]+\), /) {
		s = substr(l, 4)
		rec = s
		sub(/ .*/, "", rec)
		sub(/^[A-Z_]+ \(/, "", s)
		rec_num[rec] = s
		sub(/\).*/, "", rec_num[rec])
		sub(/^[0-9]+\), /, "", s)
		rec_size[rec] = s
		sub(/ .*/, "", rec_size[rec])
		rec_var[rec] = s ~ /^[0-9]+ \+ [a-z_]+ bytes/
		if (!rec_var[rec] && s !~ /^[0-9]+ bytes/)
			rec_size[rec] = "?"
		rec_at[rec] = FNR
		rec_ver[rec] = ""
		next
	}
	if (rec != "" && match(t, /^Version [0-9]+/) && rec_ver[rec] == "")
		rec_ver[rec] = substr(t, 9, RLENGTH - 8)
	if (ss == "Reason codes") {
		if (match(l, /^\.B [0-9]+$/)) {
			reason = substr(l, 4)
			nreason++
			reason_num[nreason] = reason
			reason_p[reason] = ""
			reason_at[reason] = FNR
		} else if (l ~ /^\./)
			reason = ""
		else if (reason != "")
			reason_p[reason] = reason_p[reason] (reason_p[reason] == "" ? "" : " ") t
	}
	if (index(t, "\"" reason_default "\"") > 0)
		saw_default = 1
}

# ----------------------------------------------------------------- checks
function tap(good, desc, diag) {
	ntap++
	if (good)
		print "ok " ntap " - " desc
	else {
		print "not ok " ntap " - " desc
		if (diag != "")
			print substr(diag, 2)
		failed = 1
	}
}
# find_block(kind, where): the .nf table whose header starts with kind
# (where: "" for any, else "SH/SS" it must be under); 0 if none.
function find_block(kind, shw, ssw,    b, w) {
	for (b = 1; b <= nb; b++) {
		if (blk_n[b] == 0)
			continue
		split(blk_row[b, 1], w, " ")
		if (w[1] != kind)
			continue
		if (shw != "" && blk_sh[b] != shw)
			continue
		if (ssw != "-" && blk_ss[b] != ssw)
			continue
		return b
	}
	return 0
}
# layout(b, first, g, start, total, tvar): compare the rows of block b
# from row first with the fields encoder group g writes; the fields cover
# start to total, and then (tvar) a last one of variable size, "...".
# Returns diagnostics, "" if none.
function layout(b, first, g, start, total, tvar,    d, k, w, at, off, width, nf, ef, i, p, found, nrow, used, var, x) {
	d = ""
	at = start
	nrow = 0
	var = 0
	for (k = first; k <= blk_n[b]; k++) {
		split(blk_row[b, k], w, " ")
		if (w[1] !~ /^[0-9]+$/)
			continue
		nrow++
		off = w[1] + 0
		width = w[2]
		if (width ~ /^u(8|16|32|64)$/)
			width = substr(width, 2) / 8
		else if (width == "...")
			width = "var"
		else if (width !~ /^[0-9]+$/) {
			d = d "\n# line " blk_at[b, k] ": size \"" w[2] "\" is not a byte count, u8 to u64, or ..."
			continue
		}
		if (var)
			d = d "\n# line " blk_at[b, k] ": a field after the \"...\" one"
		if (off != at)
			d = d "\n# line " blk_at[b, k] ": offset " off ", but the fields before end at " at
		row_off[nrow] = off
		row_w[nrow] = width
		row_name[nrow] = w[3]
		row_at[nrow] = blk_at[b, k]
		row_desc[nrow] = blk_row[b, k]
		sub(/^[ \t]*[^ \t]+[ \t]+[^ \t]+[ \t]+[^ \t]+/, "", row_desc[nrow])
		row_used[nrow] = 0
		if (width == "var")
			var = 1
		else
			at = off + width
	}
	if (var && !tvar)
		d = d "\n# the page ends with a field of variable size, the code has none"
	else if (!var && tvar)
		d = d "\n# the code writes a last field of variable size (\"...\" on the page)"
	if (at != total)
		d = d "\n# the page's fixed fields end at " at ", the code's at " total
	nf = split(enc[g], ef, " ")
	for (i = 1; i <= nf; i++) {
		split(ef[i], x, ":")
		found = 0
		for (p = 1; p <= nrow; p++)
			if (row_off[p] == x[1] && row_w[p] == x[2]) {
				found = p
				break
			}
		if (!found) {
			d = d "\n# the code writes " (x[2] == "var" ? "a variable number of" : x[2]) " bytes at offset " x[1] ", the page has no such field"
			continue
		}
		row_used[found] = 1
		if (x[3] != "") {
			split(numbers(row_desc[found]), used, " ")
			if (used[1] != x[3])
				d = d "\n# line " row_at[found] ": " row_name[found] " is " x[3] " in the code"
		}
	}
	for (p = 1; p <= nrow; p++)
		if (!row_used[p] && row_name[p] != "reserved")
			d = d "\n# line " row_at[p] ": the code writes no " row_name[p] " (a field it does not write is called reserved)"
	return d
}
# enum_table(b, en, prefix): compare the rows (value, NAME, ...) of table b
# with the members prefixNAME of enum en; matched[member] is the row of
# each one found.  Returns diagnostics, "" if none.
function enum_table(b, en, prefix,    d, k, w, n, left) {
	d = ""
	for (n in matched)
		delete matched[n]
	for (k = 1; k <= enum_n[en]; k++)
		left[enum_m[en, k]] = 1
	for (k = 2; k <= blk_n[b]; k++) {
		split(blk_row[b, k], w, " ")
		if (w[1] !~ /^[0-9]+$/)
			continue
		n = prefix w[2]
		if (!(n in left)) {
			d = d "\n# line " blk_at[b, k] ": lib/protocol/wire.h has no " n " (or it is here twice)"
			continue
		}
		delete left[n]
		matched[n] = k
		if (w[1] != mval[n])
			d = d "\n# line " blk_at[b, k] ": " w[2] " is " w[1] ", " n " is " mval[n]
	}
	for (n in left)
		d = d "\n# " n " (" mval[n] ") is not in the table"
	return d
}
# hexdefs(prefix): the #defines named prefix* with hex values but the
# mask prefix FLAGS, as " NAME NAME ...".
function hexdefs(prefix,    i, n, out) {
	out = ""
	for (i = 1; i <= ndefs; i++) {
		n = defs[i]
		if (index(n, prefix) == 1 && n != prefix "FLAGS" &&
		    def[n] ~ /^0[xX][0-9A-Fa-f]+[uU]?$/)
			out = out " " n
	}
	return out
}
# flags(b, prefix, vcol, ncol, bcol, scol): compare flag table b (value,
# name, bit and since in those columns; 0: none) with hexdefs(prefix).
function flags(b, prefix, vcol, ncol, bcol, scol,    d, k, w, n, nc, cs, i, seen, sum, v) {
	d = ""
	nc = split(hexdefs(prefix), cs, " ")
	sum = 0
	for (i = 1; i <= nc; i++) {
		v = value(cs[i])
		sum += v
		seen[substr(cs[i], length(prefix) + 1)] = v
	}
	if (nc == 0)
		d = d "\n# lib/protocol/wire.h has no " prefix "* flag"
	if (!((prefix "FLAGS") in def))
		d = d "\n# lib/protocol/wire.h has no " prefix "FLAGS"
	else if (value(prefix "FLAGS") != sum)
		d = d "\n# " prefix "FLAGS is " value(prefix "FLAGS") ", the flags add up to " sum
	for (k = 2; k <= blk_n[b]; k++) {
		split(blk_row[b, k], w, " ")
		if (w[ncol] == "" || w[ncol] !~ /^[A-Z_0-9]+$/)
			continue
		n = w[ncol]
		if (!(n in seen)) {
			d = d "\n# line " blk_at[b, k] ": lib/protocol/wire.h has no " prefix n
			continue
		}
		v = w[vcol] ~ /^0[xX]/ ? hex(w[vcol]) : "?"
		if (v != seen[n])
			d = d "\n# line " blk_at[b, k] ": " n " is " w[vcol] ", " prefix n " is " def[prefix n]
		else if (bcol && pow(2, w[bcol]) != v)
			d = d "\n# line " blk_at[b, k] ": " n " is not bit " w[bcol]
		if (scol && w[scol] != since(prefix n))
			d = d "\n# line " blk_at[b, k] ": " n " since " w[scol] ", lib/protocol/wire.h says version " since(prefix n)
		delete seen[n]
	}
	for (n in seen)
		d = d "\n# " prefix n " (" def[prefix n] ") is not in the table"
	return d
}

END {
	# What the rest needs from the code.
	vmin = value("WIRE_VERSION_MIN")
	vmax = value("WIRE_VERSION")
	if (vmin == "?" || vmax == "?")
		perr("lib/protocol/wire.h: WIRE_VERSION_MIN and WIRE_VERSION: " why)
	if (enum_n["wire_type"] == 0 || enum_n["wire_reason"] == 0 ||
	    enum_n["wire_family"] == 0)
		perr("lib/protocol/wire.h: no enum wire_type, wire_reason or wire_family")
	for (k = 1; k <= enum_n["wire_type"]; k++)
		if (!(enum_m["wire_type", k] in size_e))
			perr("lib/protocol/wire.c: the record table has no row for " enum_m["wire_type", k])
	if (!table_ver_read || !table_ver_held)
		perr("lib/protocol/engine_recv.c: rec_version does not hold records to wire_rec_version (\"if (e->ver_link < v)\")")
	tap(errors == "", "lib/protocol/wire.h, lib/protocol/wire.c and the page can be read", errors)

	# The versions of lib/protocol/wire.h are the code's.
	d = ""
	for (i = 1; i <= ngate; i++) {
		v = gate_v[i]
		if (gate_can[i] != "") {
			if (!(gate_can[i] in can_v))
				continue	# not a version's (can_resume)
			v = can_v[gate_can[i]]
		}
		nv++
		nm = split(members(gate_name[i]), ms, " ")
		for (j = 1; j <= nm; j++) {
			gated[ms[j]] = 1
			if (since(ms[j]) != v)
				d = d "\n# " gate_where[i] ": " ms[j] " needs version " v ", lib/protocol/wire.h says " since(ms[j])
		}
	}
	if (nv < 2)
		d = d "\n# found no version checks in wire_hello_decode and rec_version"
	nc = split(hexdefs("WIRE_HELLO_"), cs, " ")
	for (i = 1; i <= nc; i++)
		if (since(cs[i]) > 1 && !(cs[i] in gated))
			d = d "\n# lib/protocol/wire.c: wire_hello_decode lets a hello below version " since(cs[i]) " carry " cs[i]
	tap(d == "", "the versions lib/protocol/wire.h gives flags and types are those the code checks", d)

	# Versions.
	d = ""
	for (v = 2; v <= vmax + 0; v++) {
		if (!(v in vp_prev)) {
			d = d "\n# DESCRIPTION has no \"Version " v " is version " v - 1 "\" paragraph"
			continue
		}
		if (vp_prev[v] != v - 1)
			d = d "\n# line " vp_at[v] ": version " v " is version " vp_prev[v] " plus?"
		for (k = 1; k <= enum_n["wire_type"]; k++) {
			n = enum_m["wire_type", k]
			if (since(n) == v && index(vp_text[v], "\\fB" substr(n, 6) "\\fR") == 0)
				d = d "\n# line " vp_at[v] ": version " v "'s paragraph does not name " substr(n, 6) " (lib/protocol/wire.h: version " v ")"
		}
		nc = split(hexdefs("WIRE_HELLO_"), cs, " ")
		for (i = 1; i <= nc; i++)
			if (since(cs[i]) == v && index(vp_text[v], "\\fB" substr(cs[i], 12) "\\fR") == 0)
				d = d "\n# line " vp_at[v] ": version " v "'s paragraph does not name the flag " substr(cs[i], 12)
	}
	for (v in vp_prev)
		if (v + 0 > vmax + 0)
			d = d "\n# line " vp_at[v] ": version " v ", but WIRE_VERSION is " vmax
	tap(d == "", "DESCRIPTION says what each version from 2 to WIRE_VERSION (" vmax ") added", d)
	d = ""
	for (i = 1; i <= nver; i++)
		if (ver_n[i] + 0 < vmin + 0 || ver_n[i] + 0 > vmax + 0)
			d = d "\n# line " ver_at[i] ": version " ver_n[i]
	tap(d == "", "every version the page names is from WIRE_VERSION_MIN to WIRE_VERSION (" vmin " to " vmax ")", d)

	# Layouts with a header line.
	b = find_block("offset", "CONNECT PRIVATE DATA", "")
	d = b ? layout(b, 2, "hello", 0, value("WIRE_HELLO_LEN"), 0) : "\n# no \"offset size field\" table in CONNECT PRIVATE DATA"
	tap(d == "", "the hello's layout is wire_hello_encode's, WIRE_HELLO_LEN bytes", d)
	b = find_block("offset", "CONNECT PRIVATE DATA", "The refusal note")
	d = b ? layout(b, 2, "note", 0, value("WIRE_NOTE_LEN"), 0) : "\n# no \"offset size field\" table in The refusal note"
	tap(d == "", "the refusal note's layout is wire_note_encode's, WIRE_NOTE_LEN bytes", d)
	b = find_block("offset", "CONTROL RECORDS", "Framing")
	d = b ? layout(b, 2, "header", 0, value("HDR"), 0) : "\n# no \"offset size field\" table in Framing"
	tap(d == "", "the record header's layout is wire_rec_encode's, HDR bytes", d)

	# Hello flags.
	b = find_block("bit", "CONNECT PRIVATE DATA", "-")
	d = b ? flags(b, "WIRE_HELLO_", 2, 3, 1, 4) : "\n# no \"bit value name since\" table in CONNECT PRIVATE DATA"
	tap(d == "", "the hello flags are WIRE_HELLO_*, with their versions", d)

	# Record types: the table.
	b = find_block("type", "CONTROL RECORDS", "Record types")
	d = b ? enum_table(b, "wire_type", "WIRE_") : "\n# no \"type name size since\" table in Record types"
	for (n in matched) {
		k = matched[n]
		split(blk_row[b, k], w, " ")
		s = w[3]
		var = sub(/\+[a-z_]+$/, "", s)
		if (s != value(size_e[n]) || var != size_var[n])
			d = d "\n# line " blk_at[b, k] ": " w[2] " is " w[3] " bytes, the record table says " value(size_e[n]) (size_var[n] ? " + its variable part" : "")
		if (w[4] != since(n))
			d = d "\n# line " blk_at[b, k] ": " w[2] " since " w[4] ", lib/protocol/wire.h says version " since(n)
		if (since(n) > vmax + 0)
			d = d "\n# " n " is of version " since(n) ", but WIRE_VERSION is " vmax
	}
	tap(d == "", "the record type table is enum wire_type, with the record table's sizes and versions", d)

	# Record types: each one's heading, layout and version.
	for (k = 1; k <= enum_n["wire_type"]; k++) {
		n = enum_m["wire_type", k]
		r = substr(n, 6)
		d = ""
		if (!(r in rec_num)) {
			tap(0, "record " r " (" mval[n] ") has its entry in Record types", "\n# no \".B " r " (" mval[n] "), ... bytes\" heading")
			continue
		}
		if (rec_num[r] != mval[n])
			d = d "\n# line " rec_at[r] ": type " rec_num[r] ", " n " is " mval[n]
		if (rec_size[r] != value(size_e[n]) || rec_var[r] != size_var[n])
			d = d "\n# line " rec_at[r] ": " rec_size[r] (rec_var[r] ? " + a variable part" : "") " bytes, the record table says " value(size_e[n]) (size_var[n] ? " + a variable part" : "")
		b = 0
		for (i = 1; i <= nb; i++)
			if (blk_rec[i] == r && blk_n[i] > 0 && blk_row[i, 1] ~ /^[ \t]*[0-9]/) {
				b = i
				break
			}
		if (b)
			d = d layout(b, 1, n, value("HDR"), value(size_e[n]), size_var[n])
		else if (enc[n] != "")
			d = d "\n# line " rec_at[r] ": no layout, but the code writes fields"
		if (since(n) > 1 && rec_ver[r] != since(n))
			d = d "\n# line " rec_at[r] ": " r " is of version " since(n) " (lib/protocol/wire.h); its text says " (rec_ver[r] == "" ? "no \"Version " since(n) "\"" : "\"Version " rec_ver[r] "\"")
		if (since(n) == 1 && rec_ver[r] != "")
			d = d "\n# line " rec_at[r] ": " r " is of version 1 (lib/protocol/wire.h); its text says \"Version " rec_ver[r] "\""
		tap(d == "", "record " r " (" mval[n] "): size, layout and version", d)
	}
	for (r in rec_num)
		if (!(("WIRE_" r) in mval))
			tap(0, "record " r " on the page is a record type of lib/protocol/wire.h", "\n# line " rec_at[r] ": lib/protocol/wire.h has no WIRE_" r)

	# RESUME_STREAM flags and ORIGIN families.
	b = find_block("value", "CONTROL RECORDS", "Record types")
	d = b ? flags(b, "WIRE_RS_", 1, 2, 0, 0) : "\n# no \"value name meaning\" table in Record types"
	tap(d == "", "the RESUME_STREAM flags are WIRE_RS_*", d)
	b = find_block("family", "CONTROL RECORDS", "Record types")
	d = b ? enum_table(b, "wire_family", "WIRE_FAM_") : "\n# no \"family name\" table in Record types"
	if (value("WIRE_FAM_MAX") != enum_max["wire_family"])
		d = d "\n# WIRE_FAM_MAX is " value("WIRE_FAM_MAX") ", the largest family " enum_max["wire_family"]
	tap(d == "", "the ORIGIN families are enum wire_family", d)

	# Reason codes.
	d = nreason ? "" : "\n# no \".B N\" entries in Reason codes"
	for (k = 1; k <= enum_n["wire_reason"]; k++) {
		n = enum_m["wire_reason", k]
		byval[mval[n]] = n
	}
	for (i = 1; i <= nreason; i++) {
		v = reason_num[i]
		if (!(v in byval)) {
			d = d "\n# line " reason_at[v] ": lib/protocol/wire.h has no reason " v
			continue
		}
		n = byval[v]
		if (!(n in reason_c))
			d = d "\n# wire_reason_str has no text for " n
		else if (index(reason_p[v], reason_c[n]) != 1)
			d = d "\n# line " reason_at[v] ": reason " v " should start \"" reason_c[n] "\" (wire_reason_str)"
		delete byval[v]
	}
	for (v in byval)
		d = d "\n# " byval[v] " (" v ") is not on the page"
	for (k = 1; k <= enum_n["wire_reason"]; k++) {
		n = enum_m["wire_reason", k]
		rtext[mval[n]] = reason_c[n]
	}
	for (i = 1; i <= nrn; i++) {
		v = rn_v[i]
		if (!(v in rtext))
			d = d "\n# line " rn_at[i] ": reason " v ": lib/protocol/wire.h has none"
		else if (rn_text[i] != "" && index(rtext[v], rn_text[i]) != 1 &&
		    index(rn_text[i], rtext[v]) != 1)
			d = d "\n# line " rn_at[i] ": reason " v " is \"" rtext[v] "\", not \"" rn_text[i] "\""
	}
	if (reason_default == "" || !saw_default)
		d = d "\n# the page does not say that other reasons show as \"" reason_default "\""
	tap(d == "", "the reason codes, and the reasons the text names, are enum wire_reason, with wire_reason_str's texts", d)

	# The numbers of the lines after ".\" check:".
	for (i = 1; i <= nchk; i++) {
		ne = split(chk_e[i], es, " ")
		want = ""
		d = ""
		for (k = 1; k <= ne; k++) {
			v = value(es[k])
			if (v == "?")
				d = d "\n# line " chk_at[i] ": " es[k] ": " why
			want = want " " v
		}
		got = numbers(chk_text[i])
		if (d == "" && got != want)
			d = "\n# line " chk_line[i] ": " chk_text[i] "\n# its numbers are" got ", the code says" want " (" chk_e[i] ")"
		if (chk_line[i] == "" || chk_line[i] == "none") {
			d = "\n# line " chk_at[i] ": no text line follows"
			chk_line[i] = chk_at[i]
		}
		tap(d == "", "line " chk_line[i] " says " chk_e[i], d)
	}
	print "1.." ntap
	exit failed
}
EOF
${AWK:-awk} -f "$prog" lib/protocol/wire.h lib/protocol/ring.h lib/protocol/engine.h lib/crypto/seal.h \
    lib/protocol/wire.c lib/protocol/engine.c lib/protocol/engine_recv.c man/rstreamd-protocol.7
