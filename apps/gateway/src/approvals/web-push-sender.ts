import { createECDH } from 'node:crypto';
import type { PushSubscriptionRecord } from './approval-store';

// web-push (≈ 9 MiB of RSS with its JWT and HTTP dependencies) loads with the first push sent, not at start:
// most gateways never send one (bench/memory).
let webPush: Promise<typeof import('web-push')> | undefined;
const loadWebPush = () => {
  // CommonJS whose exports Node's ES module loader cannot list: the functions are on the default export.
  webPush ??= import('web-push').then((m) => (m as unknown as { default?: typeof m }).default ?? m);
  return webPush;
};

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
  // What web-push's generateVAPIDKeys does (an uncompressed P-256 point, a 32-byte scalar), without loading it.
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  // getPrivateKey drops leading zero bytes; the key is always 32 (as web-push pads it).
  const scalar = ecdh.getPrivateKey();
  const privateKey = Buffer.alloc(32);
  scalar.copy(privateKey, 32 - scalar.length);
  return { publicKey: ecdh.getPublicKey().toString('base64url'), privateKey: privateKey.toString('base64url') };
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
      const webpush = await loadWebPush();
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
