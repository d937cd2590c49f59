import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { coreError } from '../../core/errors/api-error.js';
import { notFound } from '../../core/errors/not-found.js';
import { formatValue, parseDefault, valueProblem } from './attribute-types.js';
import type { UserAttributeValueDto, UserAttributeValueInputDto } from './dto/user-attribute-value.dto.js';
import { attributeNotFound, userAttributesError } from './user-attributes.errors.js';
import { UserAttributesRepository, type ValueRow } from './user-attributes.repository.js';

/**
 * Per-user values of the account's attributes. A value is one row, written by a single upsert;
 * users without a value of their own see the attribute's default.
 */
@Injectable()
export class UserAttributeValuesService {
  constructor(private readonly attributes: UserAttributesRepository) {}

  /**
   * The effective values of one user: attributes the user has a value for, and attributes with a
   * default; ordered by attribute name. Admins read anyone's, other users only their own.
   */
  async list(actor: Principal, userId: number): Promise<UserAttributeValueDto[]> {
    await this.assertUser(actor.accountId, userId);
    if (!actor.isAdmin && actor.userId !== userId) {
      throw coreError('forbidden', 'Only admins can read the attribute values of other users');
    }
    const rows = await this.attributes.valuesOf(actor.accountId, userId);
    return rows.map((r) => toValueDto(userId, r)).filter((v) => v.value !== null);
  }

  /**
   * Sets one user's value of one attribute, or with `null` removes it. An absent `value` removes it
   * too: the reference command-line tool's `cube attributes values set` sends only the two ids,
   * which binds the user to the attribute without a value of their own (the default applies).
   */
  async upsert(actor: Principal, dto: UserAttributeValueInputDto): Promise<UserAttributeValueDto> {
    const { userId, userAttributeId, value } = dto;
    await this.assertUser(actor.accountId, userId);
    const attribute = await this.attributes.attribute(actor.accountId, userAttributeId);
    if (!attribute) throw attributeNotFound(userAttributeId);
    if (value === null || value === undefined) {
      await this.attributes.deleteValue(actor.accountId, userId, userAttributeId);
      return toValueDto(userId, attribute);
    }
    const problem = valueProblem(attribute.type, value);
    if (problem) {
      throw userAttributesError(
        'invalid_attribute_value',
        `value of attribute "${attribute.name}" (${attribute.type}) ${problem}`,
      );
    }
    await this.attributes.setValue(actor.accountId, userId, userAttributeId, value);
    return toValueDto(userId, { ...attribute, value });
  }

  private async assertUser(accountId: number, userId: number): Promise<void> {
    if (!(await this.attributes.userExists(accountId, userId))) throw notFound('User', userId);
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
