# One image for every Rebound service; SERVICE_ENTRY picks the entry point, e.g.
#   services/socketio/main.ts, services/ws/main.ts, services/replay-server/main.ts,
#   chaos/toxiproxy/main.ts, shards/runner/main.ts
# No HOST here on purpose: on Railway a server under test with HOST unset binds "::" (IPv4 and
# IPv6; older private networks resolve *.railway.internal to IPv6). Elsewhere set HOST=0.0.0.0
# (and BROADCAST_KEY: a non-loopback bind without it exits 2 unless --public). The runner
# (shards/runner/main.ts) always needs HOST set, "::" on Railway, plus BENCH_RUNNER_TOKEN.
# PORT here is for `docker run`; on Railway set PORT as a service variable (docs/railway.md).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
ENV PORT=8080 SERVICE_ENTRY=services/socketio/main.ts
EXPOSE 8080
CMD ["sh", "-c", "exec node --import tsx \"$SERVICE_ENTRY\""]
