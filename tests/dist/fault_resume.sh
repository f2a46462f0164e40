#!/usr/bin/env bash
# A data-parallel copy_task run whose last rank fails after step 25 must end whole,
# quickly, naming the rank; the checkpoint of step 20 must resume to the end.
#   fault_resume.sh <copy_task binary> <tools/mpirun> <work dir>
set -uo pipefail
bin=$1 mpirun=$2 out=$3
rm -rf "$out" && mkdir -p "$out"
small=(--d-model 16 --heads 2 --layers 1 --d-ff 32 --batch 8 --steps 40 --warmup 10 --eval 20
       --checkpoint-every 10 --out "$out")

start=$SECONDS
"$mpirun" -np 2 "$bin" --ddp "${small[@]}" --fail-at-step 25 >"$out/failed.log" 2>&1
rc=$? took=$((SECONDS - start))
cat "$out/failed.log"
[[ $rc -ne 0 ]] || { echo "FAIL: the job with a failing rank exited 0"; exit 1; }
grep -q "rank 1 of 2: copy_task: failing on purpose after step 25" "$out/failed.log" ||
  { echo "FAIL: no message naming rank 1"; exit 1; }
((took < 30)) || { echo "FAIL: the failed job took ${took}s to end"; exit 1; }

"$mpirun" -np 2 "$bin" --ddp "${small[@]}" --resume >"$out/resumed.log" 2>&1 || {
  cat "$out/resumed.log"; echo "FAIL: --resume did not finish"; exit 1; }
cat "$out/resumed.log"
grep -q "resumed from .* at step 20" "$out/resumed.log" || { echo "FAIL: did not resume at step 20"; exit 1; }
grep -q "step 40/40" "$out/resumed.log" || { echo "FAIL: did not train to step 40"; exit 1; }
echo "PASS: the job ended in ${took}s naming rank 1, and resumed from step 20 to 40"
