/**
 * The order test files start in: the longest first, so none of them starts last and holds the run
 * up while the other workers are idle. Jest orders by the times of its previous run when it has
 * them (its cache), and by file size otherwise, which on a fresh clone (CI) starts the long
 * process and sandbox files last. The files below are the longest (seconds on 2 cores, 2026-11-27);
 * they start first, in this order; every other file keeps Jest's own order.
 */
import path from 'node:path';
import Sequencer from '@jest/test-sequencer';

const LONGEST = [
  'model-sandbox.e2e-spec.ts', // ~120 s
  'queue.e2e-spec.ts', // ~60 s
  'scale-out.e2e-spec.ts', // ~60 s
  'processes.e2e-spec.ts', // ~55 s
  'model-verdicts.e2e-spec.ts', // ~45 s
  'content.e2e-spec.ts', // ~45 s (a group of parts)
  'access.e2e-spec.ts', // ~45 s (a group)
  'delivery.e2e-spec.ts', // ~30 s (a group)
  'model-compiler.spec.ts', // ~40 s
  'python-sandbox.spec.ts', // ~40 s
  'dbt-converter-compile.spec.ts', // ~40 s
  'deploying.e2e-spec.ts', // ~35 s (a group)
  'contract.e2e-spec.ts', // ~35 s (a group)
  'runtime-process.e2e-spec.ts', // ~45 s
  'fuzz.e2e-spec.ts', // ~35 s
  'model-git.e2e-spec.ts', // ~45 s (a group)
  'data-model.service.spec.ts', // ~33 s
  'embedding.e2e-spec.ts', // ~30 s (a group)
  'notification-crash.e2e-spec.ts', // ~30 s
  'cli.e2e-spec.ts', // ~30 s
  'connections.e2e-spec.ts', // ~30 s (a group)
  'scim.e2e-spec.ts', // ~25 s (a group)
  'runtimes.e2e-spec.ts', // ~25 s (a group)
  'embedded.e2e-spec.ts', // ~25 s
  'migrations.e2e-spec.ts', // ~25 s
];

const rank = (test) => {
  const i = LONGEST.indexOf(path.basename(test.path));
  return i < 0 ? LONGEST.length : i;
};

class LongestFirst extends Sequencer {
  sort(tests) {
    // Array.prototype.sort is stable: files of equal rank keep Jest's order.
    return [...super.sort(tests)].sort((a, b) => rank(a) - rank(b));
  }
}

export default LongestFirst;
