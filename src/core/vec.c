/* vec.c — growable arrays by doubling, overflow-checked. */
#include "core/vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int vec_reserve(void *pp, size_t *cap, size_t need, size_t elem, size_t min_cap, int zero)
{
    if (need <= *cap)
        return 0;
    if (elem == 0)
        return -1;
    size_t n = *cap ? *cap : (min_cap ? min_cap : 1);
    while (n < need) {
        if (n > SIZE_MAX / 2)
            n = need;           /* doubling would overflow: exactly what is asked */
        else
            n *= 2;
    }
    if (n > SIZE_MAX / elem)
        return -1;
    /* The caller's pointer is read and written through memcpy: it may be any
     * object pointer type, and all of them share void *'s representation on
     * the platforms anvil builds for. */
    void *old;
    memcpy(&old, pp, sizeof old);
    void *p = realloc(old, n * elem);
    if (!p)
        return -1;
    if (zero)
        memset((char *)p + *cap * elem, 0, (n - *cap) * elem);
    memcpy(pp, &p, sizeof p);
    *cap = n;
    return 0;
}
