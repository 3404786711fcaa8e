#!/usr/bin/env bash
# Verification on a GPU machine (H100/H200, CUDA 13 driver), in one command of under ten
# minutes: the regression suites and the conformance corpus with `nesl test` on the CUDA
# backend at every optimisation level (and on the CPU backend, for comparison), the cvl-cuda
# test binaries (GPU against CPU, kernel compilation), a `nesl run --stats` sample, and the
# benchmarks with whatever time is left. Writes $OUT/summary.md and $OUT/logs.tar.gz (every
# log, the bench table/JSON/plots); prints the summary at the end.
#
# The GPU machine needs no Rust: prepare gpu-carry/ here with scripts/gpu-carry.sh (release
# binary, test binaries, a conformance copy, precompiled sm_90 kernels), carry it, and run
#   OUT=/some/dir scripts/gpu-verify.sh
# in the repository root. Without gpu-carry/ it uses target/release/nesl, cargo for the tests
# when present, and shared/conformance (or ../shared/conformance).
#
# Usage: OUT=DIR scripts/gpu-verify.sh [NESL_BINARY] [CONFORMANCE_DIR]
# Environment: BUDGET (seconds for the whole script, default 540), BENCH_ARGS (extra
#   `nesl bench` arguments, default "--runs 5 --opt 0,2 --threads-list 16 --timeout 60"),
#   BENCH_PROGRAMS (default the six data-parallel ones), BENCH_BACKENDS (default cuda: the
#   Rust peers still run beside it; `cpu,cuda` adds our CPU backend), SKIP_BENCH=1,
#   SKIP_PEERS=1 (no hand-written CUDA peers), SKIP_STATS=1, SKIP_SANITIZER=1,
#   SKIP_CPU=1 (no CPU comparison runs), SUITES="DIR..." (instead of the regression and
#   conformance suites), NESL_CUDA_EMULATE=1 (check the script without a
#   GPU: the CPU emulation of the kernels stands in for the GPU; slow, so use a large BUDGET).
# Exit status: 0 when every CUDA suite passed and the cvl-cuda tests passed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
START=$(date +%s)
BUDGET="${BUDGET:-540}"
CARRY=gpu-carry

BIN="${1:-}"
if [ -z "$BIN" ]; then
    if [ -x "$CARRY/nesl" ]; then BIN="$CARRY/nesl"; else BIN=target/release/nesl; fi
fi
CORPUS="${2:-}"
if [ -z "$CORPUS" ]; then
    for c in "$CARRY/conformance" shared/conformance ../shared/conformance; do
        [ -d "$c/nesl" ] && CORPUS="$c" && break
    done
fi
OUT="${OUT:-gpu-verify-out}"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/gpu-verify.XXXXXX")
SUMMARY="$OUT/summary.md"

left() { echo $((BUDGET - ($(date +%s) - START))); }
# Runs "$@" with at most the time left (minus a reserve for packing up), `timeout`'s 124
# when the budget is spent before it starts.
budgeted() {
    local t=$(($(left) - 20))
    [ "$t" -lt 5 ] && return 124
    timeout "$t" "$@"
}

# NVRTC: the toolkit's when installed, else a Python wheel's (PyTorch's image has one), else
# the wheel cache of scripts/nvrtc.sh (never installed from here: the GPU machine may have
# no network). Precompiled kernels in gpu-carry/kernel-cache are found by key (source,
# sm_90, NVRTC 13.0), so NVRTC mostly only reports its version.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
         /opt/*/.venv/lib/python3*/site-packages/nvidia/cu13/lib \
         /usr/local/lib/python3*/dist-packages/nvidia/cu13/lib \
         "${NESL_NVRTC_DIR:-${HOME:-/tmp}/.cache/nesl-nvrtc}/nvidia/cu13/lib"; do
    ls "$d"/libnvrtc.so.13* >/dev/null 2>&1 || continue
    export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    break
done
if [ -z "${NESL_CUDA_CACHE:-}" ]; then
    # (The emulation caches its compiled C++ there too: keep it out of the carried cache.)
    if [ -d "$CARRY/kernel-cache" ] && [ "${NESL_CUDA_EMULATE:-}" != 1 ]; then
        export NESL_CUDA_CACHE="$(pwd)/$CARRY/kernel-cache"
    else
        export NESL_CUDA_CACHE="$LOGS/kernel-cache"
    fi
fi
cubins_before=$(ls "$NESL_CUDA_CACHE" 2>/dev/null | grep -c '\.cubin$')

{
    echo "# GPU verification, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo '```'
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || echo "nvidia-smi not available"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "binary: $BIN"
    echo "conformance: ${CORPUS:-none}"
    echo "LD_LIBRARY_PATH: ${LD_LIBRARY_PATH:-}"
    echo "kernel cache: $NESL_CUDA_CACHE ($cubins_before CUBINs)"
    [ "${NESL_CUDA_EMULATE:-}" = 1 ] && echo "NESL_CUDA_EMULATE=1: the CPU emulation of the kernels, not a GPU"
    echo '```'
    echo
} > "$SUMMARY"

finish() {
    local status=$1
    {
        echo
        echo "kernel cache after: $(ls "$NESL_CUDA_CACHE" 2>/dev/null | grep -c '\.cubin$') CUBINs; time used: $(($(date +%s) - START)) s of $BUDGET"
        echo
        echo "overall: $([ "$status" -eq 0 ] && echo PASS || echo FAIL)"
    } >> "$SUMMARY"
    tar -C "$LOGS" --exclude=kernel-cache -czf "$OUT/logs.tar.gz" . 2>/dev/null
    cat "$SUMMARY"
    exit "$status"
}

if [ ! -x "$BIN" ]; then
    echo "no executable $BIN (build it with: cargo build --release, or scripts/gpu-carry.sh)" | tee -a "$SUMMARY"
    finish 1
fi

status=0

# 1. Can the CUDA backend start at all? (one line when it cannot)
probe="$LOGS/probe.nesl"
printf 'sum([1, 2, 3]);\n{x * 2.5 : x in [1.0, 2.0]};\nmax_val([] int);\n' > "$probe"
budgeted "$BIN" run --backend cuda --stats "$probe" >"$LOGS/probe.txt" 2>&1
rc=$?
{
    echo "## CUDA backend start (exit $rc)"
    echo '```'
    head -n 30 "$LOGS/probe.txt"
    echo '```'
    echo
} >> "$SUMMARY"
if [ $rc -ne 0 ]; then
    echo "the CUDA backend does not start: nothing else to check" >> "$SUMMARY"
    finish 1
fi

# 2. The suites, CUDA first (what this script is for), then the CPU for comparison.
suites=()
for d in regression/nesl regression/bad-types; do
    [ -d "$d" ] && suites+=("$d")
done
[ -n "$CORPUS" ] && suites+=("$CORPUS/nesl")
# shellcheck disable=SC2206
[ -n "${SUITES:-}" ] && suites=($SUITES)
echo "| suite | backend | opt | result | seconds |" >> "$SUMMARY"
echo "|---|---|---|---|---:|" >> "$SUMMARY"
run_suites() {
    local backend=$1 suite tag opt log t0 rc last
    for suite in "${suites[@]}"; do
        tag=$(echo "$suite" | sed 's|^.*conformance/nesl$|conformance|; s|/|_|g')
        for opt in 0 1 2; do
            log="$LOGS/test-$tag-$backend-o$opt.txt"
            t0=$(date +%s)
            budgeted "$BIN" test --backend "$backend" --opt "$opt" "$suite" >"$log" 2>&1
            rc=$?
            last=$(grep -E '[0-9]+ of [0-9]+ passed' "$log" | tail -n1)
            [ $rc -eq 124 ] && last="TIMED OUT (budget) after $(grep -c '^PASS' "$log") passes"
            [ -z "$last" ] && last="exit $rc: $(tail -n1 "$log")"
            echo "| $suite | $backend | $opt | $last | $(($(date +%s) - t0)) |" >> "$SUMMARY"
            if [ "$backend" = cuda ] && [ $rc -ne 0 ]; then status=1; fi
        done
    done
}
run_suites cuda

# The VCODE/FCODE fixtures (regression/vcode: WRITE output then the final stack, exactly).
if [ -d regression/vcode ]; then
    for opt in 0 2; do
        log="$LOGS/vcode-fixtures-cuda-o$opt.txt"
        : > "$log"
        pass=0; total=0
        for f in regression/vcode/*.vcode regression/vcode/*.fcode; do
            [ -e "$f" ] && [ -e "${f%.*}.expected" ] || continue
            total=$((total + 1))
            # Standard output against the transcript (warnings go to standard error).
            got=$(budgeted "$BIN" vcode --backend cuda --opt "$opt" "$f" 2>>"$log.stderr")
            if [ "$got" == "$(cat "${f%.*}.expected")" ]; then
                pass=$((pass + 1)); echo "PASS $f" >> "$log"
            else
                { echo "FAIL $f"; echo "$got" | head -n 5 | sed 's/^/     /'; } >> "$log"
            fi
        done
        echo "| regression/vcode (nesl vcode) | cuda | $opt | $pass of $total passed | |" >> "$SUMMARY"
        [ "$pass" -ne "$total" ] && status=1
    done
fi

[ "${SKIP_CPU:-0}" != 1 ] && run_suites cpu

# CUDA verdicts that differ from the CPU's (a case both fail is the front end's business).
{
    echo
    echo "## CUDA verdicts that differ from the CPU's"
    echo '```'
    for f in "$LOGS"/test-*-cuda-o*.txt; do
        [ -e "$f" ] || continue
        c="${f/-cuda-/-cpu-}"
        [ -e "$c" ] || continue
        diff <(grep -E '^(PASS|FAIL|SKIP) ' "$c" | sort) <(grep -E '^(PASS|FAIL|SKIP) ' "$f" | sort) \
            | grep '^[<>]' | sed "s|^|$(basename "$f" .txt): |" | head -n 40
    done
    echo '```'
    echo
    echo "First CUDA failures:"
    echo '```'
    grep -h -A3 '^FAIL' "$LOGS"/test-*-cuda-o*.txt 2>/dev/null | head -n 40
    echo '```'
} >> "$SUMMARY"

# 3. The cvl-cuda tests: carried binaries (gpu-carry/tests), prebuilt ones in target/, or cargo.
bins=()
for b in ${GPU_TEST_BINS:-$CARRY/tests/*}; do
    [ -f "$b" ] && [ -x "$b" ] && bins+=("$b")
done
if [ ${#bins[@]} -eq 0 ] && [ -z "${GPU_TEST_BINS:-}" ]; then
    for b in target/release/deps/gpu_vs_cpu-*; do
        [ -f "$b" ] && [ -x "$b" ] && bins+=("$b")
    done
fi
: > "$LOGS/cvl-cuda-tests.txt"
rc=skip
if [ ${#bins[@]} -gt 0 ]; then
    rc=0
    for b in "${bins[@]}"; do
        echo "### $b" >> "$LOGS/cvl-cuda-tests.txt"
        budgeted "$b" --nocapture >>"$LOGS/cvl-cuda-tests.txt" 2>&1 || rc=1
    done
elif command -v cargo >/dev/null 2>&1; then
    budgeted cargo test --release -p cvl-cuda -- --nocapture >"$LOGS/cvl-cuda-tests.txt" 2>&1
    rc=$?
fi
{
    echo
    if [ "$rc" = skip ]; then
        echo "cvl-cuda tests not run (no carried or prebuilt test binary, no cargo)"
    else
        echo "cvl-cuda tests (exit $rc): $(grep -E '^test result' "$LOGS/cvl-cuda-tests.txt" | sed 's/; finished.*//' | tr '\n' ' ')"
        grep -E 'SKIPPED|emulation|panicked|FAILED|compiled .* for' "$LOGS/cvl-cuda-tests.txt" | head -n 20 | sed 's/^/    /'
    fi
} >> "$SUMMARY"
[ "$rc" != skip ] && [ "$rc" != 0 ] && status=1

# 4. The hand-written CUDA peers (bench/gpu-peers: CUB reduction and radix sort, a
# Black-Scholes kernel, a segmented quickhull, a quadtree Barnes-Hut), when nvcc is here.
if [ "${SKIP_PEERS:-0}" != 1 ] && [ -x bench/gpu-peers/run.sh ]; then
    budgeted bench/gpu-peers/run.sh "$LOGS" -- --runs 5 >"$LOGS/gpu-peers.txt" 2>&1
    rc=$?
    {
        echo
        echo "## Hand-written CUDA peers (exit $rc)"
        echo '```'
        grep '^{' "$LOGS/gpu-peers.txt" || tail -n 20 "$LOGS/gpu-peers.txt"
        echo '```'
    } >> "$SUMMARY"
fi

# 5. Device counters of each benchmark at the paper's size (host round trips, launches).
BENCH_PROGRAMS="${BENCH_PROGRAMS:-dotp,quicksort,blackscholes,quickhull,barneshut,smvm}"
if [ "${SKIP_STATS:-0}" != 1 ] && [ -d bench/programs ]; then
    {
        echo
        echo "## Device counters per benchmark (--backend cuda --opt 2, the paper's sizes; the whole program)"
        echo
        echo "| program | n | (ok, seconds) | kernel launches | host round trips | bytes to host | allocations |"
        echo "|---|---:|---|---:|---:|---:|---:|"
    } >> "$SUMMARY"
    for p in ${BENCH_PROGRAMS//,/ }; do
        case $p in
            dotp|blackscholes) n=10000000 ;; quicksort) n=1000000 ;; quickhull) n=5000000 ;;
            barneshut) n=75000 ;; smvm) n=1000000 ;; *) continue ;;
        esac
        sed "s/^n = [0-9]*;/n = $n;/" "bench/programs/$p.nesl" > "$LOGS/$p.nesl"
        budgeted "$BIN" run --backend cuda --opt 2 --stats "$LOGS/$p.nesl" >"$LOGS/stats-$p.txt" 2>&1
        field() { awk -v k="$1" 'index($0, k) == 1 { print $NF }' "$LOGS/stats-$p.txt" | tail -n1; }
        res=$(grep -o '^(ok, seconds) = ([^)]*)' "$LOGS/stats-$p.txt" | sed 's/^(ok, seconds) = //')
        echo "| $p | $n | ${res:-failed} | $(field 'kernel launches') | $(field 'host round trips') | $(field 'bytes to host') | $(field 'allocations') |" >> "$SUMMARY"
    done
fi

# 6. compute-sanitizer (memcheck) over a few programs at small sizes.
if [ "${SKIP_SANITIZER:-0}" != 1 ] && command -v compute-sanitizer >/dev/null 2>&1; then
    echo >> "$SUMMARY"
    echo "## compute-sanitizer --tool memcheck (--backend cuda --opt 2)" >> "$SUMMARY"
    echo '```' >> "$SUMMARY"
    for p in dotp quicksort blackscholes quickhull barneshut; do
        [ -f "bench/programs/$p.nesl" ] || continue
        sed "s/^n = [0-9]*;/n = 3000;/" "bench/programs/$p.nesl" > "$LOGS/san-$p.nesl"
        budgeted compute-sanitizer --tool memcheck --error-exitcode 9 \
            "$BIN" run --backend cuda --opt 2 "$LOGS/san-$p.nesl" >"$LOGS/sanitizer-$p.txt" 2>&1
        rc=$?
        echo "$p (n=3000): exit $rc, $(grep -E 'ERROR SUMMARY' "$LOGS/sanitizer-$p.txt" | tail -n1)" >> "$SUMMARY"
        [ $rc -eq 9 ] && status=1
    done
    echo '```' >> "$SUMMARY"
fi

# 7. The benchmarks, with the time that is left.
if [ "${SKIP_BENCH:-0}" != 1 ]; then
    # shellcheck disable=SC2086
    budgeted "$BIN" bench --backend "${BENCH_BACKENDS:-cuda}" --programs "$BENCH_PROGRAMS" \
        ${BENCH_ARGS:---runs 5 --opt 0,2 --threads-list 16 --timeout 60} --out "$LOGS/bench" \
        >"$LOGS/bench.txt" 2>&1
    rc=$?
    {
        echo
        echo "## Benchmarks (exit $rc$([ $rc -eq 124 ] && echo ': budget spent, partial log below'))"
        echo
        if [ -f "$LOGS/bench/table.md" ]; then cat "$LOGS/bench/table.md"; else tail -n 60 "$LOGS/bench.txt"; fi
    } >> "$SUMMARY"
fi

finish $status
