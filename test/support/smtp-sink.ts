import type { AddressInfo } from 'node:net';
import { simpleParser, type AddressObject } from 'mailparser';
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream } from 'smtp-server';

/** One message as the sink received it, parsed with mailparser. */
export interface SinkMessage {
  /** The SMTP envelope: MAIL FROM and the RCPT TO addresses the sink accepted. */
  envelope: { from: string; to: string[] };
  /** Addresses of the `To:` header. */
  to: string[];
  from: string;
  subject: string;
  html: string;
  text: string;
  headers: Map<string, unknown>;
  attachments: { filename: string; contentType: string; content: Buffer }[];
  /** The message as it came over the wire. */
  raw: Buffer;
}

export interface SmtpSink {
  /** `smtp://127.0.0.1:<port>`: no credentials needed (they are accepted when sent). */
  readonly url: string;
  /** The same server with credentials in the URL, as SMTP_URL would carry them. */
  urlWithLogin(user: string, password: string): string;
  /** SMTP_URL and SMTP_FROM for a test app's environment. */
  readonly env: { SMTP_URL: string; SMTP_FROM: string };
  /** Every message received so far, in order. */
  readonly messages: SinkMessage[];
  /** The messages whose envelope went to `address`. */
  messagesTo(address: string): SinkMessage[];
  /** How many times a client asked for `address` (RCPT TO), accepted or not. */
  attempts(address: string): number;
  /** Answers `451 4.3.0` to the next `times` RCPT TO of `address`, then accepts it. */
  failTemporarily(address: string, times?: number): void;
  /** Answers `550 5.1.1` to every RCPT TO of `address`. */
  rejectPermanently(address: string): void;
  /** Accepts `address` again (drops what failTemporarily or rejectPermanently set). */
  accept(address: string): void;
  /**
   * Refuses every login with `535`, quoting the credentials it was sent (as a careless server
   * might), so a test can check that they never reach an outcome or a log.
   */
  rejectLogins(): void;
  /** Resolves once at least `count` messages arrived; rejects after `timeoutMs`. */
  waitForMessages(count: number, timeoutMs?: number): Promise<SinkMessage[]>;
  /** Forgets the messages and attempts (not the programmed answers). */
  clear(): void;
  close(): Promise<void>;
}

type Program = { kind: 'temporary'; remaining: number } | { kind: 'permanent' };

class SmtpReply extends Error {
  constructor(
    readonly responseCode: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A real SMTP server (the `smtp-server` package) on 127.0.0.1 and a free port, for tests of mail
 * delivery: it keeps every message it accepts, parsed, and answers each recipient as programmed.
 *
 * ```ts
 * const sink = await startSmtpSink();
 * const app = await startServiceApp({ ...sink.env });      // SMTP_URL, SMTP_FROM
 * sink.failTemporarily('flaky@example.com', 2);               // 451 twice, then accepted
 * sink.rejectPermanently('gone@example.com');                 // 550 every time
 * const [message] = await sink.waitForMessages(1, 10_000);
 * expect(message.envelope.to).toEqual(['someone@example.com']);
 * await sink.close();
 * ```
 *
 * No TLS (STARTTLS is not offered), plain-text login allowed and optional.
 */
export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: SinkMessage[] = [];
  const attempts = new Map<string, number>();
  const programs = new Map<string, Program>();
  const waiters = new Set<() => void>();
  let loginsRejected = false;
  const key = (address: string): string => address.trim().toLowerCase();

  const server = new SMTPServer({
    logger: false,
    // Clients still connected at close (a pooled transport) are told 421 after this, not 30 s.
    closeTimeout: 500,
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(auth, _session, callback) {
      if (loginsRejected) {
        callback(
          new SmtpReply(
            535,
            `5.7.8 Authentication failed for ${auth.username} with password ${auth.password}`,
          ),
        );
        return;
      }
      callback(null, { user: auth.username });
    },
    onRcptTo(address: SMTPServerAddress, _session, callback) {
      const addr = key(address.address);
      attempts.set(addr, (attempts.get(addr) ?? 0) + 1);
      const program = programs.get(addr);
      if (program?.kind === 'permanent') {
        callback(new SmtpReply(550, `5.1.1 <${address.address}>: Recipient address rejected: user unknown`));
        return;
      }
      if (program?.kind === 'temporary' && program.remaining > 0) {
        program.remaining -= 1;
        callback(new SmtpReply(451, `4.3.0 <${address.address}>: Temporary failure, try again later`));
        return;
      }
      callback();
    },
    onData(stream: SMTPServerDataStream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        simpleParser(raw).then(
          (parsed) => {
            const mailFrom = session.envelope.mailFrom;
            messages.push({
              envelope: {
                from: mailFrom ? mailFrom.address : '',
                to: session.envelope.rcptTo.map((r) => r.address),
              },
              to: addressesOf(parsed.to),
              from: addressesOf(parsed.from)[0] ?? '',
              subject: parsed.subject ?? '',
              html: typeof parsed.html === 'string' ? parsed.html : '',
              text: parsed.text ?? '',
              headers: parsed.headers,
              attachments: parsed.attachments.map((a) => ({
                filename: a.filename ?? '',
                contentType: a.contentType,
                content: a.content,
              })),
              raw,
            });
            for (const wake of [...waiters]) wake();
            callback();
          },
          (err: Error) => callback(err),
        );
      });
    },
  });
  // smtp-server reports a client's broken connection as a server error; a test client may do that.
  server.on('error', () => undefined);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  const url = `smtp://127.0.0.1:${port}`;

  return {
    url,
    urlWithLogin: (user, password) =>
      `smtp://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}`,
    env: { SMTP_URL: url, SMTP_FROM: 'Analytics reports <reports@platform.test>' },
    messages,
    messagesTo: (address) => messages.filter((m) => m.envelope.to.some((to) => key(to) === key(address))),
    attempts: (address) => attempts.get(key(address)) ?? 0,
    failTemporarily: (address, times = 1) =>
      programs.set(key(address), { kind: 'temporary', remaining: times }),
    rejectPermanently: (address) => programs.set(key(address), { kind: 'permanent' }),
    accept: (address) => programs.delete(key(address)),
    rejectLogins: () => {
      loginsRejected = true;
    },
    waitForMessages: (count, timeoutMs = 10_000) =>
      new Promise<SinkMessage[]>((resolve, reject) => {
        const check = (): boolean => {
          if (messages.length < count) return false;
          waiters.delete(wake);
          clearTimeout(timer);
          resolve([...messages]);
          return true;
        };
        const wake = (): void => void check();
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`SMTP sink: ${messages.length} of ${count} messages after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(wake);
        check();
      }),
    clear: () => {
      messages.length = 0;
      attempts.clear();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function addressesOf(value: AddressObject | AddressObject[] | undefined): string[] {
  if (!value) return [];
  const objects = Array.isArray(value) ? value : [value];
  return objects.flatMap((o) => o.value.map((a) => a.address ?? '')).filter((a) => a !== '');
}
