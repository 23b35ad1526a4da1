/* topology.c — hwloc's view of the machine: the core count and cache line the record reports
 * (and --threads defaults to), and pinning thread i to core i mod cores for --pin. */
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <string.h>
#include "topology.h"

static hwloc_topology_t topo;
static int n_cores = 1, cache_line = 64;

void hb_topology_init(void)
{
    if (hwloc_topology_init(&topo) || hwloc_topology_load(topo)) {
        fprintf(stderr, "hlbench: hwloc could not load the topology; assuming 1 core\n");
        topo = NULL;
        return;
    }
    int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (n <= 0) n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    n_cores = n > 0 ? n : 1;
    hwloc_obj_t l1 = hwloc_get_obj_by_type(topo, HWLOC_OBJ_L1CACHE, 0);
    if (l1 && l1->attr && l1->attr->cache.linesize) cache_line = (int)l1->attr->cache.linesize;
}

void hb_topology_done(void)
{
    if (topo) hwloc_topology_destroy(topo);
    topo = NULL;
}

int hb_topology_cores(void) { return n_cores; }
int hb_topology_cache_line(void) { return cache_line; }

void hb_topology_pin(int i)
{
    if (!topo) return;
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)(i % n_cores));
    if (!core) core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)(i % n_cores));
    if (!core) return;
    hwloc_bitmap_t set = hwloc_bitmap_dup(core->cpuset);
    hwloc_bitmap_singlify(set);
    if (hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD))
        fprintf(stderr, "hlbench: could not pin thread %d: %s\n", i, strerror(errno));
    hwloc_bitmap_free(set);
}
