import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { uniqueViolation } from '../../core/database/sql.js';
import {
  buildPage,
  fetchLimit,
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
import { UserAttributesRepository } from './user-attributes.repository.js';

/**
 * The user attributes of an account. Name and type are fixed at creation: values already
 * stored, and security contexts built from them, rely on both.
 */
@Injectable()
export class UserAttributesService {
  constructor(private readonly attributes: UserAttributesRepository) {}

  /** The names among `names` that no attribute of the account has, in the order given. */
  async unknownNames(accountId: number, names: readonly string[]): Promise<string[]> {
    const wanted = [...new Set(names)];
    const known = new Set(await this.attributes.existingNames(accountId, wanted));
    return wanted.filter((name) => !known.has(name));
  }

  /** Newest first. */
  async list(actor: Principal, query: UserAttributesQueryDto): Promise<LegacyPage<UserAttributeDto>> {
    const paging = resolvePaging(query, ['date', 'number']);
    const filter = { name: query.name, type: query.type };
    const [rows, total] = await Promise.all([
      this.attributes.list(actor.accountId, filter, {
        after: paging.mode === 'cursor' ? paging.after : null,
        limit: fetchLimit(paging),
        offset: paging.mode === 'offset' ? paging.offset : null,
      }),
      this.attributes.count(actor.accountId, filter),
    ]);
    const page = buildPage(
      rows,
      paging,
      (r) => [r.createdAt, r.id],
      ({ createdAt: _, ...attribute }) => attribute,
    );
    return withLegacyFields(page, paging, total);
  }

  async create(actor: Principal, dto: UserAttributeCreateDto): Promise<UserAttributeDto> {
    assertDefault(dto.type, dto.defaultValue);
    try {
      const row = await this.attributes.insert(actor.accountId, {
        name: dto.name,
        type: dto.type,
        displayName: dto.displayName ?? null,
        description: dto.description ?? null,
        defaultValue: dto.defaultValue ?? null,
      });
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
    const changes = {
      displayName: dto.displayName,
      description: dto.description,
      defaultValue: dto.defaultValue,
    };
    if (Object.values(changes).every((v) => v === undefined)) return current;
    const row = await this.attributes.update(actor.accountId, id, changes);
    if (!row) throw attributeNotFound(id);
    return row;
  }

  /** Deletes the attribute with every user's value of it (`DELETE /user-attributes/{id}`). */
  async remove(actor: Principal, id: number): Promise<void> {
    if (!(await this.attributes.delete(actor.accountId, id))) throw attributeNotFound(id);
  }

  private async get(accountId: number, id: number): Promise<UserAttributeDto> {
    const row = await this.attributes.get(accountId, id);
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
