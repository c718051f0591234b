/* The public header compiles as C11, as C99 -pedantic and as C++ (the
 * Makefile builds this file all three ways) and its table links. */
#include "glcompute.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
    glc_device_desc desc;
    memset(&desc, 0, sizeof desc);
    if (strcmp(glc_status_str(GLC_ERR_COMPILE), "shader compile or link failed") != 0 ||
        glc_dtype_size(GLC_DTYPE_F32) != 4 || desc.platform != GLC_PLATFORM_AUTO) {
        puts("[  FAILED  ] 1 test(s), header");
        return 1;
    }
    puts("[  PASSED  ] 1 test(s).");
    return 0;
}
