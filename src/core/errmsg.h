/*
 * Failure messages and the log, for every layer (GL-free ones included:
 * this header pulls in no GL). A failing public call leaves a message:
 * in its device's errmsg (and the log, at ERROR), or, when there is no
 * device to hold it (a NULL handle), in the calling thread's own message,
 * which glc_device_errmsg(NULL) returns.
 */
#ifndef GLC_ERRMSG_H
#define GLC_ERRMSG_H

#include "glcompute.h"

#include <stdarg.h>

struct glc_device;

/* Formats a message, stores it as the device's errmsg, logs it at ERROR and
 * returns `status`. dev may be NULL: then the message is the thread's
 * (glc_device_errmsg(NULL)). */
glc_status glc__fail(struct glc_device *dev, glc_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Logs at `level` when the device's level allows it. */
void glc__log(struct glc_device *dev, glc_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void glc__vlog(struct glc_device *dev, glc_log_level level, glc_status status,
               const char *fmt, va_list ap);
/* GLC_TRACE output (encode.c): to the log callback at INFO whatever its
 * level, else to stderr. */
void glc__trace(struct glc_device *dev, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Fails the calling function with INVALID_ARG unless `cond` holds; the
 * message names the function and the condition. dev may be NULL. */
#define GLC__ARG(dev, cond)                                                      \
    do {                                                                         \
        if (!(cond))                                                             \
            return glc__fail((dev), GLC_ERR_INVALID_ARG, "%s: invalid argument: %s", \
                             __func__, #cond);                                   \
    } while (0)

#endif
