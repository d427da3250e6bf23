import { ApiError } from './client.ts';
import { authHeaders } from '../auth/credentials.ts';

/**
 * A multipart upload with progress. fetch reports no upload progress, so this one request goes
 * through XMLHttpRequest, with the typed client's credentials and organization; its answer is typed
 * by the caller from the same generated schema.
 */
export function uploadWithProgress<T>(url: string, form: FormData, onProgress: (fraction: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    for (const [name, value] of Object.entries(authHeaders())) xhr.setRequestHeader(name, value);
    xhr.setRequestHeader('idempotency-key', crypto.randomUUID());
    xhr.upload.onprogress = (event) => { if (event.lengthComputable) onProgress(event.loaded / event.total); };
    xhr.onload = () => {
      let body: unknown;
      try { body = JSON.parse(xhr.responseText); } catch { body = undefined; }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body as T);
      else reject(new ApiError(xhr.status, body as never));
    };
    xhr.onerror = () => reject(new Error('The upload was interrupted'));
    xhr.send(form);
  });
}
