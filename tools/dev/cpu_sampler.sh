#!/bin/bash
# Samples, once a minute, the CPU seconds (its own user + system, not its children's: they are sampled themselves,
# and a reaped worker's time would count twice) of every process whose
# command line matches PATTERN, appending "TIME PID STARTTIME SECONDS" lines to OUT. A long run's cpu.log gets a
# task's CPU time only when the task finishes; this counts the work of tasks killed at a session's end too: the run's
# CPU time is the sum, over (PID, STARTTIME), of each process's last sample.
#
#   setsid nohup tools/dev/cpu_sampler.sh "papercpu/.venv/bin/python" RUN_DIR/cpu-samples.log &
set -u
PATTERN=${1:?usage: cpu_sampler.sh PATTERN OUT}
OUT=${2:?usage: cpu_sampler.sh PATTERN OUT}
TCK=$(getconf CLK_TCK)
while true; do
  now=$(date -u +%FT%TZ)
  for pid in $(pgrep -f "$PATTERN"); do
    [ "$pid" = "$$" ] && continue  # not the sampler itself (its command line holds PATTERN)
    read -r -a f < "/proc/$pid/stat" 2>/dev/null || continue
    echo "$now $pid ${f[21]} $(( (f[13] + f[14]) / TCK ))" >> "$OUT"
  done
  sleep 60
done
