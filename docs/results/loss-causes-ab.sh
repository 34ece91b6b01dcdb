#!/usr/bin/env bash
# Loss attribution's cost on the main job: `npm run bench -- --seed 20261129` (its defaults),
# alternating REBOUND_LOSS_CAUSES=off (ClientTimelines records and books nothing) and on, ROUNDS
# rounds each, in one tree. The whole series holds /work/bench.lock once (no other measurement
# overlaps it, and it does not queue for the lock between runs).
# Writes docs/results/main-loss-causes-ab.json ({commit, command, measuredAt, results: one row per
# run: arm, round, wall s, user+sys CPU s of the bench process and its children, load average})
# and the last "on" run's summary as docs/results/main-loss-causes.json. Usage, from the repo root
# (a clean tree):
#   docs/results/loss-causes-ab.sh [ROUNDS]     # default 3
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${LOSS_AB_LOCKED:-}" ]; then exec env LOSS_AB_LOCKED=1 flock /work/bench.lock "$0" "$@"; fi
echo "lock acquired $(date -u +%FT%TZ)" >&2
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
    t0=$(date +%s%N)
    REBOUND_LOSS_CAUSES=$arm RESULTS_DIR="$dir" /usr/bin/time -f "%U %S" -o "$dir/cpu" node --import tsx cli/bench.ts --seed 20261129 ${BENCH_EXTRA:-} > "$dir/table" 2> "$dir/stderr" || true
    wall=$(node -e "process.stdout.write(((Number(process.argv[1]) - Number(process.argv[2])) / 1e9).toFixed(2))" "$(date +%s%N)" "$t0")
    # /usr/bin/time puts "Command exited with non-zero status N" first when the job exits 2 (a validity warning).
    read -r u s < <(tail -1 "$dir/cpu")
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    summary=$(ls "$dir"/*.summary.json)
    ROWS+=("{\"arm\":\"$arm\",\"round\":$round,\"wallSec\":$wall,\"cpuSec\":$(node -e "process.stdout.write(($u+$s).toFixed(2))"),\"loadAvgAfter\":\"$load\",\"summary\":$(cat "$summary")}")
    echo "   wall ${wall}s cpu $u+$s s load $load" >&2
    if [ "$arm" = on ]; then cp "$summary" "$OUT/main-loss-causes.json"; cp "$dir/table" "$TMP/last-on.table"; fi
    # Rewritten after every run: a series cut short still leaves the runs it finished.
    ( IFS=,; echo "{\"commit\":\"$COMMIT\",\"command\":\"docs/results/loss-causes-ab.sh $ROUNDS\",\"measuredAt\":\"$(date -u +%FT%TZ)\",\"results\":[${ROWS[*]}]}" ) > "$OUT/main-loss-causes-ab.json"
  done
done
cat "$TMP/last-on.table"
