/* registry.c — the dispatch table: every strategy, listed once. The order is the order of
 * `hlconfig --strategies` and of the `strategy` key's choices. The Meson option `strategies`
 * chooses which are compiled in (HL_WITH_<NAME>). */
#include <string.h>
#include "hl.h"

extern const struct hl_strategy hl_strategy_serial, hl_strategy_concurrent;
extern const struct hl_strategy hl_strategy_private, hl_strategy_ownership, hl_strategy_hoard;

const struct hl_strategy *const hl_strategies[] = {
#ifdef HL_WITH_SERIAL
    &hl_strategy_serial,
#endif
#ifdef HL_WITH_CONCURRENT
    &hl_strategy_concurrent,
#endif
#ifdef HL_WITH_PRIVATE
    &hl_strategy_private,
#endif
#ifdef HL_WITH_OWNERSHIP
    &hl_strategy_ownership,
#endif
#ifdef HL_WITH_HOARD
    &hl_strategy_hoard,
#endif
    NULL,
};

const struct hl_strategy *hl_active;

const struct hl_strategy *hl_strategy_find(const char *name)
{
    for (int i = 0; hl_strategies[i]; i++)
        if (!strcmp(hl_strategies[i]->name, name)) return hl_strategies[i];
    return NULL;
}

HL_EXPORT const char *hoardlab_strategy(void)
{
    if (atomic_load(&hl_init_state) != 2) hl_init();
    return hl_active->name;
}

HL_EXPORT const char *hoardlab_config_get(const char *key)
{
    static _Thread_local char buf[256];
    if (atomic_load(&hl_init_state) != 2) hl_init();
    return hl_config_value(key, buf, sizeof buf);
}
