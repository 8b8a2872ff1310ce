#!/usr/bin/env bash
# The many-core and GPU comparison in one run, on a host with PyTorch (and a
# CUDA GPU) but no Go toolchain: build the binaries elsewhere, bring them.
#
#   bench/gpu.sh BIN OUT
#
# BIN holds ccs, scaling and epoch (go build ./cmd/ccs ./bench/scaling
# ./bench/epoch); OUT receives log.txt (every step's output, in order),
# bench/scaling's JSON and train.trace, an execution trace of the
# generalized epoch on every core (read it here: go tool trace -d=parsed
# OUT/train.trace | python3 bench/traceinfo.py). In order of importance, each
# step under its own time limit so that one slow step cannot lose the others:
# the GPU's epochs (PyTorch eager and torch.compile) and ccs's on the same data,
# the thread sweep of bench/scaling and the machine's own ceiling for it
# (-parts ceiling), a trace of the generalized epoch, the GPU's retrieval scan, the 20-seed
# simulation, PyTorch on every CPU core.
set -uo pipefail
bin=$1 out=$2
mkdir -p "$out"
data=$(mktemp -d)/data.npz
here=$(dirname "$0")
step() { # step NAME SECONDS COMMAND...: the output into OUT/log.txt
  local name=$1 limit=$2; shift 2
  echo "== $name (limit ${limit}s): $*"
  local t0=$(date +%s%N)
  timeout "$limit" "$@" 2>&1
  echo "== $name: rc=$?, $(( ($(date +%s%N) - t0) / 1000000 )) ms"
}
exec > >(tee "$out/log.txt") 2>&1
nproc; lscpu | grep -E 'Model name|^CPU\(s\)|Flags' | cut -c1-400; nvidia-smi -L
python3 -c 'import torch; print(torch.__version__)'
step gen 60 "$bin/epoch" -gen "$data"
for g in genball single; do
  step "torch-cuda-$g" 90 python3 "$here/torch_epoch.py" "$data" "$g" --device cuda --epochs 5
  step "torch-cuda-compiled-$g" 150 python3 "$here/torch_epoch.py" "$data" "$g" --device cuda --compile --epochs 5
  step "ccs-epoch-$g" 60 "$bin/epoch" -data "$data" -geometry "$g"
done
step scaling-train 150 "$bin/scaling" -parts train -epochs 5 -json "$out/scaling-train.json"
step scaling-ceiling 60 "$bin/scaling" -parts ceiling -reps 10 -json "$out/scaling-ceiling.json"
step scaling-trace 60 "$bin/scaling" -parts train -geometries genball -threads "$(nproc)" -epochs 20 -trace "$out/train.trace"
step scaling-queries 120 "$bin/scaling" -parts retrieve,ood -json "$out/scaling-queries.json"
step torch-retrieve 60 python3 "$here/torch_retrieve.py"
step sim20 150 "$bin/ccs" reproduce sim -seeds 20 -quiet
for g in genball single; do
  step "torch-cpu-$g" 40 python3 "$here/torch_epoch.py" "$data" "$g" "$(nproc)" --epochs 2
done
