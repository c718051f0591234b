/*
 * transformer: the main job. A llama-style decoder (examples/llama.h) on
 * glcompute: a prefill plan compiled for a maximum prompt length and run
 * at the prompt's, then greedy decode with a second plan that shares the
 * first one's params and KV-cache handles; the next token is the GPU's
 * argmax. On the tiny config (the default, what `make demo` runs) every
 * step's logits are checked against the plain C reference. Prints a report:
 * device, config, prefill tokens/s, decode ms per token, dispatches and
 * barriers per token, arena vs liveness bound, top kernels by GPU time.
 *
 * Usage: transformer --help lists the options. Exit status 0 ok, 1 failed
 * (a step differing from the reference included), 2 bad usage (every bad
 * option or value is named, with the accepted ones).
 */
#include "cli.h"
#include "llama.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct opts {
    const char *config, *save, *save_gguf, *load, *logits, *json, *text;
    glc_dtype wdtype, cache;
    int prompt, decode, max_prompt, max_seq, verify, no_fuse, mix;
    long long seed;
} opts;

/* weight dtypes; the first two are the cache's too; q4_K_M: Q4_K with wv,
 * w2 and out in Q6_K (mix) */
static const struct {
    const char *n;
    glc_dtype d;
    int mix;
} dtypes[] = {{"f32", GLC_DTYPE_F32, 0},   {"f16", GLC_DTYPE_F16, 0},   {"bf16", GLC_DTYPE_BF16, 0},
              {"q8_0", GLC_DTYPE_Q8_0, 0}, {"q4_0", GLC_DTYPE_Q4_0, 0}, {"q4_1", GLC_DTYPE_Q4_1, 0},
              {"q5_0", GLC_DTYPE_Q5_0, 0}, {"q5_1", GLC_DTYPE_Q5_1, 0}, {"q4_K", GLC_DTYPE_Q4_K, 0},
              {"q5_K", GLC_DTYPE_Q5_K, 0}, {"q6_K", GLC_DTYPE_Q6_K, 0}, {"q4_K_M", GLC_DTYPE_Q4_K, 1}};
#define NWDTYPES (sizeof dtypes / sizeof dtypes[0])

/* Of the first n entries (2: the cache's). */
static int dtype_of(const char *opt, const char *s, size_t n, glc_dtype *out, int *mix)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (strcmp(s, dtypes[i].n) == 0) {
            *out = dtypes[i].d;
            if (mix)
                *mix = dtypes[i].mix;
            return 1;
        }
    fprintf(stderr, "transformer: %s \"%s\": not one of", opt, s);
    for (i = 0; i < n; i++)
        fprintf(stderr, " %s%s", dtypes[i].n, i + 1 < n ? "," : "\n");
    return 0;
}
static void usage(FILE *f)
{
    fprintf(f,
            "usage: transformer [options]\n"
            "A llama-style decoder on glcompute: prefill, greedy decode, a report.\n"
            "  --config NAME        model: tiny (default) or 1b\n"
            "  --wdtype DTYPE       weight dtype: f32 (default), f16, bf16, q8_0, q4_0, q4_1,\n"
            "                       q5_0, q5_1, q4_K, q5_K, q6_K, q4_K_M (q4_K with wv, w2\n"
            "                       and the output in q6_K)\n"
            "  --cache DTYPE        KV cache dtype: f32 or f16 (default: f32 for tiny, f16 for 1b)\n"
            "  --prompt N           prompt tokens, 1..max-prompt (default: 16; 128 for 1b)\n"
            "  --decode N           tokens decoded after the prompt, >= 0 (default: 24; 64 for 1b)\n"
            "  --max-prompt N       the longest prompt the prefill plan takes (default: the\n"
            "                       larger of prompt and 64)\n"
            "  --seed N             weight seed, 0..4294967295 (default: 1234); with a\n"
            "                       GGUF --load, the seed of the random prompt\n"
            "  --save FILE          write the weights to FILE\n"
            "  --save-gguf FILE     write the model to FILE as a llama GGUF file (llama.cpp's\n"
            "                       format: Q and K rows in its RoPE order, a byte-level\n"
            "                       vocabulary)\n"
            "  --load FILE          read the weights from FILE: one written by --save (the\n"
            "                       config, weight dtype and seed come from the file) or a\n"
            "                       llama GGUF file (the config from its llama.* keys)\n"
            "  --max-seq N          a GGUF model's KV cache length (default: its context\n"
            "                       length, at most 4096)\n"
            "  --text TEXT          a GGUF model's prompt as text, tokenized by the file's\n"
            "                       tokenizer; the generated text is printed as it comes,\n"
            "                       until --decode tokens or the end of generation\n"
            "  --logits FILE        write every step's logits to FILE\n"
            "  --report-json FILE   write the report as JSON to FILE\n"
            "  --verify             check every step against the C reference (default for tiny)\n"
            "  --no-verify          do not (default for 1b)\n"
            "  --no-fuse            compile the plans without fusion\n"
            "  --help               this text\n"
            "prompt + decode must fit the config's max_seq (tiny 256, 1b 2048).\n"
            "Exit status: 0 ok, 1 failed (or a step differs from the reference), 2 bad usage.\n"
            "The environment's GLC_* variables (GLC_PLATFORM, GLC_DEVICE, GLC_BARRIERS,\n"
            "GLC_LIMITS, GLC_VALIDATE, ...) apply; see the README.\n");
}

/* 1: run; 0: exit 0 (--help); -1: bad usage (the message is printed). */
static int parse(int argc, char **argv, opts *o)
{
    int i;
    memset(o, 0, sizeof *o);
    o->config = "tiny";
    o->prompt = -1, o->decode = -1, o->max_prompt = -1, o->verify = -1, o->seed = -1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        long long n = 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--verify") == 0) {
            o->verify = 1;
            continue;
        }
        if (strcmp(a, "--no-verify") == 0) {
            o->verify = 0;
            continue;
        }
        if (strcmp(a, "--no-fuse") == 0) {
            o->no_fuse = 1;
            continue;
        }
        if (strcmp(a, "--config") && strcmp(a, "--wdtype") && strcmp(a, "--cache") &&
            strcmp(a, "--prompt") && strcmp(a, "--decode") && strcmp(a, "--max-prompt") &&
            strcmp(a, "--seed") && strcmp(a, "--save") && strcmp(a, "--load") &&
            strcmp(a, "--save-gguf") && strcmp(a, "--max-seq") && strcmp(a, "--text") &&
            strcmp(a, "--logits") && strcmp(a, "--report-json")) {
            fprintf(stderr, "transformer: unknown option %s (--help lists them)\n", a);
            return -1;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "transformer: %s needs a value (--help)\n", a);
            return -1;
        }
        v = argv[++i];
        if (strcmp(a, "--config") == 0)
            o->config = v;
        else if (strcmp(a, "--wdtype") == 0) {
            if (!dtype_of(a, v, NWDTYPES, &o->wdtype, &o->mix))
                return -1;
        } else if (strcmp(a, "--cache") == 0) {
            if (!dtype_of(a, v, 2, &o->cache, NULL))
                return -1;
        } else if (strcmp(a, "--prompt") == 0) {
            if (!cli_int("transformer", a, v, 1, 1 << 20, &n))
                return -1;
            o->prompt = (int)n;
        } else if (strcmp(a, "--decode") == 0) {
            if (!cli_int("transformer", a, v, 0, 1 << 20, &n))
                return -1;
            o->decode = (int)n;
        } else if (strcmp(a, "--max-prompt") == 0) {
            if (!cli_int("transformer", a, v, 1, 1 << 20, &n))
                return -1;
            o->max_prompt = (int)n;
        } else if (strcmp(a, "--seed") == 0) {
            if (!cli_int("transformer", a, v, 0, UINT32_MAX, &o->seed))
                return -1;
        } else if (strcmp(a, "--max-seq") == 0) {
            if (!cli_int("transformer", a, v, 1, 1 << 24, &n))
                return -1;
            o->max_seq = (int)n;
        } else if (strcmp(a, "--save") == 0)
            o->save = v;
        else if (strcmp(a, "--save-gguf") == 0)
            o->save_gguf = v;
        else if (strcmp(a, "--text") == 0)
            o->text = v;
        else if (strcmp(a, "--load") == 0)
            o->load = v;
        else if (strcmp(a, "--logits") == 0)
            o->logits = v;
        else
            o->json = v;
    }
    return 1;
}

static const char *dtype_name(glc_dtype d) { return glc_dtype_name(d); }
/* Progress on stderr when it is a terminal. */
static void progress(const char *what, int done, int total)
{
    if (!isatty(2))
        return;
    fprintf(stderr, "\r%s %d/%d ", what, done, total);
    if (done == total)
        fprintf(stderr, "\r%*s\r", 40, "");
    fflush(stderr);
}

static int argmax(const float *v, int n, float *margin)
{
    int i, best = 0, second = -1;
    for (i = 1; i < n; i++)
        if (v[i] > v[best]) {
            second = best;
            best = i;
        } else if (second < 0 || v[i] > v[second]) {
            second = i;
        }
    *margin = second >= 0 ? v[best] - v[second] : INFINITY;
    return best;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One run of a plan with its variable, inputs by slot, outputs copied. */
static glc_status step(glc_plan *p, const char *var, int64_t value, const int32_t *tokens,
                       const int32_t *pos, int32_t last, float *logits, int32_t *next)
{
    glc_plan_var v;
    const void *in[3];
    const void *out[2];
    glc_status st;
    v.name = var;
    v.value = value;
    in[0] = tokens;
    in[1] = pos;
    in[2] = &last;
    if ((st = glc_plan_set_vars(p, &v, 1)) != GLC_OK || (st = glc_plan_run_raw(p, in, out)) != GLC_OK)
        return st;
    memcpy(logits, out[0], glc_plan_output_bytes(p, 0));
    memcpy(next, out[1], 4);
    return GLC_OK;
}

/* The ids of text by the GGUF file's tokenizer (*n their count, *tz the
 * tokenizer), or NULL after a message. */
static int32_t *tokenize(const llama_weights *w, const char *text, int *n, glc_tokenizer **tz)
{
    int32_t *ids = NULL;
    size_t count = 0;
    if (!w->gguf) {
        fprintf(stderr, "transformer: --text needs a GGUF model (--load FILE.gguf)\n");
        return NULL;
    }
    if (glc_tokenizer_create(w->gguf, tz) != GLC_OK) {
        fprintf(stderr, "transformer: the file's tokenizer: %s\n", glc_device_errmsg(NULL));
        return NULL;
    }
    if (glc_tokenizer_encode(*tz, text, strlen(text), 0, NULL, 0, &count) != GLC_ERR_BOUNDS ||
        count == 0 || count > (1u << 20) || !(ids = malloc(count * sizeof *ids)) ||
        glc_tokenizer_encode(*tz, text, strlen(text), 0, ids, count, &count) != GLC_OK) {
        fprintf(stderr, "transformer: --text: %s\n",
                count == 0 ? "no tokens" : *glc_device_errmsg(NULL) ? glc_device_errmsg(NULL) : "out of memory");
        free(ids);
        return NULL;
    }
    *n = (int)count;
    return ids;
}

int main(int argc, char **argv)
{
    opts o;
    llama_cfg cfg;
    llama_weights w;
    llama_ref *ref = NULL;
    glc_device *dev = NULL;
    glc_device_desc desc;
    glc_device_info info;
    glc_plan *pre = NULL, *dec = NULL;
    glc_plan_info pi, di;
    float *logits = NULL, *rlogits = NULL;
    double *times = NULL, t_pre = 0, worst = 0, t0, cpu_us = 0;
    int32_t *prompt = NULL, *tokens = NULL, next = 0, tok;
    glc_tokenizer *tz = NULL;
    glc_tokenizer_stream *stream = NULL;
    FILE *lf = NULL;
    int i, ok = 1, mismatches = 0, rc = 1;
    glc_status st;
    size_t wbytes = 0;

    memset(&w, 0, sizeof w);
    if ((i = parse(argc, argv, &o)) <= 0)
        return i == 0 ? 0 : 2;
    if (o.load) {
        char err[512], magic[4] = {0};
        FILE *f = fopen(o.load, "rb");
        int gguf = f && fread(magic, 1, 4, f) == 4 && memcmp(magic, "GGUF", 4) == 0;
        if (f)
            fclose(f);
        if (!(gguf ? llama_load_gguf(o.load, o.max_seq ? o.max_seq : 4096, &w, err, sizeof err)
                   : llama_load(o.load, &w, err, sizeof err))) {
            fprintf(stderr, "transformer: cannot load weights: %s\n", err);
            return 1;
        }
        cfg = w.cfg;
        if (gguf) /* the file holds no seed: --seed (or the default) picks the prompt */
            cfg.seed = o.seed >= 0 ? (uint32_t)o.seed : 1234u;
    } else {
        if (!llama_config(o.config, &cfg)) {
            fprintf(stderr, "transformer: --config \"%s\": not one of tiny, 1b\n", o.config);
            return 2;
        }
        if (o.wdtype) {
            cfg.wdtype = o.wdtype;
            cfg.mix = o.mix;
        }
        if (o.seed >= 0)
            cfg.seed = (uint32_t)o.seed;
    }
    if (o.cache)
        cfg.cache = o.cache;
    if (o.text && !(tokens = tokenize(&w, o.text, &o.prompt, &tz)))
        goto out;
    if (o.prompt < 0)
        o.prompt = cfg.d >= 1024 ? 128 : 16;
    if (o.decode < 0)
        o.decode = cfg.d >= 1024 ? 64 : 24;
    if (o.max_prompt < 0)
        o.max_prompt = o.prompt > 64 ? o.prompt : 64;
    if (o.verify < 0)
        o.verify = cfg.d < 1024;
    if (o.prompt < 1 || o.prompt > o.max_prompt || o.prompt + o.decode > cfg.max_seq) {
        fprintf(stderr, "transformer: prompt %d + decode %d must fit max_seq %u (prompt <= "
                        "max-prompt %d)\n", o.prompt, o.decode, (unsigned)cfg.max_seq, o.max_prompt);
        return 2;
    }
    if (!o.load && !llama_generate(&cfg, &w)) {
        fprintf(stderr, "transformer: out of memory generating weights\n");
        return 1;
    }
    for (i = 0; i < w.n; i++)
        wbytes += w.t[i].bytes;
    if (o.save && !llama_save(&w, o.save)) {
        fprintf(stderr, "transformer: cannot write %s\n", o.save);
        goto out;
    }
    if (o.save_gguf) {
        char err[512];
        if (!llama_save_gguf(&w, o.save_gguf, err, sizeof err)) {
            fprintf(stderr, "transformer: cannot write %s: %s\n", o.save_gguf, err);
            goto out;
        }
    }
    memset(&desc, 0, sizeof desc);
    desc.log = cli_log;
    desc.log_user = (void *)"transformer";
    desc.log_level = GLC_LOG_WARN;
    if ((st = glc_device_create(&desc, &dev)) != GLC_OK) {
        fprintf(stderr, "transformer: no device: %s\n", glc_device_errmsg(NULL));
        goto out;
    }
    glc_device_get_info(dev, &info);
    t0 = cli_now();
    if ((st = llama_plan(dev, &cfg, &w, 0, o.max_prompt, o.no_fuse ? GLC_COMPILE_NO_FUSE : 0, &pre)) != GLC_OK ||
        (st = llama_plan(dev, &cfg, &w, 1, 1, o.no_fuse ? GLC_COMPILE_NO_FUSE : 0, &dec)) != GLC_OK ||
        (st = glc_plan_share(dec, pre, GLC_SHARE_PARAMS | GLC_SHARE_HANDLES)) != GLC_OK ||
        (st = llama_set_params(pre, &w)) != GLC_OK || (st = llama_reset_cache(pre, &cfg)) != GLC_OK) {
        fprintf(stderr, "transformer: %s: %s\n", glc_status_str(st),
                *glc_device_errmsg(dev) ? glc_device_errmsg(dev) : "building the plans");
        goto out;
    }
    printf("transformer on %s (%s)\n", info.renderer, info.version);
    /* the knobs in force, as the device read them, so runs can be told apart */
    printf("knobs: GLC_BARRIERS=%s GLC_LIMITS=%s GLC_VALIDATE=%d; %s platform\n", info.barriers,
           info.limits_clamped ? "min" : "device", info.validate ? 1 : 0,
           glc_platform_name(info.platform));
    printf("config %s: d %d, %d layers, %d heads (%d kv), head %d, ffn %d, vocab %d; weights %s "
           "(%.1f MB), cache %s; RoPE %s%s%s; plans built in %.2f s\n",
           o.load ? o.load : o.config, cfg.d, cfg.layers, cfg.heads, cfg.kv_heads, cfg.head_dim,
           cfg.ffn, cfg.vocab, cfg.mix ? "q4_K_M" : dtype_name(cfg.wdtype), (double)wbytes / 1e6,
           dtype_name(cfg.cache),
           cfg.rope == GLC_ROPE_NEOX ? "halves" : "adjacent pairs",
           cfg.rope_freqs ? " with frequency factors" : "", cfg.tied ? ", output tied" : "",
           cli_now() - t0);

    logits = malloc((size_t)cfg.vocab * 4);
    rlogits = malloc((size_t)cfg.vocab * 4);
    prompt = malloc((size_t)o.prompt * 2 * 4);
    times = malloc((size_t)(o.decode + 1) * sizeof *times);
    if (!logits || !rlogits || !prompt || !times)
        goto out;
    {
        uint64_t s = cfg.seed * 2654435761u + 1;
        for (i = 0; i < o.prompt; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            prompt[i] = tokens ? tokens[i] : (int32_t)((s >> 33) % (uint64_t)cfg.vocab);
            prompt[o.prompt + i] = i; /* positions */
        }
    }
    /* the generated text continues the prompt: its first space is kept */
    if (tz && glc_tokenizer_stream_create(tz, GLC_DETOKENIZE_KEEP_SPACE, &stream) != GLC_OK) {
        fprintf(stderr, "transformer: %s\n", glc_device_errmsg(NULL));
        goto out;
    }
    if (stream)
        printf("text: %s", o.text);
    if (o.verify) {
        if (!llama_values(&w) || !(ref = llama_ref_create(&w))) {
            fprintf(stderr, "transformer: out of memory for the reference\n");
            goto out;
        }
    }
    if (o.logits) {
        uint32_t n = (uint32_t)o.prompt, steps = (uint32_t)o.decode + 1, v = (uint32_t)cfg.vocab;
        if (!(lf = fopen(o.logits, "wb")) || fwrite("GLCLOG01", 1, 8, lf) != 8 ||
            fwrite(&n, 4, 1, lf) != 1 || fwrite(prompt, 4, n, lf) != n ||
            fwrite(&steps, 4, 1, lf) != 1 || fwrite(&v, 4, 1, lf) != 1) {
            fprintf(stderr, "transformer: cannot write %s\n", o.logits);
            goto out;
        }
    }

    /* prefill: a warm-up run (first-use costs), then the timed one */
    for (i = 0; i < 2; i++) {
        progress("prefill", i, 2);
        t0 = cli_now();
        if ((st = step(pre, "T", o.prompt, prompt, prompt + o.prompt, o.prompt - 1, logits, &next)) != GLC_OK) {
            fprintf(stderr, "transformer: prefill: %s: %s\n", glc_status_str(st), glc_device_errmsg(dev));
            goto out;
        }
        t_pre = cli_now() - t0;
    }
    progress("prefill", 2, 2);
    tok = prompt[o.prompt - 1];
    for (i = 0; i <= o.decode; i++) {
        int pos = o.prompt - 1 + i;
        if (i > 0) {
            int32_t zero = 0;
            progress("decode", i, o.decode);
            tok = next;
            t0 = cli_now();
            if ((st = step(dec, "L", pos + 1, &tok, &pos, zero, logits, &next)) != GLC_OK) {
                fprintf(stderr, "transformer: decode: %s: %s\n", glc_status_str(st), glc_device_errmsg(dev));
                goto out;
            }
            times[i - 1] = cli_now() - t0;
        }
        if (lf) {
            int32_t rec[3] = {tok, pos, next};
            if (fwrite(rec, 4, 3, lf) != 3 || fwrite(logits, 4, (size_t)cfg.vocab, lf) != (size_t)cfg.vocab)
                ok = 0;
        }
        if (ref) {
            float margin;
            double e;
            int r;
            if (i == 0)
                llama_ref_forward(ref, prompt, o.prompt, 0, rlogits);
            else
                llama_ref_forward(ref, &tok, 1, pos, rlogits);
            e = cli_nmse(logits, rlogits, cfg.vocab);
            worst = e > worst ? e : worst;
            r = argmax(rlogits, cfg.vocab, &margin);
            /* a different token counts only where the reference's choice is clear */
            if (!(e <= 1e-5) || (r != next && margin > 1e-3f)) {
                mismatches++;
                fprintf(stderr, "transformer: step %d: logits nmse %.3g vs the C reference, token %d "
                                "(reference %d, margin %.3g)\n", i, e, next, r, (double)margin);
            }
        }
        if (stream) { /* the generated token's text, complete characters only */
            const char *piece;
            size_t plen;
            if (glc_tokenizer_is_eog(tz, next)) {
                o.decode = i; /* the steps run */
                break;
            }
            if (glc_tokenizer_stream_push(stream, next, &piece, &plen) == GLC_OK) {
                fwrite(piece, 1, plen, stdout);
                fflush(stdout);
            }
        }
    }
    if (stream) {
        const char *piece;
        size_t plen;
        if (glc_tokenizer_stream_flush(stream, &piece, &plen) == GLC_OK)
            fwrite(piece, 1, plen, stdout);
        printf("\n");
    }
    if (lf && (fclose(lf) != 0 || !ok)) {
        lf = NULL;
        fprintf(stderr, "transformer: cannot write %s\n", o.logits);
        goto out;
    }
    lf = NULL;

    glc_plan_stats(pre, &pi);
    glc_plan_stats(dec, &di);
    qsort(times, (size_t)o.decode, sizeof *times, cmp_double);
    {
        double med = o.decode ? times[o.decode / 2] : 0;
        printf("prefill: %d tokens in %.2f ms (%.1f tokens/s); %u dispatches, %u barriers (the ops' "
               "DAG needs %u)\n",
               o.prompt, t_pre * 1e3, o.prompt / t_pre, pi.dispatches, pi.barriers,
               pi.min_barriers);
        printf("decode: %d tokens, %.3f ms per token (median; %.1f tokens/s)\n", o.decode,
               med * 1e3, med > 0 ? 1.0 / med : 0);
        printf("per token: %u dispatches, %u barriers (GLC_BARRIERS=always: %u; the ops' DAG "
               "needs %u), %u patterns fused\n",
               di.dispatches, di.barriers, di.dispatches ? di.dispatches - 1 : 0, di.min_barriers,
               di.fused);
        printf("memory: decode arena %.2f MB vs liveness bound %.2f MB (%.3fx); prefill %.2f MB vs "
               "%.2f MB (%.3fx); params %.1f MB\n",
               di.arena_bytes / 1e6, di.liveness_bound / 1e6,
               di.liveness_bound ? (double)di.arena_bytes / di.liveness_bound : 0, pi.arena_bytes / 1e6,
               pi.liveness_bound / 1e6, pi.liveness_bound ? (double)pi.arena_bytes / pi.liveness_bound : 0,
               pi.params_bytes / 1e6);
        if (ref)
            printf("check: %d steps against the C reference, worst logits nmse %.2e (limit 1e-5), %s\n",
                   o.decode + 1, worst, mismatches ? "FAILED" : "ok");
        if (o.json) {
            FILE *jf = fopen(o.json, "w");
            if (jf) {
                fprintf(jf, "{\"device\": \"%s\", \"barriers\": \"%s\", \"limits\": \"%s\", "
                            "\"validate\": %d, \"config\": \"%s\", \"wdtype\": \"%s\", \"prompt\": %d, "
                            "\"decode\": %d, \"prefill_tokens_per_s\": %.3f, \"decode_ms_per_token\": %.4f, "
                            "\"dispatches_per_token\": %u, \"barriers_per_token\": %u, "
                            "\"weight_bytes\": %zu, \"arena_bytes\": %zu, \"liveness_bound\": %zu}\n",
                        info.renderer, info.barriers, info.limits_clamped ? "min" : "device",
                        info.validate ? 1 : 0, o.load ? o.load : o.config, dtype_name(cfg.wdtype), o.prompt,
                        o.decode, o.prompt / t_pre, med * 1e3, di.dispatches, di.barriers, wbytes,
                        di.arena_bytes, di.liveness_bound);
            }
            if (!jf || fclose(jf) != 0) {
                fprintf(stderr, "transformer: cannot write %s\n", o.json);
                goto out;
            }
        }
    }
    /* the CPU side of a replay: encoding one decode step (commit without
     * waiting), per dispatch; median of 9 */
    if (o.decode > 0) {
        int32_t pos = o.prompt + o.decode - 1, zero = 0;
        const void *in[3];
        double enc[9];
        glc_plan_slice outs[2];
        int r, okc = 1;
        in[0] = &next;
        in[1] = &pos;
        in[2] = &zero;
        for (r = 0; r < 9 && okc; r++) {
            t0 = cli_now();
            okc = glc_plan_commit_no_wait(dec, in) == GLC_OK;
            enc[r] = cli_now() - t0;
            okc = okc && glc_plan_sync_pending(dec, outs) == GLC_OK;
        }
        if (okc) {
            qsort(enc, 9, sizeof enc[0], cmp_double);
            cpu_us = enc[4] * 1e6 / (di.dispatches ? di.dispatches : 1);
            printf("replay CPU cost: %.2f us per dispatch (encoding one decode step: %.3f ms)\n",
                   cpu_us, enc[4] * 1e3);
        }
    }
    /* one profiled decode step: where the time goes */
    {
        glc_plan_dispatch_time *e = calloc(di.dispatches + 1, sizeof *e);
        glc_plan_slice outs[2];
        glc_plan_profile prof;
        int32_t pos = o.prompt + o.decode - 1, zero = 0;
        const void *in[3];
        glc_plan_var v = {"L", 0};
        v.value = pos + 1;
        in[0] = &next;
        in[1] = &pos;
        in[2] = &zero;
        memset(&prof, 0, sizeof prof);
        prof.entries = e;
        prof.capacity = di.dispatches + 1;
        if (e && o.decode > 0 && glc_plan_set_vars(dec, &v, 1) == GLC_OK &&
            (st = glc_plan_run_profiled(dec, in, outs, &prof)) == GLC_OK && prof.total_ns > 0) {
            uint32_t k, j, n = 0, shown;
            /* the first dispatches in command order (a layer's chain) */
            printf("GPU time of the first dispatches (us):");
            for (k = 0; k < prof.count && k < 12; k++)
                printf(" %s/%s %.1f%s", prof.entries[k].op, prof.entries[k].kernel,
                       prof.entries[k].gpu_ns / 1e3, k + 1 < prof.count && k < 11 ? "," : "\n");
            /* summed per op (the kernel it ran), largest first */
            for (k = 0; k < prof.count; k++) {
                for (j = 0; j < n; j++)
                    if (strcmp(e[j].op, prof.entries[k].op) == 0)
                        break;
                if (j == n)
                    e[n++] = prof.entries[k], e[j].index = 0;
                else
                    e[j].gpu_ns += prof.entries[k].gpu_ns;
                e[j].index++;
            }
            prof.count = n;
            glc_plan_profile_sort(&prof);
            printf("GPU time of one decode step: %.3f ms; by op:", prof.total_ns / 1e6);
            for (shown = 0; shown < n; shown++)
                printf(" %s x%u %.1f%%%s", e[shown].op, e[shown].index,
                       100.0 * (double)e[shown].gpu_ns / (double)prof.total_ns,
                       shown + 1 < n ? "," : "");
            printf("\n");
        } else if (o.decode > 0) {
            printf("profile: %s\n", glc_device_errmsg(dev));
        }
        free(e);
    }
    rc = mismatches ? 1 : 0;
out:
    if (lf)
        fclose(lf);
    free(logits);
    free(rlogits);
    free(prompt);
    free(tokens);
    free(times);
    glc_tokenizer_stream_destroy(stream);
    glc_tokenizer_destroy(tz);
    llama_ref_destroy(ref);
    glc_plan_destroy(dec);
    glc_plan_destroy(pre);
    glc_device_destroy(dev);
    llama_free(&w);
    return rc;
}
