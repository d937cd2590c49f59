import { RequestMethod, type Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { MetadataScanner, type ModulesContainer } from '@nestjs/core';
import { ACCESS_METADATA, type AccessRule } from '../../auth/access.decorators.js';
import { acceptedQuery } from '../query-params.guard.js';

/** The methods a precondition applies to. */
export const CONDITIONAL_WRITES: ReadonlySet<string> = new Set(['PUT', 'PATCH', 'DELETE']);

/** How a request may present its credential. */
type Credential = 'platform' | 'basic' | 'embed';

/** One route of the application, as the table needs it. */
export interface RouteEntry {
  readonly method: string;
  /** The path with its parameters blanked and in lower case (`api/v1/users/:`), for comparison. */
  readonly template: string;
  /** The path as declared (`api/v1/users/:id`), for messages. */
  readonly declared: string;
  readonly pattern: RegExp;
  /** Literal segments: a route with more of them is tried first where two match a path. */
  readonly literals: number;
  readonly order: number;
  /** The credentials the route takes; `any` for a public route. */
  readonly credentials: ReadonlySet<Credential> | 'any';
  /** Takes no query parameter: a single resource, not a page of a list. */
  readonly plain: boolean;
}

/** What a conditional write addresses: its route, and the GET that reads the same resource (if any). */
export interface ConditionalTarget {
  readonly write: RouteEntry;
  readonly read: RouteEntry | null;
}

function credentialsOf(rule: AccessRule | undefined): ReadonlySet<Credential> | 'any' {
  if (!rule) return new Set();
  switch (rule.kind) {
    case 'public':
      return 'any';
    case 'embed':
      return new Set<Credential>(rule.platformToken ? ['embed', 'platform'] : ['embed']);
    case 'object':
      return new Set<Credential>(rule.basicAuth ? ['platform', 'basic'] : ['platform']);
    default:
      return new Set<Credential>(['platform']);
  }
}

/** Whether every credential `write` takes is taken by `read` too (so the read sees what the writer sees). */
function readsWithSameCredentials(read: RouteEntry, write: RouteEntry): boolean {
  if (read.credentials === 'any') return true;
  if (write.credentials === 'any') return false;
  const taken = read.credentials;
  return [...write.credentials].every((c) => taken.has(c));
}

const pathsOf = (value: unknown): string[] =>
  value === undefined ? [''] : Array.isArray(value) ? (value as string[]) : [value as string];

const join = (...parts: string[]) =>
  parts
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .filter((p) => p !== '')
    .join('/');

/** Route syntax beyond plain segments and `:name` parameters (wildcards, optional parts). */
const UNSUPPORTED = /[*?()[\]{}+]/;

/**
 * The entry of one route, or null when its path uses syntax beyond `:name` parameters. Express
 * matches paths case-insensitively and with or without a trailing slash; so does the pattern.
 */
function entry(
  method: string,
  path: string,
  rule: AccessRule | undefined,
  plain: boolean,
  order: number,
): RouteEntry | null {
  if (UNSUPPORTED.test(path)) return null;
  const segments = path === '' ? [] : path.split('/');
  const source = segments
    .map((s) => (s.startsWith(':') ? '/[^/]+' : `/${s.replace(/[.\\^$|]/g, '\\$&')}`))
    .join('');
  return {
    method,
    template: segments.map((s) => (s.startsWith(':') ? ':' : s.toLowerCase())).join('/'),
    declared: `/${path}`,
    pattern: new RegExp(`^${source}/?$`, 'i'),
    literals: segments.filter((s) => !s.startsWith(':')).length,
    order,
    credentials: credentialsOf(rule),
    plain,
  };
}

/** The route Express would pick among `routes` for `path`: the most literal one, then the first. */
function bestMatch(routes: readonly RouteEntry[], path: string): RouteEntry | null {
  let best: RouteEntry | null = null;
  for (const route of routes) {
    if (!route.pattern.test(path)) continue;
    if (!best || route.literals > best.literals) best = route;
  }
  return best;
}

/**
 * The routes of the application that matter to conditional writes, read once from the controllers
 * (their method, path, access rule and declared query parameters). A write's GET sibling is the
 * GET route of the same path that takes no query parameter (the resource itself, not a page of a
 * list, whose tag would not cover the rest of the list) and takes the writer's credentials (so
 * its read sees what the writer sees).
 */
export class ConditionalRoutes {
  private readonly byMethod = new Map<string, RouteEntry[]>();

  constructor(modules: ModulesContainer) {
    const scanner = new MetadataScanner();
    let order = 0;
    for (const module of modules.values()) {
      for (const wrapper of module.controllers.values()) {
        const controller = wrapper.metatype as Type<unknown> | null;
        if (typeof controller !== 'function') continue;
        const base = pathsOf(Reflect.getMetadata(PATH_METADATA, controller));
        const prototype = controller.prototype as Record<string, object>;
        for (const name of scanner.getAllMethodNames(prototype)) {
          const handler = prototype[name] as { name: string };
          const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
          if (method === undefined || method === RequestMethod.ALL) continue;
          const verb = RequestMethod[method];
          if (verb !== 'GET' && !CONDITIONAL_WRITES.has(verb)) continue;
          const rule =
            (Reflect.getMetadata(ACCESS_METADATA, handler) as AccessRule | undefined) ??
            (Reflect.getMetadata(ACCESS_METADATA, controller) as AccessRule | undefined);
          const query = acceptedQuery(controller, handler);
          const plain = typeof query === 'object' && query.names.size === 0;
          for (const prefix of base) {
            for (const tail of pathsOf(Reflect.getMetadata(PATH_METADATA, handler))) {
              const path = join(prefix, tail);
              const route = entry(verb, path, rule, plain, order++);
              if (!route && verb !== 'GET')
                throw new Error(`Conditional requests: unsupported route path syntax in ${verb} /${path}`);
              if (!route) continue;
              const list = this.byMethod.get(verb) ?? [];
              list.push(route);
              this.byMethod.set(verb, list);
            }
          }
        }
      }
    }
  }

  /** The write route `method path` reaches and its GET sibling; null when no write route matches. */
  target(method: string, path: string): ConditionalTarget | null {
    const write = bestMatch(this.byMethod.get(method) ?? [], path);
    if (!write) return null;
    const read = bestMatch(this.byMethod.get('GET') ?? [], path);
    const sibling =
      read && read.template === write.template && read.plain && readsWithSameCredentials(read, write)
        ? read
        : null;
    return { write, read: sibling };
  }

  /** Every write route, with its GET sibling (for tests comparing with the OpenAPI document). */
  writes(): ConditionalTarget[] {
    const out: ConditionalTarget[] = [];
    for (const method of CONDITIONAL_WRITES)
      for (const write of this.byMethod.get(method) ?? []) {
        const sample = write.declared.replace(/\/:[^/]+/g, '/1');
        const target = this.target(method, sample);
        out.push({ write, read: target?.write === write ? target.read : null });
      }
    return out;
  }
}
