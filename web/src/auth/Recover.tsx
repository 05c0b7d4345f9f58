import { useMutation } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import { Link } from 'react-router';
import { ApiError } from '../lib/api';
import { supabase } from '../lib/supabase';
import { ErrorNote } from '../ui/ErrorNote';
import { Field } from '../ui/Field';
import { AuthLayout } from './AuthLayout';

export function Recover() {
  const { register, handleSubmit } = useForm<{ email: string }>();
  const send = useMutation({
    mutationFn: async ({ email }: { email: string }) => {
      const { error } = await supabase.auth.resetPasswordForEmail(email, {
        redirectTo: `${window.location.origin}/app/new-password`,
      });
      if (error) throw new ApiError(error.message);
    },
  });
  return (
    <AuthLayout title="Reset your password">
      {send.isSuccess ? (
        <p role="status">If an account uses that address, a link to set a new password is on its way.</p>
      ) : (
        <form onSubmit={handleSubmit((f) => send.mutate(f))}>
          <Field label="Email" type="email" autoComplete="email" required {...register('email')} />
          <ErrorNote error={send.error} />
          <button type="submit" className="primary" disabled={send.isPending}>
            Send the link
          </button>
        </form>
      )}
      <p>
        <Link to="/app/sign-in">Back to sign in</Link>
      </p>
    </AuthLayout>
  );
}
