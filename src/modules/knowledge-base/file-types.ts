import path from 'node:path';

/** The formats the indexer reads, with the MIME type each is stored and served as. */
export const FORMATS = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  txt: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  html: 'text/html; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
} as const;
export type Format = keyof typeof FORMATS;

const EXTENSIONS: Record<string, Format> = {
  '.pdf': 'pdf', '.docx': 'docx', '.txt': 'txt', '.text': 'txt', '.md': 'md', '.markdown': 'md', '.html': 'html', '.htm': 'html', '.csv': 'csv',
};

const isPdf = (head: Buffer) => head.subarray(0, 5).toString('latin1') === '%PDF-';
const isZip = (head: Buffer) => head.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]));

/** Text: no NUL byte and valid UTF-8 (a character cut at the end of the sample is fine). */
function isText(head: Buffer): boolean {
  if (head.includes(0)) return false;
  for (let cut = 0; cut < 4 && cut < head.length; cut++) {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, head.length - cut));
      return true;
    } catch {
      // maybe a multi-byte character cut by the sample; try a byte shorter
    }
  }
  return head.length === 0;
}

/**
 * The format of an upload from its extension and its first bytes; both must agree. Without a
 * known extension only a PDF is recognised by content. Undefined means unsupported (415).
 */
export function detectFormat(filename: string, head: Buffer): Format | undefined {
  const byExtension = EXTENSIONS[path.extname(filename).toLowerCase()];
  if (!byExtension) return isPdf(head) ? 'pdf' : undefined;
  if (byExtension === 'pdf') return isPdf(head) ? 'pdf' : undefined;
  if (byExtension === 'docx') return isZip(head) ? 'docx' : undefined;
  return isText(head) ? byExtension : undefined;
}
