import { STATUS_CODES } from 'node:http';
import {
  Catch,
  HttpException,
  HttpStatus,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { QueryFailedError } from 'typeorm';
import { ApiError } from './api-error.js';
import { lockoutRetryAfterSeconds } from '../rate-limit/auth-lockout.js';
import { behaviourOf } from '../http/route-behaviour.js';
import { databaseUnavailable } from '../database/unavailable.js';
import { challengeIfUnauthorized } from '../http/www-authenticate.js';

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string | string[];
  code: string;
}

const DEFAULT_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'service_unavailable',
};

/** PostgreSQL errors a client's input can provoke, answered as client errors, never as 500. */
const PG_CLIENT_ERRORS: Record<string, [HttpStatus, string, string]> = {
  '23505': [HttpStatus.CONFLICT, 'conflict', 'A resource with the same unique value already exists'],
  '23503': [HttpStatus.CONFLICT, 'conflict', 'A referenced resource does not exist or is still referenced'],
  '22001': [HttpStatus.BAD_REQUEST, 'validation_failed', 'A value is too long'],
  '22003': [HttpStatus.BAD_REQUEST, 'validation_failed', 'A number is out of range'],
  '22P02': [HttpStatus.BAD_REQUEST, 'validation_failed', 'A value has the wrong format'],
  '22007': [HttpStatus.BAD_REQUEST, 'validation_failed', 'A date or time has the wrong format'],
  '22008': [HttpStatus.BAD_REQUEST, 'validation_failed', 'A date or time is out of range'],
  '22021': [HttpStatus.BAD_REQUEST, 'invalid_characters', 'A value contains invalid characters'],
  '40001': [HttpStatus.CONFLICT, 'conflict', 'A concurrent change conflicted; retry the request'],
  '40P01': [HttpStatus.CONFLICT, 'conflict', 'A concurrent change conflicted; retry the request'],
};

export function errorBody(status: number, code: string, message: string | string[]): ErrorBody {
  return { statusCode: status, error: STATUS_CODES[status] ?? 'Error', message, code };
}

/** Turns anything thrown into the one error shape. Unknown errors are logged and answered 500. */
export function toErrorBody(exception: unknown): ErrorBody {
  if (exception instanceof ApiError) {
    return errorBody(exception.getStatus(), exception.code, exception.messages);
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const response = exception.getResponse();
    const message =
      typeof response === 'object' && response !== null && 'message' in response
        ? (response as { message: string | string[] }).message
        : exception.message;
    return errorBody(
      status,
      DEFAULT_CODES[status] ?? (status >= 500 ? 'internal_error' : 'bad_request'),
      message,
    );
  }
  if (databaseUnavailable(exception)) {
    return errorBody(
      503,
      'database_unavailable',
      'The database is unavailable or did not answer in time; retry shortly',
    );
  }
  if (exception instanceof QueryFailedError) {
    const pgCode = (exception.driverError as { code?: string } | undefined)?.code ?? '';
    const mapped = PG_CLIENT_ERRORS[pgCode];
    if (mapped) return errorBody(mapped[0], mapped[1], mapped[2]);
  }
  const status = (exception as { status?: unknown; type?: unknown })?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // body-parser and other connect-style errors carry a status of their own.
    const type = (exception as { type?: string }).type;
    if (type === 'entity.parse.failed')
      return errorBody(400, 'malformed_json', 'The request body is not valid JSON');
    if (type === 'entity.too.large')
      return errorBody(413, 'payload_too_large', 'The request body is too large');
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
      return errorBody(415, 'unsupported_media_type', 'Unsupported content encoding or charset');
    }
    return errorBody(status, DEFAULT_CODES[status] ?? 'bad_request', 'The request could not be processed');
  }
  return errorBody(500, 'internal_error', 'An unexpected error occurred');
}

/**
 * Sends an error body: the one shape everywhere, unless the route (or its controller) declares
 * a shape of its own with `@ErrorShape` (route-behaviour.ts).
 */
export function sendError(req: Request, res: Response, body: ErrorBody): void {
  // From an address past its budget of failed authentications, a failed one is refused (rate-limit.ts).
  const lockedOut = body.statusCode === 401 ? lockoutRetryAfterSeconds(req) : undefined;
  if (lockedOut !== undefined) {
    res.setHeader('Retry-After', String(lockedOut));
    body = errorBody(
      429,
      'rate_limited',
      'Too many failed authentication attempts from this address; retry after the Retry-After delay',
    );
  }
  // Every 503 is retryable; tell clients when (seconds).
  if (body.statusCode === 503 && !res.getHeader('Retry-After')) res.setHeader('Retry-After', '5');
  challengeIfUnauthorized(req, res, body.statusCode);
  const render = behaviourOf(req).renderError;
  if (render) return render(res, body);
  res.status(body.statusCode).json(body);
}

/** Records failed requests in the audit log (see `AuditService`) before answering them. */
export interface FailureRecorder {
  record(req: Request, statusCode: number): Promise<void>;
}

@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpError');

  constructor(private readonly recorder?: FailureRecorder) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const req = host.switchToHttp().getRequest<Request>();
    const body = toErrorBody(exception);
    if (body.statusCode >= 500 && body.code === 'internal_error') {
      this.logger.error({ err: exception, reqId: req.id, path: req.path }, 'unhandled error');
    }
    if (res.headersSent) return;
    if (exception instanceof ApiError && exception.retryAfterSeconds !== undefined) {
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil(exception.retryAfterSeconds))));
    }
    if (!this.recorder) return sendError(req, res, body);
    void this.recorder.record(req, body.statusCode).finally(() => sendError(req, res, body));
  }
}
