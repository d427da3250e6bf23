/** Server-sent events (the WHATWG event-stream format), parsed incrementally from a byte stream. */

export interface ServerSentEvent {
  event: string;
  data: string;
}

/** Events as they complete (a blank line ends one); lines split across chunks and multi-line `data:` fields are joined. */
export async function* parseSse(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  const takeLine = (line: string): ServerSentEvent | null => {
    if (line === '') {
      const done = data.length > 0 ? { event: event || 'message', data: data.join('\n') } : null;
      event = '';
      data = [];
      return done;
    }
    if (line.startsWith(':')) return null; // comment (keep-alive)
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    return null;
  };
  for await (const chunk of chunks) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.search(/\r\n|\r|\n/)) !== -1) {
      // A lone \r at the very end may be the first half of \r\n: wait for the next chunk.
      if (buffer[newline] === '\r' && newline === buffer.length - 1) break;
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
      const done = takeLine(line);
      if (done) yield done;
    }
  }
  // At the end of the stream an event not closed by a blank line is discarded (as the format says):
  // a cut-off stream must not pass a half-received event on as whole.
}
