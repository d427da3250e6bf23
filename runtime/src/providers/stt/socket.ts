/** Opening a vendor's WebSocket: a refused upgrade (401, 429, 5xx) becomes the matching ProviderError. */
import WebSocket from 'ws';
import { codeForStatus, describe } from '../http.ts';
import { ProviderError } from '../types.ts';

export const CONNECT_TIMEOUT_MS = 10_000;

export function openSocket(provider: string, url: string, headers: Record<string, string>, timeoutMs = CONNECT_TIMEOUT_MS): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers, handshakeTimeout: timeoutMs, perMessageDeflate: false });
    const fail = (error: ProviderError) => {
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.terminate();
      reject(error);
    };
    socket.once('open', () => {
      socket.removeAllListeners();
      resolve(socket);
    });
    socket.once('unexpected-response', (_request, response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (piece: string) => (text += piece));
      response.on('end', () => fail(new ProviderError(provider, codeForStatus(response.statusCode ?? 500), `${provider} refused the stream: HTTP ${response.statusCode}${text ? `: ${text.slice(0, 300)}` : ''}`)));
      response.on('error', () => fail(new ProviderError(provider, codeForStatus(response.statusCode ?? 500), `${provider} refused the stream: HTTP ${response.statusCode}`)));
    });
    socket.once('error', (error) => {
      const timedOut = /timed out|timeout/i.test(error.message);
      fail(new ProviderError(provider, timedOut ? 'timeout' : 'unavailable', `${provider} stream unreachable: ${describe(error)}`));
    });
  });
}

/** Closes a socket after a polite close message, waiting at most `waitMs` for the vendor to close its side. */
export function closeSocket(socket: WebSocket, waitMs = 2000): Promise<void> {
  if (socket.readyState === WebSocket.CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      socket.terminate();
      resolve();
    }, waitMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
