/* dispatch.c — the dispatch table's state: the active row and the paths every call reaches.
 * init (front/init.c) sets them once, from the registry's table (front/registry.c), before
 * any call is served; the files below the strategies read them (base.h says what each is), so
 * they live here, at the bottom, while the table of rows lives at the top. */
#include "base.h"

const struct hl_strategy *hl_active;
const struct hl_paths *hl_paths;
void *(*hl_front_malloc_fn)(size_t size);
void (*hl_front_free_fn)(void *p);
void *(*hl_entry_exit_malloc)(size_t size);
void (*hl_entry_exit_free)(void *p);
