#!/usr/bin/env bash
# Installs NVRTC (the CUDA run-time compiler) from its PyPI wheel into a cache directory, so
# that the kernel-compilation tests can run on a machine with no CUDA toolkit and no GPU.
#
# Usage: scripts/nvrtc.sh            install if needed, then print the library directory
#        eval "$(scripts/nvrtc.sh --export)"   also set LD_LIBRARY_PATH in this shell
#
# The cache directory is ${NESL_NVRTC_DIR:-$HOME/.cache/nesl-nvrtc}. The version is pinned to
# 13.0.88: a newer NVRTC emits code that the CUDA 13.0 driver (580) cannot load. Exits 0 with
# nothing on stdout (and a note on stderr) when pip or the network is unavailable.
set -uo pipefail

VERSION=13.0.88
DIR="${NESL_NVRTC_DIR:-${HOME:-/tmp}/.cache/nesl-nvrtc}"
LIBDIR="$DIR/nvidia/cu13/lib"

have_lib() { ls "$LIBDIR"/libnvrtc.so* >/dev/null 2>&1; }

if ! have_lib; then
    PY=""
    for p in python3 python; do
        if command -v "$p" >/dev/null 2>&1 && "$p" -m pip --version >/dev/null 2>&1; then
            PY="$p"; break
        fi
    done
    if [ -z "$PY" ]; then
        echo "nvrtc.sh: no pip available; NVRTC not installed (kernel compile tests will skip)" >&2
        exit 0
    fi
    mkdir -p "$DIR"
    echo "nvrtc.sh: installing nvidia-cuda-nvrtc==$VERSION into $DIR" >&2
    if ! timeout 600 "$PY" -m pip install --quiet --disable-pip-version-check --no-deps \
            --target "$DIR" "nvidia-cuda-nvrtc==$VERSION" >&2; then
        echo "nvrtc.sh: pip install failed (no network?); kernel compile tests will skip" >&2
        exit 0
    fi
fi

if ! have_lib; then
    echo "nvrtc.sh: the wheel did not provide $LIBDIR/libnvrtc.so*; kernel compile tests will skip" >&2
    exit 0
fi

# cudarc opens the library by name: make sure an unversioned name and the .13 name exist.
if [ ! -e "$LIBDIR/libnvrtc.so" ]; then
    real=$(ls "$LIBDIR"/libnvrtc.so.* 2>/dev/null | head -n1)
    [ -n "$real" ] && ln -sf "$(basename "$real")" "$LIBDIR/libnvrtc.so" 2>/dev/null
fi

if [ "${1:-}" = "--export" ]; then
    echo "export LD_LIBRARY_PATH=\"$LIBDIR\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\""
else
    echo "$LIBDIR"
fi
