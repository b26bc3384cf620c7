import type { Coordination, Limiter } from '../coordination/coordination';
import type { User } from '../store/types';
import { ApprovalEvents } from './approval-events';
import type { ApprovalStore } from './approval-store';
import type { ApprovalNotifier } from './notify-approvers';
import type { PushSender } from './web-push-sender';
import { createPushSender, newVapidKeys } from './web-push-sender';

/** Most pending requests one connection may have at once (DESIGN §6). */
export const MAX_PENDING_PER_CONNECTION = 20;

/**
 * Approval proofs (TOTP code or passkey) one person may try per 10 minutes: a TOTP code must not be guessable by
 * retrying. Counted before the check (so concurrent guesses each take a try) and forgotten on a good proof.
 */
export const PROOF_LIMIT = { limit: 5, windowMs: 10 * 60_000 } as const;

/** The approvals part of the gateway's dependencies: the store, the wake-up events and the notifier. */
export interface Approvals {
  store: ApprovalStore;
  events: ApprovalEvents;
  notifier: ApprovalNotifier;
  /** The public VAPID key browsers subscribe with (the pair is made once and kept in the store). */
  vapidPublicKey(): Promise<string>;
  /** Push sender signed with the stored VAPID keys. */
  pushSender(): Promise<PushSender>;
  /** Whether http://localhost push endpoints are accepted (tests only; LETKITE_PUSH_INSECURE_LOOPBACK=1). */
  allowInsecurePushLoopback: boolean;
  /** Approval proofs per user id, shared by every gateway (PROOF_LIMIT). */
  proofLimiter: Limiter;
}

/** Builds the approvals dependencies; the notifier is made from the push sender this returns. */
export function createApprovals(options: {
  store: ApprovalStore;
  /** Wake-ups and the proof limiter go through it, so they hold across gateways. */
  coordination: Coordination;
  now: () => Date;
  log: (msg: string) => void;
  vapidSubject: string;
  allowInsecurePushLoopback: boolean;
  notifier: (push: () => Promise<PushSender>) => ApprovalNotifier;
}): Approvals {
  const keys = () => options.store.vapidKeys(newVapidKeys, options.now().toISOString());
  let sender: Promise<PushSender> | null = null;
  const pushSender = () => {
    sender ??= keys().then((k) =>
      createPushSender({
        keys: k,
        subject: options.vapidSubject,
        allowInsecureLoopback: options.allowInsecurePushLoopback,
        log: options.log,
      }),
    );
    return sender;
  };
  const events = new ApprovalEvents(options.coordination);
  const notifier = options.notifier(pushSender);
  return {
    store: notifyingExpiry(options.store, events, notifier, options.log),
    events,
    notifier,
    vapidPublicKey: async () => (await keys()).publicKey,
    pushSender,
    allowInsecurePushLoopback: options.allowInsecurePushLoopback,
    proofLimiter: options.coordination.limiter('approvals.proof', PROOF_LIMIT),
  };
}

/** The VAPID subject: the operator's contact, as push services ask for it. */
export function vapidSubjectFor(publicUrl: string, mailFrom: string | undefined): string {
  const address = mailFrom && /<?([^<>\s]+@[^<>\s]+)>?\s*$/.exec(mailFrom)?.[1];
  if (address) return `mailto:${address}`;
  return new URL(publicUrl).protocol === 'https:' ? new URL(publicUrl).origin : 'mailto:letkite@localhost';
}

export type UsersById = (ids: string[]) => Promise<User[]>;

/**
 * The store with `expireDue` telling about what it expired: the requester is told and waiters are woken for
 * exactly the rows this call's conditional write expired, so however many sweepers and readers (on however many
 * gateways) expire at once, each request is announced once. Every caller (the timer, the web API, approval_wait)
 * gets this for free.
 */
export function notifyingExpiry(
  store: ApprovalStore,
  events: ApprovalEvents,
  notifier: ApprovalNotifier,
  log: (msg: string) => void,
): ApprovalStore {
  const expireDue = async (now: string) => {
    const expired = await store.expireDue(now);
    for (const r of expired) {
      events.changed(r.id);
      notifier.settled(r).catch((err) => log(`telling the requester of ${r.id} failed: ${String(err)}`));
    }
    return expired;
  };
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'expireDue') return expireDue;
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
