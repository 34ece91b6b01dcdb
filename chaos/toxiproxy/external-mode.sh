#!/usr/bin/env bash
# The chaos-proxy behaviour tests in their TOXIPROXY_URL mode (the mode that runs them against a
# real Toxiproxy), here against Rebound's own standalone proxy, so that mode cannot rot unnoticed.
# Usage: chaos/toxiproxy/external-mode.sh [TOXIPROXY_URL]   (no URL: start Rebound's proxy on a free port)
set -euo pipefail
cd "$(dirname "$0")/../.."
# The plan files (and the weather conditions' time lines) drive their toxics through the same API: their lifts must behave alike on both.
files=(chaos/toxiproxy/api.test.ts chaos/toxiproxy/toxics.test.ts chaos/toxiproxy/client.test.ts chaos/plans/cutoff.test.ts chaos/plans/blackhole.test.ts chaos/weather/weather.test.ts)
url=${1:-}
pid=
if [ -z "$url" ]; then
  log=$(mktemp)
  node --import tsx chaos/toxiproxy/main.ts --port 0 >"$log" 2>&1 &
  pid=$!
  trap 'kill "$pid" 2>/dev/null || true; rm -f "$log"' EXIT
  for _ in $(seq 100); do
    url=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$log")
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$log"; exit 1; }
    sleep 0.1
  done
  [ -n "$url" ] || { echo "chaos proxy did not start"; cat "$log"; exit 1; }
fi
echo "chaos-proxy behaviour tests against TOXIPROXY_URL=$url"
# One file at a time: the files share one server and its port space.
TOXIPROXY_URL=$url npx vitest run "${files[@]}" --no-file-parallelism
