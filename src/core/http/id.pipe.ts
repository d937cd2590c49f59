import { Injectable, Param, type PipeTransform } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import { coreError } from '../errors/api-error.js';

/** Path ids are PostgreSQL integers: 1 to 2^31-1. Anything else is a 400 naming the parameter. */
@Injectable()
export class IdPipe implements PipeTransform<string, number> {
  constructor(private readonly name: string) {}

  transform(value: string): number {
    if (!/^[1-9]\d{0,9}$/.test(value) || Number(value) > 2_147_483_647) {
      throw coreError('validation_failed', [`${this.name} must be an integer between 1 and 2147483647`]);
    }
    return Number(value);
  }
}

/** `@IdParam('deploymentId') deploymentId: number`; documented as the integer range it accepts. */
export const IdParam =
  (name: string): ParameterDecorator =>
  (target, key, index) => {
    Param(name, new IdPipe(name))(target, key, index);
    if (key === undefined) return;
    const descriptor = Object.getOwnPropertyDescriptor(target, key);
    if (descriptor) {
      ApiParam({ name, schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } })(
        target,
        key,
        descriptor,
      );
    }
  };

const MAX_BIGINT = 9_223_372_036_854_775_807n;

/** Ids of `bigint` rows (deliveries, events) in a path: 1 to 2^63-1, kept as the decimal string. */
@Injectable()
export class BigIdPipe implements PipeTransform<string, string> {
  constructor(private readonly name: string) {}

  transform(value: string): string {
    if (!/^[1-9]\d{0,18}$/.test(value) || BigInt(value) > MAX_BIGINT) {
      throw coreError('validation_failed', [`${this.name} must be a positive integer of at most 19 digits`]);
    }
    return value;
  }
}

/** `@BigIdParam('deliveryId', 'A delivery id …') deliveryId: string`; documented as the string it accepts. */
export const BigIdParam =
  (name: string, description: string): ParameterDecorator =>
  (target, key, index) => {
    Param(name, new BigIdPipe(name))(target, key, index);
    if (key === undefined) return;
    const descriptor = Object.getOwnPropertyDescriptor(target, key);
    if (descriptor) {
      ApiParam({ name, description, schema: { type: 'string', pattern: '^[1-9][0-9]{0,18}$' } })(
        target,
        key,
        descriptor,
      );
    }
  };
