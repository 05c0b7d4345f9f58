import { useForm } from 'react-hook-form';
import { ErrorNote } from '../../ui/ErrorNote';
import { Field, TextArea } from '../../ui/Field';
import type { ContactInput } from './contact';

/** Create and edit share this form; on an error the typed values stay as they are. */
export function ContactForm({
  initial,
  submitLabel,
  pending,
  error,
  onSubmit,
}: {
  initial: ContactInput;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit(values: ContactInput): void;
}) {
  const { register, handleSubmit } = useForm<ContactInput>({ defaultValues: initial });
  return (
    <form className="grid-form" onSubmit={handleSubmit(onSubmit)}>
      <Field label="First name" {...register('first_name')} />
      <Field label="Last name" {...register('last_name')} />
      <Field label="Email" type="email" {...register('email')} />
      <Field
        label="Phone"
        type="tel"
        hint="As you dial it; from abroad with its country code, e.g. +44 20 7123 4567"
        {...register('phone')}
      />
      <Field label="Company" {...register('company')} />
      <Field label="Tags" hint="Separated by commas" {...register('tags')} />
      <TextArea label="Notes" rows={3} {...register('notes')} />
      <ErrorNote error={error} />
      <div className="form-actions">
        <button type="submit" className="primary" disabled={pending}>
          {submitLabel}
        </button>
      </div>
    </form>
  );
}
