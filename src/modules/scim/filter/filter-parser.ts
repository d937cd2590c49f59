import { scimError, type ScimErrorCode } from '../scim.errors.js';

/**
 * The SCIM filter and PATCH path grammar of RFC 7644 (section 3.4.2.2, figure 1, and section
 * 3.5.2): a hand-written tokenizer and a recursive-descent parser with explicit limits, so a
 * hostile filter (huge, deeply nested, many comparisons) is refused quickly with a 400 and can
 * neither exhaust the stack nor the CPU. Nothing here uses regular expressions with nested
 * quantifiers.
 */

export const FILTER_LIMITS = { maxLength: 4096, maxDepth: 16, maxComparisons: 64 } as const;

export type CompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';
export type CompValue = string | number | boolean | null;

/** `[urn:...:]name[.sub]` as written; names are matched case-insensitively later. */
export interface AttrPath {
  uri: string | null;
  name: string;
  sub: string | null;
}

export type FilterNode =
  | { kind: 'compare'; path: AttrPath; op: CompareOp; value: CompValue }
  | { kind: 'present'; path: AttrPath }
  | { kind: 'and' | 'or'; items: FilterNode[] }
  | { kind: 'not'; item: FilterNode }
  | { kind: 'valuePath'; path: AttrPath; filter: FilterNode };

/** A PATCH `path`: `attr`, `attr.sub`, `attr[filter]` or `attr[filter].sub`. */
export interface PatchPath {
  attr: AttrPath;
  filter: FilterNode | null;
  sub: string | null;
}

const COMPARE_OPS: ReadonlySet<string> = new Set(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']);

type TokenType = 'word' | 'string' | 'number' | '(' | ')' | '[' | ']' | 'eof';

interface Token {
  type: TokenType;
  text: string;
  value?: string | number;
  pos: number;
}

const isAlpha = (c: string) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
const isDigit = (c: string) => c >= '0' && c <= '9';
const isWordChar = (c: string) =>
  isAlpha(c) || isDigit(c) || c === '_' || c === '-' || c === '.' || c === ':' || c === '$';
const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
const isDelimiter = (c: string | undefined) =>
  c === undefined || isSpace(c) || c === '(' || c === ')' || c === '[' || c === ']';

/** An attribute or sub-attribute name: ALPHA *(ALPHA / DIGIT / "-" / "_"), or `$ref`. */
function isAttrName(s: string): boolean {
  const start = s.startsWith('$') ? 1 : 0;
  if (s.length <= start || !isAlpha(s[start])) return false;
  for (let i = start + 1; i < s.length; i++) {
    const c = s[i];
    if (!isAlpha(c) && !isDigit(c) && c !== '-' && c !== '_') return false;
  }
  return true;
}

class Parser {
  private readonly tokens: Token[] = [];
  private index = 0;
  private comparisons = 0;

  constructor(
    private readonly text: string,
    private readonly code: ScimErrorCode,
    private readonly what: string,
  ) {
    if (text.length > FILTER_LIMITS.maxLength) {
      throw this.error(`is longer than ${FILTER_LIMITS.maxLength} characters`);
    }
    this.tokenize();
  }

  error(message: string, pos?: number) {
    const at = pos === undefined ? '' : ` at position ${pos + 1}`;
    return scimError(this.code, `The ${this.what}${at} ${message}`);
  }

  /** filter = or-expression, and nothing after it. */
  parseFilter(): FilterNode {
    if (this.peek().type === 'eof') throw this.error('is empty');
    const node = this.parseOr(0, false);
    this.expectEnd();
    return node;
  }

  /** path = attrPath / attrPath "[" valFilter "]" ["." subAttr] */
  parsePath(): PatchPath {
    const tok = this.next();
    if (tok.type !== 'word') throw this.error('must start with an attribute name', tok.pos);
    const attr = this.attrPath(tok);
    let filter: FilterNode | null = null;
    let sub: string | null = null;
    if (this.peek().type === '[') {
      if (attr.sub !== null) throw this.error('cannot filter a sub-attribute', tok.pos);
      this.next();
      filter = this.parseOr(1, true);
      this.expect(']');
      const after = this.peek();
      if (after.type === 'word' && after.text.startsWith('.')) {
        this.next();
        sub = this.subAttr(after);
      }
    }
    this.expectEnd();
    return { attr, filter, sub };
  }

  private parseOr(depth: number, inValuePath: boolean): FilterNode {
    const items = [this.parseAnd(depth, inValuePath)];
    while (this.isKeyword(this.peek(), 'or')) {
      this.next();
      items.push(this.parseAnd(depth, inValuePath));
    }
    return items.length === 1 ? items[0] : { kind: 'or', items };
  }

  private parseAnd(depth: number, inValuePath: boolean): FilterNode {
    const items = [this.parseUnary(depth, inValuePath)];
    while (this.isKeyword(this.peek(), 'and')) {
      this.next();
      items.push(this.parseUnary(depth, inValuePath));
    }
    return items.length === 1 ? items[0] : { kind: 'and', items };
  }

  private parseUnary(depth: number, inValuePath: boolean): FilterNode {
    const tok = this.peek();
    if (this.isKeyword(tok, 'not') && this.peek(1).type === '(') {
      this.next();
      this.next();
      const item = this.parseOr(this.deeper(depth, tok), inValuePath);
      this.expect(')');
      return { kind: 'not', item };
    }
    if (tok.type === '(') {
      this.next();
      const item = this.parseOr(this.deeper(depth, tok), inValuePath);
      this.expect(')');
      return item;
    }
    return this.parseAttrExp(depth, inValuePath);
  }

  private parseAttrExp(depth: number, inValuePath: boolean): FilterNode {
    const tok = this.next();
    if (tok.type !== 'word' || tok.text.startsWith('.')) {
      throw this.error(`expected an attribute name but found ${this.describe(tok)}`, tok.pos);
    }
    const path = this.attrPath(tok);
    if (this.peek().type === '[') {
      if (inValuePath) throw this.error('cannot nest a value filter inside another', this.peek().pos);
      if (path.sub !== null) throw this.error('cannot filter a sub-attribute', tok.pos);
      this.next();
      const filter = this.parseOr(this.deeper(depth, tok), true);
      this.expect(']');
      const after = this.peek();
      if (after.type === 'word' && after.text.startsWith('.')) {
        // `emails[type eq "work"].value co "@example.com"`: a comparison of a sub-attribute of
        // the selected values, the same as `emails[type eq "work" and value co "@example.com"]`.
        this.next();
        const subPath: AttrPath = { uri: null, name: this.subAttr(after), sub: null };
        const comparison = this.comparison(subPath, after);
        return { kind: 'valuePath', path, filter: { kind: 'and', items: [filter, comparison] } };
      }
      this.count(tok);
      return { kind: 'valuePath', path, filter };
    }
    return this.comparison(path, tok);
  }

  private comparison(path: AttrPath, at: Token): FilterNode {
    this.count(at);
    const opTok = this.next();
    if (opTok.type !== 'word') {
      throw this.error(
        `expected an operator after "${at.text}" but found ${this.describe(opTok)}`,
        opTok.pos,
      );
    }
    const op = opTok.text.toLowerCase();
    if (op === 'pr') return { kind: 'present', path };
    if (!COMPARE_OPS.has(op)) {
      throw this.error(
        `has an unknown operator "${opTok.text}" (use eq, ne, co, sw, ew, gt, ge, lt, le or pr)`,
        opTok.pos,
      );
    }
    const valueTok = this.next();
    return { kind: 'compare', path, op: op as CompareOp, value: this.compValue(valueTok) };
  }

  private compValue(tok: Token): CompValue {
    if (tok.type === 'string' || tok.type === 'number') return tok.value!;
    if (tok.type === 'word') {
      const word = tok.text.toLowerCase();
      if (word === 'true') return true;
      if (word === 'false') return false;
      if (word === 'null') return null;
    }
    throw this.error(
      `expected a value (a quoted string, a number, true, false or null) but found ${this.describe(tok)}`,
      tok.pos,
    );
  }

  private attrPath(tok: Token): AttrPath {
    let uri: string | null = null;
    let rest = tok.text;
    if (rest.toLowerCase().startsWith('urn:')) {
      const cut = rest.lastIndexOf(':');
      uri = rest.slice(0, cut);
      rest = rest.slice(cut + 1);
    }
    const parts = rest.split('.');
    if (parts.length > 2 || !parts.every(isAttrName)) {
      throw this.error(`has an invalid attribute name "${tok.text}"`, tok.pos);
    }
    return { uri, name: parts[0], sub: parts[1] ?? null };
  }

  private subAttr(tok: Token): string {
    const name = tok.text.slice(1);
    if (!isAttrName(name)) throw this.error(`has an invalid sub-attribute "${tok.text}"`, tok.pos);
    return name;
  }

  private deeper(depth: number, at: Token): number {
    if (depth + 1 > FILTER_LIMITS.maxDepth) {
      throw this.error(`is nested more than ${FILTER_LIMITS.maxDepth} levels deep`, at.pos);
    }
    return depth + 1;
  }

  private count(at: Token): void {
    this.comparisons += 1;
    if (this.comparisons > FILTER_LIMITS.maxComparisons) {
      throw this.error(`has more than ${FILTER_LIMITS.maxComparisons} comparisons`, at.pos);
    }
  }

  private isKeyword(tok: Token, keyword: string): boolean {
    return tok.type === 'word' && tok.text.toLowerCase() === keyword;
  }

  private peek(ahead = 0): Token {
    return this.tokens[Math.min(this.index + ahead, this.tokens.length - 1)];
  }

  private next(): Token {
    const tok = this.peek();
    if (this.index < this.tokens.length - 1) this.index += 1;
    return tok;
  }

  private expect(type: ')' | ']'): void {
    const tok = this.next();
    if (tok.type !== type) throw this.error(`expected "${type}" but found ${this.describe(tok)}`, tok.pos);
  }

  private expectEnd(): void {
    const tok = this.peek();
    if (tok.type !== 'eof') throw this.error(`has unexpected ${this.describe(tok)}`, tok.pos);
  }

  private describe(tok: Token): string {
    if (tok.type === 'eof') return 'the end';
    const shown = tok.text.length > 40 ? `${tok.text.slice(0, 40)}...` : tok.text;
    return `"${shown}"`;
  }

  private tokenize(): void {
    const s = this.text;
    let i = 0;
    while (i < s.length) {
      const c = s[i];
      if (isSpace(c)) {
        i += 1;
      } else if (c === '(' || c === ')' || c === '[' || c === ']') {
        this.tokens.push({ type: c, text: c, pos: i });
        i += 1;
      } else if (c === '"') {
        i = this.readString(i);
      } else if (c === '-' || isDigit(c)) {
        i = this.readNumber(i);
      } else if (isAlpha(c) || c === '$' || c === '.' || c === '_') {
        const start = i;
        while (i < s.length && isWordChar(s[i])) i += 1;
        this.tokens.push({ type: 'word', text: s.slice(start, i), pos: start });
      } else {
        throw this.error(`has an unexpected character "${c}"`, i);
      }
    }
    this.tokens.push({ type: 'eof', text: '', pos: s.length });
  }

  private readString(start: number): number {
    const s = this.text;
    let i = start + 1;
    while (i < s.length && s[i] !== '"') i += s[i] === '\\' ? 2 : 1;
    if (i >= s.length) throw this.error('has an unterminated string', start);
    const raw = s.slice(start, i + 1);
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw this.error('has an invalid string (check its escapes)', start);
    }
    // "\u0000" is a valid JSON escape, but PostgreSQL cannot hold a NUL character.
    if ((value as string).includes('\u0000')) throw this.error('has a NUL character in a string', start);
    this.tokens.push({ type: 'string', text: raw, value: value as string, pos: start });
    return i + 1;
  }

  /** A JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
  private readNumber(start: number): number {
    const s = this.text;
    let i = start;
    const digits = () => {
      const from = i;
      while (i < s.length && isDigit(s[i])) i += 1;
      return i - from;
    };
    if (s[i] === '-') i += 1;
    let ok = digits() > 0;
    if (ok && s[i] === '.') {
      i += 1;
      ok = digits() > 0;
    }
    if (ok && (s[i] === 'e' || s[i] === 'E')) {
      i += 1;
      if (s[i] === '+' || s[i] === '-') i += 1;
      ok = digits() > 0;
    }
    const raw = s.slice(start, i);
    const value = Number(raw);
    if (!ok || !isDelimiter(s[i]) || !Number.isFinite(value)) {
      throw this.error(`has an invalid number "${s.slice(start, Math.min(i + 1, start + 40))}"`, start);
    }
    this.tokens.push({ type: 'number', text: raw, value, pos: start });
    return i;
  }
}

/** Parses a `filter` (400 invalidFilter when it is malformed or over a limit). */
export function parseFilter(text: string): FilterNode {
  return new Parser(text, 'invalidFilter', 'filter').parseFilter();
}

/** Parses a PATCH operation's `path` (400 invalidPath when it is malformed). */
export function parsePath(text: string): PatchPath {
  return new Parser(text, 'invalidPath', 'path').parsePath();
}

/** Parses an attribute name as written in `attributes` or as a key of a PATCH value, or null. */
export function parseAttrName(text: string): AttrPath | null {
  try {
    const path = new Parser(text, 'invalidPath', 'attribute').parsePath();
    return path.filter === null ? path.attr : null;
  } catch {
    return null;
  }
}
