/** Types of `extract-reference-schemas.mjs`, for the unit test that re-runs the extraction. */
export const OPERATIONS: string[];
export function extract(doc: unknown): {
  operations: Record<string, { method: string; path: string; responses: Record<string, object | null> }>;
  schemas: Record<string, object>;
};
