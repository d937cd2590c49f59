import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every API process keeps the principals of recently seen tokens for a few seconds. These
 * statement triggers tell them all when what a token resolves to may have changed: a key
 * revoked, expired early or deleted, a user deactivated, deleted or given other built-in roles,
 * a custom role, group membership, group role or grant added or removed. `pg_notify` is sent at
 * commit (never for a rolled-back write) and once per transaction however many statements fire;
 * the processes listening on `principals_changed` empty their caches (src/core/auth/principal-cache.ts).
 * Writes no token depends on (`api_keys.last_used_at`, a user's settings) do not fire.
 */
const TRIGGERS: ReadonlyArray<{ table: string; events: string }> = [
  { table: 'api_keys', events: 'UPDATE OF token_hash, revoked_at, expires_at, user_id OR DELETE' },
  {
    table: 'users',
    events: 'UPDATE OF account_id, email, is_deactivated, default_roles OR DELETE',
  },
  { table: 'user_roles', events: 'INSERT OR UPDATE OR DELETE' },
  { table: 'group_members', events: 'INSERT OR UPDATE OR DELETE' },
  { table: 'group_roles', events: 'INSERT OR UPDATE OR DELETE' },
  { table: 'policies', events: 'INSERT OR UPDATE OR DELETE' },
];

export class PrincipalChanges1764300000100 implements MigrationInterface {
  name = 'PrincipalChanges1764300000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE FUNCTION "notify_principals_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         PERFORM pg_notify('principals_changed', '');
         RETURN NULL;
       END $$`,
    );
    for (const { table, events } of TRIGGERS) {
      await queryRunner.query(
        `CREATE TRIGGER "tr_${table}_principals_changed" AFTER ${events} ON "${table}"
         FOR EACH STATEMENT EXECUTE FUNCTION "notify_principals_changed"()`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const { table } of TRIGGERS) {
      await queryRunner.query(`DROP TRIGGER "tr_${table}_principals_changed" ON "${table}"`);
    }
    await queryRunner.query(`DROP FUNCTION "notify_principals_changed"()`);
  }
}
