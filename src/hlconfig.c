/* hlconfig — the configuration table and the effective configuration, from the command line.
 *
 *   hlconfig --list        every key: section, default, valid values, help, environment name
 *   hlconfig --json        the same as a JSON array (for tools)
 *   hlconfig --markdown    the same as docs/config.md
 *   hlconfig --strategies  name<TAB>summary of every strategy
 *   hlconfig --stats [--json]
 *                          every statistic of HOARDLAB_STATS (include/hoardlab.h), in the order
 *                          of struct hoardlab_stats: name<TAB>from<TAB>across<TAB>help, or a
 *                          JSON array of {name, from, across, help} (the tools' columns)
 *   hlconfig --effective   validate HOARD_CONFIG and HOARD_* and print every value and its source
 *   hlconfig --classes     the size classes of the effective configuration
 *   hlconfig --check [KEY=VALUE ...]
 *                          validate exactly these settings (strategy=NAME among them; every
 *                          other HOARD_* variable and HOARD_CONFIG ignored) as start-up would:
 *                          silent with exit 0, or its one-line message and exit 2. Tools
 *                          (sweeps) check their knobs with it, so the table stays their source.
 *
 * It links the allocator's core without its libc exports, so it runs on the system malloc
 * and can report a bad configuration exactly as a preloaded program would (exit 2). */
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>
#include <unistd.h>
#include "front.h"
#include "mem.h"

static int usage(void)
{
    fprintf(stderr, "usage: hlconfig --list | --json | --markdown | --strategies | --stats [--json] | "
                    "--effective | --classes | --check [KEY=VALUE ...]\n");
    return 2;
}

/* --check: KEY=VALUE becomes HOARD_<KEY>=VALUE, alone in the environment with its peers. */
static int check(int n, char **pairs)
{
    extern char **environ;
    static char *env[256];
    static char vars[256][512];
    if (n >= 256) return usage();
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(pairs[i], '=');
        if (!eq || eq == pairs[i]) {
            fprintf(stderr, "hlconfig: --check: '%s' is not KEY=VALUE\n", pairs[i]);
            return 2;
        }
        int k = snprintf(vars[i], sizeof vars[i], "HOARD_");
        for (const char *c = pairs[i]; c < eq && k < 100; c++)
            vars[i][k++] = (char)(*c == '-' ? '_' : toupper((unsigned char)*c));
        snprintf(vars[i] + k, sizeof vars[i] - (size_t)k, "%s", eq);
        env[i] = vars[i];
    }
    env[n] = NULL;
    environ = env;
    /* The whole start, not only the key table: a module refuses a combination at its init
     * (free_lists = sharded without remote_free = list: superblock.c), and attribute's steps
     * and sweeps must see that refusal here, not in the run. */
    hl_init();                                  /* exits 2 with one line on bad input */
    return 0;
}

/* A JSON string: the help texts are plain ASCII, but quote what JSON needs quoted anyway. */
static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", (unsigned char)*s);
        else putchar(*s);
    }
    putchar('"');
}

/* Every row's `across` is one of these (`from` is checked by struct hl_counters in base.h): a
 * misspelt one does not compile. */
enum { HL_ACROSS_sum = 1, HL_ACROSS_largest = 1, HL_ACROSS_max = 1 };
#define HL_ACROSS_KNOWN(name, from, across, help)                                              \
    _Static_assert(HL_ACROSS_##across, #name ": across is sum, largest or max");
HOARDLAB_STATS(HL_ACROSS_KNOWN)
#undef HL_ACROSS_KNOWN

/* --stats: the statistics table, declared once in include/hoardlab.h. */
static int stats(bool json)
{
    const char *sep = "";
    if (json) printf("[");
#define HL_STAT_ROW(name, from, across, help)                                                    \
    if (json) {                                                                                 \
        printf("%s\n  {\"name\": \"%s\", \"from\": \"%s\", \"across\": \"%s\", \"help\": ",       \
               sep, #name, #from, #across);                                                     \
        json_string(help);                                                                      \
        printf("}");                                                                            \
        sep = ",";                                                                              \
    } else {                                                                                    \
        printf("%s\t%s\t%s\t%s\n", #name, #from, #across, help);                                \
    }
    HOARDLAB_STATS(HL_STAT_ROW)
#undef HL_STAT_ROW
    if (json) printf("\n]\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--check")) return check(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "--stats")) {
        if (argc == 2) return stats(false);
        if (argc == 3 && !strcmp(argv[2], "--json")) return stats(true);
        return usage();
    }
    if (argc != 2) return usage();
    const char *cmd = argv[1];
    static const char *const tables[] = { "--list", "--json", "--markdown" };
    for (int f = HL_TABLE_TEXT; f <= HL_TABLE_MARKDOWN; f++)
        if (!strcmp(cmd, tables[f])) { hl_config_print_table(STDOUT_FILENO, f); return 0; }
    if (!strcmp(cmd, "--strategies")) {
        for (int i = 0; hl_strategies[i]; i++)
            printf("%s\t%s\n", hl_strategies[i]->name, hl_strategies[i]->summary);
        return 0;
    }
    if (strcmp(cmd, "--effective") && strcmp(cmd, "--classes")) return usage();
    hl_init();                                  /* exits 2 with one line on bad input */
    if (!strcmp(cmd, "--effective")) {
        fflush(stdout);
        hl_config_print_effective(STDOUT_FILENO);
    } else {
        for (unsigned c = 0; c < hl_classes->count; c++)
            printf("%u\t%zu\n", c, hl_class_size(c));
    }
    return 0;
}
