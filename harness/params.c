/* params.c — a workload's parameters: the getters the workloads call, setting one from its
 * text (a default or an option's value), and --scale. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "run.h"

int hb_param_index(const struct hb_workload *w, const char *name)
{
    for (int i = 0; w->params[i].name; i++)
        if (!strcmp(w->params[i].name, name)) return i;
    return -1;
}

static const union hb_value *param(const struct hb_run *r, const char *name, enum hb_kind k)
{
    int i = hb_param_index(r->w, name);
    if (i < 0 || r->w->params[i].kind != k) {
        fprintf(stderr, "hlbench: internal error: %s has no parameter %s of that kind\n",
                r->w->name, name);
        abort();
    }
    return &r->val[i];
}

long long hb_int(const struct hb_run *r, const char *name) { return param(r, name, HB_INT)->i; }
double hb_real(const struct hb_run *r, const char *name) { return param(r, name, HB_REAL)->d; }
const char *hb_str(const struct hb_run *r, const char *name) { return param(r, name, HB_STR)->s; }

bool hb_parse_int(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno || end == s || *end || v < 0) return false;
    *out = v;
    return true;
}

bool hb_parse_real(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0) return false;
    *out = v;
    return true;
}

bool hb_param_set(struct hb_run *r, int i, const char *text)
{
    switch (r->w->params[i].kind) {
    case HB_INT:  return hb_parse_int(text, &r->val[i].i);
    case HB_REAL: return hb_parse_real(text, &r->val[i].d);
    case HB_STR:  r->val[i].s = text; return true;
    }
    return false;
}

/* --scale multiplies the amount of work: scaled parameters, at least 1 (or > 0 for reals). */
void hb_params_scale(struct hb_run *r)
{
    for (int i = 0; r->w->params[i].name; i++) {
        if (!r->w->params[i].scaled) continue;
        if (r->w->params[i].kind == HB_INT) {
            long long v = llround((double)r->val[i].i * r->scale);
            r->val[i].i = v < 1 ? 1 : v;
        } else if (r->w->params[i].kind == HB_REAL) {
            r->val[i].d *= r->scale;
        }
    }
}
