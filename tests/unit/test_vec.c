/* test_vec.c — growable arrays (core/vec.h): doubling from the first size,
 * zeroed growth, and overflow refused with the array unchanged. */
#include <stdint.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "core/vec.h"

struct pair {
    int64_t a;
    double b;
};

Test(vec, pushes_keep_every_element_and_double_from_min_cap)
{
    struct pair *v = NULL;
    size_t n = 0, cap = 0;
    size_t caps_seen[8] = {0}, n_caps = 0;
    for (int64_t i = 0; i < 1000; i++) {
        cr_assert_eq(VEC_RESERVE(v, cap, n + 1, 16), 0);
        if (n_caps == 0 || caps_seen[n_caps - 1] != cap) {
            cr_assert_lt(n_caps, 8);
            caps_seen[n_caps++] = cap;
        }
        v[n++] = (struct pair){i, (double)i / 2};
    }
    for (size_t i = 0; i < n; i++)
        cr_assert(v[i].a == (int64_t)i && v[i].b == (double)i / 2, "element %zu", i);
    size_t want[] = {16, 32, 64, 128, 256, 512, 1024};
    cr_assert_eq(n_caps, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n_caps; i++)
        cr_assert_eq(caps_seen[i], want[i], "growth %zu: %zu, want %zu", i, caps_seen[i], want[i]);
    free(v);
}

Test(vec, a_large_need_doubles_until_it_fits_and_a_small_one_does_nothing)
{
    int *v = NULL;
    size_t cap = 0;
    cr_assert_eq(VEC_RESERVE(v, cap, 100, 8), 0);
    cr_assert_eq(cap, 128);                       /* 8 → 16 → 32 → 64 → 128 */
    int *same = v;
    cr_assert_eq(VEC_RESERVE(v, cap, 128, 8), 0);
    cr_assert_eq(v, same);
    cr_assert_eq(cap, 128);
    cr_assert_eq(VEC_RESERVE(v, cap, 0, 8), 0);
    free(v);

    char *c = NULL;
    size_t ccap = 0;
    cr_assert_eq(VEC_RESERVE(c, ccap, 3, 0), 0);  /* min 0 reads as 1: 1 → 2 → 4 */
    cr_assert_eq(ccap, 4);
    free(c);
}

Test(vec, zeroed_growth_clears_only_the_new_elements)
{
    long *v = NULL;
    size_t cap = 0;
    cr_assert_eq(VEC_RESERVE_ZEROED(v, cap, 5, 4), 0);
    cr_assert_eq(cap, 8);
    for (size_t i = 0; i < cap; i++) {
        cr_assert_eq(v[i], 0);
        v[i] = (long)i + 100;
    }
    cr_assert_eq(VEC_RESERVE_ZEROED(v, cap, 9, 4), 0);
    cr_assert_eq(cap, 16);
    for (size_t i = 0; i < 8; i++)
        cr_assert_eq(v[i], (long)i + 100);
    for (size_t i = 8; i < 16; i++)
        cr_assert_eq(v[i], 0);
    free(v);
}

Test(vec, a_size_past_size_max_fails_and_leaves_the_array_as_it_was)
{
    struct pair *v = NULL;
    size_t n = 0, cap = 0;
    cr_assert_eq(VEC_RESERVE(v, cap, 3, 2), 0);
    v[n++] = (struct pair){7, 7.5};
    struct pair *before = v;
    cr_assert_eq(VEC_RESERVE(v, cap, SIZE_MAX / sizeof *v + 1, 2), -1);
    cr_assert_eq(VEC_RESERVE(v, cap, SIZE_MAX, 2), -1);
    cr_assert_eq(v, before);
    cr_assert_eq(cap, 4);
    cr_assert(v[0].a == 7 && v[0].b == 7.5);
    free(v);
}
