/**
 * What a compile job and its answer hold, between {@link ModelCompiler} (in the API or worker) and
 * the compile child (compile-child.mts). They travel in the sandbox's own protocol
 * (src/core/sandbox/protocol.ts: ready, a nonce, the job, one result). The child imports this file
 * for its types only.
 */
import type { ModelSummary } from '../model-summary.js';

/** A model file as Cube names it: relative to the model directory (`cubes/orders.yml`). */
export interface ChildFile {
  fileName: string;
  content: string;
}

/** The job, as one JSON document. */
export interface ChildInput {
  files: ChildFile[];
}

/** The answer, once the compile has ended. */
export interface ChildOutput {
  /** `fileName` as Cube names it (model-relative), when the compiler knows it. */
  errors: { fileName?: string; message: string }[];
  /** Cubes and views /meta would list; 0 when there are errors. */
  cubesCount: number;
  /**
   * The compiled model as review compares it (cubes and views, their members, joins,
   * pre-aggregations and access policies; bounded, sorted); only when there are no errors.
   */
  summary?: ModelSummary;
}
