import { useEffect } from 'react';
import { useBlocker } from 'react-router';

/**
 * While a form has unsaved changes, leaving it asks first: a navigation inside the console through a
 * confirm, closing or reloading the tab through the browser's own prompt.
 */
export function useUnsavedChangesGuard(dirty: boolean, message = 'You have unsaved changes. Leave this page and lose them?') {
  const blocker = useBlocker(({ currentLocation, nextLocation }) => dirty && currentLocation.pathname !== nextLocation.pathname);
  useEffect(() => {
    if (blocker.state !== 'blocked') return;
    if (window.confirm(message)) blocker.proceed(); else blocker.reset();
  }, [blocker, message]);
  useEffect(() => {
    if (!dirty) return;
    const warn = (event: BeforeUnloadEvent) => { event.preventDefault(); };
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [dirty]);
}
