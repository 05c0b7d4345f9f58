import { ApiError } from '../../lib/api';

type Issue = { path: string; message: string };

/** The create form's names for the fields of POST /functions/v1/orders. */
const FIELD_LABELS: Record<string, string> = {
  address: 'Shipping address',
  phone_number: 'Shipping phone',
  contact_id: 'Contact',
  customer_name: 'Customer name',
  customer_email: 'Customer email',
  currency: 'Currency',
  notes: 'Notes',
  items: 'Lines',
  name: 'name',
  sku: 'SKU',
  quantity: 'quantity',
  unit_price: 'unit price',
  item_id: 'inventory item',
};

/** `items.1.quantity` → "Line 2 quantity": the label the person sees on the form. */
function labelOf(path: string): string {
  const [head, n, field] = path.split('.');
  if (head === 'items' && n !== undefined && /^\d+$/.test(n))
    return `Line ${Number(n) + 1}${field ? ` ${FIELD_LABELS[field] ?? field}` : ''}`;
  return FIELD_LABELS[path] ?? path;
}

/**
 * A validation_error names each field it refuses (details.issues): listed beside the service's
 * message with the form's own labels, so the person knows which field to fix.
 */
export function IssueList({ error }: { error: unknown }) {
  const issues = error instanceof ApiError ? (error.details?.issues as Issue[] | undefined) : undefined;
  if (!issues?.length) return null;
  return (
    <ul className="error">
      {issues.map((i) => (
        <li key={`${i.path}:${i.message}`}>
          {labelOf(i.path)}: {i.message}
        </li>
      ))}
    </ul>
  );
}
