import type { Ceiling } from './ceiling-schema';
import { DEFAULT_CEILING } from './defaults';

function tomlString(text: string): string {
  // JSON's escapes are all valid TOML basic-string escapes; TOML also forbids a raw DEL.
  return JSON.stringify(text).replace(/\x7f/g, '\\u007f');
}

function tomlInline(value: unknown): string {
  if (typeof value === 'string') return tomlString(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(tomlInline).join(', ')}]`;
  if (value && typeof value === 'object') {
    const fields = Object.entries(value).map(
      ([k, v]) => `${/^[A-Za-z0-9_-]+$/.test(k) ? k : tomlString(k)} = ${tomlInline(v)}`,
    );
    return `{ ${fields.join(', ')} }`;
  }
  throw new TypeError(`cannot write ${typeof value} as TOML`);
}

/** `key = value`, with arrays of more than one element written one element per line. */
function assignment(key: string, value: unknown): string {
  if (Array.isArray(value) && value.length > 1) {
    return `${key} = [\n${value.map((v) => `  ${tomlInline(v)},`).join('\n')}\n]`;
  }
  return `${key} = ${tomlInline(value)}`;
}

/** What each key means, written above it in a commented file. */
const explanations: Record<keyof Ceiling, string[]> = {
  version: ['Format version; required.'],
  shell: [
    'The most any policy gets for commands: off | sandboxed | full.',
    'sandboxed runs every command inside Landlock (Linux) or Seatbelt (macOS) limited to the file rules below.',
  ],
  commands_mode: ['any: policies choose | allowlist: only listed programs, started without a shell.'],
  files: [
    'Reach of file tools and the sandbox. "~" is the home of run_as, "*" is everything.',
    'A policy gets rw on a path only where this list also says rw.',
  ],
  deny: ['These paths look as if they did not exist, whatever a policy says (globs: * ? **).'],
  gui: ['Screen tools: off | observe | act.'],
  gui_apps: ['When non-empty, screen tools only see and drive these applications.'],
  tunnel_targets: ['Where tunnels may lead: "host:port", "IP:port", "CIDR:port" (port N, N-M or *). Empty: none.'],
  terminals: ['Interactive terminals (never available in allowlist mode).'],
  transfers: ['File transfers between machines (still limited by the file rules).'],
  wake: ['Wake-on-LAN of other devices through this machine.'],
  run_as: ['The OS account commands and file operations run as. "root" only if you mean it.'],
  rules: [
    'Command rules added to every policy as a layer of their own; the strictest verdict wins.',
    'Example: rules = [ { match = "systemctl *", verdict = "approve" } ]',
    'An approve verdict here needs an approval this machine verifies itself (see approvers).',
  ],
  allow: [
    'With commands_mode = "allowlist": the only programs (+ argument patterns) that run here, whatever a policy',
    "lists; a command must be on this list and on the policy's. Empty: no command runs.",
  ],
  approvers: [
    "Passkeys this machine trusts to approve calls; the web app's Security page prints the line for each of yours.",
    'When any are pinned, every approval this machine requires must be signed by one of them (passkey only, no',
    'TOTP); with none, a ceiling approve rule can never be satisfied.',
    'Example: approvers = [ { name = "Petra", credential_id = "…", public_key = "…", rp_id = "letkite.example.com" } ]',
  ],
};

const keyOrder: (keyof Ceiling)[] = [
  'version',
  'shell',
  'commands_mode',
  'files',
  'deny',
  'gui',
  'gui_apps',
  'tunnel_targets',
  'terminals',
  'transfers',
  'wake',
  'run_as',
  'rules',
  'allow',
  'approvers',
];

/** Writes a ceiling as TOML that `parseCeilingToml` reads back to the same value; `comments` explains each key. */
export function renderCeilingToml(ceiling: Ceiling, options: { comments?: boolean } = {}): string {
  const blocks = keyOrder.map((key) => {
    const line = assignment(key, ceiling[key]);
    return options.comments ? `${explanations[key].map((c) => `# ${c}`).join('\n')}\n${line}` : line;
  });
  return `${blocks.join(options.comments ? '\n\n' : '\n')}\n`;
}

/**
 * The commented ceiling.toml that `letkite agent join` writes: the defaults spelled out, so the administrator
 * sees at once what can be tightened.
 */
export function renderDefaultCeilingToml(): string {
  const header = [
    '# LetKite machine ceiling: the most any policy can do on this machine, whatever the gateway says.',
    '# Only root may own and write this file (mode 0644 or stricter); the agent applies edits at once and refuses',
    '# everything while the file is invalid. Check it with: letkite ceiling check',
    '# These are the defaults the agent also uses when this file does not exist. Tighten what you do not need.',
  ];
  return `${header.join('\n')}\n\n${renderCeilingToml(DEFAULT_CEILING, { comments: true })}`;
}
