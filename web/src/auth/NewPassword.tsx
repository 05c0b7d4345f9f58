import { useMutation } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import { ApiError } from '../lib/api';
import { supabase } from '../lib/supabase';
import { ErrorNote } from '../ui/ErrorNote';
import { Field } from '../ui/Field';

/** Sets a new password for the signed-in person (after a recovery link, or from the account page). */
export function NewPasswordForm({ onDone }: { onDone?: () => void }) {
  const { register, handleSubmit, reset } = useForm<{ password: string }>();
  const change = useMutation({
    mutationFn: async ({ password }: { password: string }) => {
      const { error } = await supabase.auth.updateUser({ password });
      if (error) throw new ApiError(error.message);
    },
    onSuccess: () => {
      reset();
      onDone?.();
    },
  });
  return (
    <form onSubmit={handleSubmit((f) => change.mutate(f))}>
      <Field
        label="New password"
        type="password"
        autoComplete="new-password"
        required
        {...register('password')}
      />
      <ErrorNote error={change.error} />
      {change.isSuccess && <p role="status">Your password is changed.</p>}
      <button type="submit" className="primary" disabled={change.isPending}>
        Change password
      </button>
    </form>
  );
}
