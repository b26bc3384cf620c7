import type { Transporter } from 'nodemailer';

/** One e-mail to one person. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** Sends e-mail (invitations, approval requests). Built once by main.ts from LETKITE_SMTP_URL / LETKITE_MAIL_FROM. */
export interface Mailer {
  /** False when no SMTP server is configured: callers then show the link to the person instead. */
  readonly configured: boolean;
  /** Sends, or throws; never logs the body (it carries one-time links). */
  send(message: MailMessage): Promise<void>;
}

/**
 * A nodemailer transport over SMTP. `smtp://host:port` speaks plain SMTP (STARTTLS when offered, unless the URL
 * says `?ignoreTLS=true`), `smtps://` speaks TLS from the start; credentials go in the URL.
 */
export function createMailer(options: { smtpUrl?: string; from?: string }): Mailer {
  if (!options.smtpUrl) {
    return {
      configured: false,
      async send() {
        throw new Error('no SMTP server is configured (LETKITE_SMTP_URL)');
      },
    };
  }
  const smtpUrl = options.smtpUrl;
  // nodemailer (≈ 12 MiB of RSS) loads with the first e-mail, not at start (bench/memory); one transport after.
  let transport: Promise<Transporter> | undefined;
  const from = options.from ?? 'LetKite <letkite@localhost>';
  return {
    configured: true,
    async send(message) {
      transport ??= import('nodemailer').then((m) => m.createTransport(smtpUrl));
      await (await transport).sendMail({ from, ...message });
    },
  };
}
