import { PDFDocument, StandardFonts } from 'pdf-lib';
import { Document, Packer, Paragraph } from 'docx';

/** A PDF whose page N (1-based) carries `pages[N-1]`, generated in the test (no fixtures). */
export async function makePdf(pages: string[]): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const text of pages) {
    const page = pdf.addPage([612, 792]);
    const lines = text.match(/.{1,80}(\s|$)/g) ?? [text];
    lines.forEach((line, i) => page.drawText(line.trim(), { x: 50, y: 740 - i * 14, size: 11, font }));
  }
  return Buffer.from(await pdf.save());
}

export async function makeDocx(paragraphs: string[]): Promise<Buffer> {
  const doc = new Document({ sections: [{ children: paragraphs.map((p) => new Paragraph(p)) }] });
  return Buffer.from(await Packer.toBuffer(doc));
}
