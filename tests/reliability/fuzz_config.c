/* fuzz_config.c — libFuzzer target for the config parser (config.c), built with clang
 * -fsanitize=fuzzer,address,undefined by tests/reliability/meson.build.
 *
 * Each input is INI text. hl_config_parse_text must return 0 or -1, never exit or crash; on
 * -1 its message is one NUL-terminated line; on 0 every value it stored is valid for its key
 * (in range, finite, a power of two where one is required, a known choice). The configuration
 * is reset to the defaults before each input. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "front.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)

static unsigned count(const char *const *list)
{
    unsigned n = 0;
    while (list[n]) n++;
    return n;
}

static void check_config(const struct hl_config *c)
{
    CHECK(c->strategy >= 0 && hl_strategies[c->strategy], "strategy index %d", c->strategy);
    CHECK(c->lock >= 0 && (unsigned)c->lock < count(hl_lock_kinds), "lock %d", c->lock);
    CHECK(c->numa >= 0 && (unsigned)c->numa < count(hl_numa_modes), "numa %d", c->numa);
    CHECK(c->size_classes >= 0 && (unsigned)c->size_classes < count(hl_class_tables), "classes");
    CHECK(c->free_list >= 0 && (unsigned)c->free_list < count(hl_list_orders), "free_list");
    CHECK(c->heap_select >= 0 && (unsigned)c->heap_select < count(hl_heap_selects), "heap_select");
    CHECK(isfinite(c->size_class_base) && c->size_class_base >= 1.01 && c->size_class_base <= 4.0,
          "size_class_base %g accepted", c->size_class_base);
    CHECK(isfinite(c->empty_fraction) && c->empty_fraction >= 0.01 && c->empty_fraction <= 0.99,
          "empty_fraction %g accepted", c->empty_fraction);
    CHECK(hl_is_pow2(c->superblock_size) && c->superblock_size >= 4096 &&
          c->superblock_size <= (16u << 20), "superblock_size %zu accepted", c->superblock_size);
    CHECK(c->heap_grow >= 1 && c->heap_grow <= 65536, "heap_grow %ld accepted", c->heap_grow);
    CHECK(c->heaps >= 1 && c->heaps <= 4096, "heaps %ld accepted", c->heaps);
    CHECK(c->large_threshold <= (64u << 20), "large_threshold %zu accepted", c->large_threshold);
    CHECK(c->stats_batch <= (64u << 20), "stats_batch %zu accepted", c->stats_batch);
    CHECK(c->release_threshold >= 0 && c->release_threshold <= (1 << 20), "release_threshold");
    CHECK(c->fullness_groups >= 1 && c->fullness_groups <= 64, "fullness_groups");
    CHECK(c->stats && c->trace, "string values must not be NULL");
    CHECK((c->verbose | c->padding | c->release_empty | c->census | c->checks) <= 1 &&
          (c->verbose | c->padding | c->release_empty | c->census | c->checks) >= 0, "bools");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char text[70000];
    if (size >= sizeof text) return -1;          /* larger than the loader would accept */
    memcpy(text, data, size);
    text[size] = 0;
    hl_config_load();                            /* back to the defaults (no HOARD_* set) */
    char err[512];
    memset(err, 'x', sizeof err);
    int r = hl_config_parse_text("fuzz.ini", text, err, sizeof err);
    CHECK(r == 0 || r == -1, "returned %d", r);
    if (r) {
        CHECK(memchr(err, 0, sizeof err), "message not NUL-terminated");
        CHECK(!strchr(err, '\n'), "message spans lines: %s", err);
        CHECK(!strncmp(err, "fuzz.ini:", 9), "message does not name the file: %s", err);
    }
    check_config(&hl_cfg);
    return 0;
}
