/* heaps.h — heaps/'s face: many heaps. Heap selection, its rule (selector.h) and the set of
 * heaps (heapselect.h); the heap strategies' malloc and free (heappaths.h) and free_lists =
 * sharded (sharded.h); Hoard's global heap (globalheap.h). The layers above include this
 * header only. */
#ifndef HL_HEAPS_H
#define HL_HEAPS_H

#include "selector.h"
#include "heapselect.h"
#include "heappaths.h"
#include "sharded.h"
#include "globalheap.h"

#endif
