import type { GatewayDeps } from '../deps';

/**
 * A takeover is never silent (issue #14): the first time a connection (or API token) writes a file, runs a
 * command or opens a terminal on a machine, the person who connected it hears about it — by e-mail and web push
 * where they are set up — once per connection and machine. The store's claim decides "first" atomically, so two
 * racing first calls send one notice.
 */

/** Tools that change a machine or run something on it: what counts as taking it over. */
export const takeoverTools: ReadonlySet<string> = new Set([
  'exec',
  'exec_many',
  'shell_run',
  'job_start',
  'write_file',
  'delete_path',
  'copy_between_hosts',
  'transfer_start',
  'terminal_open',
  'gui_act',
]);

/** What the push notification carries; the service worker opens `url` (the activity log, filtered). */
export interface TakeoverPushPayload {
  type: 'takeover_notice';
  title: string;
  body: string;
  url: string;
}

export interface TakeoverCall {
  accountId: string;
  /** The connection or API token. */
  credentialId: string;
  credentialKind: 'connection' | 'api_token';
  /** Who connected it: the one told. */
  userId: string;
  actor: string;
  machineId: string;
  tool: string;
  /** As the client declared itself (unverified). */
  clientName: string | null;
  requestId: string | null;
}

type TakeoverDeps = Pick<GatewayDeps, 'store' | 'mailer' | 'approvals' | 'publicUrl' | 'now' | 'log'>;

/** The activity page filtered to this credential on this machine. */
export function takeoverActivityPath(call: Pick<TakeoverCall, 'credentialId' | 'machineId'>): string {
  const q = new URLSearchParams({ connection: call.credentialId, machine: call.machineId });
  return `/activity?${q.toString()}`;
}

/**
 * Claims the notice for this credential and machine and, when this call is the first, mails and pushes the
 * person who connected it. Never throws: a failed notice is logged and does not fail the tool call it follows.
 */
export async function noticeTakeover(deps: TakeoverDeps, call: TakeoverCall): Promise<boolean> {
  try {
    if (!takeoverTools.has(call.tool)) return false;
    const at = deps.now().toISOString();
    const won = await deps.store.claimTakeoverNotice(
      {
        accountId: call.accountId,
        credentialId: call.credentialId,
        machineId: call.machineId,
        userId: call.userId,
        tool: call.tool,
        at,
      },
      {
        accountId: call.accountId,
        at,
        actor: 'system',
        action: 'takeover.notice',
        target: call.userId,
        userId: call.userId,
        tool: call.tool,
        machineId: call.machineId,
        credentialId: call.credentialId,
        clientName: call.clientName,
        requestId: call.requestId,
        details: { credential_kind: call.credentialKind, via: call.actor },
      },
    );
    if (!won) return false;
    const [user, machine] = await Promise.all([deps.store.getUser(call.userId), deps.store.getMachine(call.machineId)]);
    const machineName = machine?.name ?? call.machineId;
    const client = call.clientName ? `${call.clientName} (as declared by the client)` : 'an AI client';
    const what = call.credentialKind === 'connection' ? 'connection' : 'API token';
    const link = new URL(takeoverActivityPath(call), deps.publicUrl).toString();
    const title = `An AI client acted on ${machineName} for the first time`;
    const text = [
      `Your ${what} ${call.credentialId} (${client}) just used ${call.tool} on the machine "${machineName}".`,
      'This is the first time it changed something or ran a command there; you will not be told again for this',
      `${what} and machine.`,
      '',
      `See what it did: ${link}`,
      '',
      `If this was not you, revoke the ${what} at once in the web app.`,
    ].join('\n');
    const mail = async () => {
      if (!deps.mailer.configured || !user?.email) return;
      await deps.mailer.send({ to: user.email, subject: title, text });
    };
    const push = async () => {
      const subs = await deps.approvals.store.pushSubscriptionsOf([call.userId]);
      if (subs.length === 0) return;
      const sender = await deps.approvals.pushSender();
      const payload: TakeoverPushPayload = {
        type: 'takeover_notice',
        title,
        body: `${client} used ${call.tool} on ${machineName}. Tap to see the activity.`,
        url: takeoverActivityPath(call),
      };
      await Promise.all(
        subs.map(async (s) => {
          const result = await sender.send(s, JSON.stringify(payload));
          await deps.approvals.store.recordPushResult(s.id, result, deps.now().toISOString());
        }),
      );
    };
    const results = await Promise.allSettled([mail(), push()]);
    for (const r of results) {
      if (r.status === 'rejected') deps.log(`takeover notice to user ${call.userId} failed: ${String(r.reason)}`);
    }
    return true;
  } catch (err) {
    deps.log(`takeover notice for ${call.credentialId} on ${call.machineId} failed: ${String(err)}`);
    return false;
  }
}
