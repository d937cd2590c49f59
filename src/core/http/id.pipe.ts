import { Injectable, Param, type PipeTransform } from '@nestjs/common';
import { coreError } from './api-error.js';

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

/** `@IdParam('deploymentId') deploymentId: number` */
export const IdParam = (name: string): ParameterDecorator => Param(name, new IdPipe(name));
