import type { ReportedCeiling } from '@letkite/protocol/api';

/** One line of a machine's effective ceiling, in words. `items` lists a row's entries (paths, rules, targets). */
export interface CeilingRow {
  key: string;
  label: string;
  value: string;
  items: string[];
}

const shellWords: Record<string, string> = {
  off: 'off — no commands run',
  sandboxed: 'sandboxed — commands run inside the OS sandbox',
  full: 'full — commands run unsandboxed',
};
const screenWords: Record<string, string> = { off: 'off', observe: 'may be seen', act: 'may be seen and driven' };
const commandModeWords: Record<string, string> = {
  any: 'as each policy says',
  allowlist: 'allowlist only — listed programs, no shell',
};
const accessWords: Record<string, string> = { rw: 'read and write', ro: 'read only' };

const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
const yesNo = (v: unknown, yes: string, no: string) => (v === true ? yes : v === false ? no : text(v));
const field = (o: unknown, k: string): unknown =>
  o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined;

/** How each known key reads; the order is the order of the rows. */
const known: { key: string; label: string; row: (v: unknown) => Omit<CeilingRow, 'key' | 'label'> }[] = [
  { key: 'shell', label: 'Shell', row: (v) => ({ value: shellWords[text(v)] ?? text(v), items: [] }) },
  { key: 'commands_mode', label: 'Commands', row: (v) => ({ value: commandModeWords[text(v)] ?? text(v), items: [] }) },
  {
    key: 'files',
    label: 'Files',
    row: (v) => {
      const entries = list(v).map((f) => {
        const access = text(field(f, 'access'));
        return `${text(field(f, 'path'))} — ${accessWords[access] ?? access}`;
      });
      return {
        value: entries.length ? `${entries.length} ${entries.length === 1 ? 'rule' : 'rules'}` : 'none',
        items: entries,
      };
    },
  },
  {
    key: 'deny',
    label: 'Hidden paths',
    row: (v) => ({ value: list(v).length ? `${list(v).length} hidden` : 'none', items: list(v).map(text) }),
  },
  { key: 'gui', label: 'Screen', row: (v) => ({ value: screenWords[text(v)] ?? text(v), items: [] }) },
  {
    key: 'gui_apps',
    label: 'Screen apps',
    row: (v) => ({ value: list(v).length ? 'only these' : 'any', items: list(v).map(text) }),
  },
  {
    key: 'tunnel_targets',
    label: 'Tunnels',
    row: (v) => ({ value: list(v).length ? 'only to these' : 'none', items: list(v).map(text) }),
  },
  { key: 'terminals', label: 'Terminals', row: (v) => ({ value: yesNo(v, 'allowed', 'not allowed'), items: [] }) },
  { key: 'transfers', label: 'File transfers', row: (v) => ({ value: yesNo(v, 'allowed', 'not allowed'), items: [] }) },
  { key: 'wake', label: 'Wake-on-LAN', row: (v) => ({ value: yesNo(v, 'allowed', 'not allowed'), items: [] }) },
  { key: 'run_as', label: 'Runs as', row: (v) => ({ value: text(v), items: [] }) },
  {
    key: 'rules',
    label: 'Machine rules',
    row: (v) => ({
      value: list(v).length ? `${list(v).length} added to every policy` : 'none',
      items: list(v).map((r) => `${text(field(r, 'match'))} → ${text(field(r, 'verdict'))}`),
    }),
  },
  {
    key: 'allow',
    label: 'Allowed programs',
    row: (v) => ({ value: list(v).length ? `${list(v).length} listed` : 'none', items: list(v).map(text) }),
  },
  {
    key: 'approvers',
    label: 'Pinned approvers',
    row: (v) => ({
      value: list(v).length ? 'the machine checks approvals itself' : 'none',
      items: list(v).map((a) => text(field(a, 'name'))),
    }),
  },
];

/**
 * The ceiling a machine reports, as readable rows: known keys in words and in a fixed order, and any key this
 * dashboard does not know yet as its JSON (shown, never dropped — it may be what refuses a call).
 */
export function ceilingRows(ceiling: ReportedCeiling): CeilingRow[] {
  const rows: CeilingRow[] = [];
  for (const k of known) {
    if (k.key in ceiling) rows.push({ key: k.key, label: k.label, ...k.row(ceiling[k.key]) });
  }
  for (const [key, value] of Object.entries(ceiling)) {
    if (key === 'version' || known.some((k) => k.key === key)) continue;
    rows.push({ key, label: key, value: text(value), items: [] });
  }
  return rows;
}
