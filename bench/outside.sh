#!/usr/bin/env bash
# Load from tools nobody here wrote (issue: hardening): Debian's wrk drives
# ccs serve's /score and /retrieve on loopback, beside ccs loadtest with the
# same connections, and a real Prometheus (Debian's, started here with a
# temporary configuration) scrapes /metrics with a token; the request
# counters it stores must equal the requests sent.
#   1. wrk soak on score for SOAK seconds (default 300), then 30 s on
#      retrieve (10^5 items): throughput, p50/p99, errors, resident memory
#      before and after;
#   2. ccs loadtest, the same endpoints and connections, 30 s each;
#   3. a count-bounded phase (N requests, default 20000, by ccs loadtest):
#      Prometheus's stored counter must grow by exactly N.
set -euo pipefail
cd "$(dirname "$0")/.."
umask 077 # the token files and the wrk script hold a token
SOAK=${SOAK:-300}
N=${N:-20000}
CONNS=${CONNS:-8}
missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v prometheus >/dev/null || missing+=(prometheus)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
dir=${BENCH_DIR:-/tmp/ccs-bench-outside}
mkdir -p "$dir" .cache
go build -o .cache/ccs ./cmd/ccs
[ -f "$dir/db.npz" ] || go run ./bench/serve -out "$dir" -n 100000
token=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
printf 'bench:%s:read\n' "$token" > "$dir/tokens"; chmod 600 "$dir/tokens"
printf '%s' "$token" > "$dir/token"; chmod 600 "$dir/token"
addr=127.0.0.1:18081 paddr=127.0.0.1:19091
.cache/ccs serve -set ball="$dir/ball.json" -db db="$dir/db.npz" -addr $addr -auth-tokens "$dir/tokens" 2> "$dir/serve.log" &
spid=$!
cat > "$dir/prometheus.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 900ms}
scrape_configs:
  - job_name: ccs
    authorization: {credentials_file: $dir/token}
    static_configs: [{targets: ["$addr"]}]
YML
rm -rf "$dir/tsdb"
prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/tsdb" --web.listen-address=$paddr --log.level=warn 2> "$dir/prometheus.log" &
ppid_=$!
trap 'kill $spid $ppid_ 2>/dev/null || true' EXIT
until curl -sf http://$addr/readyz >/dev/null; do sleep 0.2; done
until curl -sf http://$paddr/-/ready >/dev/null; do sleep 0.2; done
rss() { # resident memory (the kernel's), and the Go heap in use and goroutines (/metrics)
  echo "resident $(awk '/^VmRSS/ {printf "%.0f MiB", $2/1024}' /proc/$spid/status);" \
    "$(curl -s -H "Authorization: Bearer $token" http://$addr/metrics | awk '/^go_memstats_heap_inuse_bytes / {printf "heap in use %.0f MiB;", $2/1048576} /^go_goroutines / {printf " %d goroutines", $2}')"
}
lua() { # lua BODYFILE: a wrk script POSTing the file with the token
  printf 'local f = io.open("%s"); wrk.body = f:read("*a"); f:close()\nwrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["Authorization"] = "Bearer %s"\n' "$1" "$token" > "$dir/post.lua"
  echo "$dir/post.lua"
}
promq() { # promq QUERY: the value Prometheus stores now
  curl -s --get http://$paddr/api/v1/query --data-urlencode "query=$1" | python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)'
}
promall() { # promall QUERY: every series' labels and value
  curl -s --get http://$paddr/api/v1/query --data-urlencode "query=$1" | python3 -c 'import json,sys; [print("  ", x["metric"], x["value"][1]) for x in json.load(sys.stdin)["data"]["result"]]'
}
echo "== resident memory before: $(rss)"
echo "== wrk: score, $CONNS connections, ${SOAK}s"
wrk -t2 -c"$CONNS" -d"${SOAK}s" --latency -s "$(lua "$dir/score.json")" http://$addr/v1/sets/ball/score
echo "== resident memory after the soak: $(rss)"
echo "== wrk: retrieve over 10^5 items, $CONNS connections, 30s"
wrk -t2 -c"$CONNS" -d30s --latency -s "$(lua "$dir/retrieve.json")" http://$addr/v1/sets/ball/retrieve
for ep in score retrieve; do
  echo "== ccs loadtest: $ep, $CONNS connections, 30s"
  .cache/ccs loadtest -url http://$addr/v1/sets/ball/$ep -body "$dir/$ep.json" -duration 30s -concurrency "$CONNS" -token-file "$dir/token"
done
echo "== resident memory at the end: $(rss)"
sleep 3
before=$(promq 'ccs_requests_total{job="ccs",endpoint="score",code="200"}')
echo "== counted phase: $N score requests by ccs loadtest (Prometheus stored $before so far)"
.cache/ccs loadtest -url http://$addr/v1/sets/ball/score -body "$dir/score.json" -requests "$N" -duration 0 -concurrency "$CONNS" -token-file "$dir/token"
sleep 3
after=$(promq 'ccs_requests_total{job="ccs",endpoint="score",code="200"}')
echo "== every answer Prometheus stored, by endpoint and code (499: cut when a tool stopped at its duration)"
promall 'sum by (endpoint, code) (ccs_requests_total{job="ccs"})'
other=$(promq 'sum(ccs_requests_total{job="ccs",code!~"200|499"}) or vector(0)')
python3 - "$before" "$after" "$N" "$other" <<'PY'
import sys
b, a, n, e = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
print(f"Prometheus: score counter {b:.0f} -> {a:.0f}, grew {a-b:.0f}; sent {n}; answers other than 200 and 499: {e:.0f}")
sys.exit(0 if a - b == n and e == 0 else 1)
PY
