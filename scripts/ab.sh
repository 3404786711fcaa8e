#!/usr/bin/env bash
# Alternating runs of two `nesl` binaries on one benchmark program, for the ratios the
# notes report (a shared machine drifts; alternating A B, B A, ... and taking medians
# lets a slow spell weigh on both sides alike).
#
#   scripts/ab.sh RUNS THREADS FILE.nesl NESL_A NESL_B
#
# Each run's time is the program's own `(ok, seconds)` result (as `nesl bench` reads it).
# Prints every time, the medians and B/A. With `CPUS` set (a `taskset` list, e.g.
# `CPUS=1` for one thread on one core), every run is pinned to those cores.
set -euo pipefail
if [ $# -ne 5 ]; then
    echo "usage: $0 RUNS THREADS FILE.nesl NESL_A NESL_B" >&2
    exit 2
fi
runs=$1 threads=$2 file=$3 a=$4 b=$5
# The seconds of one run of binary $1; a run that fails, or whose `ok` is not T, stops
# the script.
one() {
    local out t
    local pin=()
    [ -z "${CPUS:-}" ] || pin=(taskset -c "$CPUS")
    out=$(NESL_THREADS=$threads "${pin[@]}" "$1" run "$file" 2>&1) || { echo "$1 failed on $file:" >&2; echo "$out" | tail -5 >&2; exit 1; }
    t=$(echo "$out" | sed -n 's/^(ok, seconds) = (T, \([0-9.eE+-]*\)).*/\1/p' | tail -1)
    [ -n "$t" ] || { echo "$1 on $file: no '(ok, seconds) = (T, ...)' line" >&2; exit 1; }
    echo "$t"
}
ta=() tb=()
for ((i = 0; i < runs; i++)); do
    if ((i % 2 == 0)); then
        ta+=("$(one "$a")"); tb+=("$(one "$b")")
    else
        tb+=("$(one "$b")"); ta+=("$(one "$a")")
    fi
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
ma=$(median "${ta[@]}") mb=$(median "${tb[@]}")
echo "A ${ta[*]}"
echo "B ${tb[*]}"
awk -v a="$ma" -v b="$mb" 'BEGIN {printf "median A %.2f ms  B %.2f ms  B/A %.3f\n", a * 1e3, b * 1e3, b / a}'
