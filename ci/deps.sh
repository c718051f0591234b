#!/usr/bin/env bash
# Installs the Debian 12 packages glcompute needs to build and test, when
# they are missing: as root it runs apt-get; otherwise it prints the exact
# command and fails. `--ci` adds clang (CI builds with gcc and clang) and
# libclang-rt-14-dev (its ASan/UBSan runtimes and libFuzzer, only
# recommended by clang, so not pulled in with --no-install-recommends).
# glslang-tools: tests/test_glsl_strict checks the GPU kernels' sources with
# Khronos' GLSL front end (stricter than Mesa).
# `--bench` adds the benchmarks' references. `make check` and `make demo`
# run this first (`make bench` with --bench).
set -u
pkgs="libegl-dev libgles-dev libgbm-dev mesa-common-dev libcmocka-dev libegl-mesa0 libgl1-mesa-dri pkg-config glslang-tools"
[ "${1:-}" = "--ci" ] && pkgs="$pkgs clang libclang-rt-14-dev"
# `--bench` adds OpenBLAS: the SGEMM reference glc-bench-ops measures on llvmpipe's cores.
[ "${1:-}" = "--bench" ] && pkgs="$pkgs libopenblas0-pthread"

if ! command -v dpkg-query >/dev/null 2>&1; then
    # Not Debian: trust pkg-config, say what is missing.
    for m in egl glesv2 cmocka; do
        pkg-config --exists "$m" 2>/dev/null || { echo "ci/deps.sh: pkg-config cannot find $m; install its development package" >&2; exit 1; }
    done
    exit 0
fi

missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "ci/deps.sh: missing Debian packages:$missing" >&2
    echo "run as root: apt-get update && apt-get install -y$missing" >&2
    exit 1
fi
echo "ci/deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null || {
    echo "ci/deps.sh: apt-get install failed for:$missing" >&2
    exit 1
}
