/**
 * The part of busboy 1.x (the multipart parser multer uses; it ships no types) that
 * `upload-part.interceptor.ts` uses.
 */
declare module 'busboy' {
  import type { IncomingHttpHeaders } from 'node:http';
  import type { Readable, Writable } from 'node:stream';

  namespace busboy {
    interface Limits {
      fieldNameSize?: number;
      /** A field value reaching it is cut there (`valueTruncated`). */
      fieldSize?: number;
      /** Fields past it are ignored, and `fieldsLimit` is emitted. */
      fields?: number;
      /** A file part reaching it stops there: its stream emits `limit`, the rest is skipped. */
      fileSize?: number;
      files?: number;
      parts?: number;
      headerPairs?: number;
    }

    interface Config {
      headers: IncomingHttpHeaders;
      limits?: Limits;
      highWaterMark?: number;
      fileHwm?: number;
      defCharset?: string;
      defParamCharset?: string;
      preservePath?: boolean;
    }

    interface FileInfo {
      filename: string | undefined;
      encoding: string;
      mimeType: string;
    }

    interface FieldInfo {
      nameTruncated: boolean;
      valueTruncated: boolean;
      encoding: string;
      mimeType: string;
    }

    interface FileStream extends Readable {
      truncated: boolean;
    }

    interface Busboy extends Writable {
      on(event: 'file', listener: (name: string, stream: FileStream, info: FileInfo) => void): this;
      on(event: 'field', listener: (name: string, value: string, info: FieldInfo) => void): this;
      on(event: 'partsLimit' | 'filesLimit' | 'fieldsLimit' | 'close', listener: () => void): this;
      on(event: 'error', listener: (err: Error) => void): this;
      on(event: string | symbol, listener: (...args: unknown[]) => void): this;
    }
  }

  /** Throws for a request that is not multipart or names no boundary. */
  function busboy(config: busboy.Config): busboy.Busboy;

  export = busboy;
}
