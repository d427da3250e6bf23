/** Display helpers: one place for how times, durations and credits read. */
export const formatDateTime = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '—');

/** A time on the same day as `sameDayAs` reads as the time alone; otherwise with its date. */
export function formatTime(iso: string, sameDayAs: string): string {
  const at = new Date(iso);
  return at.toDateString() === new Date(sameDayAs).toDateString() ? at.toLocaleTimeString(undefined, { timeStyle: 'short' }) : formatDateTime(iso);
}

export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  const whole = Math.round(seconds);
  const m = Math.floor(whole / 60);
  const s = whole % 60;
  return m >= 60 ? `${Math.floor(m / 60)}:${String(m % 60).padStart(2, '0')}:${String(s).padStart(2, '0')}` : `${m}:${String(s).padStart(2, '0')}`;
}

export const formatCredits = (credits: number | null | undefined) =>
  credits === null || credits === undefined ? '—' : credits.toLocaleString(undefined, { maximumFractionDigits: 4 });

export const humanize = (value: string | null | undefined) => (value ? value.replaceAll('_', ' ') : '—');
