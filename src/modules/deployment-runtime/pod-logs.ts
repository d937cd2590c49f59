import {
  comparePositions,
  type LogPage,
  type LogPosition,
  type RuntimeLogLine,
} from './deployment-runtime.js';

/** RFC 3339 as the kubelet writes it with `timestamps=true` (up to nanoseconds). */
const STAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A kubelet timestamp as fixed-width UTC with nanoseconds (`2026-01-02T03:04:05.120000000Z`), so
 * that text order is time order (RFC 3339 drops trailing zeros); null when it is not one.
 */
export function normalizeInstant(text: string): string | null {
  const m = STAMP.exec(text);
  if (!m) return null;
  const seconds = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(seconds)) return null;
  return `${new Date(seconds).toISOString().slice(0, 19)}.${(m[2] ?? '').padEnd(9, '0')}Z`;
}

/** The whole second of an instant, as the `sinceTime` of a log read (RFC 3339, seconds). */
export function sinceTimeOf(at: string): string {
  return `${at.slice(0, 19)}Z`;
}

/**
 * The lines of one pod's log read with `timestamps=true`: `<RFC 3339> <message>` each. `seq`
 * numbers the lines of one instant in the order read (a write of several lines gets one
 * timestamp). A read cut by `limitBytes` ends inside a line: that line is dropped unless it is
 * the only one (then it is kept cut, so a page can still move on). A line with no timestamp
 * (the kubelet writes none such) belongs to the instant before it.
 */
export function parsePodLog(pod: string, text: string, truncated: boolean): RuntimeLogLine[] {
  const raw = text.split('\n');
  const last = raw.pop() ?? '';
  if (last !== '' && (!truncated || raw.length === 0)) raw.push(last);
  const lines: RuntimeLogLine[] = [];
  for (const line of raw) {
    const space = line.indexOf(' ');
    const stamp = normalizeInstant(space === -1 ? line : line.slice(0, space));
    const previous = lines.at(-1)?.position;
    const at = stamp ?? previous?.at;
    if (at === undefined) continue;
    const message = stamp === null ? line : space === -1 ? '' : line.slice(space + 1);
    const seq = previous?.at === at ? previous.seq + 1 : 0;
    lines.push({ date: at, pod, message: message.replace(/\r$/, ''), position: { at, pod, seq } });
  }
  return lines;
}

/** One pod's read: its lines, and whether `limitBytes` cut it short. */
export interface PodRead {
  lines: RuntimeLogLine[];
  truncated: boolean;
}

/**
 * The tail page: the last `first` lines of all pods, merged by position (each pod's read is its
 * own last `first + 1` lines, so anything older than the page is known to exist).
 *
 * The first instant of a pod's tail may have started before the read, so the `seq` of its lines
 * may be too small; a page continuing from one of them then shows a few lines again, never
 * skips one.
 */
export function tailPage(reads: PodRead[], first: number): LogPage {
  const all = reads.flatMap((r) => r.lines).sort((a, b) => comparePositions(a.position, b.position));
  return { lines: all.slice(-first), hasMore: false, hasEarlier: all.length > first };
}

/**
 * The page after `after`: the first `first` lines that follow it, merged by position. Each pod
 * was read from the second of `after` on; a pod whose read was cut by `limitBytes` is known only
 * up to its last line, so no line past the earliest such cut is shown yet (the next page
 * continues from there). A pod cut before it even reached `after` cannot be paged with byte
 * limits at all and does not hold the others back.
 */
export function afterPage(reads: PodRead[], after: LogPosition, first: number): LogPage {
  let cap: LogPosition | null = null;
  for (const read of reads) {
    const last = read.lines.at(-1)?.position;
    if (!read.truncated || !last || comparePositions(last, after) <= 0) continue;
    if (cap === null || comparePositions(last, cap) < 0) cap = last;
  }
  const all = reads
    .flatMap((r) => r.lines)
    .filter(
      (l) =>
        comparePositions(l.position, after) > 0 && (cap === null || comparePositions(l.position, cap) <= 0),
    )
    .sort((a, b) => comparePositions(a.position, b.position));
  return { lines: all.slice(0, first), hasMore: all.length > first || cap !== null, hasEarlier: true };
}
