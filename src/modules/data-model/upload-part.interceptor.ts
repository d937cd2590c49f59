import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import busboy from 'busboy';
import type { Request, Response } from 'express';
import type { Observable } from 'rxjs';
import { AppConfig } from '../../core/config/app-config.js';
import { coreError } from '../../core/errors/api-error.js';
import { dataModelError } from './data-model.errors.js';

/** What `POST .../upload/file` reads from its body: the form fields and the part `file`. */
export interface UploadPart {
  fields: Record<string, string>;
  file: Buffer | undefined;
}

/** Form fields besides the file (`transaction`, `fileName` and room for a client's extras). */
const MAX_FIELDS = 4;
/** Longest field value, bytes: the DTO takes 1024 characters; longer is refused before it. */
const MAX_FIELD_BYTES = 8 * 1024;

/**
 * Reads the multipart body of `POST .../upload/file` with busboy's own limits: the part `file` is
 * counted as it arrives and, the moment it passes `MODEL_MAX_FILE_BYTES`, the request is refused
 * (`400 file_too_large`) without reading the rest: the answer closes the connection. (multer,
 * behind Nest's `FileInterceptor`, reads a refused body to its end before it answers.) Only this
 * route's body is multipart; guards have run already, so nobody unauthenticated gets this far.
 */
@Injectable()
export class UploadPartInterceptor implements NestInterceptor {
  constructor(private readonly config: AppConfig) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const http = context.switchToHttp();
    const req = http.getRequest<Request & { file?: { buffer: Buffer } }>();
    // Anything else (a JSON body) goes on without a file, and is refused for missing it.
    if (req.is('multipart/form-data')) {
      const part = await readUploadPart(
        req,
        http.getResponse<Response>(),
        this.config.dataModel.maxFileBytes,
      );
      req.body = part.fields;
      req.file = part.file ? { buffer: part.file } : undefined;
    }
    return next.handle();
  }
}

/**
 * The fields and the file of a multipart body, the file held in memory up to `maxFileBytes`. On
 * a refusal the request is unpiped (no further byte is read) and the answer says
 * `Connection: close`, so Node closes the connection after it instead of reading the rest.
 */
export function readUploadPart(req: Request, res: Response, maxFileBytes: number): Promise<UploadPart> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = Object.create(null) as Record<string, string>;
    let file: Buffer | undefined;
    const fileRead: Array<Promise<void>> = [];
    let settled = false;
    let parser: busboy.Busboy | undefined;
    const refuse = (err: Error): void => {
      if (settled) return;
      settled = true;
      if (parser) req.unpipe(parser);
      if (!res.headersSent) res.setHeader('Connection', 'close');
      reject(err);
    };
    const invalid = (message: string) => refuse(coreError('validation_failed', [message]));
    try {
      parser = busboy({
        headers: req.headers,
        limits: {
          // busboy stops a part when it reaches `fileSize`: one byte more than allowed is the refusal.
          fileSize: maxFileBytes + 1,
          files: 1,
          fields: MAX_FIELDS,
          fieldSize: MAX_FIELD_BYTES,
          parts: MAX_FIELDS + 1,
        },
      });
    } catch (err) {
      invalid(`The multipart body cannot be read: ${(err as Error).message}`);
      return;
    }
    parser.on('file', (name, stream) => {
      // busboy fails a part the body ends in with an error on its stream.
      stream.on('error', (err: Error) => invalid(`The multipart body cannot be read: ${err.message}`));
      if (name !== 'file') {
        stream.resume();
        invalid(
          `Unexpected file part ${JSON.stringify(name.slice(0, 64))}; send the file as the part \`file\``,
        );
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () =>
        refuse(
          dataModelError(
            'file_too_large',
            `The part \`file\` is larger than ${maxFileBytes} bytes; files may be at most ${maxFileBytes} bytes`,
          ),
        ),
      );
      fileRead.push(
        new Promise((done) =>
          stream.on('end', () => {
            file = Buffer.concat(chunks);
            done();
          }),
        ),
      );
    });
    parser.on('field', (name, value, info) => {
      if (info.nameTruncated || info.valueTruncated) {
        invalid(`The field ${JSON.stringify(name.slice(0, 64))} is longer than ${MAX_FIELD_BYTES} bytes`);
        return;
      }
      fields[name] = value;
    });
    parser.on('filesLimit', () => invalid('Send one file per request, as the part `file`'));
    parser.on('fieldsLimit', () => invalid(`Send at most ${MAX_FIELDS} fields besides the file`));
    parser.on('partsLimit', () => invalid(`Send at most ${MAX_FIELDS + 1} parts`));
    parser.on('error', (err) => invalid(`The multipart body cannot be read: ${err.message}`));
    parser.on('close', () => {
      void Promise.all(fileRead).then(() => {
        if (settled) return;
        settled = true;
        resolve({ fields, file });
      });
    });
    // A client that goes away mid-body: nothing more will come.
    req.on('close', () => {
      if (!req.complete) invalid('The request ended before its body did');
    });
    req.pipe(parser);
  });
}
