#!/usr/bin/env bash
# Loopback load test of ccs serve (issue: the HTTP service), server and
# client as separate processes on this machine's cores:
#   1. single-point membership at d = 128, unpaced, 8 keep-alive connections;
#   2. the same paced at half the measured rate (latency at half load);
#   3. a soak at half rate for SOAK seconds (default 180), the server's memory
#      from /metrics before and after;
#   4. retrieval over 10⁶ items (ball and generalized ball), one at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
SOAK=${SOAK:-180}
dir=${BENCH_DIR:-/tmp/ccs-bench-serve}
mkdir -p .cache
go build -o .cache/ccs ./cmd/ccs
[ -f "$dir/db.npz" ] || go run ./bench/serve -out "$dir"
addr=127.0.0.1:18080
.cache/ccs serve -set ball="$dir/ball.json" -set genball="$dir/genball.json" -db db="$dir/db.npz" -addr $addr &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
until curl -sf http://$addr/readyz >/dev/null; do sleep 0.2; done
mem() { curl -s http://$addr/metrics | grep -E '^(process_resident_memory_bytes|go_memstats_heap_inuse_bytes|go_goroutines) '; }
echo "== membership, unpaced"
.cache/ccs loadtest -url http://$addr/v1/sets/ball/score -body "$dir/score.json" -duration 10s -concurrency 8 -json | tee /tmp/ccs-lt.json
rate=$(python3 -c "import json;print(int(json.load(open('/tmp/ccs-lt.json'))['requests_per_second']/2))")
echo "== membership, paced at $rate/s (half)"
.cache/ccs loadtest -url http://$addr/v1/sets/ball/score -body "$dir/score.json" -duration 10s -concurrency 8 -rate "$rate"
echo "== OOD score (256-row reference pool), unpaced"
.cache/ccs loadtest -url http://$addr/v1/sets/genball/ood -body "$dir/ood.json" -duration 10s -concurrency 8
echo "== memory before the soak"; mem
echo "== soak: membership at $rate/s for ${SOAK}s"
.cache/ccs loadtest -url http://$addr/v1/sets/ball/score -body "$dir/score.json" -duration "${SOAK}s" -concurrency 8 -rate "$rate"
echo "== memory after the soak"; mem
for s in ball genball; do
  echo "== retrieval over 10^6 items, $s"
  .cache/ccs loadtest -url http://$addr/v1/sets/$s/retrieve -body "$dir/retrieve.json" -requests 20 -concurrency 1
done
kill -TERM $pid; wait $pid || true
