#!/usr/bin/env bash
# Prepares gpu-carry/, everything a GPU machine without Rust needs to run
# scripts/gpu-verify.sh (the device tool carries it: carry ["gpu-carry"]):
#
#   gpu-carry/nesl            the release `nesl` binary, stripped
#   gpu-carry/tests/          the cvl-cuda test binaries that need no source tree
#                             (gpu_vs_cpu, init, nvrtc_kernels), release, stripped
#   gpu-carry/conformance/    a copy of the shared conformance corpus (not part of the project)
#   gpu-carry/kernel-cache/   CUBINs for sm_90 (H100, H200) of every kernel module and of every
#                             superoperator the regression and conformance corpora generate at
#                             --opt 2, built here with NVRTC 13.0 (the wheel of scripts/nvrtc.sh),
#                             so the GPU run compiles almost nothing
#
# Usage (repository root): scripts/gpu-carry.sh [CONFORMANCE_DIR]
# Then, on the GPU machine, in the repository root:
#   OUT=... scripts/gpu-verify.sh          (it finds gpu-carry/ by itself)
# gpu-carry/ is ignored by git. Its size is printed at the end (the device tool carries at
# most 64 MiB with the working tree).
set -euo pipefail
cd "$(dirname "$0")/.."

CORPUS="${1:-}"
if [ -z "$CORPUS" ]; then
    for c in shared/conformance ../shared/conformance /work/shared/conformance; do
        [ -d "$c" ] && CORPUS="$c" && break
    done
fi
DEST=gpu-carry

echo "gpu-carry: building the release binary and the cvl-cuda test binaries" >&2
cargo build --release --bin nesl
errs=$(mktemp)
if ! tests_json=$(cargo test --release -p cvl-cuda --no-run --message-format=json 2>"$errs"); then
    tail -n 30 "$errs" >&2
    echo "gpu-carry: building the cvl-cuda tests failed" >&2
    exit 1
fi
rm -f "$errs"

rm -rf "$DEST"
mkdir -p "$DEST/tests"
strip -o "$DEST/nesl" target/release/nesl 2>/dev/null || cp target/release/nesl "$DEST/nesl"
for t in gpu_vs_cpu init nvrtc_kernels; do
    exe=$(printf '%s\n' "$tests_json" | grep '"executable":"[^"]*"' -o | sed 's/"executable":"//; s/"$//' \
        | grep "/deps/$t-" | tail -n1)
    if [ -z "$exe" ] || [ ! -x "$exe" ]; then
        echo "gpu-carry: no test binary for $t" >&2
        exit 1
    fi
    strip -o "$DEST/tests/$t" "$exe" 2>/dev/null || cp "$exe" "$DEST/tests/$t"
done

if [ -n "$CORPUS" ] && [ -d "$CORPUS/nesl" ]; then
    mkdir -p "$DEST/conformance"
    cp -r "$CORPUS/nesl" "$DEST/conformance/"
    [ -f "$CORPUS/README.md" ] && cp "$CORPUS/README.md" "$DEST/conformance/"
else
    echo "gpu-carry: no conformance corpus found (give its directory as the argument)" >&2
fi

# The kernel cache, filled by the test that compiles every kernel and corpus superoperator.
if nv=$(./scripts/nvrtc.sh 2>/dev/null) && [ -n "$nv" ]; then
    cache="$(pwd)/$DEST/kernel-cache"
    mkdir -p "$cache"
    conf_env=()
    [ -d "$DEST/conformance/nesl" ] && conf_env=(NESL_CONFORMANCE="$(pwd)/$DEST/conformance/nesl" NESL_CORPUS_CONFORMANCE=1)
    env LD_LIBRARY_PATH="$nv${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" NESL_CUDA_CACHE="$cache" "${conf_env[@]}" \
        cargo test --release --test cuda_superops corpus_superoperators -- --nocapture 2>&1 \
        | grep -E 'compiled for|SKIPPED|test result' >&2
    echo "gpu-carry: $(ls "$cache" | wc -l) CUBINs in $cache" >&2
else
    echo "gpu-carry: no NVRTC here (scripts/nvrtc.sh); the GPU machine will compile every kernel itself" >&2
fi

du -sh "$DEST" >&2
echo "gpu-carry: ready; on the GPU machine run: OUT=\$OUT scripts/gpu-verify.sh" >&2
