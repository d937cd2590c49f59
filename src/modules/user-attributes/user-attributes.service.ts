import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Principal } from '../../core/auth/principal.js';
import { isoSql, queryRows, uniqueViolation } from '../../core/database/sql.js';
import {
  buildPage,
  fetchLimit,
  keysetPredicate,
  resolvePaging,
  withLegacyFields,
  type LegacyPage,
} from '../../core/http/pagination.js';
import { defaultValueHint, parseDefault, type AttributeType } from './attribute-types.js';
import type {
  UserAttributeCreateDto,
  UserAttributeDto,
  UserAttributesQueryDto,
  UserAttributeUpdateDto,
} from './dto/user-attribute.dto.js';
import { attributeNotFound, userAttributesError } from './user-attributes.errors.js';

const ATTRIBUTE_COLUMNS = `a.id, a.name, a.type, a.display_name AS "displayName", a.description,
  a.default_value AS "defaultValue"`;

/**
 * The user attributes of an account. Name and type are fixed at creation: values already
 * stored, and security contexts built from them, rely on both.
 */
@Injectable()
export class UserAttributesService {
  constructor(private readonly dataSource: DataSource) {}

  /** Newest first. */
  async list(actor: Principal, query: UserAttributesQueryDto): Promise<LegacyPage<UserAttributeDto>> {
    const paging = resolvePaging(query, ['date', 'number']);
    const params: unknown[] = [actor.accountId];
    let filter = 'a.account_id = $1';
    if (query.name !== undefined) filter += ` AND a.name = $${params.push(query.name)}`;
    if (query.type !== undefined) filter += ` AND a.type = $${params.push(query.type)}`;
    const keyset = keysetPredicate(
      ['a.created_at', 'a.id'],
      'DESC',
      paging.mode === 'cursor' ? paging.after : null,
      params.length + 1,
    );
    const offset = paging.mode === 'offset' ? ` OFFSET ${paging.offset}` : '';
    const [rows, [total]] = await Promise.all([
      queryRows<UserAttributeDto & { createdAt: string }>(
        this.dataSource,
        `SELECT ${ATTRIBUTE_COLUMNS}, ${isoSql('a.created_at')} AS "createdAt"
         FROM user_attributes a WHERE ${filter} AND ${keyset.sql}
         ORDER BY a.created_at DESC, a.id DESC LIMIT ${fetchLimit(paging)}${offset}`,
        [...params, ...keyset.params],
      ),
      queryRows<{ n: number }>(
        this.dataSource,
        `SELECT count(*)::int AS n FROM user_attributes a WHERE ${filter}`,
        params,
      ),
    ]);
    const page = buildPage(
      rows,
      paging,
      (r) => [r.createdAt, r.id],
      ({ createdAt: _, ...attribute }) => attribute,
    );
    return withLegacyFields(page, paging, total.n);
  }

  async create(actor: Principal, dto: UserAttributeCreateDto): Promise<UserAttributeDto> {
    assertDefault(dto.type, dto.defaultValue);
    try {
      const [row] = await queryRows<UserAttributeDto>(
        this.dataSource,
        `INSERT INTO user_attributes AS a (account_id, name, type, display_name, description, default_value)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${ATTRIBUTE_COLUMNS}`,
        [
          actor.accountId,
          dto.name,
          dto.type,
          dto.displayName ?? null,
          dto.description ?? null,
          dto.defaultValue ?? null,
        ],
      );
      return row;
    } catch (err) {
      if (uniqueViolation(err) !== null) {
        throw userAttributesError(
          'user_attribute_name_taken',
          `A user attribute named "${dto.name}" already exists`,
        );
      }
      throw err;
    }
  }

  /** Sets only the fields sent; the type can be restated but not changed. */
  async update(actor: Principal, id: number, dto: UserAttributeUpdateDto): Promise<UserAttributeDto> {
    const current = await this.get(actor.accountId, id);
    if (dto.type !== undefined && dto.type !== current.type) {
      throw userAttributesError(
        'attribute_type_immutable',
        `The type of user attribute "${current.name}" is ${current.type} and cannot change`,
      );
    }
    assertDefault(current.type, dto.defaultValue);
    const params: unknown[] = [actor.accountId, id];
    const sets: string[] = [];
    if (dto.displayName !== undefined) sets.push(`display_name = $${params.push(dto.displayName)}`);
    if (dto.description !== undefined) sets.push(`description = $${params.push(dto.description)}`);
    if (dto.defaultValue !== undefined) sets.push(`default_value = $${params.push(dto.defaultValue)}`);
    if (sets.length === 0) return current;
    const [row] = await queryRows<UserAttributeDto>(
      this.dataSource,
      `UPDATE user_attributes a SET ${sets.join(', ')}, updated_at = now()
       WHERE a.account_id = $1 AND a.id = $2 RETURNING ${ATTRIBUTE_COLUMNS}`,
      params,
    );
    if (!row) throw attributeNotFound(id);
    return row;
  }

  private async get(accountId: number, id: number): Promise<UserAttributeDto> {
    const [row] = await queryRows<UserAttributeDto>(
      this.dataSource,
      `SELECT ${ATTRIBUTE_COLUMNS} FROM user_attributes a WHERE a.account_id = $1 AND a.id = $2`,
      [accountId, id],
    );
    if (!row) throw attributeNotFound(id);
    return row;
  }
}

function assertDefault(type: AttributeType, defaultValue: string | null | undefined): void {
  if (defaultValue === undefined || defaultValue === null) return;
  if (parseDefault(type, defaultValue) === null) {
    throw userAttributesError(
      'invalid_default_value',
      `defaultValue of a ${type} attribute must be ${defaultValueHint(type)}`,
    );
  }
}
