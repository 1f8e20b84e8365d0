/* placement.h: internal free-GPU index of the engine: per partition, one node bitset per free count. */
#ifndef DS_PLACEMENT_H
#define DS_PLACEMENT_H

#include "deepshare/engine.h"

void ds_placement_init(ds_engine_t *e);
void ds_placement_free(ds_engine_t *e);
/* One GPU of node became occupied (delta = +1) or free (delta = -1). */
void ds_placement_take(ds_engine_t *e, int32_t node, int delta);
/* Adds (sign +1) or removes (-1) job j's CPU and memory share on the nodes it holds. */
void ds_placement_charge(ds_engine_t *e, int32_t j, int sign);

#endif
