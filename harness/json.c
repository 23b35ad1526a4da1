/* json.c — a small JSON writer into a growing buffer: commas and quoting are its business,
 * so records and workload extras are built with calls, never hand-written format strings. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

void hb_json_init(struct hb_json *j)
{
    memset(j, 0, sizeof *j);
    j->first[0] = true;
}

void hb_json_free(struct hb_json *j)
{
    free(j->buf);
    memset(j, 0, sizeof *j);
}

static void put(struct hb_json *j, const char *s, size_t n)
{
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 256;
        while (j->len + n + 1 > cap) cap *= 2;
        char *b = realloc(j->buf, cap);
        if (!b) hb_fail("out of memory writing a record");
        j->buf = b;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = 0;
}

static void puts_(struct hb_json *j, const char *s) { put(j, s, strlen(s)); }

static void quoted(struct hb_json *j, const char *s)
{
    put(j, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char e[2] = { '\\', (char)c };
            put(j, e, 2);
        } else if (c < 0x20) {
            char e[8];
            snprintf(e, sizeof e, "\\u%04x", c);
            puts_(j, e);
        } else {
            put(j, (const char *)&c, 1);
        }
    }
    put(j, "\"", 1);
}

/* Comma and key before a value. */
static void lead(struct hb_json *j, const char *key)
{
    if (!j->first[j->depth]) put(j, ", ", 2);
    j->first[j->depth] = false;
    if (key) {
        quoted(j, key);
        put(j, ": ", 2);
    }
}

static void open_(struct hb_json *j, const char *key, const char *bracket)
{
    lead(j, key);
    puts_(j, bracket);
    if (j->depth + 1 >= (int)(sizeof j->first / sizeof j->first[0]))
        hb_fail("JSON nested too deeply");
    j->first[++j->depth] = true;
}

void hb_json_obj(struct hb_json *j, const char *key) { open_(j, key, "{"); }
void hb_json_arr(struct hb_json *j, const char *key) { open_(j, key, "["); }

void hb_json_end(struct hb_json *j, char close)
{
    put(j, &close, 1);
    j->depth--;
}

void hb_json_raw(struct hb_json *j, const char *key, const char *text)
{
    lead(j, key);
    puts_(j, text);
}

void hb_json_int(struct hb_json *j, const char *key, long long v)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", v);
    hb_json_raw(j, key, b);
}

void hb_json_uint(struct hb_json *j, const char *key, unsigned long long v)
{
    char b[32];
    snprintf(b, sizeof b, "%llu", v);
    hb_json_raw(j, key, b);
}

void hb_json_real(struct hb_json *j, const char *key, double v)
{
    char b[40];
    if (!isfinite(v)) {
        hb_json_raw(j, key, "null");
        return;
    }
    snprintf(b, sizeof b, "%.12g", v);
    if (!strpbrk(b, ".eE")) strcat(b, ".0");    /* stays a float for readers */
    hb_json_raw(j, key, b);
}

void hb_json_str(struct hb_json *j, const char *key, const char *s)
{
    if (!s) {
        hb_json_raw(j, key, "null");
        return;
    }
    lead(j, key);
    quoted(j, s);
}

void hb_json_bool(struct hb_json *j, const char *key, bool v)
{
    hb_json_raw(j, key, v ? "true" : "false");
}
void hb_json_null(struct hb_json *j, const char *key) { hb_json_raw(j, key, "null"); }
