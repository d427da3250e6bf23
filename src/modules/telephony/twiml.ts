/**
 * TwiML answers of the carrier voice webhook. Every value is escaped for XML (attributes and text
 * alike), so a parameter can never change the document's structure.
 */

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

export function escapeXml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

const document = (body: string) => `<?xml version="1.0" encoding="UTF-8"?><Response>${body}</Response>`;

/** Connects the caller's audio to a WebSocket of the voice runtime, the parameters handed over in its `start` message. */
export function connectStream(url: string, parameters: Record<string, string>): string {
  const params = Object.entries(parameters).map(([name, value]) => `<Parameter name="${escapeXml(name)}" value="${escapeXml(value)}"/>`).join('');
  return document(`<Connect><Stream url="${escapeXml(url)}">${params}</Stream></Connect>`);
}

/** Bridges the call to the voice runtime's SIP address, the values sent as `X-` SIP headers (the URI's query). */
export function dialSip(uri: string, headers: Record<string, string>): string {
  const query = Object.entries(headers).map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&');
  const target = query ? `${uri}${uri.includes('?') ? '&' : '?'}${query}` : uri;
  return document(`<Dial><Sip>${escapeXml(target)}</Sip></Dial>`);
}

/** Refuses the call before it is answered (the caller hears it as rejected; nothing is charged). */
export function reject(): string {
  return document('<Reject reason="rejected"/>');
}

/** An empty answer: nothing more to do (a status callback, an ignored request). */
export function empty(): string {
  return document('');
}
