import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { OUTBOUND_REFUSED, OutboundRefused, pinUrl } from '../../core/net/outbound-address.js';
import { requestPinned } from '../../core/net/pinned-request.js';

/** Most bytes of a non-2xx answer kept in the delivery's `lastError`. */
export const ANSWER_KEPT_BYTES = 1024;

/** How one POST went: a 2xx (`ok`), another status, or no answer at all (`statusCode` null). */
export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  /** Null for a 2xx; else what went wrong, for the tenant (the answer's first 1 KB, or a few words). */
  error: string | null;
}

/**
 * POSTs a delivery to an endpoint, under the outbound rule (core/net): the host is resolved and
 * checked now, and the request connects to the address checked and no other. No redirect is
 * followed (a 3xx is a failure), the whole exchange is bounded by `WEBHOOK_TIMEOUT_MS`, and of an
 * answer's body only the first 1 KB is read, and only for a failure. Never throws.
 */
@Injectable()
export class WebhookSender {
  private readonly logger = new Logger('Webhooks');

  constructor(private readonly config: AppConfig) {}

  async post(url: string, body: string, headers: Record<string, string>): Promise<SendResult> {
    const timeoutMs = this.config.webhooks.timeoutMs;
    const signal = AbortSignal.timeout(timeoutMs);
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    try {
      const pin = await pinUrl(url, { allow: this.config.outboundAllowList });
      const res = await requestPinned(url, pin, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': 'analytics-platform-webhooks/1',
          ...headers,
        },
        body,
        signal,
      });
      if (res.status >= 200 && res.status <= 299) {
        await res.body?.cancel().catch(() => undefined);
        return { ok: true, statusCode: res.status, durationMs: elapsed(), error: null };
      }
      const answer = await readStart(res, ANSWER_KEPT_BYTES).catch(() => '');
      return {
        ok: false,
        statusCode: res.status,
        durationMs: elapsed(),
        error: `HTTP ${res.status}${answer ? `: ${answer}` : ''}`,
      };
    } catch (err) {
      const durationMs = elapsed();
      if (err instanceof OutboundRefused) {
        this.logger.debug({ reason: err.reason, detail: err.detail }, 'webhook endpoint refused');
        return { ok: false, statusCode: null, durationMs, error: `The endpoint's URL ${OUTBOUND_REFUSED}` };
      }
      if (signal.aborted) {
        return { ok: false, statusCode: null, durationMs, error: `No answer within ${timeoutMs / 1000} s` };
      }
      return { ok: false, statusCode: null, durationMs, error: `Could not connect: ${networkError(err)}` };
    }
  }
}

/** The first `maxBytes` of an answer's body as text (the rest is not read). */
async function readStart(res: Response, maxBytes: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks)
    .subarray(0, maxBytes)
    .toString('utf8')
    .replace(/\uFFFD+$/, '')
    .replaceAll('\u0000', '');
}

/** A network error in a few words: its code (`ECONNREFUSED`) or message, no stack. */
function networkError(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) return code;
  return err instanceof Error ? err.message.slice(0, 200) : 'unknown error';
}
