/**
 * The form for a policy's common keys: read from the parsed policy, written back as TOML. Writing from the form
 * replaces the editor's text (comments included); the TOML editor stays the whole truth for everything else.
 */
export interface PolicyFormValues {
  name: string;
  shell: 'off' | 'sandboxed' | 'full';
  gui: 'off' | 'observe' | 'act';
  /** One `path access` per line, e.g. `/srv rw`. */
  files: string;
  /** One pattern per line. */
  deny: string;
  tunnelTargets: string;
  rulesets: string;
  commandDefault: 'allow' | 'confirm' | 'approve' | 'deny';
  /** One `verdict pattern` per line, e.g. `approve git push *`. */
  rules: string;
  approvalTools: string;
  approvers: 'connector' | 'any_admin' | 'four_eyes';
  timeout: string;
}

type Parsed = Record<string, unknown>;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const obj = (v: unknown): Parsed => (v !== null && typeof v === 'object' ? (v as Parsed) : {});
const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');

/** The form's values from a parsed policy (what the gateway's validate answers). */
export function formFromParsed(p: Parsed): PolicyFormValues {
  const commands = obj(p.commands);
  const approval = obj(p.approval);
  const timeoutMs = Number(approval.timeout ?? 600_000);
  return {
    name: String(p.name ?? ''),
    shell: (p.shell as PolicyFormValues['shell']) ?? 'off',
    gui: (p.gui as PolicyFormValues['gui']) ?? 'off',
    files: list(p.files)
      .map((f) => `${obj(f).path} ${obj(f).access}`)
      .join('\n'),
    deny: list(p.deny).join('\n'),
    tunnelTargets: list(p.tunnel_targets).join('\n'),
    rulesets: list(commands.rulesets).join('\n'),
    commandDefault: (commands.default as PolicyFormValues['commandDefault']) ?? 'approve',
    rules: list(commands.rules)
      .map((r) => `${obj(r).verdict} ${obj(r).match}`)
      .join('\n'),
    approvalTools: list(approval.tools).join('\n'),
    approvers: (approval.approvers as PolicyFormValues['approvers']) ?? 'connector',
    timeout: timeoutMs % 3_600_000 === 0 ? `${timeoutMs / 3_600_000}h` : `${Math.round(timeoutMs / 60_000)}m`,
  };
}

const str = (s: string) => JSON.stringify(s);
const arr = (items: string[]) => `[${items.map(str).join(', ')}]`;

/**
 * The TOML for the form's values, keeping the keys the form does not show (gui_apps, mode, allow) from `keep`.
 */
export function tomlFromForm(v: PolicyFormValues, keep: Parsed): string {
  const commands = obj(keep.commands);
  const files = lines(v.files).map((l) => {
    const [path = '', access = 'ro'] = l.split(/\s+/);
    return `{ path = ${str(path)}, access = ${str(access)} }`;
  });
  const rules = lines(v.rules).map((l) => {
    const [verdict = 'approve', ...rest] = l.split(/\s+/);
    return `{ match = ${str(rest.join(' '))}, verdict = ${str(verdict)} }`;
  });
  const out = [
    `name = ${str(v.name)}`,
    `shell = ${str(v.shell)}`,
    `gui = ${str(v.gui)}`,
    `gui_apps = ${arr(list(keep.gui_apps).map(String))}`,
    `files = [${files.length ? `\n  ${files.join(',\n  ')},\n` : ''}]`,
    `deny = ${arr(lines(v.deny))}`,
    `tunnel_targets = ${arr(lines(v.tunnelTargets))}`,
    '',
    '[commands]',
    `mode = ${str(String(commands.mode ?? 'shell'))}`,
    `rulesets = ${arr(lines(v.rulesets))}`,
    `default = ${str(v.commandDefault)}`,
    `rules = [${rules.length ? `\n  ${rules.join(',\n  ')},\n` : ''}]`,
    `allow = ${arr(list(commands.allow).map(String))}`,
    '',
    '[approval]',
    `tools = ${arr(lines(v.approvalTools))}`,
    `approvers = ${str(v.approvers)}`,
    `timeout = ${str(v.timeout)}`,
  ];
  return `${out.join('\n')}\n`;
}
