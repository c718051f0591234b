/*
 * Every failing public call leaves a message. One table of calls with bad
 * arguments (NULL handles, NULL outputs, out-of-range values, unknown
 * names), run against one device: each case checks the documented status,
 * a non-empty message that names the call (the device's errmsg and its log
 * at ERROR, or glc_device_errmsg(NULL) when the handle itself is NULL), and
 * that no output was written (every output points at sentinel memory).
 * Graph builders fail stickily: each one with a bad tensor leaves the
 * graph's status and message.
 */
#include "testutil.h"

#include "device.h"

#include <stdint.h>

#define N 16

typedef struct fx {
    tu_log log;
    glc_device *dev;
    glc_buffer *buf;
    glc_kernel *kern;
    glc_session *s;
    glc_graph *g, *gbad, *gempty;
    glc_plan *p, *p2;
    float w[N], x[N], h[N];
    /* Outputs handed to the failing calls: sentinels checked after each. */
    glc_device *odev;
    glc_buffer *obuf;
    glc_kernel *okern;
    glc_session *osess;
    glc_fence *ofence;
    glc_graph *ograph;
    glc_plan *oplan;
    union {
        unsigned char bytes[4096];
        uint64_t align;
    } blob;
    glc_plan_profile prof;
    glc_plan_dispatch_time entries[1];
} fx;

static fx F;
static unsigned char sentinel_target;
#define SENT(type) ((type *)(void *)&sentinel_target)
#define BLOB(type) ((type *)(void *)F.blob.bytes)

static void set_sentinels(fx *f)
{
    f->odev = SENT(glc_device);
    f->obuf = SENT(glc_buffer);
    f->okern = SENT(glc_kernel);
    f->osess = SENT(glc_session);
    f->ofence = SENT(glc_fence);
    f->ograph = SENT(glc_graph);
    f->oplan = SENT(glc_plan);
    memset(f->blob.bytes, 0x5a, sizeof f->blob.bytes);
    memset(&f->prof, 0, sizeof f->prof);
    f->prof.entries = f->entries;
    f->prof.capacity = 1; /* below the plan's dispatches */
    f->prof.count = 77;
}

static void check_sentinels(const fx *f, const char *label)
{
    glc_plan_profile prof;
    size_t i;
    if (f->odev != SENT(glc_device) || f->obuf != SENT(glc_buffer) ||
        f->okern != SENT(glc_kernel) || f->osess != SENT(glc_session) ||
        f->ofence != SENT(glc_fence) || f->ograph != SENT(glc_graph) ||
        f->oplan != SENT(glc_plan))
        fail_msg("%s: wrote an output handle on failure", label);
    for (i = 0; i < sizeof f->blob.bytes; i++)
        if (f->blob.bytes[i] != 0x5a)
            fail_msg("%s: wrote output memory (byte %zu) on failure", label, i);
    memset(&prof, 0, sizeof prof);
    prof.entries = (glc_plan_dispatch_time *)f->entries;
    prof.capacity = 1;
    prof.count = 77;
    if (memcmp(&prof, &f->prof, sizeof prof) != 0)
        fail_msg("%s: wrote the profile on failure", label);
}

static void text_sink(void *user, const char *text)
{
    (void)user;
    (void)text;
}

/* ---- the cases ---- */

enum { DEV, NODEV };

typedef struct err_case {
    const char *label;  /* the call; the message must contain the name before '(' */
    glc_status want;
    int where;          /* DEV: the device's errmsg and log; NODEV: glc_device_errmsg(NULL) */
    glc_status (*call)(fx *f);
    const char *expect; /* text the message must contain instead of the name, or NULL */
} err_case;

static const int64_t s16[1] = {N};
static const int64_t sneg[1] = {-3};

static glc_kernel_desc kdesc(const char *src)
{
    glc_kernel_desc d;
    memset(&d, 0, sizeof d);
    d.name = "errors";
    d.source = src;
    return d;
}
static const char ok_src[] = "layout(std430, binding = 0) buffer B { uint v[]; };\n"
                             "void main() { v[gl_GlobalInvocationID.x] = 1u; }\n";

static glc_dispatch_desc ddesc(fx *f, glc_binding *b)
{
    glc_dispatch_desc d;
    memset(&d, 0, sizeof d);
    memset(b, 0, sizeof *b);
    b->buffer = f->buf;
    b->access = GLC_WRITE;
    d.kernel = f->kern;
    d.groups = 1;
    d.bindings = b;
    d.binding_count = 1;
    return d;
}

static glc_view view16(fx *f) { return glc_view_of(f->buf); }

/* plan inputs: "x" [T, 16] with T = 1 */
static glc_plan_input in_x(fx *f)
{
    glc_plan_input in = {"x", f->x, N};
    return in;
}
static glc_plan_output out_y(size_t count)
{
    glc_plan_output out = {"y", F.blob.bytes, count};
    return out;
}

#define C(name, ...) \
    static glc_status name(fx *f) { __VA_ARGS__ }

/* device */
C(dev_create_null_out, (void)f; return glc_device_create(NULL, NULL);)
C(dev_info_null_dev, (void)f; return glc_device_get_info(NULL, BLOB(glc_device_info));)
C(dev_info_null_out, return glc_device_get_info(f->dev, NULL);)
C(dev_list_null_entries, (void)f; return glc_device_list(NULL, 2, BLOB(int));)
C(dev_list_neg_max, (void)f; return glc_device_list(NULL, -1, BLOB(int));)
/* buffers */
C(buf_create_null_dev, return glc_buffer_create(NULL, GLC_DTYPE_F32, 1, s16, &f->obuf);)
C(buf_create_null_out, return glc_buffer_create(f->dev, GLC_DTYPE_F32, 1, s16, NULL);)
C(buf_create_rank0, return glc_buffer_create(f->dev, GLC_DTYPE_F32, 0, s16, &f->obuf);)
C(buf_create_null_shape, return glc_buffer_create(f->dev, GLC_DTYPE_F32, 1, NULL, &f->obuf);)
C(buf_create_neg_shape, return glc_buffer_create(f->dev, GLC_DTYPE_F32, 1, sneg, &f->obuf);)
C(buf_create_bad_dtype, return glc_buffer_create(f->dev, (glc_dtype)999, 1, s16, &f->obuf);)
C(buf_wrap_null_dev, return glc_buffer_wrap_gl(NULL, 1, GLC_DTYPE_F32, 1, s16, &f->obuf);)
C(buf_wrap_zero, return glc_buffer_wrap_gl(f->dev, 0, GLC_DTYPE_F32, 1, s16, &f->obuf);)
C(buf_wrap_not_buffer,
  return glc_buffer_wrap_gl(f->dev, 987654, GLC_DTYPE_F32, 1, s16, &f->obuf);)
C(buf_write_null, (void)f; return glc_buffer_write(NULL, 0, 4, F.w);)
C(buf_write_past_end, return glc_buffer_write(f->buf, N * 4 - 4, 8, f->w);)
C(buf_write_null_data, return glc_buffer_write(f->buf, 0, 4, NULL);)
C(buf_read_null, (void)f; return glc_buffer_read(NULL, 0, 4, F.blob.bytes);)
C(buf_read_past_end, return glc_buffer_read(f->buf, N * 4, 4, f->blob.bytes);)
C(buf_read_wrap, return glc_buffer_read(f->buf, SIZE_MAX - 3, 8, f->blob.bytes);)
/* kernels */
C(kern_null_dev, glc_kernel_desc d = kdesc(ok_src); return glc_kernel_create(NULL, &d, &f->okern);)
C(kern_null_desc, return glc_kernel_create(f->dev, NULL, &f->okern);)
C(kern_null_out, glc_kernel_desc d = kdesc(ok_src); return glc_kernel_create(f->dev, &d, NULL);)
C(kern_null_source, glc_kernel_desc d = kdesc(NULL); return glc_kernel_create(f->dev, &d, &f->okern);)
C(kern_bad_glsl, glc_kernel_desc d = kdesc("void main() { nope(); }\n");
  return glc_kernel_create(f->dev, &d, &f->okern);)
/* sessions */
C(sess_begin_null_dev, return glc_session_begin(NULL, GLC_SESSION_DIRECT, &f->osess);)
C(sess_begin_bad_mode, return glc_session_begin(f->dev, 7, &f->osess);)
C(sess_begin_null_out, return glc_session_begin(f->dev, GLC_SESSION_DIRECT, NULL);)
C(sess_dispatch_null, glc_binding b; glc_dispatch_desc d = ddesc(f, &b);
  return glc_session_dispatch(NULL, &d);)
C(sess_dispatch_null_desc, return glc_session_dispatch(f->s, NULL);)
C(sess_dispatch_null_kernel, glc_binding b; glc_dispatch_desc d = ddesc(f, &b); d.kernel = NULL;
  return glc_session_dispatch(f->s, &d);)
C(sess_dispatch_past_end, glc_binding b; glc_dispatch_desc d = ddesc(f, &b); b.offset = N * 4;
  b.size = 16; return glc_session_dispatch(f->s, &d);)
C(sess_dispatch_neg_count, glc_binding b; glc_dispatch_desc d = ddesc(f, &b);
  d.binding_count = -1; return glc_session_dispatch(f->s, &d);)
C(sess_barrier_null, (void)f; return glc_session_barrier(NULL);)
C(sess_between_null, (void)f; return glc_session_barrier_between(NULL, NULL, 0, NULL, 0, NULL);)
C(sess_between_null_reads,
  return glc_session_barrier_between(f->s, NULL, 1, NULL, 0, BLOB(int));)
C(sess_track_null, (void)f; return glc_session_track_dispatch(NULL, NULL, 0, NULL, 0);)
C(sess_track_neg, return glc_session_track_dispatch(f->s, NULL, -1, NULL, 0);)
C(sess_stats_null, (void)f; return glc_session_stats(NULL, BLOB(glc_dispatch_stats));)
C(sess_stats_null_out, return glc_session_stats(f->s, NULL);)
C(sess_commit_null, return glc_session_commit(NULL, &f->ofence);)
C(sess_commit_null_out, return glc_session_commit(f->s, NULL);)
C(fence_wait_null, (void)f; return glc_fence_wait(NULL, 0);)
C(sess_finish_null, (void)f; return glc_session_finish(NULL, BLOB(glc_dispatch_stats));)
/* eager ops */
C(op_add_null, glc_view v = view16(f); return glc_op_add(NULL, v, v, v);)
C(op_add_no_out, glc_view v = view16(f), none; memset(&none, 0, sizeof none);
  return glc_op_add(f->s, v, v, none);)
C(op_add_shapes, glc_view v = view16(f), half = v; half.shape[0] = N / 2;
  return glc_op_add(f->s, v, half, v);)
C(op_slice_range, glc_view v = view16(f); glc_view o = v; o.shape[0] = 4; return glc_op_slice(f->s, v, 0, N - 1, o);)
C(op_softmax_null, glc_view v = view16(f); return glc_op_softmax(NULL, v, NULL, v);)
/* graphs */
C(graph_create_null_dev, return glc_graph_create(NULL, &f->ograph);)
C(graph_create_null_out, return glc_graph_create(f->dev, NULL);)
C(compile_null_graph, return glc_graph_compile(NULL, NULL, &f->oplan);)
C(compile_null_out, return glc_graph_compile(f->g, NULL, NULL);)
C(compile_bad_flags, glc_compile_desc d = {0x80}; return glc_graph_compile(f->g, &d, &f->oplan);)
C(compile_sticky, return glc_graph_compile(f->gbad, NULL, &f->oplan);)
C(compile_no_outputs, return glc_graph_compile(f->gempty, NULL, &f->oplan);)
/* plans: params, runs */
C(param_null_plan, (void)f; return glc_plan_set_param(NULL, "w", F.w, N);)
C(param_unknown, return glc_plan_set_param(f->p, "nope", f->w, N);)
C(param_count, return glc_plan_set_param(f->p, "w", f->w, 3);)
C(param_null_name, return glc_plan_set_param(f->p, NULL, f->w, N);)
C(param_typed_null_plan, (void)f; return glc_plan_set_param_typed(NULL, "w", F.w, 64, GLC_DTYPE_F32);)
C(param_typed_dtype, return glc_plan_set_param_typed(f->p, "w", f->w, 64, GLC_DTYPE_F16);)
C(run_null, glc_plan_input in = in_x(f); glc_plan_output out = out_y(N);
  return glc_plan_run(NULL, &in, 1, &out, 1);)
C(run_neg, glc_plan_input in = in_x(f); glc_plan_output out = out_y(N);
  return glc_plan_run(f->p, &in, -1, &out, 1);)
C(run_missing_input, glc_plan_output out = out_y(N); return glc_plan_run(f->p, NULL, 0, &out, 1);)
C(run_out_count, glc_plan_input in = in_x(f); glc_plan_output out = out_y(N - 1);
  return glc_plan_run(f->p, &in, 1, &out, 1);)
C(run_unknown_out, glc_plan_input in = in_x(f); glc_plan_output out = out_y(N); out.name = "nope";
  return glc_plan_run(f->p, &in, 1, &out, 1);)
C(run_slots_null, const void *ins[1] = {F.x}; (void)f;
  return glc_plan_run_slots(NULL, ins, BLOB(glc_plan_slice));)
C(run_slots_null_in, return glc_plan_run_slots(f->p, NULL, BLOB(glc_plan_slice));)
C(run_raw_null, const void *ins[1] = {F.x}; (void)f;
  return glc_plan_run_raw(NULL, ins, BLOB(const void *));)
C(run_raw_null_in, return glc_plan_run_raw(f->p, NULL, BLOB(const void *));)
/* handles, sharing, clones */
C(bind_null, (void)f; return glc_plan_bind_handle(NULL, "h", F.h, sizeof F.h);)
C(bind_unknown, return glc_plan_bind_handle(f->p, "nope", f->h, sizeof f->h);)
C(bind_size, return glc_plan_bind_handle(f->p, "h", f->h, 3);)
C(read_null, (void)f; return glc_plan_read_handle(NULL, "h", F.blob.bytes, N * 4);)
C(read_size, return glc_plan_read_handle(f->p, "h", f->blob.bytes, 3);)
C(read_unknown, return glc_plan_read_handle(f->p, NULL, f->blob.bytes, N * 4);)
C(feed_null, (void)f; return glc_plan_set_handle_feed(NULL, "h", "y");)
C(feed_unknown, return glc_plan_set_handle_feed(f->p, "h", "nope");)
C(share_null, return glc_plan_share(NULL, f->p, GLC_SHARE_PARAMS);)
C(share_self, return glc_plan_share(f->p, f->p, GLC_SHARE_PARAMS);)
C(share_what, return glc_plan_share(f->p2, f->p, 8);)
C(clone_null, return glc_plan_clone(NULL, &f->oplan);)
C(clone_null_out, return glc_plan_clone(f->p, NULL);)
/* variables */
C(vars_null, glc_plan_var v = {"T", 1}; (void)f; return glc_plan_set_vars(NULL, &v, 1);)
C(vars_null_vars, return glc_plan_set_vars(f->p, NULL, 1);)
C(vars_range, glc_plan_var v = {"T", 99}; return glc_plan_set_vars(f->p, &v, 1);)
C(vars_unknown, glc_plan_var v = {"nope", 1}; return glc_plan_set_vars(f->p, &v, 1);)
C(run_vars_null, glc_plan_var v = {"T", 1}; glc_plan_input in = in_x(f);
  glc_plan_output out = out_y(N); return glc_plan_run_with_vars(NULL, &v, 1, &in, 1, &out, 1);)
C(run_vars_range, glc_plan_var v = {"T", 0}; glc_plan_input in = in_x(f);
  glc_plan_output out = out_y(N); return glc_plan_run_with_vars(f->p, &v, 1, &in, 1, &out, 1);)
C(extent_null, (void)f; return glc_plan_set_active_extent(NULL, 1);)
C(extent_range, return glc_plan_set_active_extent(f->p, 0);)
C(extent_no_var, return glc_plan_set_active_extent(f->p2, 1);)
C(stats_null, (void)f; return glc_plan_stats(NULL, BLOB(glc_plan_info));)
C(stats_null_out, return glc_plan_stats(f->p, NULL);)
/* runs without a wait, pipelined, typed, profiled; the listing */
C(commit_null, const void *ins[1] = {F.x}; (void)f; return glc_plan_commit_no_wait(NULL, ins);)
C(commit_null_in, return glc_plan_commit_no_wait(f->p, NULL);)
C(sync_null, (void)f; return glc_plan_sync_pending(NULL, BLOB(glc_plan_slice));)
C(sync_nothing, return glc_plan_sync_pending(f->p, BLOB(glc_plan_slice));)
C(pipe_null, const void *ins[1] = {F.x}; void *outs[1] = {F.blob.bytes}; (void)f;
  return glc_plan_run_pipelined(NULL, 1, ins, outs);)
C(pipe_neg, const void *ins[1] = {F.x}; void *outs[1] = {F.blob.bytes};
  return glc_plan_run_pipelined(f->p, -1, ins, outs);)
C(pipe_null_in, void *outs[1] = {F.blob.bytes}; return glc_plan_run_pipelined(f->p, 1, NULL, outs);)
C(typed_null, glc_plan_typed_input in = {"x", F.x, N * 4, GLC_DTYPE_F32}; (void)f;
  return glc_plan_run_typed(NULL, &in, 1, NULL, 0);)
C(typed_dtype, glc_plan_typed_input in = {"x", F.x, N * 4, GLC_DTYPE_F16};
  glc_plan_typed_output out = {"y", F.blob.bytes, N * 4, GLC_DTYPE_F32};
  return glc_plan_run_typed(f->p, &in, 1, &out, 1);)
C(typed_neg, return glc_plan_run_typed(f->p, NULL, -1, NULL, 0);)
C(prof_null, const void *ins[1] = {F.x};
  return glc_plan_run_profiled(NULL, ins, BLOB(glc_plan_slice), &f->prof);)
C(prof_null_prof, const void *ins[1] = {F.x};
  return glc_plan_run_profiled(f->p, ins, BLOB(glc_plan_slice), NULL);)
C(prof_capacity, const void *ins[1] = {F.x};
  return glc_plan_run_profiled(f->p, ins, BLOB(glc_plan_slice), &f->prof);)
C(dump_null, (void)f; return glc_plan_dump(NULL, 0, text_sink, NULL);)
C(dump_null_fn, return glc_plan_dump(f->p, 0, NULL, NULL);)
C(dump_flags, return glc_plan_dump(f->p, 0x10, text_sink, NULL);)

#define INV GLC_ERR_INVALID_ARG
static const err_case cases[] = {
    {"glc_device_create(NULL, NULL)", INV, NODEV, dev_create_null_out, NULL},
    {"glc_device_get_info(NULL, &info)", INV, NODEV, dev_info_null_dev, NULL},
    {"glc_device_get_info(dev, NULL)", INV, DEV, dev_info_null_out, NULL},
    {"glc_device_list(NULL, 2, &n)", INV, NODEV, dev_list_null_entries, NULL},
    {"glc_device_list(NULL, -1, &n)", INV, NODEV, dev_list_neg_max, NULL},
    {"glc_buffer_create(NULL, ...)", INV, NODEV, buf_create_null_dev, NULL},
    {"glc_buffer_create(dev, ..., NULL)", INV, DEV, buf_create_null_out, NULL},
    {"glc_buffer_create(rank 0)", INV, DEV, buf_create_rank0, NULL},
    {"glc_buffer_create(shape NULL)", INV, DEV, buf_create_null_shape, NULL},
    {"glc_buffer_create(shape -3)", INV, DEV, buf_create_neg_shape, NULL},
    {"glc_buffer_create(dtype 999)", INV, DEV, buf_create_bad_dtype, NULL},
    {"glc_buffer_wrap_gl(NULL, ...)", INV, NODEV, buf_wrap_null_dev, NULL},
    {"glc_buffer_wrap_gl(dev, 0, ...)", INV, DEV, buf_wrap_zero, NULL},
    {"glc_buffer_wrap_gl(dev, not a buffer)", INV, DEV, buf_wrap_not_buffer, NULL},
    {"glc_buffer_write(NULL, ...)", INV, NODEV, buf_write_null, NULL},
    {"glc_buffer_write(past the end)", GLC_ERR_BOUNDS, DEV, buf_write_past_end, NULL},
    {"glc_buffer_write(data NULL)", INV, DEV, buf_write_null_data, NULL},
    {"glc_buffer_read(NULL, ...)", INV, NODEV, buf_read_null, NULL},
    {"glc_buffer_read(past the end)", GLC_ERR_BOUNDS, DEV, buf_read_past_end, NULL},
    {"glc_buffer_read(offset wraps)", GLC_ERR_BOUNDS, DEV, buf_read_wrap, NULL},
    {"glc_kernel_create(NULL, ...)", INV, NODEV, kern_null_dev, NULL},
    {"glc_kernel_create(dev, NULL, ...)", INV, DEV, kern_null_desc, NULL},
    {"glc_kernel_create(dev, desc, NULL)", INV, DEV, kern_null_out, NULL},
    {"glc_kernel_create(source NULL)", INV, DEV, kern_null_source, NULL},
    {"glc_kernel_create(bad GLSL)", GLC_ERR_COMPILE, DEV, kern_bad_glsl, "errors"},
    {"glc_session_begin(NULL, ...)", INV, NODEV, sess_begin_null_dev, NULL},
    {"glc_session_begin(mode 7)", INV, DEV, sess_begin_bad_mode, NULL},
    {"glc_session_begin(dev, mode, NULL)", INV, DEV, sess_begin_null_out, NULL},
    {"glc_session_dispatch(NULL, d)", INV, NODEV, sess_dispatch_null, NULL},
    {"glc_session_dispatch(s, NULL)", INV, DEV, sess_dispatch_null_desc, NULL},
    {"glc_session_dispatch(kernel NULL)", INV, DEV, sess_dispatch_null_kernel, NULL},
    {"glc_session_dispatch(binding past the end)", GLC_ERR_BOUNDS, DEV, sess_dispatch_past_end,
     NULL},
    {"glc_session_dispatch(binding_count -1)", INV, DEV, sess_dispatch_neg_count, NULL},
    {"glc_session_barrier(NULL)", INV, NODEV, sess_barrier_null, NULL},
    {"glc_session_barrier_between(NULL, ...)", INV, NODEV, sess_between_null, NULL},
    {"glc_session_barrier_between(s, NULL, 1, ...)", INV, DEV, sess_between_null_reads, NULL},
    {"glc_session_track_dispatch(NULL, ...)", INV, NODEV, sess_track_null, NULL},
    {"glc_session_track_dispatch(s, NULL, -1, ...)", INV, DEV, sess_track_neg, NULL},
    {"glc_session_stats(NULL, &st)", INV, NODEV, sess_stats_null, NULL},
    {"glc_session_stats(s, NULL)", INV, DEV, sess_stats_null_out, NULL},
    {"glc_session_commit(NULL, &f)", INV, NODEV, sess_commit_null, NULL},
    {"glc_session_commit(s, NULL)", INV, DEV, sess_commit_null_out, NULL},
    {"glc_fence_wait(NULL, 0)", INV, NODEV, fence_wait_null, NULL},
    {"glc_session_finish(NULL, &st)", INV, NODEV, sess_finish_null, NULL},
    {"glc_op_add(NULL, ...)", INV, NODEV, op_add_null, NULL},
    {"glc_op_add(out without a buffer)", INV, DEV, op_add_no_out, "add"},
    {"glc_op_add(shapes [16] + [8])", INV, DEV, op_add_shapes, "add"},
    {"glc_op_slice(range past the end)", GLC_ERR_BOUNDS, DEV, op_slice_range, "slice"},
    {"glc_op_softmax(NULL, ...)", INV, NODEV, op_softmax_null, NULL},
    {"glc_graph_create(NULL, &g)", INV, NODEV, graph_create_null_dev, NULL},
    {"glc_graph_create(dev, NULL)", INV, DEV, graph_create_null_out, NULL},
    {"glc_graph_compile(NULL, NULL, &p)", INV, NODEV, compile_null_graph, NULL},
    {"glc_graph_compile(g, NULL, NULL)", INV, DEV, compile_null_out, NULL},
    {"glc_graph_compile(flags 0x80)", INV, DEV, compile_bad_flags, NULL},
    {"glc_graph_compile(graph with an error)", INV, DEV, compile_sticky, "add"},
    {"glc_graph_compile(no outputs)", INV, DEV, compile_no_outputs, NULL},
    {"glc_plan_set_param(NULL, ...)", INV, NODEV, param_null_plan, NULL},
    {"glc_plan_set_param(unknown)", INV, DEV, param_unknown, NULL},
    {"glc_plan_set_param(count 3)", INV, DEV, param_count, NULL},
    {"glc_plan_set_param(name NULL)", INV, DEV, param_null_name, NULL},
    {"glc_plan_set_param_typed(NULL, ...)", INV, NODEV, param_typed_null_plan, "glc_plan_set_param"},
    {"glc_plan_set_param_typed(dtype F16)", INV, DEV, param_typed_dtype, "glc_plan_set_param"},
    {"glc_plan_run(NULL, ...)", INV, NODEV, run_null, NULL},
    {"glc_plan_run(nin -1)", INV, DEV, run_neg, NULL},
    {"glc_plan_run(input missing)", INV, DEV, run_missing_input, NULL},
    {"glc_plan_run(output count 15)", INV, DEV, run_out_count, NULL},
    {"glc_plan_run(unknown output)", INV, DEV, run_unknown_out, NULL},
    {"glc_plan_run_slots(NULL, ...)", INV, NODEV, run_slots_null, NULL},
    {"glc_plan_run_slots(p, NULL, ...)", INV, DEV, run_slots_null_in, NULL},
    {"glc_plan_run_raw(NULL, ...)", INV, NODEV, run_raw_null, NULL},
    {"glc_plan_run_raw(p, NULL, ...)", INV, DEV, run_raw_null_in, "glc_plan_run"},
    {"glc_plan_bind_handle(NULL, ...)", INV, NODEV, bind_null, NULL},
    {"glc_plan_bind_handle(unknown)", INV, DEV, bind_unknown, NULL},
    {"glc_plan_bind_handle(3 bytes)", INV, DEV, bind_size, NULL},
    {"glc_plan_read_handle(NULL, ...)", INV, NODEV, read_null, NULL},
    {"glc_plan_read_handle(3 bytes)", INV, DEV, read_size, NULL},
    {"glc_plan_read_handle(name NULL)", INV, DEV, read_unknown, NULL},
    {"glc_plan_set_handle_feed(NULL, ...)", INV, NODEV, feed_null, NULL},
    {"glc_plan_set_handle_feed(unknown output)", INV, DEV, feed_unknown, NULL},
    {"glc_plan_share(NULL, p, ...)", INV, NODEV, share_null, NULL},
    {"glc_plan_share(p, p, ...)", INV, DEV, share_self, NULL},
    {"glc_plan_share(what 8)", INV, DEV, share_what, NULL},
    {"glc_plan_clone(NULL, &p)", INV, NODEV, clone_null, NULL},
    {"glc_plan_clone(p, NULL)", INV, DEV, clone_null_out, NULL},
    {"glc_plan_set_vars(NULL, ...)", INV, NODEV, vars_null, NULL},
    {"glc_plan_set_vars(p, NULL, 1)", INV, DEV, vars_null_vars, NULL},
    {"glc_plan_set_vars(T 99)", GLC_ERR_BOUNDS, DEV, vars_range, NULL},
    {"glc_plan_set_vars(unknown)", INV, DEV, vars_unknown, NULL},
    {"glc_plan_run_with_vars(NULL, ...)", INV, NODEV, run_vars_null, "glc_plan_set_vars"},
    {"glc_plan_run_with_vars(T 0)", GLC_ERR_BOUNDS, DEV, run_vars_range, "glc_plan_set_vars"},
    {"glc_plan_set_active_extent(NULL, 1)", INV, NODEV, extent_null, NULL},
    {"glc_plan_set_active_extent(p, 0)", GLC_ERR_BOUNDS, DEV, extent_range, "glc_plan_set_vars"},
    {"glc_plan_set_active_extent(no variable)", GLC_ERR_STATE, DEV, extent_no_var, NULL},
    {"glc_plan_stats(NULL, &info)", INV, NODEV, stats_null, NULL},
    {"glc_plan_stats(p, NULL)", INV, DEV, stats_null_out, NULL},
    {"glc_plan_commit_no_wait(NULL, ...)", INV, NODEV, commit_null, NULL},
    {"glc_plan_commit_no_wait(p, NULL)", INV, DEV, commit_null_in, NULL},
    {"glc_plan_sync_pending(NULL, ...)", INV, NODEV, sync_null, NULL},
    {"glc_plan_sync_pending(nothing pending)", GLC_ERR_STATE, DEV, sync_nothing, NULL},
    {"glc_plan_run_pipelined(NULL, ...)", INV, NODEV, pipe_null, NULL},
    {"glc_plan_run_pipelined(n -1)", INV, DEV, pipe_neg, NULL},
    {"glc_plan_run_pipelined(inputs NULL)", INV, DEV, pipe_null_in, NULL},
    {"glc_plan_run_typed(NULL, ...)", INV, NODEV, typed_null, NULL},
    {"glc_plan_run_typed(x as F16)", INV, DEV, typed_dtype, NULL},
    {"glc_plan_run_typed(nin -1)", INV, DEV, typed_neg, NULL},
    {"glc_plan_run_profiled(NULL, ...)", INV, NODEV, prof_null, NULL},
    {"glc_plan_run_profiled(prof NULL)", INV, DEV, prof_null_prof, NULL},
    {"glc_plan_run_profiled(capacity 1)", GLC_ERR_BOUNDS, DEV, prof_capacity, NULL},
    {"glc_plan_dump(NULL, ...)", INV, NODEV, dump_null, NULL},
    {"glc_plan_dump(p, 0, NULL, ...)", INV, DEV, dump_null_fn, NULL},
    {"glc_plan_dump(flags 0x10)", INV, DEV, dump_flags, NULL},
};

/* ---- the fixture ---- */

/* y = x + w + h: x [T, 16] (T in 1..4), param w [16], handle h [16] */
static glc_plan *build(fx *f)
{
    int64_t xs[2];
    glc_tensor x, w, h;
    glc_plan *p = NULL;
    assert_int_equal(glc_graph_create(f->dev, &f->g), GLC_OK);
    xs[0] = glc_graph_var(f->g, "T", 1, 4);
    xs[1] = N;
    x = glc_graph_input(f->g, "x", GLC_DTYPE_F32, 2, xs);
    w = glc_graph_param(f->g, "w", GLC_DTYPE_F32, 1, s16);
    h = glc_graph_handle(f->g, "h", GLC_DTYPE_F32, 1, s16);
    glc_graph_output(f->g, "y", glc_add(f->g, glc_add(f->g, x, w), h));
    if (glc_graph_compile(f->g, NULL, &p) != GLC_OK)
        return NULL;
    return p;
}

static int setup(void **state)
{
    fx *f = &F;
    glc_device_desc d;
    glc_status st;
    glc_graph *g2;
    glc_tensor t;
    glc_plan_var v = {"T", 1};
    int i;
    memset(f, 0, sizeof *f);
    d = tu_desc(&f->log);
    d.log_level = GLC_LOG_ERROR;
    *state = f;
    st = glc_device_create(&d, &f->dev);
    if (st == GLC_ERR_NO_DEVICE)
        return 0; /* the tests skip */
    if (st != GLC_OK)
        return -1;
    for (i = 0; i < N; i++) {
        f->w[i] = (float)i;
        f->x[i] = 1.0f;
        f->h[i] = 0.5f;
    }
    if (glc_buffer_create(f->dev, GLC_DTYPE_F32, 1, s16, &f->buf) != GLC_OK ||
        glc__kernel_get(f->dev, "fill", NULL, 64, &f->kern) != GLC_OK ||
        glc_session_begin(f->dev, GLC_SESSION_DIRECT, &f->s) != GLC_OK)
        return -1;
    if (!(f->p = build(f)) || glc_plan_set_param(f->p, "w", f->w, N) != GLC_OK ||
        glc_plan_bind_handle(f->p, "h", f->h, sizeof f->h) != GLC_OK ||
        glc_plan_set_vars(f->p, &v, 1) != GLC_OK)
        return -1;
    /* a plan without variables, over the same handle name */
    if (glc_graph_create(f->dev, &g2) != GLC_OK)
        return -1;
    t = glc_graph_handle(g2, "h", GLC_DTYPE_F32, 1, s16);
    glc_graph_output(g2, "z", glc_scale(g2, t, 2, 0));
    if (glc_graph_compile(g2, NULL, &f->p2) != GLC_OK)
        return -1;
    glc_graph_destroy(g2);
    /* a graph whose first builder failed, and one with no outputs */
    if (glc_graph_create(f->dev, &f->gbad) != GLC_OK ||
        glc_graph_create(f->dev, &f->gempty) != GLC_OK)
        return -1;
    t = glc_graph_input(f->gbad, "a", GLC_DTYPE_F32, 1, s16);
    (void)glc_add(f->gbad, t, glc_none());
    glc_graph_input(f->gempty, "a", GLC_DTYPE_F32, 1, s16);
    return 0;
}

static int teardown(void **state)
{
    fx *f = &F;
    (void)state;
    glc_graph_destroy(f->g);
    glc_graph_destroy(f->gbad);
    glc_graph_destroy(f->gempty);
    glc_plan_destroy(f->p);
    glc_plan_destroy(f->p2);
    if (f->s)
        glc_session_finish(f->s, NULL);
    glc_buffer_destroy(f->buf);
    glc_device_destroy(f->dev);
    return 0;
}

/* ---- the runs ---- */

static void clear_messages(fx *f)
{
    f->dev->errmsg[0] = '\0';
    glc__fail(NULL, GLC_OK, "%s", "");
    f->log.count = 0;
    f->log.last[0] = '\0';
    f->log.last_status = GLC_OK;
}

static void test_every_failure_has_a_message(void **state)
{
    fx *f = *state;
    if (!f->dev) {
        fprintf(stderr, "no EGL device: skipping\n");
        skip();
    }
    size_t i;
    int bad = 0;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const err_case *c = &cases[i];
        char name[64];
        const char *msg, *want;
        glc_status st;
        size_t n = strcspn(c->label, "(");
        snprintf(name, sizeof name, "%.*s", (int)n, c->label);
        want = c->expect ? c->expect : name;
        set_sentinels(f);
        clear_messages(f);
        st = c->call(f);
        msg = c->where == DEV ? glc_device_errmsg(f->dev) : glc_device_errmsg(NULL);
        if (st != c->want) {
            fprintf(stderr, "%s: status %s, want %s (message \"%s\")\n", c->label,
                    glc_status_str(st), glc_status_str(c->want), msg);
            bad++;
            continue;
        }
        if (!*msg || !strstr(msg, want)) {
            fprintf(stderr, "%s: message \"%s\" (want one naming \"%s\")\n", c->label, msg, want);
            bad++;
            continue;
        }
        if (c->where == DEV && (f->log.count == 0 || f->log.last_status != c->want ||
                                strcmp(f->log.last, msg) != 0)) {
            fprintf(stderr, "%s: the log did not get the message at ERROR\n", c->label);
            bad++;
            continue;
        }
        if (c->where == NODEV && *glc_device_errmsg(f->dev)) {
            fprintf(stderr, "%s: a NULL-handle failure set the device's message \"%s\"\n",
                    c->label, glc_device_errmsg(f->dev));
            bad++;
            continue;
        }
        check_sentinels(f, c->label);
    }
    if (bad)
        fail_msg("%d of %zu failing calls without the documented status or a message", bad,
                 sizeof cases / sizeof cases[0]);
}

/* The objects are still usable after all that: one good run. */
static void test_plan_still_runs(void **state)
{
    fx *f = *state;
    if (!f->dev) {
        fprintf(stderr, "no EGL device: skipping\n");
        skip();
    }
    float y[N];
    glc_plan_input in = {"x", f->x, N};
    glc_plan_output out = {"y", y, N};
    int i;
    assert_int_equal(glc_plan_run(f->p, &in, 1, &out, 1), GLC_OK);
    for (i = 0; i < N; i++)
        assert_true(y[i] == f->x[i] + f->w[i] + f->h[i]);
}

/* Builders fail stickily: each with a tensor that does not exist leaves
 * the graph's status and a message naming the builder. */
static void test_builders_leave_a_message(void **state)
{
    fx *f = *state;
    if (!f->dev) {
        fprintf(stderr, "no EGL device: skipping\n");
        skip();
    }
    const glc_tensor bad = {12345};
    const int64_t s2[2] = {2, 2};
    const int perm[2] = {1, 0};
    glc_softmax_desc sd;
    glc_rope_desc rd;
    glc_matmul_desc md;
    glc_sdpa_desc ad;
    int k;
    memset(&sd, 0, sizeof sd);
    memset(&rd, 0, sizeof rd);
    memset(&md, 0, sizeof md);
    memset(&ad, 0, sizeof ad);
    for (k = 0; k < 25; k++) {
        glc_graph *g;
        glc_tensor a;
        const char *name = "";
        assert_int_equal(glc_graph_create(f->dev, &g), GLC_OK);
        a = glc_graph_input(g, "a", GLC_DTYPE_F32, 2, s2);
        switch (k) {
        case 0: name = "add"; glc_add(g, a, bad); break;
        case 1: name = "sub"; glc_sub(g, bad, a); break;
        case 2: name = "mul"; glc_mul(g, a, bad); break;
        case 3: name = "div"; glc_div(g, a, bad); break;
        case 4: name = "scale"; glc_scale(g, bad, 1, 0); break;
        case 5: name = "unary"; glc_unary(g, GLC_UNARY_SILU, bad, 0); break;
        case 6: name = "softmax"; glc_softmax(g, bad, &sd); break;
        case 7: name = "rms_norm"; glc_rms_norm(g, bad, a, 1e-5f); break;
        case 8: name = "layer_norm"; glc_layer_norm(g, bad, a, a, 1e-5f); break;
        case 9: name = "sum"; glc_sum(g, bad); break;
        case 10: name = "mean"; glc_mean(g, bad); break;
        case 11: name = "argmax"; glc_argmax(g, bad); break;
        case 12: name = "rope"; glc_rope(g, bad, a, &rd, glc_none()); break;
        case 13: name = "matmul"; glc_matmul(g, a, bad, glc_none(), &md); break;
        case 14: name = "matmul_q"; glc_matmul_q(g, a, bad, glc_none()); break;
        case 15: name = "sdpa"; glc_sdpa(g, a, bad, a, &ad); break;
        case 16: name = "reshape"; glc_reshape(g, bad, 2, s2); break;
        case 17: name = "set_rows"; glc_set_rows(g, bad, a, a); break;
        case 18: name = "get_rows"; glc_get_rows(g, bad, a); break;
        case 19: name = "copy"; glc_copy(g, bad, perm, GLC_DTYPE_F32); break;
        case 20: name = "concat"; glc_concat(g, a, bad, 0); break;
        case 21: name = "slice"; glc_slice(g, bad, 0, 0, 1); break;
        case 22: name = "output"; glc_graph_output(g, "y", bad); break;
        case 23: name = "input"; glc_graph_input(g, NULL, GLC_DTYPE_F32, 2, s2); break;
        case 24: name = "var"; glc_graph_var(g, "T", 5, 1); break;
        }
        if (glc_graph_status(g) == GLC_OK || !*glc_graph_errmsg(g))
            fail_msg("builder %s: status %s, message \"%s\"", name,
                     glc_status_str(glc_graph_status(g)), glc_graph_errmsg(g));
        glc_graph_destroy(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_failure_has_a_message),
        cmocka_unit_test(test_plan_still_runs),
        cmocka_unit_test(test_builders_leave_a_message),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
