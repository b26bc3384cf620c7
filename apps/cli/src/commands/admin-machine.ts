import { randomUUID } from 'node:crypto';
import { renameMachine, type Store } from '@letkite/gateway';
import { type CliIo, EXIT_OK, UsageError } from '../io';

export const MACHINE_USAGE = '       letkite admin machine list | rename ID|NAME NEW_NAME';

/**
 * `letkite admin machine list|rename`: the same rename service as `PATCH /api/machines/:id` (name rules, unique in
 * the account, audited), as the installation's owner (`cli:admin`). The machine is named by id or current name.
 */
export async function adminMachine(
  args: string[],
  io: CliIo,
  withStore: <T>(data: string | undefined, fn: (s: { store: Store; accountId: string }) => Promise<T>) => Promise<T>,
): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'list' && rest.length === 0) {
    return withStore(undefined, async ({ store, accountId }) => {
      for (const m of await store.listMachines(accountId)) io.stdout.write(`${m.id}\t${m.name}\t${m.hostname ?? ''}\n`);
      return EXIT_OK;
    });
  }
  if (sub === 'rename' && rest.length === 2) {
    const [which, name] = rest as [string, string];
    return withStore(undefined, async ({ store, accountId }) => {
      const machines = await store.listMachines(accountId);
      const id = machines.find((m) => m.id === which)?.id ?? machines.find((m) => m.name === which)?.id ?? which;
      const ctx = {
        actor: { kind: 'cli' as const, command: 'admin' },
        account: accountId,
        deps: { store },
        now: new Date(),
        requestId: randomUUID(),
      };
      const r = await renameMachine.call(ctx, { id, name });
      io.stdout.write(`Renamed ${r.id} from "${r.previous_name}" to "${r.name}".\n`);
      return EXIT_OK;
    });
  }
  throw new UsageError(`usage:\n${MACHINE_USAGE}`);
}
