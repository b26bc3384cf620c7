import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { waitFor } from './processes';

/** A real SMTP server on 127.0.0.1 that keeps every message it receives, parsed (TESTING.md "E-mail"). */
export class TestSmtp {
  readonly messages: ParsedMail[] = [];

  private constructor(private readonly server: SMTPServer) {}

  static async start(): Promise<TestSmtp> {
    let smtp: TestSmtp | null = null;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, callback) {
        simpleParser(stream)
          .then((mail) => {
            smtp?.messages.push(mail);
            callback();
          })
          .catch((err: Error) => callback(err));
      },
    });
    smtp = new TestSmtp(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return smtp;
  }

  get port(): number {
    return (this.server.server.address() as AddressInfo).port;
  }

  /** What the gateway needs to send here: LETKITE_SMTP_URL and LETKITE_MAIL_FROM. */
  get env(): Record<string, string> {
    return { LETKITE_SMTP_URL: `smtp://127.0.0.1:${this.port}`, LETKITE_MAIL_FROM: 'LetKite <letkite@test.invalid>' };
  }

  /** Waits for a message to `to` (and matching `subject`, when given). */
  waitForMail(to: string, subject?: RegExp, timeoutMs = 15_000): Promise<ParsedMail> {
    return waitFor(
      `an e-mail to ${to}`,
      () =>
        this.messages.find((m) => {
          const addresses = [m.to]
            .flat()
            .flatMap((a) => a?.value ?? [])
            .map((v) => v.address?.toLowerCase());
          return addresses.includes(to.toLowerCase()) && (!subject || subject.test(m.subject ?? ''));
        }),
      timeoutMs,
    );
  }

  /** The first link in a message's text that starts with `prefix`. */
  static linkIn(mail: ParsedMail, prefix: string): string {
    const text = mail.text ?? '';
    const found = text.split(/\s+/).find((w) => w.startsWith(prefix));
    if (!found) throw new Error(`no link starting with ${prefix} in:\n${text}`);
    return found;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
