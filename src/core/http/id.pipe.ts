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
