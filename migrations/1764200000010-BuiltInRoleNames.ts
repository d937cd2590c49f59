import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Built-in roles take the reference platform's names: `Explorer` becomes `AIBIUser` and `Viewer`
 * becomes `AIBIViewer` (same actions). Only the names stored in `users.default_roles` change.
 */
export class BuiltInRoleNames1764200000010 implements MigrationInterface {
  name = 'BuiltInRoleNames1764200000010';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `UPDATE users SET default_roles = array_replace(array_replace(default_roles, 'Explorer', 'AIBIUser'), 'Viewer', 'AIBIViewer')
       WHERE default_roles && ARRAY['Explorer', 'Viewer']::text[]`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `UPDATE users SET default_roles = array_replace(array_replace(default_roles, 'AIBIUser', 'Explorer'), 'AIBIViewer', 'Viewer')
       WHERE default_roles && ARRAY['AIBIUser', 'AIBIViewer']::text[]`,
    );
  }
}
