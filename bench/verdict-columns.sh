#!/usr/bin/env bash
# bench/verdict-columns.sh: compare and the runs listing over 2,000 results
# of 3 runs each (every run with a verdict, every result --repeat auto's),
# on SQLite, reading the verdicts from their payloads (BEFORE, a commit
# before the store kept them: its GroupRuns then withVerdicts) and from
# the store's columns (this tree).
#
#   flock /work/wt/heavy.lock bench/verdict-columns.sh        # 5 rounds
#   ROUNDS=3 BEFORE=f1428f1 bench/verdict-columns.sh
#
# The benchmarks are collector/store/verdicts_bench_test.go's:
# CompareVerdicts (compare.Runs by server), GroupRunsVerdicts (the
# store's part of it) and RunsVerdicts (Store.Runs and AddVerdicts). The
# old tree runs them as they were written for this script, while the
# collector was one package (collector/verdict_bench_test.go of BENCHSRC;
# later ones also hold the backfill's benchmark, which the old store
# cannot build). Each round runs
# the before and the after binary in turn, pinned to CPU (1); it prints
# every round and the medians in ms.
set -euo pipefail

BEFORE=${BEFORE:-f1428f1}
BENCHSRC=${BENCHSRC:-3772b3c}
ROUNDS=${ROUNDS:-5}
CPU=${CPU:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.26.11}

mkdir "$work/old"
git -C "$root" archive "$BEFORE" | tar -x -C "$work/old"
# The benchmarks, on the old store: the runs' verdicts from the payloads.
sed 's/\t\truns, err := s.GroupRuns(ctx, "server", Filter{})/&\n\t\tif err == nil {\n\t\t\truns, err = s.withVerdicts(ctx, runs, false)\n\t\t}/' \
	<(git -C "$root" show "$BENCHSRC:collector/verdict_bench_test.go") > "$work/old/collector/verdict_bench_test.go"
grep -q withVerdicts "$work/old/collector/verdict_bench_test.go"
(cd "$work/old" && go test -c -o "$work/before.test" ./collector)
(cd "$root" && go test -c -o "$work/after.test" ./collector/store)

cd "$root/collector/store"
for i in $(seq "$ROUNDS"); do
	for v in before after; do
		taskset -c "$CPU" "$work/$v.test" -test.run XXX -test.bench Verdicts -test.benchtime 3x -test.count 1 |
			awk -v v=$v -v i="$i" '/^Benchmark/ {printf "round %s %-6s %-28s %8.1f ms\n", i, v, $1, $3/1e6}'
	done
done | tee "$work/out"
echo "medians:"
awk '{print $3, $4, $5}' "$work/out" | sort -k1,1 -k2,2 -k3,3n |
	awk '{k=$2" "$1; n[k]++; x[k, n[k]]=$3} END {for (k in n) printf "  %-34s %8.1f ms\n", k, x[k, int((n[k]+1)/2)]}' | sort
