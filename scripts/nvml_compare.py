# GPU telemetry against nvidia-smi: our readings (gpu_telemetry_export.jsonl) beside
# nvidia-smi's of the same GPU in the same seconds, and the window's energy against power × time.
#
#   python3 scripts/nvml_compare.py RUN_DIR SMI_CSV
import csv, json, sys, datetime, bisect
run = sys.argv[1]
ours = [json.loads(l) for l in open(f"{run}/gpu_telemetry_export.jsonl")]
rows = []
for r in csv.reader(open(sys.argv[2])):
    if r[0].startswith('timestamp'): continue
    r = [x.strip() for x in r]
    t = datetime.datetime.strptime(r[0], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc).timestamp()
    rows.append((t, dict(util=float(r[4]), memutil=float(r[5]), memused=float(r[6]), memtotal=float(r[7]), power=float(r[8]), temp=float(r[9]), sm=float(r[10]), mem=float(r[11]), uuid=r[2])))
times = [t for t, _ in rows]
pairs = {'nvidia_gpu_utilization': ('util', 1), 'nvidia_memory_utilization': ('memutil', 1), 'nvidia_memory_used': ('memused', 1.048576e-3),
         'nvidia_memory_total': ('memtotal', 1.048576e-3), 'nvidia_power_usage': ('power', 1), 'nvidia_temperature': ('temp', 1),
         'nvidia_sm_clock': ('sm', 1), 'nvidia_memory_clock': ('mem', 1)}
diffs = {k: [] for k in pairs}
print(f"{len(ours)} readings of ours, {len(rows)} of nvidia-smi; same GPU: {ours[0]['gpu_uuid'] == rows[0][1]['uuid']}")
print("a line of ours:", json.dumps(ours[len(ours)//2]))
for s in ours:
    t = s['timestamp_ns'] / 1e9
    i = bisect.bisect_left(times, t)
    j = min([j for j in (i - 1, i) if 0 <= j < len(rows)], key=lambda j: abs(times[j] - t))
    if abs(times[j] - t) > 0.25: continue
    for k, (f, scale) in pairs.items():
        if k in s['telemetry_data']:
            nb = [rows[x][1][f] for x in range(max(0, j - 1), min(len(rows), j + 2))]
            steady = max(nb) - min(nb) <= 0.02 * max(1, abs(nb[0]))
            diffs[k].append((s['telemetry_data'][k], rows[j][1][f] * scale, steady))
for k, v in diffs.items():
    st = [(a, b) for a, b, steady in v if steady]
    worst = max((abs(a - b) for a, b in st), default=None)
    print(f"{k:28s} compared {len(v):3d} (steady {len(st):3d})  worst steady |ours - smi| {worst}")
summary = json.load(open(f"{run}/profile_export_aiperf.json"))["telemetry_data"]
gpu = summary["endpoints"]["localhost"]["gpus"]["gpu_0"]
start = datetime.datetime.fromisoformat(summary["summary"]["start_time"]).replace(tzinfo=datetime.timezone.utc).timestamp()
inside = [s for s in ours if s['timestamp_ns'] / 1e9 >= start]
before = [s for s in ours if s['timestamp_ns'] / 1e9 < start]
edge = (before[-1:] or inside[:1])[0]
integral = sum((b['timestamp_ns'] - a['timestamp_ns']) / 1e9 * (a['telemetry_data']['nvidia_power_usage'] + b['telemetry_data']['nvidia_power_usage']) / 2
               for a, b in zip([edge] + inside, inside))
print(f"window energy (telemetry_data avg): {gpu['metrics']['nvidia_energy_consumption']['avg'] * 1e6:.0f} J; power x time over the same readings: {integral:.0f} J")
print("telemetry_data fields:", list(gpu['metrics']))
sm = [(s['timestamp_ns'], s['telemetry_data'].get('nvidia_sm_utilization'), s['telemetry_data'].get('nvidia_gpu_utilization')) for s in ours]
print("SM utilization against GPU utilization, every 5th reading:", [(round(a, 1) if a is not None else None, b) for _, a, b in sm[::5]])
efficiency = {k: v["avg"] for k, v in json.load(open(f"{run}/profile_export_aiperf.json")).items()
              if k.startswith("nvidia_") and isinstance(v, dict) and "avg" in v}
print("energy metrics:", json.dumps(efficiency))
