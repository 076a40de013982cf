/* kvcache.c — KV blocks, LRU free list and prefix hash table (see kvcache.h). */
#include "sim/kvcache.h"

#include <stdlib.h>

#include "sim/tokens.h"

static size_t bucket_of(const struct sim_kv *kv, uint64_t hash)
{
    return (size_t)(sim_mix64(hash) & (kv->nbuckets - 1));
}

static void free_push_tail(struct sim_kv *kv, int32_t id)
{
    struct sim_kv_block *b = &kv->blocks[id];
    b->prev = kv->free_tail;
    b->next = -1;
    if (kv->free_tail >= 0)
        kv->blocks[kv->free_tail].next = id;
    else
        kv->free_head = id;
    kv->free_tail = id;
    kv->free_blocks++;
}

static void free_unlink(struct sim_kv *kv, int32_t id)
{
    struct sim_kv_block *b = &kv->blocks[id];
    if (b->prev >= 0)
        kv->blocks[b->prev].next = b->next;
    else
        kv->free_head = b->next;
    if (b->next >= 0)
        kv->blocks[b->next].prev = b->prev;
    else
        kv->free_tail = b->prev;
    b->prev = b->next = -1;
    kv->free_blocks--;
}

static void unhash(struct sim_kv *kv, int32_t id)
{
    struct sim_kv_block *b = &kv->blocks[id];
    if (!b->hashed)
        return;
    int32_t *link = &kv->buckets[bucket_of(kv, b->hash)];
    while (*link != id)
        link = &kv->blocks[*link].hnext;
    *link = b->hnext;
    b->hnext = -1;
    b->hashed = false;
}

int sim_kv_init(struct sim_kv *kv, int64_t num_blocks, int64_t block_size)
{
    *kv = (struct sim_kv){.num_blocks = num_blocks, .block_size = block_size,
                          .free_head = -1, .free_tail = -1};
    kv->nbuckets = 64;
    while ((int64_t)kv->nbuckets < num_blocks)
        kv->nbuckets *= 2;
    kv->blocks = calloc((size_t)num_blocks, sizeof *kv->blocks);
    kv->buckets = malloc(kv->nbuckets * sizeof *kv->buckets);
    if (!kv->blocks || !kv->buckets) {
        sim_kv_free(kv);
        return -1;
    }
    for (size_t i = 0; i < kv->nbuckets; i++)
        kv->buckets[i] = -1;
    for (int64_t i = 0; i < num_blocks; i++) {
        kv->blocks[i].hnext = -1;
        free_push_tail(kv, (int32_t)i);
    }
    return 0;
}

int64_t sim_kv_reset_prefix(struct sim_kv *kv)
{
    int64_t n = 0;
    for (int64_t i = 0; i < kv->num_blocks; i++)
        if (kv->blocks[i].hashed) {
            unhash(kv, (int32_t)i);
            n++;
        }
    return n;
}

void sim_kv_free(struct sim_kv *kv)
{
    free(kv->blocks);
    free(kv->buckets);
    kv->blocks = NULL;
    kv->buckets = NULL;
}

int32_t sim_kv_alloc(struct sim_kv *kv)
{
    int32_t id = kv->free_head;
    if (id < 0)
        return -1;
    free_unlink(kv, id);
    unhash(kv, id);   /* its old contents are overwritten: evict from the prefix table */
    kv->blocks[id].ref = 1;
    return id;
}

void sim_kv_release(struct sim_kv *kv, int32_t id)
{
    if (--kv->blocks[id].ref == 0)
        free_push_tail(kv, id);
}

void sim_kv_acquire(struct sim_kv *kv, int32_t id)
{
    if (kv->blocks[id].ref++ == 0)
        free_unlink(kv, id);
}

int32_t sim_kv_lookup(const struct sim_kv *kv, uint64_t hash)
{
    for (int32_t id = kv->buckets[bucket_of(kv, hash)]; id >= 0; id = kv->blocks[id].hnext)
        if (kv->blocks[id].hash == hash)
            return id;
    return -1;
}

void sim_kv_publish(struct sim_kv *kv, int32_t id, uint64_t hash)
{
    struct sim_kv_block *b = &kv->blocks[id];
    if (b->hashed || sim_kv_lookup(kv, hash) >= 0)
        return;
    size_t bk = bucket_of(kv, hash);
    b->hash = hash;
    b->hashed = true;
    b->hnext = kv->buckets[bk];
    kv->buckets[bk] = id;
}

int64_t sim_kv_blocks_for(const struct sim_kv *kv, int64_t tokens)
{
    return (tokens + kv->block_size - 1) / kv->block_size;
}

int64_t sim_kv_block_hashes(const int64_t *ids, int64_t n, int64_t block_size, uint64_t *out)
{
    uint64_t h = SIM_HASH_INIT;
    int64_t full = n / block_size;
    for (int64_t b = 0; b < full; b++) {
        /* Chained: a block's hash names its tokens and every token before them. */
        h = sim_hash_bytes(h, ids + b * block_size, (size_t)block_size * sizeof *ids);
        out[b] = sim_mix64(h);
    }
    return full;
}
