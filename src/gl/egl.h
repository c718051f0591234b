/*
 * The EGL side of a device, behind an opaque handle so that device_egl.c is
 * the only file that includes EGL or GBM headers. libEGL (and libgbm) are
 * opened with dlopen: a machine without them gets GLC_ERR_NO_DEVICE and a
 * message, not a loader error.
 */
#ifndef GLC_EGL_H
#define GLC_EGL_H

#include "glcompute.h"

struct glc_device;
typedef struct glc__egl glc__egl;

/* Opens a display on `platform` (AUTO tries each in turn), creates an ES 3.1
 * context and makes it current; or, for CURRENT, adopts the current one.
 * `device` selects the EGL device or node (see glc_device_desc.device).
 * Progress and reasons for falling through are logged on `dev`. */
glc_status glc__egl_open(struct glc_device *dev, glc_platform platform,
                         const char *device, uint32_t flags, glc__egl **out);
void glc__egl_close(glc__egl *egl);

/* Resolves a GL entry point: eglGetProcAddress, else libGLESv2's symbol. */
void *glc__egl_proc(glc__egl *egl, const char *name);

/* Makes sure the device's context is current on the calling thread: when
 * no context is current and the context is owned, makes it current. Returns
 * GLC_ERR_STATE (with a message on dev) when another context is current or
 * the context is current on another thread. */
glc_status glc__egl_ensure_current(struct glc_device *dev, glc__egl *egl);

glc_platform glc__egl_platform(const glc__egl *egl);
const char *glc__egl_device_name(const glc__egl *egl);
const char *glc__egl_vendor(const glc__egl *egl);
int glc__egl_robust(const glc__egl *egl);

#endif
