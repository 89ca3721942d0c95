#!/usr/bin/env bash
# compare-builds.sh: two builds of the service side by side against the bare Fastify ceiling, in one
# run (docs/performance.md "Two builds side by side"). A is the service the shared kit's sweep.sh or
# compare.sh left running (port 3106, its database and Redis); B is a built checkout (default this
# one) started beside it on a copy of A's database and a Redis of its own, with A's environment plus
# B_ENV, and B_SQL run on the copy once B has started. Rounds alternate ceiling, A, B at each load,
# after one unrecorded warm-up round each.
#   [B_APP=dir] [B_ENV="K=V …"] [B_SQL="…"] [LOADS="1 4"] [ROUNDS=3] [WORKLOAD=W3|W1] test/bench/compare-builds.sh
#   test/bench/compare-builds.sh --help
set -euo pipefail
if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0; fi
[ $# -eq 0 ] || { echo "compare-builds.sh takes no arguments, only the variables --help lists: got $*" >&2; exit 2; }
HERE="$(cd "$(dirname "$0")/../.." && pwd)"
B_APP="$(cd "${B_APP:-$HERE}" && pwd)"
BENCH_DIR="$(cd "${BENCH_DIR:-$HERE/../shared/bench}" && pwd)"
[ -f "$B_APP/dist/bin/server.js" ] || { echo "no build in $B_APP: run npm run build there first" >&2; exit 2; }
cd "$BENCH_DIR"; source ./env.sh; source ./lib/common.sh
LOADS="${LOADS:-1 4}"; ROUNDS="${ROUNDS:-3}"; WORKLOAD="${WORKLOAD:-W3}"
PORT_A="${PORT_SVC:-3106}"; PORT_B="${PORT_B:-3107}"; REDIS_B="${REDIS_B:-56392}"; DB_B=bench_records_b
case "$WORKLOAD" in W1|W3) ;; *) echo "WORKLOAD is W1 or W3, not $WORKLOAD" >&2; exit 2 ;; esac
PA=$(cat "$RUN_DIR/records-svc.pid" 2>/dev/null || true)
{ [ -n "$PA" ] && [ -r "/proc/$PA/environ" ]; } || { echo "the kit's service is not running: run PROJECT=<checkout> $BENCH_DIR/sweep.sh (or compare.sh) first" >&2; exit 2; }
FP=$(cat "$RUN_DIR/fastify-pg.pid")
WORK=$(mktemp -d /tmp/policia-builds-XXXXXX)
PB=""
cleanup() {
  [ -z "$PB" ] || { kill "$PB" 2>/dev/null; wait "$PB" 2>/dev/null || true; }
  redis-cli -p "$REDIS_B" shutdown nosave >/dev/null 2>&1 || true
  ./pg.sh su-psql postgres -c "drop database if exists $DB_B" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

log "copying A's database to $DB_B"
# CREATE DATABASE … TEMPLATE needs the source without sessions: A's are ended (its pool reconnects on demand).
for try in 1 2 3 4 5; do
  ./pg.sh su-psql postgres -c "drop database if exists $DB_B" >/dev/null
  ./pg.sh su-psql postgres -tAc "select pg_terminate_backend(pid) from pg_stat_activity where datname = 'bench_records' and pid <> pg_backend_pid()" >/dev/null
  ./pg.sh su-psql postgres -c "create database $DB_B owner $PG_USER template bench_records" >/dev/null 2>&1 && break
  [ "$try" -lt 5 ] || { echo "could not copy bench_records: a session kept reconnecting to it" >&2; exit 1; }
  sleep 0.2
done
redis-server --port "$REDIS_B" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes --logfile "$WORK/redis.log"

log "starting B ($B_APP) on $PORT_B"
mapfile -t envA < <(tr '\0' '\n' < "/proc/$PA/environ" | grep -Ev '^(PORT|DATABASE_URL|REDIS_URL|CHECKPOINT_DIR|DATA_DIR|MODULES_FILE)=' || true)
ADMIN_PW=$(tr '\0' '\n' < "/proc/$PA/environ" | sed -n 's/^ADMIN_PASSWORD=//p')
# B's own modules.yaml with the kit's benchmark module, as records-svc.sh makes A's.
cat "$B_APP/modules.yaml" "${BENCH_MODULE_TAIL:-$BENCH_DIR/records-svc/modules.bench.yaml.tail}" > "$WORK/modules.yaml"
read -r -a extra <<< "${B_ENV:-}"
env -i -C "$B_APP" "${envA[@]}" PORT="$PORT_B" DATA_DIR="$WORK/data" CHECKPOINT_DIR="$WORK/checkpoints" MODULES_FILE="$WORK/modules.yaml" \
  DATABASE_URL="postgres://$PG_USER:$PG_PASSWORD@$PG_HOST:$PG_PORT/$DB_B" REDIS_URL="redis://127.0.0.1:$REDIS_B" "${extra[@]}" \
  node dist/bin/server.js > "$WORK/server.log" 2>&1 &
PB=$!
for i in $(seq 240); do
  curl -sf -o /dev/null -m 2 "http://127.0.0.1:$PORT_B/health" && break
  if ! kill -0 "$PB" 2>/dev/null || [ "$i" -eq 240 ]; then echo "B did not start; its log:" >&2; tail -20 "$WORK/server.log" >&2; exit 1; fi
  sleep 0.5
done

# A change of the copy meant for the measurement only (an index dropped), after B's start made its schema.
[ -z "${B_SQL:-}" ] || { log "on $DB_B: $B_SQL"; ./pg.sh psql "$DB_B" -v ON_ERROR_STOP=1 -c "$B_SQL" >/dev/null; }
login() { curl -sf -X POST "http://127.0.0.1:$1/auth/login" -H 'Content-Type: application/json' -d "{\"username\":\"admin\",\"password\":\"$ADMIN_PW\"}" | node -pe 'JSON.parse(require("fs").readFileSync(0)).data.token'; }
CT=$(jwt bench-user bench_user); TA=$(login "$PORT_A"); TB=$(login "$PORT_B")
YEAR=$(TZ=Europe/Madrid date +%Y)
round() { # load, out
  local c=$1 out=$2
  if [ "$WORKLOAD" = W3 ]; then
    C=$c D=6 ./cpu-per-req.sh "ceiling-c$c" "$FP" "http://127.0.0.1:$PORT_FASTIFY_PG" POST /records "$CT" "$W3_BODY" >> "$out"
    C=$c D=6 ./cpu-per-req.sh "A-c$c" "$PA" "http://127.0.0.1:$PORT_A" POST /records "$TA" "$W3_BODY" >> "$out"
    REDIS_PORT=$REDIS_B C=$c D=6 ./cpu-per-req.sh "B-c$c" "$PB" "http://127.0.0.1:$PORT_B" POST /records "$TB" "$W3_BODY" >> "$out"
  else
    C=$c D=6 ./cpu-per-req.sh "ceiling-c$c" "$FP" "http://127.0.0.1:$PORT_FASTIFY_PG" GET '/records/{id}' "$CT" >> "$out"
    C=$c D=6 ./cpu-per-req.sh "A-c$c" "$PA" "http://127.0.0.1:$PORT_A" GET "/records/REC-$YEAR-{id5}" "$TA" >> "$out"
    REDIS_PORT=$REDIS_B C=$c D=6 ./cpu-per-req.sh "B-c$c" "$PB" "http://127.0.0.1:$PORT_B" GET "/records/REC-$YEAR-{id5}" "$TB" >> "$out"
  fi
}
log "warm-up round (not recorded)"
round "${LOADS%% *}" /dev/null
for c in $LOADS; do for r in $(seq "$ROUNDS"); do log "$WORKLOAD at $c connections, round $r of $ROUNDS"; round "$c" "$WORK/rounds"; done; done
./pg.sh reset bench_fastify >/dev/null 2>&1 || true; ./records-svc.sh reset >/dev/null 2>&1 || true
cat "$WORK/rounds"
# Per load: each round's throughput against the ceiling's of the same round, and the medians of CPU per request.
node -e '
const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => {
  const m = /^(\S+)-c(\d+)\s+(\d+) req\/s.*total\s+(\d+) us\/req/.exec(l); return m && { who: m[1], c: +m[2], rps: +m[3], cpu: +m[4] } }).filter(Boolean);
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)] };
console.log(`\n${process.argv[2]} | connections | A throughput / ceiling, by round | B throughput / ceiling, by round | CPU µs a request, median: ceiling, A, B`);
for (const c of [...new Set(rows.map((r) => r.c))]) {
  const of = (who) => rows.filter((r) => r.c === c && r.who === who);
  const ceil = of("ceiling"), ratio = (who) => of(who).map((r, i) => (r.rps / ceil[i].rps).toFixed(2)).join(", ");
  console.log(`${process.argv[2]} | ${c} | ${ratio("A")} | ${ratio("B")} | ${med(ceil.map((r) => r.cpu))}, ${med(of("A").map((r) => r.cpu))}, ${med(of("B").map((r) => r.cpu))}`);
}' "$WORK/rounds" "$WORKLOAD"
