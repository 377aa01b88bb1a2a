#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The bash completion of rstreamctl (contrib/bash-completion/rstreamctl),
# sourced into bash as bash-completion would: each case sets COMP_WORDS
# and COMP_CWORD as bash does, calls _rstreamctl, and reads COMPREPLY.
# Its commands and options are the built rstreamctl's own (its help), and
# "check" completes nothing, and prints nothing, when no daemon answers
# (tests/e2e/01-cli.bats completes a running daemon's tunnels).  TAP.
# make check runs it with sh.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
srcdir=${RSTREAMD_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${RSTREAMD_BUILDDIR:-$srcdir}
ctl=$builddir/daemon/rstreamctl
script=$srcdir/contrib/bash-completion/rstreamctl
# shellcheck source=tests/tap.sh
. "$srcdir/tests/tap.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rstreamd-completion.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# complete WORD...: the completions of the last WORD (after the others),
# sorted, one line; what the completion printed goes to $tmp/said.
complete_words() {
	COMP_WORDS=("$ctl" "$@")
	COMP_CWORD=$#
	COMPREPLY=()
	_rstreamctl >"$tmp/said" 2>&1
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

# expect DESCRIPTION WANT WORD...: the completions are WANT.
expect() {
	local d=$1 want=$2 got
	shift 2
	got=$(complete_words "$@")
	if [ "$got" = "$want" ]; then
		ok "$d"
	else
		not_ok "$d"
		echo "# want: '$want'"
		echo "# got:  '$got'"
	fi
}

if bash -n "$script" && ! head -n 1 "$script" | grep -q '^#!'; then
	ok "the script is bash, without a #! line (it is sourced)"
else
	not_ok "the script is bash, without a #! line (it is sourced)"
fi
# shellcheck source=contrib/bash-completion/rstreamctl
. "$script"
if [ "$(complete -p rstreamctl 2>/dev/null)" = "complete -F _rstreamctl rstreamctl" ]; then
	ok "sourced, it completes rstreamctl with _rstreamctl"
else
	not_ok "sourced, it completes rstreamctl with _rstreamctl"
fi

# What the built rstreamctl says it has.
help_cmds=$("$ctl" help | sed -n 's/^  \([a-z][a-z]*\)\( .*\)\{0,1\}$/\1/p' |
    sort | tr '\n' ' ' | sed 's/ $//')
help_opts=$("$ctl" -h | grep -o -- ' -[a-zA-Z], --[a-z]*' | tr -d ',' |
    tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//')
if [ -n "$help_cmds" ]; then
	ok "rstreamctl help lists its commands ($help_cmds)"
else
	not_ok "rstreamctl help lists its commands"
fi

expect "the first word: every command rstreamctl help lists" \
    "$help_cmds" ""
expect "options: every option rstreamctl -h lists ($help_opts)" \
    "$help_opts" -
expect "a command by its start" "stats status streams" st
expect "long options by their start" "--config" --c
expect "a command after options" "links" -j -s /x li
expect "-o: the formats" "json table wide" -o ""
expect "-o: a format by its start" "wide" -o w
expect "--output=: the formats (bash breaks the word at =)" \
    "json table wide" --output = ""
expect "--output=w" "wide" --output = w
expect "help: the commands" "$help_cmds" help ""
expect "help takes one command" "" help links ""
expect "a command without arguments takes none" "" links ""
expect "options after the command" "--json" links --j
mkdir "$tmp/keys" && : >"$tmp/keys/node.key" && : >"$tmp/keys/other.key"
expect "keygen: a file" "$tmp/keys/node.key" keygen "$tmp/keys/n"
expect "pubkey: a file" "$tmp/keys/node.key $tmp/keys/other.key" \
    pubkey "$tmp/keys/"
expect "-s: a file" "$tmp/keys/other.key" -s "$tmp/keys/o"
expect "check, no daemon answering: no tunnel" "" -s "$tmp/none.sock" \
    check ""
if [ ! -s "$tmp/said" ]; then
	ok "and nothing printed"
else
	not_ok "and nothing printed"
	sed 's/^/# /' "$tmp/said"
fi
echo "1..$n"
exit $fail
