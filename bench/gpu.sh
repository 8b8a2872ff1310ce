#!/usr/bin/env bash
# The many-core and GPU comparison in one run, on a host with PyTorch (and a
# CUDA GPU) but no Go toolchain: build the binaries elsewhere, bring them.
#
#   bench/gpu.sh BIN OUT [SECONDS]
#
# BIN holds ccs (or ccs.gz, to fit a carry limit), scaling and epoch
# (go build ./cmd/ccs ./bench/scaling ./bench/epoch); OUT receives log.txt
# (every step's output, in order), bench/scaling's JSON, train.trace (an
# execution trace of the generalized epoch on every core: read it with
# go tool trace -d=parsed OUT/train.trace | python3 bench/traceinfo.py) and
# CPU profiles of both epochs on every core (go tool pprof -top BIN/scaling
# OUT/train-GEOM.pprof). In order of importance, each step under its own time
# limit, and all of them under SECONDS (default 540), so that one slow step
# cannot lose the others: the thread sweep of the training (interleaved, so the
# host's noise falls on every count alike), the GPU's epochs (PyTorch eager
# and torch.compile) and ccs's on the same data, the machine's own ceiling, a
# trace and profiles on every core, the retrieval and OOD queries beside the
# GPU's retrieval scan, the 20-seed simulation, PyTorch on every CPU core.
set -uo pipefail
bin=$1 out=$2 budget=${3:-540}
mkdir -p "$out"
tmp=$(mktemp -d)
data=$tmp/data.npz
here=$(dirname "$0")
start=$(date +%s)
step() { # step NAME SECONDS COMMAND...: the output into OUT/log.txt
  local name=$1 limit=$2; shift 2
  local left=$((budget - ($(date +%s) - start) - 5))
  if ((left < 5)); then echo "== $name: skipped, ${left}s left"; return; fi
  ((limit > left)) && limit=$left
  echo "== $name (limit ${limit}s): $*"
  local t0=$(date +%s%N)
  timeout "$limit" "$@" 2>&1
  echo "== $name: rc=$?, $(( ($(date +%s%N) - t0) / 1000000 )) ms"
}
exec > >(tee "$out/log.txt") 2>&1
ccs=$bin/ccs
if [[ ! -x $ccs && -f $bin/ccs.gz ]]; then gzip -dc "$bin/ccs.gz" >"$tmp/ccs" && chmod +x "$tmp/ccs" && ccs=$tmp/ccs; fi
date -u; nproc; lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|L3'; free -g | head -2
grep -o -w -E 'avx2|fma|avx512[a-z_0-9]*' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
nvidia-smi -L; python3 -c 'import torch; print(torch.__version__)'
n=$(nproc) sweep=1,2,4,8
((n > 8)) && sweep=$sweep,$n
step gen 30 "$bin/epoch" -gen "$data"
step scaling-train 100 "$bin/scaling" -parts train -threads "$sweep" -interleave -epochs 10 -json "$out/scaling-train.json"
for g in genball single; do
  step "torch-cuda-$g" 60 python3 "$here/torch_epoch.py" "$data" "$g" --device cuda --epochs 6
  step "torch-cuda-compiled-$g" 90 python3 "$here/torch_epoch.py" "$data" "$g" --device cuda --compile --epochs 6
  step "ccs-epoch-$g" 30 "$bin/epoch" -data "$data" -geometry "$g"
done
step scaling-ceiling 40 "$bin/scaling" -parts ceiling -threads "$sweep" -reps 10 -json "$out/scaling-ceiling.json"
step scaling-trace 30 "$bin/scaling" -parts train -geometries genball -threads "$n" -epochs 20 -trace "$out/train.trace"
for g in genball single; do
  step "scaling-profile-$g" 40 "$bin/scaling" -parts train -geometries "$g" -threads "$n" -epochs 20 -cpuprofile "$out/train-$g.pprof"
done
step scaling-queries 90 "$bin/scaling" -parts retrieve,ood -json "$out/scaling-queries.json"
step torch-retrieve 60 python3 "$here/torch_retrieve.py"
step sim20 90 "$ccs" reproduce sim -seeds 20 -quiet
for g in genball single; do
  step "torch-cpu-$g" 40 python3 "$here/torch_epoch.py" "$data" "$g" "$n" --epochs 3
done
echo "== done in $(($(date +%s) - start)) s"
