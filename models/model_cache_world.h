/*
 * model_cache_world.h: reading a running world's look-aside caches (model_cache_world.c),
 * for tests and traces: how many entries a service's cache, or one replica's, holds now.
 */
#ifndef MODEL_CACHE_WORLD_H
#define MODEL_CACHE_WORLD_H

#include <stddef.h>
#include <stdint.h>

struct model_world;

/* Returns the entries cached now in service svc's cache (scope service: replica is ignored)
 * or in replica `replica`'s (scope replica), 0 for a service without a cache or an index out
 * of range. Call it between events (a progress callback of model_world_run). */
size_t model_world_cache_size(const struct model_world *w, int svc, int32_t replica);

#endif /* MODEL_CACHE_WORLD_H */
