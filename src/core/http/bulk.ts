import { HttpException } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';

/** Why one entry of a bulk request failed: what the single-item endpoint would have answered. */
export class BulkActionErrorDto {
  @ApiProperty({ description: 'The status the single-item endpoint would have answered' }) status: number;
  @ApiProperty() message: string;
}

/**
 * The per-entry error of a bulk request for a client error (4xx); null for anything else, which
 * the caller rethrows so a server fault still surfaces as one.
 */
export function clientFailure(e: unknown): BulkActionErrorDto | null {
  if (!(e instanceof HttpException) || e.getStatus() >= 500) return null;
  const body = e.getResponse();
  const message = typeof body === 'string' ? body : (body as { message?: unknown }).message;
  return { status: e.getStatus(), message: Array.isArray(message) ? message.join('; ') : String(message) };
}
