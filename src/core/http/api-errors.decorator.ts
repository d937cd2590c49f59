import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { ErrorResponseDto } from './error-response.dto.js';

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input: the message names each bad field',
  404: 'Not found in the caller’s account, or not visible to the caller',
  409: 'Conflicts with the current state',
  413: 'Body too large',
  503: 'A dependency (the job queue) is unavailable; retry shortly',
};

/** Documents the error statuses of a route, all in the one error shape. */
export const ApiErrors = (...statuses: number[]) =>
  applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({ status, description: DESCRIPTIONS[status] ?? 'Error', type: ErrorResponseDto }),
    ),
  );
