#!/usr/bin/env bash
# Re-measure every figure in docs/performance.md on the current (committed, clean) tree and write
# its summary JSON here: {commit, command, measuredAt, results}. Usage, from the repo root:
#   docs/results/measure.sh [figure...]     # default: all, in the order below
# Each figure runs alone; the machine should be otherwise idle (it rarely is: say so in the doc).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=docs/results
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# A main-job run: its own .summary.json is the figure file.
bench() { # name args...
  local name=$1; shift
  echo "== $name: npm run bench -- $*" >&2
  RESULTS_DIR="$TMP/$name" npm run -s bench -- "$@" > "$TMP/$name.table" || true
  cp "$(ls "$TMP/$name"/*.summary.json)" "$OUT/$name.json"
  cat "$TMP/$name.table"
}
# A bench/ script with --json output, wrapped with the commit and command.
script() { # name npm-script args...
  local name=$1 s=$2; shift 2
  echo "== $name: npm run $s -- $*" >&2
  npm run -s "$s" -- "$@" | node --import tsx cli/summary.ts "$OUT/$name.json" "npm run $s -- $*"
}

# A capacity loader scenario through runners/capacity/loader/cli.ts (one scenario, several targets; the driver these figures were measured with).
loader() { # name args...
  local name=$1; shift
  echo "== $name: npx tsx runners/capacity/loader/cli.ts $*" >&2
  npx tsx runners/capacity/loader/cli.ts "$@" --json | node --import tsx cli/summary.ts "$OUT/$name.json" "npx tsx runners/capacity/loader/cli.ts $*"
}

# A figure that needs a Redis: a fresh redis-server of its own (no persistence) for the run.
with_redis() { # args...
  local port=16399
  redis-server --port $port --bind 127.0.0.1 --save '' --appendonly no --daemonize no --loglevel warning > "$TMP/redis.log" 2>&1 &
  local pid=$!
  sleep 0.5
  REDIS_URL=redis://127.0.0.1:$port "$@" || true
  kill $pid; wait $pid 2>/dev/null || true
}

run() {
  case $1 in
    main) bench main --seed 20261129 ;;
    # The main job with the uWS column (every local target, uws included), same seed as main.
    main-uws) bench main-uws --seed 20261129 ;;
    shape-1000) bench shape-1000 --clients 1000 --msgs 120 --interval 500 --jitter 15 --jitter-ms 1000 --ramp 200 --seed 1003 ;;
    plan-partition) bench plan-partition --plan partition --clients 200 --msgs 60 --jitter 10 --settle 40000 --seed 4242 --tuned false ;;
    plan-blackhole) bench plan-blackhole --plan blackhole --clients 60 --msgs 60 --jitter 10 --groups 2 --settle 60000 --seed 4242 --tuned false ;;
    plan-reset) bench plan-reset --plan reset --clients 200 --msgs 60 --jitter 10 --seed 4242 --tuned false ;;
    plan-flaky) bench plan-flaky --plan flaky --clients 200 --msgs 60 --jitter 10 --seed 4242 --tuned false ;;
    plan-slow-consumer) bench plan-slow-consumer --plan slow-consumer --clients 100 --msgs 200 --interval 100 --payload-bytes 1000 --jitter 10 --seed 4242 --tuned false ;;
    plan-drop-flaky) bench plan-drop-flaky --plan drop+flaky --clients 200 --msgs 60 --jitter 10 --seed 4242 --tuned false ;;
    capacity-s1) script capacity-s1 bench:capacity --targets replay,ws,socketio --scenarios S1 --s1-counts 10000 --s1-ramps 1000,500 --json ;;
    # replay, uWS, ws and Socket.IO side by side: S1 at 10,000 (median of 3) and S3 fan-out on a 1,000 msg/s grid up to 16,000 (past where uWS might stop; coarser than the 500 grid above so four targets fit one short run).
    capacity-s1-uws) script capacity-s1-uws bench:capacity --targets replay,uws,ws,socketio --scenarios S1 --s1-counts 10000 --s1-ramps 1000 --json ;;
    capacity-s3-uws) script capacity-s3-uws bench:capacity --targets replay,uws,ws,socketio --scenarios S3 --s3-rates 4000,5000,6000,7000,8000,9000,10000,11000,12000,13000,14000,15000,16000 --s3-step-sec 5 --json ;;
    capacity-s3-uws-quiet) script capacity-s3-uws-quiet bench:capacity --targets replay,uws,ws,socketio --scenarios S3 --s3-rates 2000,3000,4000,5000,6000,7000,8000,9000,10000,12000,14000,16000 --s3-step-sec 5 --json ;;
    capacity-s2) script capacity-s2 bench:capacity --targets replay,ws,socketio --scenarios S2 --s2-steps 10000,19000,25000 --json ;;
    capacity-s6) script capacity-s6 bench:capacity --targets replay,ws,socketio --scenarios S6 --json ;;
    capacity-s3) loader capacity-s3 --scenario S3 --targets replay,ws,socketio --step-sec 5 ;;
    capacity-s3-fine|capacity-s3-fine-2|capacity-s3-fine-3) script "$1" bench:capacity --targets replay,ws,socketio --scenarios S3 --s3-rates 3500,4000,4500,5000,5500,6000,6500,7000,7500,8000,8500,9000,9500,10000,10500,11000,11500,12000 --s3-step-sec 5 --json ;;
    # The same grid with every server as two worker processes behind one port (each may use both cores).
    capacity-s3-workers2) script "$1" bench:capacity --targets replay,ws,socketio --scenarios S3 --s3-rates 3500,4000,4500,5000,5500,6000,6500,7000,7500,8000,8500,9000,9500,10000,10500,11000,11500,12000 --s3-step-sec 5 --server-workers 2 --json ;;
    capacity-s4s5) script capacity-s4s5 bench:capacity --targets replay,ws,socketio --scenarios S4,S5 --s4-step-sec 5 --s5-step-sec 20 --json ;;
    capacity-s4) loader capacity-s4 --scenario S4 --targets replay,ws,socketio --step-sec 5 ;;
    capacity-s5) loader capacity-s5 --scenario S5 --targets replay,ws,socketio --step-sec 20 ;;
    capacity-sweep) loader capacity-sweep --scenario sweep --targets replay --rate 4500 --loader-counts 1,2,4 --step-sec 5 ;;
    capacity-loaders) script capacity-loaders bench:capacity --targets replay,ws,socketio --scenarios S3,S4,S5 --s3-rates 3000,4000,5000,5500,6000,7000,8000,9000,10000 --s3-step-sec 5 --s4-step-sec 5 --s5-step-sec 20 --json ;;
    capacity-s1-workers) script capacity-s1-workers bench:capacity --targets replay --scenarios S1 --s1-counts 10000,20000,40000 --s1-ramps 1000 --server-workers 4 --json ;;
    # S1 past one process for every local target, one run (and one figure file) per target: the
    # three together take longer than one hold of the shared measuring lock.
    capacity-s1-workers-replay|capacity-s1-workers-ws|capacity-s1-workers-socketio) script "$1" bench:capacity --targets "${1#capacity-s1-workers-}" --scenarios S1 --s1-counts 10000,20000,40000 --s1-ramps 1000 --server-workers 4 --json ;;
    capacity-s1-workers-all) for t in replay ws socketio; do run "capacity-s1-workers-$t"; done ;;
    # The same points at the second ramp rate (500/s), one figure file per target.
    capacity-s1-workers-ramp500-replay|capacity-s1-workers-ramp500-ws|capacity-s1-workers-ramp500-socketio) script "$1" bench:capacity --targets "${1#capacity-s1-workers-ramp500-}" --scenarios S1 --s1-counts 10000,20000,40000 --s1-ramps 500 --server-workers 4 --json ;;
    capacity-s1-workers-ramp500-all) for t in replay ws socketio; do run "capacity-s1-workers-ramp500-$t"; done ;;
    capacity-redis-s3) with_redis script capacity-redis-s3 bench:capacity --targets replay,replay-redis,replay-redis:2 --scenarios S3 --s3-rates 2000,4000,5000,6000,7000,8000 --s3-step-sec 5 --json ;;
    cap-soak-replay) script cap-soak-replay bench:soak --target replay --json ;; # 10 min; not in ALL (run it alone)
    coord-merge-50) script coord-merge-50 bench:merge --shards 50 --samples 20000 --reps 5 ;;
    proxy-overhead) script proxy-overhead bench:proxy --json ;;
    proxy-capacity) script proxy-capacity bench:proxy-capacity --json ;;
    *) echo "unknown figure $1" >&2; return 2 ;;
  esac
}

ALL=(main shape-1000 plan-partition plan-blackhole plan-reset plan-flaky plan-slow-consumer plan-drop-flaky capacity-s1 capacity-s2 capacity-s6 capacity-s3 capacity-s4 capacity-s5 capacity-sweep proxy-overhead proxy-capacity)
for f in "${@:-${ALL[@]}}"; do run "$f"; done
