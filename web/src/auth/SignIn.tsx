import { useMutation } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import { Link } from 'react-router';
import { ApiError } from '../lib/api';
import { supabase } from '../lib/supabase';
import { ErrorNote } from '../ui/ErrorNote';
import { Field } from '../ui/Field';
import { AuthLayout } from './AuthLayout';

type Form = { email: string; password: string };

export function SignIn() {
  const { register, handleSubmit } = useForm<Form>();
  const signIn = useMutation({
    mutationFn: async (f: Form) => {
      const { error } = await supabase.auth.signInWithPassword(f);
      if (error) throw new ApiError(error.message);
    },
  });
  return (
    <AuthLayout title="Sign in">
      <form onSubmit={handleSubmit((f) => signIn.mutate(f))}>
        <Field label="Email" type="email" autoComplete="email" required {...register('email')} />
        <Field
          label="Password"
          type="password"
          autoComplete="current-password"
          required
          {...register('password')}
        />
        <ErrorNote error={signIn.error} />
        <button type="submit" className="primary" disabled={signIn.isPending}>
          Sign in
        </button>
      </form>
      <p>
        <Link to="/app/recover">Forgot your password?</Link> ·{' '}
        <Link to="/app/sign-up">Create an account</Link>
      </p>
    </AuthLayout>
  );
}
