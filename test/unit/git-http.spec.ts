import {
  MAX_PKT_LENGTH,
  pktLine,
  PktLineError,
  WantSectionReader,
  type WantSection,
} from '../../src/modules/data-model/git-http/pkt-line.js';
import { configEnv, servedRefs } from '../../src/modules/data-model/git-http/served-refs.js';

const A = 'a'.repeat(40);
const B = 'B'.repeat(40);
const pkt = (line: string) => pktLine(line).toString('latin1');

/** Feeds `body` to a reader in chunks of `size` bytes; the section, or null when it never ends. */
function read(body: string, size = body.length): WantSection | null {
  const reader = new WantSectionReader();
  for (let i = 0; i < body.length; i += size) {
    const section = reader.push(Buffer.from(body.slice(i, i + size), 'latin1'));
    if (section) return section;
  }
  return null;
}

describe('pkt-lines of a fetch request', () => {
  it('frames a line with its length, the four digits included', () => {
    expect(pkt('# service=git-upload-pack\n')).toBe('001e# service=git-upload-pack\n');
    expect(() => pktLine('x'.repeat(MAX_PKT_LENGTH))).toThrow(RangeError);
  });

  it('reads the wants up to the first flush, in chunks of any size, as upload-pack reads them', () => {
    const body = `${pkt(`want ${A} side-band-64k ofs-delta\n`)}${pkt(`want ${B}\n`)}${pkt('deepen 1\n')}0000${pkt(`have ${A}\n`)}`;
    for (const size of [1, 3, 7, body.length]) {
      const section = read(body, size);
      expect(section?.wants).toEqual([A, B.toLowerCase()]);
      expect(section?.deepenNot).toBe(false);
      // Everything received is kept, for upload-pack to read in its turn.
      expect(section?.received.toString('latin1').startsWith(body.slice(0, body.indexOf('0000') + 4))).toBe(
        true,
      );
    }
  });

  it('takes the hex digits after `want ` whatever follows them, and leaves other lines to upload-pack', () => {
    expect(read(`${pkt(`want ${A}garbage`)}${pkt('want short')}${pkt('')}0000`)?.wants).toEqual([A]);
    expect(read(`${pkt(`shallow ${A}\n`)}${pkt('deepen-not refs/pending/x\n')}0000`)).toEqual(
      expect.objectContaining({ wants: [], deepenNot: true }),
    );
  });

  it('waits for the flush, and refuses what is not pkt-lines', () => {
    expect(read(pkt(`want ${A}\n`))).toBeNull();
    expect(() => read('want me')).toThrow(PktLineError);
    // Protocol v2's delimiters, and lengths past git's own limit.
    expect(() => read('0001')).toThrow(PktLineError);
    expect(() => read('fff5')).toThrow(PktLineError);
  });
});

describe('the refs a caller is served', () => {
  const hidden = (branches: string[], userId: number) =>
    servedRefs(branches, userId).map(([, value]) => value);

  it('hides every ref, then serves shared branches and the caller’s own dev branches by exact name', () => {
    expect(
      hidden(['master', 'feature/x', 'dev-5-abcdef12', 'dev-55-abcdef12', 'dev-6-0123abcd', 'dev-5-x'], 5),
    ).toEqual([
      'refs/',
      '!refs/heads/master',
      '!refs/heads/feature/x',
      '!refs/heads/dev-5-abcdef12',
      // `dev-5-x` is not a dev branch's name: a shared branch.
      '!refs/heads/dev-5-x',
    ]);
    expect(servedRefs([], 1)).toEqual([['uploadpack.hideRefs', 'refs/']]);
  });

  it('passes configuration as git’s environment variables', () => {
    expect(configEnv([['pack.threads', '1'], ...servedRefs(['main'], 1)])).toEqual({
      GIT_CONFIG_COUNT: '3',
      GIT_CONFIG_KEY_0: 'pack.threads',
      GIT_CONFIG_VALUE_0: '1',
      GIT_CONFIG_KEY_1: 'uploadpack.hideRefs',
      GIT_CONFIG_VALUE_1: 'refs/',
      GIT_CONFIG_KEY_2: 'uploadpack.hideRefs',
      GIT_CONFIG_VALUE_2: '!refs/heads/main',
    });
  });
});
