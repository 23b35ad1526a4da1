/* registry.c — the dispatch table: every strategy compiled in, in the order of the one list
 * (meson_options.txt `strategies`), which is the order of `hlconfig --strategies` and of the
 * `strategy` key's choices. src/meson.build turns the list into HL_STRATEGY_LIST. The table
 * names every row, so it stands at the top; below it, the configuration knows the strategies
 * by name only (hl_strategy_names, base/config.c, from the same list) and is handed each
 * row's paper defaults here (hl_config_load); the active row's state is base/dispatch.c's. */
#include <string.h>
#include "front.h"

#define HL_DECLARE(name) extern const struct hl_strategy hl_strategy_##name;
HL_STRATEGY_LIST(HL_DECLARE)

const struct hl_strategy *const hl_strategies[] = {
#define HL_ROW(name) &hl_strategy_##name,
    HL_STRATEGY_LIST(HL_ROW)
    NULL,
};

const struct hl_strategy *hl_strategy_find(const char *name)
{
    for (int i = 0; hl_strategies[i]; i++)
        if (!strcmp(hl_strategies[i]->name, name)) return hl_strategies[i];
    return NULL;
}

/* The configuration, with the rows' paper defaults (each row's .defaults, in table order, the
 * order of hl_strategy_names) under the explicit values. */
void hl_config_load(void)
{
    const char *defaults[sizeof hl_strategies / sizeof hl_strategies[0]];
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
        defaults[i] = hl_strategies[i] ? hl_strategies[i]->defaults : NULL;
    hl_config_load_with(defaults);
}
