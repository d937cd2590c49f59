import { Webhook } from 'standardwebhooks';
import { renderDisabledNotice } from '../../src/modules/webhooks/webhook-disabled-notice.js';
import { eventBodyText } from '../../src/modules/webhooks/webhook-event-publisher.service.js';
import { backoffSeconds } from '../../src/modules/webhooks/webhook-jobs.js';
import {
  newSecret,
  signature,
  signatureHeaders,
  verifySignature,
} from '../../src/modules/webhooks/webhook-signature.js';

/**
 * The signer of webhook deliveries (docs/webhooks.md, Verifying a delivery), checked against the
 * `standardwebhooks` package: an implementation of the same scheme written by others.
 */
describe('webhook signatures', () => {
  const body = JSON.stringify({ id: 'evt_1', type: 'folder.created', data: { name: 'Sales ✓' } });
  const now = () => Math.floor(Date.now() / 1000);

  it('makes secrets as Standard Webhooks has them: whsec_ and a base64 key of 32 bytes, each new', () => {
    const a = newSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(newSecret()).not.toBe(a);
  });

  it('signs as the standardwebhooks package verifies, and as it signs itself', () => {
    const secret = newSecret();
    const content = { id: 'evt_1', timestamp: now(), body };
    const headers = signatureHeaders([secret], content);
    expect(headers).toEqual({
      'webhook-id': 'evt_1',
      'webhook-timestamp': String(content.timestamp),
      'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]+=*$/),
    });
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(headers['webhook-signature']).toBe(
      new Webhook(secret).sign('evt_1', new Date(content.timestamp * 1000), body),
    );
  });

  it('carries one signature per secret during a rotation, either verifying', () => {
    const [current, previous, stranger] = [newSecret(), newSecret(), newSecret()];
    const content = { id: 'evt_2', timestamp: now(), body };
    const headers = signatureHeaders([current, previous], content);
    expect(headers['webhook-signature'].split(' ')).toEqual([
      signature(current, content),
      signature(previous, content),
    ]);
    expect(() => new Webhook(current).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(previous).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(stranger).verify(body, headers)).toThrow();
    expect(verifySignature(previous, content, headers['webhook-signature'])).toBe(true);
    expect(verifySignature(stranger, content, headers['webhook-signature'])).toBe(false);
  });

  it('signs the exact bytes: another body, id or timestamp does not verify', () => {
    const secret = newSecret();
    const content = { id: 'evt_3', timestamp: now(), body };
    const sig = signature(secret, content);
    expect(verifySignature(secret, { ...content, body: `${body} ` }, sig)).toBe(false);
    expect(verifySignature(secret, { ...content, id: 'evt_4' }, sig)).toBe(false);
    expect(verifySignature(secret, { ...content, timestamp: content.timestamp + 1 }, sig)).toBe(false);
    expect(verifySignature(secret, content, sig)).toBe(true);
    expect(() => signatureHeaders([], content)).toThrow();
  });

  it('writes an event body with its fields in one order, whatever order it was stored in', () => {
    const stored = {
      data: { b: 1, a: 2 },
      resource: { type: 'folder', id: 7 },
      timestamp: '2026-01-02T03:04:05.678Z',
      type: 'folder.created',
      id: 'evt_5',
    };
    expect(eventBodyText(stored)).toBe(
      '{"id":"evt_5","type":"folder.created","timestamp":"2026-01-02T03:04:05.678Z",' +
        '"resource":{"type":"folder","id":7},"data":{"b":1,"a":2}}',
    );
  });

  it('waits 30 s after a first failure, doubling each time, at most an hour', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 50].map(backoffSeconds)).toEqual([
      30, 60, 120, 240, 480, 960, 1920, 3600, 3600, 3600,
    ]);
  });

  it('tells a disabled endpoint’s creator why, escaping what reaches HTML', () => {
    const notice = renderDisabledNotice({
      endpointId: '7',
      url: 'https://hooks.example.com/<x>?a=1&b=2',
      reason: '10 deliveries in a row failed; the last: HTTP 500: <b>down</b>',
    });
    expect(notice.subject).toBe('Webhook endpoint 7 was disabled');
    expect(notice.html).toContain('https://hooks.example.com/&lt;x&gt;?a=1&amp;b=2');
    expect(notice.html).toContain('HTTP 500: &lt;b&gt;down&lt;/b&gt;');
    expect(notice.html).not.toContain('<b>down</b>');
    expect(notice.text).toContain('PATCH /api/v1/webhooks/7');
  });
});
