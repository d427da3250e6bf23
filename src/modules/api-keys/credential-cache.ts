import type { ApiKeyLookup, KeyCredential } from '../../core/auth/ports.ts';

/** How long a cached key is used before it is read again, whatever happens. */
const MAX_AGE_MS = 60_000;
const MAX_ENTRIES = 10_000;

/** Whether this process may trust what it cached (its revocation listener is up to date). */
export interface CacheTrust {
  trusted(): boolean;
}

/**
 * API-key lookups kept in memory, so authenticating a request costs no database round trip. Only
 * active keys are kept; a revocation clears the cache in every process before it is answered
 * (see revocations.ts). A lookup that was in flight while the cache was cleared is not stored: its
 * row may predate the revocation.
 */
export class CredentialCache {
  readonly #entries = new Map<string, { credential: KeyCredential; at: number }>();
  readonly #trust: CacheTrust;
  #generation = 0;
  constructor(trust: CacheTrust) {
    this.#trust = trust;
  }

  get(keyHash: string, now = Date.now()): KeyCredential | undefined {
    if (!this.#trust.trusted()) return undefined;
    const entry = this.#entries.get(keyHash);
    if (!entry || now - entry.at > MAX_AGE_MS) return undefined;
    return entry.credential;
  }

  /** The generation to pass back to `set`: a clear in between makes the set a no-op. */
  generation(): number {
    return this.#generation;
  }

  set(keyHash: string, credential: KeyCredential, generation: number, now = Date.now()): void {
    if (generation !== this.#generation || credential.status !== 'active') return;
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
    this.#entries.set(keyHash, { credential, at: now });
  }

  clear(): void {
    this.#generation += 1;
    this.#entries.clear();
  }
}

/** The database lookup behind a cache. */
export class CachedKeyLookup implements ApiKeyLookup {
  readonly #source: ApiKeyLookup;
  readonly #cache: CredentialCache;
  readonly #beforeLookup: () => void;
  /** `beforeLookup`: called on a miss, e.g. to start the revocation listener on first use. */
  constructor(deps: { source: ApiKeyLookup; cache: CredentialCache; beforeLookup?: () => void }) {
    this.#source = deps.source;
    this.#cache = deps.cache;
    this.#beforeLookup = deps.beforeLookup ?? (() => {});
  }

  async findByHash(keyHash: string): Promise<KeyCredential | undefined> {
    const cached = this.#cache.get(keyHash);
    if (cached) return cached;
    this.#beforeLookup();
    const generation = this.#cache.generation();
    const credential = await this.#source.findByHash(keyHash);
    if (credential) this.#cache.set(keyHash, credential, generation);
    return credential;
  }

  recordUse(keyId: string): Promise<void> {
    return this.#source.recordUse(keyId);
  }
}
