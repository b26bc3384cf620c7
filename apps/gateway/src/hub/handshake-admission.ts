import type { Duplex } from 'node:stream';

/**
 * Bounds how many agent handshakes the gateway runs at once. After a gateway restart a whole fleet dials within
 * seconds; each handshake costs a signature check, a store read and a store write, so past the bound a new socket
 * is answered `503` with a jittered `Retry-After` before the WebSocket upgrade (no handshake work at all) and the
 * agent waits at least that long (agent connection.ts). Sockets already admitted are never refused.
 */
export class HandshakeAdmission {
  private inFlight = 0;
  /** Upgrades answered 503 since start (for /metrics and the storm benchmark). */
  refused = 0;

  constructor(
    private readonly maxInFlight: number,
    /** Retry-After is drawn from this range, seconds, so refused agents do not come back in lockstep. */
    private readonly retryAfterS: readonly [number, number] = [1, 5],
    private readonly random: () => number = Math.random,
  ) {
    if (!Number.isInteger(maxInFlight) || maxInFlight < 1)
      throw new RangeError('maxInFlight must be a positive integer');
  }

  /** Handshakes admitted and not yet settled. */
  get pending(): number {
    return this.inFlight;
  }

  /**
   * Admits one handshake, or returns null when the bound is reached. The returned release is idempotent: call it
   * when the handshake settles (welcome sent, refused, or socket closed).
   */
  tryAdmit(): (() => void) | null {
    if (this.inFlight >= this.maxInFlight) {
      this.refused++;
      return null;
    }
    this.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
    };
  }

  /** Seconds the next refused agent is told to wait: uniform over the range, whole seconds (RFC 9110 §10.2.3). */
  retryAfter(): number {
    const [lo, hi] = this.retryAfterS;
    return Math.round(lo + this.random() * (hi - lo));
  }

  /** Answers an upgrade request that was not admitted and closes its socket. */
  refuse(socket: Duplex): void {
    const body = JSON.stringify({
      error: { code: 'rate_limited', message: 'too many agents connecting; retry later' },
    });
    socket.end(
      'HTTP/1.1 503 Service Unavailable\r\n' +
        `Retry-After: ${this.retryAfter()}\r\n` +
        'Content-Type: application/json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
}
