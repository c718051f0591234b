/*
 * generate: text from a GGUF model, for people. Loads a llama or qwen2
 * GGUF file (examples/llama_gguf.c), tokenizes the prompt with the file's
 * own tokenizer, runs the prompt through a prefill plan and then one token
 * at a time through a decode plan that shares the prefill's params and KV
 * cache (examples/llama.c builds both), and streams each new token's text
 * to stdout as it comes, until --n-predict tokens or an end-of-generation
 * token. stderr gets the rest: a progress bar while the file is checked,
 * the plans compile and the weights upload (a terminal only), then the
 * prefill and decode speeds and the load time; --quiet leaves stdout the
 * generated text alone.
 *
 * Choosing the next token: --temp 0 (the default) takes the plan's "next"
 * output, the GPU's argmax; a temperature above 0 samples on the CPU
 * from the "logits" output: logits / temp, the top-k largest (ties: the
 * lower id), the smallest prefix of those whose probabilities reach top-p,
 * then one draw from a splitmix64 stream seeded by --seed, so a seed gives
 * the same text on every run. Ids past the tokenizer's vocabulary (an
 * embedding padded beyond it) are never chosen.
 *
 * Sizes: the prefill plan is compiled for the prompt's length, at most
 * --batch tokens; prompt tokens past that go through a chunk plan, --batch
 * at a time, whose attention reads the cache (the prefill's attends only to
 * its own tokens, so it must start at position 0). The KV cache holds prompt + n-predict positions, within
 * --max-seq (default: the file's context length). The file is mapped, not
 * read: its pages come in as the weights upload, tensor by tensor, which is
 * what the upload bar counts in bytes.
 *
 * --verify runs the plain C reference (examples/llama_ref.c) beside the
 * GPU on the same tokens and checks every step's logits (tiny models: it
 * holds every weight as f32). --print-ids prints the generated ids after
 * the text, for tests.
 *
 * Exit status: 0 ok, 1 failed (a file, the device, a step differing from
 * the reference), 2 bad usage (every bad option or value is named; a
 * prompt that is empty or does not fit).
 */
#include "cli.h"
#include "llama.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PROG "generate"
#define DEFAULT_N_PREDICT 128
#define DEFAULT_BATCH 512
#define MAX_PROMPT_FILE (64 << 20)

typedef struct opts {
    const char *model, *prompt, *prompt_file;
    long long n_predict, max_seq, batch, top_k, seed; /* n_predict -1, max_seq 0: default */
    double temp, top_p;
    int quiet, no_fuse, print_ids, verify;
} opts;
static void usage(FILE *f)
{
    fprintf(f,
            "usage: generate --model FILE.gguf --prompt TEXT [options]\n"
            "Text from a llama or qwen2 GGUF model on glcompute, streamed as it is generated.\n"
            "  --model FILE         the GGUF file (required)\n"
            "  --prompt TEXT        the prompt\n"
            "  --prompt-file FILE   the prompt from a file (its bytes as they are)\n"
            "  --n-predict N        tokens to generate, >= 0 (default: %d, fewer when the\n"
            "                       context is shorter); generation stops early at an\n"
            "                       end-of-generation token\n"
            "  --temp T             sampling temperature, 0..100 (default: 0, greedy: the GPU's\n"
            "                       argmax)\n"
            "  --top-k K            sample from the K likeliest tokens only (default: 0, off)\n"
            "  --top-p P            nucleus sampling: the likeliest tokens whose probabilities\n"
            "                       reach P, 0..1 (default: 1, off)\n"
            "  --seed N             the sampler's seed, >= 0 (default: 0; a seed gives the same\n"
            "                       text on every run)\n"
            "  --max-seq N          the longest sequence, prompt + generated (default: the\n"
            "                       file's context length); the KV cache holds prompt +\n"
            "                       n-predict positions\n"
            "  --batch N            the most prompt tokens run as one prefill (default: %d;\n"
            "                       the rest go in chunks of as many)\n"
            "  --quiet              print the generated text only (no prompt, no statistics)\n"
            "  --no-fuse            compile the plans without fusion\n"
            "  --verify             check every step's logits against the C reference (small\n"
            "                       models: it holds the weights as f32)\n"
            "  --print-ids          print the generated token ids after the text\n"
            "  --help               this text\n"
            "--top-k and --top-p apply when --temp is above 0.\n"
            "Exit status: 0 ok, 1 failed, 2 bad usage (a prompt that is empty or does not fit\n"
            "included). The environment's GLC_* variables apply; see the README.\n",
            DEFAULT_N_PREDICT, DEFAULT_BATCH);
}

/* 1: run; 0: exit 0 (--help); -1: bad usage (the message is printed). */
static int parse(int argc, char **argv, opts *o)
{
    static const char *const valued[] = {"--model", "--prompt", "--prompt-file", "--n-predict",
                                         "--temp", "--top-k", "--top-p", "--seed", "--max-seq",
                                         "--batch", NULL};
    int i, k, ok = 1;
    memset(o, 0, sizeof *o);
    o->n_predict = -1, o->batch = DEFAULT_BATCH, o->top_p = 1.0;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--quiet") == 0 || strcmp(a, "--no-fuse") == 0 || strcmp(a, "--verify") == 0 ||
            strcmp(a, "--print-ids") == 0) {
            if (strcmp(a, "--quiet") == 0)
                o->quiet = 1;
            else if (strcmp(a, "--no-fuse") == 0)
                o->no_fuse = 1;
            else if (strcmp(a, "--verify") == 0)
                o->verify = 1;
            else
                o->print_ids = 1;
            continue;
        }
        for (k = 0; valued[k] && strcmp(a, valued[k]) != 0; k++)
            ;
        if (!valued[k]) {
            fprintf(stderr, PROG ": unknown option %s (--help lists them)\n", a);
            return -1;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, PROG ": %s needs a value (--help)\n", a);
            return -1;
        }
        v = argv[++i];
        if (strcmp(a, "--model") == 0)
            o->model = v;
        else if (strcmp(a, "--prompt") == 0)
            o->prompt = v;
        else if (strcmp(a, "--prompt-file") == 0)
            o->prompt_file = v;
        else if (strcmp(a, "--n-predict") == 0)
            ok = cli_int(PROG, a, v, 0, 1 << 24, &o->n_predict);
        else if (strcmp(a, "--top-k") == 0)
            ok = cli_int(PROG, a, v, 0, 1 << 24, &o->top_k);
        else if (strcmp(a, "--seed") == 0)
            ok = cli_int(PROG, a, v, 0, INT64_MAX, &o->seed);
        else if (strcmp(a, "--max-seq") == 0)
            ok = cli_int(PROG, a, v, 1, 1 << 24, &o->max_seq);
        else if (strcmp(a, "--batch") == 0)
            ok = cli_int(PROG, a, v, 1, 1 << 20, &o->batch);
        else if (strcmp(a, "--temp") == 0)
            ok = cli_num(PROG, a, v, 0, 100, &o->temp);
        else
            ok = cli_num(PROG, a, v, 0, 1, &o->top_p);
        if (!ok)
            return -1;
    }
    if (!o->model) {
        fprintf(stderr, PROG ": --model FILE.gguf is required (--help)\n");
        return -1;
    }
    if (!o->prompt == !o->prompt_file) {
        if (o->prompt)
            fprintf(stderr, PROG ": --prompt and --prompt-file: give one, not both\n");
        else
            fprintf(stderr, PROG ": --prompt TEXT or --prompt-file FILE is required (--help)\n");
        return -1;
    }
    return 1;
}

/* The bytes of a prompt file (NUL-terminated, *len without it), or NULL
 * after a message. */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, PROG ": --prompt-file %s: %s\n", path, strerror(errno));
        goto done;
    }
    if (n > MAX_PROMPT_FILE) {
        fprintf(stderr, PROG ": --prompt-file %s: %ld bytes, more than the %d this program reads\n",
                path, n, MAX_PROMPT_FILE);
        goto done;
    }
    if (!(buf = malloc((size_t)n + 1)) || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, PROG ": --prompt-file %s: %s\n", path, buf ? "read failed" : "out of memory");
        free(buf);
        buf = NULL;
        goto done;
    }
    buf[n] = '\0';
    *len = (size_t)n;
done:
    if (f)
        fclose(f);
    return buf;
}

/* ---- progress on stderr (a terminal only) ---- */

typedef struct progress {
    int on, shown; /* shown: the last drawn permille, -1 none */
} progress;

static void progress_draw(progress *p, const char *phase, double done, double total, const char *detail)
{
    int permille = total > 0 ? (int)(1000.0 * done / total) : 0, fill, i;
    char bar[31];
    if (!p->on || permille == p->shown)
        return;
    p->shown = permille;
    fill = permille * 30 / 1000;
    for (i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[30] = '\0';
    fprintf(stderr, "\r\033[K%-10s [%s] %3d%% %s", phase, bar, permille / 10, detail ? detail : "");
    fflush(stderr);
}

static void progress_clear(progress *p)
{
    if (!p->on)
        return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
    p->shown = -1;
}

/* ---- sampling ---- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1), 53 bits. */
static double uniform01(uint64_t *s) { return (double)(splitmix64(s) >> 11) * (1.0 / 9007199254740992.0); }

typedef struct cand {
    float logit;
    int32_t id;
} cand;

/* a before b: the larger logit, on ties the lower id */
static int cand_before(const cand *a, const cand *b)
{
    return a->logit > b->logit || (a->logit == b->logit && a->id < b->id);
}

static int cand_cmp(const void *x, const void *y)
{
    const cand *a = x, *b = y;
    return cand_before(a, b) ? -1 : cand_before(b, a);
}

/* heap[0] is the candidate that every other one comes before: the one a
 * better candidate replaces */
static void heap_down(cand *h, int n, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        cand t;
        if (l < n && cand_before(&h[m], &h[l]))
            m = l;
        if (r < n && cand_before(&h[m], &h[r]))
            m = r;
        if (m == i)
            return;
        t = h[i], h[i] = h[m], h[m] = t;
        i = m;
    }
}

typedef struct sampler {
    double temp, top_p;
    int top_k;
    uint64_t state;
    cand *c;  /* [vocab] */
    double *p; /* [vocab] */
} sampler;

/* The sampled id of logits[0 .. n) (n >= 1): temperature, top-k, top-p,
 * one uniform draw. NaN counts as -inf. */
static int32_t sample(sampler *s, const float *logits, int n)
{
    int i, m = n, sorted = 0;
    double max, sum = 0, u, acc;
    for (i = 0; i < n; i++) {
        s->c[i].logit = isnan(logits[i]) ? -INFINITY : logits[i];
        s->c[i].id = i;
    }
    if (s->top_k > 0 && s->top_k < n) { /* the k best: a heap of k, each other one tried against its top */
        m = s->top_k;
        for (i = m / 2 - 1; i >= 0; i--)
            heap_down(s->c, m, i);
        for (i = m; i < n; i++)
            if (cand_before(&s->c[i], &s->c[0])) {
                s->c[0] = s->c[i];
                heap_down(s->c, m, 0);
            }
        qsort(s->c, (size_t)m, sizeof *s->c, cand_cmp);
        sorted = 1;
    } else if (s->top_p < 1) {
        qsort(s->c, (size_t)m, sizeof *s->c, cand_cmp);
        sorted = 1;
    }
    max = s->c[0].logit;
    for (i = 1; i < m && !sorted; i++)
        if (s->c[i].logit > max)
            max = s->c[i].logit;
    if (!isfinite(max))
        return s->c[0].id; /* nothing is likely (or +inf): the first best */
    for (i = 0; i < m; i++)
        sum += s->p[i] = exp(((double)s->c[i].logit - max) / s->temp);
    if (s->top_p < 1) { /* the smallest prefix whose mass reaches top_p */
        double want = s->top_p * sum;
        for (i = 0, acc = 0; i < m; i++)
            if ((acc += s->p[i]) >= want)
                break;
        m = i < m ? i + 1 : m;
        sum = acc;
    }
    u = uniform01(&s->state) * sum;
    for (i = 0, acc = 0; i < m - 1; i++)
        if ((acc += s->p[i]) > u)
            break;
    return s->c[i].id;
}

/* ---- running ---- */
/* One run of a plan at variable var = value: tokens and positions, the row
 * whose logits are wanted; *logits points into the plan's memory until its
 * next run. */
static glc_status step_vars(glc_plan *p, const glc_plan_var *v, int nv, const int32_t *tokens,
                            const int32_t *pos, int32_t last, const float **logits, int32_t *next)
{
    const void *in[3], *out[2];
    glc_status st;
    in[0] = tokens;
    in[1] = pos;
    in[2] = &last;
    if ((st = glc_plan_set_vars(p, v, nv)) != GLC_OK || (st = glc_plan_run_raw(p, in, out)) != GLC_OK)
        return st;
    *logits = out[0];
    memcpy(next, out[1], 4);
    return GLC_OK;
}

/* A run of p with one variable set */
static glc_status step(glc_plan *p, const char *var, int64_t value, const int32_t *tokens,
                       const int32_t *pos, int32_t last, const float **logits, int32_t *next)
{
    glc_plan_var v;
    v.name = var;
    v.value = value;
    return step_vars(p, &v, 1, tokens, pos, last, logits, next);
}

/* The next token from a run's logits and GPU argmax (next): sampled when
 * temp > 0; else next, or the CPU's argmax (the lower id on ties) when
 * next lies past the first n ids (the tokenizer's). */
static int32_t choose(sampler *s, double temp, const float *logits, int32_t next, int n)
{
    int32_t k, best = 0;
    if (temp > 0)
        return sample(s, logits, n);
    if (next >= 0 && next < n)
        return next;
    for (k = 1; k < n; k++)
        if (logits[k] > logits[best])
            best = k;
    return best;
}

/* The logits of the run that fed the prompt (n_gen 0) or gen[n_gen - 1]
 * against the reference's for the same token; 0 after a message when they
 * differ. */
static int check_step(llama_ref *ref, const int32_t *prompt, int n_prompt, const int32_t *gen,
                      int n_gen, const float *logits, float *rlogits, int vocab, double *worst)
{
    double e;
    if (n_gen == 0)
        llama_ref_forward(ref, prompt, n_prompt, 0, rlogits);
    else
        llama_ref_forward(ref, &gen[n_gen - 1], 1, n_prompt + n_gen - 1, rlogits);
    e = cli_nmse(logits, rlogits, vocab);
    *worst = e > *worst ? e : *worst;
    if (e <= 1e-5)
        return 1;
    fprintf(stderr, "\n" PROG ": step %d: logits nmse %.3g against the C reference (limit 1e-5)\n",
            n_gen, e);
    return 0;
}

static const char *human_bytes(double b, char *buf, size_t len)
{
    if (b >= 1e9)
        snprintf(buf, len, "%.2f GB", b / 1e9);
    else
        snprintf(buf, len, "%.1f MB", b / 1e6);
    return buf;
}

/* Is path a regular file that starts with "GGUF"? 0 after a message. */
static int check_model_file(const char *path)
{
    struct stat sb;
    char magic[4];
    FILE *f;
    size_t got;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
        return 0;
    }
    if (!S_ISREG(sb.st_mode)) {
        fprintf(stderr, PROG ": %s: not a regular file\n", path);
        return 0;
    }
    if (!(f = fopen(path, "rb"))) {
        fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
        return 0;
    }
    got = fread(magic, 1, 4, f);
    fclose(f);
    if (got != 4 || memcmp(magic, "GGUF", 4) != 0) {
        fprintf(stderr, PROG ": %s: not a GGUF file (%s)\n", path,
                got != 4 ? "shorter than its magic" : "it does not start with \"GGUF\"");
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    opts o;
    llama_weights w;
    llama_cfg cfg;
    llama_ref *ref = NULL;
    glc_device *dev = NULL;
    glc_device_desc desc;
    glc_device_info info;
    glc_plan *pre = NULL, *dec = NULL, *chk = NULL;
    glc_tokenizer *tz = NULL;
    glc_tokenizer_info ti;
    glc_tokenizer_stream *stream = NULL;
    sampler smp;
    progress bar;
    char err[512], hb[32], detail[96], *file_prompt = NULL;
    const char *text;
    size_t text_len = 0, count = 0, wbytes = 0, done_bytes = 0;
    int32_t *ids = NULL, *gen = NULL, next = 0, tok;
    float *rlogits = NULL;
    const float *logits = NULL;
    int i, rc = 1, n_prompt, n_pre, n_gen = 0, pick_vocab, max_seq, file_ctx, eog = 0;
    int steps_checked = 0, mismatches = 0;
    int mixed = 0; /* matrices of several dtypes (cfg.wdtype: the most common) */
    long long n_predict;
    double t0, t_open, t_compile = 0, t_upload = 0, t_prefill = 0, t_decode = 0, worst = 0;
    glc_status st;

    memset(&w, 0, sizeof w);
    memset(&smp, 0, sizeof smp);
    if ((i = parse(argc, argv, &o)) <= 0)
        return i == 0 ? 0 : 2;
    if (o.prompt) {
        text = o.prompt;
        text_len = strlen(text);
    } else if (!(text = file_prompt = read_file(o.prompt_file, &text_len))) {
        return 1;
    }
    if (text_len == 0) {
        fprintf(stderr, PROG ": the prompt is empty\n");
        rc = 2;
        goto out;
    }
    bar.on = !o.quiet && isatty(2);
    bar.shown = -1;

    /* the file: mapped, its header and metadata checked, the config read */
    t0 = cli_now();
    if (!check_model_file(o.model))
        goto out;
    snprintf(detail, sizeof detail, "%s", o.model);
    progress_draw(&bar, "checking", 0, 1, detail);
    if (!llama_load_gguf(o.model, (int)o.max_seq, &w, err, sizeof err)) {
        progress_clear(&bar);
        fprintf(stderr, PROG ": cannot load %s: %s\n", o.model, err);
        goto out;
    }
    cfg = w.cfg;
    file_ctx = cfg.max_seq; /* the file's context length, capped by --max-seq */
    for (i = 0; i < w.n; i++) {
        wbytes += w.t[i].bytes;
        mixed |= w.t[i].rank == 2 && w.t[i].dtype != cfg.wdtype;
    }
    if (glc_gguf_value_type(w.gguf, "tokenizer.ggml.model") < 0) {
        progress_clear(&bar);
        fprintf(stderr, PROG ": %s has no tokenizer (no tokenizer.ggml.model key): this program "
                        "needs the file's vocabulary\n", o.model);
        goto out;
    }
    if (glc_tokenizer_create(w.gguf, &tz) != GLC_OK) {
        progress_clear(&bar);
        fprintf(stderr, PROG ": %s: %s\n", o.model, glc_device_errmsg(NULL));
        goto out;
    }
    glc_tokenizer_get_info(tz, &ti);
    /* the size first (GLC_ERR_BOUNDS with the count), then the ids */
    st = glc_tokenizer_encode(tz, text, text_len, 0, NULL, 0, &count);
    if (st == GLC_ERR_BOUNDS && count <= (size_t)1 << 24 && (ids = malloc(count * sizeof *ids)))
        st = glc_tokenizer_encode(tz, text, text_len, 0, ids, count, &count);
    if (st != GLC_OK || count == 0) {
        progress_clear(&bar);
        if (st == GLC_OK || (st == GLC_ERR_BOUNDS && count > (size_t)1 << 24)) {
            fprintf(stderr, PROG ": the prompt: %zu tokens (this program takes 1..%d)\n", count, 1 << 24);
            rc = 2;
        } else {
            fprintf(stderr, PROG ": the prompt: %s\n",
                    st == GLC_ERR_BOUNDS ? "out of memory" : glc_device_errmsg(NULL));
        }
        goto out;
    }
    n_prompt = (int)count;
    for (i = 0; i < n_prompt; i++)
        if (ids[i] < 0 || ids[i] >= cfg.vocab) {
            progress_clear(&bar);
            fprintf(stderr, PROG ": the prompt's token %d (id %d) is outside the model's %d embedding rows\n",
                    i, ids[i], cfg.vocab);
            goto out;
        }
    t_open = cli_now() - t0;
    progress_draw(&bar, "checking", 1, 1, detail);

    /* sizes: prompt + n-predict within max-seq; the cache just that long */
    n_predict = o.n_predict;
    if (n_predict < 0)
        n_predict = DEFAULT_N_PREDICT < file_ctx - n_prompt ? DEFAULT_N_PREDICT : file_ctx - n_prompt;
    if (n_prompt + n_predict > file_ctx || n_predict < 0 || (o.n_predict < 0 && n_predict == 0)) {
        const char *limit = o.max_seq > 0 && o.max_seq == file_ctx ? "--max-seq"
                                                                   : "the file's context length";
        progress_clear(&bar);
        if (o.n_predict < 0)
            fprintf(stderr, PROG ": the prompt's %d tokens leave no room to generate in max-seq %d (%s)\n",
                    n_prompt, file_ctx, limit);
        else
            fprintf(stderr, PROG ": the prompt's %d tokens + --n-predict %lld do not fit max-seq %d (%s)\n",
                    n_prompt, n_predict, file_ctx, limit);
        rc = 2;
        goto out;
    }
    max_seq = (int)(n_prompt + n_predict);
    cfg.max_seq = w.cfg.max_seq = max_seq; /* the plans' and the reference's caches */
    n_pre = n_prompt < o.batch ? n_prompt : (int)o.batch;
    pick_vocab = ti.vocab_size < cfg.vocab ? ti.vocab_size : cfg.vocab;

    memset(&desc, 0, sizeof desc);
    desc.log = cli_log;
    desc.log_user = (void *)PROG;
    desc.log_level = GLC_LOG_WARN;
    if (glc_device_create(&desc, &dev) != GLC_OK) {
        progress_clear(&bar);
        fprintf(stderr, PROG ": no device: %s\n", glc_device_errmsg(NULL));
        goto out;
    }
    glc_device_get_info(dev, &info);

    /* the plans: prefill (T up to n_pre tokens) and decode (cache length L),
     * the decode plan on the prefill's params and KV cache */
    t0 = cli_now();
    progress_draw(&bar, "compiling", 0, 2, "prefill plan");
    if ((st = llama_plan(dev, &cfg, &w, 0, n_pre, o.no_fuse ? GLC_COMPILE_NO_FUSE : 0, &pre)) != GLC_OK ||
        (progress_draw(&bar, "compiling", 1, 2, "decode plan"),
         st = llama_plan(dev, &cfg, &w, 1, 1, o.no_fuse ? GLC_COMPILE_NO_FUSE : 0, &dec)) != GLC_OK ||
        (st = glc_plan_share(dec, pre, GLC_SHARE_PARAMS | GLC_SHARE_HANDLES)) != GLC_OK ||
        (n_pre < n_prompt && /* the chunks past --batch */
         ((st = llama_plan(dev, &cfg, &w, LLAMA_CHUNK, n_pre, o.no_fuse ? GLC_COMPILE_NO_FUSE : 0,
                           &chk)) != GLC_OK ||
          (st = glc_plan_share(chk, pre, GLC_SHARE_PARAMS | GLC_SHARE_HANDLES)) != GLC_OK))) {
        progress_clear(&bar);
        fprintf(stderr, PROG ": compiling the plans: %s: %s\n", glc_status_str(st), glc_device_errmsg(dev));
        goto out;
    }
    t_compile = cli_now() - t0;

    /* the weights, one tensor at a time (the mapped file is read here) */
    t0 = cli_now();
    for (i = 0; i < w.n; i++) {
        const llama_tensor *t = &w.t[i];
        char a[32], b[32];
        snprintf(detail, sizeof detail, "%s / %s", human_bytes((double)done_bytes, a, sizeof a),
                 human_bytes((double)wbytes, b, sizeof b));
        progress_draw(&bar, "uploading", (double)done_bytes, (double)wbytes, detail);
        if ((st = glc_plan_set_param_typed(pre, t->name, t->data, t->bytes, t->dtype)) != GLC_OK) {
            progress_clear(&bar);
            fprintf(stderr, PROG ": uploading %s: %s: %s\n", t->name, glc_status_str(st),
                    glc_device_errmsg(dev));
            goto out;
        }
        done_bytes += t->bytes;
    }
    progress_draw(&bar, "uploading", 1, 1, human_bytes((double)wbytes, hb, sizeof hb));
    if ((st = llama_reset_cache(pre, &cfg)) != GLC_OK) {
        progress_clear(&bar);
        fprintf(stderr, PROG ": the KV cache: %s: %s\n", glc_status_str(st), glc_device_errmsg(dev));
        goto out;
    }
    t_upload = cli_now() - t0;
    progress_clear(&bar);

    if (!o.quiet)
        fprintf(stderr,
                PROG ": %s: %s, %d layers, d %d, %d heads (%d kv), vocab %d, %s%s weights (%s); "
                "tokenizer %s; KV cache %d positions (%s); %s\n",
                o.model, cfg.qkv_bias ? "qwen2" : "llama", cfg.layers, cfg.d, cfg.heads, cfg.kv_heads,
                cfg.vocab, mixed ? "mostly " : "", glc_dtype_name(cfg.wdtype),
                human_bytes((double)wbytes, hb, sizeof hb),
                ti.model == GLC_TOKENIZER_LLAMA ? "llama (SentencePiece)"
                : ti.pre == GLC_TOKENIZER_PRE_LLAMA3 ? "gpt2 (BPE, llama3)"
                : ti.pre == GLC_TOKENIZER_PRE_QWEN2  ? "gpt2 (BPE, qwen2)"
                                                     : "gpt2 (BPE)",
                max_seq, glc_dtype_name(cfg.cache), info.renderer);

    if (!(gen = malloc(((size_t)n_predict + 1) * sizeof *gen)) ||
        (o.temp > 0 && (!(smp.c = malloc((size_t)cfg.vocab * sizeof *smp.c)) ||
                        !(smp.p = malloc((size_t)cfg.vocab * sizeof *smp.p))))) {
        fprintf(stderr, PROG ": out of memory\n");
        goto out;
    }
    smp.temp = o.temp;
    smp.top_k = (int)o.top_k;
    smp.top_p = o.top_p;
    smp.state = (uint64_t)o.seed;
    if (o.verify && (!llama_values(&w) || !(ref = llama_ref_create(&w)) ||
                     !(rlogits = malloc((size_t)cfg.vocab * sizeof *rlogits)))) {
        fprintf(stderr, PROG ": --verify: out of memory for the C reference\n");
        goto out;
    }
    /* continuing the prompt: a first token's leading space is kept */
    if (glc_tokenizer_stream_create(tz, GLC_DETOKENIZE_KEEP_SPACE, &stream) != GLC_OK) {
        fprintf(stderr, PROG ": %s\n", glc_device_errmsg(NULL));
        goto out;
    }
    if (!o.quiet) {
        fwrite(text, 1, text_len, stdout);
        fflush(stdout);
    }

    /* prefill: the first n_pre tokens at once, the rest in chunks of up
     * to n_pre through the chunk plan (its cache length L: the tokens so
     * far) */
    {
        int32_t *pos = malloc((size_t)n_prompt * sizeof *pos), p, n;
        if (!pos) {
            fprintf(stderr, PROG ": out of memory\n");
            goto out;
        }
        for (i = 0; i < n_prompt; i++)
            pos[i] = i;
        t0 = cli_now();
        st = step(pre, "T", n_pre, ids, pos, n_pre - 1, &logits, &next);
        for (p = n_pre; p < n_prompt && st == GLC_OK; p += n) {
            glc_plan_var v[2] = {{"T", 0}, {"L", 0}};
            n = n_prompt - p < n_pre ? n_prompt - p : n_pre;
            v[0].value = n;
            v[1].value = p + n;
            st = step_vars(chk, v, 2, &ids[p], &pos[p], n - 1, &logits, &next);
        }
        free(pos);
        t_prefill = cli_now() - t0;
    }
    if (st != GLC_OK) {
        fprintf(stderr, "\n" PROG ": prefill: %s: %s\n", glc_status_str(st), glc_device_errmsg(dev));
        goto out;
    }

    /* generation: logits and next are the last run's, which fed the prompt
     * or gen[n_gen - 1]; a token from them, its text, the next run. The
     * decode time is the runs' and the choosing of their tokens. */
    for (;;) {
        const char *piece;
        size_t plen;
        if (ref) {
            steps_checked++;
            mismatches += !check_step(ref, ids, n_prompt, gen, n_gen, logits, rlogits, cfg.vocab, &worst);
        }
        if (n_gen == n_predict)
            break;
        t0 = cli_now();
        tok = choose(&smp, o.temp, logits, next, pick_vocab);
        gen[n_gen++] = tok;
        if (n_gen > 1)
            t_decode += cli_now() - t0;
        if (glc_tokenizer_is_eog(tz, tok)) {
            eog = 1;
            break;
        }
        if (glc_tokenizer_stream_push(stream, tok, &piece, &plen) == GLC_OK) {
            fwrite(piece, 1, plen, stdout);
            fflush(stdout);
        }
        if (n_gen == n_predict)
            break;
        {
            int32_t p = n_prompt + n_gen - 1;
            t0 = cli_now();
            if ((st = step(dec, "L", p + 1, &tok, &p, 0, &logits, &next)) != GLC_OK) {
                fprintf(stderr, "\n" PROG ": decode at position %d: %s: %s\n", p, glc_status_str(st),
                        glc_device_errmsg(dev));
                goto out;
            }
            t_decode += cli_now() - t0;
        }
    }
    {
        const char *piece;
        size_t plen;
        if (glc_tokenizer_stream_flush(stream, &piece, &plen) == GLC_OK)
            fwrite(piece, 1, plen, stdout);
        if (!o.quiet || n_gen > 0)
            printf("\n");
    }
    if (o.print_ids) {
        printf("ids:");
        for (i = 0; i < n_gen; i++)
            printf(" %d", gen[i]);
        printf("\n");
    }
    fflush(stdout);

    if (!o.quiet) {
        int runs = n_gen > 1 ? n_gen - 1 : 0; /* decode runs: every token after the first */
        const char *why = eog ? "stopped at an end-of-generation token" : "--n-predict reached";
        fprintf(stderr, PROG ": prompt: %d token%s, prefill %.2f ms (%.1f tokens/s%s)\n",
                n_prompt, n_prompt == 1 ? "" : "s", t_prefill * 1e3, t_prefill > 0 ? n_prompt / t_prefill : 0,
                n_pre < n_prompt ? "; in chunks of --batch" : "");
        if (runs > 0 && t_decode > 0)
            fprintf(stderr, PROG ": generated: %d token%s (%s), decode %.2f ms/token (%.1f tokens/s)\n",
                    n_gen, n_gen == 1 ? "" : "s", why, t_decode * 1e3 / runs, runs / t_decode);
        else
            fprintf(stderr, PROG ": generated: %d token%s (%s)\n", n_gen, n_gen == 1 ? "" : "s", why);
        fprintf(stderr, PROG ": load: %.2f s (file and tokenizer %.2f s, plans %.2f s, upload %.2f s)\n",
                t_open + t_compile + t_upload, t_open, t_compile, t_upload);
    }
    if (ref)
        fprintf(stderr, PROG ": check: %d steps against the C reference, worst logits nmse %.2e (limit "
                        "1e-5), %s\n", steps_checked,
                worst, mismatches ? "FAILED" : "ok");
    rc = mismatches ? 1 : 0;
out:
    free(file_prompt);
    free(ids);
    free(gen);
    free(rlogits);
    free(smp.c);
    free(smp.p);
    glc_tokenizer_stream_destroy(stream);
    glc_tokenizer_destroy(tz);
    llama_ref_destroy(ref);
    glc_plan_destroy(chk);
    glc_plan_destroy(dec);
    glc_plan_destroy(pre);
    glc_device_destroy(dev);
    llama_free(&w);
    return rc;
}
