#!/usr/bin/env bash
# The GPU check of a session that is lent a CUDA machine (see CONTRIBUTING/README "Proof").
# Runs, side by side: `verify --device cuda` on every fixture, `verify --device cuda` on each
# user script of tests/user_scripts, and the slow test suite (CUDA tests included), writing
# what it finds under $OUT (gpu.txt, verify.json, scripts.jsonl, slow.log).
# Packages the machine lacks travel as wheels in .whl/ (libcst, trl and its datasets).
set -u
OUT=${OUT:-/tmp/gpu-check}; mkdir -p "$OUT"
export OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 3
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
LIMIT=${LIMIT:-420}
{ nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv
  python3 -c 'import sys, importlib.metadata as md, torch, transformers, accelerate, peft
print("python", sys.version.split()[0]); print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))
print("transformers", transformers.__version__, "accelerate", accelerate.__version__, "peft", peft.__version__, "libcst", md.version("libcst"))
try:
    import trl; print("trl", trl.__version__)
except Exception as e: print("trl import failed:", repr(e))'
} > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"

( timeout "$LIMIT" python3 -m precision_lint verify --device cuda --jobs 6 --output-format json \
    > "$OUT/verify.json" 2> "$OUT/verify.err"; echo "verify fixtures rc=$?" >> "$OUT/rc.txt" ) &
( for s in tests/user_scripts/*.py; do
    ( timeout "$LIMIT" python3 -m precision_lint verify "$s" --device cuda --output-format json \
        > "$OUT/script_$(basename "$s" .py).json" 2>> "$OUT/scripts.err"; echo "verify $s rc=$?" >> "$OUT/rc.txt" ) &
  done; wait
  for f in "$OUT"/script_*.json; do printf '%s\t%s\n' "$(basename "$f")" "$(tr -d '\n' < "$f")"; done > "$OUT/scripts.jsonl"
  rm -f "$OUT"/script_*.json ) &
( timeout "$LIMIT" python3 -m pytest -m slow -n 6 -p no:cacheprovider -q -rs tests/test_harness.py \
    tests/test_verify_script.py tests/test_fixtures_fail.py > "$OUT/slow.log" 2>&1; echo "slow suite rc=$?" >> "$OUT/rc.txt" ) &
wait
cat "$OUT/rc.txt"; tail -30 "$OUT/slow.log"
