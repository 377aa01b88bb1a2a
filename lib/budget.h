/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * budget: a count of bytes that several threads charge at once against a
 * limit (ring memory against max_memory, a tunnel's against its share).
 *
 * A charge is reserved before the work it pays for, in one atomic step
 * that checks the limit and adds, and given back if the work fails: so
 * threads that charge at the same moment can never take the count past
 * the limit together, as a check in one step and an add in another would.
 */
#ifndef BUDGET_H
#define BUDGET_H

#include <stdint.h>

/**
 * budget_take(used, max, n):
 * Add ${n} to ${*used} unless that would take it past ${max} (0: no
 * limit), atomically.  Returns 0 if taken, or -1 (nothing changed).
 */
int budget_take(uint64_t *used, uint64_t max, uint64_t n);

/**
 * budget_give(used, n):
 * Give back ${n} of what budget_take added.
 */
void budget_give(uint64_t *used, uint64_t n);

/**
 * budget_now(used):
 * The count now.
 */
uint64_t budget_now(const uint64_t *used);

#endif /* !BUDGET_H */
