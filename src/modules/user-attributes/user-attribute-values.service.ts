import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Principal } from '../../core/auth/principal.js';
import { queryRows } from '../../core/database/sql.js';
import { coreError } from '../../core/http/api-error.js';
import {
  formatValue,
  parseDefault,
  valueProblem,
  type AttributeType,
  type AttributeValue,
} from './attribute-types.js';
import type { UserAttributeValueDto, UserAttributeValueInputDto } from './dto/user-attribute-value.dto.js';
import { attributeNotFound, userAttributesError } from './user-attributes.errors.js';

interface ValueRow {
  userAttributeId: number;
  name: string;
  displayName: string | null;
  description: string | null;
  type: AttributeType;
  defaultValue: string | null;
  /** The user's own value; null without one (a stored value is never JSON null). */
  value: AttributeValue | null;
}

const ATTRIBUTE_COLUMNS = `a.id AS "userAttributeId", a.name, a.display_name AS "displayName", a.description,
  a.type, a.default_value AS "defaultValue"`;

/**
 * Per-user values of the account's attributes. A value is one row, written by a single upsert;
 * users without a value of their own see the attribute's default.
 */
@Injectable()
export class UserAttributeValuesService {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * The effective values of one user: attributes the user has a value for, and attributes with a
   * default; ordered by attribute name. Admins read anyone's, other users only their own.
   */
  async list(actor: Principal, userId: number): Promise<UserAttributeValueDto[]> {
    await this.assertUser(actor.accountId, userId);
    if (!actor.isAdmin && actor.userId !== userId) {
      throw coreError('forbidden', 'Only admins can read the attribute values of other users');
    }
    const rows = await queryRows<ValueRow>(
      this.dataSource,
      `SELECT ${ATTRIBUTE_COLUMNS}, v.value
       FROM user_attributes a
       LEFT JOIN user_attribute_values v ON v.user_attribute_id = a.id AND v.user_id = $2
       WHERE a.account_id = $1 AND (v.user_id IS NOT NULL OR a.default_value IS NOT NULL)
       ORDER BY a.name COLLATE "C", a.id`,
      [actor.accountId, userId],
    );
    return rows.map((r) => toValueDto(userId, r)).filter((v) => v.value !== null);
  }

  /** Sets (or with null removes) one user's value of one attribute. */
  async upsert(actor: Principal, dto: UserAttributeValueInputDto): Promise<UserAttributeValueDto> {
    const { userId, userAttributeId, value } = dto;
    await this.assertUser(actor.accountId, userId);
    const [attribute] = await queryRows<ValueRow>(
      this.dataSource,
      `SELECT ${ATTRIBUTE_COLUMNS}, NULL AS value FROM user_attributes a WHERE a.account_id = $1 AND a.id = $2`,
      [actor.accountId, userAttributeId],
    );
    if (!attribute) throw attributeNotFound(userAttributeId);
    if (value === null) {
      await this.dataSource.query(
        `DELETE FROM user_attribute_values WHERE user_id = $1 AND user_attribute_id = $2 AND account_id = $3`,
        [userId, userAttributeId, actor.accountId],
      );
      return toValueDto(userId, attribute);
    }
    const problem = valueProblem(attribute.type, value);
    if (problem) {
      throw userAttributesError(
        'invalid_attribute_value',
        `value of attribute "${attribute.name}" (${attribute.type}) ${problem}`,
      );
    }
    await this.dataSource.query(
      `INSERT INTO user_attribute_values (user_id, user_attribute_id, account_id, value)
       VALUES ($1, $2, $3, $4::jsonb)
       ON CONFLICT (user_id, user_attribute_id) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
      [userId, userAttributeId, actor.accountId, JSON.stringify(value)],
    );
    return toValueDto(userId, { ...attribute, value });
  }

  private async assertUser(accountId: number, userId: number): Promise<void> {
    const rows = await queryRows(this.dataSource, `SELECT 1 FROM users WHERE account_id = $1 AND id = $2`, [
      accountId,
      userId,
    ]);
    if (rows.length === 0) throw userAttributesError('user_not_found', `User ${userId} was not found`);
  }
}

function toValueDto(userId: number, row: ValueRow): UserAttributeValueDto {
  const own = row.value !== null;
  const value = own ? row.value : row.defaultValue === null ? null : parseDefault(row.type, row.defaultValue);
  return {
    userId,
    userAttributeId: row.userAttributeId,
    name: row.name,
    displayName: row.displayName,
    description: row.description,
    type: row.type,
    value,
    formattedValue: formatValue(value),
    isDefault: !own && value !== null,
  };
}
