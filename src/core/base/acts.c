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
 * condition names an ENUM or BOOL key and values it can take (hl_acts_check). It runs inside
 * malloc's first call, as config.c does: no malloc, no stdio but snprintf into a buffer. */
#include <stdio.h>
#include <string.h>
#include "hl.h"
#include "acts.h"

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

/* The key named by [k, k + n) as a string in buf (n < len), or NULL if no key has that name. */
static const char *key_name(const char *k, size_t n, char *buf, size_t len)
{
    char value[256];
    if (n >= len) return NULL;
    memcpy(buf, k, n);
    buf[n] = 0;
    return hl_config_value(buf, value, sizeof value) ? buf : NULL;
}

static bool names_strategy(const char *w, size_t n, const void *strategy)
{
    return word_is(w, n, "all") || word_is(w, n, strategy);
}

static bool is_value(const char *w, size_t n, const void *value) { return word_is(w, n, value); }

/* "key=v1|v2" in [c, end) holds for the effective configuration. */
static bool condition_holds(const char *c, const char *end)
{
    const char *eq = memchr(c, '=', (size_t)(end - c));
    char key[64], value[256];
    if (!eq || !key_name(c, (size_t)(eq - c), key, sizeof key))
        return false;                           /* hl_acts_check rules it out */
    hl_config_value(key, value, sizeof value);
    return each_word(eq + 1, end, "|", is_value, value);
}

bool hl_acts_hold(const char *acts, const char *strategy)
{
    for (const char *p = acts; *p;) {
        const char *end = p + strcspn(p, ";"), *cond = find_if(p, end);
        if (each_word(p, cond, ", ", names_strategy, strategy) &&
            (cond == end || condition_holds(cond + 4, end)))
            return true;
        p = *end ? end + 1 : end;
    }
    return false;
}

void hl_acts_conditions(const char *acts, char *buf, size_t len)
{
    size_t n = 0;
    char key[64], value[256];
    buf[0] = 0;
    for (const char *p = acts; *p;) {
        const char *end = p + strcspn(p, ";"), *cond = find_if(p, end), *eq;
        const char *c = NULL;
        if (cond < end && (eq = memchr(cond, '=', (size_t)(end - cond))))
            c = key_name(cond + 4, (size_t)(eq - cond - 4), key, sizeof key);
        if (c && !strstr(buf, c))
            n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s=%s", n ? ", " : " (",
                                  c, hl_config_value(c, value, sizeof value));
        p = *end ? end + 1 : end;
    }
    if (n) snprintf(buf + n, n < len ? len - n : 0, ")");
}

static bool known_strategy(const char *w, size_t n, const void *arg)
{
    (void)arg;
    if (word_is(w, n, "all")) return false;
    for (int i = 0; hl_strategy_names[i]; i++)
        if (word_is(w, n, hl_strategy_names[i])) return false;
    return true;                                /* true: stop, an unknown name */
}

/* A value a condition names that its key cannot take (arg: the key's values). */
static bool not_a_value(const char *w, size_t n, const void *arg)
{
    for (const char *const *v = arg; *v; v++)
        if (word_is(w, n, *v)) return false;
    return true;
}

int hl_acts_check(const char *acts)
{
    for (const char *p = acts; *p;) {
        const char *end = p + strcspn(p, ";"), *cond = find_if(p, end);
        const char *eq = cond < end ? memchr(cond, '=', (size_t)(end - cond)) : NULL;
        const char *const *values =
            eq ? hl_config_values(cond + 4, (size_t)(eq - cond - 4)) : NULL;
        if (cond == p || each_word(p, cond, ", ", known_strategy, NULL) ||
            (cond < end && (!values || each_word(eq + 1, end, "|", not_a_value, values))))
            return -1;
        p = *end ? end + 1 : end;
    }
    return 0;
}
