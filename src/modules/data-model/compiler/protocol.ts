/**
 * What passes between {@link ModelCompiler} (in the API) and the compile child (compile-child.ts).
 * The child imports this file too, so it holds no imports of its own: the child may read only its
 * own directory and node_modules.
 */

/** A model file as Cube names it: relative to the model directory (`cubes/orders.yml`). */
export interface ChildFile {
  fileName: string;
  content: string;
}

/** Written by the parent to the child's standard input, as one JSON document. */
export interface ChildInput {
  /** Absolute path of `@cubejs-backend/schema-compiler`'s entry, resolved by the parent. */
  compilerEntry: string;
  files: ChildFile[];
}

/** Written by the child to {@link RESULT_FD} once the compile has ended, as one JSON document. */
export interface ChildOutput {
  /** `fileName` as Cube names it (model-relative), when the compiler knows it. */
  errors: { fileName?: string; message: string }[];
  /** Cubes and views /meta would list; 0 when there are errors. */
  cubesCount: number;
}

/**
 * The result goes to a pipe of its own, not standard output: the compiler (and a hostile model)
 * may print to standard output, and nothing printed there can be mistaken for the result.
 */
export const RESULT_FD = 3;

/** The child's exit code when it could not load the schema compiler at all (EX_CONFIG). */
export const EXIT_COMPILER_MISSING = 78;
