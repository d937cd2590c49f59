import fs from 'node:fs';
import os from 'node:os';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Browser, BrowserContext } from 'playwright-core';
import { AppConfig, type RenderingConfig } from '../../../core/config/app-config.js';
import { renderPageHtml, type DashboardDocument } from './dashboard-document.js';

export type AttachmentFormat = 'pdf' | 'png';

export interface Attachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

/**
 * Why a dashboard could not be rendered. `browser_unavailable`: Chromium is missing at
 * CHROMIUM_PATH or would not start; `timeout`: the rendering outlived RENDER_TIMEOUT_MS;
 * `failed`: anything else the browser answered. The caller records the delivery as failed.
 */
export type RenderFailure = 'browser_unavailable' | 'timeout' | 'failed';

export class RenderError extends Error {
  constructor(
    readonly reason: RenderFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'RenderError';
  }
}

/**
 * Flags for Chromium in a container, as root, on a machine with no way out. `--no-sandbox`
 * (Playwright's `chromiumSandbox: false`) because Chromium's sandbox needs user namespaces, which
 * root in a container and Docker's default seccomp profile do not give it. That is acceptable
 * here because the browser only ever sees our own page: every value in it escaped, JavaScript
 * off, and every network request aborted (see {@link DashboardRenderer}). The background-network
 * flags keep Chromium from calling Google's services at start (refused on a closed network);
 * `--disable-dev-shm-usage` because a container's /dev/shm is 64 MB by default.
 */
export const CHROMIUM_ARGS = [
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  '--disable-extensions',
];

/** The browser's viewport: the printed page's body is 1100 px wide (dashboard-document.ts). */
const VIEWPORT = { width: 1132, height: 800 };
/** The tallest PNG made; a taller page is cut (the PDF keeps every row). */
export const PNG_MAX_HEIGHT = 16_384;
/** How long closing a context may take before the browser is deemed stuck and closed. */
const CLOSE_BOUND_MS = 5_000;
/** An idle browser holds about 200 MB: it is closed after this long without a rendering. */
export const BROWSER_IDLE_MS = 5 * 60_000;

/**
 * Renders a {@link DashboardDocument} to a PDF (A4 landscape) or a full-page PNG in headless
 * Chromium (Debian's package, driven by playwright-core: no browser download).
 *
 * One browser per process, launched on the first rendering, launched again if it died, and closed
 * after {@link BROWSER_IDLE_MS} without a rendering. Each rendering gets a fresh browser context
 * (no cookies, cache or storage shared), closed afterwards, with JavaScript disabled, service
 * workers blocked and a route that aborts every request: the page is handed over with
 * `setContent`, so it needs none. The whole rendering, browser start
 * included, is bounded by RENDER_TIMEOUT_MS. Failures throw {@link RenderError}; nothing falls
 * back to another format or to no attachment.
 */
@Injectable()
export class DashboardRenderer implements OnModuleDestroy {
  private readonly logger = new Logger(DashboardRenderer.name);
  private readonly options: RenderingConfig;
  private browser: Promise<Browser> | null = null;
  private active = 0;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(config: AppConfig) {
    this.options = config.rendering;
  }

  async attachment(doc: DashboardDocument, format: AttachmentFormat): Promise<Attachment> {
    const html = renderPageHtml(doc);
    const timeoutMs = this.options.timeoutMs;
    const state: { timedOut: boolean; context: BrowserContext | null } = { timedOut: false, context: null };
    this.active += 1;
    this.clearIdleTimer();
    const work = this.render(html, format, timeoutMs, state);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        state.timedOut = true;
        reject(new RenderError('timeout', `Rendering the dashboard took longer than ${timeoutMs} ms`));
      }, timeoutMs);
    });
    try {
      const content = await Promise.race([work, deadline]);
      return {
        filename: `${attachmentBaseName(doc)}.${format}`,
        contentType: format === 'pdf' ? 'application/pdf' : 'image/png',
        content,
      };
    } catch (err) {
      if (state.timedOut) {
        work.catch(() => undefined);
        await this.abandon(state.context);
      }
      throw err;
    } finally {
      clearTimeout(timer);
      this.active -= 1;
      if (this.active === 0) {
        this.idleTimer = setTimeout(() => {
          if (this.active === 0) void this.close();
        }, BROWSER_IDLE_MS);
        this.idleTimer.unref();
      }
    }
  }

  /** Closes the browser (it is launched again by the next rendering). */
  async close(): Promise<void> {
    this.clearIdleTimer();
    const launching = this.browser;
    this.browser = null;
    if (!launching) return;
    // A start still under way is not waited for: the browser is closed if it ever comes up.
    const browser = await Promise.race([
      launching.catch(() => null),
      new Promise<'starting'>((resolve) => setImmediate(() => resolve('starting'))),
    ]);
    if (browser === 'starting') {
      launching.then(
        (late) => late.close().catch(() => undefined),
        () => undefined,
      );
      return;
    }
    await browser?.close().catch(() => undefined);
  }

  async onModuleDestroy(): Promise<void> {
    await this.close();
  }

  private clearIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  private async render(
    html: string,
    format: AttachmentFormat,
    timeoutMs: number,
    state: { timedOut: boolean; context: BrowserContext | null },
  ): Promise<Buffer> {
    const browser = await this.connectedBrowser(timeoutMs);
    if (state.timedOut) throw new RenderError('timeout', 'Rendering timed out');
    const context = await browser.newContext({
      javaScriptEnabled: false,
      serviceWorkers: 'block',
      acceptDownloads: false,
      viewport: VIEWPORT,
      deviceScaleFactor: 1,
      locale: 'en-GB',
    });
    state.context = context;
    try {
      if (state.timedOut) throw new RenderError('timeout', 'Rendering timed out');
      // The page is set, not fetched: any request at all (an image, a font, a link prefetch) is ours
      // to refuse.
      await context.route('**/*', (route) => route.abort('blockedbyclient'));
      const page = await context.newPage();
      page.setDefaultTimeout(timeoutMs);
      await page.setContent(html, { waitUntil: 'load', timeout: timeoutMs });
      if (format === 'pdf') {
        return await page.pdf({
          format: 'A4',
          landscape: true,
          printBackground: true,
          preferCSSPageSize: true,
          margin: { top: '12mm', bottom: '12mm', left: '12mm', right: '12mm' },
        });
      }
      const session = await context.newCDPSession(page);
      const metrics = await session.send('Page.getLayoutMetrics');
      const height = Math.ceil(metrics.cssContentSize.height);
      return await page.screenshot({
        type: 'png',
        fullPage: true,
        timeout: timeoutMs,
        ...(height > PNG_MAX_HEIGHT
          ? { clip: { x: 0, y: 0, width: VIEWPORT.width, height: PNG_MAX_HEIGHT } }
          : {}),
      });
    } catch (err) {
      if (err instanceof RenderError) throw err;
      throw new RenderError('failed', `Rendering the dashboard failed: ${firstLine(err)}`, { cause: err });
    } finally {
      await context.close().catch(() => undefined);
    }
  }

  /** The process's browser, launched on first use and again after it died. */
  private async connectedBrowser(timeoutMs: number): Promise<Browser> {
    const current = this.browser;
    if (current) {
      const browser = await current.catch(() => null);
      if (browser?.isConnected()) return browser;
      if (this.browser === current) this.browser = null;
    }
    if (!this.browser) {
      const launching = this.launch(timeoutMs);
      this.browser = launching;
      launching.then(
        (browser) =>
          browser.on('disconnected', () => {
            if (this.browser === launching) this.browser = null;
          }),
        () => {
          if (this.browser === launching) this.browser = null;
        },
      );
    }
    return this.browser;
  }

  private async launch(timeoutMs: number): Promise<Browser> {
    const executablePath = this.options.chromiumPath;
    try {
      fs.accessSync(executablePath, fs.constants.X_OK);
    } catch {
      throw new RenderError(
        'browser_unavailable',
        `Chromium was not found at ${executablePath} (CHROMIUM_PATH): install Debian's chromium ` +
          'package, or set CHROMIUM_PATH to a Chromium executable',
      );
    }
    const started = Date.now();
    try {
      // Loaded at the first render, not at start-up: its 7 MB of JavaScript cost every process
      // (API, worker, CLI) about half a second of start that most never use.
      const { chromium } = await import('playwright-core');
      const browser = await chromium.launch({
        executablePath,
        headless: true,
        chromiumSandbox: false,
        args: CHROMIUM_ARGS,
        // The rendering's own deadline comes first; this one ends a start that hangs for good.
        timeout: timeoutMs + CLOSE_BOUND_MS,
        // Chromium inherits nothing of ours (the SMTP password, database URL and keys live in env).
        env: {
          PATH: '/usr/bin:/bin',
          HOME: os.homedir(),
          TMPDIR: os.tmpdir(),
        },
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
      this.logger.log(`Chromium ${browser.version()} started in ${Date.now() - started} ms`);
      return browser;
    } catch (err) {
      throw new RenderError('browser_unavailable', `Chromium would not start: ${firstLine(err)}`, {
        cause: err,
      });
    }
  }

  /** After a timeout: close the rendering's context; a browser that cannot even do that is closed. */
  private async abandon(context: BrowserContext | null): Promise<void> {
    if (!context) return;
    const closed = await Promise.race([
      context.close().then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), CLOSE_BOUND_MS).unref()),
    ]);
    if (!closed) {
      this.logger.warn('Chromium did not close a timed-out rendering: restarting it');
      await this.close();
    }
  }
}

/** `quarterly-sales-2026-11-24`: the title as a file name, with the day it was made. */
export function attachmentBaseName(
  doc: Pick<DashboardDocument, 'title' | 'generatedAt' | 'timezone'>,
): string {
  const slug = doc.title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  let day: string;
  try {
    day = new Intl.DateTimeFormat('en-CA', { timeZone: doc.timezone }).format(doc.generatedAt);
  } catch {
    day = doc.generatedAt.toISOString().slice(0, 10);
  }
  return `${slug || 'dashboard'}-${day}`;
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return (text.split('\n').find((l) => l.trim() !== '') ?? 'unknown error').trim().slice(0, 500);
}
