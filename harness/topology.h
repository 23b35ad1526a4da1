/* topology.h — the machine, as hwloc finds it: its cores and cache line (reported in every
 * record), and pinning a thread to a core. Above util.h; below the run machinery. */
#ifndef HB_TOPOLOGY_H
#define HB_TOPOLOGY_H

/* ---- topology.c ----------------------------------------------------------------------------- */

/* Load the topology; on failure one line on stderr, and 1 core, 64-byte lines. */
void hb_topology_init(void);
void hb_topology_done(void);
int hb_topology_cores(void);            /* cores (else PUs), at least 1 */
int hb_topology_cache_line(void);       /* the L1 line size in bytes (64 if unknown) */
/* Bind the calling thread to one PU of core i mod cores (nothing without a topology); a line
 * on stderr if the system refuses. */
void hb_topology_pin(int i);

#endif
