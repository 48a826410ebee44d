#!/usr/bin/env bash
# bench/probe.sh: the cost of edgebench's probe against dstat, sampling the
# same machine at the same time.
#
# It runs `edgebench probe --interval 1s --count 30` and Debian's
# `dstat -cdnm 1 30` side by side, each writing to /dev/null, and prints for
# each its CPU seconds (user+sys, from wait4's rusage, microsecond
# resolution), its peak RSS (ru_maxrss) and the ratios edgebench/dstat.
# The goal is edgebench's CPU <= 0.1x dstat's.
#
#   bench/probe.sh
#   COUNT=60 WATCH=nginx bench/probe.sh        # also watch every nginx process
#   EB_CPU=1 DSTAT_CPU=1 bench/probe.sh        # pin both with taskset
#
# Needs dstat, python3 (dstat's own interpreter) and go; taskset if pinning.
set -euo pipefail

COUNT=${COUNT:-30}
INTERVAL=${INTERVAL:-1}
WATCH=${WATCH:-}
EB_CPU=${EB_CPU:-}
DSTAT_CPU=${DSTAT_CPU:-}

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for tool in dstat python3 go; do
	command -v "$tool" >/dev/null || { echo "bench/probe.sh: $tool is missing (apt-get install dstat python3)" >&2; exit 1; }
done
if [[ -n $EB_CPU || -n $DSTAT_CPU ]]; then
	command -v taskset >/dev/null || { echo "bench/probe.sh: taskset is missing (util-linux)" >&2; exit 1; }
fi

(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$work/edgebench" ./cmd/edgebench)

eb=("$work/edgebench" probe --interval "${INTERVAL}s" --count "$COUNT")
[[ -n $WATCH ]] && eb+=(--watch "$WATCH")
ds=(dstat -cdnm "$INTERVAL" "$COUNT")
[[ -n $EB_CPU ]] && eb=(taskset -c "$EB_CPU" "${eb[@]}")
[[ -n $DSTAT_CPU ]] && ds=(taskset -c "$DSTAT_CPU" "${ds[@]}")

echo "edgebench: ${eb[*]}"
echo "dstat:     ${ds[*]}"
echo "($COUNT samples, ${INTERVAL}s apart, both at once; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg))"

# run_pair: start both tools at once; reap each with wait4 for its own
# CPU time (taskset execs the command, so the PID stays the tool's), and poll
# /proc/PID/status for VmHWM, the peak RSS of the tool's own image
# (ru_maxrss would include the python that forked it).
cat >"$work/pair.py" <<'PY'
import json, os, subprocess, sys, time
eb, ds = json.loads(sys.argv[1]), json.loads(sys.argv[2])
null = open(os.devnull, "w")
t0 = time.monotonic()
procs = {}
for name, argv in (("edgebench", eb), ("dstat", ds)):
    p = subprocess.Popen(argv, stdout=null, stderr=subprocess.PIPE, env=dict(os.environ, TERM="dumb"))
    procs[p.pid] = [name, p, 0]
res = {}
def hwm(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0
while len(res) < len(procs):
    for pid, e in procs.items():
        if e[0] not in res:
            e[2] = max(e[2], hwm(pid))
    pid, status, ru = os.wait4(-1, os.WNOHANG)
    if pid == 0:
        time.sleep(0.05)
        continue
    if pid not in procs:
        continue
    name, p, peak = procs[pid]
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"bench/probe.sh: {name} failed ({code}): {p.stderr.read().decode(errors='replace').strip()}")
    res[name] = {"wall": time.monotonic() - t0, "user": ru.ru_utime, "sys": ru.ru_stime, "rss_mb": peak / 1024}
print(json.dumps(res))
PY
tojson() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "$@"; }

# The start-up cost of each (one sample), then the measured run.
eb1=("${eb[@]}") ds1=("${ds[@]}")
eb1[${#eb1[@]}-1]=1 ds1[${#ds1[@]}-1]=1
startup=$(python3 "$work/pair.py" "$(tojson "${eb1[@]}")" "$(tojson "${ds1[@]}")")
run=$(python3 "$work/pair.py" "$(tojson "${eb[@]}")" "$(tojson "${ds[@]}")")

python3 - "$startup" "$run" "$COUNT" <<'PY'
import json, sys
st, run, n = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
cpu = lambda r: r["user"] + r["sys"]
print(f"{'tool':<10} {'wall s':>7} {'user s':>7} {'sys s':>7} {'CPU s':>7} {'start-up CPU s':>15} {'CPU ms/sample after start-up':>29} {'peak RSS MB':>12}")
per = {}
for name in ("edgebench", "dstat"):
    r, s = run[name], st[name]
    per[name] = (cpu(r) - cpu(s)) / max(n - 1, 1) * 1000
    print(f"{name:<10} {r['wall']:7.1f} {r['user']:7.3f} {r['sys']:7.3f} {cpu(r):7.3f} {cpu(s):15.3f} {per[name]:29.2f} {r['rss_mb']:12.1f}")
e, d = run["edgebench"], run["dstat"]
print(f"ratio edgebench/dstat: CPU {cpu(e) / cpu(d):.3f}x, per sample after start-up {per['edgebench'] / per['dstat']:.3f}x, "
      f"peak RSS {e['rss_mb'] / d['rss_mb']:.2f}x (goal: CPU <= 0.1x)")
PY
