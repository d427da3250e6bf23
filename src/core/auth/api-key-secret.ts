import { createHash } from 'node:crypto';
import { randomBase62 } from '../ids.ts';

/** A full key is `sk_` + 40 base62 characters; its first 12 characters are its visible prefix. */
export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = `sk_${randomBase62(40)}`;
  return { key, prefix: key.slice(0, 12), hash: hashApiKey(key) };
}

/** Only this SHA-256 is stored; lookups go by it, so the database never holds a usable key. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export const API_KEY_PATTERN = /^sk_[0-9A-Za-z]{40}$/;
