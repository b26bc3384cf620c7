import webpush from 'web-push';
import type { PushSubscriptionRecord } from './approval-store';

/** Delivers one encrypted web-push message to a push service; `gone` means the subscription no longer exists. */
export interface PushSender {
  send(sub: PushSubscriptionRecord, payload: string): Promise<'ok' | 'failed' | 'gone'>;
}

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

/** A fresh P-256 VAPID key pair (base64url), as the gateway makes once and keeps in its store. */
export function newVapidKeys(): VapidKeys {
  return webpush.generateVAPIDKeys();
}

/**
 * Where subscriptions may point. Push services are https; plain http is accepted only for loopback hosts and
 * only when the gateway was started with LETKITE_PUSH_INSECURE_LOOPBACK=1 (tests run a local push service).
 */
export function pushEndpointProblem(endpoint: string, allowInsecureLoopback: boolean): string | null {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return `"${endpoint}" is not a URL`;
  }
  if (url.username || url.password) return 'a push endpoint carries no credentials';
  if (url.protocol === 'https:') return null;
  const loopback = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
  if (url.protocol === 'http:' && loopback && allowInsecureLoopback) return null;
  return `push endpoint "${endpoint}" must be https`;
}

/**
 * Sends with the web-push library's encryption (aes128gcm) and VAPID signature (ES256 JWT, aud = the endpoint's
 * origin), posting the request itself with fetch so that every endpoint goes through `pushEndpointProblem` first.
 */
export function createPushSender(options: {
  keys: VapidKeys;
  subject: string;
  allowInsecureLoopback: boolean;
  log: (msg: string) => void;
}): PushSender {
  return {
    async send(sub, payload) {
      const problem = pushEndpointProblem(sub.endpoint, options.allowInsecureLoopback);
      if (problem) {
        options.log(`push subscription ${sub.id} skipped: ${problem}`);
        return 'gone';
      }
      const details = webpush.generateRequestDetails(
        { endpoint: sub.endpoint, keys: { p256dh: sub.p256dh, auth: sub.auth } },
        payload,
        {
          vapidDetails: {
            subject: options.subject,
            publicKey: options.keys.publicKey,
            privateKey: options.keys.privateKey,
          },
          contentEncoding: 'aes128gcm',
          TTL: 600,
          urgency: 'high',
        },
      );
      try {
        const res = await fetch(details.endpoint, {
          method: details.method,
          headers: details.headers as Record<string, string>,
          body: details.body ? new Uint8Array(details.body) : null,
          redirect: 'error',
          signal: AbortSignal.timeout(10_000),
        });
        await res.body?.cancel();
        if (res.status === 404 || res.status === 410) return 'gone';
        if (res.ok) return 'ok';
        options.log(`push to subscription ${sub.id} failed with HTTP ${res.status}`);
        return 'failed';
      } catch (err) {
        options.log(`push to subscription ${sub.id} failed: ${String(err)}`);
        return 'failed';
      }
    },
  };
}
