import { parseArgs } from 'node:util';
import {
  auditCsvHeader,
  auditCsvLine,
  auditJsonLine,
  auditRowsOldestFirst,
  auditView,
  pruneByRetention,
  type Store,
  verificationView,
} from '@letkite/gateway';
import { type CliIo, EXIT_FAILED, EXIT_OK, UsageError } from '../io';

export const AUDIT_USAGE =
  '       letkite admin audit export [--since T] [--until T] [--format jsonl|csv] [--tool T] [--machine ID]\n' +
  '                                  [--connection ID] [--person USER_ID] [--outcome O] [--action A]\n' +
  '       letkite admin audit verify\n' +
  '       letkite admin audit retention [DAYS | off]';

type WithStore = <T>(
  data: string | undefined,
  fn: (s: { store: Store; accountId: string }) => Promise<T>,
) => Promise<T>;

/** An instant from the command line (ISO-8601, or a date); `invalid` input is a usage error naming it. */
function instant(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const t = new Date(value);
  if (Number.isNaN(t.getTime())) throw new UsageError(`--${flag} "${value}" is not a date or time (ISO-8601)`);
  return t.toISOString();
}

/** Writes and waits when the stream's buffer is full, so a large export does not sit in memory. */
async function write(out: NodeJS.WritableStream, text: string): Promise<void> {
  if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
}

/**
 * `letkite admin audit export|verify`: the activity log out of the store (JSON lines or CSV on stdout, oldest
 * first), and the check of its hash chain — exit 0 when whole, 1 naming the first broken row.
 */
export async function adminAudit(args: string[], io: CliIo, withStore: WithStore): Promise<number> {
  const [verb, ...rest] = args;
  if (verb === 'export') {
    const { values } = parseArgs({
      args: rest,
      options: {
        data: { type: 'string' },
        since: { type: 'string' },
        until: { type: 'string' },
        format: { type: 'string', default: 'jsonl' },
        tool: { type: 'string' },
        machine: { type: 'string' },
        connection: { type: 'string' },
        person: { type: 'string' },
        outcome: { type: 'string' },
        action: { type: 'string' },
      },
      strict: true,
    });
    const format = values.format;
    if (format !== 'jsonl' && format !== 'csv') throw new UsageError(`--format "${format}": use jsonl or csv`);
    const filter = {
      since: instant('since', values.since),
      until: instant('until', values.until),
      tool: values.tool,
      machine: values.machine,
      connection: values.connection,
      person: values.person,
      outcome: values.outcome,
      action: values.action,
    };
    return withStore(values.data, async ({ store, accountId }) => {
      await store.appendAudit({
        accountId,
        at: new Date().toISOString(),
        actor: 'cli:admin',
        action: 'audit.export',
        outcome: 'ok',
        details: { format, filter },
      });
      if (format === 'csv') await write(io.stdout, auditCsvHeader());
      let n = 0;
      for await (const row of auditRowsOldestFirst(store, accountId, filter)) {
        const view = auditView(row);
        await write(io.stdout, format === 'csv' ? auditCsvLine(view) : auditJsonLine(view));
        n++;
      }
      io.stderr.write(`Exported ${n} row(s).\n`);
      return EXIT_OK;
    });
  }
  if (verb === 'verify') {
    const { values } = parseArgs({ args: rest, options: { data: { type: 'string' } }, strict: true });
    return withStore(values.data, async ({ store, accountId }) => {
      const v = verificationView(await store.verifyAudit(accountId));
      if (v.ok) {
        const from = v.anchor_id === null ? 'its first row' : `the anchor left by pruning (row ${v.anchor_id})`;
        io.stdout.write(`The activity log is whole: ${v.rows} row(s) verified from ${from}.\n`);
        return EXIT_OK;
      }
      io.stdout.write(`The activity log is broken at row ${v.broken_id} (${v.reason}): ${v.message}\n`);
      return EXIT_FAILED;
    });
  }
  if (verb === 'retention') {
    const { values, positionals } = parseArgs({
      args: rest,
      options: { data: { type: 'string' } },
      allowPositionals: true,
      strict: true,
    });
    const [value, ...extra] = positionals;
    if (extra.length > 0) throw new UsageError('letkite admin audit retention [DAYS | off]');
    return withStore(values.data, async ({ store, accountId }) => {
      if (value === undefined) {
        const days = await store.getAuditRetention(accountId);
        io.stdout.write(days === null ? 'The activity log is kept forever.\n' : `Rows are kept ${days} day(s).\n`);
        return EXIT_OK;
      }
      const days = value === 'off' ? null : Number(value);
      if (days !== null && !(Number.isInteger(days) && days >= 1 && days <= 36_500)) {
        throw new UsageError(`retention "${value}": give whole days from 1 to 36500, or off`);
      }
      const now = new Date();
      await store.setAuditRetention(accountId, days, {
        accountId,
        at: now.toISOString(),
        actor: 'cli:admin',
        action: 'audit.retention',
        outcome: 'ok',
        details: { retention_days: days },
      });
      // As the web's setting does: apply it at once (the chain's anchor keeps verify whole).
      const pruned = await pruneByRetention(store, accountId, now);
      io.stdout.write(
        days === null
          ? 'The activity log is now kept forever.\n'
          : `Rows are now kept ${days} day(s); ${pruned} older row(s) pruned.\n`,
      );
      return EXIT_OK;
    });
  }
  throw new UsageError(AUDIT_USAGE.trimStart());
}
