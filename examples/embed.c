/*
 * Using glcompute inside your own GL application.
 *
 * This program plays the application. It has its own headless EGL context
 * (ES 3.1), a 64x64 framebuffer, a vertex buffer of 16 bar heights (floats,
 * in pixels), a VAO and a program that draws them as a bar chart, and GL
 * state of its own (bound program, array buffer, generic and indexed SSBO
 * bindings, viewport, clear color, active texture). It
 *  1. draws frame 0 and checks every pixel;
 *  2. creates a glcompute device with GLC_PLATFORM_CURRENT: glcompute adopts
 *     the current context instead of making one, and wraps the vertex
 *     buffer and a source buffer with glc_buffer_wrap_gl (borrowed:
 *     glcompute never deletes them);
 *  3. compiles h = relu(x W^T + b) (W sums three neighbouring signals, b =
 *     -3: integers, so the GPU's sums are the C ones exactly) and binds the
 *     plan's input to the application's source buffer (an SSBO it writes
 *     itself) and its output to the vertex buffer (glc_plan_bind_input /
 *     _output): no host copy either way;
 *  4. for 6 frames writes the source with glBufferSubData, runs the plan,
 *     issues the vertex-fetch barrier through glc_device_release_to_gl,
 *     draws and checks every pixel against a C computation; then times 200
 *     frames this way against the host round trip (map the source, run a
 *     clone of the plan on a copy, glBufferSubData the result), and checks
 *     that none of its GL state moved, after the compute and again after
 *     glcompute is gone.
 *
 * Rules when sharing a context with glcompute:
 *  - Every glcompute call saves and restores the GL state it changes; it
 *    never touches the VAO, GL_ARRAY_BUFFER or GL_ELEMENT_ARRAY_BUFFER.
 *  - glcompute's barriers order its own accesses only. Before drawing from
 *    a buffer a compute shader wrote, issue the barrier for your use
 *    (GL_VERTEX_ATTRIB_ARRAY_BARRIER_BIT here), yourself or through
 *    glc_device_release_to_gl.
 *  - A plan run (and a DIRECT session's op) goes into the GL command stream
 *    at once, so GL itself orders your next draw after it: no wait is
 *    needed per frame.
 *  - Destroy glcompute's objects before the GL objects they wrap and
 *    before the context.
 * With no EGL display at all, it prints a skip line and exits 0.
 */
#define GL_GLES_PROTOTYPES 1 /* the application calls GL directly */
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl31.h>
#include <glcompute.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#define SIZE 64                /* framebuffer width and height */
#define BARS 16                /* one bar per vertex-buffer float */
#define BAR_W (SIZE / BARS)    /* 4 pixels; the vertex shader's 4.0 */

typedef struct app {
    EGLDisplay dpy;
    EGLContext ctx;
    GLuint tex, fbo, vbo, vao, prog, ssbo[2];
} app;

/* Bar b is instance b; its six vertices are two triangles of a unit square
 * scaled to [4b, 4b + 4) x [0, height) in pixels. Integer edges never pass
 * through a pixel center, so the picture is exact: pixel (x, y) is lit iff
 * y < height of bar x / 4. */
static const char *vs_src =
    "#version 310 es\n"
    "layout(location = 0) in float height;\n"
    "const vec2 corner[6] = vec2[6](vec2(0, 0), vec2(1, 0), vec2(0, 1),\n"
    "                               vec2(0, 1), vec2(1, 0), vec2(1, 1));\n"
    "void main() {\n"
    "    vec2 c = corner[gl_VertexID];\n"
    "    vec2 px = vec2((float(gl_InstanceID) + c.x) * 4.0, c.y * height);\n"
    "    gl_Position = vec4(px / 32.0 - 1.0, 0.0, 1.0);\n"
    "}\n";
static const char *fs_src = "#version 310 es\n"
                            "precision mediump float;\n"
                            "out vec4 color;\n"
                            "void main() { color = vec4(1.0, 1.0, 0.0, 1.0); }\n";
static const GLubyte bar_rgba[4] = {255, 255, 0, 255}, clear_rgba[4] = {0, 0, 255, 255};

/* ---- the application's side: plain EGL and GLES ---- */

/* The first EGL device that initialises (with no GPU: Mesa's software
 * device), else Mesa's surfaceless platform; a configless ES 3.1 context
 * with no surface: the picture goes to a framebuffer object. */
static int app_open(app *a)
{
    static const EGLint attr[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 1,
                                  EGL_NONE};
    PFNEGLQUERYDEVICESEXTPROC query_devices =
        (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
    PFNEGLGETPLATFORMDISPLAYEXTPROC get_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    EGLDeviceEXT devs[8];
    EGLint n = 0, i;
    memset(a, 0, sizeof *a);
    a->dpy = EGL_NO_DISPLAY;
    if (!get_display)
        return 0;
    if (query_devices && query_devices(8, devs, &n))
        for (i = 0; i < n && a->dpy == EGL_NO_DISPLAY; i++) {
            a->dpy = get_display(EGL_PLATFORM_DEVICE_EXT, devs[i], NULL);
            if (a->dpy != EGL_NO_DISPLAY && !eglInitialize(a->dpy, NULL, NULL))
                a->dpy = EGL_NO_DISPLAY;
        }
    if (a->dpy == EGL_NO_DISPLAY) {
        a->dpy = get_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
        if (a->dpy != EGL_NO_DISPLAY && !eglInitialize(a->dpy, NULL, NULL))
            a->dpy = EGL_NO_DISPLAY;
    }
    if (a->dpy == EGL_NO_DISPLAY || !eglBindAPI(EGL_OPENGL_ES_API))
        return 0;
    a->ctx = eglCreateContext(a->dpy, (EGLConfig)0, EGL_NO_CONTEXT, attr);
    return a->ctx != EGL_NO_CONTEXT &&
           eglMakeCurrent(a->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, a->ctx);
}

static GLuint shader(GLenum type, const char *src)
{
    GLuint sh = glCreateShader(type);
    glShaderSource(sh, 1, &src, NULL);
    glCompileShader(sh);
    return sh;
}

/* Framebuffer, vertex buffer, VAO, program, and state of its own. */
static int app_setup(app *a, const float *heights)
{
    GLuint vs = shader(GL_VERTEX_SHADER, vs_src), fs = shader(GL_FRAGMENT_SHADER, fs_src);
    GLint linked = 0;

    a->prog = glCreateProgram();
    glAttachShader(a->prog, vs);
    glAttachShader(a->prog, fs);
    glLinkProgram(a->prog);
    glDeleteShader(vs);
    glDeleteShader(fs);
    glGetProgramiv(a->prog, GL_LINK_STATUS, &linked);

    glActiveTexture(GL_TEXTURE1); /* the color target stays bound on unit 1 */
    glGenTextures(1, &a->tex);
    glBindTexture(GL_TEXTURE_2D, a->tex);
    glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA8, SIZE, SIZE);
    glGenFramebuffers(1, &a->fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, a->fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, a->tex, 0);

    glGenVertexArrays(1, &a->vao);
    glBindVertexArray(a->vao);
    glGenBuffers(1, &a->vbo);
    glBindBuffer(GL_ARRAY_BUFFER, a->vbo);
    glBufferData(GL_ARRAY_BUFFER, BARS * sizeof(float), heights, GL_DYNAMIC_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 1, GL_FLOAT, GL_FALSE, 0, NULL);
    glVertexAttribDivisor(0, 1); /* one height per instance (bar) */

    /* SSBOs the application uses elsewhere: indexed bindings 0 (a range)
     * and 2, and a generic binding that differs from both */
    glGenBuffers(2, a->ssbo);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, a->ssbo[0]);
    glBufferData(GL_SHADER_STORAGE_BUFFER, 1024, NULL, GL_DYNAMIC_DRAW);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, a->ssbo[1]);
    glBufferData(GL_SHADER_STORAGE_BUFFER, 256, NULL, GL_DYNAMIC_DRAW);
    glBindBufferRange(GL_SHADER_STORAGE_BUFFER, 0, a->ssbo[0], 256, 512);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, a->ssbo[1]);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, a->ssbo[0]);

    glUseProgram(a->prog);
    glViewport(0, 0, SIZE, SIZE);
    glClearColor(0.0f, 0.0f, 1.0f, 1.0f);
    return linked && glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE &&
           glGetError() == GL_NO_ERROR;
}

static void app_close(app *a)
{
    glDeleteProgram(a->prog);
    glDeleteVertexArrays(1, &a->vao);
    glDeleteBuffers(1, &a->vbo);
    glDeleteBuffers(2, a->ssbo);
    glDeleteFramebuffers(1, &a->fbo);
    glDeleteTextures(1, &a->tex);
    eglMakeCurrent(a->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(a->dpy, a->ctx);
    /* No eglTerminate: Mesa 22.3 unloads its driver there and leaks 128 to
     * 240 bytes of it, which LeakSanitizer would blame on this program. */
    eglReleaseThread();
}

/* Draws the bars and compares every pixel with the heights expected. */
static int draw_and_check(const float *want, const char *frame)
{
    static GLubyte px[SIZE * SIZE * 4];
    int x, y, bad = 0, first = -1;
    glClear(GL_COLOR_BUFFER_BIT);
    glDrawArraysInstanced(GL_TRIANGLES, 0, 6, BARS);
    glReadPixels(0, 0, SIZE, SIZE, GL_RGBA, GL_UNSIGNED_BYTE, px); /* row 0 at the bottom */
    for (y = 0; y < SIZE; y++)
        for (x = 0; x < SIZE; x++) {
            const GLubyte *rgba = (float)y < want[x / BAR_W] ? bar_rgba : clear_rgba;
            if (memcmp(&px[(y * SIZE + x) * 4], rgba, 4) != 0 && bad++ == 0)
                first = y * SIZE + x;
        }
    if (bad)
        printf("embed: %s: %d of %d pixels wrong, the first at (%d, %d)\n", frame, bad,
               SIZE * SIZE, first % SIZE, first / SIZE);
    return bad == 0;
}

/* The application's GL state, queried with its own GL calls. Colors come
 * back from glGetInteger64v mapped linearly to the integer range. */
typedef struct gl_query {
    const char *name;
    GLenum pname;
    int index; /* -1: not an indexed query */
} gl_query;
#define Q(p) {#p, p, -1}
#define QI(p, i) {#p "[" #i "]", p, i}
static const gl_query watched[] = {
    Q(GL_CURRENT_PROGRAM), Q(GL_VERTEX_ARRAY_BINDING), Q(GL_ARRAY_BUFFER_BINDING),
    Q(GL_ELEMENT_ARRAY_BUFFER_BINDING), Q(GL_SHADER_STORAGE_BUFFER_BINDING),
    QI(GL_SHADER_STORAGE_BUFFER_BINDING, 0), QI(GL_SHADER_STORAGE_BUFFER_START, 0),
    QI(GL_SHADER_STORAGE_BUFFER_SIZE, 0), QI(GL_SHADER_STORAGE_BUFFER_BINDING, 1),
    QI(GL_SHADER_STORAGE_BUFFER_BINDING, 2), Q(GL_UNIFORM_BUFFER_BINDING),
    QI(GL_UNIFORM_BUFFER_BINDING, 0), Q(GL_COPY_READ_BUFFER_BINDING),
    Q(GL_COPY_WRITE_BUFFER_BINDING), Q(GL_DISPATCH_INDIRECT_BUFFER_BINDING),
    Q(GL_DRAW_FRAMEBUFFER_BINDING), Q(GL_READ_FRAMEBUFFER_BINDING), Q(GL_ACTIVE_TEXTURE),
    Q(GL_TEXTURE_BINDING_2D), Q(GL_VIEWPORT), Q(GL_COLOR_CLEAR_VALUE),
};
#define NWATCHED (sizeof watched / sizeof watched[0])
typedef struct snapshot {
    GLint64 v[NWATCHED][4];
} snapshot;

static void take(snapshot *s)
{
    size_t i;
    memset(s, 0, sizeof *s);
    for (i = 0; i < NWATCHED; i++) {
        if (watched[i].index < 0)
            glGetInteger64v(watched[i].pname, s->v[i]);
        else
            glGetInteger64i_v(watched[i].pname, (GLuint)watched[i].index, s->v[i]);
    }
}

static int same_state(const snapshot *ref, const char *when)
{
    static const char *part[4] = {"", " (2nd value)", " (3rd value)", " (4th value)"};
    snapshot now;
    size_t i;
    int k, same = 1;
    take(&now);
    for (i = 0; i < NWATCHED; i++)
        for (k = 0; k < 4; k++)
            if (now.v[i][k] != ref->v[i][k]) {
                printf("embed: %s: %s%s was %lld, is %lld\n", when, watched[i].name,
                       part[k], (long long)ref->v[i][k], (long long)now.v[i][k]);
                same = 0;
                break;
            }
    return same;
}

/* ---- glcompute on the application's context ---- */

#define TRY(call)                                                                         \
    do {                                                                                  \
        glc_status st_ = (call);                                                          \
        if (st_ != GLC_OK) {                                                              \
            printf("embed: %s: %s: %s\n", #call, glc_status_str(st_),                     \
                   glc_device_errmsg(dev));                                               \
            goto done;                                                                    \
        }                                                                                 \
    } while (0)

#define FRAMES 6        /* frames checked pixel by pixel */
#define TIMED 200       /* frames timed each way */

/* Frame f's signal: integers 0 .. 15, so every sum below is exact. */
static void signal_of(int f, float *x)
{
    int i;
    for (i = 0; i < BARS; i++)
        x[i] = (float)((i * 5 + f * 3) % 16);
}

/* The plan's computation in C: h_j = relu(x_(j-1) + x_j + x_(j+1) - 3). */
static void heights_of(const float *x, float *h)
{
    int j, i;
    for (j = 0; j < BARS; j++) {
        float s = -3.0f;
        for (i = j - 1; i <= j + 1; i++)
            if (i >= 0 && i < BARS)
                s += x[i];
        h[j] = s > 0.0f ? s : 0.0f;
    }
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(void)
{
    float h0[BARS], x[BARS], want[BARS], w[BARS * BARS], b[BARS];
    int64_t n = BARS, row[2] = {1, BARS}, ws[2] = {BARS, BARS};
    glc_matmul_desc nt = {1};
    glc_device_desc desc = {0};
    glc_device *dev = NULL;
    glc_buffer *heights = NULL, *source = NULL;
    glc_graph *g = NULL;
    glc_plan *plan = NULL, *host_plan = NULL;
    glc_tensor tx;
    snapshot ref;
    app a;
    double t_bound = 0, t_host = 0;
    int i, j, f, ok = 0, computed = 0, state_kept;

    for (i = 0; i < BARS; i++) {
        h0[i] = (float)((i * 11) % BARS * 3 + 4); /* 4, 7, ..., 49 */
        b[i] = -3.0f;
        for (j = 0; j < BARS; j++) /* w[j][i]: bar j sums signals j - 1 .. j + 1 */
            w[j * BARS + i] = i >= j - 1 && i <= j + 1 ? 1.0f : 0.0f;
    }
    if (!app_open(&a)) {
        printf("embed: skipped (no EGL display with an ES 3.1 context)\n");
        return 0;
    }
    if (!app_setup(&a, h0)) {
        printf("embed: the application's own GL set-up failed\n");
        app_close(&a);
        return 1;
    }
    take(&ref);
    if (!draw_and_check(h0, "frame 0"))
        goto done;

    /* Adopt the current context; nothing of EGL is created or owned. */
    desc.platform = GLC_PLATFORM_CURRENT;
    TRY(glc_device_create(&desc, &dev));
    TRY(glc_buffer_wrap_gl(dev, a.vbo, GLC_DTYPE_F32, 1, &n, &heights));
    TRY(glc_buffer_wrap_gl(dev, a.ssbo[0], GLC_DTYPE_F32, 1, &n, &source));

    /* The graph, compiled once: h = relu(x W^T + b), one fused dispatch. */
    TRY(glc_graph_create(dev, &g));
    tx = glc_graph_input(g, "x", GLC_DTYPE_F32, 2, row);
    glc_graph_output(g, "h", glc_unary(g, GLC_UNARY_RELU,
                                       glc_matmul(g, tx, glc_graph_param(g, "w", GLC_DTYPE_F32, 2, ws),
                                                  glc_graph_param(g, "b", GLC_DTYPE_F32, 1, &n), &nt),
                                       0));
    TRY(glc_graph_compile(g, NULL, &plan));
    TRY(glc_plan_set_param(plan, "w", w, BARS * BARS));
    TRY(glc_plan_set_param(plan, "b", b, BARS));
    TRY(glc_plan_clone(plan, &host_plan)); /* the same program and params, on host memory */
    /* its input read from the application's buffer, its output written
     * into the vertex buffer the application draws from */
    TRY(glc_plan_bind_input(plan, "x", glc_view_make(source, 0, GLC_DTYPE_F32, 2, row)));
    TRY(glc_plan_bind_output(plan, "h", glc_view_make(heights, 0, GLC_DTYPE_F32, 2, row)));

    for (f = 1; f <= FRAMES; f++) {
        char name[16];
        signal_of(f, x);
        heights_of(x, want);
        /* the application's own write (GL orders API writes before later reads) */
        glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, sizeof x, x);
        TRY(glc_plan_run(plan, NULL, 0, NULL, 0));
        /* a compute shader wrote what the vertex fetch reads next */
        TRY(glc_device_release_to_gl(dev, GL_VERTEX_ATTRIB_ARRAY_BARRIER_BIT));
        snprintf(name, sizeof name, "frame %d", f);
        if (!draw_and_check(want, name))
            goto done;
    }
    computed = 1;

    /* The cost of a frame: the plan on the application's buffers against
     * the host round trip it replaces (map the source, run on a copy,
     * upload the result into the vertex buffer); each frame draws. */
    glFinish();
    t_bound = now_ms();
    for (f = 0; f < TIMED; f++) {
        signal_of(f, x);
        glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, sizeof x, x);
        TRY(glc_plan_run(plan, NULL, 0, NULL, 0));
        TRY(glc_device_release_to_gl(dev, GL_VERTEX_ATTRIB_ARRAY_BARRIER_BIT));
        glDrawArraysInstanced(GL_TRIANGLES, 0, 6, BARS);
    }
    glFinish();
    t_bound = (now_ms() - t_bound) / TIMED;
    t_host = now_ms();
    for (f = 0; f < TIMED; f++) {
        const void *in[1];
        glc_plan_slice sl[1];
        void *mapped;
        float copy[BARS];
        signal_of(f, x);
        glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, sizeof x, x);
        mapped = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, sizeof copy, GL_MAP_READ_BIT);
        if (!mapped)
            goto done;
        memcpy(copy, mapped, sizeof copy);
        glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
        in[0] = copy;
        TRY(glc_plan_run_slots(host_plan, in, sl));
        glBufferSubData(GL_ARRAY_BUFFER, 0, sizeof copy,
                        (const char *)glc_plan_arena_ptr(host_plan) + sl[0].offset);
        glDrawArraysInstanced(GL_TRIANGLES, 0, 6, BARS);
    }
    glFinish();
    t_host = (now_ms() - t_host) / TIMED;
    /* the last timed frame's heights, drawn from the host path: the plan's
     * answer once more */
    heights_of(x, want);
    ok = draw_and_check(want, "after the timing");

done:
    state_kept = same_state(&ref, "after the compute");
    if (!computed)
        ok = 0;
    glc_plan_destroy(plan);
    glc_plan_destroy(host_plan);
    glc_graph_destroy(g);
    glc_buffer_destroy(source);
    glc_buffer_destroy(heights); /* wrapped: the GL buffers stay the application's */
    glc_device_destroy(dev);
    state_kept = same_state(&ref, "after glcompute was destroyed") && state_kept;
    if (!glIsBuffer(a.vbo) || eglGetCurrentContext() != a.ctx || glGetError() != GL_NO_ERROR) {
        printf("embed: the application lost its buffer, its context or has a GL error\n");
        state_kept = 0;
    }
    app_close(&a);
    ok = ok && state_kept;
    printf("embed: a compiled plan (h = relu(x W^T + b)) reading the app's buffer and writing its "
           "vertex buffer, %d frames checked; a frame %.3f ms vs %.3f ms with the host round trip; "
           "%zu GL state values kept: %s\n",
           FRAMES, t_bound, t_host, NWATCHED, ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
