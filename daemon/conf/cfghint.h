/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * cfghint: why libconfig found a file's syntax wrong, from the text.
 *
 * libconfig says "syntax error" and a line.  To say why, the file is read
 * again by a scanner and a checker of libconfig's grammar (scanner.l and
 * grammar.y, small enough to follow): the first token the grammar cannot
 * take is the one libconfig stopped at, and what came before it says what
 * is wrong.  A hint is given only when that token is on libconfig's line,
 * so a checker that strays from libconfig says nothing rather than
 * something wrong.
 */
#ifndef CFGHINT_H
#define CFGHINT_H

#include <stddef.h>

/**
 * cfghint_syntax(file, line, out, outlen):
 * Why libconfig (this one: its version decides whether a comma may end a
 * list) stopped with "syntax error" at line ${line} of ${file}, from the
 * text: "a comma before ')' (line 43): ...", "log_level is not quoted:
 * ...", a byte order mark, a string or bracket not closed, single or
 * typographic quotes, and so on.  Writes it into ${out} and returns 0, or
 * returns -1 with ${out} untouched when the text says nothing sure (the
 * first mistake found is not on ${line}, the file cannot be read, or is
 * beyond 16 MiB).  Reads the file again; never exits or aborts on any
 * text.
 */
int cfghint_syntax(const char *file, int line, char *out, size_t outlen);

/**
 * cfghint_duplicate(file, line, out, outlen):
 * The same for libconfig's "duplicate setting name" at line ${line}:
 * which name, and the line it was first set at in the same group.
 */
int cfghint_duplicate(const char *file, int line, char *out,
    size_t outlen);

/**
 * cfghint_open_comment(file):
 * The line of a comment ${file} opens ("/" "*") and never closes, or 0.
 * libconfig 1.5 takes such a file without a word: everything after the
 * opening is comment, so the settings there are silently missing.
 */
int cfghint_open_comment(const char *file);

#endif /* !CFGHINT_H */
