import { useSyncExternalStore } from 'react';
import { getSnapshot, subscribe } from './credentials.ts';

/** The current credentials and organization; re-renders when they change. */
export function useCredentials() {
  return useSyncExternalStore(subscribe, getSnapshot);
}
