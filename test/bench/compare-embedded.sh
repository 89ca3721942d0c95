#!/usr/bin/env bash
# compare-embedded.sh: the embedded service (no DATABASE_URL, no REDIS_URL: PGlite and in-process
# stores) under compare.sh's workloads and its ceiling, in one run (docs/performance.md "Embedded
# mode against the ceiling"). Uses the shared benchmark kit (BENCH_DIR, default ../shared/bench):
# its ceiling (bare Fastify + pg on the bench cluster), its data, wrk and cpu-per-req.sh. Needs a
# built checkout (npm run build). CPU per request counts the service process, which holds PGlite.
#   [BENCH_DIR=…] [ROWS=100000] [ROUNDS=3] test/bench/compare-embedded.sh
#   test/bench/compare-embedded.sh --help
set -euo pipefail
if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0; fi
APP="$(cd "$(dirname "$0")/../.." && pwd)"
BENCH_DIR="$(cd "${BENCH_DIR:-$APP/../shared/bench}" && pwd)"
[ -f "$APP/dist/bin/server.js" ] || { echo "no build in $APP: run npm run build first" >&2; exit 2; }
cd "$BENCH_DIR"; source ./env.sh; source ./lib/common.sh
ROUNDS="${ROUNDS:-3}"; PORT_EMB="${PORT_EMB:-3109}"
YEAR=$(TZ=Europe/Madrid date +%Y)
WORK=$(mktemp -d /tmp/policia-embedded-XXXXXX)
cat "$APP/modules.yaml" "$APP/test/bench/modules.bench.yaml.tail" > "$WORK/modules.yaml"

log "the ceiling (bench cluster, $ROWS rows)"
./pg.sh start >/dev/null
./pg.sh createdb bench_fastify >/dev/null 2>&1 || true
[ "$(./pg.sh psql bench_fastify -tAc 'select count(*) from records' 2>/dev/null || echo 0)" -ge "$ROWS" ] || ./pg.sh seed bench_fastify
./fastify.sh start >/dev/null 2>&1 || ./fastify.sh start

log "the embedded service (DATA_DIR $WORK)"
# NODE_ENV=production refuses the embedded database (development only); it changes nothing else on the request path (core/config.ts).
env -C "$APP" NODE_ENV=development PORT="$PORT_EMB" HOST=127.0.0.1 DATA_DIR="$WORK/data" MODULES_FILE="$WORK/modules.yaml" \
  JWT_SECRET="$JWT_SECRET" ENCRYPTION_KEY="$(printf 'bench-encryption-key-32-bytes!!!' | base64)" \
  ADMIN_USERNAME=admin ADMIN_PASSWORD=bench-admin-password-1 LOG_LEVEL=warn METRICS_PORT=0 \
  RATE_LIMIT_IP_MAX=100000000 RATE_LIMIT_TOKEN_MAX=100000000 \
  node dist/bin/server.js > "$WORK/server.log" 2>&1 &
SP=$!
trap 'kill $SP 2>/dev/null; wait $SP 2>/dev/null; rm -rf "$WORK"' EXIT
wait_http "http://127.0.0.1:$PORT_EMB/health" 180
ST=$(curl -sf -X POST "http://127.0.0.1:$PORT_EMB/auth/login" -H 'Content-Type: application/json' \
  -d '{"username":"admin","password":"bench-admin-password-1"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).data.token')
log "seeding $ROWS records through the API"
node "$BENCH_DIR/records-svc/seed.mjs" "http://127.0.0.1:$PORT_EMB" "$ST" "$ROWS" 24

CT=$(jwt bench-user bench_user); FP=$(cat "$RUN_DIR/fastify-pg.pid")
C=http://127.0.0.1:$PORT_FASTIFY_PG S=http://127.0.0.1:$PORT_EMB
OUT="$WORK/rounds"
for round in $(seq "$ROUNDS"); do
  log "round $round of $ROUNDS"
  ./cpu-per-req.sh ceiling-W1 "$FP" "$C" GET '/records/{id}' "$CT" >> "$OUT"
  ./cpu-per-req.sh ours-W1 "$SP" "$S" GET "/records/REC-$YEAR-{id5}" "$ST" >> "$OUT"
  ./cpu-per-req.sh ceiling-W2 "$FP" "$C" GET '/records?category={cat}&limit=20' "$CT" >> "$OUT"
  ./cpu-per-req.sh ours-W2 "$SP" "$S" GET '/records?category={cat}&limit=20' "$ST" >> "$OUT"
  D=8 ./cpu-per-req.sh ceiling-W3 "$FP" "$C" POST /records "$CT" "$W3_BODY" >> "$OUT"
  D=8 ./cpu-per-req.sh ours-W3 "$SP" "$S" POST /records "$ST" "$W3_BODY" >> "$OUT"
done
./pg.sh reset bench_fastify >/dev/null 2>&1 || true
cat "$OUT"
# The same summary as compare.sh: medians of the rounds, ours over the ceiling.
node -e '
const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => {
  const m = /^(\S+)-(W\d)\s+(\d+) req\/s.*total\s+(\d+) us\/req\s+non2xx (\d+)/.exec(l); return m && { who: m[1], w: m[2], rps: +m[3], cpu: +m[4], bad: +m[5] } }).filter(Boolean);
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)] };
console.log("\nworkload | ceiling req/s | embedded req/s | throughput ratio | ceiling CPU us/req | embedded CPU us/req | CPU ratio | non-2xx");
for (const w of ["W1", "W2", "W3"]) {
  const c = rows.filter((r) => r.w === w && r.who === "ceiling"), o = rows.filter((r) => r.w === w && r.who === "ours");
  if (!c.length || !o.length) continue;
  const cr = med(c.map((r) => r.rps)), or = med(o.map((r) => r.rps)), cc = med(c.map((r) => r.cpu)), oc = med(o.map((r) => r.cpu));
  console.log(`${w} | ${cr} | ${or} | ${(or / cr).toFixed(2)} | ${cc} | ${oc} | ${(oc / cc).toFixed(2)} | ${o.reduce((s, r) => s + r.bad, 0)}`);
}' "$OUT"
