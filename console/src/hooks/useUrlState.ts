import { useSearchParams } from 'react-router';

/** A page's controls kept in its URL (shareable, survives a reload): the params, and a setter that drops empty values. */
export function useUrlState() {
  const [params, setParams] = useSearchParams();
  const set = (name: string, value: string | null) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value); else next.delete(name);
    setParams(next, { replace: true });
  };
  return { params, set };
}
