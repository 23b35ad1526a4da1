/* registry.c — the dispatch table: every strategy compiled in, in the order of the one list
 * (meson_options.txt `strategies`), which is the order of `hlconfig --strategies` and of the
 * `strategy` key's choices. src/meson.build turns the list into HL_STRATEGY_LIST. */
#include <string.h>
#include "hl.h"

#define HL_DECLARE(name) extern const struct hl_strategy hl_strategy_##name;
HL_STRATEGY_LIST(HL_DECLARE)

const struct hl_strategy *const hl_strategies[] = {
#define HL_ROW(name) &hl_strategy_##name,
    HL_STRATEGY_LIST(HL_ROW)
    NULL,
};

const struct hl_strategy *hl_active;
const struct hl_paths *hl_paths;
void *(*hl_front_malloc_fn)(size_t size);
void (*hl_front_free_fn)(void *p);
void *(*hl_entry_exit_malloc)(size_t size);
void (*hl_entry_exit_free)(void *p);

const struct hl_strategy *hl_strategy_find(const char *name)
{
    for (int i = 0; hl_strategies[i]; i++)
        if (!strcmp(hl_strategies[i]->name, name)) return hl_strategies[i];
    return NULL;
}
