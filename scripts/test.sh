#!/usr/bin/env bash
# Runs every test of the workspace. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

# NVRTC from its PyPI wheel (cached), so the CUDA kernel-compilation tests run without a
# CUDA toolkit or GPU. Never fails the run: without pip or network those tests say skipped.
if nvrtc_lib=$(./scripts/nvrtc.sh 2>/dev/null) && [ -n "$nvrtc_lib" ]; then
    export LD_LIBRARY_PATH="$nvrtc_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "test.sh: NVRTC from $nvrtc_lib"
else
    echo "test.sh: NVRTC not available; kernel compilation tests will be skipped"
fi

cargo test --workspace
