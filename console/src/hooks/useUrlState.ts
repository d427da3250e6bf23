import { useSearchParams } from 'react-router';

/**
 * A page's controls kept in its URL (shareable, survives a reload): the params, and a setter that drops empty values.
 *
 * The setter starts from the address bar as it is now, not from the params of the last render: React Router's
 * setter (function form included) builds on the render's snapshot, so a second control changed before the first
 * change has rendered (a slow machine, two controls set in one handler) silently dropped the first one's value
 * (remix-run/react-router#9757, #14491). The console's router is a browser router, so `window.location` is the URL.
 */
export function useUrlState() {
  const [params, setParams] = useSearchParams();
  const set = (name: string, value: string | null) => {
    const next = new URLSearchParams(window.location.search);
    if (value) next.set(name, value); else next.delete(name);
    setParams(next, { replace: true });
  };
  return { params, set };
}
