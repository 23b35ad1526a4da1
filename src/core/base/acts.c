/* acts.c — the `acts` language: the column of the option table (config.h) that says where a
 * key has an effect, read at start-up (config.c's check_acts) and checked whole by the unit
 * test (hl_config_check_table).
 *
 *   acts    := clause { "; " clause }
 *   clause  := names [ " if " KEY "=" VALUE { "|" VALUE } ]
 *   names   := "all" or strategies, separated by ", " (or spaces)
 *
 * A clause holds when its names include the running strategy (or "all") and its condition,
 * if any, holds for the effective configuration; the string holds when one clause does. A
 * condition names an ENUM or BOOL key and values it can take (hl_acts_check). The table is
 * asked through struct hl_acts_table, so this file knows no key. It runs inside malloc's
 * first call, as config.c does: no malloc, no stdio but snprintf into a buffer. */
#include <stdio.h>
#include <string.h>
#include "base.h"

static bool word_is(const char *w, size_t n, const char *s)
{
    return strlen(s) == n && !strncmp(w, s, n);
}

/* The first " if " in [p, end), or end. */
static const char *find_if(const char *p, const char *end)
{
    for (; p + 4 <= end; p++)
        if (!strncmp(p, " if ", 4)) return p;
    return end;
}

/* Calls fn on each name of a list "a, b c" in [p, end); stops at the first that returns true. */
static bool each_word(const char *p, const char *end, const char *sep,
                      bool (*fn)(const char *w, size_t n, const void *arg), const void *arg)
{
    while (p < end) {
        size_t n = strcspn(p, sep);
        if (p + n > end) n = (size_t)(end - p);
        if (n && fn(p, n, arg)) return true;
        p += n + 1;
    }
    return false;
}

static bool names_strategy(const char *w, size_t n, const void *strategy)
{
    return word_is(w, n, "all") || word_is(w, n, strategy);
}

static bool is_value(const char *w, size_t n, const void *value) { return word_is(w, n, value); }

/* "key=v1|v2" in [c, end) holds for the effective configuration. */
static bool condition_holds(const struct hl_acts_table *t, const char *c, const char *end)
{
    const char *eq = memchr(c, '=', (size_t)(end - c));
    char value[256];
    if (!eq || !t->value(c, (size_t)(eq - c), value, sizeof value))
        return false;                           /* hl_acts_check rules it out */
    return each_word(eq + 1, end, "|", is_value, value);
}

bool hl_acts_hold(const struct hl_acts_table *t, const char *acts, const char *strategy)
{
    for (const char *p = acts; *p;) {
        const char *end = p + strcspn(p, ";"), *cond = find_if(p, end);
        if (each_word(p, cond, ", ", names_strategy, strategy) &&
            (cond == end || condition_holds(t, cond + 4, end)))
            return true;
        p = *end ? end + 1 : end;
    }
    return false;
}

void hl_acts_conditions(const struct hl_acts_table *t, const char *acts, char *buf,
                        size_t len)
{
    size_t n = 0;
    char key[64], value[256];
    buf[0] = 0;
    for (const char *p = acts; *p;) {
        const char *end = p + strcspn(p, ";"), *cond = find_if(p, end), *eq;
        size_t k;
        if (cond < end && (eq = memchr(cond, '=', (size_t)(end - cond))) &&
            (k = (size_t)(eq - cond - 4)) < sizeof key &&
            t->value(cond + 4, k, value, sizeof value)) {
            memcpy(key, cond + 4, k);
            key[k] = 0;
            if (!strstr(buf, key))
                n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s=%s",
                                      n ? ", " : " (", key, value);
        }
        p = *end ? end + 1 : end;
    }
    if (n) snprintf(buf + n, n < len ? len - n : 0, ")");
}

/* A word not in the list arg (NULL-terminated): true, to stop at it. */
static bool not_in(const char *w, size_t n, const void *arg)
{
    for (const char *const *v = arg; *v; v++)
        if (word_is(w, n, *v)) return false;
    return true;
}

static bool unknown_strategy(const char *w, size_t n, const void *strategies)
{
    return !word_is(w, n, "all") && not_in(w, n, strategies);
}

int hl_acts_check(const struct hl_acts_table *t, const char *acts)
{
    for (const char *p = acts; *p;) {
        const char *end = p + strcspn(p, ";"), *cond = find_if(p, end);
        const char *eq = cond < end ? memchr(cond, '=', (size_t)(end - cond)) : NULL;
        const char *const *values =
            eq ? t->values(cond + 4, (size_t)(eq - cond - 4)) : NULL;
        if (cond == p || each_word(p, cond, ", ", unknown_strategy, t->strategies) ||
            (cond < end && (!values || each_word(eq + 1, end, "|", not_in, values))))
            return -1;
        p = *end ? end + 1 : end;
    }
    return 0;
}
