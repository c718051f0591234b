/*
 * EGL platforms: the only file that includes EGL and GBM headers.
 *
 * libEGL and libgbm are opened with dlopen, so the library itself has no
 * link-time dependency on them: a machine without EGL gets a status and a
 * message naming the missing library. AUTO walks the platforms in order --
 * EGL device platform (devices ranked by select.c: CUDA or DRM hardware
 * first, Mesa's software device last), GBM on each /dev/dri/renderD*, Mesa
 * surfaceless, the default display -- and every step that fails says why in
 * the log, then falls through. An eglInitialize failure falls through too:
 * Mesa's default display is non-NULL but does not initialise headless.
 *
 * EGL displays are per (platform, native handle) and shared within the
 * process, and eglTerminate ends every context on one, so displays this file
 * initialised are reference counted and terminated with their last device.
 * A display the application had initialised already is never terminated,
 * nor are adopted (CURRENT) displays initialised or terminated here.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "egl.h"

#include "alloc.h"
#include "device.h"
#include "select.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GLC__EGL_FUNCS(X)                                                                \
    X(__eglMustCastToProperFunctionPointerType, eglGetProcAddress, (const char *name))   \
    X(const char *, eglQueryString, (EGLDisplay dpy, EGLint name))                       \
    X(EGLDisplay, eglGetDisplay, (EGLNativeDisplayType id))                              \
    X(EGLBoolean, eglInitialize, (EGLDisplay dpy, EGLint *major, EGLint *minor))         \
    X(EGLBoolean, eglTerminate, (EGLDisplay dpy))                                        \
    X(EGLBoolean, eglBindAPI, (EGLenum api))                                             \
    X(EGLBoolean, eglChooseConfig, (EGLDisplay dpy, const EGLint *attrib,                \
                                    EGLConfig *configs, EGLint size, EGLint *n))         \
    X(EGLContext, eglCreateContext, (EGLDisplay dpy, EGLConfig config,                   \
                                     EGLContext share, const EGLint *attrib))            \
    X(EGLBoolean, eglDestroyContext, (EGLDisplay dpy, EGLContext ctx))                   \
    X(EGLSurface, eglCreatePbufferSurface, (EGLDisplay dpy, EGLConfig config,            \
                                            const EGLint *attrib))                       \
    X(EGLBoolean, eglDestroySurface, (EGLDisplay dpy, EGLSurface surface))               \
    X(EGLBoolean, eglMakeCurrent, (EGLDisplay dpy, EGLSurface draw, EGLSurface read,     \
                                   EGLContext ctx))                                      \
    X(EGLContext, eglGetCurrentContext, (void))                                          \
    X(EGLDisplay, eglGetCurrentDisplay, (void))                                          \
    X(EGLBoolean, eglQueryContext, (EGLDisplay dpy, EGLContext ctx, EGLint attr,         \
                                    EGLint *value))                                      \
    X(EGLint, eglGetError, (void))

typedef struct egl_api {
    void *lib;
#define GLC__EGL_MEMBER(ret, name, params) ret(EGLAPIENTRY *name) params;
    GLC__EGL_FUNCS(GLC__EGL_MEMBER)
#undef GLC__EGL_MEMBER
    PFNEGLQUERYDEVICESEXTPROC eglQueryDevicesEXT;
    PFNEGLQUERYDEVICESTRINGEXTPROC eglQueryDeviceStringEXT;
    PFNEGLGETPLATFORMDISPLAYEXTPROC eglGetPlatformDisplayEXT;
    const char *client_exts;
} egl_api;

struct gbm_device;
typedef struct gbm_api {
    void *lib;
    struct gbm_device *(*create)(int fd);
    void (*destroy)(struct gbm_device *gbm);
} gbm_api;

struct glc__egl {
    egl_api api;
    gbm_api gbm;
    glc_platform platform;
    EGLDisplay dpy;
    EGLContext ctx;
    EGLSurface surf;
    int owned;           /* context (and display reference) are ours */
    int robust;
    int drm_fd;          /* GBM platform: the opened render node, else -1 */
    struct gbm_device *gbm_dev;
    void *gles_lib;      /* fallback for GL symbols eglGetProcAddress lacks */
    char device_name[160];
    char vendor[128];
    char why[1536];      /* reasons collected while falling through */
};

/* ---- display reference counts (process-wide, see the top comment) ---- */

/* ---- loading ---- */

static const char *egl_err_name(EGLint e)
{
    switch (e) {
    case EGL_SUCCESS: return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
    case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
    case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
    case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
    case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
    case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
    default: return "EGL error";
    }
}

/* `name`: GLC_EGL_LIBRARY (for tests and odd installs), by default libEGL.so.1 */
static glc_status load_egl(egl_api *a, const char *name, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    a->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!a->lib) {
        snprintf(err, errlen, "cannot load %s (%s): install libegl1 (Debian) or the "
                 "GPU driver's EGL", name, dlerror());
        return GLC_ERR_NO_DEVICE;
    }
#define GLC__EGL_LOAD(ret, fn, params)                                                   \
    *(void **)&a->fn = dlsym(a->lib, #fn);                                               \
    if (!a->fn) {                                                                        \
        snprintf(err, errlen, "%s lacks %s", name, #fn);                                 \
        dlclose(a->lib);                                                                 \
        a->lib = NULL;                                                                   \
        return GLC_ERR_NO_DEVICE;                                                        \
    }
    GLC__EGL_FUNCS(GLC__EGL_LOAD)
#undef GLC__EGL_LOAD
    a->client_exts = a->eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (!a->client_exts)
        a->client_exts = "";
    if (glc__has_ext(a->client_exts, "EGL_EXT_device_enumeration") ||
        glc__has_ext(a->client_exts, "EGL_EXT_device_base")) {
        a->eglQueryDevicesEXT = (PFNEGLQUERYDEVICESEXTPROC)a->eglGetProcAddress("eglQueryDevicesEXT");
        a->eglQueryDeviceStringEXT =
            (PFNEGLQUERYDEVICESTRINGEXTPROC)a->eglGetProcAddress("eglQueryDeviceStringEXT");
    }
    if (glc__has_ext(a->client_exts, "EGL_EXT_platform_base"))
        a->eglGetPlatformDisplayEXT =
            (PFNEGLGETPLATFORMDISPLAYEXTPROC)a->eglGetProcAddress("eglGetPlatformDisplayEXT");
    return GLC_OK;
}

static void why(struct glc_device *dev, glc__egl *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void why(struct glc_device *dev, glc__egl *e, const char *fmt, ...)
{
    char line[512];
    size_t used = strlen(e->why);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    glc__log(dev, GLC_LOG_INFO, "%s", line);
    snprintf(e->why + used, sizeof e->why - used, "%s%s", used ? "; " : "", line);
}

/* ---- contexts ---- */

static int gl_version_ok(glc__egl *e, int *major, int *minor)
{
    typedef const unsigned char *(EGLAPIENTRY * get_string_fn)(unsigned name);
    get_string_fn gs = (get_string_fn)glc__egl_proc(e, "glGetString");
    const char *v = gs ? (const char *)gs(0x1F02 /* GL_VERSION */) : NULL;
    *major = *minor = 0;
    if (!v || sscanf(v, "OpenGL ES %d.%d", major, minor) != 2)
        return 0;
    return *major > 3 || (*major == 3 && *minor >= 1);
}

/* ---- display reference counts (process-wide, see the top comment) ----
 * eglInitialize with taking the reference, and dropping the last reference
 * with eglTerminate, each happen under one lock: else a thread can
 * terminate a display another has just initialised and not yet counted. */

static pthread_mutex_t dpy_lock = PTHREAD_MUTEX_INITIALIZER;
/* borrowed: the display was initialised before our first reference (by the
 * application, one display per EGL device in a process): never terminated
 * here, or the application's contexts on it would end with our device */
static struct { EGLDisplay dpy; int refs, borrowed; } dpy_refs[32];

/* 0 and *egl_err (0: out of slots) on failure. */
static int dpy_init_ref(const egl_api *a, EGLDisplay dpy, EGLint *maj, EGLint *min,
                        EGLint *egl_err)
{
    int i, free_slot = -1, found = -1, borrowed = 0;
    pthread_mutex_lock(&dpy_lock);
    for (i = 0; i < 32 && found < 0; i++) {
        if (dpy_refs[i].refs && dpy_refs[i].dpy == dpy)
            found = i;
        else if (!dpy_refs[i].refs && free_slot < 0)
            free_slot = i;
    }
    *egl_err = 0;
    if (found < 0 && free_slot < 0) {
        pthread_mutex_unlock(&dpy_lock);
        return 0;
    }
    if (found < 0) {
        /* EGL_VERSION answers only on an initialised display */
        borrowed = a->eglQueryString(dpy, EGL_VERSION) != NULL;
        if (!borrowed)
            a->eglGetError(); /* EGL_NOT_INITIALIZED: expected */
    }
    if (!a->eglInitialize(dpy, maj, min)) {
        *egl_err = a->eglGetError();
        pthread_mutex_unlock(&dpy_lock);
        return 0;
    }
    if (found >= 0) {
        dpy_refs[found].refs++;
    } else {
        dpy_refs[free_slot].dpy = dpy;
        dpy_refs[free_slot].refs = 1;
        dpy_refs[free_slot].borrowed = borrowed;
    }
    pthread_mutex_unlock(&dpy_lock);
    return 1;
}

static void dpy_unref_terminate(const egl_api *a, EGLDisplay dpy)
{
    int i;
    pthread_mutex_lock(&dpy_lock);
    for (i = 0; i < 32; i++) {
        if (dpy_refs[i].refs && dpy_refs[i].dpy == dpy) {
            if (--dpy_refs[i].refs == 0 && !dpy_refs[i].borrowed)
                a->eglTerminate(dpy);
            break;
        }
    }
    pthread_mutex_unlock(&dpy_lock);
}

static void release_context(glc__egl *e)
{
    if (e->ctx != EGL_NO_CONTEXT) {
        if (e->api.eglGetCurrentContext() == e->ctx)
            e->api.eglMakeCurrent(e->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        e->api.eglDestroyContext(e->dpy, e->ctx);
        e->ctx = EGL_NO_CONTEXT;
    }
    if (e->surf != EGL_NO_SURFACE) {
        e->api.eglDestroySurface(e->dpy, e->surf);
        e->surf = EGL_NO_SURFACE;
    }
    if (e->dpy != EGL_NO_DISPLAY) {
        dpy_unref_terminate(&e->api, e->dpy);
        e->dpy = EGL_NO_DISPLAY;
    }
}

/* Initialises `dpy`, creates an ES 3.1 context and makes it current. On
 * failure everything it made is released and the reason recorded. */
static glc_status try_display(struct glc_device *dev, glc__egl *e, EGLDisplay dpy,
                              const char *what, uint32_t flags)
{
    egl_api *a = &e->api;
    EGLint maj, min, n = 0, egl_err;
    EGLConfig config = (EGLConfig)0;
    const char *exts;
    int configless, surfaceless, robust_ext, gl_major, gl_minor;
    if (dpy == EGL_NO_DISPLAY) {
        why(dev, e, "%s: no display (%s)", what, egl_err_name(a->eglGetError()));
        return GLC_ERR_NO_DEVICE;
    }
    if (!dpy_init_ref(a, dpy, &maj, &min, &egl_err)) {
        if (egl_err)
            why(dev, e, "%s: eglInitialize failed (%s)", what, egl_err_name(egl_err));
        else
            why(dev, e, "%s: too many EGL displays open", what);
        return GLC_ERR_NO_DEVICE;
    }
    e->dpy = dpy;
    exts = a->eglQueryString(dpy, EGL_EXTENSIONS);
    configless = glc__has_ext(exts, "EGL_KHR_no_config_context") ||
                 glc__has_ext(exts, "EGL_MESA_configless_context");
    surfaceless = glc__has_ext(exts, "EGL_KHR_surfaceless_context");
    robust_ext = glc__has_ext(exts, "EGL_EXT_create_context_robustness") &&
                 !(flags & GLC_DEVICE_NO_ROBUST);
    if (!a->eglBindAPI(EGL_OPENGL_ES_API)) {
        why(dev, e, "%s: OpenGL ES API not available", what);
        goto fail;
    }
    if (!configless || !surfaceless) {
        const EGLint want[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT,
                               EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_NONE};
        if (!a->eglChooseConfig(dpy, want, &config, 1, &n) || n < 1) {
            why(dev, e, "%s: no ES3 pbuffer config", what);
            goto fail;
        }
    }
    {
        const EGLint robust[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 1,
                                 EGL_CONTEXT_OPENGL_RESET_NOTIFICATION_STRATEGY_EXT,
                                 EGL_LOSE_CONTEXT_ON_RESET_EXT,
                                 EGL_CONTEXT_OPENGL_ROBUST_ACCESS_EXT, EGL_TRUE, EGL_NONE};
        const EGLint plain[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 1,
                                EGL_NONE};
        if (robust_ext) {
            e->ctx = a->eglCreateContext(dpy, config, EGL_NO_CONTEXT, robust);
            e->robust = e->ctx != EGL_NO_CONTEXT;
            if (!e->robust)
                glc__log(dev, GLC_LOG_INFO, "%s: robust context refused (%s), trying plain",
                         what, egl_err_name(a->eglGetError()));
        }
        if (e->ctx == EGL_NO_CONTEXT)
            e->ctx = a->eglCreateContext(dpy, config, EGL_NO_CONTEXT, plain);
        if (e->ctx == EGL_NO_CONTEXT) {
            why(dev, e, "%s: no ES 3.1 context (%s)", what, egl_err_name(a->eglGetError()));
            goto fail;
        }
    }
    if (!surfaceless) {
        const EGLint pb[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
        e->surf = a->eglCreatePbufferSurface(dpy, config, pb);
        if (e->surf == EGL_NO_SURFACE) {
            why(dev, e, "%s: no pbuffer (%s)", what, egl_err_name(a->eglGetError()));
            goto fail;
        }
    }
    if (!a->eglMakeCurrent(dpy, e->surf, e->surf, e->ctx)) {
        why(dev, e, "%s: eglMakeCurrent failed (%s)", what, egl_err_name(a->eglGetError()));
        goto fail;
    }
    if (!gl_version_ok(e, &gl_major, &gl_minor)) {
        why(dev, e, "%s: context is OpenGL ES %d.%d, need 3.1", what, gl_major, gl_minor);
        goto fail;
    }
    snprintf(e->vendor, sizeof e->vendor, "%s",
             a->eglQueryString(dpy, EGL_VENDOR) ? a->eglQueryString(dpy, EGL_VENDOR) : "");
    e->owned = 1;
    glc__log(dev, GLC_LOG_INFO, "%s: EGL %d.%d, OpenGL ES %d.%d%s", what, maj, min, gl_major,
             gl_minor, e->robust ? ", robust" : "");
    return GLC_OK;
fail:
    release_context(e);
    e->robust = 0;
    return GLC_ERR_NO_DEVICE;
}

/* ---- platforms ---- */

typedef struct ranked_dev {
    EGLDeviceEXT dev;
    int rank;
    const char *exts, *drm, *render;
} ranked_dev;

/* Queries and ranks the EGL devices; *list is allocated (caller frees). */
static glc_status list_devices(egl_api *a, ranked_dev **list, int *count)
{
    EGLint n = 0, i, j;
    EGLDeviceEXT *devs;
    ranked_dev *r;
    *list = NULL;
    *count = 0;
    if (!a->eglQueryDevicesEXT || !a->eglQueryDeviceStringEXT ||
        !a->eglQueryDevicesEXT(0, NULL, &n))
        return GLC_ERR_NO_DEVICE;
    if (n <= 0)
        return GLC_OK;
    devs = glc__calloc((size_t)n, sizeof *devs);
    r = glc__calloc((size_t)n, sizeof *r);
    if (!devs || !r) {
        glc__free(devs);
        glc__free(r);
        return GLC_ERR_OUT_OF_MEMORY;
    }
    if (!a->eglQueryDevicesEXT(n, devs, &n))
        n = 0;
    for (i = 0; i < n; i++) {
        ranked_dev d;
        d.dev = devs[i];
        d.exts = a->eglQueryDeviceStringEXT(devs[i], EGL_EXTENSIONS);
        d.drm = glc__has_ext(d.exts, "EGL_EXT_device_drm")
                    ? a->eglQueryDeviceStringEXT(devs[i], EGL_DRM_DEVICE_FILE_EXT) : NULL;
        d.render = glc__has_ext(d.exts, "EGL_EXT_device_drm_render_node")
                       ? a->eglQueryDeviceStringEXT(devs[i], EGL_DRM_RENDER_NODE_FILE_EXT)
                       : NULL;
        d.rank = glc__device_rank(d.exts, d.drm != NULL);
        for (j = i; j > 0 && r[j - 1].rank > d.rank; j--) /* stable insertion sort */
            r[j] = r[j - 1];
        r[j] = d;
    }
    glc__free(devs);
    *list = r;
    *count = n;
    return GLC_OK;
}

static void device_label(const ranked_dev *d, int index, char *out, size_t len)
{
    const char *kind = glc__has_ext(d->exts, "EGL_NV_device_cuda")         ? "cuda"
                       : glc__has_ext(d->exts, "EGL_MESA_device_software") ? "software"
                                                                           : "hardware";
    const char *path = d->render ? d->render : d->drm ? d->drm : "";
    snprintf(out, len, "egl-device %d (%s%s%s)", index, kind, *path ? " " : "", path);
}

static glc_status open_device_platform(struct glc_device *dev, glc__egl *e,
                                       const glc__device_sel *sel, uint32_t flags)
{
    egl_api *a = &e->api;
    ranked_dev *list;
    int n, i, matched = 0;
    glc_status st;
    if (!a->eglGetPlatformDisplayEXT || !a->eglQueryDevicesEXT ||
        !glc__has_ext(a->client_exts, "EGL_EXT_platform_device")) {
        why(dev, e, "device platform: EGL lacks EGL_EXT_platform_device/device_enumeration");
        return GLC_ERR_NO_DEVICE;
    }
    st = list_devices(a, &list, &n);
    if (st != GLC_OK) {
        why(dev, e, "device platform: eglQueryDevicesEXT failed");
        return st;
    }
    if (sel->kind == GLC__SEL_INDEX && sel->index >= n) {
        glc__free(list);
        why(dev, e, "device platform: GLC_DEVICE index %d, but there are %d EGL devices",
            sel->index, n);
        return GLC_ERR_NO_DEVICE;
    }
    st = GLC_ERR_NO_DEVICE;
    for (i = 0; i < n && st != GLC_OK; i++) {
        const ranked_dev *d = &list[i];
        if (sel->kind == GLC__SEL_INDEX && i != sel->index)
            continue;
        if (sel->kind == GLC__SEL_PATH && !((d->drm && strcmp(d->drm, sel->path) == 0) ||
                                           (d->render && strcmp(d->render, sel->path) == 0)))
            continue;
        matched++;
        device_label(d, i, e->device_name, sizeof e->device_name);
        st = try_display(dev, e, a->eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, d->dev, NULL),
                         e->device_name, flags);
    }
    if (n == 0)
        why(dev, e, "device platform: no EGL devices");
    else if (!matched)
        why(dev, e, "device platform: no EGL device has DRM path %s", sel->path);
    glc__free(list);
    return st;
}

static glc_status try_gbm_node(struct glc_device *dev, glc__egl *e, const char *path,
                               uint32_t flags)
{
    char what[160];
    glc_status st;
    snprintf(what, sizeof what, "gbm %s", path);
    e->drm_fd = open(path, O_RDWR | O_CLOEXEC);
    if (e->drm_fd < 0) {
        why(dev, e, "%s: cannot open", what);
        return GLC_ERR_NO_DEVICE;
    }
    e->gbm_dev = e->gbm.create(e->drm_fd);
    if (!e->gbm_dev) {
        why(dev, e, "%s: gbm_create_device failed", what);
        st = GLC_ERR_NO_DEVICE;
    } else {
        snprintf(e->device_name, sizeof e->device_name, "%s", path);
        st = try_display(dev, e, e->api.eglGetPlatformDisplayEXT(EGL_PLATFORM_GBM_KHR, e->gbm_dev,
                                                                 NULL), what, flags);
    }
    if (st != GLC_OK) {
        if (e->gbm_dev)
            e->gbm.destroy(e->gbm_dev);
        e->gbm_dev = NULL;
        close(e->drm_fd);
        e->drm_fd = -1;
    }
    return st;
}

static glc_status open_gbm_platform(struct glc_device *dev, glc__egl *e,
                                    const glc__device_sel *sel, uint32_t flags)
{
    DIR *dir;
    struct dirent *ent;
    glc_status st = GLC_ERR_NO_DEVICE;
    int tried = 0;
    if (!e->api.eglGetPlatformDisplayEXT ||
        !(glc__has_ext(e->api.client_exts, "EGL_KHR_platform_gbm") ||
          glc__has_ext(e->api.client_exts, "EGL_MESA_platform_gbm"))) {
        why(dev, e, "gbm platform: EGL lacks EGL_KHR_platform_gbm");
        return GLC_ERR_NO_DEVICE;
    }
    if (!e->gbm.lib) {
        e->gbm.lib = dlopen("libgbm.so.1", RTLD_NOW | RTLD_LOCAL);
        if (e->gbm.lib) {
            *(void **)&e->gbm.create = dlsym(e->gbm.lib, "gbm_create_device");
            *(void **)&e->gbm.destroy = dlsym(e->gbm.lib, "gbm_device_destroy");
        }
        if (!e->gbm.create || !e->gbm.destroy) {
            why(dev, e, "gbm platform: cannot load libgbm.so.1 (install libgbm1)");
            return GLC_ERR_NO_DEVICE;
        }
    }
    if (sel->kind == GLC__SEL_PATH)
        return try_gbm_node(dev, e, sel->path, flags);
    if (sel->kind == GLC__SEL_INDEX) {
        why(dev, e, "gbm platform: GLC_DEVICE index selects EGL devices; give a /dev/dri path");
        return GLC_ERR_NO_DEVICE;
    }
    dir = opendir("/dev/dri");
    if (!dir) {
        why(dev, e, "gbm platform: no /dev/dri");
        return GLC_ERR_NO_DEVICE;
    }
    while (st != GLC_OK && (ent = readdir(dir)) != NULL) {
        char path[300];
        if (strncmp(ent->d_name, "renderD", 7) != 0)
            continue;
        tried++;
        snprintf(path, sizeof path, "/dev/dri/%s", ent->d_name);
        st = try_gbm_node(dev, e, path, flags);
    }
    closedir(dir);
    if (!tried)
        why(dev, e, "gbm platform: no /dev/dri/renderD* node");
    return st;
}

static glc_status open_surfaceless(struct glc_device *dev, glc__egl *e, uint32_t flags)
{
    if (!e->api.eglGetPlatformDisplayEXT ||
        !glc__has_ext(e->api.client_exts, "EGL_MESA_platform_surfaceless")) {
        why(dev, e, "surfaceless platform: EGL lacks EGL_MESA_platform_surfaceless");
        return GLC_ERR_NO_DEVICE;
    }
    snprintf(e->device_name, sizeof e->device_name, "surfaceless");
    return try_display(dev, e, e->api.eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA,
                                                               EGL_DEFAULT_DISPLAY, NULL),
                       "surfaceless platform", flags);
}

static glc_status open_default(struct glc_device *dev, glc__egl *e, uint32_t flags)
{
    snprintf(e->device_name, sizeof e->device_name, "default display");
    return try_display(dev, e, e->api.eglGetDisplay(EGL_DEFAULT_DISPLAY), "default display",
                       flags);
}

static glc_status adopt_current(struct glc_device *dev, glc__egl *e)
{
    egl_api *a = &e->api;
    EGLint type = 0;
    int gl_major, gl_minor;
    e->ctx = a->eglGetCurrentContext();
    e->dpy = a->eglGetCurrentDisplay();
    if (e->ctx == EGL_NO_CONTEXT || e->dpy == EGL_NO_DISPLAY) {
        why(dev, e, "platform current: no EGL context is current on this thread");
        return GLC_ERR_NO_DEVICE;
    }
    if (a->eglQueryContext(e->dpy, e->ctx, EGL_CONTEXT_CLIENT_TYPE, &type) &&
        type != EGL_OPENGL_ES_API) {
        why(dev, e, "platform current: the current context is not OpenGL ES");
        return GLC_ERR_UNSUPPORTED;
    }
    if (!gl_version_ok(e, &gl_major, &gl_minor)) {
        why(dev, e, "platform current: context is OpenGL ES %d.%d, need 3.1", gl_major,
            gl_minor);
        return GLC_ERR_UNSUPPORTED;
    }
    snprintf(e->device_name, sizeof e->device_name, "adopted context");
    return GLC_OK;
}

glc_status glc__egl_open(struct glc_device *dev, glc_platform platform, const char *device,
                         uint32_t flags, glc__egl **out)
{
    glc__egl *e;
    glc__device_sel sel;
    glc_status st;
    if (glc__parse_device(device, &sel) != GLC_OK)
        return glc__fail(dev, GLC_ERR_INVALID_ARG,
                         "device \"%s\": expected an EGL device index or a /dev/dri path",
                         device);
    e = glc__calloc(1, sizeof *e);
    if (!e)
        return glc__fail(dev, GLC_ERR_OUT_OF_MEMORY, "device: out of memory");
    e->dpy = EGL_NO_DISPLAY;
    e->ctx = EGL_NO_CONTEXT;
    e->surf = EGL_NO_SURFACE;
    e->drm_fd = -1;
    st = load_egl(&e->api, dev->env.egl_library, e->why, sizeof e->why);
    if (st != GLC_OK) {
        st = glc__fail(dev, st, "%s", e->why);
        glc__free(e);
        return st;
    }
    switch (platform) {
    case GLC_PLATFORM_DEVICE: st = open_device_platform(dev, e, &sel, flags); break;
    case GLC_PLATFORM_GBM: st = open_gbm_platform(dev, e, &sel, flags); break;
    case GLC_PLATFORM_SURFACELESS: st = open_surfaceless(dev, e, flags); break;
    case GLC_PLATFORM_DEFAULT: st = open_default(dev, e, flags); break;
    case GLC_PLATFORM_CURRENT: st = adopt_current(dev, e); break;
    case GLC_PLATFORM_AUTO:
    default:
        platform = GLC_PLATFORM_DEVICE;
        st = open_device_platform(dev, e, &sel, flags);
        if (st == GLC_ERR_NO_DEVICE) {
            platform = GLC_PLATFORM_GBM;
            st = open_gbm_platform(dev, e, &sel, flags);
        }
        if (st == GLC_ERR_NO_DEVICE && sel.kind == GLC__SEL_NONE) {
            platform = GLC_PLATFORM_SURFACELESS;
            st = open_surfaceless(dev, e, flags);
        }
        if (st == GLC_ERR_NO_DEVICE && sel.kind == GLC__SEL_NONE) {
            platform = GLC_PLATFORM_DEFAULT;
            st = open_default(dev, e, flags);
        }
        break;
    }
    if (st != GLC_OK) {
        st = glc__fail(dev, st, "no usable %s EGL platform: %s", glc_platform_name(platform),
                       e->why);
        glc__egl_close(e);
        return st;
    }
    e->platform = platform;
    *out = e;
    return GLC_OK;
}

void glc__egl_close(glc__egl *e)
{
    if (!e)
        return;
    if (e->owned)
        release_context(e);
    if (e->gbm_dev)
        e->gbm.destroy(e->gbm_dev);
    if (e->drm_fd >= 0)
        close(e->drm_fd);
    if (e->gbm.lib)
        dlclose(e->gbm.lib);
    if (e->gles_lib)
        dlclose(e->gles_lib);
    /* libEGL stays loaded: drivers register atexit handlers and TLS
     * destructors that must not outlive their code. */
    glc__free(e);
}

void *glc__egl_proc(glc__egl *e, const char *name)
{
    void *p = (void *)e->api.eglGetProcAddress(name);
    if (p)
        return p;
    if (!e->gles_lib)
        e->gles_lib = dlopen("libGLESv2.so.2", RTLD_NOW | RTLD_LOCAL);
    return e->gles_lib ? dlsym(e->gles_lib, name) : NULL;
}

glc_status glc__egl_ensure_current(struct glc_device *dev, glc__egl *e)
{
    EGLContext cur = e->api.eglGetCurrentContext();
    if (cur == e->ctx)
        return GLC_OK;
    if (!e->owned)
        return glc__fail(dev, GLC_ERR_STATE,
                         "the adopted context is not current on this thread: make it current "
                         "before calling glcompute");
    if (cur != EGL_NO_CONTEXT)
        return glc__fail(dev, GLC_ERR_STATE,
                         "another EGL context is current on this thread: release it (or use "
                         "platform CURRENT) before calling glcompute");
    if (!e->api.eglBindAPI(EGL_OPENGL_ES_API) ||
        !e->api.eglMakeCurrent(e->dpy, e->surf, e->surf, e->ctx))
        return glc__fail(dev, GLC_ERR_STATE,
                         "cannot make the device's context current (%s): a device is used "
                         "from one thread at a time",
                         egl_err_name(e->api.eglGetError()));
    return GLC_OK;
}

glc_platform glc__egl_platform(const glc__egl *e) { return e->platform; }
const char *glc__egl_device_name(const glc__egl *e) { return e->device_name; }
const char *glc__egl_vendor(const glc__egl *e) { return e->vendor; }
int glc__egl_robust(const glc__egl *e) { return e->robust; }

glc_status glc_device_list(glc_device_entry *entries, int max, int *count)
{
    egl_api a;
    ranked_dev *list;
    int n, i;
    char err[1200];
    glc__env env;
    glc_status st;
    GLC__ARG(NULL, count && max >= 0 && (max == 0 || entries));
    *count = 0;
    glc__heap_use(NULL); /* no device: malloc */
    glc__env_defaults(&env);
    if ((st = glc__env_read_one(&env, GLC__ENV_EGL_LIBRARY, err, sizeof err)) != GLC_OK ||
        (st = load_egl(&a, env.egl_library, err, sizeof err)) != GLC_OK)
        return glc__fail(NULL, st, "glc_device_list: %s", err);
    st = list_devices(&a, &list, &n);
    if (st != GLC_OK)
        return glc__fail(NULL, st, "glc_device_list: %s",
                         st == GLC_ERR_OUT_OF_MEMORY ? "out of memory"
                                                     : "no EGL device enumeration "
                                                       "(EGL_EXT_device_enumeration)");
    for (i = 0; i < n && i < max; i++) {
        glc_device_entry *d = &entries[i];
        memset(d, 0, sizeof *d);
        d->index = i;
        d->rank = list[i].rank;
        d->is_software = glc__has_ext(list[i].exts, "EGL_MESA_device_software");
        d->has_cuda = glc__has_ext(list[i].exts, "EGL_NV_device_cuda");
        d->has_drm = glc__has_ext(list[i].exts, "EGL_EXT_device_drm");
        snprintf(d->drm_path, sizeof d->drm_path, "%s", list[i].drm ? list[i].drm : "");
        snprintf(d->render_path, sizeof d->render_path, "%s",
                 list[i].render ? list[i].render : "");
        snprintf(d->extensions, sizeof d->extensions, "%s",
                 list[i].exts ? list[i].exts : "");
    }
    *count = n;
    glc__free(list);
    return GLC_OK;
}
