import { dataLimitBytes, ISOLATE_RESERVE_MB, NODE_VERSION } from '../../src/core/sandbox/sandbox-command.js';
import { startFailure } from '../../src/core/sandbox/sandbox-child.js';

describe('sandbox data limit', () => {
  it("reserves V8's code range per isolate where Node maps it at start (Node 24), nothing on Node 20", () => {
    expect(ISOLATE_RESERVE_MB).toBe(NODE_VERSION.major >= 24 ? 544 : 0);
    expect(dataLimitBytes({ memoryMb: 512 })).toBe((512 + ISOLATE_RESERVE_MB) * 1024 * 1024);
    // A compile child with two transpiler threads runs three isolates.
    expect(dataLimitBytes({ memoryMb: 512, isolates: 3 })).toBe((512 + 3 * ISOLATE_RESERVE_MB) * 1024 * 1024);
  });
});

describe('a child that died starting', () => {
  it("is told by V8's fatal line, not by the native stack trace after it", () => {
    const stderr = [
      '',
      '#',
      '# Fatal process out of memory: Failed to reserve virtual memory for CodeRange',
      '#',
      '----- Native stack trace -----',
      '',
      ' 1: 0x9dde61  [/usr/local/bin/node]',
      ' 2: 0x27ab085 v8::base::FatalOOM(v8::base::OOMType, char const*) [/usr/local/bin/node]',
      '',
    ].join('\n');
    expect(startFailure(stderr)).toBe(
      'Fatal process out of memory: Failed to reserve virtual memory for CodeRange',
    );
    expect(
      startFailure(
        '<--- JS stacktrace --->\nFATAL ERROR: Zone Allocation failed - process out of memory\n 1: 0x1',
      ),
    ).toBe('FATAL ERROR: Zone Allocation failed - process out of memory');
    expect(
      startFailure("TypeError: Cannot read properties of undefined (reading 'x')\n    at f (a.js:1:1)"),
    ).toBe("TypeError: Cannot read properties of undefined (reading 'x')");
  });

  it('is told by its last three lines when it printed no fatal line', () => {
    expect(startFailure('one\ntwo\nthree\nfour\n')).toBe('two | three | four');
    expect(startFailure('')).toBe('');
  });
});
