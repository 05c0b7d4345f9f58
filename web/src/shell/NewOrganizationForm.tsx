import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import { invoke } from '../lib/api';
import { useSession } from '../lib/session';
import { ErrorNote } from '../ui/ErrorNote';
import { Field } from '../ui/Field';

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
  const { register, handleSubmit } = useForm<{ name: string }>({ defaultValues: { name: '' } });
  const create = useMutation({
    mutationFn: async ({ name }: { name: string }) => {
      const created = await invoke<{ organization: { id: string } }>('organization-create', {
        body: { name },
      });
      await switchOrganization(created.organization.id);
      await queries.invalidateQueries();
    },
    onSuccess: onDone,
  });
  return (
    <form onSubmit={handleSubmit((f) => create.mutate(f))}>
      <Field label={label} required maxLength={200} {...register('name')} />
      <ErrorNote error={create.error} labels={{ name: label }} />
      <button type="submit" className="primary" disabled={create.isPending}>
        {submitLabel}
      </button>
    </form>
  );
}
