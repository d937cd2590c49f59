import { seccompFilter } from '../../src/core/sandbox/seccomp.js';

const ALLOW = 0x7fff0000;
const EPERM = 0x00050000 | 1;
const ENOSYS = 0x00050000 | 38;
const KILL = 0x80000000;

const ARCHES = {
  x64: { audit: 0xc000003e, read: 0, ioctl: 16, clone: 56, fork: 57, clone3: 435, unshare: 272 },
  arm64: { audit: 0xc00000b7, read: 63, ioctl: 29, clone: 220, fork: null, clone3: 435, unshare: 97 },
} as const;

/**
 * Runs the classic BPF program the kernel would run for one system call (struct seccomp_data:
 * nr, arch, instruction pointer, six 64-bit arguments, little-endian), and answers its verdict.
 */
function verdict(program: Buffer, arch: number, nr: number, args: bigint[] = []): number {
  const data = Buffer.alloc(64);
  data.writeUInt32LE(nr >>> 0, 0);
  data.writeUInt32LE(arch >>> 0, 4);
  args.forEach((arg, i) => data.writeBigUInt64LE(BigInt.asUintN(64, arg), 16 + 8 * i));
  let accumulator = 0;
  for (let pc = 0; pc < program.length / 8;) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    switch (code) {
      case 0x20: // ld [k]
        accumulator = data.readUInt32LE(k);
        pc += 1;
        break;
      case 0x15: // jeq #k
        pc += 1 + (accumulator === k ? jt : jf);
        break;
      case 0x35: // jge #k
        pc += 1 + (accumulator >= k ? jt : jf);
        break;
      case 0x45: // jset #k
        pc += 1 + ((accumulator & k) !== 0 ? jt : jf);
        break;
      case 0x06: // ret #k
        return k;
      default:
        throw new Error(`unexpected BPF instruction ${code.toString(16)} at ${pc}`);
    }
  }
  throw new Error('the program ran off its end');
}

describe.each(Object.entries(ARCHES))('the sandbox’s seccomp filter on %s', (name, arch) => {
  const program = seccompFilter(name)!;
  const call = (nr: number, ...args: bigint[]) => verdict(program, arch.audit, nr, args);

  it('allows ordinary calls and threads', () => {
    expect(call(arch.read, 0n)).toBe(ALLOW);
    const CLONE_THREAD_FLAGS = 0x3d0f00n; // what glibc's pthread_create passes
    expect(call(arch.clone, CLONE_THREAD_FLAGS)).toBe(ALLOW);
  });

  it('refuses new processes, namespaces, and clone3 as absent', () => {
    expect(call(arch.clone, 0x11n /* SIGCHLD: a fork */)).toBe(EPERM);
    if (arch.fork !== null) expect(call(arch.fork)).toBe(EPERM);
    expect(call(arch.unshare, 0n)).toBe(EPERM);
    expect(call(arch.clone3, 0n)).toBe(ENOSYS);
  });

  it('refuses terminal input injection and console control, and no other ioctl', () => {
    expect(call(arch.ioctl, 0n, 0x5412n)).toBe(EPERM); // TIOCSTI
    expect(call(arch.ioctl, 0n, 0x541cn)).toBe(EPERM); // TIOCLINUX
    // The kernel reads the request as 32 bits: high bits set do not get TIOCSTI through.
    expect(call(arch.ioctl, 0n, 0xffffffff00005412n)).toBe(EPERM);
    expect(call(arch.ioctl, 0n, 0x5401n)).toBe(ALLOW); // TCGETS
    expect(call(arch.ioctl, 0n, 0x541bn)).toBe(ALLOW); // FIONREAD
  });

  it('kills a call made for another architecture', () => {
    const other = name === 'x64' ? ARCHES.arm64.audit : ARCHES.x64.audit;
    expect(verdict(program, other, arch.read)).toBe(KILL);
  });
});

it('kills x32 system calls on x86-64', () => {
  expect(verdict(seccompFilter('x64')!, ARCHES.x64.audit, 0x40000000 | 0)).toBe(KILL);
});
