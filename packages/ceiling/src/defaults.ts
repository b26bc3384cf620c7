import { Ceiling } from './ceiling-schema';

/** Where the agent and `letkite ceiling check` look by default on Linux and macOS (DESIGN §5). */
export const DEFAULT_CEILING_PATH = '/etc/letkite/ceiling.toml';

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * The ceiling the agent uses when `/etc/letkite/ceiling.toml` does not exist (it says so in its log and in its
 * report). Derived from the schema's defaults so the two cannot drift; the README explains each choice.
 */
export const DEFAULT_CEILING: Ceiling = deepFreeze(Ceiling.parse({ version: 1 }));

/**
 * Everything off: what an agent enforces while its ceiling file is invalid, has the wrong owner or is writable
 * by others (DESIGN §5, fail closed). Every request is refused; this value is what it reports.
 */
export const CLOSED_CEILING: Ceiling = deepFreeze(
  Ceiling.parse({
    version: 1,
    shell: 'off',
    commands_mode: 'allowlist',
    files: [],
    deny: ['*'],
    gui: 'off',
    tunnel_targets: [],
    terminals: false,
    transfers: false,
    wake: false,
  }),
);
