import type { Mailer } from '../notify/mailer';
import type { User } from '../store/types';
import type { ApprovalRequest, ApprovalStore } from './approval-store';
import type { PushSender } from './web-push-sender';

/** Tells people about approval requests: approvers when one is made, the requester when it is settled. */
export interface ApprovalNotifier {
  requested(request: ApprovalRequest): Promise<void>;
  settled(request: ApprovalRequest): Promise<void>;
}

/** What a push notification carries (encrypted end to end; the lock screen may show title and body). */
export interface ApprovalPushPayload {
  type: 'approval_request';
  approval_id: string;
  title: string;
  body: string;
  /** Path of the approval page, opened when the notification is tapped. */
  url: string;
  expires_at: string;
}

export function approvalPath(id: string): string {
  return `/approvals/${encodeURIComponent(id)}`;
}

/**
 * E-mail through the mailer and web push to every subscribed device of every approver. Neither carries the call's
 * arguments (they may hold secrets and an e-mail is easily forwarded): the page shows them to a signed-in person.
 * Failures are logged and never fail the call that asked.
 */
export function createApprovalNotifier(deps: {
  mailer: Mailer;
  store: ApprovalStore;
  push: () => Promise<PushSender>;
  users: (ids: string[]) => Promise<User[]>;
  publicUrl: string;
  now: () => Date;
  log: (msg: string) => void;
}): ApprovalNotifier {
  const link = (id: string) => new URL(approvalPath(id), deps.publicUrl).toString();

  async function mail(to: User, subject: string, text: string): Promise<void> {
    if (!deps.mailer.configured || !to.email) return;
    try {
      await deps.mailer.send({ to: to.email, subject, text });
    } catch (err) {
      deps.log(`approval e-mail to user ${to.id} failed: ${String(err)}`);
    }
  }

  async function push(r: ApprovalRequest, requesterName: string): Promise<void> {
    const subs = await deps.store.pushSubscriptionsOf(r.askedUserIds);
    if (subs.length === 0) return;
    const sender = await deps.push();
    const payload: ApprovalPushPayload = {
      type: 'approval_request',
      approval_id: r.id,
      title: `Approve ${r.tool} on ${r.machineName}?`,
      body: `Asked by ${requesterName}'s AI client. Tap to review.`,
      url: approvalPath(r.id),
      expires_at: r.expiresAt,
    };
    await Promise.all(
      subs.map(async (s) => {
        const result = await sender.send(s, JSON.stringify(payload));
        await deps.store.recordPushResult(s.id, result, deps.now().toISOString());
      }),
    );
  }

  return {
    async requested(r) {
      const people = await deps.users([r.requesterId, ...r.askedUserIds]);
      const requester = people.find((u) => u.id === r.requesterId);
      const requesterName = requester?.name ?? 'someone';
      const client = r.clientName ? `${r.clientName} (as declared by the client)` : 'an AI client';
      const text = [
        `${requesterName}'s AI client asks to run a tool that needs a human approval.`,
        '',
        `Tool:    ${r.tool}`,
        `Machine: ${r.machineName}`,
        `Client:  ${client}`,
        `Expires: ${r.expiresAt}`,
        '',
        `Review the exact call and decide: ${link(r.id)}`,
        '',
        'Opening the link decides nothing. Approving needs your passkey or authenticator code; denying needs',
        'only that you are signed in. If you did not expect this, deny it.',
      ].join('\n');
      await Promise.all([
        ...people
          .filter((u) => r.askedUserIds.includes(u.id))
          .map((u) => mail(u, `Approval needed: ${r.tool} on ${r.machineName}`, text)),
        push(r, requesterName).catch((err) => deps.log(`approval push for ${r.id} failed: ${String(err)}`)),
      ]);
    },

    async settled(r) {
      const [requester] = await deps.users([r.requesterId]);
      if (!requester) return;
      const decider = r.decidedBy ? (await deps.users([r.decidedBy]))[0] : undefined;
      const outcome =
        r.status === 'approved'
          ? `approved by ${decider?.name ?? 'an approver'}`
          : r.status === 'denied'
            ? `denied by ${decider?.name ?? 'an approver'}`
            : 'expired before anyone decided';
      await mail(
        requester,
        `Your AI's ${r.tool} on ${r.machineName} was ${r.status}`,
        [
          `The approval request ${r.id} (${r.tool} on ${r.machineName}) was ${outcome}.`,
          r.status === 'approved' ? 'The AI client may now repeat the exact call once.' : '',
          '',
          `Details: ${link(r.id)}`,
        ].join('\n'),
      );
    },
  };
}
