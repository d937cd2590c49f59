/**
 * git's pkt-line framing (gitprotocol-common): four hex digits giving the length of the line,
 * those four included, then the payload; `0000` is a flush. Lengths 1 to 3 are protocol v2's
 * delimiters, which the v0 protocol served here never sends.
 */

/** The longest pkt-line git reads or writes (LARGE_PACKET_MAX), its length digits included. */
export const MAX_PKT_LENGTH = 65520;

export const FLUSH_PKT = Buffer.from('0000', 'latin1');

/** One pkt-line holding `payload`. */
export function pktLine(payload: string): Buffer {
  const data = Buffer.from(payload, 'utf8');
  if (data.length + 4 > MAX_PKT_LENGTH) throw new RangeError('a pkt-line holds at most 65516 bytes');
  return Buffer.concat([Buffer.from((data.length + 4).toString(16).padStart(4, '0'), 'latin1'), data]);
}

/** A request body that is not a sequence of pkt-lines. */
export class PktLineError extends Error {}

/** What a fetch's first section, the lines up to its first flush, asks for. */
export interface WantSection {
  /** The object ids of its `want` lines, lower case, as upload-pack reads them. */
  wants: string[];
  /** Whether it holds a `deepen-not <ref>` line (`git fetch --shallow-exclude`). */
  deepenNot: boolean;
  /** Every byte received so far: the section and whatever came after it. */
  received: Buffer;
}

/**
 * upload-pack reads `want <id>` as the line's first hex digits after `want `, whatever follows;
 * the repositories are SHA-1 ones (`git init` without `--object-format`).
 */
const WANT = /^want ([0-9a-f]{40})/i;

/**
 * Reads the first section of a v0 upload-pack request (`want`, `shallow`, `deepen...` lines, then
 * a flush) from the chunks of its body as they arrive, so the wants can be checked before
 * upload-pack sees any of them. The lines are framed exactly as upload-pack frames them; a line
 * upload-pack would refuse is left for it to refuse.
 */
export class WantSectionReader {
  private received = Buffer.alloc(0);
  /** Where the next unread pkt-line starts. */
  private offset = 0;
  private readonly wants: string[] = [];
  private deepenNot = false;

  /** Takes the next chunk: the section once its flush has arrived, else null. */
  push(chunk: Buffer): WantSection | null {
    this.received = Buffer.concat([this.received, chunk]);
    while (this.received.length - this.offset >= 4) {
      const digits = this.received.toString('latin1', this.offset, this.offset + 4);
      if (!/^[0-9a-f]{4}$/i.test(digits)) throw new PktLineError('The request body is not made of pkt-lines');
      const length = parseInt(digits, 16);
      if (length === 0) {
        this.offset += 4;
        return { wants: this.wants, deepenNot: this.deepenNot, received: this.received };
      }
      if (length < 4 || length > MAX_PKT_LENGTH) {
        throw new PktLineError(`The request body holds a pkt-line of length ${length}`);
      }
      if (this.received.length - this.offset < length) return null;
      this.read(this.received.toString('latin1', this.offset + 4, this.offset + length));
      this.offset += length;
    }
    return null;
  }

  private read(line: string): void {
    const want = WANT.exec(line);
    if (want) this.wants.push(want[1].toLowerCase());
    else if (line.startsWith('deepen-not ')) this.deepenNot = true;
  }
}
