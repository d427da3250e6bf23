/** The credentials of a speech or language provider's integration (extensions.md §10). */
export interface ProviderCredentials {
  api_key: string;
  /** Replaces the vendor's address: a self-hosted compatible server, or a stand-in in tests. */
  base_url?: string | null;
  /** Azure's region (e.g. westeurope), where its address is built from. */
  region?: string | null;
}

/**
 * A cheap authenticated request to a provider (its models, user or projects): whether the key is
 * accepted. Implemented by the voice runtime's adapters (`validateProvider` of @switchboard/runtime),
 * which speak each vendor's protocol; bound in the composition root.
 */
export interface ProviderValidator {
  validate(provider: string, credentials: ProviderCredentials): Promise<{ ok: boolean; detail: string }>;
}
