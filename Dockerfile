# One image for every Rebound service; SERVICE_ENTRY picks the entry point, e.g.
#   services/socketio/main.ts, services/ws/main.ts, services/replay-server/main.ts,
#   chaos/toxiproxy/main.ts, shards/runner/main.ts
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
ENV HOST=0.0.0.0 PORT=8080 SERVICE_ENTRY=services/socketio/main.ts
EXPOSE 8080
CMD ["sh", "-c", "exec node --import tsx \"$SERVICE_ENTRY\""]
