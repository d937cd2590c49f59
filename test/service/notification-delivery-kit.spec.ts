import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Test } from '@nestjs/testing';
import { PNG } from 'pngjs';
import { AppConfig } from '../../src/core/config/app-config.js';
import { ConfigModule } from '../../src/core/config/config.module.js';
import {
  renderEmailHtml,
  renderEmailText,
  renderPageHtml,
  type DashboardDocument,
} from '../../src/modules/notifications/delivery/dashboard-document.js';
import {
  DashboardRenderer,
  RenderError,
} from '../../src/modules/notifications/delivery/dashboard-renderer.js';
import { NotificationDeliveryModule } from '../../src/modules/notifications/delivery/delivery.module.js';
import { MailNotConfiguredError, Mailer } from '../../src/modules/notifications/delivery/mailer.js';
import { readPdf } from '../support/pdf.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';

/**
 * The delivery kit of scheduled notifications, for real: the dashboard rendered by Debian's
 * Chromium to a PDF and a PNG that are decoded here, and mail sent over SMTP to a loopback server
 * (`smtp-server`) whose answers are programmed per recipient. One browser for the whole file.
 */

jest.setTimeout(120_000);

const TITLE = 'Sales <script>alert("x")</script> & "Q4" o\'clock';
const HOSTILE_CELL = '<img src=x onerror=alert(1)>';
const PASSWORD = 'p@ss:w/rd-7f3c9e';
const ENV_SECRET = `delivery-secret-${randomBytes(8).toString('hex')}`;

const doc: DashboardDocument = {
  title: TITLE,
  link: 'https://app.example.com/dashboards/7?tab=1&from="x"',
  generatedAt: new Date('2026-11-24T08:00:00Z'),
  timezone: 'Europe/Berlin',
  filters: ['Country is <b>France</b>'],
  tables: [
    {
      title: 'Revenue by region',
      columns: ['region', 'revenue', 'since'],
      rows: [
        { region: HOSTILE_CELL, revenue: 1200.5, since: new Date('2026-01-01T00:00:00Z') },
        { region: 'O\'Brien "quoted"', revenue: null, since: null },
        { region: 'Nord', revenue: 98765, since: { nested: true } },
      ],
      truncated: true,
    },
    { title: 'Broken report', columns: [], rows: [], error: 'Query failed: <timeout> after 30 s' },
    { title: 'Empty report', columns: ['a'], rows: [] },
  ],
};

function config(env: Record<string, string> = {}): AppConfig {
  return new AppConfig('worker', { NODE_ENV: 'test', ...env });
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function message(to: string, attachments: { filename: string; contentType: string; content: Buffer }[] = []) {
  return {
    to,
    subject: `Dashboard: ${TITLE}`,
    html: renderEmailHtml(doc),
    text: renderEmailText(doc),
    attachments,
  };
}

let renderer: DashboardRenderer;
let sink: SmtpSink;
let mailer: Mailer;
const timings: string[] = [];

beforeAll(async () => {
  // Before the browser starts: a Chromium that inherited our environment would hold this.
  process.env.DELIVERY_TEST_SECRET = ENV_SECRET;
  renderer = new DashboardRenderer(config());
  sink = await startSmtpSink();
  mailer = new Mailer(config(sink.env));
});

afterAll(async () => {
  await mailer?.close();
  await renderer?.close();
  await sink?.close();
  delete process.env.DELIVERY_TEST_SECRET;
  if (timings.length > 0) process.stdout.write(`render times: ${timings.join(', ')}\n`);
});

describe('the documents', () => {
  it('escapes every value of the email HTML and keeps the title, the link and the tables', () => {
    const html = renderEmailHtml(doc);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toContain('<b>France');
    expect(html).not.toContain('"x"');
    expect(html).toContain(
      'Sales &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;Q4&quot; o&#39;clock',
    );
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('O&#39;Brien &quot;quoted&quot;');
    expect(html).toContain('href="https://app.example.com/dashboards/7?tab=1&amp;from=%22x%22"');
    expect(html).toContain('Revenue by region');
    expect(html).toContain('<th style="');
    expect(html).toContain('1200.5');
    expect(html).toContain('2026-01-01T00:00:00.000Z');
    expect(html).toContain('{&quot;nested&quot;:true}');
    expect(html).toContain('This report could not be read: Query failed: &lt;timeout&gt; after 30 s');
    expect(html).toContain('Only the first 3 rows are shown');
    expect(html).toContain('No rows.');
    expect(html).toContain('24 Nov 2026, 09:00 (Europe/Berlin)');
    expect(html).toContain('Country is &lt;b&gt;France&lt;/b&gt;');
    // Inline styles only: mail clients drop style blocks.
    expect(html).not.toContain('<style');

    const page = renderPageHtml(doc);
    expect(page).not.toMatch(/<script|<img/i);
    expect(page).toContain("default-src 'none'");
  });

  it('never makes a link of anything but an http(s) address', () => {
    for (const link of ['javascript:alert(1)', 'data:text/html,<b>x</b>', 'not a url']) {
      const html = renderEmailHtml({ ...doc, link });
      expect(html).not.toContain('href=');
      expect(html).not.toContain('javascript:');
      expect(renderPageHtml({ ...doc, link })).not.toContain('href=');
    }
  });

  it('writes a plain-text alternative with the same content', () => {
    const text = renderEmailText(doc);
    expect(text).toContain(TITLE);
    expect(text).toContain('Open the dashboard: https://app.example.com/dashboards/7?tab=1&from=%22x%22');
    expect(text).toMatch(/region\s+\| revenue \| since/);
    expect(text).toContain(HOSTILE_CELL);
    expect(text).toContain('This report could not be read: Query failed: <timeout> after 30 s');
    expect(text).toContain('Generated 24 Nov 2026, 09:00 (Europe/Berlin)');
  });
});

describe('the attachment', () => {
  it('is a PDF that decodes, with the title and the data as text', async () => {
    const started = Date.now();
    const pdf = await renderer.attachment(doc, 'pdf');
    timings.push(`pdf (browser start included) ${Date.now() - started} ms`);
    expect(pdf.contentType).toBe('application/pdf');
    expect(pdf.filename).toBe('sales-script-alert-x-script-q4-o-clock-2026-11-24.pdf');
    expect(pdf.content.subarray(0, 5).toString('latin1')).toBe('%PDF-');

    const read = await readPdf(pdf.content);
    expect(read.pages).toBeGreaterThanOrEqual(1);
    const text = read.text.replace(/\s+/g, ' ');
    // The hostile title is text in the PDF, not markup that ran.
    expect(text).toContain(TITLE);
    expect(text).toContain(HOSTILE_CELL);
    expect(text).toContain('Revenue by region');
    expect(text).toContain('98765');

    const again = Date.now();
    await renderer.attachment(doc, 'pdf');
    timings.push(`pdf (browser running) ${Date.now() - again} ms`);
  });

  it('is a PNG that decodes, page wide, with something drawn', async () => {
    const started = Date.now();
    const png = await renderer.attachment(doc, 'png');
    timings.push(`png ${Date.now() - started} ms`);
    expect(png.contentType).toBe('image/png');
    expect(png.filename).toMatch(/\.png$/);
    const image = PNG.sync.read(png.content);
    expect(image.width).toBe(1132);
    expect(image.height).toBeGreaterThan(100);
    let dark = 0;
    for (let i = 0; i < image.data.length; i += 4) if (image.data[i] < 128) dark += 1;
    expect(dark).toBeGreaterThan(100);
  });

  it("runs Chromium with none of the service's environment", () => {
    const environments: string[] = [];
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (!fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('chromium')) continue;
        environments.push(fs.readFileSync(`/proc/${entry}/environ`, 'utf8'));
      } catch {
        // ended meanwhile
      }
    }
    expect(environments.length).toBeGreaterThan(0);
    for (const environment of environments) expect(environment).not.toContain(ENV_SECRET);
  });

  it('starts the browser again after it died', async () => {
    const browser = await (renderer as unknown as { browser: Promise<{ close(): Promise<void> }> }).browser;
    await browser.close();
    const png = await renderer.attachment({ ...doc, tables: [] }, 'png');
    expect(PNG.sync.read(png.content).width).toBe(1132);
  });

  it('fails with a typed error where Chromium is missing, never silently', async () => {
    const missing = new DashboardRenderer(config({ CHROMIUM_PATH: '/nonexistent/chromium' }));
    const err = (await missing.attachment(doc, 'pdf').catch((e: unknown) => e)) as RenderError;
    expect(err).toBeInstanceOf(RenderError);
    expect(err.reason).toBe('browser_unavailable');
    expect(err.message).toContain('/nonexistent/chromium');
    expect(err.message).toContain('CHROMIUM_PATH');
  });
});

it('bounds a rendering by RENDER_TIMEOUT_MS, browser start included', async () => {
  const hanging = path.join(os.tmpdir(), `chromium-hangs-${process.pid}.sh`);
  const pidFile = `${hanging}.pid`;
  fs.writeFileSync(hanging, `#!/bin/sh\necho $$ > ${pidFile}\nexec sleep 30\n`, { mode: 0o755 });
  const slow = new DashboardRenderer(config({ CHROMIUM_PATH: hanging, RENDER_TIMEOUT_MS: '1000' }));
  try {
    const err = (await slow.attachment(doc, 'png').catch((e: unknown) => e)) as RenderError;
    expect(err).toBeInstanceOf(RenderError);
    expect(err.reason).toBe('timeout');
  } finally {
    await slow.close();
    // Playwright leaves a start that never answered running: end it here.
    const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
    if (pid > 0) process.kill(pid, 'SIGKILL');
    fs.rmSync(hanging, { force: true });
    fs.rmSync(pidFile, { force: true });
  }
});

describe('the mailer', () => {
  it('delivers one message per recipient: recipient, subject, HTML, text and the attachment bytes', async () => {
    const pdf = await renderer.attachment(doc, 'pdf');
    sink.clear();
    const outcome = await mailer.send(message('alice@example.com', [pdf]));
    expect(outcome).toMatchObject({ status: 'sent' });
    expect(outcome.status === 'sent' && outcome.messageId).toMatch(/^<.+@.+>$/);

    const [received] = await sink.waitForMessages(1);
    expect(received.envelope.to).toEqual(['alice@example.com']);
    expect(received.envelope.from).toBe('reports@platform.test');
    expect(received.to).toEqual(['alice@example.com']);
    expect(received.from).toBe('reports@platform.test');
    expect(received.subject).toBe(`Dashboard: ${TITLE}`);
    expect(received.html.trim()).toBe(renderEmailHtml(doc).trim());
    expect(received.text.trim()).toBe(renderEmailText(doc).trim());
    expect(received.headers.get('auto-submitted')).toBe('auto-generated');
    expect(received.attachments).toHaveLength(1);
    expect(received.attachments[0].filename).toBe(pdf.filename);
    expect(received.attachments[0].contentType).toBe('application/pdf');
    expect(Buffer.compare(received.attachments[0].content, pdf.content)).toBe(0);
  });

  it('classifies 451 as temporary and delivers on the next try', async () => {
    sink.failTemporarily('flaky@example.com', 1);
    const first = await mailer.send(message('flaky@example.com'));
    expect(first).toMatchObject({ status: 'temporary', code: 451 });
    expect(first.response).toContain('451');
    const second = await mailer.send(message('flaky@example.com'));
    expect(second).toMatchObject({ status: 'sent' });
    expect(sink.attempts('flaky@example.com')).toBe(2);
    expect(sink.messagesTo('flaky@example.com')).toHaveLength(1);
  });

  it('classifies 550 as permanent', async () => {
    sink.rejectPermanently('gone@example.com');
    const outcome = await mailer.send(message('gone@example.com'));
    expect(outcome).toMatchObject({ status: 'permanent', code: 550 });
    expect(outcome.response).toContain('user unknown');
    expect(sink.messagesTo('gone@example.com')).toHaveLength(0);
  });

  it('refuses anything but one address as permanent, without asking the server', async () => {
    for (const to of [
      'a@example.com, b@example.com',
      'Name <a@example.com>',
      'no-at-sign',
      'a@b.c\r\nBcc: x@y.z',
    ]) {
      expect(await mailer.send(message(to))).toMatchObject({ status: 'permanent', code: null });
    }
  });

  it('classifies a refused connection as temporary, and never repeats the password', async () => {
    const port = await closedPort();
    const refused = new Mailer(
      config({
        SMTP_URL: `smtp://robot:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}`,
        SMTP_FROM: 'r@x.test',
      }),
    );
    try {
      const outcome = await refused.send(message('bob@example.com'));
      expect(outcome).toMatchObject({ status: 'temporary', code: null });
      expect(outcome.response).toMatch(/ECONNREFUSED|ECONNECTION/);
      expect(outcome.response).not.toContain(PASSWORD);
      expect(refused.server).toBe(`smtp://robot:***@127.0.0.1:${port}`);
    } finally {
      await refused.close();
    }
  });

  it('classifies a server that never answers as temporary after SMTP_TIMEOUT_MS', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const waiting = new Mailer(
      config({ SMTP_URL: `smtp://127.0.0.1:${port}`, SMTP_FROM: 'r@x.test', SMTP_TIMEOUT_MS: '1000' }),
    );
    try {
      const outcome = await waiting.send(message('erin@example.com'));
      expect(outcome).toMatchObject({ status: 'temporary', code: null });
      expect(outcome.response).toMatch(/ETIMEDOUT|timeout/i);
    } finally {
      await waiting.close();
      silent.close();
      // The silent server holds the client's socket until it is destroyed.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  });

  it('takes the password out of what a server answers, in every form it was sent', async () => {
    const echoing = await startSmtpSink();
    echoing.rejectLogins();
    const login = new Mailer(
      config({ SMTP_URL: echoing.urlWithLogin('robot', PASSWORD), SMTP_FROM: 'r@x.test' }),
    );
    try {
      const outcome = await login.send(message('carol@example.com'));
      expect(outcome).toMatchObject({ status: 'permanent', code: 535 });
      expect(outcome.response).toContain('Authentication failed for robot');
      expect(outcome.response).toContain('***');
      expect(outcome.response).not.toContain(PASSWORD);
      expect(outcome.response).not.toContain(encodeURIComponent(PASSWORD));
      expect(outcome.response).not.toContain(Buffer.from(PASSWORD).toString('base64'));
      expect(echoing.messages).toHaveLength(0);
    } finally {
      await login.close();
      await echoing.close();
    }
  });

  it('reports itself unconfigured without SMTP_URL', async () => {
    const unconfigured = new Mailer(config());
    expect(unconfigured.configured).toBe(false);
    await expect(unconfigured.send(message('dave@example.com'))).rejects.toBeInstanceOf(
      MailNotConfiguredError,
    );
    expect(() => config({ SMTP_URL: sink.url })).toThrow(/SMTP_URL and SMTP_FROM must be set together/);
    expect(() => config({ SMTP_URL: 'http://x', SMTP_FROM: 'a@b.c' })).toThrow(/SMTP_URL must be an smtp/);
    // A bad SMTP_URL is refused without repeating it.
    const bad = (() => {
      try {
        config({ SMTP_URL: 'smtp://robot:hunter2-secret@', SMTP_FROM: 'a@b.c' });
        return null;
      } catch (err) {
        return String(err);
      }
    })();
    expect(bad).toMatch(/SMTP_URL must be an smtp/);
    expect(bad).not.toContain('hunter2-secret');
  });
});

it('NotificationDeliveryModule provides the renderer and the mailer', async () => {
  const moduleRef = await Test.createTestingModule({
    imports: [ConfigModule.forRoot(config(sink.env)), NotificationDeliveryModule],
  }).compile();
  try {
    expect(moduleRef.get(DashboardRenderer)).toBeInstanceOf(DashboardRenderer);
    expect(moduleRef.get(Mailer).configured).toBe(true);
  } finally {
    await moduleRef.close();
  }
});
