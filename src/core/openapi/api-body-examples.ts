import type { Type } from '@nestjs/common';
import { ApiBody } from '@nestjs/swagger';

/** One named request body example of the OpenAPI document. */
export interface BodyExample<T> {
  summary: string;
  description?: string;
  value: T;
}

export type BodyExamples<T> = Record<string, BodyExample<T>>;

/**
 * Named request body examples, typed against the body DTO, so an example cannot name a field the
 * DTO lacks or miss a required one. A test sends every documented example through the API and
 * expects no validation error.
 */
export const bodyExamples = <T>(_type: Type<T>, examples: BodyExamples<T>): BodyExamples<T> => examples;

/** Documents the JSON body of an operation, with named examples. */
export const ApiBodyExamples = (
  type: Type<unknown>,
  examples: BodyExamples<unknown>,
  options: { required?: boolean } = {},
) => ApiBody({ type, examples, ...options });
