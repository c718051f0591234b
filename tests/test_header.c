/* The public header compiles as C11, as C99 -pedantic and as C++ (the
 * Makefile builds this file all three ways) and its table links. */
#include "glcompute.h"

#include <stdio.h>
#include <string.h>

/* Flag constants: one style (named enums of 1u << n bits), the values the
 * ABI fixed. (An array of negative size when one differs: C99 has no
 * static assert.) */
#define FLAG_IS(name, value) typedef char flag_##name[(name) == (value) ? 1 : -1]
FLAG_IS(GLC_DEVICE_LIMITS_MIN, 1);
FLAG_IS(GLC_DEVICE_DEBUG, 2);
FLAG_IS(GLC_DEVICE_NO_ROBUST, 4);
FLAG_IS(GLC_DEVICE_VALIDATE, 8);
FLAG_IS(GLC_SESSION_EARLY_FLUSH, 0x100);
FLAG_IS(GLC_DISPATCH_NO_REORDER, 1);
FLAG_IS(GLC_COMPILE_NO_FUSE, 1);
FLAG_IS(GLC_SHARE_PARAMS, 1);
FLAG_IS(GLC_SHARE_HANDLES, 2);
FLAG_IS(GLC_PLAN_DUMP_SOURCE, 1);

int main(void)
{
    glc_device_desc desc;
    /* flags of two enums or-ed, as callers write them (kept unsigned: in C++
     * 0x101 is not a value a glc_session_mode variable may hold) */
    unsigned mode = (unsigned)GLC_SESSION_RECORDED | (unsigned)GLC_SESSION_EARLY_FLUSH;
    unsigned flags = GLC_SHARE_PARAMS | GLC_SHARE_HANDLES;
    memset(&desc, 0, sizeof desc);
    if (strcmp(glc_status_str(GLC_ERR_COMPILE), "shader compile or link failed") != 0 ||
        glc_dtype_size(GLC_DTYPE_F32) != 4 || desc.platform != GLC_PLATFORM_AUTO ||
        mode != 0x101u || flags != 3u) {
        puts("[  FAILED  ] 1 test(s), header");
        return 1;
    }
    puts("[  PASSED  ] 1 test(s).");
    return 0;
}
