/*
 * LetKite service worker: shows approval notifications sent by the gateway (web push, encrypted end to end) and
 * opens the approval page when one is tapped. It caches nothing: the approval page must always be fresh.
 */
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('push', (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = {};
  }
  // A takeover notice (the first time a connection acted on a machine) opens the activity log, filtered.
  const approval =
    data.type === 'approval_request' && typeof data.url === 'string' && data.url.startsWith('/approvals/');
  const takeover = data.type === 'takeover_notice' && typeof data.url === 'string' && data.url.startsWith('/activity?');
  if (!approval && !takeover) return;
  event.waitUntil(
    self.registration.showNotification(String(data.title || 'Approval needed'), {
      body: String(data.body || ''),
      tag: String(data.approval_id || data.url),
      requireInteraction: approval,
      icon: '/favicon.svg',
      data: { url: data.url },
    }),
  );
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const path = event.notification.data?.url;
  if (typeof path !== 'string' || !(path.startsWith('/approvals/') || path.startsWith('/activity?'))) return;
  const target = new URL(path, self.location.origin).href;
  event.waitUntil(
    (async () => {
      const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
      for (const w of windows) {
        if (w.url === target && 'focus' in w) return w.focus();
      }
      return self.clients.openWindow(target);
    })(),
  );
});
