#!/usr/bin/env bash
# The coordinator/rebaseline figures of docs/performance.md ("Coordinator merge and rebaseline"), from the repo root:
#   docs/results/coord-measure.sh idle-multi [PER_SHARD_N HOLD RAMP]   # 2 runner shards x N idle, one replay server (8 workers)
#   docs/results/coord-measure.sh update                               # --repeat 3 --update walks (baselines), committed
#   docs/results/coord-measure.sh walk [K]                             # K plain walks of the local manifest
#   docs/results/coord-measure.sh broken                               # replay tests against a replay server with --history-limit 1
# Run each under the shared lock: flock /work/wt/measure.lock docs/results/coord-measure.sh ...
set -u
cd "$(dirname "$0")/../.."
OUT=docs/results
TMP=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; sleep 2; for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$TMP"; }
trap cleanup EXIT
wait_http() { for _ in $(seq 1 60); do curl -s -o /dev/null "$1" && return 0; sleep 1; done; echo "no answer from $1" >&2; return 1; }

case ${1:-} in
  idle-multi)
    N=${2:-50000}; HOLD=${3:-30}; RAMP=${4:-350}
    node --import tsx services/replay-server/main.ts --port 18080 --workers 8 > "$TMP/server.log" 2>&1 & PIDS+=($!)
    for p in 17711 17712; do
      TARGET_REPLAY_URL=http://127.0.0.1:18080 BENCH_RUNNER_TOKEN=s PORT=$p RESULTS_DIR="$TMP/r$p" node --import tsx shards/runner/main.ts > "$TMP/runner-$p.log" 2>&1 & PIDS+=($!)
    done
    wait_http http://127.0.0.1:18080/ && wait_http http://127.0.0.1:17711/health && wait_http http://127.0.0.1:17712/health || exit 1
    uptime >&2
    CMD="npm run serve:replay -- --port 18080 --workers 8; two runner shards (TARGET_REPLAY_URL=http://127.0.0.1:18080 PORT=17711|17712 npm run serve:runner); SHARDS=http://127.0.0.1:17711,http://127.0.0.1:17712 BENCH_RUNNER_TOKEN=s PER_SHARD_N=$N npm run bench:idle:multi -- --target replay --hold $HOLD --ramp $RAMP --poll-ms 2000 --json"
    SHARDS=http://127.0.0.1:17711,http://127.0.0.1:17712 BENCH_RUNNER_TOKEN=s PER_SHARD_N=$N RESULTS_DIR="$TMP/coord" \
      npx tsx shards/coordinator/main.ts --test idle --target replay --hold "$HOLD" --ramp "$RAMP" --poll-ms 2000 --json > "$TMP/merged.json"
    echo "coordinator exit $?" >&2; uptime >&2
    node --import tsx cli/summary.ts "$OUT/coord-idle-multi-$((N * 2 / 1000))k.json" "$CMD" < "$TMP/merged.json"
    ;;
  update)
    # The full local manifest (idle and avalanche excluded) in two parts, so each part's new
    # baselines are written even if the second is cut short; then the baselines are committed so
    # the plain walks that follow run on an unchanged, named tree.
    for f in jitter latency,throughput,whispers; do
      uptime >&2; date -u +%T >&2; FILTER=$f npx tsx shards/manifest/main.ts --repeat 3 --update; echo "exit $? ($f)" >&2
    done
    uptime >&2; date -u +%T >&2
    git add shards/manifest/tests.json && git commit -q -m "Manifest baselines from --repeat 3 --update on the local manifest (idle and avalanche excluded)" && git log --oneline -1 >&2 ;;
  walk)
    # Plain walks judge the baselines the update walks set: refuse to run before they are committed.
    git log -1 --format=%s -- shards/manifest/tests.json | grep -q '^Manifest baselines from --repeat 3' || { echo "baselines not committed yet" >&2; exit 3; }
    for k in $(seq 1 "${2:-1}"); do
      uptime >&2; date -u +%T >&2; /usr/bin/time -f "walk wall %e s" npx tsx shards/manifest/main.ts; echo "exit $?" >&2
    done
    uptime >&2 ;;
  broken)
    git log -1 --format=%s -- shards/manifest/tests.json | grep -q '^Manifest baselines from --repeat 3' || { echo "baselines not committed yet" >&2; exit 3; }
    node --import tsx services/replay-server/main.ts --port 18090 --history-limit 1 > "$TMP/broken.log" 2>&1 & PIDS+=($!)
    wait_http http://127.0.0.1:18090/ || exit 1
    uptime >&2; TARGET_REPLAY_URL=http://127.0.0.1:18090 FILTER=jitter-replay npx tsx shards/manifest/main.ts; echo "exit $?" >&2; uptime >&2 ;;
  *) sed -n 2,7p "$0"; exit 2 ;;
esac
