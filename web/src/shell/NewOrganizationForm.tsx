import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import { invoke } from '../lib/api';
import { browserCountry } from '../lib/countries';
import { useSession } from '../lib/session';
import { CountryOptions } from '../ui/CountryOptions';
import { ErrorNote } from '../ui/ErrorNote';
import { Field, Select } from '../ui/Field';

type Form = { name: string; country: string };

/** A new organization, then a switch into it (organization-create does not switch by itself). */
export function NewOrganizationForm({
  label,
  submitLabel,
  onDone,
}: {
  label: string;
  submitLabel: string;
  onDone?: () => void;
}) {
  const { switchOrganization } = useSession();
  const queries = useQueryClient();
  // The country reads phone numbers typed without their country code; the browser's is a guess.
  const { register, handleSubmit } = useForm<Form>({
    defaultValues: { name: '', country: browserCountry() },
  });
  const create = useMutation({
    mutationFn: async ({ name, country }: Form) => {
      const created = await invoke<{ organization: { id: string } }>('organization-create', {
        body: country ? { name, country } : { name },
      });
      await switchOrganization(created.organization.id);
      await queries.invalidateQueries();
    },
    onSuccess: onDone,
  });
  return (
    <form onSubmit={handleSubmit((f) => create.mutate(f))}>
      <Field label={label} required maxLength={200} {...register('name')} />
      <Select label="Country" {...register('country')}>
        <CountryOptions />
      </Select>
      <ErrorNote error={create.error} labels={{ name: label, country: 'Country' }} />
      <button type="submit" className="primary" disabled={create.isPending}>
        {submitLabel}
      </button>
    </form>
  );
}
