import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import { ErrorNote } from '../../ui/ErrorNote';
import { Field } from '../../ui/Field';
import { type CreatedKey, createKey, type KeyInput, SCOPES } from './keys';

const SCOPE_HINTS: Record<string, string> = {
  read: 'read data',
  write: 'create and update',
  admin: 'delete and admin operations',
};

/** A new key's name, scopes and expiry; a refusal keeps what was typed, a success clears it. */
export function KeyCreateForm({ onCreated }: { onCreated(key: CreatedKey): void }) {
  const queries = useQueryClient();
  const { register, handleSubmit, reset } = useForm<KeyInput>({
    defaultValues: { name: '', scopes: ['read'], expires_on: '' },
  });
  const create = useMutation({
    mutationFn: createKey,
    onSuccess: async (key) => {
      reset();
      onCreated(key);
      await queries.invalidateQueries({ queryKey: ['agent-keys'] });
    },
  });
  return (
    <form className="grid-form" onSubmit={handleSubmit((f) => create.mutate(f))}>
      <Field label="Key name" required maxLength={100} {...register('name')} />
      <fieldset className="scopes">
        <legend>Scopes</legend>
        {SCOPES.map((s) => (
          <label key={s}>
            <input type="checkbox" value={s} {...register('scopes')} /> {s}{' '}
            <span className="hint">({SCOPE_HINTS[s]})</span>
          </label>
        ))}
      </fieldset>
      <Field
        label="Expires on"
        type="date"
        hint="Optional: 90 days from today when left empty, at most 365 days"
        {...register('expires_on')}
      />
      <ErrorNote
        error={create.error}
        labels={{ name: 'Key name', scopes: 'Scopes', expires_at: 'Expires on' }}
      />
      <div className="form-actions">
        <button type="submit" className="primary" disabled={create.isPending}>
          Create key
        </button>
      </div>
    </form>
  );
}
