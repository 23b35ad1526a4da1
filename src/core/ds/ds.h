/* ds.h — ds/'s face: generic lock-free containers that know nothing of what they hold:
 * hazard pointers (hazard.h), a Treiber stack (lfstack.h), a Michael-Scott queue and its node
 * pool (lfqueue.h). The layers above include this header only. */
#ifndef HL_DS_H
#define HL_DS_H

#include "hazard.h"
#include "lfstack.h"
#include "lfqueue.h"

#endif
