// What the create-order form calls the fields of POST /functions/v1/orders, for the service's
// validation issues (ErrorNote's labels).

/** The create form's names for the fields of POST /functions/v1/orders. */
const FIELD_LABELS: Record<string, string> = {
  fulfillment: 'Delivered or picked up',
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
export function labelOf(path: string): string {
  const [head, n, field] = path.split('.');
  if (head === 'items' && n !== undefined && /^\d+$/.test(n))
    return `Line ${Number(n) + 1}${field ? ` ${FIELD_LABELS[field] ?? field}` : ''}`;
  return FIELD_LABELS[path] ?? path;
}
