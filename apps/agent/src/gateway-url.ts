import { AGENT_WS_PATH, LetKiteError } from '@letkite/protocol';

function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * The agent talks TLS to a remote gateway; plain http/ws only on loopback or with an explicit `insecure` flag,
 * so a network attacker cannot impersonate the gateway by default.
 */
export function checkGatewayUrl(raw: string, insecure: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new LetKiteError('invalid_params', `"${raw}" is not a URL`);
  }
  if (!['http:', 'https:'].includes(url.protocol)) {
    throw new LetKiteError('invalid_params', `gateway URL "${raw}" must start with https:// (or http:// on loopback)`);
  }
  if (url.protocol === 'http:' && !isLoopback(url.hostname) && !insecure) {
    throw new LetKiteError(
      'invalid_params',
      `refusing plain http to "${url.hostname}": use https, or pass --insecure if you really mean it`,
    );
  }
  return url;
}

export function agentSocketUrl(gateway: URL): string {
  const ws = new URL(AGENT_WS_PATH, gateway);
  ws.protocol = gateway.protocol === 'https:' ? 'wss:' : 'ws:';
  return ws.toString();
}
