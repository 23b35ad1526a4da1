/* acts.h — the `acts` language of the option table (config.h): where a key has an effect.
 * acts.c parses it; config.c asks it at start-up and of the table in the unit test. */
#ifndef HL_ACTS_H
#define HL_ACTS_H

#include <stdbool.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)     /* internal to the library */

/* What the language asks of the option table (config.c gives it): [key, key + n) names a key. */
struct hl_acts_table {
    /* the key's effective value as text in buf, or NULL if there is no such key */
    const char *(*value)(const char *key, size_t n, char *buf, size_t len);
    /* the values an ENUM or BOOL key can take (NULL-terminated), or NULL for another key */
    const char *const *(*values)(const char *key, size_t n);
    const char *const *strategies;       /* the strategies' names, NULL-terminated */
};

/* Whether an `acts` string holds under `strategy` with the effective configuration. */
bool hl_acts_hold(const struct hl_acts_table *t, const char *acts, const char *strategy);
/* " (key=value, ...)": the effective values of the keys acts's conditions name, or "". */
void hl_acts_conditions(const struct hl_acts_table *t, const char *acts, char *buf, size_t len);
/* 0 if acts names only known strategies (or "all") and conditions on enum or bool keys with
 * values they can take; else -1. */
int hl_acts_check(const struct hl_acts_table *t, const char *acts);

#pragma GCC visibility pop

#endif
