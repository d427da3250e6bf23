import { useEffect, useState, type ReactNode } from 'react';
import { Center, Loader } from '@mantine/core';
import { Navigate, useLocation } from 'react-router';
import { restore } from './credentials.ts';
import { useCredentials } from './useCredentials.ts';

let restoring: Promise<void> | undefined;

/** Pages behind it need credentials: restored at start (tab key or session cookie), else the sign-in page. */
export function AuthGate({ children }: { children: ReactNode }) {
  const { credentials } = useCredentials();
  const [ready, setReady] = useState(credentials.kind !== 'none');
  const location = useLocation();
  useEffect(() => {
    if (ready) return;
    restoring ??= restore();
    void restoring.then(() => setReady(true));
  }, [ready]);
  if (!ready) return <Center h="100vh"><Loader aria-label="Loading" /></Center>;
  if (credentials.kind === 'none') return <Navigate to="/sign-in" replace state={{ from: location.pathname + location.search }} />;
  return children;
}
