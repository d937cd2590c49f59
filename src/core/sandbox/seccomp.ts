/**
 * The seccomp filter bubblewrap installs on every sandboxed child (`--seccomp FD`), as the classic
 * BPF program the kernel takes (an array of `struct sock_filter`).
 *
 * Why: Node is in the sandbox (it runs Pyodide, or Cube's compiler), so code that reaches
 * `child_process` (through Pyodide's JS bridge, or a model's escape from the compiler's `vm`)
 * could start more Node processes: each would get its own memory cap (an
 * rlimit is per process) and the cap would mean nothing. The filter refuses new processes (fork,
 * vfork, clone without CLONE_THREAD; threads stay allowed), and with them a few kernel interfaces
 * untrusted code never needs (namespaces, mounts, ptrace, BPF, perf, userfaultfd, keyrings, io_uring).
 * `clone3` answers ENOSYS: its flags sit in memory a filter cannot read, and the C library then
 * falls back to `clone`, whose flags it can (Docker's default profile does the same). The
 * `ioctl`s that push input into a terminal (TIOCSTI) or drive the console (TIOCLINUX) are
 * refused, as Flatpak's filter does: that is what lets the child stay in the service's session
 * (bubblewrap's `--new-session` would make it a scheduler group of its own). `execve`
 * stays allowed, as bubblewrap starts the child with it after installing the filter; without
 * fork, an exec could only replace the child with the one program in the sandbox, Node.
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;

const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const SECCOMP_RET_ERRNO = 0x00050000;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const EPERM = 1;
const ENOSYS = 38;

const CLONE_THREAD = 0x00010000;
/** ioctl requests that inject terminal input or drive the console (asm-generic/ioctls.h). */
const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;
/**
 * struct seccomp_data: nr at 0, arch at 4, args[0] at 16 and args[1] at 24 (their low 32 bits on
 * little-endian; the kernel reads an ioctl request as 32 bits, so the high half cannot hide one).
 */
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0_LOW = 16;
const OFFSET_ARG1_LOW = 24;
/** x86-64's x32 ABI: the same audit arch, syscall numbers with this bit set. */
const X32_SYSCALL_BIT = 0x40000000;

interface SyscallTable {
  auditArch: number;
  clone: number;
  clone3: number;
  ioctl: number;
  /** Refused with EPERM. */
  denied: number[];
  hasX32: boolean;
}

/** Numbers shared by every architecture since Linux 5.1 (the unified table). */
const COMMON_NEW = {
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  mount_setattr: 442,
};

const TABLES: Record<string, SyscallTable> = {
  x64: {
    auditArch: 0xc000003e,
    clone: 56,
    clone3: 435,
    ioctl: 16,
    hasX32: true,
    denied: [
      57, // fork
      58, // vfork
      272, // unshare
      308, // setns
      165, // mount
      166, // umount2
      155, // pivot_root
      161, // chroot
      101, // ptrace
      310, // process_vm_readv
      311, // process_vm_writev
      321, // bpf
      298, // perf_event_open
      323, // userfaultfd
      250, // keyctl
      248, // add_key
      249, // request_key
      ...Object.values(COMMON_NEW),
    ],
  },
  arm64: {
    auditArch: 0xc00000b7,
    clone: 220,
    clone3: 435,
    ioctl: 29,
    hasX32: false,
    denied: [
      // arm64 has no fork or vfork system calls: the C library uses clone.
      97, // unshare
      268, // setns
      40, // mount
      39, // umount2
      41, // pivot_root
      51, // chroot
      117, // ptrace
      270, // process_vm_readv
      271, // process_vm_writev
      280, // bpf
      241, // perf_event_open
      282, // userfaultfd
      219, // keyctl
      217, // add_key
      218, // request_key
      ...Object.values(COMMON_NEW),
    ],
  },
};

type Instruction =
  | { op: 'label'; name: string }
  | { op: 'load'; offset: number }
  | { op: 'jeq' | 'jge' | 'jset'; k: number; onTrue?: string; onFalse?: string }
  | { op: 'return'; value: number };

/** The filter for `arch` (Node's `process.arch`), or null where this service has no table for it. */
export function seccompFilter(arch: string = process.arch): Buffer | null {
  const table = TABLES[arch];
  if (!table) return null;
  const program: Instruction[] = [
    { op: 'load', offset: OFFSET_ARCH },
    { op: 'jeq', k: table.auditArch, onFalse: 'kill' },
    { op: 'load', offset: OFFSET_NR },
    ...(table.hasX32 ? [{ op: 'jge' as const, k: X32_SYSCALL_BIT, onTrue: 'kill' }] : []),
    ...table.denied.map((nr) => ({ op: 'jeq' as const, k: nr, onTrue: 'eperm' })),
    { op: 'jeq', k: table.clone3, onTrue: 'enosys' },
    { op: 'jeq', k: table.clone, onTrue: 'clone' },
    { op: 'jeq', k: table.ioctl, onTrue: 'ioctl' },
    { op: 'return', value: SECCOMP_RET_ALLOW },
    { op: 'label', name: 'ioctl' },
    { op: 'load', offset: OFFSET_ARG1_LOW },
    { op: 'jeq', k: TIOCSTI, onTrue: 'eperm' },
    { op: 'jeq', k: TIOCLINUX, onTrue: 'eperm', onFalse: 'allow' },
    { op: 'label', name: 'clone' },
    { op: 'load', offset: OFFSET_ARG0_LOW },
    { op: 'jset', k: CLONE_THREAD, onTrue: 'allow', onFalse: 'eperm' },
    { op: 'label', name: 'allow' },
    { op: 'return', value: SECCOMP_RET_ALLOW },
    { op: 'label', name: 'eperm' },
    { op: 'return', value: SECCOMP_RET_ERRNO | EPERM },
    { op: 'label', name: 'enosys' },
    { op: 'return', value: SECCOMP_RET_ERRNO | ENOSYS },
    { op: 'label', name: 'kill' },
    { op: 'return', value: SECCOMP_RET_KILL_PROCESS },
  ];
  return assemble(program);
}

function assemble(program: Instruction[]): Buffer {
  const labels = new Map<string, number>();
  let pc = 0;
  for (const instruction of program) {
    if (instruction.op === 'label') labels.set(instruction.name, pc);
    else pc += 1;
  }
  const out = Buffer.alloc(pc * 8);
  pc = 0;
  const jump = (label: string | undefined): number => {
    if (label === undefined) return 0;
    const target = labels.get(label);
    if (target === undefined) throw new Error(`seccomp: no label ${label}`);
    const distance = target - pc - 1;
    if (distance < 0 || distance > 255) throw new Error(`seccomp: jump to ${label} out of range`);
    return distance;
  };
  for (const instruction of program) {
    if (instruction.op === 'label') continue;
    let code: number;
    let jt = 0;
    let jf = 0;
    let k: number;
    if (instruction.op === 'load') {
      code = BPF_LD_W_ABS;
      k = instruction.offset;
    } else if (instruction.op === 'return') {
      code = BPF_RET_K;
      k = instruction.value;
    } else {
      code = { jeq: BPF_JEQ_K, jge: BPF_JGE_K, jset: BPF_JSET_K }[instruction.op];
      jt = jump(instruction.onTrue);
      jf = jump(instruction.onFalse);
      k = instruction.k;
    }
    // struct sock_filter { __u16 code; __u8 jt; __u8 jf; __u32 k; } in the machine's order; both
    // architectures with a table are little-endian.
    out.writeUInt16LE(code, pc * 8);
    out.writeUInt8(jt, pc * 8 + 2);
    out.writeUInt8(jf, pc * 8 + 3);
    out.writeUInt32LE(k >>> 0, pc * 8 + 4);
    pc += 1;
  }
  return out;
}
