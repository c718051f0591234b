/*
 * A llama-style decoder on glcompute, for examples/transformer.c: the
 * config, weights (generated from a seed, saved to / loaded from a file
 * that bench/torch_ref.py reads too), the two plans (prefill and decode)
 * and a plain C reference of the same model.
 *
 * Model: x = tok_emb[tokens]; per layer: h = rms_norm(x) * attn_norm;
 * q, k, v = h Wq^T, h Wk^T, h Wv^T as [T, heads, head_dim]; RoPE on q and
 * k at the tokens' positions (NeoX halves for our own weights, adjacent
 * pairs for a GGUF file's, whose Q and K rows are permuted to match); k, v appended to the layer's KV cache
 * (a plan handle); grouped-query causal attention; x += attn Wo^T; h2 =
 * rms_norm(x) * ffn_norm; x += (silu(h2 W1^T) * (h2 W3^T)) W2^T. Logits =
 * (rms_norm(x) * out_norm) Wout^T of the last position; next = argmax.
 */
#ifndef LLAMA_H
#define LLAMA_H

#include <glcompute.h>

#include <stdint.h>
#include <stdio.h>

typedef struct llama_cfg {
    int d, layers, heads, kv_heads, head_dim, ffn, vocab, max_seq;
    float rope_base, eps;
    glc_rope_mode rope; /* GLC_ROPE_NEOX (our weights) or GLC_ROPE_NORMAL (GGUF) */
    int tied;           /* no "out" tensor: the logits use tok_emb */
    int rope_freqs;     /* a "rope_freqs" tensor [head_dim/2] divides pair i's frequency */
    int qkv_bias;       /* "bq", "bk", "bv" biases of Q, K, V (qwen2) */
    glc_dtype wdtype;   /* embedding and matrices (a GGUF file's: the most common) */
    int mix;            /* wdtype Q4_K with wv, w2 and out in Q6_K (as llama.cpp's Q4_K_M) */
    glc_dtype cache;    /* KV cache: F32 or F16 */
    uint32_t seed;
} llama_cfg;

/* "tiny" or "1b"; 0 when the name is unknown. */
int llama_config(const char *name, llama_cfg *c);

/* One weight tensor: its storage bytes (what the GPU gets, and what the
 * file holds) and the f32 values they stand for (what the reference uses). */
typedef struct llama_tensor {
    char name[32];
    glc_dtype dtype;
    int rank;
    int64_t shape[2];
    size_t bytes;
    unsigned char *data; /* owned, or in the mapped GGUF file */
    float *values; /* NULL until llama_values() */
} llama_tensor;

typedef struct llama_weights {
    llama_cfg cfg;
    int n;
    llama_tensor *t;
    glc_gguf *gguf; /* the file the data lies in, or NULL (the data is owned) */
} llama_weights;

/* The tensor list of a config (w->t, w->n), no data yet. Returns 0 on out
 * of memory. */
int llama_layout(const llama_cfg *c, llama_weights *w);
/* Generates every weight from cfg->seed (uniform, scaled by fan-in; norms
 * near 1), stored in cfg->wdtype. Returns 0 on out of memory. */
int llama_generate(const llama_cfg *cfg, llama_weights *w);
int llama_save(const llama_weights *w, const char *path);
/* Reads a file written by llama_save; the config comes from the file.
 * Returns 0 with the reason in err (which tensor, which header field, the
 * size found and the size the header implies) when the file is missing,
 * empty, not a weights file, another version, truncated, longer than its
 * header implies, or inconsistent with it. */
int llama_load(const char *path, llama_weights *w, char *err, size_t errlen);
void llama_free(llama_weights *w);

/* A llama-architecture GGUF file (general.architecture "llama"): the config
 * from its llama.* keys, the tensors by their GGUF names (token_embd,
 * blk.N.attn_q ..., output or none: tied), mapped, not copied. Returns 0
 * with the reason in err (the key or tensor, what was found, what was
 * wanted). max_seq is the file's context length, capped at max_seq_cap
 * when that is > 0. */
int llama_load_gguf(const char *path, int max_seq_cap, llama_weights *w, char *err, size_t errlen);
/* Writes w as a llama GGUF file as llama.cpp's converter would: NeoX Q and K
 * rows permuted to adjacent-pair order, the llama.* keys, and a byte-level
 * SentencePiece vocabulary (<unk>, <s>, </s>, <0x00>..<0xFF>, then filler
 * pieces) so that the file is complete. Returns 0 with the reason in err. */
int llama_save_gguf(const llama_weights *w, const char *path, char *err, size_t errlen);
/* The permutation llama.cpp's converter applies to a NeoX Q or K matrix
 * (heads x head_dim rows): row h*hd + 2i + s of the result is row
 * h*hd + s*hd/2 + i of the input. inverse = 1 undoes it. */
int64_t llama_rope_row(int64_t row, int head_dim, int inverse);
const llama_tensor *llama_find(const llama_weights *w, const char *name);
/* Fills every tensor's f32 values from its storage bytes. */
int llama_values(llama_weights *w);

/* The prefill (decode = LLAMA_PREFILL: T tokens from position 0, a
 * variable "T" up to max_prompt), decode (LLAMA_DECODE: one token, cache
 * length variable "L" up to max_seq) or chunk (LLAMA_CHUNK: T tokens, up
 * to max_prompt, after L - T already in the cache: their attention reads
 * the cache, L in [T, max_seq]) plan.
 * Inputs (slots in this order): tokens I32 [T], pos I32 [T], last I32 [1]
 * (the row whose logits are wanted); outputs: logits F32 [1, vocab], next
 * I32 [1]. Handles "kcache.<l>", "vcache.<l>". Each weight's dtype is its
 * tensor's in w, or c->wdtype (norms f32) when w is NULL. */
enum { LLAMA_PREFILL, LLAMA_DECODE, LLAMA_CHUNK };
glc_status llama_plan(glc_device *dev, const llama_cfg *c, const llama_weights *w, int decode,
                      int max_prompt, uint32_t compile_flags, glc_plan **out);
/* Sets every param of p from w. */
glc_status llama_set_params(glc_plan *p, const llama_weights *w);
/* Zeroes the KV caches of p (binds them). */
glc_status llama_reset_cache(glc_plan *p, const llama_cfg *c);

/* v as stored in f16 (round to nearest even) and read back. */
float llama_f16_round(float v);

/* The plain C reference: one model state with its own f32 KV cache (held
 * in the cache dtype's precision, as the GPU's). */
typedef struct llama_ref llama_ref;
llama_ref *llama_ref_create(const llama_weights *w);
void llama_ref_destroy(llama_ref *r);
/* Feeds n tokens at positions pos0.. and writes the logits after the last
 * one into logits[vocab]. */
void llama_ref_forward(llama_ref *r, const int32_t *tokens, int n, int pos0, float *logits);

#endif
