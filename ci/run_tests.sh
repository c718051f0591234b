#!/usr/bin/env bash
# Runs each cmocka test binary given (VAR=value:binary runs it with VAR
# set; A=1:B=2:binary with both), TEST_JOBS at a time, prints their
# outputs in order, and closes with one line "tests: N passed, N failed,
# N skipped" summed over all binaries.
# Exit status 1 when any test failed or any binary crashed.
set -u
passed=0 failed=0 skipped=0 crashed=0
# Mesa llvmpipe runs each dispatch on the calling thread with LP_NUM_THREADS
# 0 instead of handing it to its thread pool (~44 us a dispatch): the tests'
# dispatches are small and TEST_JOBS binaries already share the cores.
# 2 cores, warm shader cache: make check 32 -> 20 s, with ASan+UBSan 65 -> 42
# s (cold: 86 -> 84 s, compile-bound). A value the caller set is kept.
: "${LP_NUM_THREADS=0}"
export LP_NUM_THREADS
# Sanitizer builds (SANITIZE set by the Makefile): Mesa (22.3) leaks a small
# allocation of its DRI driver at eglTerminate and then unloads the driver,
# so LeakSanitizer reports it from an "unknown module" that no suppression
# can name. Preloading the driver keeps it mapped: its memory stays
# reachable and our own leaks are still reported.
# (gcc links ASan's shared runtime, which must come first in the list.)
drv=""
if [ -n "${SANITIZE:-}" ] && [ -z "${LD_PRELOAD:-}" ]; then
    for d in /usr/lib/*/dri/swrast_dri.so; do
        [ -f "$d" ] && drv=$d && break
    done
fi
preload() { # binary -> the LD_PRELOAD list for it
    local asan
    [ -n "$drv" ] || return 0
    asan=$(ldd "$1" 2>/dev/null | sed -n 's/.*libasan[^ ]* => \([^ ]*\).*/\1/p' | head -n1)
    echo "${asan:+$asan:}$drv"
}
# Runs one entry ($1: [VAR=value:]...binary) into $2 (its output) and $3 (its
# exit status).
run_one() {
    local bin=$1 pl vars=()
    while case "$bin" in *=*:*) true ;; *) false ;; esac; do # VAR=value: prefixes
        vars+=("${bin%%:*}")
        bin=${bin#*:}
    done
    pl=$(preload "$bin")
    env ${pl:+LD_PRELOAD=$pl} ${vars[@]+"${vars[@]}"} "$bin" >"$2" 2>&1
    echo $? >"$3"
}

# TEST_JOBS binaries at once (default 1); outputs are printed in the order
# given, each once it and those before it are done.
jobs_max=${TEST_JOBS:-1}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
i=0
for t in "$@"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
        wait -n 2>/dev/null || true
    done
    run_one "$t" "$dir/$i.out" "$dir/$i.rc" &
    i=$((i + 1))
done
i=0
for t in "$@"; do
    while [ ! -s "$dir/$i.rc" ]; do
        wait -n 2>/dev/null || sleep 0.1
    done
    echo "== $t"
    out=$(cat "$dir/$i.out")
    rc=$(cat "$dir/$i.rc")
    i=$((i + 1))
    printf '%s\n' "$out"
    p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -n1)
    f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -n1)
    s=$(printf '%s\n' "$out" | sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' | tail -n1)
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
    skipped=$((skipped + ${s:-0}))
    if [ "$rc" -ne 0 ] && [ -z "$f" ]; then
        echo "!! $t exited with status $rc without a cmocka summary"
        crashed=$((crashed + 1))
    fi
done
wait
failed=$((failed + crashed))
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
