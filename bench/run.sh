#!/usr/bin/env bash
# Side by side: one training epoch of ccs and of a PyTorch implementation of
# the same objective, same data, same number of threads, in one run.
#   bench/run.sh [n] [k] [d]        (defaults 10000 50 128)
# Needs Debian's python3-torch (apt-get install python3-torch).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000} k=${2:-50} d=${3:-128}
threads=$(nproc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/epoch" ./bench/epoch
"$tmp/epoch" -gen "$tmp/data.npz" -n "$n" -k "$k" -d "$d"
for g in genball single; do
  go_json=$(GOMAXPROCS=$threads "$tmp/epoch" -data "$tmp/data.npz" -geometry "$g")
  torch_json=$(/usr/bin/python3 bench/torch_epoch.py "$tmp/data.npz" "$g" "$threads")
  echo "$go_json"
  echo "$torch_json"
  /usr/bin/python3 - "$go_json" "$torch_json" <<'PY'
import json, sys
g, t = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"{g['geometry']}: n={g['n']} k={g['k']} d={g['d']} threads={g['threads']}: "
      f"ccs {g['epoch2_s']:.2f} s/epoch (first epoch with preparation {g['epoch1_s']:.2f} s), "
      f"PyTorch {t['epoch2_s']:.2f} s/epoch (first {t['epoch1_s']:.2f} s): "
      f"ccs is {t['epoch2_s']/g['epoch2_s']:.2f}x as fast")
PY
done
