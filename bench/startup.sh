#!/usr/bin/env bash
# Whole-process wall time and peak RSS of `cairn -p hello --output-format json` against the
# scripted model server, with release builds of both. Needs hyperfine (apt-get install
# hyperfine) and GNU time (/usr/bin/time).
#
#   bench/startup.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-200}

cargo build --release --quiet -p cairn-cli -p cairn-test-support --bins
cairn=target/release/cairn
server_bin=target/release/cairn-scripted-server

work=$(mktemp -d)
# The server prints its URL as its first line once it listens; reading it waits for that.
exec 3< <(exec "$server_bin" --text "hello")
server_pid=$!
trap 'kill $server_pid 2>/dev/null; rm -rf "$work"' EXIT
read -r url <&3 || { echo "the scripted server did not start" >&2; exit 1; }

export ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=bench-key HOME="$work" CAIRN_HOME="$work/.cairn"
cd "$work"
"$OLDPWD/$cairn" -p hello --output-format json >/dev/null

echo "== wall time ($runs runs)"
hyperfine --shell=none --warmup 10 --runs "$runs" --export-json "$work/hyperfine.json" \
  "$OLDPWD/$cairn -p hello --output-format json" >/dev/null
python3 - "$work/hyperfine.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
times = sorted(r["times"])
p = lambda q: times[min(len(times) - 1, int(q * len(times)))] * 1000
print(f"mean {r['mean']*1000:.1f} ms  median {r['median']*1000:.1f} ms  p95 {p(0.95):.1f} ms  min {r['min']*1000:.1f} ms")
PY

echo "== peak RSS (10 runs)"
for _ in $(seq 10); do
  /usr/bin/time -f "%M" "$OLDPWD/$cairn" -p hello --output-format json 2>&1 >/dev/null | tail -n1
done | sort -n | awk '{a[NR]=$1} END {printf "min %.1f MB  median %.1f MB  max %.1f MB\n", a[1]/1024, a[int((NR+1)/2)]/1024, a[NR]/1024}'
