import { useForm } from 'react-hook-form';
import { ErrorNote } from '../../ui/ErrorNote';
import { Field, TextArea } from '../../ui/Field';
import type { ItemInput } from './item';

/** Create and edit share this form; on an error the typed values stay as they are. */
export function ItemForm({
  initial,
  submitLabel,
  pending,
  error,
  onSubmit,
}: {
  initial: ItemInput;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit(values: ItemInput): void;
}) {
  const { register, handleSubmit } = useForm<ItemInput>({ defaultValues: initial });
  return (
    // The database checks the numbers and says why it refuses one: no second set of rules in the browser.
    <form className="grid-form" noValidate onSubmit={handleSubmit(onSubmit)}>
      <Field label="Name" {...register('name')} />
      <Field label="SKU" hint="Unique in the organization" {...register('sku')} />
      <Field label="Unit price" type="number" min={0} step="0.01" {...register('unit_price')} />
      <Field label="Currency" maxLength={3} {...register('currency')} />
      <Field label="On hand" type="number" step={1} {...register('quantity_on_hand')} />
      <Field
        label="Reorder point"
        type="number"
        min={0}
        step={1}
        hint="Low stock at or below this many available"
        {...register('reorder_point')}
      />
      <TextArea label="Description" rows={3} {...register('description')} />
      <ErrorNote error={error} />
      <div className="form-actions">
        <button type="submit" className="primary" disabled={pending}>
          {submitLabel}
        </button>
      </div>
    </form>
  );
}
