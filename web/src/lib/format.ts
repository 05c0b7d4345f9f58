import { format, formatDistanceToNow } from 'date-fns';

export const dateTime = (iso: string | null | undefined) =>
  iso ? format(new Date(iso), 'd MMM yyyy, HH:mm') : '—';
export const date = (iso: string | null | undefined) => (iso ? format(new Date(iso), 'd MMM yyyy') : '—');
export const ago = (iso: string | null | undefined) =>
  iso ? formatDistanceToNow(new Date(iso), { addSuffix: true }) : '—';

/** Money as the service stores it (numeric text or number) in the order's currency. */
export function money(amount: string | number | null | undefined, currency = 'USD') {
  if (amount === null || amount === undefined) return '—';
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(Number(amount));
  } catch {
    return `${amount} ${currency}`;
  }
}

export const personName = (c: {
  first_name?: string | null;
  last_name?: string | null;
  email?: string | null;
}) => [c.first_name, c.last_name].filter(Boolean).join(' ') || c.email || 'Unnamed contact';
