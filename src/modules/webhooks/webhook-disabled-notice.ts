/**
 * The email telling an endpoint's creator that it was disabled, and why. Pure: every value that
 * reaches HTML is escaped here.
 */

export interface DisabledNotice {
  endpointId: string;
  url: string;
  reason: string;
}

export interface RenderedNotice {
  subject: string;
  html: string;
  text: string;
}

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export function renderDisabledNotice(notice: DisabledNotice): RenderedNotice {
  const subject = `Webhook endpoint ${notice.endpointId} was disabled`;
  const lead = `The webhook endpoint ${notice.endpointId} (${notice.url}) was disabled and receives no events until it is enabled again.`;
  const why = `Why: ${notice.reason}`;
  const how =
    `Its deliveries are listed at GET /api/v1/webhooks/${notice.endpointId}/deliveries. Once the endpoint ` +
    `answers again, enable it with PATCH /api/v1/webhooks/${notice.endpointId} and {"enabled": true}; ` +
    'redeliver the events it missed from its delivery log.';
  const html = [
    '<!DOCTYPE html>',
    '<html><head><meta charset="utf-8">',
    `<title>${escapeHtml(subject)}</title></head>`,
    '<body style="margin:0;padding:24px;font-family:Helvetica,Arial,sans-serif;color:#1f2933">',
    `<h1 style="margin:0 0 12px 0;font-size:20px">${escapeHtml(subject)}</h1>`,
    `<p style="margin:0 0 12px 0;font-size:14px">${escapeHtml(lead)}</p>`,
    `<p style="margin:0 0 12px 0;font-size:14px">${escapeHtml(why)}</p>`,
    `<p style="margin:0 0 12px 0;font-size:14px">${escapeHtml(how)}</p>`,
    '</body></html>',
  ].join('\n');
  return { subject, html, text: [lead, why, how].join('\n\n') + '\n' };
}
