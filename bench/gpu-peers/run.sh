#!/usr/bin/env bash
# Builds and runs the CUDA peers of the GPU NESL benchmarks (see README.md).
#
#   bench/gpu-peers/run.sh [OUTDIR] [-- PEERS_ARGS...]
#
# Compiles peers.cu with nvcc (from $NVCC, PATH or /usr/local/cuda/bin; extra flags in
# $NVCC_FLAGS), runs it, prints its JSON lines and, given OUTDIR, writes them to
# OUTDIR/gpu-peers.jsonl. Exits nonzero if the build fails, the run fails, or any
# benchmark reports "ok":false. PEERS_ARGS go to the program, e.g. -- --runs 3 --only dotp.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
outdir=""
if [[ $# -gt 0 && $1 != -* ]]; then
  outdir=$1
  shift
fi
if [[ ${1:-} == "--" ]]; then shift; fi

nvcc=${NVCC:-}
if [[ -z $nvcc ]]; then
  if command -v nvcc >/dev/null 2>&1; then
    nvcc=$(command -v nvcc)
  elif [[ -x /usr/local/cuda/bin/nvcc ]]; then
    nvcc=/usr/local/cuda/bin/nvcc
  else
    echo "run.sh: nvcc not found on PATH or in /usr/local/cuda/bin (set NVCC)" >&2
    exit 2
  fi
fi
read -r -a extra_flags <<<"${NVCC_FLAGS:-}"

build=$(mktemp -d "${TMPDIR:-/tmp}/gpu-peers.XXXXXX")
trap 'rm -rf "$build"' EXIT

echo "run.sh: compiling with $nvcc" >&2
if ! "$nvcc" -O3 -std=c++17 -arch=sm_90 --extended-lambda "${extra_flags[@]}" \
    -o "$build/peers" "$here/peers.cu"; then
  echo "run.sh: compiling peers.cu failed" >&2
  exit 3
fi

results="$build/gpu-peers.jsonl"
set +e
"$build/peers" "$@" | tee "$results"
rc=${PIPESTATUS[0]}
set -e

if [[ -n $outdir ]]; then
  mkdir -p "$outdir"
  cp "$results" "$outdir/gpu-peers.jsonl"
fi
if [[ $rc -ne 0 ]]; then
  echo "run.sh: peers exited with status $rc" >&2
  exit 1
fi
if [[ ! -s $results ]] || grep -q '"ok":false' "$results"; then
  echo "run.sh: a benchmark failed its check (or none ran)" >&2
  exit 1
fi
