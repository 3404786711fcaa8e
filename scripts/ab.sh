#!/usr/bin/env bash
# Alternating runs of two or more `nesl` binaries on one benchmark program, for the ratios
# the notes report (a shared machine drifts; running every binary once per round, in an
# order that rotates from round to round, and taking medians lets a slow spell weigh on
# all sides alike).
#
#   scripts/ab.sh RUNS THREADS FILE.nesl NESL_A NESL_B [NESL_C ...]
#
# Each run's time is the program's own `(ok, seconds)` result (as `nesl bench` reads it).
# Prints every time, each binary's median and its ratio to the first's. With `CPUS` set
# (a `taskset` list, e.g. `CPUS=1` for one thread on one core), every run is pinned to
# those cores.
set -euo pipefail
if [ $# -lt 5 ]; then
    echo "usage: $0 RUNS THREADS FILE.nesl NESL_A NESL_B [NESL_C ...]" >&2
    exit 2
fi
runs=$1 threads=$2 file=$3
shift 3
bins=("$@")
n=${#bins[@]}
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
declare -a times
for ((i = 0; i < runs; i++)); do
    for ((j = 0; j < n; j++)); do
        k=$(((i + j) % n))
        times[k]+="$(one "${bins[k]}") "
    done
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
first=""
for ((k = 0; k < n; k++)); do
    # shellcheck disable=SC2086
    m=$(median ${times[k]})
    first=${first:-$m}
    echo "${bins[k]}: ${times[k]}"
    awk -v m="$m" -v f="$first" -v b="${bins[k]}" 'BEGIN {printf "median %s %.2f ms  ratio to the first %.3f\n", b, m * 1e3, m / f}'
done
