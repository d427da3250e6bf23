import { EMBEDDING_DIMENSIONS } from '../../db/schema/knowledge-base.ts';

/** Turns texts into unit vectors of `EMBEDDING_DIMENSIONS` numbers, one per text, in order. */
export interface Embedder {
  readonly name: string;
  embed(texts: string[]): Promise<number[][]>;
}

/** A provider answered badly or not at all: the job is retried. */
export class EmbedderError extends Error {
  override name = 'EmbedderError';
}

const WORD = /[\p{L}\p{N}]+/gu;

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function addFeature(vector: Float64Array, feature: string, weight: number): void {
  const hash = fnv1a(feature);
  vector[hash % EMBEDDING_DIMENSIONS]! += (hash & 0x80000000 ? -1 : 1) * weight;
}

/**
 * The default: a deterministic lexical embedder (the "hashing trick" over words, word pairs and
 * word prefixes, with signed buckets), needing no model and no network. It finds passages that
 * share words with the query, not paraphrases; configure `EMBEDDER=openai` for semantic search.
 */
export class HashedEmbedder implements Embedder {
  readonly name = 'hashed';

  async embed(texts: string[]): Promise<number[][]> {
    return texts.map((text) => this.embedOne(text));
  }

  embedOne(text: string): number[] {
    const vector = new Float64Array(EMBEDDING_DIMENSIONS);
    const words = text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
    for (let i = 0; i < words.length; i++) {
      const word = words[i]!;
      addFeature(vector, `w:${word}`, 1);
      if (word.length > 5) addFeature(vector, `p:${word.slice(0, 5)}`, 0.5); // crude stemming
      if (i > 0) addFeature(vector, `b:${words[i - 1]} ${word}`, 0.5);
    }
    let norm = 0;
    for (const v of vector) norm += v * v;
    norm = Math.sqrt(norm) || 1;
    return Array.from(vector, (v) => v / norm);
  }
}

/** Any OpenAI-compatible `POST {url}/embeddings` (OpenAI, Azure-compatible gateways, vLLM, Ollama...). */
export class OpenAiEmbedder implements Embedder {
  readonly name = 'openai';
  readonly #options: { url: string; apiKey: string | undefined; model: string; timeoutMs: number };
  constructor(options: { url: string; apiKey: string | undefined; model: string; timeoutMs: number }) {
    this.#options = { ...options, url: options.url.replace(/\/$/, '') };
  }

  async embed(texts: string[]): Promise<number[][]> {
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += 64) out.push(...(await this.#batch(texts.slice(i, i + 64))));
    return out;
  }

  async #batch(input: string[]): Promise<number[][]> {
    let res: Response;
    try {
      res = await fetch(`${this.#options.url}/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.#options.apiKey ? { authorization: `Bearer ${this.#options.apiKey}` } : {}) },
        body: JSON.stringify({ model: this.#options.model, input, dimensions: EMBEDDING_DIMENSIONS }),
        signal: AbortSignal.timeout(this.#options.timeoutMs),
      });
    } catch (err) {
      throw new EmbedderError(`The embeddings endpoint could not be reached: ${(err as Error).message}`);
    }
    if (!res.ok) throw new EmbedderError(`The embeddings endpoint answered HTTP ${res.status}`);
    const body = (await res.json()) as { data?: Array<{ index: number; embedding: number[] }> };
    const rows = [...(body.data ?? [])].sort((a, b) => a.index - b.index);
    if (rows.length !== input.length || rows.some((r) => r.embedding?.length !== EMBEDDING_DIMENSIONS)) {
      throw new EmbedderError(`The embeddings endpoint must return ${input.length} vectors of ${EMBEDDING_DIMENSIONS} dimensions`);
    }
    return rows.map((r) => r.embedding);
  }
}
