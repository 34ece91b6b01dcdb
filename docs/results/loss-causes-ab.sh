#!/usr/bin/env bash
# Loss attribution's cost on the main job: `npm run bench -- --seed 20261129` (its defaults),
# alternating REBOUND_LOSS_CAUSES=off (ClientTimelines records and books nothing) and on, ROUNDS
# rounds each, in one tree, under /work/bench.lock so no other measurement overlaps.
# Writes docs/results/main-loss-causes-ab.json ({commit, command, measuredAt, results: one row per
# run: arm, round, wall s, user+sys CPU s of the bench process and its children}) and the last
# "on" run's summary as docs/results/main-loss-causes.json. Usage, from the repo root (a clean tree):
#   docs/results/loss-causes-ab.sh [ROUNDS]     # default 3
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
OUT=docs/results
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
COMMIT=$(git rev-parse --short=12 HEAD)
ROWS=()
for round in $(seq 1 "$ROUNDS"); do
  # Off first in odd rounds, on first in even ones: a drift in the machine's load hits both arms.
  if (( round % 2 )); then arms="off on"; else arms="on off"; fi
  for arm in $arms; do
    dir="$TMP/$arm-$round"
    mkdir -p "$dir"
    echo "== round $round, loss causes $arm" >&2
    # Timed inside the lock: waiting for another measurement to finish is not the job's runtime.
    flock /work/bench.lock bash -c 't0=$(date +%s%N); env REBOUND_LOSS_CAUSES='"$arm"' RESULTS_DIR="$1" /usr/bin/time -f "%U %S" -o "$1/cpu" node --import tsx runners/bench.ts --seed 20261129 ${BENCH_EXTRA:-} > "$1/table" 2> "$1/stderr" || true; echo $(( ($(date +%s%N) - t0) / 1000000 )) > "$1/wall-ms"' _ "$dir"
    wall=$(node -e "process.stdout.write((Number(process.argv[1])/1000).toFixed(2))" "$(cat "$dir/wall-ms")")
    read -r u s < <(tail -1 "$dir/cpu")
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    ROWS+=("{\"arm\":\"$arm\",\"round\":$round,\"wallSec\":$wall,\"cpuSec\":$(node -e "process.stdout.write(($u+$s).toFixed(2))"),\"loadAvgAfter\":\"$load\",\"summary\":$(cat "$(ls "$dir"/*.summary.json)")}")
    echo "   wall ${wall}s cpu $u+$s s load $load" >&2
    [ "$arm" = on ] && cp "$(ls "$dir"/*.summary.json)" "$OUT/main-loss-causes.json" && cp "$dir/table" "$TMP/last-on.table"
  done
done
( IFS=,; echo "{\"commit\":\"$COMMIT\",\"command\":\"docs/results/loss-causes-ab.sh $ROUNDS\",\"measuredAt\":\"$(date -u +%FT%TZ)\",\"results\":[${ROWS[*]}]}" ) > "$OUT/main-loss-causes-ab.json"
cat "$TMP/last-on.table"
