import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsString, ValidateBy, ValidateIf } from 'class-validator';

export const MAX_URL_LENGTH = 2048;

/** Hosts that may be reached over plain http, so local servers work. */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Why `value` cannot be an OAuth endpoint or redirect URI, or null when it can: an absolute
 * https URL (plain http only for a loopback host), without credentials or fragment.
 */
export function oauthUrlProblem(value: string): string | null {
  if (value.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  if (/[\s\p{Cc}]/u.test(value)) return 'must not contain spaces or control characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol === 'http:') {
    if (!LOOPBACK_HOSTS.has(url.hostname)) {
      return 'must use https (plain http only for 127.0.0.1, ::1 or localhost)';
    }
  } else if (url.protocol !== 'https:') {
    return 'must use https';
  }
  if (!url.hostname) return 'must name a host';
  if (url.username || url.password) return 'must not contain credentials';
  if (value.includes('#')) return 'must not contain a fragment';
  return null;
}

/** A required (or optional) URL field checked by {@link oauthUrlProblem}. */
export function OAuthUrlField(opts: { description: string; optional?: boolean }) {
  return applyDecorators(
    ApiProperty({
      type: String,
      format: 'uri',
      maxLength: MAX_URL_LENGTH,
      required: !opts.optional,
      description: opts.description,
    }),
    ...(opts.optional ? [ValidateIf((_, v) => v !== undefined)] : []),
    IsString(),
    ValidateBy({
      name: 'isOAuthUrl',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && oauthUrlProblem(value) === null,
        defaultMessage: (args) =>
          `${args?.property} ${typeof args?.value === 'string' ? oauthUrlProblem(args.value) : 'must be a string'}`,
      },
    }),
  );
}
