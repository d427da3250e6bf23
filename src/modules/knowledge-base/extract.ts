import type { Format } from './file-types.ts';

// The PDF and DOCX readers are loaded on the first document of their kind: a process that never
// indexes one (an API server with its workers elsewhere) never holds them.

/** The document cannot be read (corrupt, empty, wrong format): it fails for good, no retry. */
export class ExtractionError extends Error {
  override name = 'ExtractionError';
}

export interface ExtractedText {
  /** Text per page (PDF), or one entry for formats without pages. */
  pages: string[];
  pageCount: number | null;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Visible text of an HTML page: scripts, styles and tags removed, entities decoded. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|noscript|template)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<\/(p|div|li|h[1-6]|tr|br|section|article)\s*>|<br\s*\/?>/gi, '\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(#x?[0-9a-f]+|\w+);/gi, (all, code: string) => {
      if (code[0] === '#') {
        const n = code[1]?.toLowerCase() === 'x' ? parseInt(code.slice(2), 16) : parseInt(code.slice(1), 10);
        return Number.isFinite(n) && n > 0 && n < 0x110000 ? String.fromCodePoint(n) : ' ';
      }
      return ENTITIES[code.toLowerCase()] ?? all;
    });
}

export async function extract(format: Format, content: Buffer): Promise<ExtractedText> {
  let result: ExtractedText;
  switch (format) {
    case 'pdf': {
      try {
        const { extractText, getDocumentProxy } = await import('unpdf');
        const pdf = await getDocumentProxy(new Uint8Array(content));
        const { totalPages, text } = await extractText(pdf, { mergePages: false });
        await pdf.cleanup?.();
        result = { pages: text, pageCount: totalPages };
      } catch (err) {
        throw new ExtractionError(`The PDF could not be read: ${(err as Error).message}`);
      }
      break;
    }
    case 'docx': {
      try {
        const { default: mammoth } = await import('mammoth');
        const { value } = await mammoth.extractRawText({ buffer: content });
        result = { pages: [value], pageCount: null };
      } catch (err) {
        throw new ExtractionError(`The DOCX could not be read: ${(err as Error).message}`);
      }
      break;
    }
    case 'html':
      result = { pages: [htmlToText(content.toString('utf8'))], pageCount: null };
      break;
    default:
      result = { pages: [content.toString('utf8')], pageCount: null };
  }
  if (!result.pages.some((page) => /[\p{L}\p{N}]/u.test(page))) throw new ExtractionError('The document contains no text');
  return result;
}

export interface Chunk {
  text: string;
  /** 1-based page of the chunk's first word; null for formats without pages. */
  page: number | null;
}

// About 800 tokens: English averages ~1.3 tokens a word.
export const CHUNK_WORDS = 600;
export const OVERLAP_WORDS = 100;

/**
 * Splits each page into overlapping windows of words. Chunks never span two pages, so every hit
 * names the page it came from.
 */
export function chunk(extracted: ExtractedText): Chunk[] {
  const chunks: Chunk[] = [];
  extracted.pages.forEach((text, index) => {
    const words = text.split(/\s+/).filter(Boolean);
    const page = extracted.pageCount === null ? null : index + 1;
    for (let start = 0; start < words.length; start += CHUNK_WORDS - OVERLAP_WORDS) {
      chunks.push({ text: words.slice(start, start + CHUNK_WORDS).join(' '), page });
      if (start + CHUNK_WORDS >= words.length) break;
    }
  });
  return chunks;
}

export function countWords(extracted: ExtractedText): number {
  return extracted.pages.reduce((n, page) => n + (page.match(/\S+/g)?.length ?? 0), 0);
}
