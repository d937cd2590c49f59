/*
 * Console users need an address in the data model (unique per account), yet identity providers
 * may provision a user with only a userName (RFC 7643 requires nothing more). Such a user gets a
 * placeholder under `.invalid`, a top-level domain reserved by RFC 2606 and RFC 6761 that never
 * resolves, so nothing is ever delivered to it. It is derived from the user id: unique, and it
 * does not change when the user is renamed. SCIM never returns it as an email.
 */

export const NO_EMAIL_DOMAIN = 'no-email.invalid';

/** The SQL expression of the placeholder address of the user whose id is `idSql`. */
export function noEmailSql(idSql: string): string {
  return `('user-' || ${idSql} || '@${NO_EMAIL_DOMAIN}')`;
}

/** Whether a stored address is the placeholder of a user provisioned without one. */
export function isNoEmail(email: string): boolean {
  return email.toLowerCase().endsWith(`@${NO_EMAIL_DOMAIN}`);
}
