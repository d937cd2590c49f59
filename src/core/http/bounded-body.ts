/**
 * The body of a `fetch` response as text, read no further than `maxBytes`: past it (by its
 * `Content-Length`, or while reading) the body is cancelled and `tooLarge()` is thrown. For
 * answers of servers we call (an OAuth token endpoint, GitHub), which must not make us buffer
 * without bound.
 */
export async function readBoundedText(
  res: Response,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<string> {
  // A compressed answer's length says little of what it decompresses to (fetch decompresses):
  // then only the bytes read count.
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (!res.headers.has('content-encoding') && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
