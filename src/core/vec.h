/* vec.h — growable arrays: room for one more element, by doubling. Every
 * array anvil appends to one element at a time grows here, so the capacity
 * arithmetic (doubling, its overflow, the first size) is written once.
 *
 * An array is any `T *p` with a `size_t cap` (elements allocated) beside it;
 * the caller keeps the count. Typical use:
 *
 *     if (VEC_RESERVE(s->v, s->cap, s->n + 1, 64) != 0)
 *         return -1;                 // out of memory: s->v and s->cap unchanged
 *     s->v[s->n++] = x;
 */
#ifndef ANVIL_CORE_VEC_H
#define ANVIL_CORE_VEC_H

#include <stddef.h>

/* Makes *pp (an array of elements of elem bytes, *cap of them allocated)
 * hold at least need elements: the capacity doubles from *cap (from min_cap
 * when *cap is 0; min_cap 0 reads as 1) until it reaches need, and *pp is
 * reallocated to it. pp is the address of the caller's pointer variable,
 * of any object pointer type. When zero is true, the elements added past the
 * old capacity are zero bytes. Returns 0 (nothing done when need <= *cap),
 * or -1 when the size overflows size_t or memory runs out; *pp and *cap
 * are then unchanged and still owned by the caller. */
int vec_reserve(void *pp, size_t *cap, size_t need, size_t elem, size_t min_cap, int zero);

/* VEC_RESERVE(p, cap, need, min_cap): vec_reserve for an lvalue pointer p
 * and its size_t capacity cap; the element size is sizeof *p. */
#define VEC_RESERVE(p, cap, need, min_cap) vec_reserve(&(p), &(cap), (need), sizeof *(p), (min_cap), 0)

/* VEC_RESERVE_ZEROED: as VEC_RESERVE, the new elements zero bytes (tables
 * indexed by a number, such as a descriptor, where a gap means "none"). */
#define VEC_RESERVE_ZEROED(p, cap, need, min_cap) vec_reserve(&(p), &(cap), (need), sizeof *(p), (min_cap), 1)

#endif
