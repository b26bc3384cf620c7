import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createApiToken, createJoinToken, openStore, parseDuration } from '@letkite/gateway';
import { type CliIo, EXIT_OK, UsageError } from '../io';
import { dataDir } from '../paths';

/**
 * `letkite admin …`: acts on the gateway's store directly (the same SQLite file the running gateway uses), as the
 * account owner. Whoever can read the data directory is the owner of this installation.
 */
export async function admin(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'token' && rest[0] === 'create') return tokenCreate(rest.slice(1), io);
  if (sub === 'join-token') return joinToken(rest, io);
  throw new UsageError(
    'usage: letkite admin token create --name NAME [--expires 30d] | letkite admin join-token [--ttl 15m]',
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
  const store = openStore(io.env.LETKITE_DATABASE_URL ?? join(dataDir(data, io.env), 'letkite.db'));
  const { account, owner } = await store.bootstrap(new Date().toISOString());
  return { store, account, owner };
}

async function tokenCreate(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { name: { type: 'string' }, expires: { type: 'string' }, data: { type: 'string' } },
    strict: true,
  });
  if (!values.name) throw new UsageError('usage: letkite admin token create --name NAME [--expires 30d]');
  const name = values.name;
  const expiresInMs = values.expires === undefined ? undefined : parseDuration(values.expires);
  return withOwnerStore(values.data, io, async ({ store, account, owner }) => {
    const created = await createApiToken(
      { store, now: new Date() },
      {
        accountId: account.id,
        userId: owner.id,
        name,
        grant: { policy: 'full', machines: '*', scopes: '*' },
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

async function joinToken(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args, options: { ttl: { type: 'string' }, data: { type: 'string' } }, strict: true });
  const ttlMs = values.ttl === undefined ? undefined : parseDuration(values.ttl);
  return withOwnerStore(values.data, io, async ({ store, account }) => {
    const created = await createJoinToken(
      { store, now: new Date() },
      { accountId: account.id, actor: 'cli:admin', ...(ttlMs === undefined ? {} : { ttlMs }) },
    );
    io.stderr.write(`One-time join token, valid until ${created.expiresAt}. On the machine, run:\n`);
    io.stderr.write(`  letkite agent join <gateway-url> ${'<token below>'}\n`);
    io.stdout.write(`${created.token}\n`);
    return EXIT_OK;
  });
}
