import { createHash } from 'node:crypto';
import { embeddingError } from './embedding.errors.js';

/*
 * How embed tenants and embed users are named: pure functions, unit-tested.
 */

/** 2 to 36 characters: lowercase letters, digits and inner hyphens, starting with a letter. */
export const TENANT_NAME_PATTERN = /^[a-z][a-z0-9-]{0,34}[a-z0-9]$/;
export const EXTERNAL_ID_MAX = 255;
/**
 * Placeholder addresses live under `.invalid`, a top-level domain reserved by RFC 2606 and
 * RFC 6761 that never resolves, so mail to them can never be delivered.
 */
export const SYNTHETIC_EMAIL_DOMAIN = 'embed-users.invalid';
/** Groups with this prefix are the platform's own; tenant groups may not take it. */
export const RESERVED_GROUP_PREFIX = 'system:';

const TENANT_RULE = 'lowercase letters, digits and hyphens, 2 to 36 characters, starting with a letter';

/** A tenant name from a path or body: trimmed and lowercased, then checked. */
export function normalizeTenantName(raw: string): string {
  const name = raw.trim().toLowerCase();
  if (!TENANT_NAME_PATTERN.test(name)) {
    throw embeddingError('invalid_embed_tenant_name', `embedTenantName must be ${TENANT_RULE}`);
  }
  return name;
}

/**
 * A tenant name that must already be canonical (tenant deletion): a name differing only in
 * case is refused rather than lowercased, so a typo never deletes a tenant nobody named.
 */
export function canonicalTenantName(raw: string): string {
  if (TENANT_NAME_PATTERN.test(raw)) return raw;
  const lowered = raw.trim().toLowerCase();
  if (TENANT_NAME_PATTERN.test(lowered)) {
    throw embeddingError(
      'invalid_embed_tenant_name',
      `embedTenantName must be given exactly, in lowercase ("${lowered}"); it is never lowercased here`,
    );
  }
  throw embeddingError('invalid_embed_tenant_name', `embedTenantName must be ${TENANT_RULE}`);
}

/** An external id as stored: trimmed and lowercased, so casing never makes a second user. */
export function normalizeExternalId(raw: string): string {
  const id = raw.trim().toLowerCase();
  if (id.length === 0) throw embeddingError('invalid_external_id', 'externalId must not be blank');
  if (id.length > EXTERNAL_ID_MAX) {
    throw embeddingError('invalid_external_id', `externalId must be at most ${EXTERNAL_ID_MAX} characters`);
  }
  return id;
}

/** The tail of a hashed local part; an id that already ends so is hashed too, so none collide. */
const HASHED_SUFFIX = /\.[0-9a-f]{16}$/;

/** Characters an unquoted local part (RFC 5322 dot-atom) may hold. */
const ATOM = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

/**
 * The placeholder address of a user provisioned without one: the external id itself when it is
 * a valid local part of at most 64 characters, otherwise a readable prefix of it plus a hash,
 * so it is always a valid address and two external ids never share one.
 */
export function syntheticEmail(externalId: string): string {
  const plain = externalId.length <= 64 && ATOM.test(externalId) && !HASHED_SUFFIX.test(externalId);
  if (plain) return `${externalId}@${SYNTHETIC_EMAIL_DOMAIN}`;
  const readable = externalId
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  const hash = createHash('sha256').update(externalId, 'utf8').digest('hex').slice(0, 16);
  return `${readable || 'user'}.${hash}@${SYNTHETIC_EMAIL_DOMAIN}`;
}

/** How a tenant group reaches the data model, apart from any account-wide group of that name. */
export const tenantGroupContextName = (tenant: string, group: string): string =>
  `system:tenant:${tenant}:group:${group}`;
