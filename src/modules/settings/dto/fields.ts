import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsNumber, Max, Min, ValidateBy, buildMessage } from 'class-validator';
import { presence } from '../../../core/http/validation.js';

interface Presence {
  description?: string;
  optional?: boolean;
  nullable?: boolean;
}

/** A finite JSON number (not only integers) between `min` and `max`. */
export function NumberField(opts: Presence & { min: number; max: number }): PropertyDecorator {
  return applyDecorators(
    ApiProperty({
      type: Number,
      minimum: opts.min,
      maximum: opts.max,
      required: !opts.optional,
      nullable: opts.nullable,
      description: opts.description,
    }),
    ...presence(opts),
    IsNumber({ allowNaN: false, allowInfinity: false }),
    Min(opts.min),
    Max(opts.max),
  );
}

/** True for a zone name the runtime's time-zone database knows, such as `Europe/Berlin` or `UTC`. */
export function isIanaTimeZone(value: unknown): boolean {
  // Names only: no numeric offsets such as `+02:00`, which newer runtimes also accept.
  if (typeof value !== 'string' || !/^[A-Za-z][A-Za-z0-9_+/-]{0,63}$/.test(value)) return false;
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

/** An IANA time-zone name, checked against the runtime's time-zone database. */
export function TimeZoneField(opts: Presence = {}): PropertyDecorator {
  return applyDecorators(
    ApiProperty({
      type: String,
      maxLength: 64,
      required: !opts.optional,
      nullable: opts.nullable,
      example: 'Europe/Berlin',
      description: opts.description ?? 'IANA time-zone name',
    }),
    ...presence(opts),
    ValidateBy({
      name: 'isIanaTimeZone',
      validator: {
        validate: (value) => isIanaTimeZone(value),
        defaultMessage: buildMessage((prefix) => `${prefix}$property must be an IANA time-zone name`),
      },
    }),
  );
}

/** True for an absolute https URL without credentials, at most 2048 characters. */
export function isHttpsUrl(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > 2048) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.hostname !== '' && !url.username && !url.password;
  } catch {
    return false;
  }
}

export function HttpsUrlField(opts: Presence = {}): PropertyDecorator {
  return applyDecorators(
    ApiProperty({
      type: String,
      format: 'uri',
      maxLength: 2048,
      required: !opts.optional,
      nullable: opts.nullable,
      description: opts.description ?? 'An absolute https URL',
    }),
    ...presence(opts),
    ValidateBy({
      name: 'isHttpsUrl',
      validator: {
        validate: (value) => isHttpsUrl(value),
        defaultMessage: buildMessage((prefix) => `${prefix}$property must be an absolute https URL`),
      },
    }),
  );
}
