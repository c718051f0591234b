/*
 * Device selection rules, GL-free so they are unit-tested without a GPU:
 * parsing GLC_DEVICE values (platform names are env.c's) and ranking EGL devices by their
 * extension strings (hardware first, Mesa's software device last).
 */
#ifndef GLC_SELECT_H
#define GLC_SELECT_H

#include "glcompute.h"

typedef enum glc__sel_kind {
    GLC__SEL_NONE = 0, /* no preference: the best ranked device */
    GLC__SEL_INDEX,    /* an index into the ranked list */
    GLC__SEL_PATH      /* a /dev/dri path */
} glc__sel_kind;

typedef struct glc__device_sel {
    glc__sel_kind kind;
    int index;
    const char *path; /* points into the parsed string */
} glc__device_sel;

/* NULL or "": NONE; decimal digits: INDEX; a string starting with '/': PATH.
 * Anything else (negative, trailing junk, overflow): GLC_ERR_INVALID_ARG. */
glc_status glc__parse_device(const char *s, glc__device_sel *out);

/* Rank of an EGL device (lower is better): 0 for CUDA-backed (NVIDIA),
 * 1 for DRM-backed with a device file, 2 for other hardware, 3 for Mesa's
 * software device. `exts` is the device extension string (may be NULL). */
int glc__device_rank(const char *exts, int has_drm_file);

/* 1 when the space-separated extension list `exts` holds `name` exactly. */
int glc__has_ext(const char *exts, const char *name);

#endif
