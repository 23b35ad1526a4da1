/* config.c — the configuration: one table (config.h) drives parsing of the INI file and the
 * environment, validation, the printouts and HOARD_VERBOSE.
 *
 * Precedence, lowest first: the table's default, the strategy's paper defaults, the file named
 * by HOARD_CONFIG, HOARD_<KEY> variables. Runs inside malloc's first call, so it uses no
 * malloc and no stdio: the file is read into a static buffer and parsed with inih's
 * ini_parse_string (which keeps its line buffer on the stack). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base.h"

/* The ENUM keys' names (config.h's HL_ENUMS). */
#define HL_ENUM_NAME(constant, name) name,
#define HL_ENUM_DEFINE(names, choices) const char *const names[] = { choices NULL };
HL_ENUMS(HL_ENUM_DEFINE, HL_ENUM_NAME)
#undef HL_ENUM_DEFINE
#undef HL_ENUM_NAME

/* The `strategy` key's choices: the strategies compiled in, by name, in the order of the one
 * list (src/meson.build's HL_STRATEGY_LIST), which is the order of the registry's rows
 * (front/registry.c), so a choice's index is its row's. Names only: the rows stand at the
 * top, the configuration at the bottom. */
#define HL_STRATEGY_NAME(name) #name,
const char *const hl_strategy_names[] = { HL_STRATEGY_LIST(HL_STRATEGY_NAME) NULL };
#undef HL_STRATEGY_NAME

enum kind { BOOL, INT, SIZE, POW2, REAL, ENUM, STR, PCOUNT, OUTPUT };
static const char *const kind_names[] = { "bool", "int", "size", "pow2", "real", "enum",
                                          "string", "count", "output" };

struct option {
    const char *name, *section;
    const char *file;                   /* the file that implements it (config.h) */
    enum kind kind;
    const char *def;
    double min, max;
    const char *const *choices;         /* ENUM; NULL for `strategy`: the registry's names */
    const char *acts;                   /* where it has an effect (config.h) */
    const char *help;
    size_t offset;
};

static const struct option options[] = {
#define HL_OPTION_ROW(name, section, file, kind, def, min, max, choices, acts, help)            \
    { #name, #section, file, kind, def, min, max, choices, acts, help,                           \
      offsetof(struct hl_config, name) },
    HL_OPTIONS(HL_OPTION_ROW)
#undef HL_OPTION_ROW
};
#define NOPTIONS (sizeof options / sizeof options[0])

enum source { FROM_DEFAULT, FROM_STRATEGY, FROM_FILE, FROM_ENV };
static const char *const source_names[] = { "default", "strategy", "file", "env" };

struct hl_config hl_cfg;
static enum source sources[NOPTIONS];

/* ---- small text helpers (no stdio) ---------------------------------------------------------- */

static const struct option *option_find(const char *name, size_t len)
{
    for (size_t i = 0; i < NOPTIONS; i++)
        if (strlen(options[i].name) == len && !strncasecmp(options[i].name, name, len))
            return &options[i];
    return NULL;
}

/* Append the choices of an ENUM (or the valid keys) to buf as "a, b, c". */
static void choices_text(const struct option *o, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (unsigned i = 0;; i++) {
        const char *c = o->choices ? o->choices[i] : hl_strategy_names[i];
        if (!c) break;
        n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", i ? ", " : "", c);
    }
}

static void keys_text(char *buf, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < NOPTIONS; i++)
        n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", i ? ", " : "",
                              options[i].name);
}

static void range_text(const struct option *o, char *buf, size_t len)
{
    switch (o->kind) {
    case BOOL: snprintf(buf, len, "on, off"); break;
    case ENUM: choices_text(o, buf, len); break;
    case STR:  snprintf(buf, len, "any text"); break;
    case OUTPUT: snprintf(buf, len, "stderr, off (or empty), or a path containing '/'"); break;
    case REAL: snprintf(buf, len, "%g .. %g (or p/q)", o->min, o->max); break;
    case PCOUNT: snprintf(buf, len, "%g .. %g, or NP (N x processors)", o->min, o->max); break;
    case POW2: snprintf(buf, len, "power of two, %.0f .. %.0f (K/M/G)", o->min, o->max); break;
    case SIZE: snprintf(buf, len, "%.0f .. %.0f (K/M/G)", o->min, o->max); break;
    default:   snprintf(buf, len, "%.0f .. %.0f", o->min, o->max); break;
    }
}

/* ---- parsing one value ---------------------------------------------------------------------- */

static char strpool[4096];
static size_t strpool_used;

static const char *keep_string(const char *s)
{
    size_t n = strlen(s) + 1;
    if (strpool_used + n > sizeof strpool) return NULL;
    char *p = memcpy(strpool + strpool_used, s, n);
    strpool_used += n;
    return p;
}

static int parse_number(const char *s, double *out, bool suffixes)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno) return -1;
    if (suffixes && *end) {
        switch (toupper((unsigned char)*end)) {
        case 'K': v *= 1024.0; break;
        case 'M': v *= 1024.0 * 1024; break;
        case 'G': v *= 1024.0 * 1024 * 1024; break;
        default: return -1;
        }
        end++;
        if (toupper((unsigned char)*end) == 'B') end++;
    } else if (*end == '/') {            /* a fraction p/q, e.g. 1/4 */
        double q;
        char *qend;
        q = strtod(end + 1, &qend);
        if (qend == end + 1 || q == 0) return -1;
        v /= q;
        end = qend;
    }
    if (*end) return -1;
    /* NaN and infinities pass every range test (strtod accepts "nan", "inf"), and a value
     * beyond long long makes the integer checks' conversion undefined: no key wants either. */
    if (!(v >= -4e18 && v <= 4e18)) return -1;
    *out = v;
    return 0;
}

/* Store text as option o's value. On error, writes the reason to why and returns -1. */
static int set_value(const struct option *o, const char *text, char *why, size_t wlen)
{
    char *field = (char *)&hl_cfg + o->offset;
    char range[512];
    double v = 0;

    while (isspace((unsigned char)*text)) text++;
    switch (o->kind) {
    case BOOL: {
        static const char *const yes[] = { "on", "1", "true", "yes" },
                          *const no[]  = { "off", "0", "false", "no" };
        for (int i = 0; i < 4; i++) {
            if (!strcasecmp(text, yes[i])) { *(int *)field = 1; return 0; }
            if (!strcasecmp(text, no[i]))  { *(int *)field = 0; return 0; }
        }
        snprintf(why, wlen, "'%s' is not a boolean; valid: on, off", text);
        return -1;
    }
    case ENUM:
        for (int i = 0;; i++) {
            const char *c = o->choices ? o->choices[i] : hl_strategy_names[i];
            if (!c) break;
            if (!strcasecmp(text, c)) { *(int *)field = i; return 0; }
        }
        choices_text(o, range, sizeof range);
        /* the strategies are the build's: a new one needs its name in meson_options.txt and
         * a build that took it (tools/hoardlab build does both checks; docs/lab.md) */
        snprintf(why, wlen, "'%s' is not one of: %s%s", text, range, o->choices ? "" :
                 " (the strategies this build compiled in: a new one is named in "
                 "meson_options.txt, then tools/hoardlab build)");
        return -1;
    case OUTPUT:
        /* A bare word is a typo of stderr or off far more often than a file name: sterr
         * would quietly write a file of that name in whatever directory the program ran. */
        if (*text && strcmp(text, "stderr") && strcmp(text, "off") && !strchr(text, '/')) {
            snprintf(why, wlen, "'%.200s' is not an output; valid: stderr, off (or empty), or "
                     "a path containing '/' (e.g. ./%.200s)", text, text);
            return -1;
        }
        /* fall through */
    case STR: {
        const char *kept = keep_string(text);
        if (!kept) { snprintf(why, wlen, "value too long"); return -1; }
        *(const char **)field = kept;
        return 0;
    }
    case PCOUNT: {
        size_t n = strlen(text);
        double mult = 1;
        char num[64];
        if (n && toupper((unsigned char)text[n - 1]) == 'P') {
            mult = hl_nprocs();
            n--;
        }
        if (n == 0) { v = 1; }
        else if (n >= sizeof num) goto bad;
        else {
            memcpy(num, text, n);
            num[n] = 0;
            if (parse_number(num, &v, false) || v != (double)(long long)v) goto bad;
        }
        v *= mult;
        break;
    }
    case INT:
        if (parse_number(text, &v, false) || v != (double)(long long)v) goto bad;
        break;
    case SIZE: case POW2:
        if (parse_number(text, &v, true) || v != (double)(long long)v) goto bad;
        break;
    case REAL:
        if (parse_number(text, &v, false)) goto bad;
        break;
    }
    if (v < o->min || v > o->max || (o->kind == POW2 && !hl_is_pow2((size_t)v))) goto bad;
    switch (o->kind) {
    case INT: case PCOUNT: *(long *)field = (long)v; break;
    case SIZE: case POW2: *(size_t *)field = (size_t)v; break;
    case REAL: *(double *)field = v; break;
    default: break;
    }
    return 0;
bad:
    range_text(o, range, sizeof range);
    snprintf(why, wlen, "'%s' is out of range or malformed; valid: %s", text, range);
    return -1;
}

/* ---- the sources --------------------------------------------------------------------------- */

static void apply_defaults(void)
{
    char why[256];
    strpool_used = 0;
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (set_value(&options[i], options[i].def, why, sizeof why))
            hl_die("internal: default of '%s': %s", options[i].name, why);
        sources[i] = FROM_DEFAULT;
    }
}

/* "key=value key=value", the paper defaults of strategy `name` (its row's): only keys nobody
 * set explicitly. */
static void apply_strategy_defaults(const char *name, const char *defaults)
{
    const char *p = defaults;
    char key[64], val[128], why[256];
    while (p && *p) {
        while (*p == ' ') p++;
        size_t k = strcspn(p, "="), vlen;
        if (!p[k] || k >= sizeof key) hl_die("internal: strategy %s defaults", name);
        memcpy(key, p, k); key[k] = 0;
        p += k + 1;
        vlen = strcspn(p, " ");
        if (vlen >= sizeof val) hl_die("internal: strategy %s defaults", name);
        memcpy(val, p, vlen); val[vlen] = 0;
        p += vlen;
        const struct option *o = option_find(key, strlen(key));
        if (!o || set_value(o, val, why, sizeof why))
            hl_die("internal: strategy %s default %s=%s", name, key, val);
        sources[o - options] = FROM_STRATEGY;
    }
}

struct file_ctx { const char *path; char why[2048]; bool failed; };

static int on_ini_pair(void *user, const char *section, const char *name, const char *value)
{
    struct file_ctx *ctx = user;
    char why[512], keys[1024];
    const struct option *o = option_find(name, strlen(name));
    if (!o) {
        keys_text(keys, sizeof keys);
        snprintf(ctx->why, sizeof ctx->why, "unknown key '%s' in [%s]; valid keys: %s", name,
                 section, keys);
    } else if (strcasecmp(section, o->section)) {
        snprintf(ctx->why, sizeof ctx->why, "key '%s' belongs in section [%s], not [%s]",
                 name, o->section, section);
    } else if (set_value(o, value, why, sizeof why)) {
        snprintf(ctx->why, sizeof ctx->why, "key '%s': %s", name, why);
    } else {
        sources[o - options] = FROM_FILE;
        return 1;
    }
    ctx->failed = true;
    return 0;
}

int hl_config_parse_text(const char *name, const char *text, char *err, size_t len)
{
    struct file_ctx ctx = { .path = name };
    bool stop = ini_stop_on_first_error;
    ini_stop_on_first_error = true;
    int line = ini_parse_string(text, on_ini_pair, &ctx);
    ini_stop_on_first_error = stop;
    if (line > 0)
        snprintf(err, len, "%s:%d: %s", name, line,
                 ctx.failed ? ctx.why : "malformed line; expected '[section]' or 'key = value'");
    else if (line < 0)
        snprintf(err, len, "%s: cannot parse config file", name);
    return line ? -1 : 0;
}

/* The config file as read, for the line of a key that acts nowhere (check_acts). */
static char file_text[64 * 1024];
static const char *file_path;

static void load_file(const char *path)
{
    char *text = file_text;
    size_t size = sizeof file_text;
    char err[2600];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) hl_die("%s: cannot open config file (HOARD_CONFIG): %s", path, strerror(errno));
    size_t n = 0;
    ssize_t r;
    while ((r = read(fd, text + n, size - 1 - n)) > 0) n += (size_t)r;
    close(fd);
    if (r < 0) hl_die("%s: cannot read config file: %s", path, strerror(errno));
    if (n == size - 1) hl_die("%s: config file larger than %zu bytes", path, n);
    text[n] = 0;
    file_path = path;
    if (hl_config_parse_text(path, text, err, sizeof err)) hl_die("%s", err);
}

/* HOARD_<KEY>=value for every key; any other HOARD_* name is a typo and stops the program. */
static void load_environment(void)
{
    extern char **environ;
    char why[512], keys[1024];
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "HOARD_", 6)) continue;
        const char *name = *e + 6, *eq = strchr(name, '=');
        if (!eq) continue;
        size_t len = (size_t)(eq - name);
        if (len == 6 && !strncmp(name, "CONFIG", 6)) continue;
        const struct option *o = option_find(name, len);
        if (!o) {
            keys_text(keys, sizeof keys);
            hl_die("environment: unknown variable HOARD_%.*s; valid: HOARD_CONFIG and HOARD_ "
                   "followed by a key in upper case: %s", (int)len, name, keys);
        }
        if (set_value(o, eq + 1, why, sizeof why))
            hl_die("environment: HOARD_%.*s: key '%s': %s", (int)len, name, o->name, why);
        sources[o - options] = FROM_ENV;
    }
}

static void load_explicit(void)
{
    const char *path = getenv("HOARD_CONFIG");
    file_path = NULL;
    if (path && *path) load_file(path);
    load_environment();
}

/* ---- where a key acts (the `acts` column: acts.c reads it) ------------------------------- */

/* The number of the last line of text that sets key in [section], or 0. */
static int line_of(const char *text, const char *section, const char *key)
{
    int line = 0, found = 0;
    bool in_section = false;
    size_t klen = strlen(key), slen = strlen(section);
    for (const char *p = text; *p; ) {
        size_t n = strcspn(p, "\n");
        line++;
        const char *q = p;
        while (q < p + n && isspace((unsigned char)*q)) q++;
        if (*q == '[')
            in_section = !strncasecmp(q + 1, section, slen) && q[1 + slen] == ']';
        else if (in_section && !strncasecmp(q, key, klen)) {
            q += klen;
            while (*q == ' ' || *q == '\t') q++;
            if (*q == '=' || *q == ':') found = line;
        }
        p += n + (p[n] != 0);
    }
    return found;
}

/* The table as the acts language (acts.c) asks it. */
static const char *value_text(const struct option *o, char *buf, size_t len);

static const char *key_value(const char *key, size_t n, char *buf, size_t len)
{
    const struct option *o = option_find(key, n);
    return o ? value_text(o, buf, len) : NULL;
}

static const char *const *key_values(const char *key, size_t n)
{
    static const char *const bools[] = { "on", "off", NULL };
    const struct option *o = option_find(key, n);
    if (!o || (o->kind != ENUM && o->kind != BOOL)) return NULL;
    if (o->kind == BOOL) return bools;
    return o->choices ? o->choices : hl_strategy_names;
}

static const struct hl_acts_table acts_table = { key_value, key_values, hl_strategy_names };

/* A key set explicitly (file or environment) that has no effect under the effective
 * configuration stops the program, like any bad input: an experiment that varies it would
 * present noise as its effect. Strategy defaults are not explicit. */
static void check_acts(void)
{
    const char *strategy = hl_strategy_names[hl_cfg.strategy];
    char conds[512];
    for (size_t i = 0; i < NOPTIONS; i++) {
        const struct option *o = &options[i];
        if (sources[i] < FROM_FILE || hl_acts_hold(&acts_table, o->acts, strategy)) continue;
        hl_acts_conditions(&acts_table, o->acts, conds, sizeof conds);
        if (sources[i] == FROM_ENV) {
            char env[64];
            size_t n = 0;
            for (const char *c = o->name; *c && n + 1 < sizeof env; c++)
                env[n++] = (char)toupper((unsigned char)*c);
            env[n] = 0;
            hl_die("environment: HOARD_%s: key '%s' has no effect under strategy '%s'%s; it "
                   "acts only under: %s", env, o->name, strategy, conds, o->acts);
        }
        hl_die("%s:%d: key '%s' has no effect under strategy '%s'%s; it acts only under: %s",
               file_path ? file_path : "config", file_path ? line_of(file_text, o->section,
               o->name) : 0, o->name, strategy, conds, o->acts);
    }
}


int hl_config_check_table(char *err, size_t len)
{
    for (size_t i = 0; i < NOPTIONS; i++) {
        const struct option *o = &options[i];
        if (hl_acts_check(&acts_table, o->acts)) {
            snprintf(err, len, "key '%s': acts '%s': an unknown strategy, or a condition "
                     "not on an enum or bool key, or not one of its values", o->name,
                     o->acts);
            return -1;
        }
    }
    return 0;
}

/* `tlab` is the older name of `cache` (on: thread, off: none), kept so configurations and
 * sweeps written with it run unchanged; hl_cfg.tlab is only ever cache == thread. Whichever
 * was set from the higher source gives the value; both set at one level must agree. */
static void one_cache(void)
{
    const struct option *t = option_find("tlab", 4), *c = option_find("cache", 5);
    enum source ts = sources[t - options], cs = sources[c - options];
    if (ts > cs) {
        hl_cfg.cache = hl_cfg.tlab ? HL_CACHE_THREAD : HL_CACHE_NONE;
        sources[c - options] = ts;
    } else if (ts == cs && ts >= FROM_FILE && hl_cfg.tlab != (hl_cfg.cache == HL_CACHE_THREAD)) {
        hl_die("%s: tlab = %s and cache = %s disagree; tlab is the older name of cache "
               "(on: thread, off: none): set one", source_names[ts], hl_cfg.tlab ? "on" : "off",
               hl_caches[hl_cfg.cache]);
    }
    if (cs > ts) sources[t - options] = cs;
    hl_cfg.tlab = hl_cfg.cache == HL_CACHE_THREAD;
}

void hl_config_load_with(const char *const defaults[])
{
    /* The strategy's paper defaults sit under the explicit values, and the strategy is itself
     * an explicit value: find it in a first pass, then build the configuration in order. */
    apply_defaults();
    load_explicit();
    int s = hl_cfg.strategy;
    apply_defaults();
    apply_strategy_defaults(hl_strategy_names[s], defaults[s]);
    load_explicit();
    one_cache();
    check_acts();
    hl_os_set_numa(hl_cfg.numa);
    HL_FAULT_CONFIGURE(hl_cfg);
}

/* ---- reading back --------------------------------------------------------------------------- */

static const char *value_text(const struct option *o, char *buf, size_t len)
{
    const char *field = (const char *)&hl_cfg + o->offset;
    switch (o->kind) {
    case BOOL: snprintf(buf, len, "%s", *(const int *)field ? "on" : "off"); break;
    case ENUM: {
        int i = *(const int *)field;
        snprintf(buf, len, "%s", o->choices ? o->choices[i] : hl_strategy_names[i]);
        break;
    }
    case STR: case OUTPUT: snprintf(buf, len, "%s", *(const char *const *)field); break;
    case INT: case PCOUNT: snprintf(buf, len, "%ld", *(const long *)field); break;
    case SIZE: case POW2: snprintf(buf, len, "%zu", *(const size_t *)field); break;
    case REAL: snprintf(buf, len, "%g", *(const double *)field); break;
    }
    return buf;
}

const char *hl_config_value(const char *key, char *buf, size_t len)
{
    const struct option *o = option_find(key, strlen(key));
    return o ? value_text(o, buf, len) : NULL;
}

/* dprintf may call malloc: used only by hlconfig and, for HOARD_VERBOSE, after init is done. */
void hl_config_print_effective(int fd)
{
    char buf[256];
    for (size_t i = 0; i < NOPTIONS; i++)
        dprintf(fd, "hoardlab: %-18s = %-12s (%s)\n", options[i].name,
                value_text(&options[i], buf, sizeof buf), source_names[sources[i]]);
}

static void json_string(int fd, const char *s)
{
    dprintf(fd, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') dprintf(fd, "\\%c", *s);
        else dprintf(fd, "%c", *s);
    }
    dprintf(fd, "\"");
}

void hl_config_print_table(int fd, int format)
{
    char range[512];
    if (format == HL_TABLE_MARKDOWN) {
        dprintf(fd, "# hoardlab configuration keys\n\nGenerated by `hlconfig --markdown` from the "
                    "table in `src/core/base/config.h`; do not edit.\n\nSet a key in the INI file "
                    "named by `HOARD_CONFIG` (in its section) or as `HOARD_<KEY>` in the "
                    "environment, which wins. Sizes take K/M/G; reals take p/q.\n\n"
                    "*Acts under* names the strategies where a key has an effect (and the value "
                    "another key must have there); setting a key anywhere else stops the "
                    "program at start-up (exit status 2), since it would change nothing. "
                    "*File* is the one file that implements the key: where its value acts.\n\n"
                    "| key | section | default | valid values | acts under | file | meaning |\n"
                    "|---|---|---|---|---|---|---|\n");
        for (size_t i = 0; i < NOPTIONS; i++) {
            range_text(&options[i], range, sizeof range);
            dprintf(fd, "| `%s` | %s | `%s` | %s | %s | `%s` | %s |\n", options[i].name,
                    options[i].section, *options[i].def ? options[i].def : "\"\"", range,
                    options[i].acts, options[i].file, options[i].help);
        }
        return;
    }
    int json = format == HL_TABLE_JSON;
    if (json) dprintf(fd, "[\n");
    for (size_t i = 0; i < NOPTIONS; i++) {
        const struct option *o = &options[i];
        range_text(o, range, sizeof range);
        if (!json) {
            dprintf(fd, "[%s] %s = %s\n    %s\n    acts under: %s\n    kind %s; valid: %s; "
                    "env HOARD_", o->section, o->name, o->def, o->help, o->acts,
                    kind_names[o->kind], range);
            for (const char *c = o->name; *c; c++) dprintf(fd, "%c", toupper((unsigned char)*c));
            dprintf(fd, "\n");
            continue;
        }
        dprintf(fd, "  {\"name\": \"%s\", \"section\": \"%s\", \"file\": \"%s\", \"kind\": \"%s\", "
                "\"default\": ", o->name, o->section, o->file, kind_names[o->kind]);
        json_string(fd, o->def);
        dprintf(fd, ", \"min\": %g, \"max\": %g, \"valid\": ", o->min, o->max);
        json_string(fd, range);
        dprintf(fd, ", \"choices\": [");
        if (o->kind == ENUM) {
            for (int c = 0;; c++) {
                const char *name = o->choices ? o->choices[c] : hl_strategy_names[c];
                if (!name) break;
                dprintf(fd, "%s\"%s\"", c ? ", " : "", name);
            }
        }
        dprintf(fd, "], \"acts\": ");
        json_string(fd, o->acts);
        dprintf(fd, ", \"help\": ");
        json_string(fd, o->help);
        dprintf(fd, ", \"env\": \"HOARD_");
        for (const char *c = o->name; *c; c++) dprintf(fd, "%c", toupper((unsigned char)*c));
        dprintf(fd, "\"}%s\n", i + 1 < NOPTIONS ? "," : "");
    }
    if (json) dprintf(fd, "]\n");
}
