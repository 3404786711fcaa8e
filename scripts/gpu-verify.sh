#!/usr/bin/env bash
# Verification on a GPU machine (H100/H200, CUDA 13 driver): runs the regression suites and
# the conformance corpus on the CUDA backend (and on the CPU backend for comparison) at
# every optimisation level, the CUDA differential tests when cargo is available, and the
# benchmarks; writes everything plus summary.md under $OUT.
#
# Usage (from the repository root):
#   OUT=/some/dir scripts/gpu-verify.sh [NESL_BINARY] [CONFORMANCE_DIR]
# Defaults: target/release/nesl and shared/conformance (or ../shared/conformance).
# Environment: BENCH_ARGS (extra `nesl bench` arguments, default "--runs 3"),
#              SKIP_BENCH=1 to skip the benchmarks, TIMEOUT (seconds per suite, default 900).
# Exit status: 0 when every CUDA suite passed, 1 otherwise (the summary says which).
set -uo pipefail
cd "$(dirname "$0")/.."

BIN="${1:-target/release/nesl}"
CORPUS="${2:-}"
if [ -z "$CORPUS" ]; then
    for c in shared/conformance ../shared/conformance; do
        [ -d "$c" ] && CORPUS="$c" && break
    done
fi
OUT="${OUT:-gpu-verify-out}"
TIMEOUT="${TIMEOUT:-900}"
mkdir -p "$OUT"
SUMMARY="$OUT/summary.md"

# NVRTC: the toolkit's when installed, else a wheel installed by scripts/nvrtc.sh.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -e "$d/libnvrtc.so" ] || ls "$d"/libnvrtc.so.* >/dev/null 2>&1 || continue
    export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    break
done
if nv=$(./scripts/nvrtc.sh 2>/dev/null) && [ -n "$nv" ]; then
    export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$nv"
fi
export NESL_CUDA_CACHE="${NESL_CUDA_CACHE:-$OUT/kernel-cache}"

{
    echo "# GPU verification, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo '```'
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || echo "nvidia-smi not available"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "binary: $BIN"
    echo "conformance: ${CORPUS:-none}"
    echo "LD_LIBRARY_PATH: ${LD_LIBRARY_PATH:-}"
    echo '```'
    echo
    echo "| suite | backend | opt | result |"
    echo "|---|---|---|---|"
} > "$SUMMARY"

if [ ! -x "$BIN" ]; then
    echo "no executable $BIN (build it with: cargo build --release)" | tee -a "$SUMMARY"
    exit 1
fi

status=0
suites=()
for d in regression/nesl regression/vcode regression/bad-types; do
    [ -d "$d" ] && suites+=("$d")
done
[ -n "$CORPUS" ] && [ -d "$CORPUS/nesl" ] && suites+=("$CORPUS/nesl")

for suite in "${suites[@]}"; do
    tag=$(echo "$suite" | tr '/.' '__')
    for backend in cuda cpu; do
        for opt in 0 1 2; do
            log="$OUT/test-$tag-$backend-o$opt.txt"
            timeout "$TIMEOUT" "$BIN" test --backend "$backend" --opt "$opt" "$suite" >"$log" 2>&1
            rc=$?
            last=$(grep -E '[0-9]+ of [0-9]+ passed' "$log" | tail -n1)
            [ -z "$last" ] && last="exit $rc: $(tail -n1 "$log")"
            echo "| $suite | $backend | $opt | $last |" >> "$SUMMARY"
            if [ "$backend" = cuda ] && [ $rc -ne 0 ]; then status=1; fi
        done
    done
done

# Differences between the CUDA and CPU verdicts, file by file.
{
    echo
    echo "## CUDA verdicts that differ from the CPU's"
    echo '```'
    for f in "$OUT"/test-*-cuda-o*.txt; do
        [ -e "$f" ] || continue
        c="${f/-cuda-/-cpu-}"
        diff <(grep -E '^(PASS|FAIL|SKIP) ' "$c" | sort) <(grep -E '^(PASS|FAIL|SKIP) ' "$f" | sort) \
            | sed "s|^|$(basename "$f"): |" | head -n 40
    done
    echo '```'
} >> "$SUMMARY"

# The differential tests of the CUDA vector library (GPU against CPU backend): with cargo
# when this machine can build, else a prebuilt test binary (built elsewhere with
# `cargo test --release -p cvl-cuda --no-run` and carried here), e.g.
# GPU_TEST_BINS="target/release/deps/gpu_vs_cpu-*".
echo >> "$SUMMARY"
bins=()
for b in ${GPU_TEST_BINS:-target/release/deps/gpu_vs_cpu-*}; do
    [ -f "$b" ] && [ -x "$b" ] && bins+=("$b")
done
if [ ${#bins[@]} -gt 0 ]; then
    : > "$OUT/cvl-cuda-tests.txt"
    rc=0
    for b in "${bins[@]}"; do
        timeout "$TIMEOUT" "$b" --nocapture >>"$OUT/cvl-cuda-tests.txt" 2>&1 || rc=1
    done
elif command -v cargo >/dev/null 2>&1; then
    timeout "$TIMEOUT" cargo test --release -p cvl-cuda -- --nocapture >"$OUT/cvl-cuda-tests.txt" 2>&1
    rc=$?
else
    rc=skip
fi
if [ "$rc" = skip ]; then
    echo "cvl-cuda differential tests not run (no cargo and no prebuilt test binary)" >> "$SUMMARY"
else
    echo "cvl-cuda tests (exit $rc): $(grep -E '^test result' "$OUT/cvl-cuda-tests.txt" | tr '\n' ' ')" >> "$SUMMARY"
    grep -E 'SKIPPED|emulation|panicked|FAILED' "$OUT/cvl-cuda-tests.txt" | head -n 20 | sed 's/^/    /' >> "$SUMMARY"
    [ "$rc" != 0 ] && status=1
fi

if [ "${SKIP_BENCH:-0}" != 1 ]; then
    # shellcheck disable=SC2086
    timeout "$TIMEOUT" "$BIN" bench --backend cpu,cuda ${BENCH_ARGS:---runs 3} --out "$OUT/bench" \
        >"$OUT/bench.txt" 2>&1
    rc=$?
    {
        echo
        echo "## Benchmarks (exit $rc)"
        echo
        if [ -f "$OUT/bench/table.md" ]; then cat "$OUT/bench/table.md"; else tail -n 40 "$OUT/bench.txt"; fi
    } >> "$SUMMARY"
fi

echo >> "$SUMMARY"
echo "overall: $([ $status -eq 0 ] && echo PASS || echo FAIL)" >> "$SUMMARY"
cat "$SUMMARY"
exit $status
