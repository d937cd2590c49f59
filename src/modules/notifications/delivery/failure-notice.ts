/**
 * The email telling a notification's owner that a run mailed some or all of its recipients
 * nothing (every report failed, or the rendering did), or that the mail server refused some of
 * them for good (`refused`), and why. Pure, like dashboard-document.ts: every value that reaches
 * HTML is escaped here. No attachment goes with it.
 */
import { escapeHtml, formatGeneratedAt, safeLink } from './dashboard-document.js';

export interface FailureNotice {
  /** The dashboard's title. */
  title: string;
  notificationId: number;
  /** The occurrence the run fired for. */
  scheduledFor: Date;
  /** IANA zone the time is shown in (the notification's); UTC when unknown. */
  timezone: string;
  /** Recipients not mailed, and all the run's recipients. */
  notMailed: number;
  recipients: number;
  /** Why: the same text as the run's history and the deliveries' `lastError`. */
  reason: string;
  /** Each report's error, when the reports are what failed. */
  reports: { title: string; error: string }[];
  /**
   * The recipients the mail server refused for good (SMTP 5xx), with its answer: the email then
   * says the report was not delivered to them (rather than not sent) and how to resend it.
   */
  refused?: { email: string; error: string | null }[];
  /** Where the dashboard opens (DASHBOARD_URL_TEMPLATE); only an http(s) address becomes a link. */
  link: string;
}

export interface RenderedNotice {
  subject: string;
  html: string;
  text: string;
}

const FONT = "font-family:Helvetica,Arial,'DejaVu Sans',sans-serif";

export function renderFailureNotice(notice: FailureNotice): RenderedNotice {
  const when = formatGeneratedAt({ generatedAt: notice.scheduledFor, timezone: notice.timezone });
  const refused = notice.refused ?? [];
  const who =
    notice.notMailed === notice.recipients
      ? `None of its ${notice.recipients} recipient${notice.recipients === 1 ? ' was' : 's were'} mailed`
      : `${notice.notMailed} of its ${notice.recipients} recipients were not mailed`;
  const lead =
    refused.length > 0
      ? `The scheduled report of ${notice.title} (notification ${notice.notificationId}) for ${when} did not reach ` +
        `${refused.length} of its ${notice.recipients} recipient${notice.recipients === 1 ? '' : 's'}: the mail server ` +
        'refused the address for good, so it is not tried again.'
      : `The scheduled report of ${notice.title} (notification ${notice.notificationId}) for ${when} was not sent. ${who}: an email holding only errors is sent to nobody.`;
  const resend =
    `Once an address is fixed, resend its delivery: POST .../notifications/${notice.notificationId}` +
    '/deliveries/{deliveryId}/resend (the deliveries list gives each id).';
  const link = safeLink(notice.link);
  const subject =
    refused.length > 0
      ? `${notice.title}: scheduled report not delivered`
      : `${notice.title}: scheduled report not sent`;

  const html = [
    '<!DOCTYPE html>',
    '<html><head><meta charset="utf-8">',
    `<title>${escapeHtml(subject)}</title></head>`,
    `<body style="margin:0;padding:24px;background:#ffffff;${FONT};color:#1f2933">`,
    `<h1 style="margin:0 0 12px 0;font-size:20px">${escapeHtml(subject)}</h1>`,
    `<p style="margin:0 0 12px 0;font-size:14px">${escapeHtml(lead)}</p>`,
    `<p style="margin:0 0 12px 0;font-size:14px"><strong>Why:</strong> ${escapeHtml(notice.reason)}</p>`,
    ...(notice.reports.length > 0
      ? [
          '<ul style="margin:0 0 12px 0;padding-left:20px;font-size:14px">',
          ...notice.reports.map(
            (r) => `<li><strong>${escapeHtml(r.title)}</strong>: ${escapeHtml(r.error)}</li>`,
          ),
          '</ul>',
        ]
      : []),
    ...(refused.length > 0
      ? [
          '<ul style="margin:0 0 12px 0;padding-left:20px;font-size:14px">',
          ...refused.map(
            (r) => `<li><strong>${escapeHtml(r.email)}</strong>: ${escapeHtml(r.error ?? 'refused')}</li>`,
          ),
          '</ul>',
          `<p style="margin:0 0 12px 0;font-size:14px">${escapeHtml(resend)}</p>`,
        ]
      : []),
    '<p style="margin:0 0 12px 0;font-size:13px;color:#5f6b7a">The notification’s deliveries ' +
      '(<code>GET .../notifications/' +
      `${notice.notificationId}/deliveries</code>) say the same for each recipient.</p>`,
    ...(link
      ? [`<p style="margin:0;font-size:13px"><a href="${escapeHtml(link)}">Open the dashboard</a></p>`]
      : []),
    '</body></html>',
  ].join('\n');

  const text = [
    subject,
    '',
    lead,
    '',
    `Why: ${notice.reason}`,
    ...(notice.reports.length > 0 ? ['', ...notice.reports.map((r) => `- ${r.title}: ${r.error}`)] : []),
    ...(refused.length > 0
      ? ['', ...refused.map((r) => `- ${r.email}: ${r.error ?? 'refused'}`), '', resend]
      : []),
    '',
    `The notification's deliveries (GET .../notifications/${notice.notificationId}/deliveries) say the same for each recipient.`,
    ...(link ? [`Open the dashboard: ${link}`] : []),
    '',
  ]
    .join('\n')
    .replace(/\r/g, '');
  return { subject, html, text };
}
