import type { components } from '@switchboard/sdk/schema';
// A cycle with the client, used inside functions only: the refresh goes through the typed client too.
import { api } from '../api/client.ts';

type Session = components['schemas']['Session'];

/**
 * Who the console acts as. A signed-in person's access token lives in this module's memory only
 * (the session itself is an httpOnly cookie that only the refresh route receives); an API key pasted
 * for operators and scripts is kept in sessionStorage, so only for this tab.
 */
export type Credentials =
  | { kind: 'none' }
  | { kind: 'session'; token: string; email: string; expiresAt: number }
  | { kind: 'key'; apiKey: string; orgId: string };

const KEY_STORAGE = 'switchboard.apiKey';
const ORG_STORAGE = 'switchboard.org';

let current: Credentials = { kind: 'none' };
let orgId: string | null = sessionStorage.getItem(ORG_STORAGE);
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
let refreshing: Promise<boolean> | undefined;
const listeners = new Set<() => void>();
let snapshot: { credentials: Credentials; orgId: string | null } = { credentials: current, orgId };

function changed(): void {
  snapshot = { credentials: current, orgId: current.kind === 'key' ? current.orgId : orgId };
  for (const listener of listeners) listener();
}

export const subscribe = (listener: () => void) => (listeners.add(listener), () => void listeners.delete(listener));
export const getSnapshot = () => snapshot;

export function authHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  if (current.kind === 'session') headers.authorization = `Bearer ${current.token}`;
  if (current.kind === 'key') headers['x-api-key'] = current.apiKey;
  if (snapshot.orgId) headers['x-organization-id'] = snapshot.orgId;
  return headers;
}

/** Asks for a fresh token by the session cookie; one request at a time however many callers wait. */
export function refreshOnce(): Promise<boolean> {
  if (current.kind === 'key') return Promise.resolve(false);
  refreshing ??= (async () => {
    try {
      const { data, response } = await api.POST('/api/auth/session/refresh');
      if (!response.ok || !data) {
        if (current.kind === 'session') signedOut();
        return false;
      }
      setSession(data.data);
      return true;
    } catch {
      return false;
    } finally {
      refreshing = undefined;
    }
  })();
  return refreshing;
}

export function setSession(session: Session): void {
  current = { kind: 'session', token: session.access_token, email: session.email, expiresAt: Date.now() + session.expires_in * 1000 };
  clearTimeout(refreshTimer);
  // A minute before the token ends (or halfway for very short ones).
  const lead = Math.min(60, session.expires_in / 2);
  refreshTimer = setTimeout(() => void refreshOnce(), (session.expires_in - lead) * 1000);
  changed();
}

export function signInWithKey(apiKey: string, organizationId: string): void {
  sessionStorage.setItem(KEY_STORAGE, JSON.stringify({ apiKey, orgId: organizationId }));
  current = { kind: 'key', apiKey, orgId: organizationId };
  changed();
}

export function selectOrganization(id: string): void {
  orgId = id;
  sessionStorage.setItem(ORG_STORAGE, id);
  changed();
}

/** Ends the session on the server (its cookie) or forgets the tab's key. */
export async function signOut(): Promise<void> {
  if (current.kind === 'session') await api.DELETE('/api/auth/session').catch(() => undefined);
  signedOut();
}

export function signedOut(): void {
  clearTimeout(refreshTimer);
  sessionStorage.removeItem(KEY_STORAGE);
  current = { kind: 'none' };
  changed();
}

/** At start: the tab's API key, or else a session still alive in the cookie. */
export async function restore(): Promise<void> {
  const stored = sessionStorage.getItem(KEY_STORAGE);
  if (stored) {
    const { apiKey, orgId: org } = JSON.parse(stored) as { apiKey: string; orgId: string };
    current = { kind: 'key', apiKey, orgId: org };
    changed();
    return;
  }
  await refreshOnce();
}
