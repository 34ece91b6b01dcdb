#!/usr/bin/env bash
# S5 (10,000 connections, 1,000 streams, 400 msg/s = 4,000 deliveries/s, 20 s) against three
# replay servers, alternated twice: BEFORE's server (pings in 10 slices per interval), BEFORE's
# with --ping-interval-sec 30 (pings 10x rarer), and this tree's server. The loader is always this
# tree's, so only the server differs. BEFORE is a checkout of the earlier commit with node_modules.
# Usage, from the repo root: docs/results/ping-slices-ab.sh <before-tree>  (writes ping-slices-ab.json)
set -euo pipefail
cd "$(dirname "$0")/../.."
BEFORE=$(cd "${1:?usage: ping-slices-ab.sh <before-tree>}" && pwd)
HERE=$(pwd)
PORT=18093
one() { # label server(before|this tree) tree server-args...
  local label=$1 server=$2 tree=$3; shift 3
  (cd "$tree" && exec node --import tsx services/replay-server/main.ts --port $PORT "$@") > /dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/health" > /dev/null && break; sleep 0.1; done
  npx tsx runners/capacity/loader/cli.ts --scenario S5 --targets replay --url "http://127.0.0.1:$PORT" --step-sec 20 --json \
    | LABEL=$label SERVER=$server ARGS="$*" node -e '
        let s = "";
        process.stdin.on("data", (d) => (s += d)).on("end", () => {
          const m = JSON.parse(s.trim().split("\n").pop()).steps[0].metrics;
          const { LABEL: label, SERVER: server, ARGS: args } = process.env;
          console.log(JSON.stringify({ label, server, serverArgs: args, p50Ms: m.p50Ms, p99Ms: m.p99Ms, p999Ms: m.p999Ms, maxMs: m.maxMs, deliveredPct: m.deliveredPct, deliveriesPerSec: m.deliveriesPerSec, machineBusyPct: m.machineBusyPct, loaderCpuPct: m.loaderCpuPct }));
        });'
  kill -TERM $pid; wait $pid 2>/dev/null || true
}
for rep in 1 2; do
  one "before-10-slices-$rep" before "$BEFORE"
  one "before-pings-every-30s-$rep" before "$BEFORE" --ping-interval-sec 30
  one "this-tree-$rep" "this tree" "$HERE"
done | node --import tsx cli/summary.ts docs/results/ping-slices-ab.json "docs/results/ping-slices-ab.sh <checkout of ba83f7e>"
