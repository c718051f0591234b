#!/usr/bin/env bash
# The command-line programs as users drive them: build/examples/transformer,
# build/examples/generate, build/glc-info and build/glc-plan-dump with good
# and bad arguments. Each case checks the exit status (0 ok, 1 failed, 2 bad
# usage), a text its output must hold, and that an error is printed once (one
# line on stderr).
# Weights files: one saved by the transformer (tiny, q4_0: 2.3 MB), then
# damaged copies of it (empty, truncated, junk appended, another version, a
# header field out of range, not a weights file).
# generate runs a GGUF file the transformer saves (tiny, q8_0) and copies of
# it patched in place with perl (another architecture, no tokenizer, a tensor
# type glcompute lacks, another EOS id).
# Prints cmocka-style lines so ci/run_tests.sh counts the cases.
# Usage: GLC_BUILD=build tests/cli.sh
set -u
B=${GLC_BUILD:-build}
# The arguments are under test here, not leaks: the sanitizer build's
# driver preload (ci/run_tests.sh) does not fit the children it would reach.
unset LD_PRELOAD
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0 skipped=0 failures=""

# expect NAME STATUS TEXT [--once] -- COMMAND...: runs COMMAND; its status
# must be STATUS and stdout+stderr must contain TEXT; --once: stderr is one
# line (an error printed once).
expect() {
    local name=$1 want=$2 text=$3 once=0 rc msg=""
    shift 3
    [ "$1" = --once ] && once=1 && shift
    [ "$1" = -- ] && shift
    echo "[ RUN      ] $name"
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne "$want" ]; then
        msg="exit status $rc, want $want"
    elif ! grep -qF -- "$text" "$tmp/out" "$tmp/err"; then
        msg="no \"$text\" in the output"
    elif [ "$once" = 1 ] && [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
        msg="stderr has $(wc -l <"$tmp/err") lines, want 1"
    fi
    if [ -n "$msg" ]; then
        echo "$name: $msg; command: $*"
        sed 's/^/  stdout: /' "$tmp/out" | head -n 20
        sed 's/^/  stderr: /' "$tmp/err" | head -n 20
        echo "[  FAILED  ] $name"
        failed=$((failed + 1))
        failures="$failures $name"
    else
        echo "[       OK ] $name"
        passed=$((passed + 1))
    fi
}

skip_case() {
    echo "[ RUN      ] $1"
    echo "[  SKIPPED ] $1"
    skipped=$((skipped + 1))
}

T=$B/examples/transformer
INFO=$B/glc-info
DUMP=$B/glc-plan-dump

# ---- transformer: usage (no device needed) ----
expect transformer_help 0 "usage: transformer" -- "$T" --help
for opt in --config --wdtype --cache --prompt --decode --max-prompt --seed --save --load \
    --logits --report-json --verify --no-verify --no-fuse --help "q8_0, q4_0" "tiny (default) or 1b"; do
    expect "transformer_help_lists_${opt//[^a-z0-9]/_}" 0 "$opt" -- "$T" --help
done
expect transformer_prompt_negative 2 '--prompt "-1": out of range (1..' --once -- "$T" --prompt -1
expect transformer_decode_negative 2 '--decode "-5": out of range (0..' --once -- "$T" --decode -5
expect transformer_prompt_not_a_number 2 '--prompt "abc": not an integer' --once -- "$T" --prompt abc
expect transformer_prompt_trailing 2 '--prompt "12x": not an integer' --once -- "$T" --prompt 12x
expect transformer_prompt_empty 2 '--prompt "": not an integer' --once -- "$T" --prompt ""
expect transformer_prompt_overflow 2 "out of range" --once -- "$T" --prompt 99999999999999999999
expect transformer_seed_overflow 2 '--seed "4294967296": out of range' --once -- "$T" --seed 4294967296
expect transformer_missing_value 2 "--decode needs a value" --once -- "$T" --decode
expect transformer_wdtype_values 2 '--wdtype "xx": not one of f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_K, q5_K, q6_K, q4_K_M' --once -- "$T" --wdtype xx
expect transformer_cache_values 2 '--cache "q8_0": not one of f32, f16' --once -- "$T" --cache q8_0
expect transformer_config_values 2 '--config "xx": not one of tiny, 1b' --once -- "$T" --config xx
expect transformer_unknown_option 2 "unknown option --bogus" --once -- "$T" --bogus
expect transformer_too_long 2 "must fit max_seq 256" --once -- "$T" --prompt 250 --decode 10
# a library error (here: the device cannot be made) is printed once, by the program
expect transformer_no_device 1 'no device: GLC_PLATFORM="bogus": expected' --once -- \
    env GLC_PLATFORM=bogus "$T" --prompt 1 --decode 0
expect plan_dump_no_device 1 'no device: GLC_PLATFORM="bogus": expected' --once -- \
    env GLC_PLATFORM=bogus "$DUMP"
expect info_no_device 1 'no device: GLC_PLATFORM="bogus": expected' --once -- \
    env GLC_PLATFORM=bogus "$INFO" -v

# ---- transformer: weights files that are refused (no device needed) ----
w=$tmp/w.bin
: >"$tmp/empty.bin"
expect load_missing 1 "$tmp/none.bin: No such file or directory" --once -- "$T" --load "$tmp/none.bin"
expect load_empty 1 "empty (0 bytes)" --once -- "$T" --load "$tmp/empty.bin"
expect load_directory 1 "not a regular file" --once -- "$T" --load "$tmp"
awk 'BEGIN { srand(7); for (i = 0; i < 4096; i++) printf "%c", 32 + int(rand() * 90) }' >"$tmp/random.bin"
expect load_random 1 'does not start with the magic "GLCWTS01"' --once -- "$T" --load "$tmp/random.bin"
printf 'GGUF\003\000\000\000' >"$tmp/short.gguf"
expect load_gguf_short 1 "cannot load weights: " --once -- "$T" --load "$tmp/short.gguf"

# ---- with a device: a run that saves the weights, then their damaged copies ----
if ! "$INFO" >/dev/null 2>&1; then
    for c in transformer_run transformer_report_json transformer_knobs load_good load_truncated load_junk load_version \
        load_max_seq load_header_short transformer_plan_error_once info_run info_json plan_dump_run \
        gguf_save gguf_load gguf_load_prompt gguf_load_rope gguf_max_seq gguf_text gguf_text_check text_needs_gguf; do
        skip_case "$c"
    done
else
    expect transformer_run 0 "check: 2 steps against the C reference" -- \
        "$T" --wdtype q4_0 --prompt 2 --decode 1 --verify --save "$w" --report-json "$tmp/r.json"
    expect transformer_report_json 0 '"barriers": "tracked"' -- cat "$tmp/r.json"
    expect transformer_knobs 0 "knobs: GLC_BARRIERS=always GLC_LIMITS=min GLC_VALIDATE=1" -- \
        env GLC_BARRIERS=always GLC_LIMITS=min GLC_VALIDATE=1 "$T" --load "$w" --prompt 1 --decode 0 --no-verify
    expect load_good 0 "weights q4_0" -- "$T" --load "$w" --prompt 1 --decode 0 --no-verify
    size=$(wc -c <"$w")
    head -c $((size - 100)) "$w" >"$tmp/trunc.bin"
    expect load_truncated 1 "its header implies $size: truncated in tensor 39 of 39 (\"out\"" --once -- \
        "$T" --load "$tmp/trunc.bin"
    { cat "$w"; printf 'junk'; } >"$tmp/junk.bin"
    expect load_junk 1 "4 bytes after the last tensor" --once -- "$T" --load "$tmp/junk.bin"
    { printf 'GLCWTS02'; tail -c +9 "$w"; } >"$tmp/v2.bin"
    expect load_version 1 'version "02"; this build reads "01"' --once -- "$T" --load "$tmp/v2.bin"
    cp "$w" "$tmp/maxseq.bin"
    printf '\377\377\377\377' | dd of="$tmp/maxseq.bin" bs=1 seek=36 conv=notrunc status=none
    expect load_max_seq 1 "max_seq = 4294967295 is out of range" --once -- "$T" --load "$tmp/maxseq.bin"
    # the model as a llama GGUF file, run back with llama.cpp's RoPE pairing
    expect gguf_save 0 "check: 2 steps against the C reference" -- \
        "$T" --wdtype q8_0 --prompt 2 --decode 1 --verify --save-gguf "$tmp/m.gguf" --logits "$tmp/ln.log"
    expect gguf_load 0 "check: 4 steps against the C reference" -- \
        "$T" --load "$tmp/m.gguf" --prompt 3 --decode 3 --verify
    # the same seed, the same random prompt (the logits files' headers: 28 bytes for 2 tokens)
    expect gguf_load_prompt 0 "same prompt" -- sh -c '"$0" --load "$1" --prompt 2 --decode 1 --no-verify \
        --logits "$2" >/dev/null && cmp -n 28 "$2" "$3" && echo same prompt' "$T" "$tmp/m.gguf" "$tmp/lg.log" "$tmp/ln.log"
    expect gguf_load_rope 0 "RoPE adjacent pairs" -- "$T" --load "$tmp/m.gguf" --prompt 1 --decode 0 --no-verify
    expect gguf_max_seq 2 "must fit max_seq 8" --once -- "$T" --load "$tmp/m.gguf" --max-seq 8 --prompt 4 --decode 8
    # text in (the file's tokenizer), text out as it is generated
    expect gguf_text 0 "text: Hello, wörld" -- "$T" --load "$tmp/m.gguf" --text "Hello, wörld" --decode 4
    expect gguf_text_check 0 "against the C reference" -- "$T" --load "$tmp/m.gguf" --text "Hello" --decode 2 --verify
    expect text_needs_gguf 1 "--text needs a GGUF model" --once -- "$T" --text "Hello" --decode 1
    head -c 40 "$w" >"$tmp/short.bin"
    expect load_header_short 1 "40 bytes, shorter than the 60-byte header" --once -- "$T" --load "$tmp/short.bin"
    if "$INFO" | grep -q llvmpipe; then
        # a plan llvmpipe cannot hold (a tensor past its 128 MiB buffer limit): printed once
        expect transformer_plan_error_once 1 "byte buffer limit (max_buffer)" --once -- \
            "$T" --max-prompt 1000000 --prompt 1 --decode 1 --no-verify
    else
        skip_case transformer_plan_error_once
    fi
    expect info_run 0 "loop iterations" -- "$INFO"
    expect info_json 0 '"max_loop_iterations"' -- "$INFO" --json
    expect plan_dump_run 0 "barrier" -- "$DUMP" --rows 3
fi

# ---- generate: text from a GGUF model (usage and refusals need no device) ----
G=$B/examples/generate
expect generate_help 0 "usage: generate --model FILE.gguf --prompt TEXT" -- "$G" --help
for opt in --model --prompt --prompt-file --n-predict --temp --top-k --top-p --seed --max-seq \
    --batch --quiet --no-fuse --verify --print-ids --help; do
    expect "generate_help_lists_${opt//[^a-z0-9]/_}" 0 "$opt" -- "$G" --help
done
expect generate_no_model 2 "--model FILE.gguf is required" --once -- "$G" --prompt hi
expect generate_no_prompt 2 "--prompt TEXT or --prompt-file FILE is required" --once -- "$G" --model x.gguf
expect generate_two_prompts 2 "--prompt and --prompt-file: give one, not both" --once -- \
    "$G" --model x.gguf --prompt hi --prompt-file x.txt
expect generate_unknown_option 2 "unknown option --bogus" --once -- "$G" --bogus
expect generate_missing_value 2 "--temp needs a value" --once -- "$G" --temp
expect generate_temp_negative 2 '--temp "-1": out of range (0..100)' --once -- "$G" --temp -1
expect generate_temp_junk 2 '--temp "0.5x": not a number' --once -- "$G" --temp 0.5x
expect generate_temp_nan 2 '--temp "nan": not a number' --once -- "$G" --temp nan
expect generate_top_p_range 2 '--top-p "1.5": out of range (0..1)' --once -- "$G" --top-p 1.5
expect generate_top_k_negative 2 '--top-k "-1": out of range (0..' --once -- "$G" --top-k -1
expect generate_top_k_fraction 2 '--top-k "1.5": not an integer' --once -- "$G" --top-k 1.5
expect generate_seed_junk 2 '--seed "x": not an integer' --once -- "$G" --seed x
expect generate_n_predict_negative 2 '--n-predict "-1": out of range (0..' --once -- "$G" --n-predict -1
expect generate_max_seq_zero 2 '--max-seq "0": out of range (1..' --once -- "$G" --max-seq 0
expect generate_batch_zero 2 '--batch "0": out of range (1..' --once -- "$G" --batch 0
expect generate_prompt_empty 2 "the prompt is empty" --once -- "$G" --model "$tmp/none.gguf" --prompt ""
expect generate_prompt_file_empty 2 "the prompt is empty" --once -- \
    "$G" --model "$tmp/none.gguf" --prompt-file "$tmp/empty.bin"
expect generate_prompt_file_missing 1 "--prompt-file $tmp/none.txt: No such file or directory" --once -- \
    "$G" --model "$tmp/none.gguf" --prompt-file "$tmp/none.txt"
expect generate_model_missing 1 "$tmp/none.gguf: No such file or directory" --once -- \
    "$G" --model "$tmp/none.gguf" --prompt hi
expect generate_model_directory 1 "not a regular file" --once -- "$G" --model "$tmp" --prompt hi
expect generate_model_not_gguf 1 'not a GGUF file (it does not start with "GGUF")' --once -- \
    "$G" --model "$tmp/random.bin" --prompt hi
expect generate_model_short 1 "cannot load $tmp/short.gguf: " --once -- "$G" --model "$tmp/short.gguf" --prompt hi

# ---- generate: with a device (a GGUF file saved by the transformer, and patched copies) ----
if ! "$INFO" >/dev/null 2>&1; then
    for c in generate_save generate_run generate_prefill_stats generate_prompt_echo generate_verify generate_verify_sampled \
        generate_chunked_is_whole generate_chunked_stats \
        generate_greedy_is_transformers generate_quiet generate_prompt_file generate_seed_repeats \
        generate_seed_matters generate_top_k_1_is_greedy generate_top_p_0_is_greedy generate_n_predict_0 \
        generate_too_long generate_no_room generate_arch generate_no_tokenizer generate_tensor_type \
        generate_eog generate_eog_ids generate_no_device; do
        skip_case "$c"
    done
else
    gm=$tmp/gen.gguf
    expect generate_save 0 "weights q8_0" -- \
        "$T" --save-gguf "$gm" --wdtype q8_0 --prompt 2 --decode 0 --no-verify
    expect generate_run 0 "generated: 8 tokens (--n-predict reached), decode" -- \
        "$G" --model "$gm" --prompt "Hello, world" --n-predict 8
    expect generate_prefill_stats 0 "generate: prompt: 9 tokens, prefill " -- \
        "$G" --model "$gm" --prompt "Hello, world" --n-predict 2
    expect generate_prompt_echo 0 "Hello, world" -- "$G" --model "$gm" --prompt "Hello, world" --n-predict 2
    expect generate_verify 0 "check: 8 steps against the C reference, worst logits nmse" -- \
        "$G" --model "$gm" --prompt "Hello, world" --n-predict 8 --verify
    # sampled tokens fed back, and the prompt past --batch in chunks (the chunk plan)
    expect generate_verify_sampled 0 "check: 6 steps against the C reference, worst logits nmse" -- \
        "$G" --model "$gm" --prompt "Hello, world" --n-predict 6 --temp 0.9 --top-k 40 --top-p 0.95 \
        --batch 3 --verify
    # a prompt in chunks of 2 or 4 tokens gives the tokens of the whole prompt at once
    ids() { "$G" --model "$gm" --prompt "Hello, world" --n-predict 8 --quiet --print-ids "$@" 2>&1 | sed -n 's/^ids: //p'; }
    ids >"$tmp/gen_whole"
    ids --batch 4 >"$tmp/gen_b4"
    ids --batch 2 >"$tmp/gen_b2"
    expect generate_chunked_is_whole 0 "identical" -- \
        sh -c '[ -s "$1" ] && cmp "$1" "$2" && cmp "$1" "$3" && echo identical' sh "$tmp/gen_whole" "$tmp/gen_b4" "$tmp/gen_b2"
    expect generate_chunked_stats 0 "; in chunks of --batch)" -- \
        "$G" --model "$gm" --prompt "Hello, world" --n-predict 2 --batch 4
    # greedy: the transformer's tokens (its --text run streams the same text)
    "$T" --load "$gm" --text "Hello, world" --decode 7 --no-verify 2>/dev/null | sed -n 's/^text: //p' >"$tmp/gen_t.txt"
    "$G" --model "$gm" --prompt "Hello, world" --n-predict 8 >"$tmp/gen_g.txt" 2>/dev/null
    expect generate_greedy_is_transformers 0 "identical" -- \
        sh -c '[ -s "$1" ] && cmp "$1" "$2" && echo identical' sh "$tmp/gen_t.txt" "$tmp/gen_g.txt"
    # --quiet: stdout is the generated text alone, stderr is empty
    "$G" --model "$gm" --prompt "Hello, world" --n-predict 8 --quiet >"$tmp/gen_q.txt" 2>"$tmp/gen_q.err"
    expect generate_quiet 0 "only the text" -- sh -c '[ ! -s "$3" ] && { printf "Hello, world"; cat "$1"; } |
        cmp - "$2" && echo "only the text"' sh "$tmp/gen_q.txt" "$tmp/gen_g.txt" "$tmp/gen_q.err"
    printf 'Hello, world' >"$tmp/gen_prompt.txt"
    "$G" --model "$gm" --prompt-file "$tmp/gen_prompt.txt" --n-predict 8 >"$tmp/gen_f.txt" 2>/dev/null
    expect generate_prompt_file 0 "identical" -- sh -c 'cmp "$1" "$2" && echo identical' sh "$tmp/gen_f.txt" "$tmp/gen_g.txt"
    # sampling: a seed repeats its ids; another seed gives others (temperature 5: near uniform)
    ids --temp 0.8 --seed 7 >"$tmp/gen_s1"
    ids --temp 0.8 --seed 7 >"$tmp/gen_s2"
    expect generate_seed_repeats 0 "identical" -- \
        sh -c '[ -s "$1" ] && cmp "$1" "$2" && echo identical' sh "$tmp/gen_s1" "$tmp/gen_s2"
    ids --temp 5 --seed 1 >"$tmp/gen_s3"
    ids --temp 5 --seed 2 >"$tmp/gen_s4"
    expect generate_seed_matters 0 "different" -- \
        sh -c '[ -s "$1" ] && ! cmp -s "$1" "$2" && echo different' sh "$tmp/gen_s3" "$tmp/gen_s4"
    # the CPU sampler's top-k 1 and top-p 0 keep one token: the GPU's argmax
    ids >"$tmp/gen_greedy"
    ids --temp 1 --top-k 1 --seed 3 >"$tmp/gen_k1"
    ids --temp 1 --top-p 0 --seed 3 >"$tmp/gen_p0"
    expect generate_top_k_1_is_greedy 0 "identical" -- \
        sh -c '[ -s "$1" ] && cmp "$1" "$2" && echo identical' sh "$tmp/gen_greedy" "$tmp/gen_k1"
    expect generate_top_p_0_is_greedy 0 "identical" -- \
        sh -c '[ -s "$1" ] && cmp "$1" "$2" && echo identical' sh "$tmp/gen_greedy" "$tmp/gen_p0"
    expect generate_n_predict_0 0 "generated: 0 tokens" -- "$G" --model "$gm" --prompt "Hello, world" --n-predict 0
    expect generate_too_long 2 "the prompt's 9 tokens + --n-predict 5 do not fit max-seq 12 (--max-seq)" --once -- \
        "$G" --model "$gm" --prompt "Hello, world" --max-seq 12 --n-predict 5
    expect generate_no_room 2 "the prompt's 9 tokens leave no room to generate in max-seq 4 (--max-seq)" --once -- \
        "$G" --model "$gm" --prompt "Hello, world" --max-seq 4
    # refusals named: another architecture (the value's bytes patched in place)
    cp "$gm" "$tmp/gen_arch.gguf"
    perl -0777 -pi -e 's/(general\.architecture.{12})llama/${1}llamb/s' "$tmp/gen_arch.gguf"
    expect generate_arch 1 'general.architecture is "llamb"; this loader reads "llama" and "qwen2"' --once -- \
        "$G" --model "$tmp/gen_arch.gguf" --prompt hi
    cp "$gm" "$tmp/gen_notok.gguf"
    perl -0777 -pi -e 's/tokenizer\.ggml\.model/tokenizer.ggml.modex/s' "$tmp/gen_notok.gguf"
    expect generate_no_tokenizer 1 "has no tokenizer (no tokenizer.ggml.model key)" --once -- \
        "$G" --model "$tmp/gen_notok.gguf" --prompt hi
    # a matrix's GGML type 8 (q8_0) made 10 (q2_K, smaller: its data still fits)
    cp "$gm" "$tmp/gen_type.gguf"
    perl -0777 -pi -e 's/(blk\.0\.attn_q\.weight\x02\x00\x00\x00.{16})\x08\x00\x00\x00/${1}\x0a\x00\x00\x00/s' \
        "$tmp/gen_type.gguf"
    expect generate_tensor_type 1 "tensor blk.0.attn_q.weight: GGML type 10 (q2_K, not a type glcompute computes with)" --once -- \
        "$G" --model "$tmp/gen_type.gguf" --prompt hi
    # end of generation: the EOS id made the fifth greedy token's; generation stops at its first
    eos=$(cut -d' ' -f5 "$tmp/gen_greedy")
    n=$(tr ' ' '\n' <"$tmp/gen_greedy" | grep -nx -- "${eos:-none}" | head -n 1 | cut -d: -f1)
    cp "$gm" "$tmp/gen_eos.gguf"
    perl -0777 -pi -e 'BEGIN { $v = pack("V", shift) } s/(tokenizer\.ggml\.eos_token_id\x04\x00\x00\x00)\x02\x00\x00\x00/$1$v/s' \
        "${eos:-0}" "$tmp/gen_eos.gguf"
    expect generate_eog 0 "generated: ${n:-?} tokens (stopped at an end-of-generation token)" -- \
        "$G" --model "$tmp/gen_eos.gguf" --prompt "Hello, world" --n-predict 8
    expect generate_eog_ids 0 "ids: $(cut -d' ' -f1-"${n:-1}" "$tmp/gen_greedy")" -- \
        "$G" --model "$tmp/gen_eos.gguf" --prompt "Hello, world" --n-predict 8 --quiet --print-ids
    expect generate_no_device 1 'no device: GLC_PLATFORM="bogus": expected' --once -- \
        env GLC_PLATFORM=bogus "$G" --model "$gm" --prompt hi --n-predict 1
fi

# ---- tools: usage ----
expect info_help 0 "--json" -- "$INFO" --help
expect info_unknown_option 2 "unknown option --bogus" -- "$INFO" --bogus
expect plan_dump_help 0 "--rows T" -- "$DUMP" --help
expect plan_dump_unknown_option 2 "unknown option --bogus" -- "$DUMP" --bogus
expect plan_dump_rows_zero 2 '--rows "0": not an integer in 1..16' -- "$DUMP" --rows 0
expect plan_dump_rows_junk 2 '--rows "3x": not an integer' -- "$DUMP" --rows 3x
expect plan_dump_rows_missing 2 "--rows needs a value" -- "$DUMP" --rows

echo "[  PASSED  ] $passed test(s)."
if [ "$failed" -ne 0 ]; then
    echo "[  FAILED  ] $failed test(s), listed below:"
    for f in $failures; do echo "[  FAILED  ] $f"; done
    exit 1
fi
exit 0
