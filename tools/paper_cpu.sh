#!/usr/bin/env bash
# Run the shipped `paper-cpu` benchmark in the background, resumably, at the lowest CPU priority (issue 26).
#   tools/paper_cpu.sh RUN_DIR [WORKERS]
# Plans RUN_DIR once (plan --write), then WORKERS one-thread queues run the unsharded units, then the long units'
# shards (run-unit --shard), then the units that merge them. Finished units and shards are skipped on
# a rerun (run-unit exits 0 at once; shards that cpu.log records as rc=0 are not even started, which saves
# the 5 CPU-seconds each start costs), so the script can be started again after an interruption, on any day.
# Each process's user+system CPU seconds go to RUN_DIR/cpu.log (`awk '{s+=$(NF-3)+$(NF-2)} END {print s/3600}'` sums
# the CPU-hours); `robustsuite collect RUN_DIR` assembles report.json from whatever has finished.
set -u
dir=${1:?usage: tools/paper_cpu.sh RUN_DIR [WORKERS]}
workers=${2:-2}
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
[ -f "$dir/plan.json" ] || uv run robustsuite plan paper-cpu --out "$dir" --write >/dev/null || exit 2
list() {  # $1 = cheap: the unsharded units, then every shard; $1 = merge: the sharded units
    uv run python - "$dir" "$1" <<'PY'
import json, pathlib, sys
plan = json.load(open(f"{sys.argv[1]}/plan.json"))
shards = plan.get("shards", {})
log = pathlib.Path(sys.argv[1], "cpu.log")
done = {line.rsplit(" ", 4)[0] for line in (log.read_text().splitlines() if log.exists() else []) if line.endswith("rc=0")}
if sys.argv[2] == "cheap":
    print("\n".join(u for u in plan["units"] if u not in shards))
    jobs = (f"{u} --shard {k}" for u, n in sorted(shards.items(), key=lambda kv: kv[1]) for k in range(n))
    print("\n".join(j for j in jobs if j not in done))
else:
    print("\n".join(shards))
PY
}
run() {  # one job: run-unit with its CPU seconds logged
    /usr/bin/time -f "$1 %U %S %e rc=%x" -a -o "$dir/cpu.log" nice -n 19 uv run robustsuite run-unit "$dir" $1 \
        >>"$dir/paper_cpu.log" 2>&1
}
export -f run; export dir
list cheap | xargs -P "$workers" -I{} bash -c 'run "{}"'
list merge | xargs -P "$workers" -I{} bash -c 'run "{}"'  # every shard is done: the units only merge
uv run robustsuite collect "$dir" >>"$dir/paper_cpu.log" 2>&1
