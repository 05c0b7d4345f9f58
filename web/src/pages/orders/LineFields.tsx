import { useState } from 'react';
import type { UseFormRegister } from 'react-hook-form';
import { money } from '../../lib/format';
import { Field, Select } from '../../ui/Field';
import { type ItemChoice, useItemChoices } from './pickers';

export type LineInput = { item_id: string; name: string; sku: string; quantity: string; unit_price: string };
export type OrderForm = {
  fulfillment: 'delivery' | 'pickup';
  contact_id: string;
  customer_name: string;
  customer_email: string;
  address: string;
  phone_number: string;
  currency: string;
  notes: string;
  lines: LineInput[];
};

export const emptyLine = (): LineInput => ({ item_id: '', name: '', sku: '', quantity: '1', unit_price: '' });

/**
 * One line of the create form: by name and SKU (the service matches them to inventory, name
 * first), or an inventory item picked outright. A picked item fills in what is still empty.
 */
export function LineFields({
  index,
  register,
  onPick,
  onRemove,
}: {
  index: number;
  register: UseFormRegister<OrderForm>;
  onPick(item: ItemChoice | undefined): void;
  onRemove?: () => void;
}) {
  const [search, setSearch] = useState('');
  const [chosen, setChosen] = useState<ItemChoice>();
  const found = useItemChoices(search).data ?? [];
  // The picked item stays among the options whatever the search finds, so the choice holds.
  const options = chosen && !found.some((i) => i.id === chosen.id) ? [chosen, ...found] : found;
  const n = index + 1;
  const pick = register(`lines.${index}.item_id`);
  return (
    <fieldset className="line">
      <legend>Line {n}</legend>
      <div className="grid-form">
        <Field label={`Line ${n} name`} {...register(`lines.${index}.name`)} />
        <Field label={`Line ${n} SKU`} {...register(`lines.${index}.sku`)} />
        <Field
          label={`Line ${n} quantity`}
          type="number"
          min={1}
          step={1}
          {...register(`lines.${index}.quantity`)}
        />
        <Field
          label={`Line ${n} unit price`}
          type="number"
          min={0}
          step="0.01"
          hint="Empty: the inventory item’s price"
          {...register(`lines.${index}.unit_price`)}
        />
        <Field
          label={`Find an item for line ${n}`}
          type="search"
          value={search}
          onChange={(e) => setSearch(e.target.value)}
        />
        <Select
          label={`Line ${n} inventory item`}
          {...pick}
          onChange={(e) => {
            void pick.onChange(e);
            const item = options.find((i) => i.id === e.target.value);
            setChosen(item);
            onPick(item);
          }}
        >
          <option value="">Match by name, then SKU</option>
          {options.map((i) => (
            <option key={i.id} value={i.id}>
              {i.name}
              {i.sku ? ` (${i.sku})` : ''} · {money(i.unit_price, i.currency)}
            </option>
          ))}
        </Select>
      </div>
      {onRemove && (
        <button type="button" onClick={onRemove}>
          Remove line {n}
        </button>
      )}
    </fieldset>
  );
}
