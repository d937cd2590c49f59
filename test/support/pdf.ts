import { spawn } from 'node:child_process';
import path from 'node:path';

/**
 * Reads a PDF with Mozilla's PDF.js: its page count and its text. In a child Node process, since
 * PDF.js is ESM that loads its worker with a dynamic import, which Jest's CommonJS runtime refuses.
 */
export async function readPdf(content: Buffer): Promise<{ pages: number; text: string }> {
  const script = `
    const chunks = [];
    for await (const chunk of process.stdin) chunks.push(chunk);
    const { getDocument } = await import('pdfjs-dist/legacy/build/pdf.mjs');
    const pdf = await getDocument({ data: new Uint8Array(Buffer.concat(chunks)), isEvalSupported: false, verbosity: 0 }).promise;
    let text = '';
    for (let n = 1; n <= pdf.numPages; n++) {
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      text += content.items.map((item) => (item.str ?? '') + (item.hasEOL ? '\\n' : '')).join('') + '\\n';
    }
    process.stdout.write(JSON.stringify({ pages: pdf.numPages, text }));
    await pdf.destroy();
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: path.resolve(__dirname, '../..'),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  child.stdin.end(content);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`PDF.js could not read the PDF: ${Buffer.concat(err).toString()}`);
  return JSON.parse(Buffer.concat(out).toString()) as { pages: number; text: string };
}
