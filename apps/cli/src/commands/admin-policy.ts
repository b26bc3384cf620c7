import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  createPolicy,
  deletePolicy,
  getAccountSettings,
  listPolicies,
  openPolicyStore,
  type Store,
  showPolicy,
  updateAccountSettings,
  updatePolicy,
} from '@letkite/gateway';
import { type CliIo, EXIT_OK, UsageError } from '../io';

export const POLICY_USAGE =
  '       letkite admin policy list | show NAME | create --file F.toml | update NAME --file F.toml | delete NAME';
export const ACCOUNT_USAGE =
  '       letkite admin account show | set [--mcp-http on|off] [--stdio-bridge on|off] [--legacy-sse on|off]\n' +
  '                                        [--disable-tools GROUP,…|none]';

/** The services' context for the installation's owner at the keyboard (`cli:admin` holds every permission). */
function cliCtx(store: Store, account: string) {
  return {
    actor: { kind: 'cli' as const, command: 'admin' },
    account,
    deps: { store, policies: openPolicyStore(store), now: () => new Date() },
    now: new Date(),
    requestId: randomUUID(),
  };
}

function readSource(file: string | undefined, usage: string): string {
  if (!file) throw new UsageError(usage);
  try {
    return readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(`--file "${file}" is not a readable file`);
  }
}

/**
 * `letkite admin policy …`: the account's policies, through the same operations as `/api/policies` (so the same
 * checks, errors with their lines, audit rows). `show` prints the TOML of the current version to stdout and the
 * versions and users to stderr, so `show NAME > F.toml` gives a file to edit and `update`.
 */
export async function adminPolicy(
  args: string[],
  io: CliIo,
  withStore: <T>(data: string | undefined, fn: (s: { store: Store; accountId: string }) => Promise<T>) => Promise<T>,
): Promise<number> {
  const [verb, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    options: { file: { type: 'string' }, data: { type: 'string' } },
    strict: true,
    allowPositionals: true,
  });
  const name = positionals[0];
  return withStore(values.data, async ({ store, accountId }) => {
    const ctx = cliCtx(store, accountId);
    switch (verb) {
      case 'list': {
        for (const p of (await listPolicies.call(ctx, {})).policies) {
          const by = p.builtin ? 'built-in' : `v${p.version} by ${p.author} at ${p.at}`;
          io.stdout.write(`${p.name}\t${by}\ttools: ${p.tool_groups.join(',') || '-'}\n`);
        }
        return EXIT_OK;
      }
      case 'show': {
        if (!name) throw new UsageError(POLICY_USAGE);
        const shown = await showPolicy.call(ctx, { name });
        io.stdout.write(shown.policy.source);
        for (const v of shown.versions) io.stderr.write(`# v${v.version} ${v.author ?? 'built-in'} ${v.at ?? ''}\n`);
        for (const u of shown.used_by)
          io.stderr.write(`# used by ${u.kind} "${u.label}" (${u.id}) of ${u.user_name}\n`);
        return EXIT_OK;
      }
      case 'create': {
        const saved = await createPolicy.call(ctx, { source: readSource(values.file, POLICY_USAGE) });
        io.stderr.write(`Created policy "${saved.policy.name}" (version ${saved.policy.version}).\n`);
        return EXIT_OK;
      }
      case 'update': {
        if (!name) throw new UsageError(POLICY_USAGE);
        const saved = await updatePolicy.call(ctx, { name, source: readSource(values.file, POLICY_USAGE) });
        io.stderr.write(
          `Saved policy "${name}" as version ${saved.policy.version}; the next call of every connection using it follows it.\n`,
        );
        return EXIT_OK;
      }
      case 'delete': {
        if (!name) throw new UsageError(POLICY_USAGE);
        await deletePolicy.call(ctx, { name });
        io.stderr.write(`Deleted policy "${name}".\n`);
        return EXIT_OK;
      }
      default:
        throw new UsageError(POLICY_USAGE);
    }
  });
}

function onOff(flag: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'on') return true;
  if (value === 'off') return false;
  throw new UsageError(`${flag} takes "on" or "off", not "${value}"`);
}

/** `letkite admin account show|set …`: the account switches, applied to the next request without a restart. */
export async function adminAccount(
  args: string[],
  io: CliIo,
  withStore: <T>(data: string | undefined, fn: (s: { store: Store; accountId: string }) => Promise<T>) => Promise<T>,
): Promise<number> {
  const [verb, ...rest] = args;
  if (verb !== 'show' && verb !== 'set') throw new UsageError(ACCOUNT_USAGE);
  const { values } = parseArgs({
    args: rest,
    options: {
      'mcp-http': { type: 'string' },
      'stdio-bridge': { type: 'string' },
      'legacy-sse': { type: 'string' },
      'disable-tools': { type: 'string' },
      data: { type: 'string' },
    },
    strict: true,
  });
  const change = {
    mcp_http: onOff('--mcp-http', values['mcp-http']),
    stdio_bridge: onOff('--stdio-bridge', values['stdio-bridge']),
    legacy_sse: onOff('--legacy-sse', values['legacy-sse']),
    disabled_tool_groups:
      values['disable-tools'] === undefined
        ? undefined
        : values['disable-tools'] === 'none'
          ? []
          : values['disable-tools']
              .split(',')
              .map((g) => g.trim())
              .filter((g) => g !== ''),
  };
  return withStore(values.data, async ({ store, accountId }) => {
    const ctx = cliCtx(store, accountId);
    const { settings } =
      verb === 'show'
        ? await getAccountSettings.call(ctx, {})
        : await updateAccountSettings.call(
            ctx,
            Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)),
          );
    const word = (b: boolean) => (b ? 'on' : 'off');
    io.stdout.write(
      `mcp_http\t${word(settings.mcp_http)}\nstdio_bridge\t${word(settings.stdio_bridge)}\n` +
        `legacy_sse\t${word(settings.legacy_sse)}\ndisabled_tool_groups\t${settings.disabled_tool_groups.join(',') || '-'}\n`,
    );
    return EXIT_OK;
  });
}
