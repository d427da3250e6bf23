import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readOrCreateSecretFile } from './secret-file.ts';

/**
 * Encrypts stored secrets (integration credentials, SIP passwords) with AES-256-GCM.
 * Format: `v1.<iv>.<tag>.<ciphertext>`, each base64url; the version leaves room for key rotation.
 */
export class SecretBox {
  readonly #key: Buffer;
  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('The encryption key must be 32 bytes');
    this.#key = key;
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), ciphertext].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || ciphertext === undefined) throw new Error('Unknown secret format');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/** The key from config (base64, 32 bytes), else generated once into the data directory. */
export function resolveEncryptionKey(configured: string | undefined, dataDir: string): Buffer {
  const encoded = configured ?? readOrCreateSecretFile(dataDir, 'encryption-key', () => randomBytes(32).toString('base64'));
  return Buffer.from(encoded, 'base64');
}
