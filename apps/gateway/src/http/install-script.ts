/**
 * The agent installer the gateway serves at `/agent/install.sh`: a POSIX sh script with this gateway's URL and the
 * SHA-256 of every agent build it serves written in, so what it downloads is checked against what the gateway
 * said when it served the script. Run as `curl -fsSL <gateway>/agent/install.sh | sudo sh -s -- <join-token>`.
 */

/** One agent build the gateway serves: `linux-x64` and the SHA-256 (hex) of its tarball. */
export interface AgentArtefact {
  platform: string;
  sha256: string;
}

/** The one command that installs and joins a machine (Enroll page, `letkite admin join-token`, README). */
export function installCommand(gatewayUrl: string, joinToken: string): string {
  return `curl -fsSL ${gatewayUrl.replace(/\/+$/, '')}/agent/install.sh | sudo sh -s -- ${joinToken}`;
}

/** A single-quoted sh word (the URL is a parsed URL already; this keeps a stray quote from ending the string). */
function shQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The script for this gateway. `artefacts` are the builds it can serve, with their checksums. */
export function renderInstallScript(gatewayUrl: string, artefacts: readonly AgentArtefact[]): string {
  const base = gatewayUrl.replace(/\/+$/, '');
  const cases = artefacts
    .filter((a) => /^[a-z0-9]+-[a-z0-9_]+$/.test(a.platform) && /^[0-9a-f]{64}$/.test(a.sha256))
    .map((a) => `    ${a.platform}) echo ${a.sha256} ;;`)
    .join('\n');
  return `#!/bin/sh
# LetKite agent installer, served by the gateway at ${base}/agent/install.sh.
#
#   curl -fsSL ${base}/agent/install.sh | sudo sh -s -- [options] <join-token>
#
# Downloads the agent for this machine from the gateway (TLS unless the gateway is on this machine), checks its
# SHA-256 against the one written below and every file against the bundle's manifest, installs it to
# <prefix>/agent, writes the systemd unit and the commented default ceiling (unless one exists), joins the gateway
# with the one-time token and enables and starts the service. Each step can be repeated: a second run with the
# same build changes nothing, a new build is swapped in and the service restarted, a joined machine is not
# joined again (remove <state-dir>/agent.json to re-join). A checksum that does not match stops it before
# anything is installed.
#
# Options:
#   --prefix DIR       where the agent goes (default /opt/letkite; the files land in DIR/agent)
#   --config-dir DIR   the ceiling's directory (default /etc/letkite)
#   --state-dir DIR    the agent's key and pinned gateway identity (default /var/lib/letkite)
#   --unit-dir DIR     where letkite-agent.service is written (default /etc/systemd/system)
#   --name NAME        the machine's name on the gateway (default: the host name)
#   --no-systemctl     write everything but do not call systemctl (no systemd as PID 1: containers, tests); the
#                      script prints the command that starts the agent instead
#   --no-account       do not create the ceiling's run_as account "letkite" when it is missing
set -eu

GATEWAY_URL=${shQuote(base)}

# The SHA-256 of each agent build this gateway served when it wrote this script.
expected_sha256() {
  case "$1" in
${cases}
    *) return 1 ;;
  esac
}

say() { printf 'letkite-install: %s\\n' "$*" >&2; }
die() { say "$*"; exit 1; }

prefix=/opt/letkite
config_dir=/etc/letkite
state_dir=/var/lib/letkite
unit_dir=/etc/systemd/system
name=
systemctl=yes
account=yes
token=
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=\${2:?--prefix needs a directory}; shift 2 ;;
    --config-dir) config_dir=\${2:?--config-dir needs a directory}; shift 2 ;;
    --state-dir) state_dir=\${2:?--state-dir needs a directory}; shift 2 ;;
    --unit-dir) unit_dir=\${2:?--unit-dir needs a directory}; shift 2 ;;
    --name) name=\${2:?--name needs a name}; shift 2 ;;
    --no-systemctl) systemctl=no; shift ;;
    --no-account) account=no; shift ;;
    --) shift ;;
    -*) die "unknown option $1" ;;
    *) [ -z "$token" ] || die "more than one join token given"; token=$1; shift ;;
  esac
done

[ "$(id -u)" = 0 ] || die "run it as root: curl -fsSL $GATEWAY_URL/agent/install.sh | sudo sh -s -- <join-token>"

# systemd creates /run/systemd/system when it runs as PID 1 (sd_booted(3)). Asked before anything is installed or
# the one-time token is used: without it the run would end at systemctl with the machine joined but not started.
if [ "$systemctl" = yes ] && [ ! -d /run/systemd/system ]; then
  die "systemd is not running on this machine (no /run/systemd/system): run this again with --no-systemctl and start the agent with the command it prints. Nothing was installed."
fi

# TLS unless the gateway is on this machine: the agent and its key come from here.
case "$GATEWAY_URL" in
  https://*) proto='=https' ;;
  http://localhost|http://localhost[:/]*|http://127.*|http://\\[::1\\]*) proto='=http' ;;
  *) die "the gateway's URL $GATEWAY_URL is not https: set LETKITE_PUBLIC_URL to its https address" ;;
esac

node=$(command -v node) || die "Node.js 20.19 or newer is needed (https://nodejs.org); none is on PATH"
"$node" -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>20||(a===20&&b>=19)?0:1)' \\
  || die "Node.js 20.19 or newer is needed; $node is $("$node" --version)"

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) die "no agent for $(uname -s)" ;;
esac
case "$(uname -m)" in
  x86_64|amd64) arch=x64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) die "no agent for the CPU $(uname -m)" ;;
esac
platform=$os-$arch
want=$(expected_sha256 "$platform") || die "this gateway serves no agent for $platform"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
say "downloading the agent for $platform from $GATEWAY_URL"
if command -v curl >/dev/null 2>&1; then
  curl -fsSL --proto "$proto" -o "$tmp/agent.tar.gz" "$GATEWAY_URL/agent/download/$platform" \\
    || die "the download failed"
elif command -v wget >/dev/null 2>&1; then
  wget -q -O "$tmp/agent.tar.gz" "$GATEWAY_URL/agent/download/$platform" || die "the download failed"
else
  die "curl or wget is needed to download the agent"
fi
if command -v sha256sum >/dev/null 2>&1; then
  got=$(sha256sum "$tmp/agent.tar.gz" | cut -d' ' -f1)
else
  got=$("$node" -e 'process.stdout.write(require("crypto").createHash("sha256").update(require("fs").readFileSync(process.argv[1])).digest("hex"))' "$tmp/agent.tar.gz")
fi
[ "$got" = "$want" ] || die "refusing the download: its SHA-256 is $got, the gateway said $want. Nothing was installed."

mkdir "$tmp/x"
tar -xzf "$tmp/agent.tar.gz" -C "$tmp/x" || die "the download is not a readable archive"
# Every file against the bundle's own manifest (the tarball's checksum covers the manifest).
"$node" -e '
  const fs = require("fs"), path = require("path"), crypto = require("crypto");
  const dir = process.argv[1];
  const m = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"));
  for (const [f, sum] of Object.entries(m.files)) {
    if (f.includes("..") || path.isAbsolute(f)) throw new Error("bad path in the manifest: " + f);
    const got = crypto.createHash("sha256").update(fs.readFileSync(path.join(dir, f))).digest("hex");
    if (got !== sum) throw new Error(f + " does not match the manifest");
  }' "$tmp/x/agent" || die "the bundle does not match its manifest. Nothing was installed."

target=$prefix/agent
if [ -f "$target/manifest.json" ] && cmp -s "$target/manifest.json" "$tmp/x/agent/manifest.json"; then
  say "the agent in $target is this build already"
  changed=no
else
  mkdir -p "$prefix"
  chmod 0755 "$prefix"
  rm -rf "$target.new" "$target.old"
  cp -R "$tmp/x/agent" "$target.new"
  chown -R 0:0 "$target.new"
  chmod -R go-w "$target.new"
  [ ! -e "$target" ] || mv "$target" "$target.old"
  mv "$target.new" "$target"
  rm -rf "$target.old"
  say "installed the agent to $target"
  changed=yes
fi

# <prefix>/bin/letkite: the agent's command (letkite agent join|run, letkite ceiling check|init); the unit runs it.
mkdir -p "$prefix/bin"
cat > "$tmp/letkite" <<EOF
#!/bin/sh
# Written by the LetKite installer from $GATEWAY_URL: the agent in $target, on $node.
exec '$node' '$target/letkite-agent.mjs' "\\$@"
EOF
if ! { [ -f "$prefix/bin/letkite" ] && cmp -s "$prefix/bin/letkite" "$tmp/letkite"; }; then
  install -m 0755 "$tmp/letkite" "$prefix/bin/letkite"
  changed=yes
fi

exec_start="$prefix/bin/letkite agent run"
mkdir -p "$unit_dir"
sed -e "s|^ExecStart=/opt/letkite/bin/letkite |ExecStart=$prefix/bin/letkite |" \\
    -e "s|^Environment=LETKITE_AGENT_STATE=.*|Environment=LETKITE_AGENT_STATE=$state_dir|" \\
    -e "s|^Environment=LETKITE_CEILING=.*|Environment=LETKITE_CEILING=$config_dir/ceiling.toml|" \\
    "$target/letkite-agent.service" > "$tmp/unit"
unit=$unit_dir/letkite-agent.service
if [ -f "$unit" ] && cmp -s "$unit" "$tmp/unit"; then
  say "$unit is up to date"
else
  install -m 0644 "$tmp/unit" "$unit"
  say "wrote $unit"
  changed=yes
fi

mkdir -p "$config_dir"
chmod 0755 "$config_dir"
"$node" "$target/letkite-agent.mjs" ceiling init --ceiling "$config_dir/ceiling.toml" >&2

# The default ceiling runs commands as "letkite": an account of its own, no login, its home the ceiling's ~.
if [ "$account" = yes ] && grep -q '^run_as *= *"letkite"' "$config_dir/ceiling.toml" && ! id letkite >/dev/null 2>&1; then
  if command -v useradd >/dev/null 2>&1; then
    useradd --system --create-home --home-dir /home/letkite --shell /usr/sbin/nologin letkite
  else
    adduser -S -h /home/letkite -s /sbin/nologin letkite
  fi
  say "created the account letkite (the ceiling's run_as)"
fi

mkdir -p "$state_dir"
chmod 0700 "$state_dir"
if [ -f "$state_dir/agent.json" ]; then
  say "this machine is joined already (state in $state_dir; remove $state_dir/agent.json to join again)"
else
  [ -n "$token" ] || die "a join token is needed: curl -fsSL $GATEWAY_URL/agent/install.sh | sudo sh -s -- <join-token>"
  # On standard input, not the command line: the token stays out of ps.
  if [ -n "$name" ]; then
    printf '%s\\n' "$token" | "$node" "$target/letkite-agent.mjs" join "$GATEWAY_URL" - --state-dir "$state_dir" \\
      --ceiling "$config_dir/ceiling.toml" --name "$name" >&2
  else
    printf '%s\\n' "$token" | "$node" "$target/letkite-agent.mjs" join "$GATEWAY_URL" - --state-dir "$state_dir" \\
      --ceiling "$config_dir/ceiling.toml" >&2
  fi
  changed=yes
fi

if [ "$systemctl" = no ]; then
  say "not calling systemctl (--no-systemctl). Start the agent with:"
  say "  LETKITE_AGENT_STATE=$state_dir LETKITE_CEILING=$config_dir/ceiling.toml $exec_start"
  exit 0
fi
systemctl daemon-reload
# --quiet: without the "Created symlink" lines, with its errors.
systemctl enable --quiet letkite-agent.service
if [ "$changed" = yes ] || ! systemctl is-active --quiet letkite-agent.service; then
  systemctl restart letkite-agent.service
fi
say "the agent runs: systemctl status letkite-agent; journalctl -u letkite-agent -f"
`;
}
