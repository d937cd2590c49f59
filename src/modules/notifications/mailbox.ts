import { isEmail } from 'class-validator';

/*
 * The one rule for a notification recipient's address: a single mailbox, `local@domain`, as an
 * SMTP envelope and a `To:` header carry it without quoting. Pure.
 */

/** RFC 5322 `atext`, with letters, digits and marks of any script (SMTPUTF8 local parts). */
const ATOM = "[\\p{L}\\p{N}\\p{M}!#$%&'*+/=?^_`{|}~-]+";
/** A dot-atom local part, `@`, and a domain of dot-separated labels (no IP literal). */
const MAILBOX = new RegExp(
  `^${ATOM}(?:\\.${ATOM})*@[\\p{L}\\p{N}\\p{M}-]+(?:\\.[\\p{L}\\p{N}\\p{M}-]+)+$`,
  'u',
);
/** Control, format (zero-width, bidi), unassigned and private-use characters, and every space. */
const INVISIBLE = /[\p{C}\p{Z}]/u;

/** The longest address accepted (RFC 5321's path limit less the angle brackets). */
export const MAILBOX_MAX_LENGTH = 254;

export const MAILBOX_RULE =
  'a single address such as someone@example.com: no display name, comment, quoted local part, ' +
  'second address, space or control character';

/**
 * True for one bare address that the existing email rule (class-validator's `isEmail`) accepts as
 * well: `ana+reports@eu.example.com`, `jörg@münchen.de`. False for a quoted local part
 * (`"a\r\nb"@x.test`, `"a b"@x.test`), a display name (`Ana <ana@x.test>`), a comment
 * (`ana(x)@x.test`), a list (`a@x.test, b@x.test`), and anything holding CR, LF, another control
 * character, a space or an invisible character.
 */
export function isMailbox(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length <= MAILBOX_MAX_LENGTH &&
    !INVISIBLE.test(value) &&
    MAILBOX.test(value) &&
    isEmail(value)
  );
}
