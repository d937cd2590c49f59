import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { isoSql } from '../../core/database/sql.js';
import { keysetPredicate, type CursorValue } from '../../core/http/pagination.js';
import { userInAccountSql } from '../users/users.fragments.js';
import type { AttributeType, AttributeValue } from './attribute-types.js';
import type { UserAttributeDto } from './dto/user-attribute.dto.js';

const ATTRIBUTE_COLUMNS = `a.id, a.name, a.type, a.display_name AS "displayName", a.description,
  a.default_value AS "defaultValue"`;

const VALUE_COLUMNS = `a.id AS "userAttributeId", a.name, a.display_name AS "displayName", a.description,
  a.type, a.default_value AS "defaultValue"`;

/** An attribute with one user's own value of it. */
export interface ValueRow {
  userAttributeId: number;
  name: string;
  displayName: string | null;
  description: string | null;
  type: AttributeType;
  defaultValue: string | null;
  /** The user's own value; null without one (a stored value is never JSON null). */
  value: AttributeValue | null;
}

/** The filters of the attribute list. */
export interface AttributeFilter {
  name?: string;
  type?: string;
}

/** The fields an update may set; undefined ones are left alone. */
export interface AttributeChanges {
  displayName?: string | null;
  description?: string | null;
  defaultValue?: string | null;
}

const CHANGE_COLUMNS: Record<keyof AttributeChanges, string> = {
  displayName: 'display_name',
  description: 'description',
  defaultValue: 'default_value',
};

/** SQL over `user_attributes` and `user_attribute_values`. */
@Injectable()
export class UserAttributesRepository {
  constructor(private readonly db: Database) {}

  /** Newest first, after the cursor `after` (createdAt, id), or from `offset`. */
  list(
    accountId: number,
    filter: AttributeFilter,
    page: { after: CursorValue[] | null; limit: number; offset: number | null },
  ): Promise<Array<UserAttributeDto & { createdAt: string }>> {
    const where = whereOf(accountId, filter);
    const keyset = keysetPredicate(['a.created_at', 'a.id'], 'DESC', page.after);
    return this.db.query<UserAttributeDto & { createdAt: string }>(
      `SELECT ${ATTRIBUTE_COLUMNS}, ${isoSql('a.created_at')} AS "createdAt"
       FROM user_attributes a WHERE ${where.sql} AND ${keyset.sql}
       ORDER BY a.created_at DESC, a.id DESC LIMIT :limit${page.offset === null ? '' : ' OFFSET :offset'}`,
      {
        ...where.params,
        ...keyset.params,
        limit: page.limit,
        ...(page.offset === null ? {} : { offset: page.offset }),
      },
    );
  }

  async count(accountId: number, filter: AttributeFilter): Promise<number> {
    const where = whereOf(accountId, filter);
    const row = await this.db.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM user_attributes a WHERE ${where.sql}`,
      where.params,
    );
    return row!.n;
  }

  /** Which of `names` are attributes of the account. */
  async existingNames(accountId: number, names: string[]): Promise<string[]> {
    if (names.length === 0) return [];
    const rows = await this.db.query<{ name: string }>(
      `SELECT a.name FROM user_attributes a WHERE a.account_id = :accountId AND a.name = ANY(:names::text[])`,
      { accountId, names },
    );
    return rows.map((r) => r.name);
  }

  get(accountId: number, id: number): Promise<UserAttributeDto | undefined> {
    return this.db.one<UserAttributeDto>(
      `SELECT ${ATTRIBUTE_COLUMNS} FROM user_attributes a WHERE a.account_id = :accountId AND a.id = :id`,
      { accountId, id },
    );
  }

  async insert(
    accountId: number,
    a: {
      name: string;
      type: string;
      displayName: string | null;
      description: string | null;
      defaultValue: string | null;
    },
  ): Promise<UserAttributeDto> {
    const row = await this.db.one<UserAttributeDto>(
      `INSERT INTO user_attributes AS a (account_id, name, type, display_name, description, default_value)
       VALUES (:accountId, :name, :type, :displayName, :description, :defaultValue) RETURNING ${ATTRIBUTE_COLUMNS}`,
      { accountId, ...a },
    );
    return row!;
  }

  /** Sets the fields given (at least one); undefined when the attribute does not exist in the account. */
  update(accountId: number, id: number, changes: AttributeChanges): Promise<UserAttributeDto | undefined> {
    const keys = (Object.keys(CHANGE_COLUMNS) as Array<keyof AttributeChanges>).filter(
      (k) => changes[k] !== undefined,
    );
    return this.db.one<UserAttributeDto>(
      `UPDATE user_attributes a SET ${keys.map((k) => `${CHANGE_COLUMNS[k]} = :${k}`).join(', ')}, updated_at = now()
       WHERE a.account_id = :accountId AND a.id = :id RETURNING ${ATTRIBUTE_COLUMNS}`,
      { accountId, id, ...Object.fromEntries(keys.map((k) => [k, changes[k]])) },
    );
  }

  /** Deletes the attribute and, by their foreign key, every user's value of it; false when it is not in the account. */
  async delete(accountId: number, id: number): Promise<boolean> {
    const rows = await this.db.query(
      `DELETE FROM user_attributes a WHERE a.account_id = :accountId AND a.id = :id RETURNING a.id`,
      { accountId, id },
    );
    return rows.length > 0;
  }

  /** Whether the user exists in the account. */
  async userExists(accountId: number, userId: number): Promise<boolean> {
    const row = await this.db.one<{ found: boolean }>(
      `SELECT ${userInAccountSql(':userId', ':accountId')} AS found`,
      { accountId, userId },
    );
    return row?.found === true;
  }

  /** The attributes the user has a value of, or that have a default, by name; with the user's value. */
  valuesOf(accountId: number, userId: number): Promise<ValueRow[]> {
    return this.db.query<ValueRow>(
      `SELECT ${VALUE_COLUMNS}, v.value
       FROM user_attributes a
       LEFT JOIN user_attribute_values v ON v.user_attribute_id = a.id AND v.user_id = :userId
       WHERE a.account_id = :accountId AND (v.user_id IS NOT NULL OR a.default_value IS NOT NULL)
       ORDER BY a.name COLLATE "C", a.id`,
      { accountId, userId },
    );
  }

  /** The attribute, with no value. */
  attribute(accountId: number, id: number): Promise<ValueRow | undefined> {
    return this.db.one<ValueRow>(
      `SELECT ${VALUE_COLUMNS}, NULL AS value FROM user_attributes a WHERE a.account_id = :accountId AND a.id = :id`,
      { accountId, id },
    );
  }

  async deleteValue(accountId: number, userId: number, attributeId: number): Promise<void> {
    await this.db.query(
      `DELETE FROM user_attribute_values
       WHERE user_id = :userId AND user_attribute_id = :attributeId AND account_id = :accountId`,
      { accountId, userId, attributeId },
    );
  }

  async setValue(
    accountId: number,
    userId: number,
    attributeId: number,
    value: AttributeValue,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO user_attribute_values (user_id, user_attribute_id, account_id, value)
       VALUES (:userId, :attributeId, :accountId, :value::jsonb)
       ON CONFLICT (user_id, user_attribute_id) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
      { accountId, userId, attributeId, value: JSON.stringify(value) },
    );
  }
}

function whereOf(
  accountId: number,
  filter: AttributeFilter,
): { sql: string; params: Record<string, unknown> } {
  const where = ['a.account_id = :accountId'];
  const params: Record<string, unknown> = { accountId };
  if (filter.name !== undefined) {
    where.push('a.name = :name');
    params.name = filter.name;
  }
  if (filter.type !== undefined) {
    where.push('a.type = :type');
    params.type = filter.type;
  }
  return { sql: where.join(' AND '), params };
}
