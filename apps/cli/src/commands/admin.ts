import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  createApiToken,
  createJoinToken,
  deploymentMode,
  type Grant,
  installCommand,
  openPolicyStore,
  openStore,
  parseDuration,
  readRecordedPublicUrl,
  type Store,
  saveRedactionPatterns,
  toolsForScopeList,
} from '@letkite/gateway';
import { builtinPolicyNames, parsePolicyToml } from '@letkite/policy';
import { type CliIo, EXIT_OK, UsageError } from '../io';
import { dataDir } from '../paths';
import { AUDIT_USAGE, adminAudit } from './admin-audit';
import { adminMachine, MACHINE_USAGE } from './admin-machine';
import { ACCOUNT_USAGE, adminAccount, adminPolicy, POLICY_USAGE } from './admin-policy';

/**
 * `letkite admin …`: acts on the gateway's store directly (the same SQLite file the running gateway uses), as the
 * account owner. Whoever can read the data directory is the owner of this installation.
 */
export async function admin(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'token' && rest[0] === 'create') return tokenCreate(rest.slice(1), io);
  if (sub === 'join-token') return joinToken(rest, io);
  if (sub === 'redaction' && (rest[0] === 'list' || rest[0] === 'set')) return redaction(rest[0], rest.slice(1), io);
  const withStore = <T>(data: string | undefined, fn: (s: { store: Store; accountId: string }) => Promise<T>) =>
    withOwnerStore(data, io, ({ store, account }) => fn({ store, accountId: account.id }));
  if (sub === 'policy') return adminPolicy(rest, io, withStore);
  if (sub === 'audit') return adminAudit(rest, io, withStore);
  if (sub === 'account') return adminAccount(rest, io, withStore);
  if (sub === 'machine') return adminMachine(rest, io, withStore);
  throw new UsageError(
    `${TOKEN_USAGE}\n       letkite admin join-token [--ttl 15m] [--url URL]\n${REDACTION_USAGE}\n${POLICY_USAGE}\n${ACCOUNT_USAGE}\n${AUDIT_USAGE}\n${MACHINE_USAGE}`,
  );
}

async function withOwnerStore<T>(
  data: string | undefined,
  io: CliIo,
  fn: (ctx: Awaited<ReturnType<typeof open>>) => Promise<T>,
): Promise<T> {
  const ctx = await open(data, io);
  try {
    return await fn(ctx);
  } finally {
    await ctx.store.close();
  }
}

async function open(data: string | undefined, io: CliIo) {
  // The same rule as the gateway's: a postgres:// URL without LETKITE_NATS_URL (or the reverse) is refused.
  deploymentMode({ databaseUrl: io.env.LETKITE_DATABASE_URL, natsUrl: io.env.LETKITE_NATS_URL });
  const store = await openStore(io.env.LETKITE_DATABASE_URL ?? join(dataDir(data, io.env), 'letkite.db'));
  const { account, owner } = await store.bootstrap(new Date().toISOString());
  return { store, account, owner };
}

const TOKEN_USAGE =
  'usage: letkite admin token create --name NAME [--policy NAME|FILE] [--machines a,b] [--scopes commands,files,…] [--expires 30d]';

/**
 * `--policy`: a built-in or an account policy by name (the grant stores the name, so an edit of the policy applies
 * to the token's next call), or — as before account policies — a TOML file, parsed here and stored inline.
 */
async function grantPolicy(store: Store, accountId: string, value: string | undefined): Promise<Grant['policy']> {
  if (value === undefined) return 'full';
  if ((builtinPolicyNames as readonly string[]).includes(value)) return value;
  if (await openPolicyStore(store).get(accountId, value)) return value;
  let text: string;
  try {
    text = readFileSync(value, 'utf8');
  } catch {
    throw new UsageError(
      `--policy "${value}" is neither a built-in policy (${builtinPolicyNames.join(', ')}), an account policy (letkite admin policy list) nor a readable file`,
    );
  }
  return parsePolicyToml(text) as unknown as Record<string, unknown>;
}

const listOf = (value: string) =>
  value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v.length > 0);

/** `--machines`: ids or unique names of the account's machines, stored as ids. */
async function grantMachines(store: Store, accountId: string, value: string | undefined): Promise<Grant['machines']> {
  if (value === undefined || value === '*') return '*';
  const machines = await store.listMachines(accountId);
  return listOf(value).map((ref) => {
    const byId = machines.find((m) => m.id === ref);
    const byName = machines.filter((m) => m.name === ref);
    const found = byId ?? (byName.length === 1 ? byName[0] : undefined);
    if (!found) throw new UsageError(`--machines: no single machine "${ref}"`);
    return found.id;
  });
}

async function tokenCreate(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      name: { type: 'string' },
      expires: { type: 'string' },
      policy: { type: 'string' },
      machines: { type: 'string' },
      scopes: { type: 'string' },
      data: { type: 'string' },
    },
    strict: true,
  });
  if (!values.name) throw new UsageError(TOKEN_USAGE);
  const name = values.name;
  const expiresInMs = values.expires === undefined ? undefined : parseDuration(values.expires);
  const scopes: Grant['scopes'] =
    values.scopes === undefined || values.scopes === '*' ? '*' : toolsForScopeList(listOf(values.scopes));
  return withOwnerStore(values.data, io, async ({ store, account, owner }) => {
    const policy = await grantPolicy(store, account.id, values.policy);
    const grant: Grant = { policy, machines: await grantMachines(store, account.id, values.machines), scopes };
    const created = await createApiToken(
      { store, now: new Date() },
      {
        accountId: account.id,
        userId: owner.id,
        name,
        grant,
        ...(expiresInMs === undefined ? {} : { expiresInMs }),
        actor: 'cli:admin',
      },
    );
    io.stderr.write(
      `Created API token "${name}" (${created.id})${created.expiresAt ? `, expires ${created.expiresAt}` : ''}. It is shown only once:\n`,
    );
    io.stdout.write(`${created.token}\n`);
    return EXIT_OK;
  });
}

/**
 * `letkite admin join-token [--ttl 15m] [--url URL]`: a one-time join token, and the one command that installs and
 * joins a machine with it (the gateway's /agent/install.sh). The URL is --url, else LETKITE_PUBLIC_URL, else the
 * one the gateway last recorded in its data directory (http/recorded-public-url.ts), else the local default.
 * The token alone goes to stdout (for scripts), the command to stderr.
 */
async function joinToken(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { ttl: { type: 'string' }, data: { type: 'string' }, url: { type: 'string' } },
    strict: true,
  });
  const ttlMs = values.ttl === undefined ? undefined : parseDuration(values.ttl);
  const gatewayUrl =
    values.url ??
    io.env.LETKITE_PUBLIC_URL ??
    readRecordedPublicUrl(dataDir(values.data, io.env)) ??
    `http://localhost:${io.env.LETKITE_PORT ?? '8787'}`;
  return withOwnerStore(values.data, io, async ({ store, account }) => {
    const created = await createJoinToken(
      { store, now: new Date() },
      { accountId: account.id, actor: 'cli:admin', ...(ttlMs === undefined ? {} : { ttlMs }) },
    );
    io.stderr.write(`One-time join token, valid until ${created.expiresAt}. On the machine, run:\n`);
    io.stderr.write(`  ${installCommand(gatewayUrl, created.token)}\n`);
    io.stdout.write(`${created.token}\n`);
    return EXIT_OK;
  });
}

const REDACTION_USAGE =
  '       letkite admin redaction list | letkite admin redaction set [PATTERN …]   (none clears them)';

/**
 * `letkite admin redaction list|set`: the account's redaction patterns (DESIGN §7), JavaScript regex sources that
 * every output an AI reads and the audit log are masked with. `set` replaces them all; without patterns it clears.
 */
async function redaction(verb: 'list' | 'set', args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { data: { type: 'string' } },
    strict: true,
    allowPositionals: verb === 'set',
  });
  return withOwnerStore(values.data, io, async ({ store, account }) => {
    if (verb === 'list') {
      for (const p of await store.getRedactionPatterns(account.id)) io.stdout.write(`${p}\n`);
      return EXIT_OK;
    }
    const saved = await saveRedactionPatterns(
      { store, now: new Date() },
      { accountId: account.id, actor: 'cli:admin', patterns: positionals },
    );
    io.stderr.write(`The account has ${saved.patterns.length} redaction pattern(s) now.\n`);
    return EXIT_OK;
  });
}
