#!/usr/bin/env bash
# The command-line programs as users drive them: build/examples/transformer,
# build/glc-info and build/glc-plan-dump with good and bad arguments. Each
# case checks the exit status (0 ok, 1 failed, 2 bad usage), a text its
# output must hold, and that an error is printed once (one line on stderr).
# Weights files: one saved by the transformer (tiny, q4_0: 2.3 MB), then
# damaged copies of it (empty, truncated, junk appended, another version, a
# header field out of range, not a weights file).
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
        gguf_save gguf_load gguf_load_rope gguf_max_seq gguf_text gguf_text_check text_needs_gguf; do
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
        "$T" --wdtype q8_0 --prompt 2 --decode 1 --verify --save-gguf "$tmp/m.gguf"
    expect gguf_load 0 "check: 4 steps against the C reference" -- \
        "$T" --load "$tmp/m.gguf" --prompt 3 --decode 3 --verify
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
