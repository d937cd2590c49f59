/** Path prefixes in front of a route's resource segments. */
const PREFIXES = ['/build/api/v1/', '/api/v1/', '/api/scim/v2/'];

export interface AuditTarget {
  type: string | null;
  id: string | null;
}

/**
 * What a mutating route acts on, read from its path template and operation id:
 * - a create (`create…` operation) whose response carries an id targets the new resource in the
 *   route's last collection: `POST /deployments/:deploymentId/folders` → `folders`, the new id;
 * - otherwise the deepest `collection/:param` pair:
 *   `/deployments/:deploymentId/reports/:reportId/connect-workbook` → `reports`, the report id;
 * - otherwise the route's first collection without an id (`POST /users/bulk` → `users`).
 */
export function auditTarget(
  template: string,
  operationId: string,
  params: Record<string, string | undefined>,
  responseId: unknown,
): AuditTarget {
  const prefix = PREFIXES.find((p) => template.startsWith(p));
  const segments = (prefix ? template.slice(prefix.length) : template.replace(/^\//, ''))
    .split('/')
    .filter(Boolean);
  const collections = segments.filter((s) => !s.startsWith(':'));
  const created =
    typeof responseId === 'number' || typeof responseId === 'string' ? String(responseId) : null;
  const last = segments[segments.length - 1];
  if (/^create[A-Z]/.test(operationId) && created !== null && last && !last.startsWith(':')) {
    return { type: last, id: truncate(created) };
  }
  let found: AuditTarget | null = null;
  for (let i = 0; i + 1 < segments.length; i++) {
    const [name, next] = [segments[i], segments[i + 1]];
    if (!name.startsWith(':') && next.startsWith(':')) {
      found = { type: name, id: params[next.slice(1)] ?? null };
    }
  }
  if (found) return { type: found.type, id: truncate(found.id) };
  return { type: collections[0] ?? null, id: null };
}

function truncate(value: string | null): string | null {
  return value === null ? null : value.slice(0, 255);
}
