/* acts.h — the `acts` language of the option table (config.h): where a key has an effect.
 * acts.c parses it; config.c asks it at start-up and of the table in the unit test. */
#ifndef HL_ACTS_H
#define HL_ACTS_H

#include <stdbool.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)     /* internal, as hl.h's */

/* Whether an `acts` string holds under `strategy` with the effective configuration. */
bool hl_acts_hold(const char *acts, const char *strategy);
/* " (key=value, ...)": the effective values of the keys acts's conditions name, or "". */
void hl_acts_conditions(const char *acts, char *buf, size_t len);
/* 0 if acts names only known strategies (or "all") and conditions on enum or bool keys with
 * values they can take; else -1. */
int hl_acts_check(const char *acts);

#pragma GCC visibility pop

#endif
