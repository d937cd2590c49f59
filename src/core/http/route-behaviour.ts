import { Injectable, RequestMethod, SetMetadata } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { Request, Response } from 'express';
import { AppConfig } from '../config/app-config.js';
import type { ErrorBody } from '../errors/exception.filter.js';

/**
 * What a route declares about the requests it serves that must be known before Nest routes them:
 * the body parser, the media type guard and the error renderer run first, for every request.
 * Each is a decorator on the handler (or the controller); {@link RouteBehaviours} reads them once
 * at start-up through Nest's discovery and answers, per request, by method and path.
 */

/** Writes an error body in the shape of a protocol of its own (SCIM's, say). */
export type ErrorRenderer = (res: Response, body: ErrorBody) => void;

/** A limit in bytes, or how to read it from the configuration. */
export type BodyLimit = number | ((config: AppConfig) => number);

const MULTIPART = Symbol('route:multipart');
const JSON_BODY_LIMIT = Symbol('route:json-body-limit');
const ERROR_SHAPE = Symbol('route:error-shape');
const STREAMED_BODY = Symbol('route:streamed-body');

/** The route takes `multipart/form-data` (a file upload); every other route refuses it with 415. */
export const Multipart = (): MethodDecorator => SetMetadata(MULTIPART, true);

/**
 * The route's JSON body may be up to `limit` bytes instead of `BODY_LIMIT` (a dbt manifest posted
 * to start a sync). The body is still parsed once and checked like any other.
 */
export const JsonBodyLimit = (limit: BodyLimit): MethodDecorator => SetMetadata(JSON_BODY_LIMIT, limit);

/**
 * The route takes a body of `mediaType` and reads it itself, as a stream (git's smart HTTP
 * requests): the media type guard lets that type through, and no body parser reads it.
 */
export const StreamedBody = (mediaType: string): MethodDecorator => SetMetadata(STREAMED_BODY, mediaType);

/**
 * Errors of the route answer in the shape `render` writes, whatever raised them (the handler, the
 * guard, or the middleware before routing: malformed JSON, 415, 429). On a controller, it covers
 * every request under the controller's path, routes it does not serve (404) included.
 */
export const ErrorShape = (render: ErrorRenderer): ClassDecorator & MethodDecorator =>
  SetMetadata(ERROR_SHAPE, render);

/** What applies to one request. */
export interface RequestBehaviour {
  /** The JSON body limit in bytes, when not `BODY_LIMIT`. */
  readonly jsonLimit: number | null;
  readonly multipart: boolean;
  readonly renderError: ErrorRenderer | null;
  /** The media type of a body the handler reads itself ({@link StreamedBody}), if any. */
  readonly streamedBody?: string;
}

const PLAIN: RequestBehaviour = Object.freeze({ jsonLimit: null, multipart: false, renderError: null });

interface RouteRule {
  /** Null: any method (a controller's rule). */
  method: string | null;
  path: RegExp;
  jsonLimit?: number;
  multipart?: boolean;
  renderError?: ErrorRenderer;
  streamedBody?: string;
}

const BEHAVIOUR = Symbol('route:behaviour');
type TaggedRequest = Request & { [BEHAVIOUR]?: RequestBehaviour };

/** The routes' declared behaviour, collected from the controllers of one application. */
@Injectable()
export class RouteBehaviours {
  private readonly rules: RouteRule[] = [];

  constructor(discovery: DiscoveryService, scanner: MetadataScanner, config: AppConfig) {
    for (const { metatype } of discovery.getControllers()) {
      if (typeof metatype !== 'function') continue;
      const base = pathsOf(Reflect.getMetadata(PATH_METADATA, metatype));
      const classShape = Reflect.getMetadata(ERROR_SHAPE, metatype) as ErrorRenderer | undefined;
      if (classShape)
        for (const path of base)
          this.rules.push({ method: null, path: under(path), renderError: classShape });
      const prototype = metatype.prototype as Record<string, object>;
      for (const name of scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name];
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined) continue;
        const limit = Reflect.getMetadata(JSON_BODY_LIMIT, handler) as BodyLimit | undefined;
        const multipart = Reflect.getMetadata(MULTIPART, handler) === true;
        const renderError = Reflect.getMetadata(ERROR_SHAPE, handler) as ErrorRenderer | undefined;
        const streamedBody = Reflect.getMetadata(STREAMED_BODY, handler) as string | undefined;
        if (limit === undefined && !multipart && !renderError && !streamedBody) continue;
        const own = pathsOf(Reflect.getMetadata(PATH_METADATA, handler));
        for (const prefix of base) {
          for (const tail of own) {
            this.rules.push({
              method: method === RequestMethod.ALL ? null : RequestMethod[method],
              path: exactly(join(prefix, tail)),
              ...(limit !== undefined
                ? { jsonLimit: typeof limit === 'number' ? limit : limit(config) }
                : {}),
              ...(multipart ? { multipart } : {}),
              ...(renderError ? { renderError } : {}),
              ...(streamedBody ? { streamedBody } : {}),
            });
          }
        }
      }
    }
  }

  /** Works out the request's behaviour once, and keeps it on the request. */
  tag(req: Request): RequestBehaviour {
    const tagged = req as TaggedRequest;
    if (tagged[BEHAVIOUR]) return tagged[BEHAVIOUR];
    let found = PLAIN;
    for (const rule of this.rules) {
      if ((rule.method !== null && rule.method !== req.method) || !rule.path.test(req.path)) continue;
      found = {
        jsonLimit: rule.jsonLimit ?? found.jsonLimit,
        multipart: rule.multipart ?? found.multipart,
        renderError: rule.renderError ?? found.renderError,
        streamedBody: rule.streamedBody ?? found.streamedBody,
      };
    }
    return (tagged[BEHAVIOUR] = found);
  }
}

/** The behaviour {@link RouteBehaviours.tag} gave the request, or the plain one. */
export function behaviourOf(req: Request): RequestBehaviour {
  return (req as TaggedRequest)[BEHAVIOUR] ?? PLAIN;
}

const pathsOf = (value: unknown): string[] =>
  value === undefined ? [''] : Array.isArray(value) ? (value as string[]) : [value as string];

const join = (...parts: string[]) =>
  parts
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .filter((p) => p !== '')
    .join('/');

/** A route path (`a/:id/b`) as a pattern: a parameter is one non-empty segment. */
function source(path: string): string {
  if (/[*?()[\]{}+]/.test(path))
    throw new Error(`Route behaviour: unsupported route path syntax in '${path}'`);
  const segments = path === '' ? [] : path.split('/');
  return segments.map((s) => (s.startsWith(':') ? '/[^/]+' : `/${s.replace(/[.\\^$|]/g, '\\$&')}`)).join('');
}

/** The route itself, with or without a trailing slash. */
const exactly = (path: string) => new RegExp(`^${source(join(path))}/?$`);

/** The path and every path under it. */
const under = (path: string) => new RegExp(`^${source(join(path))}(/|$)`);
