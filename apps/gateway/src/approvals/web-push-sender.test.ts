import { createECDH } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import webpush from 'web-push';
import { newVapidKeys } from './web-push-sender';

describe('newVapidKeys (made with node:crypto, so web-push loads only with the first push)', () => {
  it('is a P-256 pair in the form web-push makes: a 65-byte uncompressed point and its 32-byte scalar', () => {
    for (let i = 0; i < 50; i++) {
      const keys = newVapidKeys();
      const pub = Buffer.from(keys.publicKey, 'base64url');
      const priv = Buffer.from(keys.privateKey, 'base64url');
      expect(pub).toHaveLength(65);
      expect(pub[0]).toBe(0x04);
      expect(priv).toHaveLength(32);
      // The public key is the private key's point (not two unrelated random strings).
      const ecdh = createECDH('prime256v1');
      ecdh.setPrivateKey(priv);
      expect(ecdh.getPublicKey().toString('base64url')).toBe(keys.publicKey);
    }
  });

  it('is accepted by web-push for a VAPID-signed request', () => {
    const keys = newVapidKeys();
    const client = createECDH('prime256v1');
    client.generateKeys();
    const details = webpush.generateRequestDetails(
      {
        endpoint: 'https://push.example.com/x',
        keys: { p256dh: client.getPublicKey().toString('base64url'), auth: Buffer.alloc(16, 7).toString('base64url') },
      },
      'hello',
      { vapidDetails: { subject: 'mailto:a@example.com', ...keys }, contentEncoding: 'aes128gcm' },
    );
    expect(String(details.headers.Authorization)).toMatch(/^vapid t=.+, k=/);
  });
});
