/* kvcache.h — the engine model's KV cache: a fixed pool of blocks of
 * block_size tokens with reference counts, and vLLM-style automatic prefix
 * caching: a full prompt block is named by a hash chained over every token
 * before it, freed blocks keep their hash (and can be hit again) until they
 * are reused, least recently freed first. No I/O, no clock. */
#ifndef ANVIL_SIM_KVCACHE_H
#define ANVIL_SIM_KVCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim_kv_block {
    uint64_t hash;      /* valid when hashed */
    int32_t ref;        /* sequences holding the block */
    int32_t prev, next; /* free list (ref == 0), -1 terminated */
    int32_t hnext;      /* hash bucket chain, -1 terminated */
    bool hashed;        /* registered in the prefix table */
};

struct sim_kv {
    int64_t num_blocks;          /* pool size */
    int64_t block_size;          /* tokens per block */
    int64_t free_blocks;         /* blocks with ref == 0 (cached or not) */
    struct sim_kv_block *blocks; /* owned, num_blocks entries */
    int32_t free_head, free_tail;/* free list: head is reused first (LRU) */
    int32_t *buckets;            /* owned: prefix table heads, nbuckets entries */
    size_t nbuckets;             /* power of two */
};

/* Creates a pool of num_blocks (1 .. 2^31-1) blocks of block_size tokens,
 * all free. Returns 0, or -1 when out of memory (then *kv holds nothing). */
int sim_kv_init(struct sim_kv *kv, int64_t num_blocks, int64_t block_size);

/* Forgets every block's prefix hash (vLLM's reset_prefix_cache, SGLang's
 * flush_cache): no later lookup hits a block cached before. Blocks held by
 * sequences stay theirs. Returns how many blocks were unhashed. */
int64_t sim_kv_reset_prefix(struct sim_kv *kv);

/* Frees what sim_kv_init allocated. */
void sim_kv_free(struct sim_kv *kv);

/* Takes the least recently freed block (dropping its cached hash) with
 * ref 1. Returns its id, or -1 when every block is held. O(bucket chain). */
int32_t sim_kv_alloc(struct sim_kv *kv);

/* Drops one reference; at 0 the block goes to the tail of the free list,
 * still hit-able under its hash. */
void sim_kv_release(struct sim_kv *kv, int32_t id);

/* Adds one reference to block id (a prefix hit); a free block leaves the
 * free list. */
void sim_kv_acquire(struct sim_kv *kv, int32_t id);

/* The block registered under hash, or -1. */
int32_t sim_kv_lookup(const struct sim_kv *kv, uint64_t hash);

/* Registers block id (held, full, not yet hashed) under hash so later
 * prompts with the same prefix hit it; no-op when another block already
 * holds that hash (the first copy stays canonical, as in vLLM). */
void sim_kv_publish(struct sim_kv *kv, int32_t id, uint64_t hash);

/* Blocks a sequence of tokens tokens occupies: ceil(tokens / block_size). */
int64_t sim_kv_blocks_for(const struct sim_kv *kv, int64_t tokens);

/* Writes the chained hashes of the full blocks of the n token ids at ids
 * (block i's hash covers blocks 0..i) into out, which has room for
 * n / block_size entries. Returns the number written. */
int64_t sim_kv_block_hashes(const int64_t *ids, int64_t n, int64_t block_size, uint64_t *out);

#endif
