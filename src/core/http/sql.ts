/** Escapes `%`, `_` and `\` so a search string matches literally inside ILIKE '%...%'. */
export function likePattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
