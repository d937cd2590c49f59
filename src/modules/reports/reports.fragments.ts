/**
 * SQL fragments over this module's tables for other modules' queries that must read these rows in
 * the same round trip (lists, hot paths). The text naming these tables stays here, with their
 * owner (checked by test/unit/module-boundaries.spec.ts). Each fragment is a function of the
 * caller's aliases and `:name` parameters, documented with what it returns.
 */
export {};

/**
 * Statements run by the users module when it deletes user `:fromUserId` of account `:accountId`:
 * their reports outlive them and pass to `:toUserId` (the admin deleting them), inside that unit
 * of work.
 */
export const HAND_OVER_REPORTS_SQL: readonly string[] = [
  `UPDATE reports SET user_id = :toUserId WHERE account_id = :accountId AND user_id = :fromUserId`,
];
