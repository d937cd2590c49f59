import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import nodemailer, { type Transporter } from 'nodemailer';
import { AppConfig, type MailConfig } from '../../../core/config/app-config.js';

export interface MailMessage {
  /** One address: the domain sends one delivery per recipient. */
  to: string;
  subject: string;
  html: string;
  text: string;
  /** None for a message without an attachment (the notice to a notification's owner). */
  attachments: { filename: string; contentType: string; content: Buffer }[];
  headers?: Record<string, string>;
}

/**
 * What became of one message. `temporary`: a 4xx answer, a connection error or a timeout: try
 * again later. `permanent`: a 5xx answer or a message that can never be sent: never retry.
 * `response` is the server's answer (or the error), with the SMTP credentials taken out.
 */
export type SendOutcome =
  | { status: 'sent'; messageId: string; response: string }
  | { status: 'temporary'; code: number | null; response: string }
  | { status: 'permanent'; code: number | null; response: string };

/**
 * Thrown by {@link Mailer.send} when SMTP_URL is not set: no message can be sent at all, and no
 * retry helps until the operator sets it (its message names the settings).
 */
export class MailNotConfiguredError extends Error {
  readonly code = 'smtp_not_configured';
  constructor() {
    super('Mail is not configured on this installation: set SMTP_URL and SMTP_FROM to send notifications');
    this.name = 'MailNotConfiguredError';
  }
}

/**
 * nodemailer's error codes for a message that no retry can send (a bad address or message, refused
 * credentials, a setting). Every other error without an SMTP reply code is a connection problem
 * or a timeout, and temporary.
 */
const PERMANENT_ERRORS = new Set([
  'EENVELOPE',
  'EMESSAGE',
  'EAUTH',
  'ENOAUTH',
  'EOAUTH2',
  'ECONFIG',
  'EMAXRECIPIENTS',
  'EREQUIRETLS',
  'EFILEACCESS',
  'EURLACCESS',
]);

/** A bare address (`someone@example.com`): names, lists and groups are not accepted here. */
const SINGLE_ADDRESS = /^[^\s@,;:<>()[\]"\\]+@[^\s@,;:<>()[\]"\\]+$/;

/** Most characters of a server's answer kept in an outcome. */
const MAX_RESPONSE = 1_000;

/**
 * Sends notification emails over SMTP (nodemailer, one pooled transport per process, made on the
 * first message). One recipient per message. Connecting, the server's greeting and every silence
 * of the socket are bounded by SMTP_TIMEOUT_MS. Never throws for a failed delivery: it answers a
 * {@link SendOutcome}; it throws only {@link MailNotConfiguredError}.
 */
@Injectable()
export class Mailer implements OnModuleDestroy {
  private readonly options: MailConfig;
  private readonly redact: (text: string) => string;
  private transport: Transporter | null = null;

  constructor(config: AppConfig) {
    this.options = config.mail;
    this.redact = credentialRedactor(this.options.smtpUrl);
  }

  /** False without SMTP_URL: {@link send} would throw {@link MailNotConfiguredError}. */
  get configured(): boolean {
    return this.options.smtpUrl !== null;
  }

  /** The SMTP server for logs and status pages, password taken out (`smtp://user:***@host:587`). */
  get server(): string | null {
    return this.options.smtpUrl === null ? null : redactUrl(this.options.smtpUrl);
  }

  async send(message: MailMessage): Promise<SendOutcome> {
    const { smtpUrl, from } = this.options;
    if (smtpUrl === null || from === null) throw new MailNotConfiguredError();
    const to = message.to.trim();
    if (!SINGLE_ADDRESS.test(to)) {
      return { status: 'permanent', code: null, response: `Not a single email address: ${clip(to)}` };
    }
    try {
      const info = (await this.transporter(smtpUrl).sendMail({
        from,
        to,
        subject: message.subject.replace(/[\r\n]+/g, ' '),
        html: message.html,
        text: message.text,
        attachments: message.attachments.map((a) => ({
          filename: a.filename,
          contentType: a.contentType,
          content: a.content,
        })),
        // RFC 3834: tells auto-responders (out-of-office) not to answer a robot.
        headers: { 'Auto-Submitted': 'auto-generated', ...message.headers },
        disableFileAccess: true,
        disableUrlAccess: true,
      })) as SentInfo;
      // With a refused recipient nodemailer may still resolve: the recipient is in `rejected`.
      const rejected = info.rejected ?? [];
      if (rejected.length > 0 || (info.accepted ?? []).length === 0) {
        const reason = info.rejectedErrors?.[0];
        return reason ? this.outcomeOf(reason) : this.failure(null, info.response ?? 'Recipient refused');
      }
      return {
        status: 'sent',
        messageId: info.messageId ?? '',
        response: clip(this.redact(info.response ?? '')),
      };
    } catch (err) {
      return this.outcomeOf(err);
    }
  }

  /** Closes the pooled connections (a later message opens new ones). */
  async close(): Promise<void> {
    const transport = this.transport;
    this.transport = null;
    transport?.close();
    return Promise.resolve();
  }

  async onModuleDestroy(): Promise<void> {
    await this.close();
  }

  private transporter(smtpUrl: string): Transporter {
    const timeout = this.options.timeoutMs;
    this.transport ??= nodemailer.createTransport({
      url: smtpUrl,
      pool: true,
      maxConnections: 2,
      maxMessages: 100,
      // A dropped connection is retried by the delivery job with its back-off, not here.
      maxRequeues: 1,
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
      dnsTimeout: timeout,
      logger: false,
      debug: false,
    });
    return this.transport;
  }

  /** An SMTP reply code decides (4xx temporary, 5xx permanent); without one, nodemailer's code. */
  private outcomeOf(err: unknown): SendOutcome {
    const e = (err ?? {}) as SmtpError;
    const code = typeof e.responseCode === 'number' ? e.responseCode : null;
    const response = e.response || [e.code, e.message].filter(Boolean).join(': ') || String(err);
    if (code !== null && code >= 500 && code < 600)
      return { status: 'permanent', code, response: this.clean(response) };
    if (code !== null && code >= 400 && code < 500)
      return { status: 'temporary', code, response: this.clean(response) };
    if (code === null && e.code !== undefined && PERMANENT_ERRORS.has(e.code)) {
      return { status: 'permanent', code, response: this.clean(response) };
    }
    return this.failure(code, response);
  }

  private failure(code: number | null, response: string): SendOutcome {
    return { status: 'temporary', code, response: this.clean(response) };
  }

  private clean(text: string): string {
    return clip(this.redact(text));
  }
}

interface SentInfo {
  messageId?: string;
  response?: string;
  accepted?: unknown[];
  rejected?: unknown[];
  rejectedErrors?: unknown[];
}

interface SmtpError {
  code?: string;
  responseCode?: number;
  response?: string;
  message?: string;
}

function clip(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_RESPONSE ? `${flat.slice(0, MAX_RESPONSE - 1)}…` : flat;
}

/** `smtp://user:secret@host` as `smtp://user:***@host`. */
export function redactUrl(text: string): string {
  return text.replace(/(smtps?:\/\/[^:/@\s]*:)[^@\s]*@/gi, '$1***@');
}

/**
 * Takes every form of the SMTP password out of a text: as written in SMTP_URL, percent-decoded,
 * and base64-encoded as AUTH PLAIN and AUTH LOGIN send it (a server may quote what it was sent).
 */
export function credentialRedactor(smtpUrl: string | null): (text: string) => string {
  const secrets = new Set<string>();
  if (smtpUrl) {
    try {
      const url = new URL(smtpUrl);
      const user = safeDecode(url.username);
      const password = safeDecode(url.password);
      if (password !== '') {
        secrets.add(url.password);
        secrets.add(password);
        secrets.add(Buffer.from(password).toString('base64'));
        secrets.add(Buffer.from(`\u0000${user}\u0000${password}`).toString('base64'));
        secrets.add(Buffer.from(`${user}\u0000${user}\u0000${password}`).toString('base64'));
      }
    } catch {
      // Not a URL: AppConfig refuses such a value at start-up.
    }
  }
  // Longest first, so a secret containing another is taken out whole.
  const ordered = [...secrets].filter((s) => s !== '').sort((a, b) => b.length - a.length);
  return (text: string): string => {
    let out = redactUrl(text);
    for (const secret of ordered) out = out.split(secret).join('***');
    return out;
  };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
